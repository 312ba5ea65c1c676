/*
 * AWS Signature Version 4 for request headers ("Authorization:
 * AWS4-HMAC-SHA256 ..."), as S3 and every S3-compatible store expects it.
 * Spec: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 * and, for S3's rules, https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
 *
 * The signer is pure: it gets the method, host, already-encoded path and
 * query, the headers to sign, the payload hash, the credentials and the
 * time, and returns the header values to send. It does no I/O, so the
 * unit tests feed it AWS's published examples.
 *
 * Path encoding follows S3's rule: the caller encodes each key segment
 * once (rs_percent_encode with RS_SLASH_KEEP, util/hex.h) and the signer uses that
 * path as is. Other AWS services encode the path a second time; we sign
 * only for S3, so this signer does not (their test-suite cases with a
 * plain "/" path sign the same either way).
 */
#ifndef RS_SIGV4_H
#define RS_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "results/buf.h"

/* The hash to put in x-amz-content-sha256 when the body is not hashed. */
#define RS_SIGV4_UNSIGNED_PAYLOAD "UNSIGNED-PAYLOAD"
/* SHA-256 of the empty string, the payload hash of GET/HEAD/DELETE. */
#define RS_SIGV4_EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* Borrowed strings; session_token may be NULL. */
struct rs_sigv4_credentials {
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token;
};

struct rs_sigv4_header {
	const char *name;  /* any case; signed lower-cased */
	const char *value; /* signed trimmed, inner runs of spaces collapsed */
};

struct rs_sigv4_request {
	const char *method; /* "GET", "PUT", ... */
	const char *host;   /* the Host header: "bucket.s3.amazonaws.com", "127.0.0.1:4568" */
	const char *path;   /* encoded path as sent, starting with '/' */
	const char *query;  /* encoded query as sent without '?', or NULL */
	/* Further headers to sign and send (range, content-type, ...). */
	const struct rs_sigv4_header *headers;
	size_t nheaders;
	/*
	 * Lower-case hex SHA-256 of the body, RS_SIGV4_EMPTY_SHA256 for
	 * none, or RS_SIGV4_UNSIGNED_PAYLOAD.
	 */
	const char *payload_sha256;
	/*
	 * Sign and send x-amz-content-sha256 (S3 requires it; the generic
	 * test suite does not use it).
	 */
	int content_sha256_header;
	const char *region;  /* "us-east-1" */
	const char *service; /* "s3" */
};

/* What to add to the request. Owned by the struct: rs_sigv4_result_release. */
struct rs_sigv4_result {
	char amz_date[17];          /* x-amz-date: 20130524T000000Z */
	struct rs_buf authorization; /* Authorization header value */
	/* For tests and debugging (never logged: no secret in them). */
	struct rs_buf canonical_request;
	struct rs_buf string_to_sign;
};

void rs_sigv4_result_init(struct rs_sigv4_result *res);
void rs_sigv4_result_release(struct rs_sigv4_result *res);

/*
 * Sign `req` with `cred` at time `now` (UTC seconds). On success `res`
 * holds the x-amz-date and Authorization values. The caller sends, besides
 * its own headers: Host, x-amz-date, Authorization, x-amz-content-sha256
 * when content_sha256_header is set, and x-amz-security-token when the
 * credentials carry a session token (all of them signed).
 * RS_EUSAGE for a missing field or a header name or value with a control
 * character; RS_EGENERIC when OpenSSL fails.
 */
RS_MUST_CHECK
int rs_sigv4_sign(struct rs_sigv4_result *res, const struct rs_sigv4_request *req,
		  const struct rs_sigv4_credentials *cred, time_t now);

/*
 * The signing key: HMAC chain over "AWS4" + secret, the date (YYYYMMDD),
 * region, service and "aws4_request". `out` gets 32 bytes.
 */
RS_MUST_CHECK
int rs_sigv4_signing_key(unsigned char out[32], const char *secret,
			 const char *date8, const char *region, const char *service);

#endif
