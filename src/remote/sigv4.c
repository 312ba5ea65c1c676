/*
 * AWS Signature Version 4, header form. The steps, as in AWS's spec
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html):
 *
 *  1. Canonical request: method, canonical path, canonical query (pairs
 *     percent-encoded and sorted), canonical headers ("name:value\n",
 *     lower-case names, sorted), the signed header names joined by ';',
 *     and the payload hash, all joined by '\n'.
 *  2. String to sign: "AWS4-HMAC-SHA256", the x-amz-date, the scope
 *     "<date>/<region>/<service>/aws4_request" and the hex SHA-256 of the
 *     canonical request.
 *  3. Signing key: HMAC-SHA256 chained over "AWS4"+secret, date, region,
 *     service, "aws4_request".
 *  4. Signature: hex HMAC-SHA256 of the string to sign under that key.
 *
 * The query is normalised (each name and value decoded, then encoded the
 * SigV4 way) so that a caller that encoded less or more than AWS does still
 * signs what the server will recompute from the decoded values.
 */
#include "remote/sigv4.h"
#include "remote/query.h"
#include "results/error.h"
#include "util/hash.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* Headers a request can sign: our own four plus the caller's. */
#define SIGV4_MAX_HEADERS 24
/* A query of S3's ListObjectsV2 has under ten pairs; refuse absurd input. */
#define SIGV4_MAX_QUERY_PAIRS 64
/* Every piece of the request we canonicalise is small. */
#define SIGV4_MAX_CANONICAL (64 * 1024)

static const char hexdig_lower[] = "0123456789abcdef";

void rs_sigv4_result_init(struct rs_sigv4_result *res)
{
	memset(res->amz_date, 0, sizeof(res->amz_date));
	rs_buf_init(&res->authorization, SIGV4_MAX_CANONICAL);
	rs_buf_init(&res->canonical_request, SIGV4_MAX_CANONICAL);
	rs_buf_init(&res->string_to_sign, SIGV4_MAX_CANONICAL);
}

void rs_sigv4_result_release(struct rs_sigv4_result *res)
{
	rs_buf_release(&res->authorization);
	rs_buf_release(&res->canonical_request);
	rs_buf_release(&res->string_to_sign);
}

/* Canonical query string: encoded pairs sorted by name, then value. */
static int canonical_query(struct rs_buf *out, const char *query)
{
	struct rs_query q = RS_QUERY_INIT;
	size_t i;
	int err = rs_query_parse(&q, query, RS_QUERY_ENCODE, SIGV4_MAX_QUERY_PAIRS);

	for (i = 0; i < q.n && !err; i++)
		err = rs_buf_printf(out, "%s%s=%s", i ? "&" : "", q.pairs[i].name,
				    q.pairs[i].value);
	rs_query_release(&q);
	return err;
}

struct canon_header {
	char name[64];
	const char *value;
};

static int canon_header_cmp(const void *a, const void *b)
{
	const struct canon_header *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int add_header(struct canon_header *h, size_t *n, const char *name,
		      const char *value)
{
	size_t len = strlen(name), i;

	if (*n == SIGV4_MAX_HEADERS)
		return rs_error_set(RS_EUSAGE, "more than %d headers to sign",
				    SIGV4_MAX_HEADERS);
	if (len == 0 || len >= sizeof(h[0].name))
		return rs_error_set(RS_EUSAGE, "header name of %zu bytes", len);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= ' ' || c >= 127 || c == ':')
			return rs_error_set(RS_EUSAGE, "bad character in header name");
		h[*n].name[i] = (char)tolower(c);
	}
	h[*n].name[len] = '\0';
	for (i = 0; value[i]; i++)
		if ((unsigned char)value[i] < ' ' && value[i] != '\t')
			return rs_error_set(RS_EUSAGE, "control character in header '%s'",
					    h[*n].name);
	for (i = 0; i < *n; i++)
		if (!strcmp(h[i].name, h[*n].name))
			return rs_error_set(RS_EUSAGE, "header '%s' given twice", h[*n].name);
	h[*n].value = value;
	(*n)++;
	return 0;
}

/* "  a   b " -> "a b": SigV4 trims values and collapses runs of spaces. */
static int put_trimmed(struct rs_buf *out, const char *v)
{
	int pending_space = 0, started = 0, err = 0;

	for (; *v && !err; v++) {
		if (*v == ' ' || *v == '\t') {
			pending_space = started;
			continue;
		}
		if (pending_space)
			err = rs_buf_putc(out, ' ');
		if (!err)
			err = rs_buf_putc(out, *v);
		pending_space = 0;
		started = 1;
	}
	return err;
}

static void to_hex(char *out, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hexdig_lower[p[i] >> 4];
		out[2 * i + 1] = hexdig_lower[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hmac(unsigned char out[32], const void *key, size_t keylen,
		const void *msg, size_t msglen)
{
	unsigned int len = 0;

	if (!HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, out, &len) || len != 32)
		return rs_error_set(RS_EGENERIC, "HMAC-SHA256 failed in OpenSSL");
	return 0;
}

int rs_sigv4_signing_key(unsigned char out[32], const char *secret,
			 const char *date8, const char *region, const char *service)
{
	struct rs_buf k = RS_BUF_INIT;
	unsigned char a[32], b[32];
	int err;

	rs_buf_init(&k, 4096);
	err = rs_buf_printf(&k, "AWS4%s", secret);
	if (err)
		goto out;
	err = hmac(a, k.ptr, k.len, date8, strlen(date8));
	if (err)
		goto out;
	err = hmac(b, a, 32, region, strlen(region));
	if (err)
		goto out;
	err = hmac(a, b, 32, service, strlen(service));
	if (err)
		goto out;
	err = hmac(out, a, 32, "aws4_request", 12);
out:
	/* The buffer held the secret: wipe it before it goes back to malloc. */
	if (k.ptr)
		OPENSSL_cleanse(k.ptr, k.alloc);
	OPENSSL_cleanse(a, sizeof(a));
	OPENSSL_cleanse(b, sizeof(b));
	rs_buf_release(&k);
	return err;
}

static int valid_token(const char *s, const char *what)
{
	size_t i;

	if (!s || !*s)
		return rs_error_set(RS_EUSAGE, "signing needs a %s", what);
	for (i = 0; s[i]; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 127)
			return rs_error_set(RS_EUSAGE, "the %s has a space or control character", what);
	return 0;
}

/* What signing needs, checked before anything is written. */
static int check_request(const struct rs_sigv4_request *req,
			 const struct rs_sigv4_credentials *cred)
{
	const struct {
		const char *value, *what;
	} tokens[] = {
		{ req->method, "method" },
		{ req->host, "host" },
		{ req->region, "region" },
		{ req->service, "service" },
		{ req->payload_sha256, "payload hash" },
		{ cred->access_key_id, "access key id" },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
		err = valid_token(tokens[i].value, tokens[i].what);
		if (err)
			return err;
	}
	if (!cred->secret_access_key || !*cred->secret_access_key)
		return rs_error_set(RS_EUSAGE, "signing needs a secret access key");
	if (!req->path || req->path[0] != '/')
		return rs_error_set(RS_EUSAGE, "request path must start with '/'");
	return 0;
}

/* The headers to sign (ours, then the caller's), sorted by name. */
static int collect_headers(struct canon_header *h, size_t *nh,
			   const struct rs_sigv4_request *req,
			   const struct rs_sigv4_credentials *cred, const char *amz_date)
{
	size_t i;
	int err;

	err = add_header(h, nh, "host", req->host);
	if (err)
		return err;
	err = add_header(h, nh, "x-amz-date", amz_date);
	if (err)
		return err;
	if (req->content_sha256_header) {
		err = add_header(h, nh, "x-amz-content-sha256", req->payload_sha256);
		if (err)
			return err;
	}
	if (cred->session_token && *cred->session_token) {
		err = add_header(h, nh, "x-amz-security-token", cred->session_token);
		if (err)
			return err;
	}
	for (i = 0; i < req->nheaders; i++) {
		err = add_header(h, nh, req->headers[i].name, req->headers[i].value);
		if (err)
			return err;
	}
	qsort(h, *nh, sizeof(h[0]), canon_header_cmp);
	return 0;
}

/* One canonical header line, and its name in the signed list. */
static int put_header(struct rs_buf *creq, struct rs_buf *signed_names,
		      const struct canon_header *h, int first)
{
	int err;

	err = rs_buf_printf(creq, "%s:", h->name);
	if (err)
		return err;
	err = put_trimmed(creq, h->value);
	if (err)
		return err;
	err = rs_buf_putc(creq, '\n');
	if (err)
		return err;
	return rs_buf_printf(signed_names, "%s%s", first ? "" : ";", h->name);
}

/* Step 1: the canonical request, and the signed header names. */
static int canonical_request(struct rs_buf *creq, struct rs_buf *signed_names,
			     const struct rs_sigv4_request *req,
			     const struct canon_header *h, size_t nh)
{
	size_t i;
	int err;

	err = rs_buf_printf(creq, "%s\n%s\n", req->method, req->path);
	if (err)
		return err;
	err = canonical_query(creq, req->query);
	if (err)
		return err;
	err = rs_buf_putc(creq, '\n');
	if (err)
		return err;
	for (i = 0; i < nh; i++) {
		err = put_header(creq, signed_names, &h[i], i == 0);
		if (err)
			return err;
	}
	return rs_buf_printf(creq, "\n%s\n%s", signed_names->ptr, req->payload_sha256);
}

/* Step 2: the string to sign, over the scope and the canonical request. */
static int string_to_sign(struct rs_sigv4_result *res, const char *scope)
{
	struct rs_id creq_id;
	char digest_hex[65];

	rs_sha256(&creq_id, res->canonical_request.ptr, res->canonical_request.len);
	to_hex(digest_hex, creq_id.id, 32);
	return rs_buf_printf(&res->string_to_sign, "AWS4-HMAC-SHA256\n%s\n%s\n%s",
			     res->amz_date, scope, digest_hex);
}

int rs_sigv4_sign(struct rs_sigv4_result *res, const struct rs_sigv4_request *req,
		  const struct rs_sigv4_credentials *cred, time_t now)
{
	struct canon_header h[SIGV4_MAX_HEADERS];
	struct rs_buf signed_names = RS_BUF_INIT, scope = RS_BUF_INIT;
	unsigned char key[32], sig[32];
	char sig_hex[65], date8[9];
	struct tm tm;
	size_t nh = 0;
	int err = 0;

	rs_buf_init(&signed_names, SIGV4_MAX_CANONICAL);
	rs_buf_init(&scope, 1024);
	rs_buf_clear(&res->authorization);
	rs_buf_clear(&res->canonical_request);
	rs_buf_clear(&res->string_to_sign);
	memset(key, 0, sizeof(key));

	err = check_request(req, cred);
	if (err)
		goto out;
	if (!gmtime_r(&now, &tm) ||
	    strftime(res->amz_date, sizeof(res->amz_date), "%Y%m%dT%H%M%SZ", &tm) != 16) {
		err = rs_error_set(RS_EUSAGE, "cannot format the request time");
		goto out;
	}
	memcpy(date8, res->amz_date, 8);
	date8[8] = '\0';

	err = collect_headers(h, &nh, req, cred, res->amz_date);
	if (err)
		goto out;
	err = canonical_request(&res->canonical_request, &signed_names, req, h, nh);
	if (err)
		goto out;
	err = rs_buf_printf(&scope, "%s/%s/%s/aws4_request", date8, req->region, req->service);
	if (err)
		goto out;
	err = string_to_sign(res, scope.ptr);
	if (err)
		goto out;

	/* Steps 3 and 4: the key and the signature. */
	err = rs_sigv4_signing_key(key, cred->secret_access_key, date8, req->region, req->service);
	if (err)
		goto out;
	err = hmac(sig, key, 32, res->string_to_sign.ptr, res->string_to_sign.len);
	if (err)
		goto out;
	to_hex(sig_hex, sig, 32);
	err = rs_buf_printf(&res->authorization,
			    "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
			    cred->access_key_id, scope.ptr, signed_names.ptr, sig_hex);
out:
	OPENSSL_cleanse(key, sizeof(key));
	rs_buf_release(&signed_names);
	rs_buf_release(&scope);
	return err;
}
