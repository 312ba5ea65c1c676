/*
 * SharedKey signing for Azure Blob storage and connection-string parsing.
 *
 * Spec: "Authorize with Shared Key" (Azure Storage REST API). For the Blob
 * service, versions 2009-09-19 and later:
 *
 *   StringToSign = VERB "\n"
 *                  Content-Encoding "\n" Content-Language "\n"
 *                  Content-Length "\n"   (empty, not "0", when zero: 2015-02-21+)
 *                  Content-MD5 "\n" Content-Type "\n" Date "\n"
 *                  If-Modified-Since "\n" If-Match "\n" If-None-Match "\n"
 *                  If-Unmodified-Since "\n" Range "\n"
 *                  CanonicalizedHeaders CanonicalizedResource
 *
 *   CanonicalizedHeaders: every x-ms-* header, name lower-cased, sorted by
 *     name, "name:value\n", linear white space in the value folded to one
 *     space and trimmed.
 *   CanonicalizedResource: "/" account path, where path is the URL's path
 *     as sent (for path-style endpoints such as azurite's
 *     http://127.0.0.1:10000/devstoreaccount1/c/b it starts with the
 *     account again); then for each query parameter, names lower-cased and
 *     sorted, "\nname:value" with the URL-decoded values of a repeated name
 *     sorted and joined by ','.
 *
 * Date is left empty because x-ms-date is sent (the spec's rule), which
 * also keeps curl from having to send a Date header.
 */
#include "util/secret.h"
#include "remote/azure_sign.h"
#include "remote/query.h"

#include "results/error.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void rs_azure_account_init(struct rs_azure_account *a)
{
	memset(a, 0, sizeof(*a));
}

void rs_azure_account_release(struct rs_azure_account *a)
{
	free(a->name);
	rs_secret_free(a->key);
	rs_secret_free(a->sas);
	free(a->blob_endpoint);
	free(a->protocol);
	free(a->suffix);
	rs_azure_account_init(a);
}

/* One Key=Value of a connection string (key case-insensitive); others are ignored. */
static int set_field(struct rs_azure_account *a, const char *k, size_t kn, const char *v,
		     size_t vn, int *dev)
{
#define KEY(name) (kn == sizeof(name) - 1 && !strncasecmp(k, name, sizeof(name) - 1))
	if (KEY("AccountName"))
		return rs_secret_set(&a->name, v, vn);
	if (KEY("AccountKey"))
		return rs_secret_set(&a->key, v, vn);
	if (KEY("SharedAccessSignature"))
		return rs_secret_set(&a->sas, v[0] == '?' ? v + 1 : v, v[0] == '?' ? vn - 1 : vn);
	if (KEY("BlobEndpoint")) {
		while (vn && v[vn - 1] == '/')
			vn--;
		return rs_secret_set(&a->blob_endpoint, v, vn);
	}
	if (KEY("DefaultEndpointsProtocol"))
		return rs_secret_set(&a->protocol, v, vn);
	if (KEY("EndpointSuffix"))
		return rs_secret_set(&a->suffix, v, vn);
	if (KEY("UseDevelopmentStorage"))
		*dev = vn == 4 && !strncasecmp(v, "true", 4);
#undef KEY
	return 0;
}

/* UseDevelopmentStorage=true: Azurite's account, key and endpoint where not given. */
static int set_dev_defaults(struct rs_azure_account *a)
{
	const char *ep = "http://127.0.0.1:10000/" RS_AZURE_DEV_ACCOUNT;
	int err;

	if (!a->name) {
		err = rs_secret_set(&a->name, RS_AZURE_DEV_ACCOUNT, strlen(RS_AZURE_DEV_ACCOUNT));
		if (err)
			return err;
	}
	if (!a->key) {
		err = rs_secret_set(&a->key, RS_AZURE_DEV_KEY, strlen(RS_AZURE_DEV_KEY));
		if (err)
			return err;
	}
	if (!a->blob_endpoint)
		return rs_secret_set(&a->blob_endpoint, ep, strlen(ep));
	return 0;
}

int rs_azure_connection_string_parse(struct rs_azure_account *a, const char *s)
{
	const char *p = s;
	int err = 0, dev = 0;

	if (strlen(s) > 8192)
		return rs_error_set(RS_EUSAGE, "the Azure connection string is too long");
	while (*p && !err) {
		const char *end = p + strcspn(p, ";");
		const char *eq = memchr(p, '=', (size_t)(end - p));
		const char *k = p, *k_end, *v;
		size_t vn;

		if (end == p) {
			p++;
			continue;
		}
		if (!eq)
			return rs_error_set(RS_EUSAGE, "the Azure connection string has a "
					    "part without '=' (expected Key=Value;...)");
		while (k < eq && isspace((unsigned char)*k))
			k++;
		k_end = eq;
		while (k_end > k && isspace((unsigned char)k_end[-1]))
			k_end--;
		v = eq + 1;
		while (v < end && isspace((unsigned char)*v))
			v++;
		vn = (size_t)(end - v);
		while (vn && isspace((unsigned char)v[vn - 1]))
			vn--;
		err = set_field(a, k, (size_t)(k_end - k), v, vn, &dev);
		p = *end ? end + 1 : end;
	}
	if (err)
		return err;
	if (dev)
		return set_dev_defaults(a);
	return 0;
}

/* ---- canonicalization ---- */

struct kv {
	char *name;
	char *value;
};

static int kv_cmp(const void *a, const void *b)
{
	const struct kv *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

static void kv_free(struct kv *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static char *lower_dup(const char *p, size_t n)
{
	char *s = malloc(n + 1);
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < n; i++)
		s[i] = (char)tolower((unsigned char)p[i]);
	s[n] = '\0';
	return s;
}

static int canonical_headers(struct rs_buf *out, const struct rs_http_request *req)
{
	struct kv *v = calloc(RS_HTTP_MAX_HEADERS, sizeof(*v));
	size_t n = 0, i;
	int err = 0;

	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < req->nheaders; i++) {
		const char *name = req->headers[i].name;
		const char *val = req->headers[i].value;
		struct rs_buf folded = RS_BUF_INIT;
		int space = 0;

		if (strncasecmp(name, "x-ms-", 5))
			continue;
		/* Fold runs of white space to one space and trim both ends. */
		while (isspace((unsigned char)*val))
			val++;
		for (; *val && !err; val++) {
			if (isspace((unsigned char)*val)) {
				space = 1;
				continue;
			}
			if (space)
				err = rs_buf_putc(&folded, ' ');
			space = 0;
			if (!err)
				err = rs_buf_putc(&folded, *val);
		}
		v[n].name = lower_dup(name, strlen(name));
		v[n].value = rs_buf_detach(&folded, NULL);
		n++;
		if (!v[n - 1].name || !v[n - 1].value)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		if (err)
			goto out;
	}
	qsort(v, n, sizeof(*v), kv_cmp);
	for (i = 0; i < n && !err; i++)
		err = rs_buf_printf(out, "%s:%s\n", v[i].name, v[i].value);
out:
	kv_free(v, n);
	return err;
}

static int canonical_resource(struct rs_buf *out, const char *url,
			      const char *account)
{
	const char *host = strstr(url, "://");
	const char *path, *q;
	struct rs_query qp = RS_QUERY_INIT;
	size_t i;
	int err;

	host = host ? host + 3 : url;
	path = host + strcspn(host, "/?#");
	q = path + strcspn(path, "?#");
	err = rs_buf_printf(out, "/%s", account);
	if (!err)
		err = q > path ? rs_buf_put(out, path, (size_t)(q - path)) :
			rs_buf_putc(out, '/');
	if (err || *q != '?')
		return err;

	/* Query parameters: one line a name, its values joined by ','. */
	err = rs_query_parse(&qp, q + 1, RS_QUERY_PLUS_IS_SPACE | RS_QUERY_LOWER_NAMES, 256);
	for (i = 0; i < qp.n && !err; i++) {
		if (i && !strcmp(qp.pairs[i].name, qp.pairs[i - 1].name))
			err = rs_buf_printf(out, ",%s", qp.pairs[i].value);
		else
			err = rs_buf_printf(out, "\n%s:%s", qp.pairs[i].name, qp.pairs[i].value);
	}
	rs_query_release(&qp);
	return err;
}

int rs_azure_string_to_sign(struct rs_buf *out, const struct rs_http_request *req,
			    const char *account)
{
	static const char *const std_headers[] = {
		"Content-Encoding", "Content-Language", NULL /* Content-Length */,
		"Content-MD5", "Content-Type", "Date", "If-Modified-Since",
		"If-Match", "If-None-Match", "If-Unmodified-Since", "Range",
	};
	size_t i;
	int err = rs_buf_printf(out, "%s\n", req->method);

	for (i = 0; !err && i < sizeof(std_headers) / sizeof(std_headers[0]); i++) {
		const char *v;

		if (!std_headers[i]) {
			if (req->body_kind != RS_HTTP_BODY_NONE && req->body_len > 0)
				err = rs_buf_printf(out, "%llu\n",
						    (unsigned long long)req->body_len);
			else
				err = rs_buf_putc(out, '\n');
			continue;
		}
		v = rs_http_request_header(req, std_headers[i]);
		err = rs_buf_printf(out, "%s\n", v ? v : "");
	}
	if (!err)
		err = canonical_headers(out, req);
	if (!err)
		err = canonical_resource(out, req->url, account);
	return err;
}

int rs_azure_authorization(struct rs_buf *out, const char *string_to_sign,
			   const char *account, const char *key_b64)
{
	unsigned char key[128], mac[EVP_MAX_MD_SIZE];
	unsigned char sig_b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
	unsigned int mac_len = 0;
	size_t klen = strlen(key_b64), i;
	int n, pad = 0, err;

	if (klen == 0 || klen % 4 || klen / 4 * 3 > sizeof(key))
		return rs_error_set(RS_EUSAGE, "the Azure account key is not base64 "
				    "of a plausible length");
	for (i = 0; i < klen; i++) {
		char c = key_b64[i];

		if (!(isalnum((unsigned char)c) || c == '+' || c == '/' ||
		      (c == '=' && i >= klen - 2)))
			return rs_error_set(RS_EUSAGE, "the Azure account key is not base64");
	}
	if (key_b64[klen - 1] == '=')
		pad++;
	if (key_b64[klen - 2] == '=')
		pad++;
	n = EVP_DecodeBlock(key, (const unsigned char *)key_b64, (int)klen);
	if (n < 0)
		return rs_error_set(RS_EUSAGE, "the Azure account key is not base64");
	n -= pad;
	if (!HMAC(EVP_sha256(), key, n, (const unsigned char *)string_to_sign,
		  strlen(string_to_sign), mac, &mac_len)) {
		memset(key, 0, sizeof(key));
		return rs_error_set(RS_EGENERIC, "HMAC-SHA256 failed");
	}
	memset(key, 0, sizeof(key));
	EVP_EncodeBlock(sig_b64, mac, (int)mac_len);
	err = rs_buf_printf(out, "SharedKey %s:%s", account, (const char *)sig_b64);
	return err;
}

void rs_azure_date(char out[32], time_t t)
{
	/* Not strftime: %a and %b follow the locale, HTTP dates must not. */
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct tm tm;

	gmtime_r(&t, &tm);
	/* The modulos only tell the compiler the fields' ranges (29 bytes at most). */
	snprintf(out, 32, "%s, %02u %s %04u %02u:%02u:%02u GMT", days[(unsigned)tm.tm_wday % 7],
		 (unsigned)tm.tm_mday % 32, months[(unsigned)tm.tm_mon % 12],
		 (unsigned)(tm.tm_year + 1900) % 10000, (unsigned)tm.tm_hour % 24,
		 (unsigned)tm.tm_min % 60, (unsigned)tm.tm_sec % 61);
}

int rs_azure_sign(struct rs_http_request *req, void *payload)
{
	const struct rs_azure_signer *s = payload;
	struct rs_buf sts = RS_BUF_INIT, auth = RS_BUF_INIT;
	char date[32];
	int err;

	rs_azure_date(date, time(NULL));
	err = rs_http_request_set_header(req, "x-ms-date", date);
	if (!err)
		err = rs_http_request_set_header(req, "x-ms-version", RS_AZURE_VERSION);
	if (!err)
		err = rs_azure_string_to_sign(&sts, req, s->account);
	if (!err)
		err = rs_azure_authorization(&auth, rs_buf_cstr(&sts), s->account, s->key);
	if (!err)
		err = rs_http_request_set_header(req, "Authorization", rs_buf_cstr(&auth));
	if (auth.ptr)
		memset(auth.ptr, 0, auth.alloc);
	rs_buf_release(&sts);
	rs_buf_release(&auth);
	return err;
}
