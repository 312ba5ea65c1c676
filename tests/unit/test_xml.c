/*
 * The bounded XML reader of the HTTP backends (remote/xml.h): local
 * names and depths, per-element text, the entity rule, the refusal of
 * DTDs, the three caps, streaming in pieces and the first-text lookup
 * that reads capped error bodies.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "remote/xml.h"
#include "results/error.h"

struct trace {
	char log[1024];
	int stop_at_close; /* return 9 from this close (1-based) */
	int closes;
};

static int t_open(void *payload, unsigned int depth, const char *name)
{
	struct trace *t = payload;
	size_t n = strlen(t->log);

	snprintf(t->log + n, sizeof(t->log) - n, "<%u%s", depth, name);
	return 0;
}

static int t_close(void *payload, unsigned int depth, const char *name, const char *text,
		   size_t len)
{
	struct trace *t = payload;
	size_t n = strlen(t->log);

	snprintf(t->log + n, sizeof(t->log) - n, ">%u%s[%.*s]", depth, name, (int)len, text);
	return ++t->closes == t->stop_at_close ? 9 : 0;
}

static const char doc[] =
	"\n  <?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	"<!-- a comment <b> -->"
	"<D:root xmlns:D=\"DAV:\"><D:a>x&amp;&lt;&gt;&quot;&apos;&#65;&#x42;</D:a>"
	"<b/><c><d>1</d></c></D:root>";
static const char want[] =
	"<1root<2a>2a[x&<>\"'AB]<2b>2b[]<2c<3d>3d[1]>2c[]>1root[]";

static void test_events(void **state)
{
	struct trace t;
	struct rs_xml_handler h = { "the test answer", t_open, t_close, &t, 0, 0, 0 };

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(rs_xml_parse(doc, sizeof(doc) - 1, &h), 0);
	assert_string_equal(t.log, want);

	/* A callback's value stops the parse and comes back unchanged. */
	memset(&t, 0, sizeof(t));
	t.stop_at_close = 2;
	assert_int_equal(rs_xml_parse(doc, sizeof(doc) - 1, &h), 9);
	assert_string_equal(t.log, "<1root<2a>2a[x&<>\"'AB]<2b>2b[]");
}

/* The same events when the document arrives a byte at a time. */
static void test_streaming(void **state)
{
	struct trace t;
	struct rs_xml_handler h = { "the test answer", t_open, t_close, &t, 0, 0, 0 };
	struct rs_xml *x;
	size_t i;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(rs_xml_begin(&x, &h), 0);
	for (i = 0; i < sizeof(doc) - 1; i++)
		assert_int_equal(rs_xml_feed(x, doc + i, 1), 0);
	assert_int_equal(rs_xml_finish(x, 1), 0);
	assert_string_equal(t.log, want);

	/* Cut off: refused at the end. */
	assert_int_equal(rs_xml_begin(&x, &h), 0);
	assert_int_equal(rs_xml_feed(x, "<a><b>", 6), 0);
	assert_int_equal(rs_xml_finish(x, 1), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "the test answer is not well-formed XML"));
	/* Given up by the caller: no parse, no error, nothing leaks. */
	assert_int_equal(rs_xml_begin(&x, &h), 0);
	assert_int_equal(rs_xml_feed(x, "<a>", 3), 0);
	assert_int_equal(rs_xml_finish(x, 0), 0);
}

static void expect_refused(const char *p, const struct rs_xml_handler *h, const char *msg)
{
	assert_int_equal(rs_xml_parse(p, strlen(p), h), RS_ECORRUPT);
	if (!strstr(rs_error_message(), msg))
		fail_msg("'%s' does not say '%s'", rs_error_message(), msg);
}

static void test_refused(void **state)
{
	struct trace t;
	struct rs_xml_handler h = { "the test answer", t_open, t_close, &t, 0, 0, 0 };

	(void)state;
	memset(&t, 0, sizeof(t));
	expect_refused("<a>&bogus;</a>", &h, "not well-formed");
	expect_refused("<a>&amp</a>", &h, "not well-formed");
	expect_refused("<a></b>", &h, "not well-formed");
	expect_refused("<a>&#0;</a>", &h, "not well-formed");
	expect_refused("", &h, "not well-formed");
	expect_refused("just text", &h, "not well-formed");
	/* No DTD at all: internal entities (billion laughs) and external ones. */
	expect_refused("<!DOCTYPE a [<!ENTITY x \"xx\">]><a>&x;</a>", &h, "DOCTYPE");
	expect_refused("<!DOCTYPE a SYSTEM \"file:///etc/passwd\"><a/>", &h, "DOCTYPE");
	expect_refused("<!DOCTYPE a [<!ENTITY % p SYSTEM \"http://x/\"> %p;]><a/>", &h,
		       "DOCTYPE");
	expect_refused("<!DOCTYPE a><a/>", &h, "DOCTYPE");
	assert_int_equal(t.closes, 0);
}

static void test_caps(void **state)
{
	struct trace t;
	struct rs_xml_handler h = { "the test answer", t_open, t_close, &t, 64, 3, 8 };

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(rs_xml_parse("<a><b><c>12345678</c></b></a>", 29, &h), 0);
	expect_refused("<a><b><c><d/></c></b></a>", &h, "nests elements deeper than 3");
	expect_refused("<a>123456789</a>", &h, "has a value longer than 8 bytes");
	expect_refused("<a>1234&amp;5678</a>", &h, "has a value longer than 8 bytes");
	/* Text before a child is not the element's value: it does not add up. */
	assert_int_equal(rs_xml_parse("<a>12345<b/>12345</a>", 21, &h), 0);
	expect_refused("<a><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/><b/></a>", &h,
		       "the test answer is larger than 64 bytes");
	/* The defaults hold without a cap of the handler's own. */
	h.doc_max = 0;
	h.depth_max = 0;
	h.text_max = 0;
	{
		static char deep[RS_XML_DEPTH_MAX * 3 + 8];
		size_t i;

		for (i = 0; i <= RS_XML_DEPTH_MAX; i++)
			memcpy(deep + 3 * i, "<a>", 3);
		deep[3 * i] = '\0';
		expect_refused(deep, &h, "nests elements deeper than 64");
	}
}

static void test_first_text(void **state)
{
	static const char cut[] =
		"<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>no no no";
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	rs_buf_init(&out, 64);
	/* An error body read capped: the code is there before the cut. */
	assert_int_equal(rs_xml_first_text(cut, sizeof(cut) - 1, "Code", &out), 1);
	assert_string_equal(rs_buf_cstr(&out), "AccessDenied");
	assert_int_equal(rs_xml_first_text("<Error><Message>m</Message></Error>", 35, "Code",
					   &out), 0);
	assert_int_equal(out.len, 0);
	assert_int_equal(rs_xml_first_text("<html>not xml", 13, "Code", &out), 0);
	assert_int_equal(rs_xml_first_text("<a><x:Code>A&amp;B</x:Code></a>", 31, "Code", &out),
			 1);
	assert_string_equal(rs_buf_cstr(&out), "A&B");
	rs_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_streaming),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_first_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
