/*
 * The S3 backend: s3://bucket/prefix on AWS S3 or any S3-compatible store
 * (MinIO, Ceph RGW, R2, B2, s3rver), over the shared libcurl transport
 * (http_transport.h: pooling, retries, redaction) with SigV4 signing
 * (sigv4.h) and AWS-style configuration (aws_config.h).
 *
 * Operations and the S3 calls behind them:
 *   get       GetObject with "Range: bytes=a-b" (a server that ignores the
 *             range and answers 200 is sliced here);
 *   put       PutObject up to the part size; larger objects go through a
 *             multipart upload (CreateMultipartUpload, UploadPart in
 *             parallel, CompleteMultipartUpload). S3 makes the object
 *             visible only on the final complete, so a put is atomic; on
 *             any failure the upload is aborted so no parts are left to be
 *             billed (a store that cannot abort, like s3rver, keeps its
 *             invisible parts; the object never appears);
 *   put_stream  a pack still being written: a multipart upload whose
 *             5 MiB parts go out one by one as the file grows, completed
 *             once it is sealed (one PutObject if it is sealed first);
 *   stat      HeadObject (Content-Length);
 *   list      ListObjectsV2, following continuation tokens;
 *   del       HeadObject then DeleteObject: S3 answers 204 for a missing
 *             key, and the interface reports RS_ENOTFOUND for it.
 *
 * Settings (git config, through the remote options' config_get):
 *   results.s3.region, results.s3.endpoint, results.s3.addressing
 *     (path|virtual): see aws_config.h for their order against AWS_*;
 *   results.s3.partsize: MiB per multipart part, 5 to 512 (default 8);
 *     objects up to one part go up in a single PutObject.
 * RESULTS_S3_LIST_MAX_KEYS (1..1000, environment) shrinks listing pages
 * so that tests walk several continuation tokens with a few keys.
 *
 * Every request carries the real SHA-256 of its body in
 * x-amz-content-sha256 (never UNSIGNED-PAYLOAD), so S3 itself checks the
 * bytes it stores. Thread safety: after open the struct is read-only; the
 * transport hands each thread its own connection.
 */
#include "remote/s3.h"
#include "remote/aws_config.h"
#include "remote/http_transport.h"
#include "remote/sigv4.h"
#include "remote/xml.h"
#include "results/error.h"
#include "util/array.h"
#include "util/hex.h"
#include "util/hash.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define S3_MIN_PART (5ull << 20)     /* S3's minimum for all parts but the last */
#define S3_DEFAULT_PART (8ull << 20)
#define S3_MAX_PART (512ull << 20)
#define S3_MAX_PARTS 10000           /* S3's limit per upload */
#define S3_UPLOAD_THREADS 4
#define S3_LIST_PAGE_MAX (8u << 20)  /* one ListObjectsV2 page of 1000 keys is ~400 KiB */
#define S3_SMALL_XML_MAX (64u << 10)
#define S3_MAX_KEY 1024
#define S3_HOST_MAX 512   /* the authority of a request URL, signed as Host */
#define S3_PATH_MAX 4096  /* its encoded path */

struct s3_remote {
	struct rs_remote parent;
	struct rs_http *http;
	struct rs_aws_config cfg;
	char *bucket;
	char *prefix;     /* "" or "dir/sub/" */
	char *base_url;   /* scheme://host[:port] plus "/bucket" for path style */
	uint64_t part_size;
	int path_style;   /* bucket in the path, not in the host name */
	int signed_only;  /* a streamed (unsigned) part was refused: sign all */
	uint64_t stale_upload_s; /* results.s3.abortUploadsAfter, in seconds; 0: off */
	int swept;        /* stale uploads looked for (once per remote) */
};

static void sweep_stale_uploads(struct s3_remote *s);

/* ---- signing ---- */

/*
 * Our URLs are built here, so they are always scheme://authority/path[?query]
 * with the path already encoded once: the authority and the path, copied
 * out to sign, and the query (NULL: none) within `url`.
 */
static int split_url(const char *url, char host[S3_HOST_MAX], char pathbuf[S3_PATH_MAX],
		     const char **query)
{
	const char *authority, *path;
	size_t alen, plen;

	authority = strstr(url, "://");
	if (!authority)
		return rs_error_set(RS_EUSAGE, "internal: URL without a scheme");
	authority += 3;
	path = strchr(authority, '/');
	if (!path)
		path = authority + strlen(authority);
	alen = (size_t)(path - authority);
	*query = strchr(path, '?');
	plen = *query ? (size_t)(*query - path) : strlen(path);
	if (alen == 0 || alen >= S3_HOST_MAX || plen >= S3_PATH_MAX)
		return rs_error_set(RS_EUSAGE, "S3 request URL too long");
	memcpy(host, authority, alen);
	host[alen] = '\0';
	if (plen == 0)
		strcpy(pathbuf, "/");
	else {
		memcpy(pathbuf, path, plen);
		pathbuf[plen] = '\0';
	}
	return 0;
}

/* Send what was signed: the Host we signed, the date, the hash, the signature. */
static int set_signed_headers(struct rs_http_request *req, const struct s3_remote *s,
			      const char *host, const char *hash,
			      const struct rs_sigv4_result *res)
{
	int err;

	err = rs_http_request_set_header(req, "Host", host);
	if (err)
		return err;
	err = rs_http_request_set_header(req, "x-amz-date", res->amz_date);
	if (err)
		return err;
	err = rs_http_request_set_header(req, "x-amz-content-sha256", hash);
	if (err)
		return err;
	if (s->cfg.session_token) {
		err = rs_http_request_set_header(req, "x-amz-security-token",
						 s->cfg.session_token);
		if (err)
			return err;
	}
	return rs_http_request_set_header(req, "Authorization", rs_buf_cstr(&res->authorization));
}

/*
 * The transport's signer hook. The Host header is set to the authority we
 * sign, so curl cannot send a different one (it drops default ports, for
 * instance).
 */
static int s3_sign(struct rs_http_request *req, void *payload)
{
	struct s3_remote *s = payload;
	struct rs_sigv4_credentials cred = {
		s->cfg.access_key_id, s->cfg.secret_access_key, s->cfg.session_token
	};
	struct rs_sigv4_header extra[4];
	struct rs_sigv4_request sreq;
	struct rs_sigv4_result res;
	const char *query = NULL, *hash = NULL;
	char host[S3_HOST_MAX], pathbuf[S3_PATH_MAX];
	size_t nextra = 0;
	int err;

	rs_sigv4_result_init(&res);
	err = split_url(req->url, host, pathbuf, &query);
	if (err)
		goto out;
	/*
	 * A body still being written has no hash yet: UNSIGNED-PAYLOAD, as
	 * aws-cli sends over HTTPS; put_stream checks the part's ETag instead.
	 */
	if (req->body_kind == RS_HTTP_BODY_STREAM) {
		hash = "UNSIGNED-PAYLOAD";
	} else {
		err = rs_http_request_payload_sha256(req, &hash);
		if (err)
			goto out;
	}
	/* Sign the caller's headers that S3 cares about. */
	if (rs_http_request_header(req, "Range")) {
		extra[nextra].name = "range";
		extra[nextra++].value = rs_http_request_header(req, "Range");
	}
	if (rs_http_request_header(req, "Content-Type")) {
		extra[nextra].name = "content-type";
		extra[nextra++].value = rs_http_request_header(req, "Content-Type");
	}
	memset(&sreq, 0, sizeof(sreq));
	sreq.method = req->method;
	sreq.host = host;
	sreq.path = pathbuf;
	sreq.query = query ? query + 1 : NULL;
	sreq.headers = extra;
	sreq.nheaders = nextra;
	sreq.payload_sha256 = hash;
	sreq.content_sha256_header = 1;
	sreq.region = s->cfg.region;
	sreq.service = "s3";
	err = rs_sigv4_sign(&res, &sreq, &cred, time(NULL));
	if (err)
		goto out;
	err = set_signed_headers(req, s, host, hash, &res);
out:
	rs_sigv4_result_release(&res);
	return err;
}

/* ---- helpers ---- */

/* base_url + "/" + encode(prefix + key) [+ "?" + query] */
static int object_url(struct s3_remote *s, struct rs_buf *out, const char *key,
		      const char *query)
{
	int err;

	rs_buf_clear(out);
	err = rs_buf_printf(out, "%s/", s->base_url);
	if (err)
		return err;
	err = rs_percent_encode_str(out, s->prefix, RS_SLASH_KEEP);
	if (err)
		return err;
	err = rs_percent_encode_str(out, key, RS_SLASH_KEEP);
	if (err)
		return err;
	if (query)
		err = rs_buf_printf(out, "?%s", query);
	return err;
}

/*
 * The URL of a multipart upload's object: "?uploadId=<id>", with
 * "partNumber=<part>&" before it for a part (part from 1; 0: none).
 * upload_id is URL-encoded already.
 */
static int upload_url(struct s3_remote *s, struct rs_buf *out, const char *key,
		      const char *upload_id, uint64_t part)
{
	struct rs_buf query = RS_BUF_INIT;
	int err;

	if (part)
		err = rs_buf_printf(&query, "partNumber=%" PRIu64 "&uploadId=%s", part, upload_id);
	else
		err = rs_buf_printf(&query, "uploadId=%s", upload_id);
	if (!err)
		err = object_url(s, out, key, query.ptr);
	rs_buf_release(&query);
	return err;
}

/* "<name><value>", the value percent-encoded, '/' too: one query parameter. */
static int put_param(struct rs_buf *url, const char *name, const char *value)
{
	int err = rs_buf_puts(url, name);

	if (err)
		return err;
	return rs_percent_encode_str(url, value, RS_SLASH_ENCODE);
}

/* A listing's place to go on from, as put_param; nothing when it is empty. */
static int put_marker(struct rs_buf *url, const char *name, const struct rs_buf *marker)
{
	return marker->len ? put_param(url, name, marker->ptr) : 0;
}

/* A bucket-level listing: "<base>/?<what>&prefix=<prefix>". */
static int listing_url(struct s3_remote *s, struct rs_buf *url, const char *what,
		       const char *prefix)
{
	int err;

	rs_buf_clear(url);
	err = rs_buf_printf(url, "%s%s?%s", s->base_url, s->path_style ? "" : "/", what);
	if (err)
		return err;
	return put_param(url, "&prefix=", prefix);
}

#define S3_SKEW "clock skew - this machine's clock differs too much from the server's; " \
	"check the system time"

/* The error codes S3 (and its look-alikes) name, and what they mean here. */
static const struct rs_http_error_rule s3_error_rules[] = {
	{ "RequestTimeTooSkewed", NULL, RS_EAUTH, RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  S3_SKEW },
	{ NULL, "RequestTimeTooSkewed", RS_EAUTH, RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  S3_SKEW },
	{ "NoSuchBucket", NULL, RS_EREMOTE, 0,
	  "no such bucket - create it or check the remote URL" },
	{ "ExpiredToken", NULL, RS_EAUTH, RS_HTTP_SAY_CODE,
	  "the session token has expired - renew the credentials" },
	{ "TokenRefreshRequired", NULL, RS_EAUTH, RS_HTTP_SAY_CODE,
	  "the session token has expired - renew the credentials" },
	{ "InvalidAccessKeyId", NULL, RS_EAUTH, RS_HTTP_SAY_CODE,
	  "unknown access key id - check the credentials" },
	{ "SignatureDoesNotMatch", NULL, RS_EAUTH, RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  "the signature was refused - check the key" },
};

const struct rs_http_errors rs_s3_http_errors = {
	NULL, s3_error_rules, sizeof(s3_error_rules) / sizeof(s3_error_rules[0]),
};

/*
 * Add what a user needs to act on an error: which remote, and for
 * authentication failures where the key came from (never the key).
 */
static int s3_fail(struct s3_remote *s, int err)
{
	char named[600];

	/* The transport's limits already say "server '<display url>' ...". */
	snprintf(named, sizeof(named), "server '%s'", s->parent.display_url);
	if (err != RS_EAUTH && strstr(rs_error_message(), named))
		return err;
	if (err == RS_EAUTH)
		return rs_error_wrap(err, "%s (credentials from %s, region %s)",
				     s->parent.display_url, s->cfg.credential_source,
				     s->cfg.region);
	return rs_error_wrap(err, "%s", s->parent.display_url);
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 20)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]) || v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* ---- stat / get / del ---- */

static int s3_get(struct rs_remote *r, const char *key, uint64_t off,
		  uint64_t len, struct rs_buf *out);

/*
 * A HEAD answer has no body, so S3 cannot say why it refused (wrong key?
 * clock skew?). Ask again with a one-byte GET, whose error body names the
 * reason; only on this failure path. *probed: the GET's error is returned,
 * with its message.
 */
static int explain_refusal(struct rs_remote *r, const char *key, int err, long status,
			   int *probed)
{
	struct rs_buf probe = RS_BUF_INIT;
	int perr;

	rs_buf_init(&probe, 16);
	perr = s3_get(r, key, 0, 1, &probe);
	rs_buf_release(&probe);
	if (perr && perr != RS_ENOTFOUND && perr != RS_ECORRUPT) {
		*probed = 1;
		return perr;
	}
	return rs_error_set(err, "HEAD '%s': %ld %s", key, status, rs_http_status_text(status));
}

static int s3_stat(struct rs_remote *r, const char *key, uint64_t *size_out)
{
	struct s3_remote *s = (struct s3_remote *)r;
	struct rs_buf url = RS_BUF_INIT, len = RS_BUF_INIT;
	struct rs_http_request req;
	struct rs_http_response resp;
	uint64_t size;
	int err;

	rs_http_request_init(&req, "HEAD", NULL);
	rs_http_response_init(&resp);
	rs_buf_init(&len, 64);
	err = rs_remote_check_key(key);
	if (err)
		goto out;
	err = object_url(s, &url, key, NULL);
	if (err)
		goto out;
	req.url = url.ptr;
	err = rs_http_perform(s->http, &req, &resp);
	if (err == RS_ENOTFOUND) {
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'",
				   key, s->parent.display_url);
		goto out;
	}
	if (err && (resp.status == 400 || resp.status == 403) && !resp.error_code[0]) {
		int probed = 0;

		err = explain_refusal(r, key, err, resp.status, &probed);
		if (probed)
			goto out; /* s3_get has set its message already */
	}
	if (err) {
		err = s3_fail(s, err);
		goto out;
	}
	if (rs_http_response_header(&resp, "Content-Length", &len) ||
	    parse_u64(len.ptr, len.len, &size)) {
		err = rs_error_set(RS_ECORRUPT, "HEAD '%s' on '%s' gave no usable Content-Length",
				   key, s->parent.display_url);
		goto out;
	}
	if (size_out)
		*size_out = size;
out:
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	rs_buf_release(&url);
	rs_buf_release(&len);
	return err;
}

static int s3_get_url(struct rs_remote *r, const char *key, struct rs_buf *out)
{
	return object_url((struct s3_remote *)r, out, key, NULL);
}

static int s3_get_perform(struct rs_remote *r, struct rs_http_request *req,
			  struct rs_http_response *resp)
{
	struct s3_remote *s = (struct s3_remote *)r;
	int err = rs_http_perform(s->http, req, resp);

	return err ? s3_fail(s, err) : 0;
}

static int s3_get(struct rs_remote *r, const char *key, uint64_t off,
		  uint64_t len, struct rs_buf *out)
{
	static const struct rs_http_get_ops ops = { s3_get_url, s3_get_perform };

	return rs_http_get_range(r, &ops, key, off, len, out);
}


/*
 * One request on the object `key` without an answer to read (DELETE, a
 * single PUT with `body`), its failure said for this remote.
 */
struct put_source;
static int object_request(struct s3_remote *s, const char *method, const char *key,
			  const struct put_source *body);

static int s3_del(struct rs_remote *r, const char *key)
{
	int err = s3_stat(r, key, NULL);

	if (err)
		return err;
	return object_request((struct s3_remote *)r, "DELETE", key, NULL);
}

/* ---- put ---- */

/* Where the bytes of a put come from: a file region or memory. */
struct put_source {
	const char *path; /* NULL for memory */
	const unsigned char *mem;
	uint64_t size;
};

static void set_body(struct rs_http_request *req, const struct put_source *src,
		     uint64_t off, uint64_t len)
{
	if (src->path)
		rs_http_request_set_body_file(req, src->path, off, len);
	else
		rs_http_request_set_body_mem(req, src->mem + off, (size_t)len);
}

static int object_request(struct s3_remote *s, const char *method, const char *key,
			  const struct put_source *body)
{
	struct rs_buf url = RS_BUF_INIT;
	struct rs_http_request req;
	int err;

	rs_http_request_init(&req, method, NULL);
	err = object_url(s, &url, key, NULL);
	if (err)
		goto out;
	req.url = url.ptr;
	if (body)
		set_body(&req, body, 0, body->size);
	err = rs_http_perform(s->http, &req, NULL);
	if (err)
		err = s3_fail(s, err);
out:
	rs_http_request_release(&req);
	rs_buf_release(&url);
	return err;
}

static int put_single(struct s3_remote *s, const char *key, const struct put_source *src)
{
	return object_request(s, "PUT", key, src);
}

struct multipart {
	struct s3_remote *s;
	const char *key;
	const struct put_source *src;
	char upload_id[256];  /* URL-encoded */
	uint64_t nparts;
	char (*etags)[80];

	pthread_mutex_t lock;
	uint64_t next;        /* next part index to send */
	int err;              /* first failure */
	struct rs_error_saved saved; /* its message: threads have their own error slot */
};

/*
 * S3's ETag of a part is the MD5 of its bytes, except for parts encrypted
 * with KMS or a customer key. Check it for a part sent unsigned: a body
 * damaged on its way is then caught as it would be by a signed payload.
 */
static int check_part_md5(struct multipart *m, uint64_t i, uint64_t off, uint64_t len,
			  const struct rs_http_response *resp, const char *etag)
{
	struct rs_buf sse = RS_BUF_INIT;
	unsigned char md[64];
	char hex[2 * 16 + 3];
	unsigned int mdlen = 0, k;
	int err, skip;

	skip = !rs_http_response_header(resp, "x-amz-server-side-encryption-customer-algorithm", &sse) ||
	       (!rs_http_response_header(resp, "x-amz-server-side-encryption", &sse) &&
		strncmp(rs_buf_cstr(&sse), "aws:kms", 7) == 0);
	rs_buf_release(&sse);
	if (skip || strlen(etag) != 34)
		return 0; /* not an MD5: nothing to compare */
	err = rs_digest_file("MD5", m->src->path, off, len, md, &mdlen);
	if (err)
		return rs_error_wrap(err, "cannot check part %" PRIu64 " of '%s'", i + 1, m->key);
	hex[0] = '"';
	for (k = 0; k < mdlen && k < 16; k++)
		snprintf(hex + 1 + 2 * k, 3, "%02x", md[k]);
	hex[33] = '"';
	hex[34] = '\0';
	if (strcasecmp(hex, etag) != 0)
		return rs_error_set(RS_ERETRY, "S3 stored part %" PRIu64 " of '%s' with ETag %s, but "
				    "its bytes have MD5 %s: damaged on the way", i + 1, m->key, etag, hex);
	return 0;
}

/* Part i's ETag from S3's answer, checked to be fit for the XML we send back. */
static int part_etag(const struct multipart *m, uint64_t i, const struct rs_http_response *resp,
		     struct rs_buf *etag)
{
	size_t k;

	if (rs_http_response_header(resp, "ETag", etag) || etag->len == 0 ||
	    etag->len >= sizeof(m->etags[0]))
		return rs_error_set(RS_ECORRUPT, "S3 gave no ETag for part %" PRIu64, i + 1);
	/* It goes into XML we send back: allow only what ETags are made of. */
	for (k = 0; k < etag->len; k++)
		if (!(isalnum((unsigned char)etag->ptr[k]) || etag->ptr[k] == '"' ||
		      etag->ptr[k] == '-'))
			return rs_error_set(RS_ECORRUPT, "S3 gave an odd ETag for part %" PRIu64, i + 1);
	return 0;
}

/*
 * Send bytes [off, off + len) of the source as part i (from 0); with `g`,
 * of the file g is still writing, unsigned and as the bytes arrive.
 */
static int upload_part_stream(struct multipart *m, uint64_t i, uint64_t off, uint64_t len,
			      struct rs_growing *g)
{
	struct rs_buf url = RS_BUF_INIT, etag = RS_BUF_INIT;
	struct rs_http_request req;
	struct rs_http_response resp;
	int err;

	rs_http_request_init(&req, "PUT", NULL);
	rs_http_response_init(&resp);
	rs_buf_init(&etag, 128);
	err = upload_url(m->s, &url, m->key, m->upload_id, i + 1);
	if (err)
		goto out;
	req.url = url.ptr;
	if (g)
		rs_http_request_set_body_stream_range(&req, g, off, len);
	else
		set_body(&req, m->src, off, len);
	err = rs_http_perform(m->s->http, &req, &resp);
	if (err) {
		err = m->nparts ?
			rs_error_wrap(err, "part %" PRIu64 " of %" PRIu64, i + 1, m->nparts) :
			rs_error_wrap(err, "part %" PRIu64, i + 1);
		goto out;
	}
	err = part_etag(m, i, &resp, &etag);
	if (err)
		goto out;
	if (g) {
		err = check_part_md5(m, i, off, len, &resp, etag.ptr);
		if (err)
			goto out;
	}
	memcpy(m->etags[i], etag.ptr, etag.len + 1);
out:
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	rs_buf_release(&url);
	rs_buf_release(&etag);
	return err;
}

static int upload_part_range(struct multipart *m, uint64_t i, uint64_t off, uint64_t len)
{
	return upload_part_stream(m, i, off, len, NULL);
}

static int upload_part(struct multipart *m, uint64_t i)
{
	uint64_t off = i * m->s->part_size;
	uint64_t len = m->src->size - off < m->s->part_size ? m->src->size - off : m->s->part_size;

	return upload_part_range(m, i, off, len);
}

static void *upload_worker(void *arg)
{
	struct multipart *m = arg;

	for (;;) {
		uint64_t i;
		int err;

		pthread_mutex_lock(&m->lock);
		if (m->err || m->next == m->nparts) {
			pthread_mutex_unlock(&m->lock);
			break;
		}
		i = m->next++;
		pthread_mutex_unlock(&m->lock);
		err = upload_part(m, i);
		if (err) {
			pthread_mutex_lock(&m->lock);
			if (!m->err) {
				m->err = err;
				rs_error_save(&m->saved, err);
			}
			pthread_mutex_unlock(&m->lock);
			break;
		}
	}
	return NULL;
}

static int multipart_create(struct multipart *m)
{
	struct rs_buf url = RS_BUF_INIT, body = RS_BUF_INIT, id = RS_BUF_INIT;
	struct rs_buf enc = RS_BUF_INIT;
	struct rs_http_request req;
	int err;

	rs_http_request_init(&req, "POST", NULL);
	rs_buf_init(&body, S3_SMALL_XML_MAX);
	rs_buf_init(&id, 1024);
	err = object_url(m->s, &url, m->key, "uploads");
	if (err)
		goto out;
	req.url = url.ptr;
	rs_http_request_set_body_mem(&req, "", 0);
	req.response_body = &body;
	err = rs_http_perform(m->s->http, &req, NULL);
	if (err)
		goto out;
	err = rs_xml_first_text(body.ptr, body.len, "UploadId", &id);
	if (err < 0)
		goto out;
	if (err == 0 || id.len == 0) {
		err = rs_error_set(RS_ECORRUPT, "S3 started a multipart upload without an UploadId");
		goto out;
	}
	err = rs_percent_encode_str(&enc, id.ptr, RS_SLASH_ENCODE);
	if (err)
		goto out;
	if (enc.len >= sizeof(m->upload_id)) {
		err = rs_error_set(RS_ECORRUPT, "S3 gave an UploadId of %zu bytes", enc.len);
		goto out;
	}
	memcpy(m->upload_id, enc.ptr, enc.len + 1);
out:
	rs_http_request_release(&req);
	rs_buf_release(&url);
	rs_buf_release(&body);
	rs_buf_release(&id);
	rs_buf_release(&enc);
	return err;
}

/* The body of CompleteMultipartUpload: each part's number and ETag. */
static int complete_xml(const struct multipart *m, struct rs_buf *xml)
{
	uint64_t i;
	int err;

	err = rs_buf_puts(xml, "<CompleteMultipartUpload>");
	if (err)
		return err;
	for (i = 0; i < m->nparts; i++) {
		err = rs_buf_printf(xml, "<Part><PartNumber>%" PRIu64 "</PartNumber>"
				    "<ETag>%s</ETag></Part>", i + 1, m->etags[i]);
		if (err)
			return err;
	}
	return rs_buf_puts(xml, "</CompleteMultipartUpload>");
}

static int multipart_complete(struct multipart *m)
{
	struct rs_buf url = RS_BUF_INIT, xml = RS_BUF_INIT, body = RS_BUF_INIT;
	struct rs_http_request req;
	int err;

	rs_http_request_init(&req, "POST", NULL);
	rs_buf_init(&body, S3_SMALL_XML_MAX);
	err = upload_url(m->s, &url, m->key, m->upload_id, 0);
	if (err)
		goto out;
	err = complete_xml(m, &xml);
	if (err)
		goto out;
	req.url = url.ptr;
	rs_http_request_set_body_mem(&req, xml.ptr, xml.len);
	req.response_body = &body;
	req.what = m->key;
	/* S3 may take minutes to assemble big uploads (sending blanks meanwhile). */
	req.deadline_extra = m->nparts * m->s->part_size;
	err = rs_http_perform(m->s->http, &req, NULL);
	if (err)
		goto out;
	/* S3 can answer 200 and still fail the complete: the error is in the body. */
	if (strstr(rs_buf_cstr(&body), "<Error>")) {
		err = rs_error_set(RS_ERETRY, "S3 failed to assemble the multipart upload of '%s'",
				   m->key);
		goto out;
	}
out:
	rs_http_request_release(&req);
	rs_buf_release(&url);
	rs_buf_release(&xml);
	rs_buf_release(&body);
	return err;
}

/*
 * AbortMultipartUpload of `key`'s upload `upload_id` (URL-encoded), tried
 * twice at most: for the callers below, who ignore its failure.
 */
static int abort_upload(struct s3_remote *s, const char *key, const char *upload_id,
			const char *what)
{
	struct rs_buf url = RS_BUF_INIT;
	struct rs_http_request req;
	int err;

	rs_http_request_init(&req, "DELETE", NULL);
	err = upload_url(s, &url, key, upload_id, 0);
	if (err)
		goto out;
	req.url = url.ptr;
	req.what = what;
	req.max_tries = 2;
	err = rs_http_perform(s->http, &req, NULL);
out:
	rs_http_request_release(&req);
	rs_buf_release(&url);
	return err;
}

/* Best effort: the caller already has the error worth reporting. */
static void multipart_abort(struct multipart *m)
{
	struct rs_error_saved saved;

	rs_error_save(&saved, rs_error_last());
	if (abort_upload(m->s, m->key, m->upload_id, NULL))
		rs_error_clear(); /* ignored: the saved message goes back just below */
	rs_error_restore(&saved);
}

/*
 * Release `m` after an upload that ended with `err`: abort it first when
 * it failed after being created, and say which remote failed.
 */
static int multipart_end(struct multipart *m, int err, int created)
{
	if (err && created)
		multipart_abort(m);
	if (err)
		err = s3_fail(m->s, err);
	pthread_mutex_destroy(&m->lock);
	free(m->etags);
	return err;
}

static int put_multipart(struct s3_remote *s, const char *key, const struct put_source *src)
{
	struct multipart m;
	pthread_t threads[S3_UPLOAD_THREADS];
	size_t nthreads = 0, i;
	int err, created = 0;

	memset(&m, 0, sizeof(m));
	m.s = s;
	m.key = key;
	m.src = src;
	m.nparts = (src->size + s->part_size - 1) / s->part_size;
	pthread_mutex_init(&m.lock, NULL);
	if (m.nparts > S3_MAX_PARTS) {
		err = rs_error_set(RS_EUSAGE, "'%s' needs %" PRIu64 " parts of %" PRIu64
				   " bytes, more than S3's %d: raise results.s3.partsize",
				   key, m.nparts, s->part_size, S3_MAX_PARTS);
		goto out;
	}
	m.etags = calloc((size_t)m.nparts, sizeof(m.etags[0]));
	if (!m.etags) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = multipart_create(&m);
	if (err)
		goto out;
	created = 1;
	for (i = 0; i < S3_UPLOAD_THREADS && i < m.nparts; i++) {
		if (pthread_create(&threads[nthreads], NULL, upload_worker, &m) != 0)
			break;
		nthreads++;
	}
	if (nthreads == 0)
		upload_worker(&m); /* no thread to be had: do it here */
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	if (m.err) {
		err = rs_error_restore(&m.saved);
		goto out;
	}
	err = multipart_complete(&m);
out:
	return multipart_end(&m, err, created);
}

static int put_source(struct s3_remote *s, const char *key, const struct put_source *src)
{
	int err = rs_remote_check_key(key);

	if (err)
		return err;
	sweep_stale_uploads(s);
	if (src->size <= s->part_size)
		return put_single(s, key, src);
	return put_multipart(s, key, src);
}

static int s3_put_file(struct rs_remote *r, const char *key, const char *path)
{
	struct put_source src = { path, NULL, 0 };
	struct stat st;

	if (stat(path, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	if (!S_ISREG(st.st_mode))
		return rs_error_set(RS_EUSAGE, "'%s' is not a regular file", path);
	src.size = (uint64_t)st.st_size;
	return put_source((struct s3_remote *)r, key, &src);
}

static int grow_etags(struct multipart *m, uint64_t want, uint64_t *cap)
{
	size_t n = (size_t)*cap;
	int err;

	if (want <= *cap)
		return 0;
	if (want > S3_MAX_PARTS)
		return rs_error_set(RS_EUSAGE, "'%s' needs more than S3's %d parts",
				    m->key, S3_MAX_PARTS);
	err = rs_array_grow(&m->etags, &n, (size_t)want, sizeof(*m->etags), 8);
	if (err)
		return err;
	*cap = n;
	return 0;
}

/* A streamed upload's last part, [off, avail), sent signed; then complete it. */
static int stream_last_part(struct multipart *m, uint64_t *cap, uint64_t off, uint64_t avail)
{
	int err;

	if (avail > off) {
		err = grow_etags(m, m->next + 1, cap);
		if (err)
			return err;
		err = upload_part_range(m, m->next, off, avail - off);
		if (err)
			return err;
		m->next++;
	}
	m->nparts = m->next;
	return multipart_complete(m);
}

/*
 * A pack while it is being written. A multipart upload starts with the
 * pack, and each 5 MiB part (S3's minimum; all but the last of one size,
 * as R2 requires) is sent while its bytes are still being written: its
 * length is known in advance, but not its hash, so it goes UNSIGNED-PAYLOAD
 * and its ETag is checked against the MD5 of what was sent. When the pack
 * ends inside a part, that request is cut off (S3 drops it) and the rest
 * goes up as the signed last part (a pack sealed before the upload even
 * began is one PutObject). A streamed part that fails for another
 * reason (a server that refuses unsigned bodies, an idle timeout) is sent
 * again signed, once it is all there; after a refusal (403 or 400) this
 * remote signs every part. Any failure or a cancel aborts the
 * upload, so nothing appears at `key`.
 */
/* One loop, not split: its three ways to send a part share off, avail and created. */
static int s3_put_stream(struct rs_remote *r, const char *key, struct rs_growing *g)
{
	struct s3_remote *s = (struct s3_remote *)r;
	struct put_source src = { rs_growing_path(g), NULL, 0 };
	struct multipart m;
	uint64_t off = 0, avail, cap = 0, part = S3_MIN_PART;
	int err, sealed, created = 0, refused;

	err = rs_remote_check_key(key);
	if (err)
		return err;
	sweep_stale_uploads(s);
	memset(&m, 0, sizeof(m));
	m.s = s;
	m.key = key;
	m.src = &src;
	pthread_mutex_init(&m.lock, NULL);
	for (;;) {
		err = rs_growing_wait(g, off + 1, &avail, &sealed);
		if (err)
			break;
		if (sealed && avail - off <= part) {
			/* The last piece, all there: signed. */
			if (created)
				err = stream_last_part(&m, &cap, off, avail);
			break;
		}
		if (!created) {
			err = multipart_create(&m);
			if (err)
				break;
			created = 1;
		}
		err = grow_etags(&m, m.next + 1, &cap);
		if (err)
			break;
		refused = 0;
		if (!sealed && !__atomic_load_n(&s->signed_only, __ATOMIC_RELAXED)) {
			err = upload_part_stream(&m, m.next, off, part, g);
			if (!err) {
				m.next++;
				off += part;
				continue;
			}
			refused = err == RS_EAUTH || err == RS_EUSAGE;
		}
		/* Signed, once the whole part is there. */
		err = rs_growing_wait(g, off + part, &avail, &sealed);
		if (err)
			break; /* cancelled */
		rs_error_clear(); /* what the streamed try said, if anything */
		if (avail < off + part)
			continue; /* the pack ended inside this part: its last piece */
		if (refused) /* this store wants signed bodies: no more tries */
			__atomic_store_n(&s->signed_only, 1, __ATOMIC_RELAXED);
		err = upload_part_range(&m, m.next, off, part);
		if (err)
			break;
		m.next++;
		off += part;
	}
	if (!err && !created) {
		/* Ended before a whole part: one PutObject, signed. */
		src.size = avail;
		pthread_mutex_destroy(&m.lock);
		return put_single(s, key, &src); /* reports its own errors */
	}
	return multipart_end(&m, err, created);
}

static int s3_put_buf(struct rs_remote *r, const char *key, const void *p, size_t n)
{
	struct put_source src = { NULL, p ? p : (const void *)"", n };

	return put_source((struct s3_remote *)r, key, &src);
}

/* ---- list ---- */

/*
 * The reading of one ListObjectsV2 page: keys of <Contents> go to the
 * callback as they close; <IsTruncated> and <NextContinuationToken> are
 * children of the root.
 */
struct list_page {
	const char *strip_prefix;
	rs_remote_list_cb cb;
	void *payload;
	struct rs_buf key, *next_token;
	int *truncated;
	int in_contents, has_key, has_size;
	uint64_t size;
};

static int list_page_open(void *payload, unsigned int depth, const char *name)
{
	struct list_page *lp = payload;

	if (depth == 1 && strcmp(name, "ListBucketResult"))
		return rs_error_set(RS_ECORRUPT, "the bucket listing is not ListObjectsV2 XML");
	if (depth == 2 && !strcmp(name, "Contents")) {
		lp->in_contents = 1;
		lp->has_key = lp->has_size = 0;
	}
	return 0;
}

static int list_page_close(void *payload, unsigned int depth, const char *name,
			   const char *text, size_t len)
{
	struct list_page *lp = payload;
	size_t plen = strlen(lp->strip_prefix);
	int err;

	if (lp->in_contents && depth == 3 && !strcmp(name, "Key")) {
		rs_buf_clear(&lp->key);
		lp->has_key = 1;
		return rs_buf_put(&lp->key, text, len);
	}
	if (lp->in_contents && depth == 3 && !strcmp(name, "Size")) {
		lp->has_size = !parse_u64(text, len, &lp->size);
		return 0;
	}
	if (depth == 2 && !strcmp(name, "Contents")) {
		lp->in_contents = 0;
		if (!lp->has_key || !lp->has_size)
			return rs_error_set(RS_ECORRUPT, "a listed object has no Key or Size");
		/* A key outside our prefix would be a server bug; skip it. */
		if (lp->key.len <= plen || strncmp(lp->key.ptr, lp->strip_prefix, plen) ||
		    strlen(lp->key.ptr) != lp->key.len)
			return 0;
		return lp->cb(lp->key.ptr + plen, lp->size, lp->payload);
	}
	if (depth == 2 && !strcmp(name, "IsTruncated"))
		*lp->truncated = len == 4 && !memcmp(text, "true", 4);
	if (depth == 2 && !strcmp(name, "NextContinuationToken")) {
		rs_buf_clear(lp->next_token);
		err = rs_buf_put(lp->next_token, text, len);
		if (err)
			return err;
	}
	return 0;
}

int rs_s3_list_page_parse(const char *xml, size_t len, const char *strip_prefix,
			  rs_remote_list_cb cb, void *payload,
			  struct rs_buf *next_token, int *truncated)
{
	struct list_page lp;
	struct rs_xml_handler h = { "the bucket listing", list_page_open, list_page_close,
				    &lp, S3_LIST_PAGE_MAX, 0, 0 };
	int err;

	memset(&lp, 0, sizeof(lp));
	lp.strip_prefix = strip_prefix;
	lp.cb = cb;
	lp.payload = payload;
	lp.next_token = next_token;
	lp.truncated = truncated;
	rs_buf_init(&lp.key, S3_MAX_KEY + 1);
	rs_buf_clear(next_token);
	*truncated = 0;
	err = rs_xml_parse(xml, len, &h);
	if (err)
		goto out; /* the callback's value, unchanged */
	if (!*truncated) {
		rs_buf_clear(next_token);
		goto out;
	}
	if (next_token->len == 0 || strlen(next_token->ptr) != next_token->len)
		err = rs_error_set(RS_ECORRUPT, "a truncated listing has an empty or binary token");
out:
	if (err)
		*truncated = 0;
	rs_buf_release(&lp.key);
	return err;
}

/* One ListObjectsV2 request: the prefix, max-keys (0: the server's), the token. */
static int list_url(struct s3_remote *s, struct rs_buf *url, const char *full, uint64_t mk,
		    const struct rs_buf *token)
{
	int err;

	err = listing_url(s, url, "list-type=2", full);
	if (err)
		return err;
	if (mk) {
		err = rs_buf_printf(url, "&max-keys=%" PRIu64, mk);
		if (err)
			return err;
	}
	return put_marker(url, "&continuation-token=", token);
}

static int s3_list(struct rs_remote *r, const char *prefix, rs_remote_list_cb cb,
		   void *payload)
{
	struct s3_remote *s = (struct s3_remote *)r;
	struct rs_buf url = RS_BUF_INIT, page = RS_BUF_INIT, token = RS_BUF_INIT;
	struct rs_buf next = RS_BUF_INIT, full = RS_BUF_INIT;
	struct rs_http_pages pages = RS_HTTP_PAGES_INIT;
	struct rs_http_request req;
	const char *max_keys = getenv("RESULTS_S3_LIST_MAX_KEYS");
	uint64_t mk = 0;
	int err = 0, truncated = 1;

	if (max_keys && (parse_u64(max_keys, strlen(max_keys), &mk) || mk < 1 || mk > 1000))
		return rs_error_set(RS_EUSAGE, "RESULTS_S3_LIST_MAX_KEYS must be 1 to 1000");

	rs_buf_init(&page, S3_LIST_PAGE_MAX);
	rs_buf_init(&token, 4096);
	rs_buf_init(&next, 4096);
	err = rs_buf_printf(&full, "%s%s", s->prefix, prefix ? prefix : "");
	if (err)
		goto out;
	while (truncated) {
		rs_buf_clear(&page);
		err = list_url(s, &url, full.ptr, mk, &token);
		if (err)
			goto out;
		rs_http_request_init(&req, "GET", url.ptr);
		req.response_body = &page;
		req.what = full.len ? full.ptr : "/";
		err = rs_http_perform(s->http, &req, NULL);
		rs_http_request_release(&req);
		if (err) {
			err = s3_fail(s, err);
			goto out;
		}
		err = rs_s3_list_page_parse(rs_buf_cstr(&page), page.len, s->prefix, cb,
					    payload, &next, &truncated);
		if (err == RS_ECORRUPT && rs_error_last() == RS_ECORRUPT)
			err = rs_error_wrap(err, "%s", s->parent.display_url);
		if (err)
			goto out;
		/* A token seen before (A -> B -> A) would loop forever. */
		err = rs_http_pages_next(&pages, next.ptr, truncated ? next.len : 0,
					 s->parent.display_url, full.len ? full.ptr : "/");
		if (err)
			goto out;
		rs_buf_clear(&token);
		if (truncated) {
			err = rs_buf_put(&token, next.ptr, next.len);
			if (err)
				goto out;
		}
	}
out:
	rs_buf_release(&url);
	rs_buf_release(&page);
	rs_buf_release(&token);
	rs_buf_release(&next);
	rs_buf_release(&full);
	rs_http_pages_release(&pages);
	return err;
}

/* ---- stale multipart uploads ---- */

static int64_t num(const char *s, size_t k)
{
	int64_t v = 0;
	size_t i;

	for (i = 0; i < k; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* "2026-11-28T10:00:00.000Z" (S3's <Initiated>) as seconds since 1970. */
static int parse_iso8601(const char *s, size_t n, int64_t *out)
{
	int64_t y, m, d, hh, mm, ss, era, yoe, doy, doe;
	size_t i;

	/* YYYY-MM-DDTHH:MM:SS, then optional fraction, then Z. */
	if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
	    s[16] != ':' || s[n - 1] != 'Z')
		return -1;
	for (i = 0; i < 19; i++)
		if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 &&
		    !isdigit((unsigned char)s[i]))
			return -1;
	for (i = 19; i < n - 1; i++)
		if (!(i == 19 ? s[i] == '.' : isdigit((unsigned char)s[i])))
			return -1;
	y = num(s, 4); m = num(s + 5, 2); d = num(s + 8, 2);
	hh = num(s + 11, 2); mm = num(s + 14, 2); ss = num(s + 17, 2);
	if (m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60)
		return -1;
	/* Days from civil (Howard Hinnant's algorithm). */
	y -= m <= 2;
	era = y / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	*out = ((era * 146097 + doe - 719468) * 86400) + hh * 3600 + mm * 60 + ss;
	return 0;
}

/* The reading of one ListMultipartUploads page, as list_page above. */
struct uploads_page {
	rs_s3_upload_cb cb;
	void *payload;
	struct rs_buf key, id, *next_key, *next_id;
	int *truncated;
	int in_upload, has_key, has_id, has_time;
	int64_t initiated;
};

static int uploads_open(void *payload, unsigned int depth, const char *name)
{
	struct uploads_page *up = payload;

	if (depth == 1 && strcmp(name, "ListMultipartUploadsResult"))
		return rs_error_set(RS_ECORRUPT,
				    "the upload listing is not ListMultipartUploads XML");
	if (depth == 2 && !strcmp(name, "Upload")) {
		up->in_upload = 1;
		up->has_key = up->has_id = up->has_time = 0;
	}
	return 0;
}

/* Keep the text of an element in `b` (cleared first). */
static int keep_text(struct rs_buf *b, int *has, const char *text, size_t len)
{
	rs_buf_clear(b);
	if (has)
		*has = 1;
	return rs_buf_put(b, text, len);
}

static int uploads_close(void *payload, unsigned int depth, const char *name,
			 const char *text, size_t len)
{
	struct uploads_page *up = payload;

	if (up->in_upload && depth == 3) {
		if (!strcmp(name, "Key"))
			return keep_text(&up->key, &up->has_key, text, len);
		if (!strcmp(name, "UploadId"))
			return keep_text(&up->id, &up->has_id, text, len);
		if (!strcmp(name, "Initiated"))
			up->has_time = !parse_iso8601(text, len, &up->initiated);
		return 0;
	}
	if (depth != 2)
		return 0;
	if (!strcmp(name, "Upload")) {
		up->in_upload = 0;
		if (!up->has_key || !up->has_id || !up->has_time)
			return rs_error_set(RS_ECORRUPT, "a listed upload has no Key, UploadId "
					    "or Initiated time");
		if (strlen(rs_buf_cstr(&up->key)) != up->key.len ||
		    strlen(rs_buf_cstr(&up->id)) != up->id.len || !up->id.len)
			return 0; /* binary: not one of ours */
		return up->cb(up->key.ptr, up->id.ptr, up->initiated, up->payload);
	}
	if (!strcmp(name, "IsTruncated"))
		*up->truncated = len == 4 && !memcmp(text, "true", 4);
	else if (!strcmp(name, "NextKeyMarker"))
		return keep_text(up->next_key, NULL, text, len);
	else if (!strcmp(name, "NextUploadIdMarker"))
		return keep_text(up->next_id, NULL, text, len);
	return 0;
}

int rs_s3_uploads_page_parse(const char *xml, size_t len, rs_s3_upload_cb cb, void *payload,
			     struct rs_buf *next_key, struct rs_buf *next_id, int *truncated)
{
	struct uploads_page up;
	struct rs_xml_handler h = { "the upload listing", uploads_open, uploads_close, &up,
				    S3_LIST_PAGE_MAX, 0, 0 };
	int err;

	memset(&up, 0, sizeof(up));
	up.cb = cb;
	up.payload = payload;
	up.next_key = next_key;
	up.next_id = next_id;
	up.truncated = truncated;
	rs_buf_init(&up.key, S3_MAX_KEY + 1);
	rs_buf_init(&up.id, 1024);
	rs_buf_clear(next_key);
	rs_buf_clear(next_id);
	*truncated = 0;
	err = rs_xml_parse(xml, len, &h);
	if (!err && *truncated && !next_key->len)
		err = rs_error_set(RS_ECORRUPT, "a truncated upload listing has no NextKeyMarker");
	if (err || !*truncated) {
		*truncated = 0;
		rs_buf_clear(next_key);
		rs_buf_clear(next_id);
	}
	rs_buf_release(&up.key);
	rs_buf_release(&up.id);
	return err;
}

struct sweep {
	struct s3_remote *s;
	int64_t before; /* uploads started before this are stale */
	unsigned int aborted;
};

/* Abort one listed upload when it is ours and stale. Failures are ignored. */
static int sweep_one(const char *key, const char *upload_id, int64_t initiated, void *payload)
{
	struct sweep *sw = payload;
	struct s3_remote *s = sw->s;
	size_t plen = strlen(s->prefix);
	struct rs_buf enc = RS_BUF_INIT;

	if (initiated >= sw->before || strncmp(key, s->prefix, plen) ||
	    rs_remote_check_key(key + plen)) {
		rs_error_clear();
		return 0;
	}
	if (!rs_percent_encode_str(&enc, upload_id, RS_SLASH_ENCODE) &&
	    !abort_upload(s, key + plen, enc.ptr, key + plen))
		sw->aborted++;
	rs_error_clear();
	rs_buf_release(&enc);
	return 0;
}

/* One ListMultipartUploads request under our prefix, from the markers on. */
static int uploads_url(struct s3_remote *s, struct rs_buf *url, const struct rs_buf *kmark,
		       const struct rs_buf *imark)
{
	int err;

	err = listing_url(s, url, "uploads", s->prefix);
	if (err)
		return err;
	err = put_marker(url, "&key-marker=", kmark);
	if (err)
		return err;
	return put_marker(url, "&upload-id-marker=", imark);
}

/*
 * A multipart upload whose process was killed stays open, and S3 bills
 * its parts until it is aborted. Before this remote's first put, list the
 * uploads in progress under the store's prefix (ListMultipartUploads) and
 * abort those started more than results.s3.abortUploadsAfter hours ago
 * (default 24; 0 turns this off): an upload that old is no live push.
 * Best effort: a store that does not allow listing uploads (or s3rver,
 * which cannot) is left as it is, quietly; the S3 lifecycle rule
 * AbortIncompleteMultipartUpload does the same job on the server side
 * (docs/remotes-http.md).
 */
static void sweep_stale_uploads(struct s3_remote *s)
{
	struct rs_buf url = RS_BUF_INIT, page = RS_BUF_INIT, kmark = RS_BUF_INIT;
	struct rs_buf imark = RS_BUF_INIT;
	struct rs_http_pages pages = RS_HTTP_PAGES_INIT;
	struct sweep sw;
	struct rs_error_saved saved;
	int code = rs_error_last(), truncated = 1, err = 0;

	if (!s->stale_upload_s || __atomic_exchange_n(&s->swept, 1, __ATOMIC_ACQ_REL))
		return;
	rs_error_save(&saved, code);
	sw.s = s;
	sw.before = (int64_t)time(NULL) - (int64_t)s->stale_upload_s;
	sw.aborted = 0;
	rs_buf_init(&page, S3_LIST_PAGE_MAX);
	rs_buf_init(&kmark, S3_MAX_KEY + 1);
	rs_buf_init(&imark, 1024);
	while (truncated && !err) {
		struct rs_http_request req;

		rs_buf_clear(&page);
		err = uploads_url(s, &url, &kmark, &imark);
		if (err)
			break;
		rs_http_request_init(&req, "GET", url.ptr);
		req.response_body = &page;
		req.what = "multipart uploads";
		req.max_tries = 2;
		err = rs_http_perform(s->http, &req, NULL);
		rs_http_request_release(&req);
		if (!err)
			err = rs_s3_uploads_page_parse(rs_buf_cstr(&page), page.len, sweep_one, &sw,
						       &kmark, &imark, &truncated);
		if (!err && truncated) {
			/* The pair of markers is this listing's continuation token. */
			struct rs_buf tok = RS_BUF_INIT;

			err = rs_buf_printf(&tok, "%s\n%s", rs_buf_cstr(&kmark), rs_buf_cstr(&imark));
			if (!err)
				err = rs_http_pages_next(&pages, tok.ptr, tok.len,
							 s->parent.display_url, "multipart uploads");
			rs_buf_release(&tok);
		}
	}
	rs_buf_release(&url);
	rs_buf_release(&page);
	rs_buf_release(&kmark);
	rs_buf_release(&imark);
	rs_http_pages_release(&pages);
	if (code)
		rs_error_restore(&saved);
	else
		rs_error_clear();
}

/* ---- open ---- */

static void s3_free(struct rs_remote *r)
{
	struct s3_remote *s = (struct s3_remote *)r;

	if (!s)
		return;
	rs_http_free(s->http);
	rs_aws_config_release(&s->cfg);
	free(s->bucket);
	free(s->prefix);
	free(s->base_url);
	free(s->parent.display_url);
	free(s);
}

/* S3's rules, loosened for older buckets: 3-63 of [a-z0-9.-_] and upper case. */
static int valid_bucket(const char *b, size_t n)
{
	size_t i;

	if (n < 3 || n > 63)
		return 0;
	for (i = 0; i < n; i++)
		if (!(isalnum((unsigned char)b[i]) || b[i] == '.' || b[i] == '-' || b[i] == '_'))
			return 0;
	return 1;
}

static int parse_part_size(struct s3_remote *s, rs_config_get_fn get, void *payload)
{
	const char *v = get ? get("results.s3.partsize", payload) : NULL;
	uint64_t mib;

	s->part_size = S3_DEFAULT_PART;
	if (!v || !*v)
		return 0;
	if (parse_u64(v, strlen(v), &mib) || mib < (S3_MIN_PART >> 20) || mib > (S3_MAX_PART >> 20))
		return rs_error_set(RS_EUSAGE, "results.s3.partsize is '%.32s'; give MiB from %llu to %llu",
				    v, S3_MIN_PART >> 20, S3_MAX_PART >> 20);
	s->part_size = mib << 20;
	return 0;
}

/* results.s3.abortUploadsAfter: hours, 0 to 87600 (default 24; 0: never). */
static void s3_tidy(struct rs_remote *r)
{
	sweep_stale_uploads((struct s3_remote *)r);
}

static int parse_stale_uploads(struct s3_remote *s, rs_config_get_fn get, void *payload)
{
	const char *v = get ? get("results.s3.abortUploadsAfter", payload) : NULL;
	uint64_t hours;

	s->stale_upload_s = 24 * 3600;
	if (!v || !*v)
		return 0;
	if (parse_u64(v, strlen(v), &hours) || hours > 87600)
		return rs_error_set(RS_EUSAGE, "results.s3.abortUploadsAfter is '%.32s'; give hours "
				    "from 0 (never) to 87600", v);
	s->stale_upload_s = hours * 3600;
	return 0;
}

/*
 * s3://bucket[/prefix]: the bucket's name, and where the prefix starts
 * (NULL: none), checked.
 */
static int split_s3_url(const char *url, const char **slash, size_t *blen)
{
	const char *rest, *p;

	if (strncmp(url, "s3://", 5))
		return rs_error_set(RS_EUSAGE, "'%.200s' is not an s3:// URL", url);
	rest = url + 5;
	*slash = strchr(rest, '/');
	*blen = *slash ? (size_t)(*slash - rest) : strlen(rest);
	if (!valid_bucket(rest, *blen))
		return rs_error_set(RS_EUSAGE, "'%.200s' does not name an S3 bucket "
				    "(s3://bucket/prefix; 3 to 63 letters, digits, '.', '-')", url);
	for (p = *slash ? *slash : ""; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 127 || *p == '?' || *p == '#')
			return rs_error_set(RS_EUSAGE, "the prefix of '%.200s' has a character "
					    "that has no place in it", url);
	if (*slash && strstr(*slash, ".."))
		return rs_error_set(RS_EUSAGE, "the prefix of '%.200s' has '..'", url);
	return 0;
}

/* Prefix: no leading or doubled '/', one trailing '/'. Then the display URL. */
static int set_prefix(struct s3_remote *s, const char *slash)
{
	struct rs_buf b = RS_BUF_INIT;
	const char *p;
	int err = 0;

	for (p = slash; p && *p; p++) {
		if (*p == '/' && (b.len == 0 || b.ptr[b.len - 1] == '/'))
			continue;
		err = rs_buf_putc(&b, *p);
		if (err)
			goto out;
	}
	if (b.len && b.ptr[b.len - 1] != '/') {
		err = rs_buf_putc(&b, '/');
		if (err)
			goto out;
	}
	s->prefix = b.len ? rs_buf_detach(&b, NULL) : strdup("");
	if (!s->bucket || !s->prefix) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_buf_printf(&b, "s3://%s/%s", s->bucket, s->prefix);
	if (err)
		goto out;
	if (b.ptr[b.len - 1] == '/')
		b.ptr[--b.len] = '\0';
	s->parent.display_url = rs_buf_detach(&b, NULL);
out:
	rs_buf_release(&b);
	return err;
}

/*
 * Addressing. A bucket name with '.' cannot be a virtual host under
 * AWS's wildcard certificate, so it goes path-style there too.
 */
static int set_base_url(struct s3_remote *s)
{
	struct rs_buf b = RS_BUF_INIT;
	int err;

	s->path_style = s->cfg.path_style || (!s->cfg.endpoint && strchr(s->bucket, '.'));
	if (s->cfg.endpoint) {
		const char *host = strstr(s->cfg.endpoint, "://") + 3;

		if (s->path_style)
			err = rs_buf_printf(&b, "%s/%s", s->cfg.endpoint, s->bucket);
		else
			err = rs_buf_printf(&b, "%.*s%s.%s", (int)(host - s->cfg.endpoint),
					    s->cfg.endpoint, s->bucket, host);
	} else if (s->path_style) {
		err = rs_buf_printf(&b, "https://s3.%s.amazonaws.com/%s", s->cfg.region, s->bucket);
	} else {
		err = rs_buf_printf(&b, "https://%s.s3.%s.amazonaws.com", s->bucket, s->cfg.region);
	}
	if (!err)
		s->base_url = rs_buf_detach(&b, NULL);
	rs_buf_release(&b);
	return err;
}

static struct s3_remote *s3_new(void)
{
	struct s3_remote *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->parent.version = RS_REMOTE_VERSION;
	s->parent.get = s3_get;
	s->parent.put_file = s3_put_file;
	s->parent.put_buf = s3_put_buf;
	s->parent.put_stream = s3_put_stream;
	s->parent.stat = s3_stat;
	s->parent.list = s3_list;
	s->parent.del = s3_del;
	s->parent.tidy = s3_tidy;
	s->parent.free = s3_free;
	return s;
}

int rs_remote_s3_open(struct rs_remote **out, const char *url,
		      const struct rs_remote_options *opts)
{
	struct s3_remote *s = NULL;
	struct rs_http_options hopts;
	const char *slash = NULL;
	rs_config_get_fn get = opts ? opts->config_get : NULL;
	void *payload = opts ? opts->config_payload : NULL;
	size_t blen = 0;
	int err;

	err = split_s3_url(url, &slash, &blen);
	if (err)
		return err;
	s = s3_new();
	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	s->bucket = strndup(url + 5, blen);
	err = set_prefix(s, slash);
	if (err)
		goto out;
	err = parse_part_size(s, get, payload);
	if (err)
		goto out;
	err = parse_stale_uploads(s, get, payload);
	if (err)
		goto out;
	err = rs_aws_config_load(&s->cfg, get, payload);
	if (err)
		goto out;
	err = set_base_url(s);
	if (err)
		goto out;

	memset(&hopts, 0, sizeof(hopts));
	hopts.config_get = get;
	hopts.config_payload = payload;
	hopts.sign = s3_sign;
	hopts.sign_payload = s;
	hopts.server = s->parent.display_url;
	hopts.errors = &rs_s3_http_errors;
	err = rs_http_new(&s->http, &hopts);
out:
	if (err) {
		s3_free(&s->parent);
		return err;
	}
	*out = &s->parent;
	return 0;
}
