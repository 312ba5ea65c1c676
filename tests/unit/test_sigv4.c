/*
 * SigV4 against AWS's published examples: the four worked examples of the
 * S3 API reference ("Signature Calculations for the Authorization Header",
 * sig-v4-header-based-auth.html, keys AKIAIOSFODNN7EXAMPLE) and cases of the
 * generic Signature Version 4 test suite (keys AKIDEXAMPLE, 20150830).
 * The cross-check against an independent signer (@smithy/signature-v4)
 * lives in tests/e2e/test_remote_s3.sh, which needs node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "remote/sigv4.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/hex.h"

#define S3_DOC_TIME ((time_t)1369353600)  /* 20130524T000000Z */
#define SUITE_TIME ((time_t)1440938160)   /* 20150830T123600Z */

static const struct rs_sigv4_credentials s3_doc_cred = {
	"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", NULL
};
static const struct rs_sigv4_credentials suite_cred = {
	"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", NULL
};

/* An S3 request with an empty payload, x-amz-content-sha256 signed,
 * in us-east-1. */
static struct rs_sigv4_request s3_request(const char *method, const char *host, const char *path,
					  const char *query)
{
	struct rs_sigv4_request req = {
		.method = method, .host = host, .path = path, .query = query,
		.payload_sha256 = RS_SIGV4_EMPTY_SHA256, .content_sha256_header = 1,
		.region = "us-east-1", .service = "s3",
	};

	return req;
}

/* A request of the generic test suite: service "service", no
 * x-amz-content-sha256. */
static struct rs_sigv4_request suite_request(const char *query)
{
	struct rs_sigv4_request req = {
		.method = "GET", .host = "example.amazonaws.com", .path = "/", .query = query,
		.payload_sha256 = RS_SIGV4_EMPTY_SHA256, .content_sha256_header = 0,
		.region = "us-east-1", .service = "service",
	};

	return req;
}

static void sign_ok(struct rs_sigv4_result *res, const struct rs_sigv4_request *req,
		    const struct rs_sigv4_credentials *cred, time_t t)
{
	int err = rs_sigv4_sign(res, req, cred, t);

	if (err)
		fail_msg("sign failed: %s", rs_error_message());
}

/* Signs `req`: its canonical request holds `canonical` and its
 * Authorization header holds `authorization` (NULL: not checked). */
static void assert_signed(const struct rs_sigv4_request *req, const struct rs_sigv4_credentials *cred,
			  time_t t, const char *canonical, const char *authorization)
{
	struct rs_sigv4_result res;

	rs_sigv4_result_init(&res);
	sign_ok(&res, req, cred, t);
	if (canonical && !strstr(res.canonical_request.ptr, canonical))
		fail_msg("canonical request lacks '%s':\n%s", canonical, res.canonical_request.ptr);
	if (authorization && !strstr(res.authorization.ptr, authorization))
		fail_msg("authorization lacks '%s':\n%s", authorization, res.authorization.ptr);
	rs_sigv4_result_release(&res);
}

static void test_s3_get_object_range(void **state)
{
	struct rs_sigv4_header hdr[] = { { "Range", "bytes=0-9" } };
	struct rs_sigv4_request req = s3_request("GET", "examplebucket.s3.amazonaws.com", "/test.txt", NULL);
	struct rs_sigv4_result res;

	(void)state;
	req.headers = hdr;
	req.nheaders = 1;
	rs_sigv4_result_init(&res);
	sign_ok(&res, &req, &s3_doc_cred, S3_DOC_TIME);
	assert_string_equal(res.amz_date, "20130524T000000Z");
	assert_string_equal(res.canonical_request.ptr,
		"GET\n/test.txt\n\n"
		"host:examplebucket.s3.amazonaws.com\n"
		"range:bytes=0-9\n"
		"x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
		"x-amz-date:20130524T000000Z\n\n"
		"host;range;x-amz-content-sha256;x-amz-date\n"
		"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_string_equal(res.string_to_sign.ptr,
		"AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
		"7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
	assert_string_equal(res.authorization.ptr,
		"AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
	rs_sigv4_result_release(&res);
}

static void test_s3_put_object(void **state)
{
	struct rs_sigv4_header hdr[] = {
		{ "Date", "Fri, 24 May 2013 00:00:00 GMT" },
		{ "x-amz-storage-class", "REDUCED_REDUNDANCY" },
	};
	struct rs_buf path = RS_BUF_INIT;
	struct rs_sigv4_request req = {
		.method = "PUT", .host = "examplebucket.s3.amazonaws.com",
		.headers = hdr, .nheaders = 2,
		.payload_sha256 = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
		.content_sha256_header = 1, .region = "us-east-1", .service = "s3",
	};

	(void)state;
	/* The key "test$file.text" is encoded once: "$" becomes "%24". */
	assert_int_equal(rs_buf_puts(&path, "/"), 0);
	assert_int_equal(rs_percent_encode_str(&path, "test$file.text", RS_SLASH_KEEP), 0);
	assert_string_equal(path.ptr, "/test%24file.text");
	req.path = path.ptr;
	assert_signed(&req, &s3_doc_cred, S3_DOC_TIME, NULL,
		"SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
		"Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
	rs_buf_release(&path);
}

static void test_s3_get_bucket_lifecycle(void **state)
{
	struct rs_sigv4_request req = s3_request("GET", "examplebucket.s3.amazonaws.com", "/", "lifecycle");

	(void)state;
	/* A parameter without a value is signed as "lifecycle=". */
	assert_signed(&req, &s3_doc_cred, S3_DOC_TIME, "GET\n/\nlifecycle=\n",
		"Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
}

static void test_s3_list_objects(void **state)
{
	/* the query unsorted on purpose */
	struct rs_sigv4_request req = s3_request("GET", "examplebucket.s3.amazonaws.com", "/",
						 "prefix=J&max-keys=2");

	(void)state;
	assert_signed(&req, &s3_doc_cred, S3_DOC_TIME, "GET\n/\nmax-keys=2&prefix=J\n",
		"Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

static void test_suite_get_vanilla(void **state)
{
	struct rs_sigv4_request req = suite_request(NULL);
	struct rs_sigv4_result res;

	(void)state;
	rs_sigv4_result_init(&res);
	sign_ok(&res, &req, &suite_cred, SUITE_TIME);
	assert_string_equal(res.authorization.ptr,
		"AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
		"SignedHeaders=host;x-amz-date, "
		"Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
	rs_sigv4_result_release(&res);
}

static void test_suite_query_order(void **state)
{
	/* get-vanilla-query-order-key-case: parameters sorted by name. */
	struct rs_sigv4_request req = suite_request("Param2=value2&Param1=value1");

	(void)state;
	assert_signed(&req, &suite_cred, SUITE_TIME, "\nParam1=value1&Param2=value2\n",
		"Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

static void test_signing_key(void **state)
{
	/* The derivation example of AWS's general reference (service "iam"). */
	unsigned char key[32];
	char hex[65];
	int i;

	(void)state;
	assert_int_equal(rs_sigv4_signing_key(key, suite_cred.secret_access_key,
					      "20150830", "us-east-1", "iam"), 0);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	assert_string_equal(hex,
		"c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9");
}

static void test_session_token_is_signed(void **state)
{
	struct rs_sigv4_credentials cred = s3_doc_cred;
	struct rs_sigv4_request req = s3_request("GET", "examplebucket.s3.amazonaws.com", "/test.txt", NULL);
	struct rs_sigv4_result res;

	(void)state;
	cred.session_token = "FQoGZXIvYXdzEXAMPLETOKEN";
	rs_sigv4_result_init(&res);
	sign_ok(&res, &req, &cred, S3_DOC_TIME);
	assert_non_null(strstr(res.canonical_request.ptr,
			       "x-amz-security-token:FQoGZXIvYXdzEXAMPLETOKEN\n"));
	assert_non_null(strstr(res.authorization.ptr,
		"SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,"));
	/* Never the secret, anywhere in what we keep. */
	assert_null(strstr(res.authorization.ptr, cred.secret_access_key));
	assert_null(strstr(res.canonical_request.ptr, cred.secret_access_key));
	rs_sigv4_result_release(&res);
}

static void test_signature_depends_on_everything(void **state)
{
	struct rs_sigv4_request req = s3_request("GET", "examplebucket.s3.amazonaws.com", "/test.txt", NULL);
	struct rs_sigv4_credentials wrong = s3_doc_cred;
	struct rs_sigv4_result a, b;

	(void)state;
	rs_sigv4_result_init(&a);
	rs_sigv4_result_init(&b);
	sign_ok(&a, &req, &s3_doc_cred, S3_DOC_TIME);
	wrong.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ";
	sign_ok(&b, &req, &wrong, S3_DOC_TIME);
	assert_string_not_equal(a.authorization.ptr, b.authorization.ptr);
	sign_ok(&b, &req, &s3_doc_cred, S3_DOC_TIME + 86400);
	assert_string_not_equal(a.authorization.ptr, b.authorization.ptr);
	req.region = "eu-west-1";
	sign_ok(&b, &req, &s3_doc_cred, S3_DOC_TIME);
	assert_string_not_equal(a.authorization.ptr, b.authorization.ptr);
	rs_sigv4_result_release(&a);
	rs_sigv4_result_release(&b);
}

static void test_query_normalised(void **state)
{
	/* A continuation token with '/', '+' and '=' signs the same whether the
	 * caller encoded it or not. */
	struct rs_sigv4_request req = s3_request("GET", "h", "/b", NULL);
	struct rs_sigv4_result a, b;

	(void)state;
	rs_sigv4_result_init(&a);
	rs_sigv4_result_init(&b);
	req.query = "list-type=2&continuation-token=1%2Fab%2Bc%3D&prefix=packs%2F";
	sign_ok(&a, &req, &s3_doc_cred, S3_DOC_TIME);
	assert_non_null(strstr(a.canonical_request.ptr,
		"\ncontinuation-token=1%2Fab%2Bc%3D&list-type=2&prefix=packs%2F\n"));
	req.query = "prefix=packs/&list-type=2&continuation-token=1/ab%2bc%3d";
	sign_ok(&b, &req, &s3_doc_cred, S3_DOC_TIME);
	assert_string_equal(a.authorization.ptr, b.authorization.ptr);
	rs_sigv4_result_release(&a);
	rs_sigv4_result_release(&b);
}

static void test_header_values_trimmed(void **state)
{
	struct rs_sigv4_header hdr[] = { { "X-Amz-Meta-Note", "  a   b  c " } };
	struct rs_sigv4_request req = s3_request("PUT", "h", "/b/k", NULL);

	(void)state;
	req.headers = hdr;
	req.nheaders = 1;
	assert_signed(&req, &s3_doc_cred, S3_DOC_TIME, "\nx-amz-meta-note:a b c\n", NULL);
}

static void test_bad_input_refused(void **state)
{
	struct rs_sigv4_header bad[] = { { "x-evil", "a\r\nInjected: 1" } };
	struct rs_sigv4_header dup[] = { { "Host", "other" } };
	struct rs_sigv4_request req = s3_request("GET", "h", "/b/k", NULL);
	struct rs_sigv4_credentials nokey = { "AKID", "", NULL };
	struct rs_sigv4_result res;

	(void)state;
	rs_sigv4_result_init(&res);
	req.headers = bad;
	req.nheaders = 1;
	assert_int_equal(rs_sigv4_sign(&res, &req, &s3_doc_cred, S3_DOC_TIME), RS_EUSAGE);
	req.headers = dup;
	assert_int_equal(rs_sigv4_sign(&res, &req, &s3_doc_cred, S3_DOC_TIME), RS_EUSAGE);
	req.headers = NULL;
	req.nheaders = 0;
	assert_int_equal(rs_sigv4_sign(&res, &req, &nokey, S3_DOC_TIME), RS_EUSAGE);
	req.path = "b/k";
	assert_int_equal(rs_sigv4_sign(&res, &req, &s3_doc_cred, S3_DOC_TIME), RS_EUSAGE);
	rs_sigv4_result_release(&res);
}

static void test_uri_encode(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_percent_encode_str(&b, "packs/ab-C_d.e~f g+h=&%\xc3\xa9", RS_SLASH_KEEP), 0);
	assert_string_equal(b.ptr, "packs/ab-C_d.e~f%20g%2Bh%3D%26%25%C3%A9");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_encode_str(&b, "a/b", RS_SLASH_ENCODE), 0);
	assert_string_equal(b.ptr, "a%2Fb");
	rs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3_get_object_range),
		cmocka_unit_test(test_s3_put_object),
		cmocka_unit_test(test_s3_get_bucket_lifecycle),
		cmocka_unit_test(test_s3_list_objects),
		cmocka_unit_test(test_suite_get_vanilla),
		cmocka_unit_test(test_suite_query_order),
		cmocka_unit_test(test_signing_key),
		cmocka_unit_test(test_session_token_is_signed),
		cmocka_unit_test(test_signature_depends_on_everything),
		cmocka_unit_test(test_query_normalised),
		cmocka_unit_test(test_header_values_trimmed),
		cmocka_unit_test(test_bad_input_refused),
		cmocka_unit_test(test_uri_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
