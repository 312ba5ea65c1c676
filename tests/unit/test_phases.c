/*
 * session/phases.h: phase times counted once per sample whatever the
 * recursion, a phase as the union of the functions its spec matches, the
 * default rule (through wrappers to the first split), the timeline's
 * bounded slices, and refused configurations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "results/buf.h"
#include "session/phases.h"
#include "session/summary.h"

/* A session of `n` records: frames as "fn\0file.py\0line" strings. */
static void add_record(struct rs_buf *b, const char *const *stack, size_t depth, double t,
		       int first)
{
	assert_int_equal(rs_buf_puts(b, first ? "" : ","), 0);
	assert_int_equal(rs_buf_puts(b, "[["), 0);
	for (size_t i = 0; i < depth; i++)
		assert_int_equal(rs_buf_printf(b, "%s\"%s\"", i ? "," : "", stack[i]), 0);
	assert_int_equal(rs_buf_printf(b, "],%.6f]", t), 0);
}

static json_t *phases_of(const char *session, size_t len, const char *config_text)
{
	struct rs_summary *sum = NULL;
	struct rs_phases *ph = NULL;
	struct rs_session_callbacks cb;
	struct rs_summary_options opts;
	json_t *config = config_text ? json_loads(config_text, 0, NULL) : NULL, *out = NULL;

	assert_int_equal(rs_phases_new(&ph, config), 0);
	rs_phases_callbacks(ph, &cb);
	memset(&opts, 0, sizeof(opts));
	opts.chain = &cb;
	assert_int_equal(rs_summary_new(&sum, &opts), 0);
	assert_int_equal(rs_summary_feed(sum, session, len), 0);
	assert_int_equal(rs_summary_finish(sum), 0);
	assert_int_equal(rs_phases_json(ph, rs_summary_parser(sum), &out), 0);
	rs_summary_free(sum);
	rs_phases_free(ph);
	json_decref(config);
	return out;
}

static double total(const json_t *o, const char *name)
{
	return json_number_value(json_object_get(json_object_get(o, "totals"), name));
}

#define F(fn) #fn "\\u0000m.py\\u00001"

static void test_config_recursion_and_union(void **state)
{
	struct rs_buf b = RS_BUF_INIT;
	/* run -> step -> step (recursion) ; run -> parse_a ; run -> parse_b */
	const char *rec[] = { F(main), F(run), F(step), F(step), F(leaf) };
	const char *pa[] = { F(main), F(run), F(parse_a) };
	const char *pb[] = { F(main), F(run), F(parse_b) };
	json_t *o;

	(void)state;
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\":["), 0);
	add_record(&b, rec, 5, 1.0, 1);
	add_record(&b, pa, 3, 0.25, 0);
	add_record(&b, pb, 3, 0.5, 0);
	assert_int_equal(rs_buf_puts(&b, "]}"), 0);
	o = phases_of(b.ptr, b.len,
		      "{\"steps\": \"step\", \"logs\": \"m.py:parse_a\", \"none\": \"Nope.step\"}");
	/* recursion: counted once, not twice */
	assert_true(fabs(total(o, "steps") - 1.0) < 1e-9);
	assert_true(fabs(total(o, "logs") - 0.25) < 1e-9);
	/* a class that never ran matches nothing */
	assert_true(total(o, "none") == 0);
	assert_true(fabs(json_number_value(json_object_get(o, "other")) - 0.5) < 1e-9);
	assert_string_equal(json_string_value(json_object_get(o, "source")), "config");
	json_decref(o);
	rs_buf_release(&b);
}

static void test_default_through_wrappers(void **state)
{
	struct rs_buf b = RS_BUF_INIT;
	const char *sim[] = { F(thread), F(module), F(main), F(run), F(simulate), F(event) };
	const char *init[] = { F(thread), F(module), F(main), F(run), F(initialise) };
	const char *tiny[] = { F(thread), F(module), F(main), F(run), F(tiny) };
	json_t *o, *names;

	(void)state;
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\":["), 0);
	for (int i = 0; i < 100; i++)
		add_record(&b, sim, 6, 0.01, i == 0);
	for (int i = 0; i < 30; i++)
		add_record(&b, init, 5, 0.01, 0);
	add_record(&b, tiny, 5, 0.0001, 0); /* under 1%: "other" */
	assert_int_equal(rs_buf_puts(&b, "]}"), 0);
	o = phases_of(b.ptr, b.len, NULL);
	assert_string_equal(json_string_value(json_object_get(o, "under")), "run");
	names = json_object_get(o, "names");
	assert_int_equal(json_array_size(names), 2);
	assert_string_equal(json_string_value(json_array_get(names, 0)), "simulate");
	assert_string_equal(json_string_value(json_array_get(names, 1)), "initialise");
	assert_true(fabs(json_number_value(json_object_get(o, "other")) - 0.0001) < 1e-6);
	json_decref(o);
	rs_buf_release(&b);
}

/* A long run: the timeline stays within its slices, and holds all the time. */
static void test_timeline_bounded(void **state)
{
	struct rs_buf b = RS_BUF_INIT;
	const char *a[] = { F(main), F(a) };
	const char *c[] = { F(main), F(c) };
	json_t *o, *rows;
	double sum = 0, last_t = -1;
	size_t i;
	json_t *row;

	(void)state;
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\":["), 0);
	/* 1000 s: a for the first half, c for the second */
	for (int k = 0; k < 10000; k++)
		add_record(&b, k < 5000 ? a : c, 2, 0.1, k == 0);
	assert_int_equal(rs_buf_puts(&b, "]}"), 0);
	o = phases_of(b.ptr, b.len, "{\"a\": \"a\", \"c\": \"c\"}");
	rows = json_object_get(json_object_get(o, "timeline"), "rows");
	assert_true(json_array_size(rows) <= RS_PHASES_MAX_SLICES);
	assert_true(json_array_size(rows) >= RS_PHASES_MAX_SLICES / 2);
	json_array_foreach(rows, i, row) {
		double t = json_number_value(json_array_get(row, 0));

		assert_true(t > last_t);
		last_t = t;
		sum += json_number_value(json_array_get(row, 1)) + json_number_value(json_array_get(row, 2));
		/* a first, then c: no slice of the first third holds c */
		if (i < json_array_size(rows) / 3)
			assert_true(json_number_value(json_array_get(row, 2)) == 0);
	}
	assert_true(fabs(sum - 1000.0) < 1e-3);
	json_decref(o);
	rs_buf_release(&b);
}

static void test_bad_configs(void **state)
{
	const char *bad[] = {
		"[\"x\"]", "{\"bad name\": \"f\"}", "{\"a\": 3}", "{\"a\": \"\"}", "{\"a\": \"Cls.\"}",
		"{\"a\": \"file.py:\"}",
	};
	struct rs_phases *ph = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *c = json_loads(bad[i], JSON_DECODE_ANY, NULL);

		assert_non_null(c);
		assert_int_equal(rs_phases_new(&ph, c), RS_EUSAGE);
		assert_null(ph);
		json_decref(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_recursion_and_union),
		cmocka_unit_test(test_default_through_wrappers),
		cmocka_unit_test(test_timeline_bounded),
		cmocka_unit_test(test_bad_configs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
