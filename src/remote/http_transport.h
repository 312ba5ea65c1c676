/*
 * http_transport: the one libcurl layer under every HTTP backend
 * (WebDAV, S3, Azure). A backend builds an rs_http_request, optionally
 * lets a signer add authentication headers, and calls rs_http_perform,
 * which owns everything protocol-independent:
 *
 *  - connection reuse: one CURL easy handle per concurrent caller, taken
 *    from a locked pool and put back after the request, so each thread
 *    keeps its warm (TLS) connections and several threads can call
 *    rs_http_perform on one rs_http at once;
 *  - retries of transient failures (timeouts, connection resets, HTTP 429
 *    and 5xx) with exponential backoff and full jitter, a bounded number of
 *    times; 4xx answers (auth, not found, ...) are never retried;
 *  - error messages that say what a status means ("403: access denied -
 *    check the key", "clock skew", "no such bucket") and never contain a
 *    credential: URLs in messages lose their userinfo and query string;
 *  - TLS verification, always on; a CA bundle from the config key
 *    results.http.cainfo, env RESULTS_CA_BUNDLE, git's http.sslCAInfo or
 *    env GIT_SSL_CAINFO (first found wins);
 *  - libcurl's proxy environment variables (http_proxy, https_proxy,
 *    no_proxy, ...) work because nothing here overrides them;
 *  - bounds against a hostile or broken server: a body is never accepted
 *    past what was asked for (the range, else the buffer's cap), an error
 *    body is read up to 64 KiB, and every transfer has a deadline
 *    proportional to its size plus a speed floor (below).
 *
 * Deadlines (git config first, then the environment):
 *   results.http.timeout  / RESULTS_HTTP_TIMEOUT    seconds, default 60
 *   results.http.minSpeed / RESULTS_HTTP_MIN_SPEED  bytes per second (k, m
 *                                                   suffixes), default 16k
 * A request of n bytes (the body sent plus the range asked for or the
 * response buffer's cap, plus req->deadline_extra) must be over, retries
 * included, within timeout + n / minSpeed seconds; one of at least
 * minSpeed x window bytes that moves slower than minSpeed for the window
 * (min(30 s, timeout)) is cut as stalled, a smaller one when nothing
 * moves (under 1 byte/s) for the window; connecting takes at most
 * min(30 s, timeout). A body still being written (put_stream) has no
 * deadline and a floor of 1 byte/s: its pace is set by our own writer.
 *
 * Tuning for tests (environment):
 *   RESULTS_HTTP_RETRIES        tries in all, 1..20 (default 5)
 *   RESULTS_HTTP_RETRY_BASE_MS  first backoff ceiling (default 200 ms;
 *                               the ceiling doubles per try, up to 10 s)
 *   RESULTS_HTTP_LOW_SPEED_TIME seconds below the speed floor before a
 *                               transfer counts as stalled (default: the
 *                               smaller of 30 and results.http.timeout)
 *   RESULTS_HTTP_LIST_MAX_PAGES pages one listing may take (default 100000)
 *   RESULTS_HTTP_TRACE          a file to append one line per request to
 *                               (times, method, URL without credentials or
 *                               query, status, tries, bytes sent)
 */
#ifndef RS_HTTP_TRANSPORT_H
#define RS_HTTP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote.h"
#include "results/buf.h"
#include "results/error.h"

#define RS_HTTP_MAX_HEADERS 32

struct rs_http;
struct rs_http_request;

/*
 * Adds authentication to `req` just before each attempt (so a date or
 * signature is fresh on every retry). It reads req->method, req->url,
 * the headers and the body length, may call
 * rs_http_request_payload_sha256, and adds headers with
 * rs_http_request_set_header. Headers it adds are dropped again before
 * the next attempt. Return 0 or an RS_E* code (the request is then not
 * sent). Called from the thread that called rs_http_perform.
 */
typedef int (*rs_http_sign_fn)(struct rs_http_request *req, void *payload) RS_MUST_CHECK;

/*
 * How a backend reads the errors its servers name. The transport knows
 * HTTP statuses only; a final non-2xx answer whose error code is `code`
 * (exactly), or whose error body holds `phrase`, fails with `err` and the
 * message "<METHOD> <where>: <status>[ <status text>][ (<code>)]: <detail>",
 * the first matching rule winning, before the status rules apply.
 */
enum {
	RS_HTTP_SAY_STATUS_TEXT = 1, /* the message repeats the status text */
	RS_HTTP_SAY_CODE = 2,        /* ... and the server's error code */
};

struct rs_http_error_rule {
	const char *code;   /* the server's error code, or NULL */
	const char *phrase; /* or a phrase of its error body, or NULL */
	int err;            /* RS_E* */
	unsigned int say;   /* RS_HTTP_SAY_* */
	const char *detail; /* what it means and what to do */
};

struct rs_http_errors {
	/* A header that names the error code (Azure: x-ms-error-code); NULL:
	   only the <Code> of an XML error body does. */
	const char *code_header;
	const struct rs_http_error_rule *rules;
	size_t nrules;
};

struct rs_http_options {
	/* Config lookups (results.http.cainfo, http.sslCAInfo); may be NULL. */
	rs_config_get_fn config_get;
	void *config_payload;
	/* Default signer for every request of this transport; may be NULL. */
	rs_http_sign_fn sign;
	void *sign_payload;
	/* The remote's display URL (no credential), for messages; may be NULL. */
	const char *server;
	/* The backend's error rules; may be NULL. Kept (not copied): a
	   static table. */
	const struct rs_http_errors *errors;
};

/*
 * Create a transport. RS_EUSAGE for an unusable results.http.timeout or
 * results.http.minSpeed. `opts` may be NULL. The strings it names are read
 * during the call only. The result is the caller's (rs_http_free).
 */
RS_MUST_CHECK
int rs_http_new(struct rs_http **out, const struct rs_http_options *opts);

/* Close every pooled connection. NULL is a no-op. */
void rs_http_free(struct rs_http *http);

struct rs_http_header {
	char *name;  /* owned by the request */
	char *value; /* owned by the request */
};

enum rs_http_body_kind {
	RS_HTTP_BODY_NONE = 0, /* no body (GET, HEAD, DELETE, ...) */
	RS_HTTP_BODY_MEM,      /* body/body_len, borrowed */
	RS_HTTP_BODY_FILE,     /* body_path from body_off, body_len bytes */
	RS_HTTP_BODY_STREAM,   /* a file still being written (body_stream) */
};

/*
 * One request. The caller owns the struct (rs_http_request_init /
 * rs_http_request_release); it can be performed more than once.
 */
struct rs_http_request {
	const char *method; /* borrowed: "GET", "PUT", "PROPFIND", ... */
	const char *url;    /* borrowed: full URL, no userinfo in it */

	struct rs_http_header headers[RS_HTTP_MAX_HEADERS];
	size_t nheaders;

	enum rs_http_body_kind body_kind;
	const void *body;      /* RS_HTTP_BODY_MEM (borrowed) */
	const char *body_path; /* RS_HTTP_BODY_FILE (borrowed; opened per perform) */
	struct rs_growing *body_stream; /* RS_HTTP_BODY_STREAM (borrowed) */
	int body_fixed;        /* STREAM: body_off/body_len are set in advance */
	uint64_t body_off;
	uint64_t body_len;     /* bytes sent: MEM, FILE and a fixed STREAM;
				  an open STREAM, once sealed */

	/*
	 * Where a 2xx response body goes: appended to this buffer (borrowed;
	 * its cap bounds the size, RS_EUSAGE past it). NULL discards the
	 * body. A retried attempt first truncates the buffer back to the
	 * length it had when rs_http_perform started.
	 */
	struct rs_buf *response_body;

	/*
	 * The slice of the resource wanted (rs_http_request_set_range sets
	 * it): with range_set, a 2xx body is accepted only up to range_len
	 * bytes (to the buffer's cap for UINT64_MAX, which must then be set:
	 * RS_EUSAGE otherwise), refused as soon as it or its Content-Length
	 * passes that, and a 200 answer that ignored the Range header is
	 * sliced here as it arrives (bytes before range_off are dropped).
	 */
	int range_set;
	uint64_t range_off;
	uint64_t range_len;

	/* What is being moved, for messages ("manifests/ab.."); may be NULL. */
	const char *what;

	/*
	 * Bytes to count in the deadline beyond the body and the answer: a
	 * request whose server works on more than it moves (S3 assembling
	 * a multipart upload's parts). 0 for most requests.
	 */
	uint64_t deadline_extra;

	/* Basic authentication (borrowed; never logged). NULL for none. */
	const char *username;
	const char *password;

	/* Overrides the transport's signer for this request when set. */
	rs_http_sign_fn sign;
	void *sign_payload;

	/*
	 * Tries for this request; 0 takes the transport's default. 1 for a
	 * request that must not be repeated blindly (a non-idempotent POST).
	 */
	unsigned int max_tries;

	/* Set by rs_http_perform: "" or the lower-case hex SHA-256 of the body. */
	char payload_sha256[65];
	size_t ncaller_headers; /* internal: headers set before signing */
};

void rs_http_request_init(struct rs_http_request *req, const char *method,
			  const char *url);
void rs_http_request_release(struct rs_http_request *req);

/*
 * Add `name: value`, replacing an earlier header of the same name
 * (case-insensitive). Both strings are copied. RS_EUSAGE when more than
 * RS_HTTP_MAX_HEADERS headers or a CR/LF in either string.
 */
RS_MUST_CHECK
int rs_http_request_set_header(struct rs_http_request *req, const char *name,
			       const char *value);

/* Remove header `name` if it is set. */
void rs_http_request_unset_header(struct rs_http_request *req, const char *name);

/* The value of header `name` set on the request (borrowed) or NULL. */
const char *rs_http_request_header(const struct rs_http_request *req,
				   const char *name);

/* Send `n` bytes of `p` (borrowed until the request is released). */
void rs_http_request_set_body_mem(struct rs_http_request *req, const void *p,
				  size_t n);

/*
 * Send `len` bytes of the file at `path` from `off`. The file is opened
 * and read (pread) during rs_http_perform, never loaded whole.
 */
void rs_http_request_set_body_file(struct rs_http_request *req,
				   const char *path, uint64_t off, uint64_t len);

/*
 * Send the file that `g` is still writing, from its start, as it grows
 * (util/growing.h): the length is not known in advance, so the body goes
 * out with "Transfer-Encoding: chunked" (HTTP/1.1). The request ends when
 * the file is sealed, and fails when the writer cancels. A retry starts
 * again from the first byte. No payload hash: not for signed S3 requests.
 */
void rs_http_request_set_body_stream(struct rs_http_request *req,
				     struct rs_growing *g);

/*
 * Send bytes [off, off + len) of the file `g` is still writing, as they
 * arrive, with that Content-Length. When the file is sealed shorter, the
 * request is cut off and fails (RS_ECORRUPT, "ended before"), so the
 * server discards it. No payload hash either.
 */
void rs_http_request_set_body_stream_range(struct rs_http_request *req,
					   struct rs_growing *g, uint64_t off,
					   uint64_t len);

/*
 * Compute (once; cached in req->payload_sha256) the lower-case hex SHA-256
 * of the body; the empty string's digest without a body. For signers.
 * Reads the file region for RS_HTTP_BODY_FILE.
 */
RS_MUST_CHECK
int rs_http_request_payload_sha256(struct rs_http_request *req,
				   const char **hex_out);

/* What came back. The caller owns it: rs_http_response_init / _release. */
struct rs_http_response {
	long status;          /* final HTTP status; 0 when none arrived */
	struct rs_buf headers; /* raw header lines of the final response (capped) */
	/*
	 * The server's error code when it sent one: the backend's code header
	 * (rs_http_errors), else the <Code> of an XML body. Empty otherwise.
	 */
	char error_code[64];
	/* The body of a non-2xx response (capped, for messages). */
	struct rs_buf error_body;
	unsigned int attempts; /* tries made */
};

void rs_http_response_init(struct rs_http_response *resp);
void rs_http_response_release(struct rs_http_response *resp);

/*
 * Copy the value of response header `name` (case-insensitive, first one,
 * surrounding blanks trimmed) into `out` (cleared first).
 * RS_ENOTFOUND when the response has no such header.
 */
RS_MUST_CHECK
int rs_http_response_header(const struct rs_http_response *resp,
			    const char *name, struct rs_buf *out);

/*
 * The get() of every HTTP backend: bytes [off, off + len) of `key`
 * (len UINT64_MAX: to the end) appended to `out`, nothing appended on
 * failure. It checks the key and the cap, asks for the slice with a Range
 * header (none when that is the whole object), refuses a body of another
 * length (a 200 that ignored Range is sliced by the transport), and says
 * "'<key>' is not in the store at '<display url>'" on RS_ENOTFOUND.
 *
 * The backend gives the object's URL and how to perform a request (its
 * signing, its wording of errors). HTTP cannot ask for an empty range, so
 * len 0 and a 416 for an empty tail ("bytes=N-" where N is the size) are
 * answered with r->stat.
 */
struct rs_http_get_ops {
	int (*url)(struct rs_remote *r, const char *key, struct rs_buf *out) RS_MUST_CHECK;
	int (*perform)(struct rs_remote *r, struct rs_http_request *req,
		       struct rs_http_response *resp) RS_MUST_CHECK;
};

RS_MUST_CHECK
int rs_http_get_range(struct rs_remote *r, const struct rs_http_get_ops *ops,
		      const char *key, uint64_t off, uint64_t len, struct rs_buf *out);

/*
 * Guards a paginated listing (S3 continuation tokens, Azure markers)
 * against a server whose tokens cycle (A -> B -> A) or never end: every
 * token is remembered (a 64-bit digest of it), and a listing may take
 * RESULTS_HTTP_LIST_MAX_PAGES pages (default 100000). The caller owns
 * the struct: RS_HTTP_PAGES_INIT, rs_http_pages_release.
 */
struct rs_http_pages {
	uint64_t *seen; /* open-addressing set of token digests, 0 = empty */
	size_t cap;
	size_t n;
	unsigned long pages;
};

#define RS_HTTP_PAGES_INIT { NULL, 0, 0, 0 }

/*
 * Count one more page, whose continuation token is `token` (`len`
 * bytes; 0 when it is the last page). RS_ECORRUPT naming `server` and
 * the listing `what` when the token came before or there are too many
 * pages.
 */
RS_MUST_CHECK
int rs_http_pages_next(struct rs_http_pages *p, const char *token, size_t len,
		       const char *server, const char *what);
void rs_http_pages_release(struct rs_http_pages *p);

/*
 * The Content-Length of a HEAD answer, as `*size`. RS_ECORRUPT naming
 * `key` and `where` when it is missing or not a number.
 */
RS_MUST_CHECK
int rs_http_response_content_length(const struct rs_http_response *resp,
				    const char *key, const char *where, uint64_t *size);

/*
 * Perform `req`, retrying transient failures. `resp` may be NULL.
 * Returns 0 for a 2xx status, else:
 *   RS_ENOTFOUND  404 / 410 (except missing bucket or container: RS_EUSAGE)
 *   RS_EAUTH      401, 403 (message says why when the server does:
 *                 wrong key, clock skew, expired token)
 *   RS_EEXISTS    412 (a conditional request's precondition failed)
 *   RS_ECORRUPT   416 (range past the end of the object)
 *   RS_ERETRY     429 / 5xx / network failure still failing after the
 *                 last try
 *   RS_EUSAGE     bad URL, TLS certificate problems, missing bucket
 *   RS_EGENERIC   any other status or failure
 * The message names the method and the redacted URL. resp->status is
 * filled in every case, so a caller may treat a status as success
 * itself (for example 405 for a WebDAV MKCOL of an existing collection).
 */
RS_MUST_CHECK
int rs_http_perform(struct rs_http *http, struct rs_http_request *req,
		    struct rs_http_response *resp);

/*
 * Append `url` to `out` without userinfo and without the query string
 * (SAS tokens and pre-signed URLs carry secrets there), for messages.
 */
RS_MUST_CHECK
int rs_http_redact_url(struct rs_buf *out, const char *url);

/*
 * Short phrase for a status ("access denied", "service unavailable"),
 * never NULL.
 */
const char *rs_http_status_text(long status);

#endif
