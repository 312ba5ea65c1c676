/*
 * Unit tests of the pins.txt parser (src/runs/pins.c) that gc and
 * `results pin` share: CRLF line ends, surrounding blanks, comments, a
 * last line without '\n', and that dropping a pin keeps every other line
 * byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runs/retention.h"
#include "results/buf.h"

#define A "20261201-035320-manual-1234aaa"
#define B "20261201-035500-manual-5678bbb"

static void text_of(struct rs_buf *b, const char *s)
{
	rs_buf_init(b, 0);
	assert_int_equal(rs_buf_puts(b, s), 0);
}

static void test_names_tolerates_crlf_and_blanks(void **state)
{
	struct rs_buf t;

	(void)state;
	text_of(&t, "# header\r\n  " A " \t\r\n" B);
	assert_true(rs_pins_text_names(&t, A));
	assert_true(rs_pins_text_names(&t, B));
	assert_false(rs_pins_text_names(&t, "20261201-035320-manual-1234aa"));
	assert_false(rs_pins_text_names(&t, "# header"));
	rs_buf_release(&t);
}

static void test_comment_names_nothing(void **state)
{
	struct rs_buf t;

	(void)state;
	text_of(&t, "#" A "\n\n \r\n");
	assert_false(rs_pins_text_names(&t, A));
	assert_false(rs_pins_text_names(&t, "#" A));
	rs_buf_release(&t);
}

static void test_drop_keeps_other_lines(void **state)
{
	struct rs_buf t, out = RS_BUF_INIT;
	int found = -1;

	(void)state;
	text_of(&t, "# header\r\n" A " \r\n" B "\t\r\n" A "\n");
	assert_int_equal(rs_pins_text_drop(&out, &t, A, &found), 0);
	assert_int_equal(found, 1);
	assert_string_equal(out.ptr, "# header\r\n" B "\t\r\n");
	rs_buf_clear(&out);
	assert_int_equal(rs_pins_text_drop(&out, &t, "nosuchrun", &found), 0);
	assert_int_equal(found, 0);
	assert_string_equal(out.ptr, t.ptr);
	rs_buf_release(&out);
	rs_buf_release(&t);
}

static void test_drop_adds_missing_last_newline(void **state)
{
	struct rs_buf t, out = RS_BUF_INIT;
	int found = -1;

	(void)state;
	text_of(&t, A "\n" B);
	assert_int_equal(rs_pins_text_drop(&out, &t, A, &found), 0);
	assert_int_equal(found, 1);
	assert_string_equal(out.ptr, B "\n");
	rs_buf_release(&out);
	rs_buf_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_tolerates_crlf_and_blanks),
		cmocka_unit_test(test_comment_names_nothing),
		cmocka_unit_test(test_drop_keeps_other_lines),
		cmocka_unit_test(test_drop_adds_missing_last_newline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
