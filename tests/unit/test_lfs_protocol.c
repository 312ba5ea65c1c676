/*
 * The agent's reply lines (lfs-agent/protocol.c). git-lfs takes a
 * `complete` without "error" as success, so an error message JSON cannot
 * carry as it is (not UTF-8: a path's bytes, a message cut in the middle
 * of a character) must still come out as an error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "protocol.h"
#include "results/error.h"

#define OID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_complete_error_not_utf8(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_lfs_reply_complete(&out, OID, NULL, 500,
					       "results: cannot open 'caf\xe9': no such file"), 0);
	assert_string_equal(out.ptr, "{\"event\":\"complete\",\"oid\":\"" OID "\",\"error\":"
			    "{\"code\":500,\"message\":\"results: cannot open 'caf?': "
			    "no such file\"}}\n");
	rs_buf_release(&out);
}

static void test_complete_error_utf8_kept(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_lfs_reply_complete(&out, OID, NULL, 404, "no 'caf\xc3\xa9'"), 0);
	assert_string_equal(out.ptr, "{\"event\":\"complete\",\"oid\":\"" OID "\",\"error\":"
			    "{\"code\":404,\"message\":\"no 'caf\xc3\xa9'\"}}\n");
	rs_buf_release(&out);
}

static void test_init_error_not_utf8(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_lfs_reply_init_error(&out, 1, "no remote '\xff'"), 0);
	assert_string_equal(out.ptr, "{\"error\":{\"code\":1,\"message\":\"no remote '?'\"}}\n");
	rs_buf_release(&out);
}

static void test_complete_path_not_utf8(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	/* A download's path must be exact: refused, not sent without it. */
	assert_int_equal(rs_lfs_reply_complete(&out, OID, "/tmp/caf\xe9/results-x", 0, NULL),
			 RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "is not UTF-8"));
	rs_buf_release(&out);
}

static void test_complete_path(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_lfs_reply_complete(&out, OID, "/tmp/results-x", 0, NULL), 0);
	assert_string_equal(out.ptr, "{\"event\":\"complete\",\"oid\":\"" OID "\","
			    "\"path\":\"/tmp/results-x\"}\n");
	rs_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_complete_error_not_utf8),
		cmocka_unit_test(test_complete_error_utf8_kept),
		cmocka_unit_test(test_init_error_not_utf8),
		cmocka_unit_test(test_complete_path_not_utf8),
		cmocka_unit_test(test_complete_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
