/*
 * The shared libcurl layer (see http_transport.h for the contract).
 *
 * Connection reuse: libcurl keeps its connection cache in the easy handle,
 * and curl_easy_reset() keeps that cache. So a pool of easy handles, each
 * used by one thread at a time, gives every concurrent caller its own warm
 * connection without a lock around the transfer itself. A shared handle
 * (CURLSH) adds a DNS cache and TLS session cache across the pool, so a
 * new handle resumes a TLS session instead of a full handshake.
 *
 * Retry policy ("exponential backoff and full jitter", as described in
 * AWS's architecture blog post of that name): before try n (n >= 1) sleep a
 * uniformly random time in [0, min(cap, base * 2^(n-1))]. Full jitter
 * spreads the retries of many parallel workers that failed together (a
 * 503 burst) instead of having them hammer the server in lock-step. A
 * Retry-After header (seconds) raises the sleep to what the server asked
 * for, up to the cap. Only failures that can pass are retried: network
 * errors, 408, 429 and 5xx. Every other 4xx is final: retrying a wrong
 * key only delays the message and can lock an account.
 */
#include "remote/http_transport.h"
#include "remote/xml.h"

#include "results/error.h"
#include "util/hash.h"

#include <curl/curl.h>
#include <openssl/rand.h>

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define RS_HTTP_POOL_MAX 64
#define RS_HTTP_HEADERS_MAX (64 * 1024)
#define RS_HTTP_ERROR_BODY_MAX (16 * 1024)  /* kept for the message */
#define RS_HTTP_ERROR_BODY_READ (64 * 1024) /* read at most, then hang up */
#define RS_HTTP_STALL_WINDOW 30L            /* seconds below the floor */
#define RS_HTTP_DEFAULT_TIMEOUT 60L
#define RS_HTTP_DEFAULT_MIN_SPEED (16L * 1024)
#define RS_HTTP_LIST_MAX_PAGES 100000UL
#define RS_HTTP_BACKOFF_CAP_MS 10000L

struct rs_http {
	pthread_mutex_t lock;
	CURL *pool[RS_HTTP_POOL_MAX];
	size_t npool;

	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

	char *cainfo;
	rs_http_sign_fn sign;
	void *sign_payload;
	unsigned int tries;
	long base_ms;
	long low_speed_time;
	long timeout_s;   /* results.http.timeout */
	long min_speed;   /* results.http.minSpeed, bytes per second */
	char *server;     /* display URL for messages, or NULL */
	const struct rs_http_errors *errors; /* the backend's, or NULL */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_OK;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access,
		       void *userp)
{
	struct rs_http *http = userp;

	(void)h;
	(void)access;
	pthread_mutex_lock(&http->share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *userp)
{
	struct rs_http *http = userp;

	(void)h;
	pthread_mutex_unlock(&http->share_locks[data]);
}

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return def;
	return v;
}

/*
 * A setting from git config `key`, else env `env`, as a number in
 * [lo, hi]; `sizes` allows a k/m/g suffix (git's convention). `*out` keeps
 * its default when neither is set; RS_EUSAGE naming the setting when it
 * is not a number in range.
 */
static int setting_long(const struct rs_http_options *opts, const char *key,
			const char *env, int sizes, long lo, long hi, long *out)
{
	const char *v = NULL, *name = key;
	char *end;
	long long n;

	if (opts && opts->config_get)
		v = opts->config_get(key, opts->config_payload);
	if (!v || !*v) {
		v = getenv(env);
		name = env;
	}
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (sizes && end != v && *end && !end[1]) {
		switch (*end) {
		case 'k': case 'K': n = n > LLONG_MAX / 1024 ? LLONG_MAX : n * 1024; end++; break;
		case 'm': case 'M': n = n > LLONG_MAX / 1048576 ? LLONG_MAX : n * 1048576; end++; break;
		case 'g': case 'G': n = n > LLONG_MAX / 1073741824 ? LLONG_MAX : n * 1073741824; end++; break;
		}
	}
	if (errno || end == v || *end || n < lo || n > hi)
		return rs_error_set(RS_EUSAGE, "%s is '%.40s': it must be a number from %ld to %ld%s",
				    name, v, lo, hi, sizes ? " (k, m, g suffixes allowed)" : "");
	*out = (long)n;
	return 0;
}

static const char *config_first(const struct rs_http_options *opts)
{
	const char *v;

	if (opts && opts->config_get) {
		v = opts->config_get("results.http.cainfo", opts->config_payload);
		if (v && *v)
			return v;
	}
	v = getenv("RESULTS_CA_BUNDLE");
	if (v && *v)
		return v;
	if (opts && opts->config_get) {
		v = opts->config_get("http.sslCAInfo", opts->config_payload);
		if (v && *v)
			return v;
		v = opts->config_get("http.sslcainfo", opts->config_payload);
		if (v && *v)
			return v;
	}
	v = getenv("GIT_SSL_CAINFO");
	if (v && *v)
		return v;
	return NULL;
}

/* Tries, backoff, timeout and speed floor: git config, else the environment. */
static int read_limits(struct rs_http *http, const struct rs_http_options *opts)
{
	http->tries = (unsigned int)env_long("RESULTS_HTTP_RETRIES", 5, 1, 20);
	http->base_ms = env_long("RESULTS_HTTP_RETRY_BASE_MS", 200, 0, 60000);
	http->timeout_s = RS_HTTP_DEFAULT_TIMEOUT;
	http->min_speed = RS_HTTP_DEFAULT_MIN_SPEED;
	if (setting_long(opts, "results.http.timeout", "RESULTS_HTTP_TIMEOUT", 0, 1, 86400,
			 &http->timeout_s))
		return RS_EUSAGE;
	if (setting_long(opts, "results.http.minSpeed", "RESULTS_HTTP_MIN_SPEED", 1, 1,
			 1L << 30, &http->min_speed))
		return RS_EUSAGE;
	http->low_speed_time = env_long("RESULTS_HTTP_LOW_SPEED_TIME",
					http->timeout_s < RS_HTTP_STALL_WINDOW ?
					http->timeout_s : RS_HTTP_STALL_WINDOW, 1, 3600);
	return 0;
}

int rs_http_new(struct rs_http **out, const struct rs_http_options *opts)
{
	struct rs_http *http;
	const char *cainfo;
	int i;

	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK)
		return rs_error_set(RS_EGENERIC, "cannot initialise libcurl: %s",
				    curl_easy_strerror(global_rc));
	http = calloc(1, sizeof(*http));
	if (!http)
		return rs_error_set(RS_EGENERIC, "out of memory");
	pthread_mutex_init(&http->lock, NULL);
	for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&http->share_locks[i], NULL);

	cainfo = config_first(opts);
	if (cainfo) {
		http->cainfo = strdup(cainfo);
		if (!http->cainfo) {
			rs_http_free(http);
			return rs_error_set(RS_EGENERIC, "out of memory");
		}
	}
	if (opts) {
		http->sign = opts->sign;
		http->sign_payload = opts->sign_payload;
		http->errors = opts->errors;
	}
	if (read_limits(http, opts)) {
		rs_http_free(http);
		return RS_EUSAGE;
	}
	if (opts && opts->server) {
		http->server = strdup(opts->server);
		if (!http->server) {
			rs_http_free(http);
			return rs_error_set(RS_EGENERIC, "out of memory");
		}
	}

	http->share = curl_share_init();
	if (http->share) {
		curl_share_setopt(http->share, CURLSHOPT_LOCKFUNC, share_lock);
		curl_share_setopt(http->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
		curl_share_setopt(http->share, CURLSHOPT_USERDATA, http);
		curl_share_setopt(http->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
		curl_share_setopt(http->share, CURLSHOPT_SHARE,
				  CURL_LOCK_DATA_SSL_SESSION);
	}
	*out = http;
	return 0;
}

void rs_http_free(struct rs_http *http)
{
	size_t i;
	int j;

	if (!http)
		return;
	for (i = 0; i < http->npool; i++)
		curl_easy_cleanup(http->pool[i]);
	if (http->share)
		curl_share_cleanup(http->share);
	for (j = 0; j < CURL_LOCK_DATA_LAST; j++)
		pthread_mutex_destroy(&http->share_locks[j]);
	pthread_mutex_destroy(&http->lock);
	free(http->cainfo);
	free(http->server);
	free(http);
}

static CURL *pool_take(struct rs_http *http)
{
	CURL *h = NULL;

	pthread_mutex_lock(&http->lock);
	if (http->npool)
		h = http->pool[--http->npool];
	pthread_mutex_unlock(&http->lock);
	if (!h)
		h = curl_easy_init();
	return h;
}

static void pool_give(struct rs_http *http, CURL *h)
{
	pthread_mutex_lock(&http->lock);
	if (http->npool < RS_HTTP_POOL_MAX) {
		http->pool[http->npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&http->lock);
	if (h)
		curl_easy_cleanup(h);
}

/* ---- requests ---- */

void rs_http_request_init(struct rs_http_request *req, const char *method,
			  const char *url)
{
	memset(req, 0, sizeof(*req));
	req->method = method;
	req->url = url;
}

static void drop_headers_from(struct rs_http_request *req, size_t from)
{
	size_t i;

	for (i = from; i < req->nheaders; i++) {
		free(req->headers[i].name);
		free(req->headers[i].value);
		req->headers[i].name = req->headers[i].value = NULL;
	}
	if (req->nheaders > from)
		req->nheaders = from;
}

void rs_http_request_release(struct rs_http_request *req)
{
	drop_headers_from(req, 0);
}

int rs_http_request_set_header(struct rs_http_request *req, const char *name,
			       const char *value)
{
	char *n, *v;
	size_t i;

	if (strpbrk(name, "\r\n:") || !*name || strpbrk(value, "\r\n"))
		return rs_error_set(RS_EUSAGE, "invalid HTTP header '%s'", name);
	v = strdup(value);
	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < req->nheaders; i++) {
		if (!strcasecmp(req->headers[i].name, name)) {
			free(req->headers[i].value);
			req->headers[i].value = v;
			return 0;
		}
	}
	if (req->nheaders == RS_HTTP_MAX_HEADERS) {
		free(v);
		return rs_error_set(RS_EUSAGE, "too many HTTP headers");
	}
	n = strdup(name);
	if (!n) {
		free(v);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	req->headers[req->nheaders].name = n;
	req->headers[req->nheaders].value = v;
	req->nheaders++;
	return 0;
}

void rs_http_request_unset_header(struct rs_http_request *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++) {
		if (strcasecmp(req->headers[i].name, name))
			continue;
		free(req->headers[i].name);
		free(req->headers[i].value);
		memmove(&req->headers[i], &req->headers[i + 1],
			(req->nheaders - i - 1) * sizeof(req->headers[0]));
		req->nheaders--;
		req->headers[req->nheaders].name = NULL;
		req->headers[req->nheaders].value = NULL;
		return;
	}
}

const char *rs_http_request_header(const struct rs_http_request *req,
				   const char *name)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (!strcasecmp(req->headers[i].name, name))
			return req->headers[i].value;
	return NULL;
}

void rs_http_request_set_body_mem(struct rs_http_request *req, const void *p,
				  size_t n)
{
	req->body_kind = RS_HTTP_BODY_MEM;
	req->body = p;
	req->body_path = NULL;
	req->body_stream = NULL;
	req->body_fixed = 0;
	req->body_off = 0;
	req->body_len = n;
	req->payload_sha256[0] = '\0';
}

void rs_http_request_set_body_file(struct rs_http_request *req,
				   const char *path, uint64_t off, uint64_t len)
{
	req->body_kind = RS_HTTP_BODY_FILE;
	req->body = NULL;
	req->body_stream = NULL;
	req->body_fixed = 0;
	req->body_path = path;
	req->body_off = off;
	req->body_len = len;
	req->payload_sha256[0] = '\0';
}

void rs_http_request_set_body_stream(struct rs_http_request *req,
				     struct rs_growing *g)
{
	req->body_kind = RS_HTTP_BODY_STREAM;
	req->body = NULL;
	req->body_path = rs_growing_path(g);
	req->body_stream = g;
	req->body_fixed = 0;
	req->body_off = 0;
	req->body_len = 0;
	req->payload_sha256[0] = '\0';
}

void rs_http_request_set_body_stream_range(struct rs_http_request *req,
					   struct rs_growing *g, uint64_t off,
					   uint64_t len)
{
	rs_http_request_set_body_stream(req, g);
	req->body_fixed = 1;
	req->body_off = off;
	req->body_len = len;
}

int rs_http_request_payload_sha256(struct rs_http_request *req,
				   const char **hex_out)
{
	struct rs_id id;
	unsigned int len = 0;
	int err;

	if (req->payload_sha256[0]) {
		*hex_out = req->payload_sha256;
		return 0;
	}
	if (req->body_kind == RS_HTTP_BODY_STREAM)
		return rs_error_set(RS_EUSAGE, "no payload hash for a body still being written");
	if (req->body_kind != RS_HTTP_BODY_FILE) {
		rs_sha256(&id, req->body_kind == RS_HTTP_BODY_MEM ? req->body : "",
			  req->body_kind == RS_HTTP_BODY_MEM ? req->body_len : 0);
	} else {
		unsigned char md[64];

		err = rs_digest_file("SHA256", req->body_path, req->body_off, req->body_len, md, &len);
		if (err)
			return err;
		memcpy(id.id, md, sizeof(id.id));
	}
	rs_id_to_hex(req->payload_sha256, &id);
	*hex_out = req->payload_sha256;
	return 0;
}

/* ---- responses ---- */

void rs_http_response_init(struct rs_http_response *resp)
{
	memset(resp, 0, sizeof(*resp));
	rs_buf_init(&resp->headers, RS_HTTP_HEADERS_MAX);
	rs_buf_init(&resp->error_body, RS_HTTP_ERROR_BODY_MAX);
}

void rs_http_response_release(struct rs_http_response *resp)
{
	rs_buf_release(&resp->headers);
	rs_buf_release(&resp->error_body);
}

int rs_http_response_header(const struct rs_http_response *resp,
			    const char *name, struct rs_buf *out)
{
	const char *p = rs_buf_cstr(&resp->headers);
	size_t nlen = strlen(name);

	rs_buf_clear(out);
	while (*p) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p);

		if ((size_t)(end - p) > nlen && !strncasecmp(p, name, nlen) &&
		    p[nlen] == ':') {
			const char *v = p + nlen + 1;

			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			while (end > v && isspace((unsigned char)end[-1]))
				end--;
			return rs_buf_put(out, v, (size_t)(end - v));
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	return RS_ENOTFOUND;
}

/* ---- helpers ---- */

int rs_http_redact_url(struct rs_buf *out, const char *url)
{
	const char *scheme_end = strstr(url, "://");
	const char *auth, *path_start, *at, *q;
	int err;

	if (!scheme_end) {
		q = strpbrk(url, "?#");
		return rs_buf_put(out, url, q ? (size_t)(q - url) : strlen(url));
	}
	auth = scheme_end + 3;
	path_start = auth + strcspn(auth, "/?#");
	err = rs_buf_put(out, url, (size_t)(auth - url));
	if (err)
		return err;
	/* Userinfo ends at the last '@' before the path. */
	at = NULL;
	for (q = auth; q < path_start; q++)
		if (*q == '@')
			at = q;
	if (at)
		auth = at + 1;
	err = rs_buf_put(out, auth, (size_t)(path_start - auth));
	if (err)
		return err;
	q = path_start + strcspn(path_start, "?#");
	return rs_buf_put(out, path_start, (size_t)(q - path_start));
}

const char *rs_http_status_text(long status)
{
	switch (status) {
	case 400: return "bad request";
	case 401: return "authentication required or refused";
	case 403: return "access denied";
	case 404: return "not found";
	case 405: return "method not allowed";
	case 408: return "request timeout";
	case 409: return "conflict";
	case 410: return "gone";
	case 411: return "length required";
	case 412: return "precondition failed";
	case 413: return "request too large for the server";
	case 416: return "range not satisfiable";
	case 429: return "too many requests";
	case 500: return "internal server error";
	case 501: return "not implemented by the server";
	case 502: return "bad gateway";
	case 503: return "service unavailable";
	case 504: return "gateway timeout";
	case 507: return "server out of storage";
	}
	if (status >= 200 && status < 300)
		return "ok";
	if (status >= 300 && status < 400)
		return "redirect (not followed)";
	if (status >= 500)
		return "server error";
	return "client error";
}

/* ---- one transfer ---- */

struct transfer {
	CURL *h;
	struct rs_http_request *req;
	struct rs_http_response *resp;
	const char *server; /* for messages */
	const char *what;   /* for messages */
	const char *where;  /* the URL without credentials, for messages */
	rs_http_sign_fn sign;
	void *sign_payload;
	unsigned int tries; /* attempts at most */
	double t0;          /* when the first attempt started */
	uint64_t size;      /* what the deadline allows for (transfer_size) */
	long deadline_ms;   /* for all attempts; 0: none */
	size_t body_start;  /* response_body's length before the request */
	long floor;         /* the speed floor of this request, bytes/s */
	int err;            /* an error raised inside a callback */
	/* download */
	int started;        /* the first body bytes of this attempt were seen */
	int skip_range;     /* a 200 that ignored Range: slice it here */
	int done_early;     /* hung up on purpose: the wanted slice is here */
	int error_cut;      /* hung up on an oversized error body */
	uint64_t got;       /* body bytes of this attempt, before slicing */
	uint64_t kept;      /* of which appended to response_body */
	uint64_t error_got; /* error body bytes of this attempt */
	/* upload */
	int fd;
	uint64_t pos;
};

static int status_is_success(CURL *h)
{
	long status = 0;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	return status >= 200 && status < 300;
}

static const char *human_size(char *buf, size_t n, uint64_t v)
{
	if (v >= (1u << 20) && v % (1u << 20) == 0)
		snprintf(buf, n, "%llu MiB", (unsigned long long)(v >> 20));
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, n, "%llu KiB", (unsigned long long)(v >> 10));
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)v);
	return buf;
}

/*
 * The first bytes of a 2xx body: decide whether a Range was ignored, and
 * refuse a Content-Length larger than what was asked for before reading
 * any of it.
 */
static int body_start(struct transfer *t)
{
	struct rs_http_request *req = t->req;
	curl_off_t cl = -1;
	long status = 0;
	uint64_t limit;

	t->started = 1;
	if (!req->range_set)
		return 0;
	curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(t->h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	t->skip_range = status == 200 && (req->range_off || req->range_len != UINT64_MAX);
	if (t->skip_range || cl < 0)
		return 0; /* the whole object, sliced as it comes; or no length given */
	limit = req->range_len;
	if (limit == UINT64_MAX)
		limit = req->response_body ? req->response_body->max : 0;
	if ((uint64_t)cl > limit)
		return rs_error_set(RS_ECORRUPT, "server '%s' announced %llu bytes (Content-Length) "
				    "for '%s', more than the %llu %s", t->server,
				    (unsigned long long)cl, t->what, (unsigned long long)limit,
				    req->range_len == UINT64_MAX ? "bytes allowed" : "bytes asked for");
	return 0;
}

/* Keep what fits of an error body for the message; drop the rest. */
static size_t on_error_body(struct transfer *t, const char *p, size_t n)
{
	struct rs_buf *eb = &t->resp->error_body;
	size_t space = eb->max - 1 > eb->len ? eb->max - 1 - eb->len : 0;

	/*
	 * Best effort: the error body only adds detail to the message about
	 * the status, so a failed copy (out of memory) leaves it shorter
	 * rather than failing the transfer for it.
	 */
	if (space && rs_buf_put(eb, p, n < space ? n : space))
		rs_error_clear();
	t->error_got += n;
	if (t->error_got > RS_HTTP_ERROR_BODY_READ) {
		/* An endless error page: what we have is enough to explain it. */
		t->error_cut = 1;
		return 0;
	}
	return n;
}

/*
 * curl's write callback. Not split further: slicing a 200 to the range
 * asked, the cap and the early hang-up share keep_from/keep and the
 * callback's return protocol.
 */
static size_t on_write(char *p, size_t size, size_t nmemb, void *userp)
{
	struct transfer *t = userp;
	struct rs_http_request *req = t->req;
	size_t n = size * nmemb;
	uint64_t keep_from = 0, keep, room;
	int err;

	if (!status_is_success(t->h))
		return on_error_body(t, p, n);
	if (!t->started) {
		t->err = body_start(t);
		if (t->err)
			return 0;
	}
	keep = n;
	if (t->skip_range) {
		/* A 200 answer to a ranged request: keep [range_off, range_off + range_len). */
		if (t->got + n <= req->range_off) {
			t->got += n;
			return n;
		}
		if (t->got < req->range_off)
			keep_from = req->range_off - t->got;
		keep = n - keep_from;
	}
	t->got += n;
	if (req->range_set && req->range_len != UINT64_MAX) {
		room = req->range_len - t->kept;
		if (keep > room) {
			if (t->skip_range) {
				keep = room; /* the rest of the object is not wanted */
				t->done_early = 1;
			} else {
				t->err = rs_error_set(RS_ECORRUPT, "server '%s' sent more than the %llu "
						      "bytes asked for '%s'", t->server,
						      (unsigned long long)req->range_len, t->what);
				return 0;
			}
		}
	}
	if (!req->response_body)
		return t->done_early ? 0 : n;
	err = rs_buf_put(req->response_body, p + keep_from, (size_t)keep);
	if (err == RS_ETOOBIG) {
		char hs[32];

		t->err = rs_error_set(req->range_set ? RS_ECORRUPT : RS_ETOOBIG,
				      "server '%s' sent more than the %s allowed for '%s'",
				      t->server, human_size(hs, sizeof(hs), req->response_body->max),
				      t->what);
		return 0;
	}
	if (err) {
		t->err = err; /* out of memory, as rs_buf_put says */
		return 0;
	}
	t->kept += keep;
	if (t->done_early)
		return 0; /* hang up: the rest of the object is not wanted */
	if (req->range_set && req->range_len != UINT64_MAX && t->kept == req->range_len &&
	    t->skip_range) {
		t->done_early = 1;
		return 0;
	}
	return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *userp)
{
	struct transfer *t = userp;
	size_t n = size * nmemb;

	/* A new status line starts a new response (after 100 Continue). */
	if (n >= 5 && !memcmp(p, "HTTP/", 5))
		rs_buf_clear(&t->resp->headers);
	/* Headers past the cap are ignored: only a few are ever looked up. */
	if (t->resp->headers.len + n >= RS_HTTP_HEADERS_MAX)
		return n;
	/* Out of memory: stop, rather than go on with a header missing. */
	t->err = rs_buf_put(&t->resp->headers, p, n);
	if (t->err)
		return 0;
	return n;
}

/*
 * A growing body: wait until there is something past t->pos, or the end.
 * Sets *left to what can be read now (0: the body is complete).
 */
static int stream_wait(struct transfer *t, uint64_t *left)
{
	struct rs_http_request *req = t->req;
	uint64_t avail, at = req->body_off + t->pos;
	int sealed, err;

	*left = 0;
	if (req->body_fixed && t->pos >= req->body_len)
		return 0;
	err = rs_growing_wait(req->body_stream, at + 1, &avail, &sealed);
	if (err)
		return err;
	if (!req->body_fixed) {
		if (sealed)
			req->body_len = avail;
	} else if (avail > req->body_off + req->body_len) {
		avail = req->body_off + req->body_len;
	} else if (avail <= at) {
		/* Sealed short of the length this request declared. */
		return rs_error_set(RS_ECORRUPT, "'%s' ended at %llu bytes, before the %llu this "
				    "request declared", req->body_path, (unsigned long long)avail,
				    (unsigned long long)(req->body_off + req->body_len));
	}
	*left = avail > at ? avail - at : 0;
	return 0;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *userp)
{
	struct transfer *t = userp;
	struct rs_http_request *req = t->req;
	size_t room = size * nmemb;
	uint64_t left = req->body_len > t->pos ? req->body_len - t->pos : 0;
	size_t n;
	ssize_t got;

	if (req->body_kind == RS_HTTP_BODY_STREAM) {
		t->err = stream_wait(t, &left);
		if (t->err)
			return CURL_READFUNC_ABORT;
	}
	n = left < room ? (size_t)left : room;
	if (!n)
		return 0;
	if (req->body_kind == RS_HTTP_BODY_MEM) {
		memcpy(p, (const char *)req->body + t->pos, n);
		t->pos += n;
		return n;
	}
	do {
		got = pread(t->fd, p, n, (off_t)(req->body_off + t->pos));
	} while (got < 0 && errno == EINTR);
	if (got <= 0) {
		t->err = got < 0 ?
			rs_error_errno(RS_EGENERIC, "cannot read '%s'", req->body_path) :
			rs_error_set(RS_ECORRUPT, "'%s' is shorter than expected",
				     req->body_path);
		return CURL_READFUNC_ABORT;
	}
	t->pos += (uint64_t)got;
	return (size_t)got;
}

static int on_seek(void *userp, curl_off_t offset, int origin)
{
	struct transfer *t = userp;

	if (origin != SEEK_SET || offset < 0 ||
	    ((uint64_t)offset > t->req->body_len &&
	     !(t->req->body_kind == RS_HTTP_BODY_STREAM && (uint64_t)offset <= t->pos)))
		return CURL_SEEKFUNC_CANTSEEK;
	t->pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static int curl_is_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
		return 1;
	default:
		return 0;
	}
}

static int status_is_transient(long status)
{
	return status == 408 || status == 429 || status >= 500;
}

/* Copy the server's error code: the backend's code header, else an XML <Code>. */
static void find_error_code(const struct rs_http *http, struct rs_http_response *resp)
{
	const char *header = http->errors ? http->errors->code_header : NULL;
	struct rs_buf v = RS_BUF_INIT;
	const char *src;
	size_t i, o = 0;

	resp->error_code[0] = '\0';
	v.max = 256;
	if ((header && !rs_http_response_header(resp, header, &v)) ||
	    rs_xml_first_text(rs_buf_cstr(&resp->error_body), resp->error_body.len, "Code",
			      &v) == 1) {
		src = rs_buf_cstr(&v);
		for (i = 0; i < v.len && o < sizeof(resp->error_code) - 1; i++) {
			unsigned char ch = (unsigned char)src[i];

			if (isalnum(ch) || ch == '.' || ch == '_' || ch == '-')
				resp->error_code[o++] = (char)ch;
		}
		resp->error_code[o] = '\0';
	}
	rs_buf_release(&v);
}

/* The backend's rule for this answer, or NULL. */
static const struct rs_http_error_rule *find_rule(const struct rs_http_errors *errors,
						  const struct rs_http_response *resp)
{
	const char *body = rs_buf_cstr(&resp->error_body);
	size_t i;

	for (i = 0; errors && i < errors->nrules; i++) {
		const struct rs_http_error_rule *r = &errors->rules[i];

		if ((r->code && !strcmp(resp->error_code, r->code)) ||
		    (r->phrase && strstr(body, r->phrase)))
			return r;
	}
	return NULL;
}

/* Map a final non-2xx answer to a code and a message that says what to do. */
static int status_error(const struct rs_http *http, const char *method, const char *where,
			long status, const struct rs_http_response *resp, unsigned int tries)
{
	const struct rs_http_error_rule *rule = find_rule(http->errors, resp);
	const char *code = resp->error_code;
	const char *text = rs_http_status_text(status);
	char codepart[96] = "";

	if (*code)
		snprintf(codepart, sizeof(codepart), " (%s)", code);
	if (rule)
		return rs_error_set(rule->err, "%s %s: %ld%s%s%s: %s", method, where, status,
				    rule->say & RS_HTTP_SAY_STATUS_TEXT ? " " : "",
				    rule->say & RS_HTTP_SAY_STATUS_TEXT ? text : "",
				    rule->say & RS_HTTP_SAY_CODE ? codepart : "", rule->detail);
	switch (status) {
	case 401:
		return rs_error_set(RS_EAUTH, "%s %s: 401 %s%s - check the credentials",
				    method, where, text, codepart);
	case 403:
		return rs_error_set(RS_EAUTH, "%s %s: 403 %s%s - check the key and "
				    "its permissions", method, where, text, codepart);
	case 404:
	case 410:
		return rs_error_set(RS_ENOTFOUND, "%s %s: %ld %s%s", method, where,
				    status, text, codepart);
	case 412:
		return rs_error_set(RS_EEXISTS, "%s %s: 412 %s%s", method, where,
				    text, codepart);
	case 416:
		return rs_error_set(RS_ECORRUPT, "%s %s: 416 %s: the object is "
				    "shorter than asked", method, where, text);
	}
	if (status_is_transient(status))
		return rs_error_set(RS_ERETRY, "%s %s: %ld %s%s (gave up after %u "
				    "tr%s)", method, where, status, text, codepart,
				    tries, tries == 1 ? "y" : "ies");
	return rs_error_set(RS_EGENERIC, "%s %s: %ld %s%s", method, where, status,
			    text, codepart);
}

static int curl_error(const char *method, const char *where, CURLcode rc,
		      const char *detail, unsigned int tries)
{
	const char *d = *detail ? detail : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
		return rs_error_set(RS_EUSAGE, "%s %s: TLS certificate verification "
				    "failed: %s - if the server uses a private CA, "
				    "set results.http.cainfo or RESULTS_CA_BUNDLE",
				    method, where, d);
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
		return rs_error_set(RS_EUSAGE, "%s %s: %s", method, where, d);
	default:
		break;
	}
	if (curl_is_transient(rc))
		return rs_error_set(RS_ERETRY, "%s %s: %s (gave up after %u tr%s)",
				    method, where, d, tries, tries == 1 ? "y" : "ies");
	return rs_error_set(RS_EGENERIC, "%s %s: %s", method, where, d);
}

static uint32_t random_u32(void)
{
	uint32_t r;

	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)rand();
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * RESULTS_HTTP_TRACE=FILE: append one line per request (start and end
 * times, method, URL without credentials or query, status, tries, bytes
 * sent), to see where a slow push or fetch spends its time. One write(2)
 * per line on an O_APPEND file, so threads and processes do not mix lines.
 */
static void trace_request(const struct rs_http_request *req, const char *where,
			  const struct rs_http_response *resp, double t0, uint64_t sent)
{
	const char *path = getenv("RESULTS_HTTP_TRACE");
	char line[1024];
	int fd, n;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof(line), "%.3f %.3f %s %s %ld tries=%u up=%llu\n", t0, now_s(),
		     req->method, where, resp->status, resp->attempts, (unsigned long long)sent);
	if (n <= 0)
		return;
	if (n >= (int)sizeof(line))
		n = sizeof(line) - 1;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0)
		line[0] = '\0'; /* a trace is best effort */
	close(fd);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long backoff_ms(const struct rs_http *http, unsigned int attempt,
		       const struct rs_http_response *resp)
{
	long ceiling = http->base_ms;
	long ms;
	struct rs_buf v = RS_BUF_INIT;
	unsigned int i;

	for (i = 1; i < attempt && ceiling < RS_HTTP_BACKOFF_CAP_MS; i++)
		ceiling *= 2;
	if (ceiling > RS_HTTP_BACKOFF_CAP_MS)
		ceiling = RS_HTTP_BACKOFF_CAP_MS;
	ms = ceiling ? (long)(random_u32() % (uint32_t)(ceiling + 1)) : 0;

	v.max = 64;
	if (resp->status && !rs_http_response_header(resp, "Retry-After", &v)) {
		char *end;
		long secs = strtol(rs_buf_cstr(&v), &end, 10);

		if (end != rs_buf_cstr(&v) && !*end && secs > 0) {
			long want = secs > RS_HTTP_BACKOFF_CAP_MS / 1000 ?
				RS_HTTP_BACKOFF_CAP_MS : secs * 1000;
			if (want > ms)
				ms = want;
		}
	}
	rs_buf_release(&v);
	return ms;
}

static int build_headers(struct curl_slist **out, const struct rs_http_request *req)
{
	struct curl_slist *list = NULL, *n;
	struct rs_buf line = RS_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < req->nheaders; i++) {
		rs_buf_clear(&line);
		/* "Name;" is curl's way to send a header with an empty value. */
		if (*req->headers[i].value)
			err = rs_buf_printf(&line, "%s: %s", req->headers[i].name,
					    req->headers[i].value);
		else
			err = rs_buf_printf(&line, "%s;", req->headers[i].name);
		if (err)
			goto out;
		n = curl_slist_append(list, rs_buf_cstr(&line));
		if (!n) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		list = n;
	}
	/*
	 * No "Expect: 100-continue": it costs a round trip per upload (or a
	 * one-second stall against servers that ignore it); a refused upload
	 * is rare and is caught by the status anyway.
	 */
	if (!rs_http_request_header(req, "Expect")) {
		n = curl_slist_append(list, "Expect:");
		if (!n) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		list = n;
	}
out:
	rs_buf_release(&line);
	if (err) {
		curl_slist_free_all(list);
		return err;
	}
	*out = list;
	return 0;
}

static void setup_handle(struct rs_http *http, struct transfer *t,
			 struct curl_slist *headers, char *errbuf, long timeout_ms)
{
	CURL *h = t->h;
	struct rs_http_request *req = t->req;

	curl_easy_setopt(h, CURLOPT_URL, req->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	/*
	 * Redirects are not followed: a signature covers the URL it was made
	 * for, and following one could hand credentials to another host.
	 */
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, http->timeout_s < 30 ? http->timeout_s : 30L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, t->floor);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, http->low_speed_time);
	if (timeout_ms > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	if (http->cainfo)
		curl_easy_setopt(h, CURLOPT_CAINFO, http->cainfo);
	if (http->share)
		curl_easy_setopt(h, CURLOPT_SHARE, http->share);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, t);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, t);
	if (req->username) {
		curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h, CURLOPT_USERNAME, req->username);
		curl_easy_setopt(h, CURLOPT_PASSWORD, req->password ? req->password : "");
	}

	if (!strcmp(req->method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (req->body_kind != RS_HTTP_BODY_NONE) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		/* -1 for a growing body: libcurl then sends it chunked. */
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
				 req->body_kind == RS_HTTP_BODY_STREAM && !req->body_fixed ?
				 (curl_off_t)-1 : (curl_off_t)req->body_len);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, t);
		curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(h, CURLOPT_SEEKDATA, t);
		if (strcmp(req->method, "PUT"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	} else if (strcmp(req->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	}
}

/*
 * The bytes a request moves, for its deadline: the body sent plus the
 * slice asked for, else the cap of the buffer the answer goes to (a small
 * answer when there is none). 0 for a body still being written.
 */
static uint64_t transfer_size(const struct rs_http_request *req)
{
	uint64_t sent = req->body_kind == RS_HTTP_BODY_NONE ? 0 : req->body_len;

	if (req->body_kind == RS_HTTP_BODY_STREAM)
		return 0;
	sent += req->deadline_extra;
	if (req->range_set && req->range_len != UINT64_MAX)
		return sent + req->range_len;
	return sent + (req->response_body ? req->response_body->max : 0);
}

/* The message for a transfer cut by a deadline or the speed floor. */
static int timeout_error(const struct rs_http *http, struct transfer *t,
			 const char *errbuf, double elapsed, long deadline_ms,
			 uint64_t size)
{
	curl_off_t down = 0, up = 0;
	char hs[32];
	int is_get = t->req->body_kind == RS_HTTP_BODY_NONE;

	curl_easy_getinfo(t->h, CURLINFO_SIZE_DOWNLOAD_T, &down);
	curl_easy_getinfo(t->h, CURLINFO_SIZE_UPLOAD_T, &up);
	if (!strncmp(errbuf, "Operation too slow", 18) || deadline_ms <= 0) {
		if (t->floor <= 1)
			return rs_error_set(RS_ERETRY, "server '%s' %s %llu bytes in %.0f s for '%s', "
					    "then nothing for %ld s; check the server%s", t->server,
					    is_get ? "sent" : "took",
					    (unsigned long long)(is_get ? down : up), elapsed, t->what,
					    http->low_speed_time,
					    /* the wait is the timeout's when that is the shorter */
					    http->low_speed_time >= http->timeout_s
					    ? " or raise results.http.timeout" : "");
		return rs_error_set(RS_ERETRY, "server '%s' %s %llu bytes in %.0f s for '%s' "
				    "(below the %s/s floor); check the server or, on a slow link, "
				    "lower results.http.minSpeed", t->server, is_get ? "sent" : "took",
				    (unsigned long long)(is_get ? down : up), elapsed, t->what,
				    human_size(hs, sizeof(hs), (uint64_t)t->floor));
	}
	/* A connect cut short by the request's deadline (a later try's) is the
	   deadline's doing: said below, with the setting that sets it. */
	if ((!strncmp(errbuf, "Connection timed out", 20) ||
	     !strncmp(errbuf, "Failed to connect", 17)) &&
	    (deadline_ms <= 0 || elapsed * 1000 < deadline_ms))
		return rs_error_set(RS_ERETRY, "server '%s' did not accept a connection within "
				    "%ld s for '%s'; check the server and the network",
				    t->server, http->timeout_s < 30 ? http->timeout_s : 30L, t->what);
	return rs_error_set(RS_ERETRY, "server '%s' did not finish '%s' within its deadline "
			    "of %.0f s (%ld s + %llu bytes at %s/s; %llu bytes %s); check the "
			    "server or raise results.http.timeout", t->server, t->what,
			    deadline_ms / 1000.0, http->timeout_s, (unsigned long long)size,
			    human_size(hs, sizeof(hs), (uint64_t)http->min_speed),
			    (unsigned long long)(is_get ? down : up), is_get ? "received" : "sent");
}

/*
 * The speed floor: minSpeed for a transfer big enough to measure it over
 * the window. A small request (a HEAD, a DELETE, completing an upload) may
 * wait for the server without a byte moving; only a dead connection
 * (under 1 byte/s) is cut, and its deadline bounds it. A body we are
 * still writing goes at our own pace: 1 byte/s too, and no deadline.
 */
static void set_limits(const struct rs_http *http, struct transfer *t)
{
	const struct rs_http_request *req = t->req;

	t->floor = req->body_kind == RS_HTTP_BODY_STREAM ||
		   t->size < (uint64_t)http->min_speed * (uint64_t)http->low_speed_time ?
		   1L : http->min_speed;
	if (req->body_kind != RS_HTTP_BODY_STREAM) {
		/* timeout + size / minSpeed, in ms, saturating. */
		uint64_t secs = t->size / (uint64_t)http->min_speed, ms;

		ms = secs > 1000000000 ? UINT64_MAX :
			(uint64_t)http->timeout_s * 1000 + secs * 1000 +
			t->size % (uint64_t)http->min_speed * 1000 / (uint64_t)http->min_speed;
		t->deadline_ms = ms > (uint64_t)LONG_MAX / 2 ? LONG_MAX / 2 : (long)ms;
	}
}

/* The remote contract: a read to the end needs a capped buffer. */
static int check_capped(const struct transfer *t)
{
	const struct rs_http_request *req = t->req;

	if (req->range_set && req->range_len == UINT64_MAX &&
	    (!req->response_body || !req->response_body->max)) {
		assert(!"a get to the end needs out->max");
		return rs_error_set(RS_EUSAGE, "internal: reading '%s' to the end needs a "
				    "capped buffer", t->what);
	}
	return 0;
}

/* What stays the same over the attempts of one request. */
static void transfer_init(struct transfer *t, const struct rs_http *http,
			  struct rs_http_request *req, struct rs_http_response *resp)
{
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->req = req;
	t->resp = resp;
	t->body_start = req->response_body ? req->response_body->len : 0;
	t->sign = req->sign ? req->sign : http->sign;
	t->sign_payload = req->sign ? req->sign_payload : http->sign_payload;
	t->tries = req->max_tries ? req->max_tries : http->tries;
	t->t0 = now_s();
	t->size = transfer_size(req);
}

/* The body's file, if it has one, and a curl handle from the pool. */
static int transfer_open(struct rs_http *http, struct transfer *t)
{
	const struct rs_http_request *req = t->req;

	if (req->body_kind == RS_HTTP_BODY_FILE || req->body_kind == RS_HTTP_BODY_STREAM) {
		t->fd = open(req->body_path, O_RDONLY | O_CLOEXEC);
		if (t->fd < 0)
			return rs_error_errno(RS_EGENERIC, "cannot open '%s'", req->body_path);
	}
	t->h = pool_take(http);
	if (!t->h)
		return rs_error_set(RS_EGENERIC, "cannot create a libcurl handle");
	return 0;
}

/* Drop what an attempt appended to the caller's response body. */
static void truncate_body(struct rs_http_request *req, size_t body_start)
{
	if (!req->response_body)
		return;
	req->response_body->len = body_start;
	if (req->response_body->ptr)
		req->response_body->ptr[body_start] = '\0';
}

/* Forget what the last attempt got. */
static void attempt_reset(struct transfer *t, unsigned int attempt, char *errbuf)
{
	struct rs_http_response *resp = t->resp;

	resp->attempts = attempt;
	resp->status = 0;
	resp->error_code[0] = '\0';
	rs_buf_clear(&resp->headers);
	rs_buf_clear(&resp->error_body);
	truncate_body(t->req, t->body_start);
	t->err = 0;
	t->pos = 0;
	t->started = t->skip_range = t->done_early = t->error_cut = 0;
	t->got = t->kept = t->error_got = 0;
	errbuf[0] = '\0';
}

/*
 * The time this attempt has (*left_ms, unchanged without a deadline); an
 * error when the backoff ate the rest: the last failure (last_rc) stands.
 */
static int attempt_time(const struct rs_http *http, struct transfer *t, CURLcode last_rc,
			const char *errbuf, long *left_ms)
{
	if (!t->deadline_ms)
		return 0;
	*left_ms = t->deadline_ms - (long)((now_s() - t->t0) * 1000);
	if (*left_ms > 0)
		return 0;
	if (last_rc == CURLE_OPERATION_TIMEDOUT)
		return timeout_error(http, t, errbuf, now_s() - t->t0, t->deadline_ms, t->size);
	return rs_error_set(RS_ERETRY, "server '%s' did not finish '%s' within "
			    "its deadline of %ld s; check the server or raise "
			    "results.http.timeout", t->server, t->what, t->deadline_ms / 1000);
}

/* Sign the request afresh, set the handle up and send it: curl's code in *rc. */
static int attempt_send(struct rs_http *http, struct transfer *t, struct curl_slist **headers,
			char *errbuf, long left_ms, CURLcode *rc)
{
	struct rs_http_request *req = t->req;
	int err;

	drop_headers_from(req, req->ncaller_headers);
	if (t->sign) {
		err = t->sign(req, t->sign_payload);
		if (err)
			return err;
	}
	curl_slist_free_all(*headers);
	*headers = NULL;
	err = build_headers(headers, req);
	if (err)
		return err;
	curl_easy_reset(t->h);
	setup_handle(http, t, *headers, errbuf, left_ms);
	*rc = curl_easy_perform(t->h);
	if (*rc == CURLE_WRITE_ERROR && !t->err && (t->done_early || t->error_cut))
		*rc = CURLE_OK; /* we hung up on purpose */
	/* Our own callback failed (response too large, file read), or 0. */
	return t->err;
}

/*
 * Whether this attempt's outcome is final: 1 with *err (0: a 2xx answer,
 * else the failure, said), or 0 to try again.
 */
static int attempt_final(const struct rs_http *http, struct transfer *t, CURLcode rc,
			 unsigned int attempt, const char *errbuf, int *err)
{
	struct rs_http_response *resp = t->resp;
	double elapsed = now_s() - t->t0;

	if (rc == CURLE_OK) {
		curl_easy_getinfo(t->h, CURLINFO_RESPONSE_CODE, &resp->status);
		if (resp->status >= 200 && resp->status < 300) {
			*err = 0;
			return 1;
		}
		find_error_code(http, resp);
		if (status_is_transient(resp->status) && attempt < t->tries)
			return 0;
		*err = status_error(http, t->req->method, t->where, resp->status, resp, attempt);
		return 1;
	}
	if (rc == CURLE_OPERATION_TIMEDOUT &&
	    (attempt >= t->tries || (t->deadline_ms && elapsed * 1000 >= t->deadline_ms))) {
		*err = timeout_error(http, t, errbuf, elapsed, t->deadline_ms, t->size);
		return 1;
	}
	if (curl_is_transient(rc) && attempt < t->tries)
		return 0;
	*err = curl_error(t->req->method, t->where, rc, errbuf, attempt);
	return 1;
}

/*
 * The attempts of transfer `t`, until one is final: a response, or an
 * error not worth another try (attempt_final), with a backoff between.
 */
static int transfer_run(struct rs_http *http, struct transfer *t, struct curl_slist **headers,
			char *errbuf)
{
	CURLcode rc = CURLE_OK;
	unsigned int attempt;
	long left_ms = 0;
	int err = 0;

	for (attempt = 1;; attempt++) {
		attempt_reset(t, attempt, errbuf);
		err = attempt_time(http, t, rc, errbuf, &left_ms);
		if (err)
			return err;
		err = attempt_send(http, t, headers, errbuf, left_ms, &rc);
		if (err)
			return err;
		if (attempt_final(http, t, rc, attempt, errbuf, &err))
			return err;
		sleep_ms(backoff_ms(http, attempt, t->resp));
	}
}

int rs_http_perform(struct rs_http *http, struct rs_http_request *req,
		    struct rs_http_response *resp)
{
	struct rs_http_response local;
	struct rs_buf where = RS_BUF_INIT;
	struct curl_slist *headers = NULL;
	struct transfer t;
	char errbuf[CURL_ERROR_SIZE];
	int err = 0;

	if (!resp) {
		rs_http_response_init(&local);
		resp = &local;
	}
	transfer_init(&t, http, req, resp);
	resp->status = 0;
	resp->attempts = 0;
	req->ncaller_headers = req->nheaders;

	err = rs_http_redact_url(&where, req->url);
	if (err)
		goto out;
	t.where = rs_buf_cstr(&where);
	t.server = http->server ? http->server : t.where;
	t.what = req->what ? req->what : t.where;
	err = check_capped(&t);
	if (err)
		goto out;
	set_limits(http, &t);
	err = transfer_open(http, &t);
	if (err)
		goto out;
	err = transfer_run(http, &t, &headers, errbuf);
out:
	trace_request(req, rs_buf_cstr(&where), resp, t.t0, t.pos);
	/* Drop the signer's headers: they hold secrets and a stale date. */
	drop_headers_from(req, req->ncaller_headers);
	if (t.h) {
		/* Forget the header list and credentials before pooling. */
		curl_easy_reset(t.h);
		pool_give(http, t.h);
	}
	curl_slist_free_all(headers);
	if (t.fd >= 0)
		close(t.fd);
	if (err)
		truncate_body(req, t.body_start);
	rs_buf_release(&where);
	if (resp == &local)
		rs_http_response_release(&local);
	return err;
}

/* Ask for [off, off + len) with a Range header, unless that is all of it. */
static int set_range(struct rs_http_request *req, uint64_t off, uint64_t len)
{
	char range[64];

	if (len != UINT64_MAX && off > UINT64_MAX - len)
		return rs_error_set(RS_EUSAGE, "range past 2^64");
	req->range_set = 1;
	req->range_off = off;
	req->range_len = len;
	if (!off && len == UINT64_MAX)
		return 0;
	if (len == UINT64_MAX)
		snprintf(range, sizeof(range), "bytes=%llu-", (unsigned long long)off);
	else
		snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long)off,
			 (unsigned long long)(off + len - 1));
	return rs_http_request_set_header(req, "Range", range);
}

/* An empty read at `off`: fine when the object is at least that long. */
static int get_nothing(struct rs_remote *r, const char *key, uint64_t off, int exact)
{
	uint64_t size;
	int err = r->stat(r, key, &size);

	if (!err && (exact ? size != off : off > size))
		err = rs_error_set(RS_ECORRUPT, "'%s' is shorter than offset %llu", key,
				   (unsigned long long)off);
	return err;
}

int rs_http_get_range(struct rs_remote *r, const struct rs_http_get_ops *ops,
		      const char *key, uint64_t off, uint64_t len, struct rs_buf *out)
{
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT;
	size_t start = out->len;
	uint64_t got;
	int err;

	rs_http_request_init(&req, "GET", NULL);
	rs_http_response_init(&resp);
	err = rs_remote_check_key(key);
	if (!err)
		err = rs_remote_check_get(key, len, out);
	if (!err && len == 0) {
		err = get_nothing(r, key, off, 0);
		goto out;
	}
	if (!err)
		err = set_range(&req, off, len);
	if (!err)
		err = ops->url(r, key, &url);
	if (err)
		goto out;
	req.url = rs_buf_cstr(&url);
	req.response_body = out;
	req.what = key;
	err = ops->perform(r, &req, &resp);
	if (err == RS_ENOTFOUND) {
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at %s", key,
				   r->display_url);
	} else if (err == RS_ECORRUPT && resp.status == 416 && len == UINT64_MAX) {
		/* 416 for "bytes=N-" where N is the size: an empty tail. */
		rs_error_clear();
		err = get_nothing(r, key, off, 1);
	} else if (!err) {
		got = out->len - start;
		if (len != UINT64_MAX && got != len)
			err = rs_error_set(RS_ECORRUPT, "'%s' at %s: asked for %llu bytes at "
					   "%llu, got %llu", key, r->display_url,
					   (unsigned long long)len, (unsigned long long)off,
					   (unsigned long long)got);
	}
out:
	if (err) {
		out->len = start;
		if (out->ptr)
			out->ptr[start] = '\0';
	}
	rs_buf_release(&url);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	return err;
}

/* ---- listing guard ---- */

static uint64_t token_digest(const char *token, size_t len)
{
	struct rs_id id;
	uint64_t v;

	rs_sha256(&id, token, len);
	memcpy(&v, id.id, sizeof(v));
	return v ? v : 1; /* 0 marks an empty slot */
}

int rs_http_pages_next(struct rs_http_pages *p, const char *token, size_t len,
		       const char *server, const char *what)
{
	unsigned long max = (unsigned long)env_long("RESULTS_HTTP_LIST_MAX_PAGES",
						    (long)RS_HTTP_LIST_MAX_PAGES, 1, 100000000L);
	uint64_t d;
	size_t i;

	if (++p->pages > max)
		return rs_error_set(RS_ECORRUPT, "server '%s' did not end the listing of '%s' "
				    "after %lu pages; check the server (or raise "
				    "RESULTS_HTTP_LIST_MAX_PAGES for a store that big)",
				    server, what, max);
	if (!len)
		return 0;
	if (p->n + 1 > p->cap / 2) {
		size_t ncap = p->cap ? p->cap * 2 : 64, j;
		uint64_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return rs_error_set(RS_EGENERIC, "out of memory");
		for (j = 0; j < p->cap; j++) {
			if (!p->seen[j])
				continue;
			for (i = p->seen[j] & (ncap - 1); ns[i]; i = (i + 1) & (ncap - 1))
				;
			ns[i] = p->seen[j];
		}
		free(p->seen);
		p->seen = ns;
		p->cap = ncap;
	}
	d = token_digest(token, len);
	for (i = d & (p->cap - 1); p->seen[i]; i = (i + 1) & (p->cap - 1))
		if (p->seen[i] == d)
			return rs_error_set(RS_ECORRUPT, "server '%s' sent a continuation token "
					    "it had sent before, at page %lu of the listing of "
					    "'%s': its listing loops; check the server",
					    server, p->pages, what);
	p->seen[i] = d;
	p->n++;
	return 0;
}

void rs_http_pages_release(struct rs_http_pages *p)
{
	free(p->seen);
	p->seen = NULL;
	p->cap = p->n = 0;
	p->pages = 0;
}

int rs_http_response_content_length(const struct rs_http_response *resp,
				    const char *key, const char *where, uint64_t *size)
{
	struct rs_buf v = RS_BUF_INIT;
	const char *s;
	char *end;
	unsigned long long n = 0;
	int err = rs_http_response_header(resp, "Content-Length", &v);

	s = rs_buf_cstr(&v);
	if (!err) {
		errno = 0;
		n = strtoull(s, &end, 10);
		if (end == s || *end || *s == '-' || errno)
			err = 1;
	}
	rs_buf_release(&v);
	if (err)
		return rs_error_set(RS_ECORRUPT, "HEAD '%s' at %s gave no usable Content-Length",
				    key, where);
	*size = n;
	return 0;
}
