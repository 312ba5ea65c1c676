/*
 * Unit tests of src/runs/stats.c: flattening of stats JSON, the streaming
 * CSV summary, file roles, and the caps on untrusted input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runs/stats.h"
#include "results/error.h"

static char *write_tmp(const char *text)
{
	char tmpl[] = "/tmp/rs-test-stats-XXXXXX";
	int fd = mkstemp(tmpl);
	size_t n = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	close(fd);
	return strdup(tmpl);
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void test_flatten_nested(void **state)
{
	const char *text = "{\"rows\": 1000, \"mem\": {\"peak\": 2.5, \"unit\": \"GB\"},"
			   " \"ok\": true, \"skip\": null, \"steps\": [10, 20]}";
	json_t *out = json_object();

	assert_int_equal(rs_stats_flatten_json(out, NULL, text, strlen(text), "t"), 0);
	assert_true(num(out, "rows") == 1000);
	assert_true(num(out, "mem.peak") == 2.5);
	assert_string_equal(json_string_value(json_object_get(out, "mem.unit")), "GB");
	assert_true(num(out, "ok") == 1);
	assert_null(json_object_get(out, "skip"));
	assert_true(num(out, "steps.1") == 20);
	assert_int_equal(json_object_size(out), 6);

	/* with a prefix */
	json_object_clear(out);
	assert_int_equal(rs_stats_flatten_json(out, "args", "{\"n\":3}", 7, "t"), 0);
	assert_true(num(out, "args.n") == 3);
	json_decref(out);
}

static void test_flatten_refuses(void **state)
{
	json_t *out = json_object();
	struct { const char *text; int code; } cases[] = {
		{ "[1,2]", RS_ECORRUPT },
		{ "{\"a\":", RS_ECORRUPT },
		{ "42", RS_ECORRUPT },
		{ "{\"a\":1,\"a\":2}", RS_ECORRUPT },
	};
	char deep[200] = "";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(rs_stats_flatten_json(out, NULL, cases[i].text,
						       strlen(cases[i].text), "t"),
				 cases[i].code);
	/* nesting deeper than the cap */
	for (int i = 0; i < 20; i++)
		strcat(deep, "{\"a\":");
	strcat(deep, "1");
	for (int i = 0; i < 20; i++)
		strcat(deep, "}");
	assert_int_equal(rs_stats_flatten_json(out, NULL, deep, strlen(deep), "t"), RS_EUSAGE);
	/* too many keys */
	{
		char *big = malloc(RS_STATS_MAX_KEYS * 16 + 64);
		size_t n = 0;

		n += sprintf(big + n, "{");
		for (int i = 0; i <= RS_STATS_MAX_KEYS; i++)
			n += sprintf(big + n, "%s\"k%d\":1", i ? "," : "", i);
		sprintf(big + n, "}");
		json_object_clear(out);
		assert_int_equal(rs_stats_flatten_json(out, NULL, big, strlen(big), "t"),
				 RS_EUSAGE);
		free(big);
	}
	json_decref(out);
}

static void test_csv_summary(void **state)
{
	char *path = write_tmp("time,rss_mb,phase\n"
			       "0.5,100,load\r\n"
			       "\n"
			       "1.0,300,\"run, fast\"\n"
			       "1.5,200,done\n");
	json_t *out = json_object();

	assert_int_equal(rs_stats_read_csv_file(out, "pop", path), 0);
	assert_true(num(out, "pop.time.last") == 1.5);
	assert_true(num(out, "pop.time.max") == 1.5);
	assert_true(num(out, "pop.time.mean") == 1.0);
	assert_true(num(out, "pop.rss_mb.max") == 300);
	assert_true(num(out, "pop.rss_mb.mean") == 200);
	assert_string_equal(json_string_value(json_object_get(out, "pop.phase.last")), "done");
	assert_null(json_object_get(out, "pop.phase.max"));
	unlink(path);
	free(path);
	json_decref(out);
}

static void test_csv_refuses(void **state)
{
	char *empty = write_tmp("");
	char *quote = write_tmp("a,b\n1,\"oops\n");
	json_t *out = json_object();
	char *longline;
	char *lp;

	assert_int_equal(rs_stats_read_csv_file(out, "x", empty), RS_ECORRUPT);
	assert_int_equal(rs_stats_read_csv_file(out, "x", quote), RS_ECORRUPT);
	assert_int_equal(rs_stats_read_csv_file(out, "x", "/nonexistent/x.csv"), RS_ENOTFOUND);
	longline = malloc(RS_STATS_MAX_CSV_LINE + 100);
	memset(longline, 'a', RS_STATS_MAX_CSV_LINE + 10);
	longline[RS_STATS_MAX_CSV_LINE + 10] = '\0';
	lp = write_tmp(longline);
	assert_int_equal(rs_stats_read_csv_file(out, "x", lp), RS_EUSAGE);
	unlink(empty);
	unlink(quote);
	unlink(lp);
	free(empty);
	free(quote);
	free(lp);
	free(longline);
	json_decref(out);
}

static void test_roles_and_stems(void **state)
{
	char stem[64];

	assert_string_equal(rs_stats_file_role("a.pyisession"), "session");
	assert_string_equal(rs_stats_file_role("a.stats.json"), "stats");
	assert_string_equal(rs_stats_file_role("a.args.json"), "args");
	assert_string_equal(rs_stats_file_role("a.logged-stats.csv"), "logged-stats");
	assert_string_equal(rs_stats_file_role("a.HTML"), "html");
	assert_string_equal(rs_stats_file_role("notes.txt"), "other");
	assert_int_equal(rs_stats_file_stem(stem, sizeof(stem), "pop1k.logged-stats.csv"), 0);
	assert_string_equal(stem, "pop1k");
	assert_int_equal(rs_stats_file_stem(stem, sizeof(stem), "notes.txt"), 0);
	assert_string_equal(stem, "notes.txt");
	assert_int_equal(rs_stats_file_stem(stem, 4, "pop1k.stats.json"), RS_EUSAGE);
}

static void test_numbers(void **state)
{
	json_t *stats = json_pack("{s:i, s:s, s:f}", "a", 1, "b", "x", "c", 2.5);
	json_t *m = json_object();

	assert_int_equal(rs_stats_numbers(m, stats), 0);
	assert_int_equal(json_object_size(m), 2);
	assert_null(json_object_get(m, "b"));
	json_decref(stats);
	json_decref(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flatten_nested),
		cmocka_unit_test(test_flatten_refuses),
		cmocka_unit_test(test_csv_summary),
		cmocka_unit_test(test_csv_refuses),
		cmocka_unit_test(test_roles_and_stems),
		cmocka_unit_test(test_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
