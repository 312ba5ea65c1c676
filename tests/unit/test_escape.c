/*
 * The escapers of results/escape.h, one per kind of reader: exact output
 * for each hostile character class (backticks, '|', newlines, tags,
 * quotes, ESC/BEL/C1 controls, bidi overrides, bytes that are not UTF-8).
 * tests/e2e/test_hostile_text.sh renders their output with cmark-gfm and
 * an HTML parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "results/escape.h"

typedef int (*esc_fn)(struct rs_buf *out, const char *s);

static void expect(esc_fn fn, const char *in, const char *want)
{
	struct rs_buf b = RS_BUF_INIT;

	assert_int_equal(fn(&b, in), 0);
	assert_string_equal(rs_buf_cstr(&b), want);
	rs_buf_release(&b);
}

static int code_inline(struct rs_buf *out, const char *s)
{
	return rs_escape_md_code(out, s, 0);
}

static int code_cell(struct rs_buf *out, const char *s)
{
	return rs_escape_md_code(out, s, RS_ESCAPE_IN_TABLE);
}

static int term_line(struct rs_buf *out, const char *s)
{
	return rs_escape_term(out, s, 0);
}

static int term_page(struct rs_buf *out, const char *s)
{
	return rs_escape_term(out, s, RS_ESCAPE_KEEP_LINES);
}

static void test_md_text(void **state)
{
	(void)state;
	expect(rs_escape_md_text, "main", "main");
	expect(rs_escape_md_text, "feature/x-1.2 (ok)", "feature/x-1.2 (ok)");
	expect(rs_escape_md_text, "x<img src=x onerror=alert(9)>",
	       "x&lt;img src=x onerror=alert(9)&gt;");
	expect(rs_escape_md_text, "a|b\nc\r\td", "a\\|b c  d");
	expect(rs_escape_md_text, "`code` *em* _u_ [l](u) ~s~ $m$ ![i]",
	       "\\`code\\` \\*em\\* \\_u\\_ \\[l\\](u) \\~s\\~ \\$m\\$ \\!\\[i\\]");
	expect(rs_escape_md_text, "a\\b & c", "a\\\\b &amp; c");
	expect(rs_escape_md_text, "&lt;", "&amp;lt;");
	/* controls are visible, and the backslash of the form escaped */
	expect(rs_escape_md_text, "\x1b[31mred\a", "\\\\x1b\\[31mred\\\\x07");
	expect(rs_escape_md_text, "caf\xc3\xa9 \xe2\x80\xae", "caf\xc3\xa9 \\\\u202e");
	expect(rs_escape_md_text, "", "");
	expect(rs_escape_md_text, NULL, "");
}

static void test_md_code(void **state)
{
	(void)state;
	expect(code_inline, "__init__", "`__init__`");
	expect(code_inline, "<img src=x>", "`<img src=x>`");
	/* the fence outgrows every run of backticks inside */
	expect(code_inline, "a`b", "``a`b``");
	expect(code_inline, "a``b`c", "```a``b`c```");
	/* a backtick or a space at an end: padded, so nothing merges or is lost */
	expect(code_inline, "`x", "`` `x ``");
	expect(code_inline, "x`", "`` x` ``");
	expect(code_inline, " x ", "`  x  `");
	expect(code_inline, "", "`  `");
	expect(code_inline, "a\nb", "`a b`");
	expect(code_inline, "a|b", "`a|b`");
	expect(code_cell, "a|b", "`a\\|b`");
	expect(code_cell, "`|<script>", "`` `\\|<script> ``");
	expect(code_inline, "\x1b]0;t\a", "`\\x1b]0;t\\x07`");
}

static void test_html(void **state)
{
	(void)state;
	expect(rs_escape_html_text, "<script>alert('x')</script> & \"q\"",
	       "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
	expect(rs_escape_html_text, "a\nb\tc\rd", "a\nb\tc\\x0dd");
	expect(rs_escape_html_text, "\x1b\x7f\xc2\x9b", "\\x1b\\x7f\\u009b");
	expect(rs_escape_html_attr, "\" onmouseover=\"x", "&quot; onmouseover=&quot;x");
	expect(rs_escape_html_attr, "a\nb\tc'<>&", "a&#10;b&#9;c&#39;&lt;&gt;&amp;");
	expect(rs_escape_html_attr, "\x01", "\\x01");
}

static void test_term(void **state)
{
	(void)state;
	expect(term_line, "main", "main");
	expect(term_line, "\x1b]0;owned\a\x1b[2J", "\\x1b]0;owned\\x07\\x1b[2J");
	expect(term_line, "a\nb\rc\bd\x7f", "a\\x0ab\\x0dc\\x08d\\x7f");
	/* C1 CSI as UTF-8, and raw 0x9b that 8-bit terminals read as CSI */
	expect(term_line, "\xc2\x9b" "2J \x9b" "2J", "\\u009b2J \\x9b2J");
	/* overlong and surrogate encodings are not UTF-8: each byte shown */
	expect(term_line, "\xc0\x9b", "\\xc0\\x9b");
	expect(term_line, "\xed\xa0\x80", "\\xed\\xa0\\x80");
	expect(term_line, "\xe2\x80\xae" "evil", "\\u202eevil");
	expect(term_line, "\xf0\x9f\x94\xa5 caf\xc3\xa9 <b>|`", "\xf0\x9f\x94\xa5 caf\xc3\xa9 <b>|`");
	expect(term_line, "trunc\xe2\x80", "trunc\\xe2\\x80");
	expect(term_page, "line 1\n\tline 2\r\n\x1b[1m", "line 1\n\tline 2\\x0d\n\\x1b[1m");
}

/* A full buffer is an error, never a short string. */
static void test_cap(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	b.max = 8;
	assert_int_not_equal(rs_escape_html_text(&b, "<<<<<<<<"), 0);
	rs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_md_text),
		cmocka_unit_test(test_md_code),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_term),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
