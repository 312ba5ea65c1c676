/*
 * A query string as sorted pairs (remote/query.h), the one splitter both
 * request signers use: SigV4 sorts the re-encoded pairs, Azure Shared Key
 * the decoded ones with lower-case names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "remote/query.h"
#include "results/error.h"

static void expect(const struct rs_query *q, size_t i, const char *name, const char *value)
{
	assert_true(i < q->n);
	assert_string_equal(q->pairs[i].name, name);
	assert_string_equal(q->pairs[i].value, value);
}

static void test_sigv4_order(void **state)
{
	struct rs_query q = RS_QUERY_INIT;

	(void)state;
	/* Sorted by the encoded bytes: "a%2F" before "a." ('%' < '.'). */
	assert_int_equal(rs_query_parse(&q, "a.=2&&a/=1&b&c=x+y%7e&b=", RS_QUERY_ENCODE, 64), 0);
	assert_int_equal(q.n, 5);
	expect(&q, 0, "a%2F", "1");
	expect(&q, 1, "a.", "2");
	expect(&q, 2, "b", "");
	expect(&q, 3, "b", "");
	expect(&q, 4, "c", "x%2By~");
	rs_query_release(&q);
	assert_int_equal(q.n, 0);
}

static void test_azure_order(void **state)
{
	struct rs_query q = RS_QUERY_INIT;

	(void)state;
	assert_int_equal(rs_query_parse(&q, "comp=list&Restype=container&prefix=a+b%2Fc&"
					"restype=z#frag=1",
					RS_QUERY_PLUS_IS_SPACE | RS_QUERY_LOWER_NAMES, 256), 0);
	assert_int_equal(q.n, 4);
	expect(&q, 0, "comp", "list");
	expect(&q, 1, "prefix", "a b/c");
	expect(&q, 2, "restype", "container");
	expect(&q, 3, "restype", "z");
	rs_query_release(&q);
}

static void test_limits(void **state)
{
	struct rs_query q = RS_QUERY_INIT;

	(void)state;
	assert_int_equal(rs_query_parse(&q, NULL, 0, 4), 0);
	assert_int_equal(q.n, 0);
	assert_int_equal(rs_query_parse(&q, "", 0, 4), 0);
	assert_int_equal(rs_query_parse(&q, "a&b&c&d&e", 0, 4), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "the query has more than 4 parameters"));
	rs_query_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigv4_order),
		cmocka_unit_test(test_azure_order),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
