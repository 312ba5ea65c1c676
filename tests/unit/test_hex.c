/*
 * Hex digits and percent-encoding (util/hex.h), the one copy the remote
 * backends, the signers, the credential parser, ids and the session
 * parser share.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/hex.h"

static void test_hex_val(void **state)
{
	(void)state;
	assert_int_equal(rs_hex_val('0'), 0);
	assert_int_equal(rs_hex_val('9'), 9);
	assert_int_equal(rs_hex_val('a'), 10);
	assert_int_equal(rs_hex_val('F'), 15);
	assert_int_equal(rs_hex_val('g'), -1);
	assert_int_equal(rs_hex_val('%'), -1);
	assert_int_equal(rs_hex_val(0xc3), -1);
	assert_int_equal(rs_hex_val_lower('f'), 15);
	assert_int_equal(rs_hex_val_lower('F'), -1); /* ids are lower-case */
	assert_int_equal(rs_hex_val_lower('7'), 7);
}

/* rs_hex_is: one or more digits of either case, nothing else (commit prefixes of the run index) */
static void test_hex_is(void **state)
{
	(void)state;
	assert_true(rs_hex_is("0"));
	assert_true(rs_hex_is("abcdef0123456789ABCDEF"));
	assert_false(rs_hex_is(""));
	assert_false(rs_hex_is("abcg"));
	assert_false(rs_hex_is("12 3"));
	assert_false(rs_hex_is("ab\xc3\xa9"));
	assert_false(rs_hex_is("-1"));
}

static void test_encode(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_percent_encode_str(&b, "packs/ab-C_d.e~f g+h=&%\xc3\xa9",
					       RS_SLASH_KEEP), 0);
	assert_string_equal(rs_buf_cstr(&b), "packs/ab-C_d.e~f%20g%2Bh%3D%26%25%C3%A9");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_encode_str(&b, "a/b", RS_SLASH_ENCODE), 0);
	assert_string_equal(rs_buf_cstr(&b), "a%2Fb");
	rs_buf_clear(&b);
	/* A length, not a C string: a NUL byte is encoded too. */
	assert_int_equal(rs_percent_encode(&b, "a\0b", 3, RS_SLASH_KEEP), 0);
	assert_string_equal(rs_buf_cstr(&b), "a%00b");
	rs_buf_release(&b);

	/* The cap holds. */
	rs_buf_init(&b, 4);
	assert_int_not_equal(rs_percent_encode_str(&b, "  ", RS_SLASH_KEEP), 0);
	rs_buf_release(&b);
}

static void test_decode(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_percent_decode(&b, "a%20b%2fc+d", 11, 0), 0);
	assert_string_equal(rs_buf_cstr(&b), "a b/c+d");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_decode(&b, "a%20b%2Fc+d", 11, 1), 0);
	assert_string_equal(rs_buf_cstr(&b), "a b/c d");
	rs_buf_clear(&b);
	/* A '%' without two hex digits stays; so does one cut off by `n`. */
	assert_int_equal(rs_percent_decode(&b, "%zz%4%", 6, 0), 0);
	assert_string_equal(rs_buf_cstr(&b), "%zz%4%");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_decode(&b, "x%41", 3, 0), 0);
	assert_string_equal(rs_buf_cstr(&b), "x%4");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_decode(&b, "%41", 3, 0), 0);
	assert_string_equal(rs_buf_cstr(&b), "A");
	rs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hex_val),
		cmocka_unit_test(test_hex_is),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_decode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
