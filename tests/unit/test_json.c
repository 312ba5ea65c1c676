/*
 * JSON text (results/json.h): rs_json_dump writes json_dumps' bytes for
 * every set of flags the library uses, appends, and is whole or an
 * error: a buffer cap reached at any byte, a key's included (where
 * jansson 2.14 goes on, akheron/jansson#655), fails and leaves the
 * buffer as it was. The builder (rs_json_set, rs_json_append,
 * rs_json_build_dump) makes a document an error once a value or an
 * insertion failed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/buf.h"
#include "results/error.h"
#include "results/json.h"

/* The flags of every caller in src/ and lfs-agent/. */
static const size_t caller_flags[] = {
	JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15),
	JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15),
	JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15),
	JSON_COMPACT | JSON_PRESERVE_ORDER,
	JSON_COMPACT,
	JSON_INDENT(2),
	JSON_INDENT(2) | JSON_SORT_KEYS,
	JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10),
	JSON_INDENT(2) | JSON_REAL_PRECISION(10),
};

static json_t *document(void)
{
	/* the last key, in order and sorted, is longer than what follows it */
	json_t *o = json_pack("{s:s, s:i, s:f, s:[f, n, b, s], s:{s:s, s:{}}, s:s, s:[], s:i}",
			      "id", "20261130-093012-push-abc1234", "runs", (json_int_t)128,
			      "duration", 1.0 / 3.0, "list", 12.25, 1, "caf\xc3\xa9 \"<tab>\"\t",
			      "nested", "a-rather-long-key-of-the-nested-object", "value", "empty",
			      "verdict", "+13% vs c1d2e3f: new call g -> f (4.1 s)", "z",
			      "zz-the-last-key-longer-than-what-follows-it", (json_int_t)1);

	assert_non_null(o);
	return o;
}

static void test_same_bytes(void **state)
{
	json_t *o = document(), *s = json_string("caf\xc3\xa9\n");
	struct rs_buf b = RS_BUF_INIT;
	char *want;

	(void)state;
	for (size_t i = 0; i < sizeof(caller_flags) / sizeof(caller_flags[0]); i++) {
		want = json_dumps(o, caller_flags[i]);
		assert_non_null(want);
		rs_buf_clear(&b);
		assert_int_equal(rs_json_dump(&b, o, caller_flags[i]), 0);
		assert_string_equal(b.ptr, want);
		assert_int_equal(b.len, strlen(want));
		free(want);
	}
	/* a string alone, as the export writes one */
	rs_buf_clear(&b);
	assert_int_equal(rs_json_dump(&b, s, JSON_ENCODE_ANY), 0);
	assert_string_equal(b.ptr, "\"caf\xc3\xa9\\n\"");
	/* appended to what the buffer holds */
	assert_int_equal(rs_json_dump(&b, json_object_get(o, "list"), JSON_COMPACT), 0);
	assert_string_equal(b.ptr, "\"caf\xc3\xa9\\n\"[12.25,null,true,\"caf\xc3\xa9 \\\"<tab>\\\"\\t\"]");
	rs_buf_release(&b);
	json_decref(s);
	json_decref(o);
}

/*
 * The buffer capped at every length short of the text: each must fail
 * with the cap's error and leave the prefix as it was. A writer that
 * trusted jansson's result would return success where the cap is reached
 * in the last key, whose write jansson ignores: what follows it fits, and
 * the text lacks the key.
 */
static void test_whole_or_error(void **state)
{
	json_t *o = document();
	const char prefix[] = "line: ";
	struct rs_buf b;
	size_t full;
	char *want;

	(void)state;
	for (size_t i = 0; i < sizeof(caller_flags) / sizeof(caller_flags[0]); i++) {
		want = json_dumps(o, caller_flags[i]);
		assert_non_null(want);
		full = strlen(prefix) + strlen(want);
		for (size_t cap = strlen(prefix); cap <= full; cap++) {
			int err;

			rs_buf_init(&b, cap);
			assert_int_equal(rs_buf_puts(&b, prefix), 0);
			err = rs_json_dump(&b, o, caller_flags[i]);
			if (cap < full) {
				if (err != RS_ETOOBIG)
					fail_msg("cap %zu of %zu, flags %#zx: %d, '%s'", cap, full,
						 caller_flags[i], err, b.ptr);
				assert_string_equal(b.ptr, prefix);
				assert_int_equal(b.len, strlen(prefix));
			} else {
				assert_int_equal(err, 0);
				assert_string_equal(b.ptr + strlen(prefix), want);
			}
			rs_buf_release(&b);
		}
		free(want);
	}
	json_decref(o);
}

/* What a jansson constructor gives when memory ran out. */
static void test_null(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_buf_puts(&b, "kept"), 0);
	rs_error_clear();
	assert_int_equal(rs_json_dump(&b, NULL, JSON_COMPACT), RS_EGENERIC);
	assert_non_null(strstr(rs_error_message(), "out of memory"));
	assert_string_equal(b.ptr, "kept");
	rs_buf_release(&b);
}

/*
 * The builder: what nothing failed in is written as rs_json_dump writes
 * it; one NULL value (a constructor out of memory) makes the document an
 * error even though the keys after it were put, and the buffer keeps
 * what it held. Values given after the failure are freed (ASan's leak
 * check sees to that).
 */
static void test_build(void **state)
{
	struct rs_json_build ok = RS_JSON_BUILD_INIT, bad = RS_JSON_BUILD_INIT;
	struct rs_buf b = RS_BUF_INIT;
	json_t *o = json_object(), *a = json_array();

	(void)state;
	rs_json_append(&ok, a, json_integer(1));
	rs_json_append(&ok, a, json_string("two"));
	rs_json_set(&ok, o, "a", a);
	rs_json_set(&ok, o, "b", json_null());
	assert_int_equal(ok.failed, 0);
	assert_int_equal(rs_json_build_dump(&b, &ok, o, JSON_COMPACT), 0);
	assert_string_equal(b.ptr, "{\"a\":[1,\"two\"],\"b\":null}");

	o = json_object();
	a = json_array();
	rs_json_set(&bad, o, "a", json_integer(1));
	rs_json_set(&bad, o, "lost", NULL);
	assert_int_equal(bad.failed, 1);
	rs_json_set(&bad, o, "c", json_string("freed, not put"));
	rs_json_append(&bad, a, json_string("freed too"));
	assert_int_equal(json_array_size(a), 0);
	assert_null(json_object_get(o, "c"));
	rs_json_set(&bad, o, "list", a);
	rs_error_clear();
	assert_int_equal(rs_json_build_dump(&b, &bad, o, JSON_COMPACT), RS_EGENERIC);
	assert_non_null(strstr(rs_error_message(), "out of memory"));
	assert_string_equal(b.ptr, "{\"a\":[1,\"two\"],\"b\":null}");

	/* an insertion that fails (here: into what is not an object) counts too */
	bad.failed = 0;
	a = json_array();
	rs_json_set(&bad, a, "k", json_integer(2));
	assert_int_equal(bad.failed, 1);
	json_decref(a);
	rs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes),
		cmocka_unit_test(test_whole_or_error),
		cmocka_unit_test(test_null),
		cmocka_unit_test(test_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
