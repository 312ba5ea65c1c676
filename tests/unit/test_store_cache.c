/*
 * store/cache.h: the one rule for the local cache folder, as
 * docs/store-format.md states it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "store/cache.h"
#include "results/error.h"
#include "util/hash.h"

static void check_root(const char *want)
{
	struct rs_buf out = RS_BUF_INIT;

	assert_int_equal(rs_store_cache_root(&out), 0);
	assert_string_equal(out.ptr, want);
	rs_buf_release(&out);
}

static void test_root(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	setenv("RESULTS_CACHE_DIR", "/c/env", 1);
	setenv("XDG_CACHE_HOME", "/c/xdg", 1);
	setenv("HOME", "/c/home", 1);
	check_root("/c/env");
	setenv("RESULTS_CACHE_DIR", "", 1); /* empty is unset */
	check_root("/c/xdg/results");
	unsetenv("RESULTS_CACHE_DIR");
	setenv("XDG_CACHE_HOME", "", 1);
	check_root("/c/home/.cache/results");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(rs_store_cache_root(&out), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "RESULTS_CACHE_DIR"));
	rs_buf_release(&out);
}

static void test_folder(void **state)
{
	struct rs_buf out = RS_BUF_INIT;
	struct rs_id h;
	char hex[RS_ID_HEXSZ + 1], want[64];
	const char *url = "s3://bucket/prefix";

	(void)state;
	rs_sha256(&h, url, strlen(url));
	rs_id_to_hex(hex, &h);
	snprintf(want, sizeof(want), "/root/%.16s", hex);
	assert_int_equal(rs_store_cache_folder(&out, "/root", url), 0);
	assert_string_equal(out.ptr, want);
	/* A fixed value: the folder name is part of the documented format. */
	rs_buf_clear(&out);
	assert_int_equal(rs_store_cache_folder(&out, "/r", "file:///srv/store"), 0);
	assert_string_equal(out.ptr, "/r/892169e08d9bf7c1");
	rs_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
