/*
 * results/watch.h: the warning counter fed with a command's standard
 * error in arbitrary pieces, and the measurement of a real child
 * process tree (CPU time, memory, exit status, signals).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "results/watch.h"

static uint64_t count_of(const struct rs_watch_report *rep, const char *name)
{
	for (size_t i = 0; i < rep->ncategories; i++)
		if (strcmp(rep->categories[i].name, name) == 0)
			return rep->categories[i].count;
	return 0;
}

/* Feed `text` in pieces of `step` bytes. */
static void feed(struct rs_watch_report *rep, const char *text, size_t step)
{
	char line[256];
	size_t used = 0, len = strlen(text);

	for (size_t off = 0; off < len; off += step) {
		size_t n = len - off < step ? len - off : step;

		assert_int_equal(rs_watch_scan_stderr(rep, line, sizeof(line), &used, text + off, n, 0), 0);
	}
	assert_int_equal(rs_watch_scan_stderr(rep, line, sizeof(line), &used, "", 0, 1), 0);
}

static const char python_stderr[] =
	"/m/model.py:3: DeprecationWarning: old API\n"
	"  warnings.warn(\"old API\", DeprecationWarning)\n"
	"/usr/lib/python3/dist-packages/pandas/core/frame.py:1234: FutureWarning: x\n"
	"Traceback mentions RuntimeWarning: but not as a warning line\n"
	"a.py:9: pkg.sub.CustomWarning: dotted category\n"
	"b.py:10: Warning: the base class\n"
	"c.py:x: UserWarning: no line number, not a warning line\n"
	"d.py:11: UserWarning: last line without newline";

static void test_categories_in_any_pieces(void **state)
{
	(void)state;
	for (size_t step = 1; step <= sizeof(python_stderr); step += 7) {
		struct rs_watch_report rep;

		rs_watch_report_init(&rep);
		feed(&rep, python_stderr, step);
		assert_int_equal(rep.warnings, 5);
		assert_int_equal(count_of(&rep, "DeprecationWarning"), 1);
		assert_int_equal(count_of(&rep, "FutureWarning"), 1);
		assert_int_equal(count_of(&rep, "pkg.sub.CustomWarning"), 1);
		assert_int_equal(count_of(&rep, "UserWarning"), 1);
		assert_int_equal(count_of(&rep, "RuntimeWarning"), 0);
		/* "Warning" alone is seven letters: a category too */
		assert_int_equal(count_of(&rep, "Warning"), 1);
		rs_watch_report_release(&rep);
	}
}

/* A line longer than the buffer is judged on its start; the next is whole. */
static void test_long_lines_and_cap(void **state)
{
	struct rs_watch_report rep;
	char big[4096 + 64];
	char name[32];

	(void)state;
	rs_watch_report_init(&rep);
	memset(big, 'x', sizeof(big));
	memcpy(big, "f.py:1: UserWarning: ", 21);
	big[sizeof(big) - 1] = '\n';
	{
		char line[64];
		size_t used = 0;

		assert_int_equal(rs_watch_scan_stderr(&rep, line, sizeof(line), &used, big,
						      sizeof(big), 0), 0);
		assert_int_equal(used, 0);
	}
	assert_int_equal(rep.warnings, 1);
	/* more categories than kept: counted all the same, as "other" */
	for (int i = 0; i < RS_WATCH_CATEGORIES_MAX + 5; i++) {
		char l[80];

		snprintf(name, sizeof(name), "C%dWarning", i);
		snprintf(l, sizeof(l), "f.py:1: %s: m\n", name);
		feed(&rep, l, 5);
	}
	assert_int_equal(rep.ncategories, RS_WATCH_CATEGORIES_MAX);
	assert_int_equal(rep.warnings, 1 + RS_WATCH_CATEGORIES_MAX + 5);
	assert_int_equal(rep.warnings_other, 6); /* UserWarning took one slot */
	rs_watch_report_release(&rep);
}

static void test_measures_a_real_child(void **state)
{
	struct rs_watch_report rep;
	struct rs_watch_opts o = { 20, 2 };
	/* burns 0.3 s of CPU time (not wall time: a loaded machine gives the
	   same figure) in a grandchild, then exits 5 */
	char *argv[] = { "sh", "-c",
			 "python3 -c 'import time\nt = time.process_time()\n"
			 "while time.process_time() - t < 0.3: pass'; exit 5", NULL };

	(void)state;
	rs_watch_report_init(&rep);
	assert_int_equal(rs_watch_run(&rep, argv, &o), 0);
	assert_int_equal(rep.exit_status, 5);
	assert_int_equal(rep.signal, 0);
	assert_true(rep.user_s + rep.sys_s >= 0.3);
	assert_true(rep.wall_s >= 0.3);
	assert_true(rep.processes_seen >= 1);
	assert_true(rep.ntimeline >= 5);
	assert_true(rep.peak_rss_bytes > 0);
	rs_watch_report_release(&rep);
}

static void test_signal_and_missing_command(void **state)
{
	struct rs_watch_report rep;
	char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	char *missing[] = { "/nonexistent/program", NULL };

	(void)state;
	rs_watch_report_init(&rep);
	assert_int_equal(rs_watch_run(&rep, killed, NULL), 0);
	assert_int_equal(rep.signal, 15);
	assert_int_equal(rep.exit_status, 128 + 15);
	rs_watch_report_release(&rep);
	rs_watch_report_init(&rep);
	assert_int_equal(rs_watch_run(&rep, missing, NULL), RS_ENOTFOUND);
	assert_int_equal(rep.exit_status, 127);
	rs_watch_report_release(&rep);
}

/* The timeline: a point per interval, in time order, within its cap. */
static void test_timeline_ordered(void **state)
{
	struct rs_watch_report rep;
	struct rs_watch_opts o = { 10, 1 };
	char *argv[] = { "sleep", "0.5", NULL };

	(void)state;
	rs_watch_report_init(&rep);
	assert_int_equal(rs_watch_run(&rep, argv, &o), 0);
	assert_true(rep.ntimeline <= RS_WATCH_TIMELINE_MAX);
	assert_true(rep.ntimeline >= 10);
	for (size_t i = 1; i < rep.ntimeline; i++)
		assert_true(rep.timeline[i].t_s > rep.timeline[i - 1].t_s);
	rs_watch_report_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_categories_in_any_pieces),
		cmocka_unit_test(test_long_lines_and_cap),
		cmocka_unit_test(test_measures_a_real_child),
		cmocka_unit_test(test_signal_and_missing_command),
		cmocka_unit_test(test_timeline_ordered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
