/*
 * Azure SharedKey signing and connection strings.
 *
 * The expected strings-to-sign are written out by hand from the spec
 * ("Authorize with Shared Key"); the expected signatures were computed
 * independently with the openssl command line:
 *   printf '<string to sign>' | openssl dgst -sha256 -mac HMAC \
 *     -macopt hexkey:<hex of the base64-decoded key> -binary | base64
 * The first vector is the form azurite accepts in test_http_remote (the
 * path-style resource repeats the account).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "remote/azure_sign.h"
#include "results/error.h"

#define DEV_KEY RS_AZURE_DEV_KEY

static void test_put_block_vector(void **state)
{
	struct rs_http_request req;
	struct rs_buf sts = RS_BUF_INIT, auth = RS_BUF_INIT;
	static const char expect[] =
		"PUT\n\n\n5\n\napplication/octet-stream\n\n\n\n\n\n\n"
		"x-ms-blob-type:BlockBlob\n"
		"x-ms-date:Mon, 30 Nov 2026 09:00:00 GMT\n"
		"x-ms-version:2021-12-02\n"
		"/devstoreaccount1/devstoreaccount1/results/packs/a.pack\n"
		"blockid:cnNibGstMDAwMDAx\n"
		"comp:block";

	(void)state;
	rs_http_request_init(&req, "PUT",
		"http://127.0.0.1:10000/devstoreaccount1/results/packs/a.pack"
		"?comp=block&blockid=cnNibGstMDAwMDAx");
	rs_http_request_set_body_mem(&req, "hello", 5);
	assert_int_equal(rs_http_request_set_header(&req, "x-ms-version", "2021-12-02"), 0);
	assert_int_equal(rs_http_request_set_header(&req, "Content-Type", "application/octet-stream"), 0);
	assert_int_equal(rs_http_request_set_header(&req, "x-ms-date", "Mon, 30 Nov 2026 09:00:00 GMT"), 0);
	assert_int_equal(rs_http_request_set_header(&req, "X-MS-Blob-Type", "BlockBlob"), 0);
	assert_int_equal(rs_azure_string_to_sign(&sts, &req, "devstoreaccount1"), 0);
	assert_string_equal(rs_buf_cstr(&sts), expect);
	assert_int_equal(rs_azure_authorization(&auth, rs_buf_cstr(&sts), "devstoreaccount1", DEV_KEY), 0);
	assert_string_equal(rs_buf_cstr(&auth),
		"SharedKey devstoreaccount1:8BCIxOarqib443t7nsHpSnqVlKi6WhlchBd4tdOHAUU=");

	/* One byte of the key changed: another signature. */
	rs_buf_clear(&auth);
	assert_int_equal(rs_azure_authorization(&auth, rs_buf_cstr(&sts), "devstoreaccount1",
		"Fby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="), 0);
	assert_string_not_equal(rs_buf_cstr(&auth),
		"SharedKey devstoreaccount1:8BCIxOarqib443t7nsHpSnqVlKi6WhlchBd4tdOHAUU=");

	rs_buf_release(&sts);
	rs_buf_release(&auth);
	rs_http_request_release(&req);
}

/*
 * Query names lower-cased and sorted, repeated names joined in value
 * order, values URL-decoded ('+' is a space), header white space folded,
 * Range signed, and no Content-Length for a request without a body.
 */
static void test_get_vector(void **state)
{
	struct rs_http_request req;
	struct rs_buf sts = RS_BUF_INIT, auth = RS_BUF_INIT;
	static const char expect[] =
		"GET\n\n\n\n\n\n\n\n\n\n\nbytes=0-99\n"
		"x-ms-date:Mon, 30 Nov 2026 09:00:00 GMT\n"
		"x-ms-meta-note:a b c\n"
		"x-ms-version:2021-12-02\n"
		"/myaccount/c/b\n"
		"a:1,2\n"
		"comp:list\n"
		"prefix:p/q r";

	(void)state;
	rs_http_request_init(&req, "GET",
		"https://myaccount.blob.core.windows.net/c/b?comp=list&A=2&prefix=p%2Fq+r&a=1");
	assert_int_equal(rs_http_request_set_header(&req, "Range", "bytes=0-99"), 0);
	assert_int_equal(rs_http_request_set_header(&req, "x-ms-version", "2021-12-02"), 0);
	assert_int_equal(rs_http_request_set_header(&req, "x-ms-meta-note", "  a \t b  c "), 0);
	assert_int_equal(rs_http_request_set_header(&req, "x-ms-date", "Mon, 30 Nov 2026 09:00:00 GMT"), 0);
	assert_int_equal(rs_azure_string_to_sign(&sts, &req, "myaccount"), 0);
	assert_string_equal(rs_buf_cstr(&sts), expect);
	assert_int_equal(rs_azure_authorization(&auth, rs_buf_cstr(&sts), "myaccount", DEV_KEY), 0);
	assert_string_equal(rs_buf_cstr(&auth),
		"SharedKey myaccount:dSVFodQmVSuxALzTEF/oi/8ZWI7McoOoQWcf2BOHLN8=");
	rs_buf_release(&sts);
	rs_buf_release(&auth);
	rs_http_request_release(&req);
}

/* A zero-length body signs an empty Content-Length, not "0" (2015-02-21+). */
static void test_empty_body(void **state)
{
	struct rs_http_request req;
	struct rs_buf sts = RS_BUF_INIT;

	(void)state;
	rs_http_request_init(&req, "PUT", "https://a.blob.core.windows.net/c?restype=container");
	rs_http_request_set_body_mem(&req, "", 0);
	assert_int_equal(rs_azure_string_to_sign(&sts, &req, "a"), 0);
	assert_string_equal(rs_buf_cstr(&sts),
		"PUT\n\n\n\n\n\n\n\n\n\n\n\n/a/c\nrestype:container");
	rs_buf_release(&sts);
	rs_http_request_release(&req);
}

static void test_sign_hook(void **state)
{
	struct rs_azure_signer s = { "devstoreaccount1", DEV_KEY };
	struct rs_http_request req;
	const char *auth;

	(void)state;
	rs_http_request_init(&req, "GET", "http://127.0.0.1:10000/devstoreaccount1/c/b");
	assert_int_equal(rs_azure_sign(&req, &s), 0);
	assert_non_null(rs_http_request_header(&req, "x-ms-date"));
	assert_string_equal(rs_http_request_header(&req, "x-ms-version"), RS_AZURE_VERSION);
	auth = rs_http_request_header(&req, "Authorization");
	assert_non_null(auth);
	assert_int_equal(strncmp(auth, "SharedKey devstoreaccount1:", 27), 0);
	assert_int_equal(strlen(auth), 27 + 44);
	rs_http_request_release(&req);

	/* Not base64: refused before anything is sent. */
	s.key = "not base64!";
	rs_http_request_init(&req, "GET", "http://127.0.0.1:10000/devstoreaccount1/c/b");
	assert_int_equal(rs_azure_sign(&req, &s), RS_EUSAGE);
	assert_null(strstr(rs_error_message(), "not base64!"));
	rs_http_request_release(&req);
}

static void test_date(void **state)
{
	char d[32];

	(void)state;
	rs_azure_date(d, 0);
	assert_string_equal(d, "Thu, 01 Jan 1970 00:00:00 GMT");
	rs_azure_date(d, 1796029200); /* 2026-11-30 09:00:00 UTC */
	assert_string_equal(d, "Mon, 30 Nov 2026 09:00:00 GMT");
}

static void test_connection_strings(void **state)
{
	struct rs_azure_account a;

	(void)state;
	rs_azure_account_init(&a);
	assert_int_equal(rs_azure_connection_string_parse(&a,
		"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
		"AccountKey=" DEV_KEY ";BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1/;"), 0);
	assert_string_equal(a.name, "devstoreaccount1");
	assert_string_equal(a.key, DEV_KEY); /* '=' inside a value kept */
	assert_string_equal(a.blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
	assert_string_equal(a.protocol, "http");
	rs_azure_account_release(&a);

	rs_azure_account_init(&a);
	assert_int_equal(rs_azure_connection_string_parse(&a, "UseDevelopmentStorage=true"), 0);
	assert_string_equal(a.name, "devstoreaccount1");
	assert_string_equal(a.key, DEV_KEY);
	assert_string_equal(a.blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
	rs_azure_account_release(&a);

	rs_azure_account_init(&a);
	assert_int_equal(rs_azure_connection_string_parse(&a,
		" accountname = acct ; SharedAccessSignature=?sv=2020-10-02&sig=abc%3D;"
		"EndpointSuffix=core.chinacloudapi.cn"), 0);
	assert_string_equal(a.name, "acct");
	assert_string_equal(a.sas, "sv=2020-10-02&sig=abc%3D");
	assert_string_equal(a.suffix, "core.chinacloudapi.cn");
	assert_null(a.key);
	rs_azure_account_release(&a);

	rs_azure_account_init(&a);
	assert_int_equal(rs_azure_connection_string_parse(&a, "AccountName=x;AccountKeysecret"),
			 RS_EUSAGE);
	assert_null(strstr(rs_error_message(), "secret"));
	rs_azure_account_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_block_vector),
		cmocka_unit_test(test_get_vector),
		cmocka_unit_test(test_empty_body),
		cmocka_unit_test(test_sign_hook),
		cmocka_unit_test(test_date),
		cmocka_unit_test(test_connection_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
