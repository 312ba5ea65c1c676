/*
 * Unit tests of the analysis layer on run records built here, without
 * git: diff (metrics, functions, renames, workload), the noise-aware
 * check, change points, trends and the renderers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/check.h"
#include "analysis/diff.h"
#include "analysis/html.h"
#include "analysis/owncode.h"
#include "analysis/render.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "runrec/runrec.h"
#include "runrec/runrec_json.h"
#include "session/summary.h"
#include "results/error.h"

/* A function row: name, file, line, own seconds, total seconds. */
struct fn {
	const char *name;
	const char *file;
	int line;
	double self;
	double total;
};

/*
 * A run record in the shape of run.json format 1. Samples are taken at
 * 1 ms, so self_samples = self * 1000 and the share of a function is its
 * own time over the duration.
 */
static json_t *make_run(const char *id, const char *commit, const char *runner,
			double duration, double months, const struct fn *fns, size_t n)
{
	json_t *run = json_object(), *metrics = json_object(), *stats = json_object();
	json_t *summary = json_object(), *funcs = json_array(), *machine = json_object();
	size_t i;

	json_object_set_new(run, "format", json_integer(1));
	json_object_set_new(run, "id", json_string(id));
	json_object_set_new(run, "commit", json_string(commit));
	json_object_set_new(run, "branch", json_string("main"));
	json_object_set_new(machine, "runner", json_string(runner));
	json_object_set_new(machine, "hostname", json_string(runner));
	json_object_set_new(machine, "cpu_model", json_string("Test CPU"));
	json_object_set_new(run, "machine", machine);
	json_object_set_new(metrics, "duration", json_real(duration));
	json_object_set_new(metrics, "cpu_time", json_real(duration * 0.98));
	json_object_set_new(metrics, "samples", json_integer((json_int_t)(duration * 1000)));
	json_object_set_new(metrics, "mem.peak_mb", json_real(512));
	if (months > 0) {
		json_object_set_new(stats, "sim.months", json_real(months));
		json_object_set_new(metrics, "sim.months", json_real(months));
	}
	json_object_set_new(run, "metrics", metrics);
	json_object_set_new(run, "stats", stats);
	json_object_set_new(summary, "duration", json_real(duration));
	json_object_set_new(summary, "samples", json_integer((json_int_t)(duration * 1000)));
	json_object_set_new(summary, "sampled_time", json_real(duration));
	for (i = 0; i < n; i++) {
		json_t *f = json_object();

		json_object_set_new(f, "function", json_string(fns[i].name));
		json_object_set_new(f, "file", json_string(fns[i].file));
		json_object_set_new(f, "line", json_integer(fns[i].line));
		json_object_set_new(f, "self", json_real(fns[i].self));
		json_object_set_new(f, "total", json_real(fns[i].total));
		json_object_set_new(f, "self_samples", json_integer((json_int_t)(fns[i].self * 1000)));
		json_object_set_new(f, "total_samples", json_integer((json_int_t)(fns[i].total * 1000)));
		json_array_append_new(funcs, f);
	}
	json_object_set_new(summary, "functions", funcs);
	json_object_set_new(run, "summary", summary);
	return run;
}

/* The usual model: 10 s in three functions. `scale` multiplies work. */
static json_t *model_run(const char *id, const char *commit, double scale)
{
	const struct fn fns[] = {
		{ "main", "model/run.py", 1, 0.5 * scale, 10 * scale },
		{ "step", "model/sim.py", 40, 6 * scale, 9.5 * scale },
		{ "apply_births", "model/births.py", 12, 3.5 * scale, 3.5 * scale },
	};

	return make_run(id, commit, "ci-1", 10 * scale, 12 * scale, fns, 3);
}

/* ---- the typed record of a run built here --------------------------------
 *
 * The tests build a run's JSON with only the keys each one is about; the
 * analysis takes the typed record (runrec/runrec.h). `typed` gives every
 * key run.json format 1 requires and a test left out its neutral value
 * (no stats, no session, a null header figure, an empty list...), then
 * decodes the object with the same strict decoder as every reader of a
 * committed run.json: a key a test spells differently from the format
 * fails the test, naming the key, instead of reading as "absent".
 */

static void put_default(json_t *o, const char *key, json_t *v)
{
	if (!json_object_get(o, key))
		json_object_set_new(o, key, v);
	else
		json_decref(v);
}

static void complete_node(json_t *node, unsigned depth)
{
	json_t *kids;
	size_t i;

	put_default(node, "function", json_string("?"));
	put_default(node, "file", json_string(""));
	put_default(node, "line", json_integer(0));
	put_default(node, "total", json_real(0));
	put_default(node, "self", json_real(0));
	put_default(node, "children", json_array());
	kids = json_object_get(node, "children");
	for (i = 0; depth < RS_RUNREC_MAX_TREE_DEPTH && i < json_array_size(kids); i++)
		if (json_is_object(json_array_get(kids, i)))
			complete_node(json_array_get(kids, i), depth + 1);
}

static void complete_summary(json_t *sum)
{
	json_t *fs, *more, *calls, *d = json_object_get(sum, "duration");
	size_t rows;

	put_default(sum, "layout", json_string("5"));
	put_default(sum, "start_time", json_null());
	put_default(sum, "duration", json_null());
	put_default(sum, "cpu_time", json_null());
	put_default(sum, "min_interval", json_null());
	put_default(sum, "max_interval", json_null());
	put_default(sum, "sample_count", json_null());
	put_default(sum, "target", json_null());
	put_default(sum, "samples", json_integer(0));
	put_default(sum, "sampled_time", json_real(json_is_number(d) ? json_number_value(d) : 0));
	put_default(sum, "distinct_frames", json_integer(0));
	put_default(sum, "sys_path", json_array());
	put_default(sum, "functions", json_array());
	put_default(sum, "files", json_array());
	put_default(sum, "tree", json_object());
	/* a function row is written whole (make_run): a key it lacks fails */
	fs = json_object_get(sum, "functions");
	if (json_is_object(json_object_get(sum, "tree")))
		complete_node(json_object_get(sum, "tree"), 0);
	more = json_object_get(sum, "more_functions");
	if (json_is_object(more)) {
		put_default(more, "floor", json_real(0));
		put_default(more, "files", json_array());
		put_default(more, "rows", json_array());
	}
	calls = json_object_get(sum, "calls");
	if (json_is_object(calls)) {
		put_default(calls, "version", json_integer(RS_RUNREC_CALLS_VERSION));
		put_default(calls, "floor", json_real(0));
		put_default(calls, "rows", json_array());
	}
	/* every function listed: the lists are whole unless a test says */
	rows = json_array_size(fs) + json_array_size(json_object_get(more, "rows"));
	put_default(sum, "distinct_functions", json_integer((json_int_t)rows));
}

/* `run` with every required key it lacks (in place). */
static void complete_run(json_t *run)
{
	json_t *m, *s, *sum;

	put_default(run, "format", json_integer(1));
	put_default(run, "id", json_string("run"));
	put_default(run, "commit", json_string("0000000"));
	put_default(run, "branch", json_string("main"));
	put_default(run, "trigger", json_string("ci"));
	put_default(run, "recorded_at", json_string("2026-11-30T09:30:12Z"));
	put_default(run, "message", json_null());
	put_default(run, "machine", json_object());
	put_default(run, "meta", json_object());
	put_default(run, "stats", json_object());
	put_default(run, "args", json_object());
	put_default(run, "metrics", json_object());
	put_default(run, "files", json_array());
	put_default(run, "session", json_null());
	put_default(run, "summary", json_null());
	m = json_object_get(run, "machine");
	if (json_is_object(m)) {
		put_default(m, "hostname", json_null());
		put_default(m, "os", json_null());
		put_default(m, "arch", json_null());
		put_default(m, "cpu_model", json_null());
		put_default(m, "cpus", json_integer(0));
		put_default(m, "runner", json_null());
	}
	s = json_object_get(run, "session");
	if (json_is_object(s)) {
		put_default(s, "path", json_string("session.pyisession"));
		put_default(s, "size", json_integer(0));
	}
	sum = json_object_get(run, "summary");
	if (json_is_object(sum))
		complete_summary(sum);
}

/* `run` completed, decoded: the caller's record. */
static rs_runrec *typed(json_t *run)
{
	rs_runrec *rec = NULL;

	assert_true(json_is_object(run));
	complete_run(run);
	if (rs_runrec_from_json(run, &rec) != 0)
		fail_msg("a run built here does not decode: %s", rs_error_message());
	return rec;
}

/* `n` runs' typed records, into `out` (the caller frees them with free_typed). */
static void typed_all(rs_runrec **out, json_t **runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = typed(runs[i]);
}

static void free_typed(rs_runrec **recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rs_runrec_free(recs[i]);
}

/* rs_diff_runs over the typed records of two runs built here. */
static int diff_runs(struct rs_diff **out, json_t *base, json_t *head,
		     const struct rs_diff_opts *opts)
{
	rs_runrec *b = typed(base), *h = typed(head);
	int err = rs_diff_runs(out, b, h, opts);

	rs_runrec_free(b);
	rs_runrec_free(h);
	return err;
}

/* The site's index of `n` runs built here: their typed records and their JSON. */
static int site_index(struct rs_buf *out, json_t **runs, size_t n, const struct rs_html_links *links)
{
	rs_runrec **recs = calloc(n + 1, sizeof(*recs));
	int err;

	assert_non_null(recs);
	typed_all(recs, runs, n);
	err = rs_html_site_index(out, (const rs_runrec *const *)recs, (const json_t *const *)runs, n,
				 NULL, links);
	free_typed(recs, n);
	free(recs);
	return err;
}

/* One run's page from its typed record and its JSON (what the report adds: path, check...). */
static int run_page(struct rs_buf *out, json_t *run, const struct rs_html_links *links)
{
	rs_runrec *rec = typed(run);
	int err = rs_html_run_page(out, rec, run, links);

	rs_runrec_free(rec);
	return err;
}

/* rs_check_run over typed records. */
static int check_run(struct rs_check_result **out, json_t *head, json_t *const *hist, size_t n,
		     const struct rs_check_opts *opts)
{
	rs_runrec **recs = calloc(n + 1, sizeof(*recs));
	rs_runrec *h;
	int err;

	assert_non_null(recs);
	h = typed(head);
	typed_all(recs, (json_t **)hist, n);
	err = rs_check_run(out, h, (const rs_runrec *const *)recs, n, opts);
	free_typed(recs, n);
	rs_runrec_free(h);
	free(recs);
	return err;
}

/* rs_trend_build over typed records, with each run's "path" and "check" verdict. */
static int trend_build(struct rs_trend **out, json_t *const *runs, size_t n,
		       const struct rs_trend_opts *opts)
{
	rs_runrec **recs = calloc(n + 1, sizeof(*recs));
	struct rs_trend_run *tr = calloc(n + 1, sizeof(*tr));
	int err;

	assert_non_null(recs);
	assert_non_null(tr);
	typed_all(recs, (json_t **)runs, n);
	for (size_t i = 0; i < n; i++) {
		const json_t *c = json_object_get(runs[i], "check");

		tr[i].rec = recs[i];
		tr[i].path = json_string_value(json_object_get(runs[i], "path"));
		tr[i].verdict = json_string_value(json_object_get(c, "verdict"));
		tr[i].verdict_text = json_string_value(json_object_get(c, "text"));
		tr[i].verdict_why = json_string_value(json_object_get(c, "why"));
	}
	err = rs_trend_build(out, tr, n, opts);
	free_typed(recs, n);
	free(recs);
	free(tr);
	return err;
}

static const struct rs_func_delta *find_func(const struct rs_diff *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_funcs; i++)
		if (!strcmp(d->funcs[i].function, name))
			return &d->funcs[i];
	return NULL;
}

static void test_metric_diff(void **state)
{
	json_t *a = model_run("r1", "aaaaaaa1", 1.0), *b = model_run("r2", "bbbbbbb2", 1.0);
	const struct rs_metric_delta *m;
	struct rs_diff *d = NULL;
	struct rs_diff_opts o = { NULL, 1, NULL };

	(void)state;
	json_object_set_new(json_object_get(b, "metrics"), "duration", json_real(11.0));
	json_object_set_new(json_object_get(b, "metrics"), "mem.peak_mb", json_real(640));
	assert_int_equal(diff_runs(&d, a, b, &o), 0);
	m = rs_diff_metric(d, "duration");
	assert_non_null(m);
	assert_true(fabs(m->abs - 1.0) < 1e-9);
	assert_true(fabs(m->rel - 0.1) < 1e-9);
	m = rs_diff_metric(d, "mem.peak_mb");
	assert_non_null(m);
	assert_true(fabs(m->rel - 0.25) < 1e-9);
	assert_null(rs_diff_metric(d, "duration/sim.months")); /* no_workload */
	/* headline metrics come first, in a fixed order */
	assert_string_equal(d->metrics[0].name, "duration");
	assert_string_equal(d->metrics[1].name, "cpu_time");
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

static void test_new_and_vanished(void **state)
{
	const struct fn base[] = {
		{ "main", "m.py", 1, 1, 10 },
		{ "old_helper", "m.py", 30, 2, 2 },
		{ "work", "w.py", 5, 7, 7 },
	};
	const struct fn head[] = {
		{ "main", "m.py", 1, 1, 11 },
		{ "work", "w.py", 5, 7, 7 },
		{ "validate", "v.py", 3, 3, 3 }, /* another file: new, not a rename */
	};
	json_t *a = make_run("r1", "a", "ci", 10, 0, base, 3);
	json_t *b = make_run("r2", "b", "ci", 11, 0, head, 3);
	const struct rs_func_delta *f;
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	f = find_func(d, "validate");
	assert_non_null(f);
	assert_int_equal(f->change, RS_FUNC_NEW);
	assert_true(fabs(f->head_self - 3) < 1e-9);
	assert_true(fabs(f->head_self_share - 3.0 / 11) < 1e-3);
	f = find_func(d, "old_helper");
	assert_non_null(f);
	assert_int_equal(f->change, RS_FUNC_VANISHED);
	f = find_func(d, "main");
	assert_int_equal(f->change, RS_FUNC_CHANGED);
	assert_true(fabs(f->head_total - 11) < 1e-9);
	/* sorted by |own time change|: validate (+3) and old_helper (-2) lead */
	assert_string_equal(d->funcs[0].function, "validate");
	assert_string_equal(d->funcs[1].function, "old_helper");
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

static void test_rename_detected(void **state)
{
	const struct fn base[] = {
		{ "main", "m.py", 1, 1, 10 },
		{ "compute_rates", "model/rates.py", 20, 4, 4 },
		{ "compute_rates", "model/other.py", 8, 1, 1 },
	};
	const struct fn head[] = {
		{ "main", "m.py", 1, 1, 10 },
		{ "calculate_rates", "model/rates.py", 20, 4.02, 4.02 },
		{ "compute_rates", "model/other.py", 9, 1, 1 }, /* moved a line */
	};
	json_t *a = make_run("r1", "a", "ci", 10, 0, base, 3);
	json_t *b = make_run("r2", "b", "ci", 10, 0, head, 3);
	struct rs_diff *d = NULL;
	size_t i, renamed = 0;

	(void)state;
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	for (i = 0; i < d->n_funcs; i++) {
		const struct rs_func_delta *f = &d->funcs[i];

		assert_int_not_equal(f->change, RS_FUNC_NEW);
		assert_int_not_equal(f->change, RS_FUNC_VANISHED);
		if (f->change == RS_FUNC_RENAMED) {
			renamed++;
			assert_string_equal(f->function, "calculate_rates");
			assert_string_equal(f->old_function, "compute_rates");
			assert_string_equal(f->file, "model/rates.py");
			assert_true(fabs(f->base_self - 4) < 1e-9);
		}
		if (!strcmp(f->file, "model/other.py")) {
			assert_int_equal(f->change, RS_FUNC_CHANGED);
			assert_int_equal(f->line, 9);
		}
	}
	assert_int_equal(renamed, 1);
	assert_int_equal(d->n_funcs, 3);
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

static void test_rename_needs_same_line(void **state)
{
	const struct fn base[] = { { "f", "x.py", 10, 1, 1 } };
	const struct fn head[] = { { "g", "x.py", 11, 1, 1 } };
	json_t *a = make_run("r1", "a", "ci", 1, 0, base, 1);
	json_t *b = make_run("r2", "b", "ci", 1, 0, head, 1);
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(d->n_funcs, 2);
	assert_non_null(find_func(d, "g"));
	assert_int_equal(find_func(d, "g")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f")->change, RS_FUNC_VANISHED);
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

static void test_workload_normalised(void **state)
{
	json_t *a = model_run("r1", "a", 1.0), *b = model_run("r2", "b", 2.0);
	const struct rs_metric_delta *m;
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_non_null(d->workload_key);
	assert_string_equal(d->workload_key, "sim.months");
	assert_true(fabs(d->head_workload - 24) < 1e-9);
	m = rs_diff_metric(d, "duration");
	assert_true(fabs(m->rel - 1.0) < 1e-9);
	m = rs_diff_metric(d, "duration/sim.months");
	assert_non_null(m);
	assert_true(m->normalised);
	assert_true(fabs(m->rel) < 1e-9);
	assert_true(fabs(m->base - 10.0 / 12) < 1e-9);
	rs_diff_free(d);

	/* --per picks a key explicitly; an unknown key means no normalising */
	{
		struct rs_diff_opts o = { "nonexistent", 0, NULL };

		assert_int_equal(diff_runs(&d, a, b, &o), 0);
		assert_null(d->workload_key);
		assert_null(rs_diff_metric(d, "duration/nonexistent"));
		rs_diff_free(d);
	}
	json_decref(a);
	json_decref(b);
}

/* History newest first; check of `head`. */
static struct rs_check_result *check(json_t *head, json_t **hist, size_t n,
				     const struct rs_check_opts *o)
{
	struct rs_check_result *r = NULL;

	assert_int_equal(check_run(&r, head, hist, n, o), 0);
	return r;
}

static json_t *noisy_run(const char *id, const char *commit, double factor)
{
	json_t *r = model_run(id, commit, 1.0);

	json_object_set_new(json_object_get(r, "metrics"), "duration", json_real(10 * factor));
	json_object_set_new(json_object_get(r, "metrics"), "cpu_time", json_real(9.8 * factor));
	return r;
}

static const struct rs_check_metric *check_metric(const struct rs_check_result *r,
						  const char *name)
{
	size_t i;

	for (i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].name, name))
			return &r->metrics[i];
	return NULL;
}

static void test_check_flags_new_function(void **state)
{
	const struct fn head_fns[] = {
		{ "main", "model/run.py", 1, 0.5, 11.1 },
		{ "step", "model/sim.py", 40, 6, 10.6 },
		{ "apply_births", "model/births.py", 12, 3.5, 3.5 },
		{ "check_invariants", "model/checks.py", 7, 1.1, 1.1 },
	};
	json_t *hist[3], *head;
	struct rs_check_result *r;
	struct rs_buf out = RS_BUF_INIT;
	const struct rs_func_delta *f;

	(void)state;
	hist[0] = model_run("r3", "c2", 1.0);
	hist[1] = model_run("r2", "c1", 1.0);
	hist[2] = model_run("r1", "c0", 1.0);
	head = make_run("r4", "c3", "ci-1", 11.1, 12, head_fns, 4);
	r = check(head, hist, 3, NULL);
	assert_true(r->regressed);
	assert_int_equal(r->n_baseline, 3); /* default: a window of the earlier commits' runs */
	assert_string_equal(r->baseline_commit, "c2");
	/* the same 12 months on both sides: one row per fact, no per-unit rows */
	assert_true(check_metric(r, "duration")->regressed);
	assert_true(check_metric(r, "duration")->gating);
	assert_null(check_metric(r, "duration/sim.months"));
	assert_null(r->workload_key);
	assert_string_equal(r->same_workload, "sim.months = 12");
	assert_true(r->n_responsible >= 1);
	f = &r->diff->funcs[r->responsible[0]];
	assert_string_equal(f->function, "check_invariants");
	assert_int_equal(f->change, RS_FUNC_NEW);
	/* and the reports name it */
	assert_int_equal(rs_render_check(&out, r, RS_FORMAT_TEXT), 0);
	assert_non_null(strstr(out.ptr, "REGRESSION"));
	assert_non_null(strstr(out.ptr, "check_invariants"));
	rs_buf_clear(&out);
	assert_int_equal(rs_render_check(&out, r, RS_FORMAT_MARKDOWN), 0);
	assert_non_null(strstr(out.ptr, "`check_invariants`"));
	assert_non_null(strstr(out.ptr, "| metric |"));
	rs_buf_clear(&out);
	assert_int_equal(rs_render_check(&out, r, RS_FORMAT_JSON), 0);
	{
		json_error_t je;
		json_t *j = json_loads(out.ptr, 0, &je);

		assert_non_null(j);
		assert_true(json_is_true(json_object_get(j, "regressed")));
		assert_string_equal(json_string_value(json_object_get(
			json_array_get(json_object_get(j, "responsible"), 0), "function")),
			"check_invariants");
		json_decref(j);
	}
	rs_buf_release(&out);
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 3; i++)
		json_decref(hist[i]);
}

static void test_check_noise_band(void **state)
{
	/* c1 ran three times with ~7% spread: that is what noise does here */
	json_t *hist[3], *head;
	struct rs_check_result *r;
	const struct rs_check_metric *m;

	(void)state;
	hist[0] = noisy_run("r3", "c1", 1.04);
	hist[1] = noisy_run("r2", "c1", 0.97);
	hist[2] = noisy_run("r1", "c1", 1.00);
	/* +6% over the median: beyond the 5% threshold, inside the band */
	head = noisy_run("r4", "c2", 1.06);
	r = check(head, hist, 3, NULL);
	m = check_metric(r, "duration");
	assert_non_null(m);
	assert_int_equal(m->n_base, 3);
	assert_true(m->band > 0.06);
	assert_true(fabs(m->rel - 0.06) < 1e-9);
	assert_false(m->regressed);
	assert_false(r->regressed);
	assert_int_equal(r->n_noise_runs, 3);
	rs_check_free(r);
	json_decref(head);

	/* +20%: beyond band and threshold */
	head = noisy_run("r4", "c2", 1.20);
	r = check(head, hist, 3, NULL);
	assert_true(r->regressed);
	rs_check_free(r);
	json_decref(head);

	/* without repeated runs the same +6% is a regression */
	head = noisy_run("r4", "c2", 1.06);
	r = check(head, &hist[2], 1, NULL);
	assert_true(r->regressed);
	assert_true(check_metric(r, "duration")->band == 0);
	rs_check_free(r);

	/* and a higher threshold lets it pass */
	{
		struct rs_check_opts o = { 0 };

		o.threshold = 0.10;
		r = check(head, &hist[2], 1, &o);
		assert_false(r->regressed);
		rs_check_free(r);
	}
	json_decref(head);
	for (size_t i = 0; i < 3; i++)
		json_decref(hist[i]);
}

static void test_check_rerun_same_commit_quiet(void **state)
{
	json_t *hist[3], *head;
	struct rs_check_result *r;

	(void)state;
	hist[0] = noisy_run("r3", "c1", 1.03);
	hist[1] = noisy_run("r2", "c1", 0.975);
	hist[2] = noisy_run("r1", "c0", 1.0);
	head = noisy_run("r4", "c1", 0.99);
	r = check(head, hist, 3, NULL);
	assert_false(r->regressed);
	/* the baseline is the previous commit, not the head's own re-runs */
	assert_int_equal(r->n_baseline, 1);
	assert_string_equal(r->baseline_commit, "c0");
	assert_int_equal(r->n_noise_runs, 3);
	rs_check_free(r);
	json_decref(head);

	/* a re-run of a slower commit stays flagged */
	head = noisy_run("r4", "c1", 1.30);
	json_object_set_new(json_object_get(hist[0], "metrics"), "duration", json_real(13.1));
	json_object_set_new(json_object_get(hist[1], "metrics"), "duration", json_real(12.9));
	r = check(head, hist, 3, NULL);
	assert_true(r->regressed);
	assert_string_equal(r->baseline_commit, "c0");
	rs_check_free(r);

	/* only runs of the head's commit: nothing to compare with */
	r = check(head, hist, 2, NULL);
	assert_false(r->regressed);
	assert_int_equal(r->n_baseline, 0);
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 3; i++)
		json_decref(hist[i]);
}

static void test_check_other_machine(void **state)
{
	json_t *hist[2], *head;
	struct rs_check_result *r = NULL;
	struct rs_check_opts o = { 0 };
	const struct fn fns[] = { { "main", "m.py", 1, 5, 5 } };

	(void)state;
	/* the newest run is from a fast runner; the older one from ours */
	hist[0] = make_run("r2", "c1", "fast-runner", 5, 12, fns, 1);
	hist[1] = model_run("r1", "c0", 1.0);
	head = model_run("r3", "c2", 1.0);
	r = check(head, hist, 2, NULL);
	assert_false(r->regressed);
	assert_int_equal(r->n_other_machine, 1);
	assert_string_equal(r->baseline_commit, "c0");
	rs_check_free(r);

	/* only other machines: nothing to compare, passes, says why */
	r = check(head, hist, 1, NULL);
	assert_false(r->regressed);
	assert_int_equal(r->n_baseline, 0);
	{
		struct rs_buf out = RS_BUF_INIT;

		assert_int_equal(rs_render_check(&out, r, RS_FORMAT_TEXT), 0);
		assert_non_null(strstr(out.ptr, "other machines"));
		rs_buf_release(&out);
	}
	rs_check_free(r);

	/* an explicit baseline from another machine is refused */
	o.explicit_baseline = 1;
	r = NULL;
	assert_int_equal(check_run(&r, head, hist, 1, &o),
			 RS_EUSAGE);
	assert_null(r);
	assert_non_null(strstr(rs_error_message(), "another machine"));
	json_decref(head);
	json_decref(hist[0]);
	json_decref(hist[1]);
}

static void test_check_more_work_not_flagged(void **state)
{
	json_t *hist[1], *head;
	struct rs_check_result *r;
	const struct rs_check_metric *m;

	(void)state;
	hist[0] = model_run("r1", "c1", 1.0);
	head = model_run("r2", "c2", 1.5); /* 18 months instead of 12 */
	r = check(head, hist, 1, NULL);
	assert_false(r->regressed);
	m = check_metric(r, "duration");
	assert_true(fabs(m->rel - 0.5) < 1e-9);
	assert_true(m->regressed);  /* slower in seconds ... */
	assert_false(m->gating);    /* ... but that is the extra work */
	m = check_metric(r, "duration/sim.months");
	assert_true(fabs(m->rel) < 1e-9);
	assert_false(m->regressed);
	rs_check_free(r);

	/* --no-workload would flag it */
	{
		struct rs_check_opts o = { 0 };

		o.no_workload = 1;
		r = check(head, hist, 1, &o);
		assert_true(r->regressed);
		rs_check_free(r);
	}
	json_decref(head);
	json_decref(hist[0]);
}

static void test_check_window_and_metrics(void **state)
{
	json_t *hist[4], *head;
	struct rs_check_result *r;
	struct rs_check_opts o = { 0 };
	const char *metrics[] = { "mem.peak_mb" };

	(void)state;
	hist[0] = noisy_run("r4", "c3", 1.0);
	hist[1] = noisy_run("r3", "c2", 1.0);
	hist[2] = noisy_run("r2", "c1", 1.3);
	hist[3] = noisy_run("r1", "c0", 1.3);
	head = noisy_run("r5", "c4", 1.0);
	json_object_set_new(json_object_get(head, "metrics"), "mem.peak_mb", json_real(700));
	o.window = 3;
	r = check(head, hist, 4, &o);
	assert_int_equal(r->n_baseline, 3);
	assert_false(r->regressed); /* median of 1.0, 1.0, 1.3 */
	rs_check_free(r);

	o.metrics = metrics;
	o.n_metrics = 1;
	r = check(head, hist, 4, &o);
	assert_int_equal(r->n_metrics, 1);
	assert_true(r->regressed);
	assert_string_equal(r->metrics[0].name, "mem.peak_mb");
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 4; i++)
		json_decref(hist[i]);
}

static void test_changepoint(void **state)
{
	double flat[] = { 1, 1, 1, 1, 1.2, 1.2, 1.2 };
	double noisy[] = { 10.1, 9.8, 10.2, 9.9, 10.0, 10.3, 11.2, 11.0, 11.3, 10.9 };
	double withnan[] = { 1, NAN, 1, 2, NAN, 2 };
	double two[] = { 1, 1, 1, 2, 2, 2, 1, 1, 1 };
	double noise_only[] = { 10.1, 9.8, 10.2, 9.9, 10.0, 10.3, 9.9, 10.1 };
	size_t cps[8];
	double step, rel;

	(void)state;
	assert_int_equal(rs_changepoint_best(flat, 7, &step, &rel), 4);
	assert_true(fabs(step - 0.2) < 1e-9);
	assert_true(fabs(rel - 0.2) < 1e-9);
	assert_int_equal(rs_changepoint_best(noisy, 10, &step, &rel), 6);
	assert_int_equal(rs_changepoint_best(withnan, 6, &step, &rel), 3);
	assert_int_equal(rs_changepoint_best(flat, 1, &step, &rel), 0);
	assert_int_equal(rs_changepoints(two, 9, 0.05, cps, 8), 2);
	assert_int_equal(cps[0], 3);
	assert_int_equal(cps[1], 6);
	assert_int_equal(rs_changepoints(noise_only, 8, 0.05, cps, 8), 0);
	{
		double appears[] = { 0, 0, 0, 0.31, 0.30, 0.33 };

		assert_int_equal(rs_changepoints(appears, 6, 0.05, cps, 8), 1);
		assert_int_equal(cps[0], 3);
	}
	assert_int_equal(rs_changepoints(noisy, 10, 0.05, cps, 8), 1);
	assert_int_equal(cps[0], 6);
	assert_true(isnan(rs_median(NULL, 0)));
}

static void test_trend(void **state)
{
	json_t *runs[5];
	struct rs_trend *t = NULL;
	const struct rs_series *s;
	struct rs_buf out = RS_BUF_INIT;
	const struct fn slow[] = {
		{ "main", "model/run.py", 1, 0.5, 12 },
		{ "step", "model/sim.py", 40, 8, 11.5 },
		{ "apply_births", "model/births.py", 12, 3.5, 3.5 },
	};
	size_t i;

	(void)state;
	runs[0] = model_run("r1", "c1", 1.0);
	runs[1] = model_run("r2", "c2", 1.0);
	runs[2] = make_run("r3", "c3", "ci-1", 12, 12, slow, 3);
	runs[3] = make_run("r4", "c4", "ci-1", 12, 12, slow, 3);
	runs[4] = make_run("r5", "c5", "ci-1", 12, 12, slow, 3);
	json_object_del(runs[4], "summary"); /* index line: metrics only */
	assert_int_equal(trend_build(&t, runs, 5, NULL), 0);
	assert_int_equal(t->n, 5);
	s = rs_trend_metric(t, "duration");
	assert_non_null(s);
	assert_true(fabs(s->v[2] - 12) < 1e-9);
	assert_true(s->n_changes >= 1);
	assert_int_equal(s->changes[0], 2);
	assert_non_null(rs_trend_metric(t, "duration/sim.months"));
	assert_int_equal(t->n_funcs, 3);
	assert_string_equal(t->funcs[0].function, "step"); /* heaviest own time */
	assert_true(fabs(t->funcs[0].v[2] - 8) < 1e-9);
	assert_true(isnan(t->funcs[0].v[4]));
	assert_int_equal(rs_render_trend(&out, t, RS_FORMAT_JSON), 0);
	{
		json_t *j = json_loads(out.ptr, 0, NULL);

		assert_non_null(j);
		assert_int_equal(json_array_size(json_object_get(j, "runs")), 5);
		json_decref(j);
	}
	rs_buf_clear(&out);
	assert_int_equal(rs_render_trend(&out, t, RS_FORMAT_TEXT), 0);
	assert_non_null(strstr(out.ptr, "change point"));
	rs_buf_release(&out);
	rs_trend_free(t);

	/* a named function only */
	{
		struct rs_trend_opts o = { 0 };
		const char *fn[] = { "apply_births" };

		o.functions = fn;
		o.n_functions = 1;
		assert_int_equal(trend_build(&t, runs, 5, &o), 0);
		assert_int_equal(t->n_funcs, 1);
		assert_string_equal(t->funcs[0].function, "apply_births");
		rs_trend_free(t);
	}
	for (i = 0; i < 5; i++)
		json_decref(runs[i]);
}

static void test_render_diff(void **state)
{
	const struct fn base[] = {
		{ "main", "m.py", 1, 1, 10 },
		{ "compute_rates", "model/rates.py", 20, 4, 4 },
		{ "__init__", "model/person.py", 3, 5, 5 },
	};
	const struct fn head[] = {
		{ "main", "m.py", 1, 1, 10 },
		{ "calculate_rates", "model/rates.py", 20, 4, 4 },
		{ "__init__", "model/person.py", 3, 5, 5 },
	};
	json_t *a = make_run("r1", "aaaaaaaaaa", "ci", 10, 0, base, 3);
	json_t *b = make_run("r2", "bbbbbbbbbb", "ci", 10, 0, head, 3);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	enum rs_format f;

	(void)state;
	assert_int_equal(rs_format_parse(&f, "md"), 0);
	assert_int_equal(f, RS_FORMAT_MARKDOWN);
	assert_int_equal(rs_format_parse(&f, "yaml"), RS_EUSAGE);
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_MARKDOWN, 10), 0);
	assert_non_null(strstr(out.ptr, "Renamed functions"));
	assert_non_null(strstr(out.ptr, "`compute_rates` → `calculate_rates`"));
	assert_null(strstr(out.ptr, "New functions"));
	assert_non_null(strstr(out.ptr, "`aaaaaaa` → `bbbbbbb`"));
	rs_buf_clear(&out);
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_TEXT, 10), 0);
	assert_non_null(strstr(out.ptr, "compute_rates -> calculate_rates (rates.py:20)"));
	rs_buf_clear(&out);
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_JSON, 10), 0);
	{
		json_t *j = json_loads(out.ptr, 0, NULL), *fs;
		size_t i, renames = 0;

		assert_non_null(j);
		fs = json_object_get(j, "functions");
		for (i = 0; i < json_array_size(fs); i++)
			if (!strcmp(json_string_value(json_object_get(json_array_get(fs, i),
								      "change")), "renamed"))
				renames++;
		assert_int_equal(renames, 1);
		json_decref(j);
	}
	rs_buf_release(&out);
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}


static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (hay = strstr(hay, needle); hay; hay = strstr(hay + strlen(needle), needle))
		n++;
	return n;
}

/*
 * The site's verdict columns and the trend's marks from runs' "check"
 * objects: a regression's row by class and symbol, the change and its
 * metric, the link to the flame graph; untrusted text (a function name in
 * the verdict line, a forged verdict class) escaped or ignored; a run the
 * machine slowed is drawn hollow and listed, and is no evidence of a
 * change point in wall time.
 */
static void test_html_verdicts(void **state)
{
	static const char *const cls[6] = { "not-comparable", "no-change", "machine", "regression",
					    "<b>forged", "improvement" };
	struct rs_html_links links = { "runs/{id}.html", NULL, "runs/" };
	json_t *runs[6];
	struct rs_trend *t = NULL;
	struct rs_buf out = RS_BUF_INIT;
	const struct rs_series *d;
	size_t i;

	(void)state;
	for (i = 0; i < 6; i++) {
		char id[8], commit[16], diff[24];

		snprintf(id, sizeof(id), "r%zu", i);
		snprintf(commit, sizeof(commit), "c%zuabcdef", i);
		snprintf(diff, sizeof(diff), "r%zu.diff.html", i);
		runs[i] = model_run(id, commit, 1.0);
		json_object_set_new(runs[i], "path", json_string("runs/x"));
		json_object_set_new(runs[i], "recorded_at", json_string("2026-11-30T09:00:00Z"));
		json_object_set_new(runs[i], "diff_page", json_string(diff));
		json_object_set_new(runs[i], "check",
				    json_pack("{s:s,s:s,s:s,s:f,s:s,s:s*}", "verdict", cls[i], "label", cls[i],
					      "text", "+13% vs c1: <script>alert(1)</script> \"q\"",
					      "change", 0.131, "metric", i == 2 ? "cpu_time" : "duration",
					      "why", i == 2 ? "the machine was slower" : NULL));
	}
	/* the machine run's wall time doubled: no change point of its own */
	json_object_set_new(json_object_get(runs[2], "metrics"), "duration", json_real(2.1));
	assert_int_equal(site_index(&out, runs, 6, &links), 0);
	assert_int_equal(count(out.ptr, "<tr class=\"v-regression\" data-verdict=\"regression\">"), 1);
	assert_non_null(strstr(out.ptr, "<a href=\"runs/r3.diff.html\" title=\"+13% vs c1: &lt;script&gt;"));
	assert_non_null(strstr(out.ptr, "<span class=\"sym\">\xe2\x96\xb2</span> regression</a>"));
	assert_non_null(strstr(out.ptr, "+13.1% <span class=\"muted\">wall time</span>"));
	assert_non_null(strstr(out.ptr, "+13.1% <span class=\"muted\">CPU time</span>"));
	assert_null(strstr(out.ptr, "<script>alert"));
	assert_null(strstr(out.ptr, "forged"));          /* an unknown class is no verdict */
	assert_int_equal(count(out.ptr, "<tr>"), 2);     /* the header's and the forged run's */
	rs_buf_clear(&out);

	assert_int_equal(trend_build(&t, runs, 6, NULL), 0);
	d = rs_trend_metric(t, "duration");
	assert_non_null(d);
	assert_int_equal(d->n_changes, 0);
	assert_false(rs_trend_evidence(t, d, 2));
	assert_true(rs_trend_evidence(t, rs_trend_metric(t, "cpu_time"), 2));
	assert_non_null(t->left_out[2]);
	assert_null(t->left_out[0]);                     /* a first run is left out of nothing */
	assert_int_equal(rs_html_trend_page(&out, t, "T", &links), 0);
	assert_int_equal(count(out.ptr, "class=\"mk-regression\""), t->n_metrics + t->n_funcs);
	assert_int_equal(count(out.ptr, "class=\"mk-improvement\""), t->n_metrics + t->n_funcs);
	assert_int_equal(count(out.ptr, "class=\"pt out\""), t->n_metrics + t->n_funcs);
	assert_non_null(strstr(out.ptr, "<text class=\"tick\" x=\"78.0\" y=\"216\" text-anchor=\"middle\">c0abcde</text>"));
	assert_non_null(strstr(out.ptr, "<li>run <code>r2</code> (commit <code>c2abcde</code>): its wall time is no "
				      "baseline: the machine was slower</li>"));
	assert_null(strstr(out.ptr, "<script>alert"));
	rs_trend_free(t);
	rs_buf_release(&out);
	for (i = 0; i < 6; i++)
		json_decref(runs[i]);
}

static void test_html(void **state)
{
	json_t *runs[6], *tree, *kid, *kids;
	struct rs_trend *t = NULL;
	struct rs_buf out = RS_BUF_INIT;
	struct rs_html_links links = { "runs/{id}.html", "https://example.org/c/{commit}", NULL };
	const struct fn lam[] = { { "<lambda>", "model/a&b.py", 3, 1, 1 } };
	size_t i;

	(void)state;
	for (i = 0; i < 6; i++) {
		char id[8], commit[16];

		snprintf(id, sizeof(id), "r%zu", i);
		snprintf(commit, sizeof(commit), "c%zuabcdef", i);
		runs[i] = model_run(id, commit, 1.0);
		json_object_set_new(runs[i], "path", json_string("runs/x"));
		json_object_set_new(runs[i], "recorded_at", json_string("2026-11-30T09:00:00Z"));
		if (i >= 3)
			json_object_set_new(json_object_get(runs[i], "metrics"), "duration",
					    json_real(13));
	}
	assert_int_equal(trend_build(&t, runs, 6, NULL), 0);
	assert_int_equal(rs_html_trend_page(&out, t, "Trends <main>", &links), 0);
	assert_non_null(strstr(out.ptr, "<title>Trends &lt;main&gt;</title>"));
	/* one chart per series, one point per run and series */
	assert_int_equal(count(out.ptr, "<svg"), t->n_metrics + t->n_funcs);
	assert_int_equal(count(out.ptr, "<circle"), 6 * (t->n_metrics + t->n_funcs));
	assert_true(count(out.ptr, "class=\"cp\"") >= 1); /* duration steps at r3 */
	assert_non_null(strstr(out.ptr, "href=\"runs/r3.html\""));
	assert_non_null(strstr(out.ptr, "href=\"https://example.org/c/c3abcdef\""));
	assert_null(strstr(out.ptr, "<script src")); /* self-contained */
	rs_buf_clear(&out);

	assert_int_equal(site_index(&out, runs, 6, &links), 0);
	assert_int_equal(count(out.ptr, "<tr>"), 7);
	assert_non_null(strstr(out.ptr, "class=\"sortable\""));
	rs_buf_clear(&out);

	/* a run page: escaped names, a call tree as nested <details> */
	json_decref(runs[0]);
	runs[0] = make_run("r0", "c0", "ci", 1, 0, lam, 1);
	tree = json_pack("{s:s,s:s,s:i,s:f,s:f}", "function", "[root]", "file", "", "line", 0,
			 "total", 1.0, "self", 0.0);
	kid = json_pack("{s:s,s:s,s:i,s:f,s:f}", "function", "<lambda>", "file", "model/a&b.py",
			"line", 3, "total", 1.0, "self", 1.0);
	kids = json_array();
	json_array_append_new(kids, kid);
	json_object_set_new(tree, "children", kids);
	json_object_set_new(json_object_get(runs[0], "summary"), "tree", tree);
	assert_int_equal(run_page(&out, runs[0], &links), 0);
	assert_non_null(strstr(out.ptr, "&lt;lambda&gt;"));
	assert_null(strstr(out.ptr, "<lambda>"));
	assert_non_null(strstr(out.ptr, "model/a&amp;b.py"));
	assert_int_equal(count(out.ptr, "<details"), 1);
	assert_non_null(strstr(out.ptr, "Call tree"));
	/* a stat named like a session metric is not a second cpu_time */
	rs_buf_clear(&out);
	json_object_set_new(json_object_get(runs[0], "stats"), "cpu_time", json_real(99));
	assert_int_equal(run_page(&out, runs[0], &links), 0);
	assert_non_null(strstr(out.ptr, "<tr><td>stats.cpu_time <span class=\"muted\">(a stat, "
					"not the session's cpu_time under Metrics"));
	assert_int_equal(count(out.ptr, "<tr><td>cpu_time</td>"), 1);
	{
		rs_runrec *rec = typed(runs[0]);
		double v = 0;

		assert_true(rs_runview_metric(rec, "stats.cpu_time", &v));
		assert_true(v == 99);
		assert_true(rs_runview_metric(rec, "cpu_time", &v));
		assert_true(v != 99);
		rs_runrec_free(rec);
	}
	rs_buf_release(&out);
	rs_trend_free(t);
	for (i = 0; i < 6; i++)
		json_decref(runs[i]);
}

/* Stored summaries list only the top functions: a small function listed
 * on one side only is "not compared", a big one is really new/vanished. */
static void test_truncated_lists(void **state)
{
	struct fn base[60], head[60];
	char names[60][16];
	json_t *a, *b;
	struct rs_diff *d = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < 60; i++) {
		snprintf(names[i], sizeof(names[i]), "f%02zu", i);
		double t = pow(0.9, (double)i); /* own times fall off as in real runs */

		base[i] = (struct fn){ names[i], "m.py", (int)i + 1, t, t };
		head[i] = base[i];
	}
	/* head: the smallest (f59) fell off the list, f00 (the biggest) is
	 * gone for real, and a new small one appears at the bottom */
	head[59] = (struct fn){ "tiny_new", "n.py", 1, 0.003, 0.003 };
	head[0] = (struct fn){ "big_new", "n.py", 9, 0.99, 0.99 };
	a = make_run("r1", "a", "ci", 60, 0, base, 60);
	b = make_run("r2", "b", "ci", 60, 0, head, 60);
	json_object_set_new(json_object_get(a, "summary"), "distinct_functions", json_integer(500));
	json_object_set_new(json_object_get(b, "summary"), "distinct_functions", json_integer(500));
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(find_func(d, "big_new")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f00")->change, RS_FUNC_VANISHED);
	assert_null(find_func(d, "tiny_new"));
	assert_null(find_func(d, "f59"));
	assert_int_equal(d->n_uncompared, 2);
	rs_diff_free(d);

	/* complete lists (distinct_functions == rows): everything is compared */
	json_object_set_new(json_object_get(a, "summary"), "distinct_functions", json_integer(60));
	json_object_set_new(json_object_get(b, "summary"), "distinct_functions", json_integer(60));
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(find_func(d, "tiny_new")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f59")->change, RS_FUNC_VANISHED);
	assert_int_equal(d->n_uncompared, 0);
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

/* A base-class method seen with another subclass is the same function. */
static void test_class_is_incidental(void **state)
{
	json_t *a = model_run("r1", "a", 1.0), *b = model_run("r2", "b", 1.0);
	json_t *fa = json_array_get(json_object_get(json_object_get(a, "summary"), "functions"), 1);
	json_t *fb = json_array_get(json_object_get(json_object_get(b, "summary"), "functions"), 1);
	struct rs_diff *d = NULL;
	size_t i;

	(void)state;
	json_object_set_new(fa, "class", json_string("BirthEvent"));
	json_object_set_new(fb, "class", json_string("DeathEvent"));
	assert_int_equal(diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(d->n_funcs, 3);
	for (i = 0; i < d->n_funcs; i++)
		assert_int_equal(d->funcs[i].change, RS_FUNC_CHANGED);
	rs_diff_free(d);
	json_decref(a);
	json_decref(b);
}

/*
 * Committed files come from a clone. The analysis and the pages never
 * see odd JSON: the decoder refuses it, naming the key (a wrong type, a
 * renamed key, a call tree 10,000 levels deep); the deepest tree it
 * takes stops at the page's depth cap.
 */
static void test_odd_input(void **state)
{
	static const struct {
		const char *json, *key;
	} odd[] = {
		{ "{\"metrics\": [], \"stats\": 3, \"summary\": \"x\", \"machine\": []}", "'machine'" },
		{ "{\"metrics\": {\"duration\": \"slow\", \"cpu_time\": null}}", "'metrics.duration'" },
		{ "{\"id\": 5, \"commit\": []}", "'id'" },
		{ "{\"summary\": {\"functions\": [{\"function\": \"g\", \"file\": 3}]}}",
		  "'summary.functions[0].file'" },
		{ "{\"summary\": {\"functions\": [{\"function\": \"g\", \"file\": \"m.py\", \"line\": 1,"
		  " \"selff\": 1, \"total\": 1, \"self_samples\": 1, \"total_samples\": 1}]}}",
		  "summary.functions[0] lacks the required key 'self'" },
		{ "{\"stats\": {\"months\": [3]}}", "'stats.months'" },
	};
	const size_t n = sizeof(odd) / sizeof(odd[0]);
	json_t *deep, *node;
	struct rs_buf out = RS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < n; i++) {
		json_t *run = json_loads(odd[i].json, 0, NULL);
		rs_runrec *rec = NULL;

		assert_non_null(run);
		complete_run(run);
		assert_int_equal(rs_runrec_from_json(run, &rec), RS_ECORRUPT);
		assert_null(rec);
		if (!strstr(rs_error_message(), odd[i].key))
			fail_msg("odd record %zu: '%s' does not name %s", i, rs_error_message(),
				 odd[i].key);
		json_decref(run);
	}
	/* a call tree 10,000 levels deep is refused; 256 levels are read,
	 * and the page stops at its depth cap */
	for (int levels = 10000; levels >= RS_RUNREC_MAX_TREE_DEPTH; levels = levels == 10000 ?
	     RS_RUNREC_MAX_TREE_DEPTH : 0) {
		rs_runrec *rec = NULL;

		deep = json_pack("{s:{s:{s:f}}}", "summary", "tree", "total", 1.0);
		node = json_object_get(json_object_get(deep, "summary"), "tree");
		for (i = 0; i < (size_t)levels; i++) {
			json_t *kid = json_pack("{s:s,s:f}", "function", "f", "total", 1.0);

			json_object_set_new(node, "children", json_pack("[o]", kid));
			node = kid;
		}
		complete_run(deep);
		if (levels > RS_RUNREC_MAX_TREE_DEPTH) {
			assert_int_equal(rs_runrec_from_json(deep, &rec), RS_ECORRUPT);
		} else {
			assert_int_equal(rs_runrec_from_json(deep, &rec), 0);
			rs_buf_clear(&out);
			assert_int_equal(rs_html_run_page(&out, rec, deep, NULL), 0);
			assert_true(count(out.ptr, "<details") <= 64);
			rs_runrec_free(rec);
		}
		json_decref(deep);
	}
	rs_buf_release(&out);
}

/* Own code: the default rule and a project's list. */
static void test_owncode(void **state)
{
	const char *specs[] = { "src/popmodel/", "tlo" };
	struct rs_owncode oc = { specs, 2 };
	json_t *cfg = json_pack("{s:[s,i,s,s]}", "own_code", "a/", 3, "", "b");
	const char *got[4];

	(void)state;
	assert_true(rs_owncode_match(NULL, "/home/me/model/src/sim.py"));
	assert_false(rs_owncode_match(NULL, "/venv/lib/python3.11/site-packages/pandas/core/frame.py"));
	assert_false(rs_owncode_match(NULL, "/usr/lib/python3/dist-packages/numpy/core/x.py"));
	assert_false(rs_owncode_match(NULL, "/usr/lib/python3.11/tokenize.py"));
	assert_false(rs_owncode_match(NULL, "<built-in>"));
	assert_false(rs_owncode_match(NULL, "<thread>"));
	assert_false(rs_owncode_match(NULL, ""));
	assert_true(rs_owncode_match(&oc, "/ci/work/src/popmodel/events.py"));
	assert_true(rs_owncode_match(&oc, "/venv/lib/python3.11/site-packages/tlo/methods/x.py"));
	assert_true(rs_owncode_match(&oc, "/ci/work/tlo.py"));
	assert_false(rs_owncode_match(&oc, "/ci/work/tlonger/x.py"));
	assert_false(rs_owncode_match(&oc, "/ci/work/scripts/run.py"));
	assert_int_equal(rs_owncode_from_config(cfg, got, 4), 2);
	assert_string_equal(got[0], "a/");
	assert_string_equal(got[1], "b");
	json_decref(cfg);
}

/* A tree node {function, file, total, children}. */
static json_t *node(const char *fn, const char *file, double total, json_t *kids)
{
	return json_pack("{s:s,s:s,s:i,s:f,s:f,s:o}", "function", fn, "file", file, "line", 1,
			 "total", total, "self", 0.0, "children", kids ? kids : json_array());
}

/*
 * Attribution by total time: a new user function with 10 ms of its own
 * and 1 s in library code below it is named; the wrappers above it
 * (100% of both runs) and the library frame below it are not first.
 */
static void test_explain_by_total(void **state)
{
	const char *lib = "/venv/lib/python3.11/site-packages/pandas/frame.py";
	const struct fn bf[] = {
		{ "main", "/m/run.py", 1, 0.01, 10.0 },
		{ "step", "/m/sim.py", 5, 0.01, 6.0 },
		{ "apply", lib, 9, 3.0, 3.0 },
		{ "other", "/m/sim.py", 40, 3.9, 3.9 },
	};
	const struct fn hf[] = {
		{ "main", "/m/run.py", 1, 0.01, 11.0 },
		{ "step", "/m/sim.py", 5, 0.01, 7.0 },
		{ "apply", lib, 9, 3.99, 3.99 },
		{ "trace", "/m/sim.py", 60, 0.01, 1.0 },
		{ "other", "/m/sim.py", 40, 3.9, 3.9 },
	};
	json_t *b = make_run("b", "aaaa", "r", 10, 0, bf, 4);
	json_t *h = make_run("h", "bbbb", "r", 11, 0, hf, 5);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	size_t idx[4], n;

	(void)state;
	json_object_set_new(json_object_get(b, "summary"), "tree",
		node("[root]", "", 10, json_pack("[o]", node("main", "/m/run.py", 10, json_pack("[oo]",
			node("step", "/m/sim.py", 6, json_pack("[o]", node("apply", lib, 3, NULL))),
			node("other", "/m/sim.py", 3.9, NULL))))));
	json_object_set_new(json_object_get(h, "summary"), "tree",
		node("[root]", "", 11, json_pack("[o]", node("main", "/m/run.py", 11, json_pack("[oo]",
			node("step", "/m/sim.py", 7, json_pack("[oo]", node("apply", lib, 3, NULL),
				node("trace", "/m/sim.py", 1, json_pack("[o]", node("apply", lib, 0.99, NULL))))),
			node("other", "/m/sim.py", 3.9, NULL))))));
	assert_int_equal(diff_runs(&d, b, h, NULL), 0);
	n = rs_diff_explain(d, 1, 1, 0.2, idx, 4);
	/* apply (library) grew only under trace: not named again */
	assert_int_equal(n, 1);
	assert_string_equal(d->funcs[idx[0]].function, "trace");
	assert_int_equal(d->funcs[idx[0]].change, RS_FUNC_NEW);
	assert_true(d->funcs[idx[0]].own);
	/* step grew only through trace: a wrapper, not a culprit */
	for (size_t i = 0; i < n; i++)
		assert_string_not_equal(d->funcs[idx[i]].function, "step");
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_TEXT, 10), 0);
	assert_non_null(strstr(out.ptr, "culprits (where the added time appears, by calling context):\n"
					"  new call step -> trace (1 s), 9.1% of the run's sampled time\n"
					"      call path: … > step > trace\n"));
	/* main is a root frame, step a wrapper: neither is in the total-time rows */
	assert_non_null(strstr(out.ptr, "(left out: 1 root frame, 90% or more of both runs, "
					"and 1 caller whose change is that of a function they call)"));
	rs_buf_release(&out);
	rs_diff_free(d);
	json_decref(b);
	json_decref(h);
}

/* "ran" of a summary: the sorted 24-bit hashes of the functions given. */
static void set_ran(json_t *run, const struct fn *fns, size_t n)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t h[16];
	char text[16 * 4 + 1];
	size_t i, j;

	assert_true(n <= 16);
	for (i = 0; i < n; i++)
		h[i] = rs_summary_name_hash(fns[i].name, fns[i].file);
	for (i = 1; i < n; i++) /* insertion sort */
		for (j = i; j > 0 && h[j - 1] > h[j]; j--) {
			uint32_t x = h[j];

			h[j] = h[j - 1];
			h[j - 1] = x;
		}
	for (i = 0; i < n; i++) {
		text[4 * i] = b64[(h[i] >> 18) & 63];
		text[4 * i + 1] = b64[(h[i] >> 12) & 63];
		text[4 * i + 2] = b64[(h[i] >> 6) & 63];
		text[4 * i + 3] = b64[h[i] & 63];
	}
	text[4 * n] = 0;
	json_object_set_new(json_object_get(run, "summary"), "ran", json_string(text));
}

/*
 * With the set of functions that ran: a function missing from a stored
 * list but in the other run's set is "below the floor", never new; one
 * missing from the set is new; a gone and a new one nearby in one file
 * with a similar time are a probable rename.
 */
static void test_ran_below_and_probable_rename(void **state)
{
	const struct fn bf[] = {
		{ "main", "m/run.py", 1, 0.1, 10.0 },
		{ "old_name", "m/sim.py", 100, 0.5, 1.0 },
		{ "tiny", "m/sim.py", 300, 0.001, 0.001 }, /* ran, not stored */
	};
	const struct fn hf[] = {
		{ "main", "m/run.py", 1, 0.1, 10.0 },
		{ "new_name", "m/sim.py", 104, 0.5, 1.1 },
		{ "tiny", "m/sim.py", 300, 2.0, 2.0 },
		{ "fresh", "m/sim.py", 400, 2.0, 2.0 },
	};
	json_t *b = make_run("b", "aaaa", "r", 10, 0, bf, 2);
	json_t *h = make_run("h", "bbbb", "r", 10, 0, hf, 4);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	const struct rs_func_delta *f;

	(void)state;
	set_ran(b, bf, 3);
	set_ran(h, hf, 4);
	assert_int_equal(rs_summary_ran(json_object_get(b, "summary"), "tiny", "m/sim.py"), 1);
	assert_int_equal(rs_summary_ran(json_object_get(b, "summary"), "fresh", "m/sim.py"), 0);
	assert_int_equal(rs_summary_ran(json_object_get(b, "summary"), "tiny", "m/other.py"), 0);
	assert_int_equal(diff_runs(&d, b, h, NULL), 0);
	f = find_func(d, "new_name");
	assert_non_null(f);
	assert_int_equal(f->change, RS_FUNC_RENAMED);
	assert_true(f->probable);
	assert_string_equal(f->old_function, "old_name");
	f = find_func(d, "tiny");
	assert_non_null(f);
	assert_int_equal(f->change, RS_FUNC_CHANGED);
	assert_true(f->base_below > 0);
	f = find_func(d, "fresh");
	assert_non_null(f);
	assert_int_equal(f->change, RS_FUNC_NEW);
	assert_int_equal(d->n_below, 1);
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_TEXT, 10), 0);
	assert_non_null(strstr(out.ptr, "  old_name -> new_name (sim.py:104) (probably) "));
	assert_non_null(strstr(out.ptr, "  tiny (sim.py:300)                                    <10 ms     2 s "));
	rs_buf_release(&out);
	rs_diff_free(d);
	/* three times the time is not a rename */
	json_real_set(json_object_get(json_array_get(json_object_get(json_object_get(h, "summary"),
		"functions"), 1), "total"), 3.3);
	assert_int_equal(diff_runs(&d, b, h, NULL), 0);
	assert_int_equal(find_func(d, "new_name")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "old_name")->change, RS_FUNC_VANISHED);
	rs_diff_free(d);
	json_decref(b);
	json_decref(h);
}

/*
 * Issue 19: a function that ran on both sides but fell under the head's
 * stored floor (58.2 ms -> 31.1 ms in a 31.1 s run: 0.1%) is never shown
 * as 0 nor as -100%, and does not push a real change out of the own-time
 * table: it is ranked by the smallest change it can have had.
 */
static void test_below_floor_never_zero(void **state)
{
	const struct fn bf[] = {
		{ "main", "m/run.py", 1, 0.1, 30.0 },
		{ "real", "m/sim.py", 10, 0.5, 0.5 },
		{ "dropped", "m/sim.py", 50, 0.0582, 0.0582 },
	};
	const struct fn hf[] = {
		{ "main", "m/run.py", 1, 0.1, 31.1 },
		{ "real", "m/sim.py", 10, 0.53, 0.53 },
		{ "dropped", "m/sim.py", 50, 0.0311, 0.0311 }, /* ran, not stored */
	};
	json_t *b = make_run("b", "aaaa", "r", 30, 0, bf, 3);
	json_t *h = make_run("h", "bbbb", "r", 31.1, 0, hf, 2);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	const char *own, *real, *dropped;

	(void)state;
	set_ran(b, bf, 3);
	set_ran(h, hf, 3);
	assert_int_equal(diff_runs(&d, b, h, NULL), 0);
	assert_true(find_func(d, "dropped")->head_below > 0);
	assert_true(rs_func_self_change_min(find_func(d, "dropped")) < 0.03);
	assert_int_equal(rs_render_diff(&out, d, RS_FORMAT_TEXT, 10), 0);
	own = strstr(out.ptr, "Largest changes in own time");
	assert_non_null(own);
	real = strstr(own, "  real (sim.py:10)");
	dropped = strstr(own, "  dropped (sim.py:50)");
	assert_non_null(real);
	assert_non_null(dropped);
	assert_true(real < dropped);
	assert_non_null(strstr(dropped, "58.2 ms    <31.1 ms   -58.2 ms..-27.1 ms "));
	assert_null(strstr(out.ptr, "-100"));
	rs_buf_release(&out);
	rs_diff_free(d);
	json_decref(b);
	json_decref(h);
}

/*
 * Issue 19: `trend --function`: a name stored only in the compact list is
 * drawn, a rename (same file and first line) continues the series, total
 * time can be followed, and a name no run holds is an error.
 */
static void test_trend_function_names(void **state)
{
	const struct fn fns[] = {
		{ "main", "model/run.py", 1, 0.5, 10 },
		{ "step", "model/sim.py", 40, 6, 9.5 },
	};
	const char *names[] = { "get_squeeze_factors" }, *bad[] = { "no_such_function" };
	struct rs_trend_opts o = { .functions = names, .n_functions = 1 };
	struct rs_trend *t = NULL;
	json_t *runs[3];
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char id[8];

		snprintf(id, sizeof(id), "r%zu", i);
		runs[i] = make_run(id, id, "ci-1", 10, 12, fns, 2);
		/* 242 ms of total time, 12 ms own: only in the compact list */
		json_object_set_new(json_object_get(runs[i], "summary"), "more_functions",
			json_pack("{s:f,s:[s],s:[[s,i,i,i,i]]}", "floor", 0.001, "files",
				  "model/squeeze.py", "rows", i == 1 ? "get_squeeze_factors_v2"
								     : "get_squeeze_factors",
				  0, 30, 12000 + 1000 * (int)i, 242000 + 10000 * (int)i));
	}
	assert_int_equal(trend_build(&t, runs, 3, &o), 0);
	assert_int_equal(t->n_funcs, 1);
	assert_string_equal(t->funcs[0].function, "get_squeeze_factors");
	for (i = 0; i < 3; i++) /* r1 is the renamed one */
		assert_true(fabs(t->funcs[0].v[i] - (0.012 + 0.001 * (double)i)) < 1e-9);
	rs_trend_free(t);
	o.total = 1;
	assert_int_equal(trend_build(&t, runs, 3, &o), 0);
	assert_true(t->total);
	assert_true(fabs(t->funcs[0].v[2] - 0.262) < 1e-9);
	rs_trend_free(t);
	t = NULL;
	o.functions = bad;
	assert_int_equal(trend_build(&t, runs, 3, &o), RS_EUSAGE);
	assert_null(t);
	assert_non_null(strstr(rs_error_message(), "no function 'no_such_function'"));
	for (i = 0; i < 3; i++)
		json_decref(runs[i]);
}

/* Numbers as people write them. */
static void test_render_numbers(void **state)
{
	static const struct {
		double v;
		const char *want;
	} nums[] = {
		{ 30000, "30,000" }, { 1234567, "1,234,567" }, { -30000, "-30,000" },
		{ 512, "512" }, { 512.5, "512.5" }, { 0.1234, "0.1234" }, { 1999.7, "2,000" },
		{ 12345.67, "12,345.7" }, { 0, "0" }, { NAN, "-" },
	}, secs[] = {
		{ 0.0009996, "1 ms" }, { 0.000999, "999 us" }, { 0.9996, "1 s" },
		{ 1.234, "1.23 s" }, { 0.0123, "12.3 ms" }, { 1234.4, "1,234 s" }, { 0, "0 s" },
		{ -0.0015, "-1.5 ms" },
	};
	struct rs_buf b = RS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		rs_buf_clear(&b);
		assert_int_equal(rs_render_number(&b, nums[i].v), 0);
		assert_string_equal(b.ptr, nums[i].want);
	}
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		rs_buf_clear(&b);
		assert_int_equal(rs_render_seconds(&b, secs[i].v), 0);
		assert_string_equal(b.ptr, secs[i].want);
	}
	rs_buf_clear(&b);
	assert_int_equal(rs_render_metric_value(&b, "population", 30000), 0);
	assert_string_equal(b.ptr, "30,000");
	rs_buf_release(&b);
}

/*
 * Issue 10's five runs: base, +13% (a new function), a rename, the same
 * code with 4x the population, the same session recorded twice. The
 * trend marks the +13% step, not the population change, and leaves the
 * odd runs out.
 */
static void test_trend_like_with_like(void **state)
{
	static const double dur[] = { 10, 11.3, 11.3, 45, 45 };
	static const int pop[] = { 1000, 1000, 1000, 4000, 4000 };
	json_t *runs[6];
	struct rs_trend *t = NULL;
	const struct rs_series *d;
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		char id[8], commit[8];

		snprintf(id, sizeof(id), "r%zu", i);
		snprintf(commit, sizeof(commit), "c%zu", i == 4 ? (size_t)3 : i);
		runs[i] = model_run(id, commit, 1.0);
		json_object_set_new(json_object_get(runs[i], "metrics"), "duration", json_real(dur[i]));
		json_object_set_new(json_object_get(runs[i], "stats"), "population", json_integer(pop[i]));
		json_object_set_new(runs[i], "session", json_pack("{s:s}", "oid", i == 4 ? "o3" : id));
	}
	/* and a sixth run of the usual configuration, the newest */
	runs[5] = model_run("r5", "c5", 1.0);
	json_object_set_new(json_object_get(runs[5], "metrics"), "duration", json_real(11.35));
	json_object_set_new(json_object_get(runs[5], "stats"), "population", json_integer(1000));
	assert_int_equal(trend_build(&t, runs, 6, NULL), 0);
	d = rs_trend_metric(t, "duration");
	assert_non_null(d);
	assert_true(isnan(d->v[3]) && isnan(d->v[4]));
	assert_int_equal(t->n_excluded, 2);
	assert_string_equal(t->excluded_why, "population 4000 in that run, 1000 in most runs");
	assert_int_equal(d->n_changes, 1);
	assert_int_equal(d->changes[0], 1);   /* the +13% step */
	rs_trend_free(t);
	for (i = 0; i < 6; i++)
		json_decref(runs[i]);
}

/* ---- issue 19: a baseline one noisy run cannot poison; the machine told from the code ---- */

/* The usual model's functions with `helper` (5% of the run) and a pandas internal. */
static json_t *helper_run(const char *id, const char *commit, double duration, double cpu,
			  double births, double helper, double take)
{
	const struct fn fns[] = {
		{ "main", "model/run.py", 1, 0.5, duration },
		{ "step", "model/sim.py", 40, 1, duration - 0.5 },
		{ "apply_births", "model/births.py", 12, births, births },
		{ "fit_lm", "model/lm.py", 30, helper, helper },
		{ "take", "/usr/lib/python3/dist-packages/pandas/core/generic.py", 900, take, take },
	};
	json_t *r = make_run(id, commit, "ci-1", duration, 12, fns, 5);

	json_object_set_new(json_object_get(r, "metrics"), "cpu_time", json_real(cpu));
	return r;
}

/* The sample counts of `run` divided by `factor`: as many samples as before, each longer. */
static void same_samples(json_t *run, double factor)
{
	json_t *sum = json_object_get(run, "summary"), *fs = json_object_get(sum, "functions");
	double n = json_number_value(json_object_get(sum, "samples"));

	json_object_set_new(sum, "samples", json_integer((json_int_t)(n / factor)));
	for (size_t i = 0; i < json_array_size(fs); i++) {
		json_t *f = json_array_get(fs, i);
		double t = json_number_value(json_object_get(f, "total_samples"));

		json_object_set_new(f, "total_samples", json_integer((json_int_t)(t / factor)));
	}
}

static char *verdict_of(const struct rs_check_result *r)
{
	struct rs_buf v = RS_BUF_INIT;

	assert_int_equal(rs_render_verdict(&v, r), 0);
	return rs_buf_detach(&v, NULL);
}

static void test_check_window_outlier(void **state)
{
	/* one odd run, the newest: neither the baseline nor hiding a change */
	static const double dur[] = { 13.0, 10.0, 10.1, 9.9, 10.0 };
	json_t *hist[5], *head;
	struct rs_check_result *r;
	const struct rs_check_metric *m;
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		char id[8], commit[8];

		snprintf(id, sizeof(id), "r%zu", 5 - i);
		snprintf(commit, sizeof(commit), "c%zu", 5 - i);
		hist[i] = helper_run(id, commit, dur[i], dur[i] * 0.98, 3.5 * dur[i] / 10,
				     0.5 * dur[i] / 10, 1.0 * dur[i] / 10);
	}
	/* the same code again: no change, not "-23% faster" than the odd run */
	head = helper_run("r6", "c6", 10.05, 9.85, 3.5, 0.5, 1.0);
	r = check(head, hist, 5, NULL);
	m = check_metric(r, "duration");
	assert_int_equal(r->n_baseline, 5);
	assert_true(fabs(m->base - 10.0) < 1e-9);
	assert_false(r->regressed);
	assert_false(r->improved);
	assert_int_equal(r->n_saved, 0);
	rs_check_free(r);
	json_decref(head);
	/* +9% in apply_births: a regression, not hidden by the odd run */
	head = helper_run("r6", "c6", 10.9, 10.68, 4.4, 0.5, 1.0);
	r = check(head, hist, 5, NULL);
	assert_true(r->regressed);
	assert_false(r->machine_slower);
	assert_true(r->n_responsible >= 1);
	assert_string_equal(r->diff->funcs[r->responsible[0]].function, "apply_births");
	rs_check_free(r);
	json_decref(head);
	for (i = 0; i < 5; i++)
		json_decref(hist[i]);
}

static void test_check_machine_slower(void **state)
{
	json_t *hist[4], *head;
	struct rs_check_result *r;
	char *v;

	(void)state;
	hist[0] = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r2", "c2", 10.1, 9.9, 3.5, 0.5, 1.0);
	hist[2] = helper_run("r1", "c1", 9.95, 9.75, 3.5, 0.5, 1.0);
	/* a loaded runner: wall x2.1, CPU +4%, every function 2.1 times slower */
	head = helper_run("r4", "c4", 21.0, 10.2, 3.5 * 2.1, 0.5 * 2.1, 1.0 * 2.1);
	r = check(head, hist, 3, NULL);
	assert_false(r->regressed);
	assert_true(r->machine_slower);
	assert_true(r->wall_distorted);
	assert_non_null(r->gating);
	assert_string_equal(r->gating, "cpu_time");
	assert_false(check_metric(r, "duration")->gating);
	assert_true(check_metric(r, "cpu_time")->gating);
	v = verdict_of(r);
	assert_non_null(strstr(v, "the machine was slower (wall +110%, CPU +4%, all functions x2.1)"));
	assert_non_null(strstr(v, "judged on CPU time"));
	free(v);
	rs_check_free(r);

	/* the next run, +8% in apply_births, against a window holding the loaded run */
	hist[3] = hist[2];
	hist[2] = hist[1];
	hist[1] = hist[0];
	hist[0] = head;
	head = helper_run("r5", "c5", 10.8, 10.58, 4.3, 0.5, 1.0);
	r = check(head, hist, 4, NULL);
	assert_true(r->regressed);
	assert_false(r->machine_slower);
	assert_int_equal(r->n_wall_left_out, 1);     /* the loaded run's wall time */
	assert_true(fabs(check_metric(r, "duration")->base - 10.0) < 1e-9);
	assert_true(r->n_responsible >= 1);
	assert_string_equal(r->diff->funcs[r->responsible[0]].function, "apply_births");
	assert_string_not_equal(r->baseline_commit, "c4"); /* never explained against it */
	rs_check_free(r);
	json_decref(head);

	/* a machine busy for CPU time too (all x1.3, shares unchanged, the
	 * same samples, each longer): not the code */
	head = helper_run("r5", "c5", 13.0, 12.74, 3.5 * 1.3, 0.5 * 1.3, 1.0 * 1.3);
	same_samples(head, 1.3);
	r = check(head, &hist[1], 3, NULL);
	assert_false(r->regressed);
	assert_true(r->machine_slower);
	assert_false(r->wall_distorted);
	rs_check_free(r);
	json_decref(head);
	/* the same factor with 1.3 times the samples is more work, not the machine */
	head = helper_run("r5", "c5", 13.0, 12.74, 3.5 * 1.3, 0.5 * 1.3, 1.0 * 1.3);
	r = check(head, &hist[1], 3, NULL);
	assert_true(r->regressed);
	assert_false(r->machine_slower);
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 4; i++)
		json_decref(hist[i]);
}

static void test_check_function_noise(void **state)
{
	json_t *hist[3], *head;
	struct rs_check_result *r;
	struct rs_check_opts o = { 0 };
	char *v;
	size_t i;

	(void)state;
	hist[0] = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r2", "c2", 10.1, 9.9, 3.5, 0.5, 1.0);
	hist[2] = helper_run("r1", "c1", 9.95, 9.75, 3.5, 0.5, 1.0);
	/* the helper (5% of the run) +90%: the run +4.5%, under the threshold;
	 * the pandas internal +10%, within its sampling noise */
	head = helper_run("r4", "c4", 10.45, 10.24, 3.4, 0.95, 1.1);
	r = check(head, hist, 3, NULL);
	assert_false(r->regressed);
	assert_true(r->function_warning);
	assert_int_equal(r->n_findings, 1);
	assert_string_equal(r->diff->funcs[r->findings[0].func].function, "fit_lm");
	v = verdict_of(r);
	assert_non_null(strstr(v, "fit_lm"));
	free(v);
	rs_check_free(r);
	/* a failure when configured */
	o.fail_on_functions = 1;
	r = check(head, hist, 3, &o);
	assert_true(r->regressed);
	rs_check_free(r);
	json_decref(head);

	/* a faster run names where the time was saved */
	head = helper_run("r4", "c4", 8.8, 8.62, 2.3, 0.5, 1.0);
	r = check(head, hist, 3, NULL);
	assert_false(r->regressed);
	assert_true(r->improved);
	assert_false(r->function_warning); /* the others' shares grew with the saving */
	assert_true(r->n_saved >= 1);
	assert_string_equal(r->diff->funcs[r->saved[0]].function, "apply_births");
	v = verdict_of(r);
	assert_non_null(strstr(v, "-12% vs c3: faster: apply_births (-1.2 s)"));
	free(v);
	rs_check_free(r);
	json_decref(head);
	for (i = 0; i < 3; i++)
		json_decref(hist[i]);
}

/* A run recorded without stats: no workload stat, no arguments. */
static json_t *run_without_stats(const char *id, const char *commit, double duration)
{
	json_t *r = helper_run(id, commit, duration, duration * 0.98, 3.5, 0.5, 1.0);

	json_object_clear(json_object_get(r, "stats"));
	json_object_del(json_object_get(r, "metrics"), "sim.months");
	return r;
}

static void test_check_unknown_config(void **state)
{
	json_t *hist[3], *head;
	struct rs_check_result *r;

	(void)state;
	hist[0] = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r2", "c2", 10.1, 9.9, 3.5, 0.5, 1.0);
	hist[2] = helper_run("r1", "c1", 9.95, 9.75, 3.5, 0.5, 1.0);
	json_object_set_new(json_object_get(hist[0], "stats"), "population", json_integer(30000));
	json_object_set_new(json_object_get(hist[1], "stats"), "population", json_integer(30000));
	json_object_set_new(json_object_get(hist[2], "stats"), "population", json_integer(120000));
	/* without stats: an unknown configuration, never compared with a known one */
	head = run_without_stats("r4", "c4", 1.0);
	r = check(head, hist, 3, NULL);
	assert_int_equal(r->n_baseline, 0);
	assert_int_equal(r->n_other_config, 3);
	assert_string_equal(r->other_config, "no stats here, sim.months 12 in those runs");
	rs_check_free(r);
	json_decref(head);
	/* a known configuration never has an unknown one as its baseline */
	json_decref(hist[2]);
	hist[2] = hist[1];
	hist[1] = hist[0];
	hist[0] = run_without_stats("r4", "c4", 1.0);
	head = helper_run("r5", "c5", 10.0, 9.8, 3.5, 0.5, 1.0);
	json_object_set_new(json_object_get(head, "stats"), "population", json_integer(30000));
	r = check(head, hist, 3, NULL);
	assert_int_equal(r->n_baseline, 2);
	assert_int_equal(r->n_other_config, 1);
	assert_string_equal(r->other_config, "sim.months 12 here, no stats in those runs");
	assert_false(r->regressed);
	rs_check_free(r);
	/* the left-out run of another population, the right way round */
	json_object_set_new(json_object_get(hist[2], "stats"), "population", json_integer(120000));
	r = check(head, &hist[1], 2, NULL);
	assert_int_equal(r->n_other_config, 1);
	assert_string_equal(r->other_config, "population 30000 here, 120000 in those runs");
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 3; i++)
		json_decref(hist[i]);
}

static void test_check_config_from_session(void **state)
{
	json_t *hist[2], *head;
	struct rs_check_result *r;

	(void)state;
	hist[0] = helper_run("r2", "c2", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r1", "c1", 10.0, 9.8, 3.5, 0.5, 1.0);
	json_object_set_new(json_object_get(hist[0], "summary"), "target",
			    json_string("Program: run_model.py --population 120000 --months 12"));
	json_object_set_new(json_object_get(hist[1], "summary"), "target",
			    json_string("Program: run_model.py --population 30000 --months 6"));
	head = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	json_object_set_new(json_object_get(head, "summary"), "target",
			    json_string("Program: run_model.py --population 30000 --months=12"));
	/* the program's arguments are the configuration; the months time is
	 * normalised by may differ */
	r = check(head, hist, 2, NULL);
	assert_int_equal(r->n_baseline, 1);
	assert_int_equal(r->n_other_config, 1);
	assert_string_equal(r->other_config,
		"program 'Program: run_model.py --population 30000' here, "
		"'Program: run_model.py --population 120000' in those runs");
	assert_string_equal(r->baseline_ids[0], "r1");
	rs_check_free(r);
	json_decref(head);
	for (size_t i = 0; i < 2; i++)
		json_decref(hist[i]);
}

/*
 * A record built as the struct, no JSON: what an index line gives trend
 * and find (rs_run_entry_record: identity and metrics, no summary, no
 * stats). The workload and the configuration come from the metrics; a
 * slower run is judged on them alone.
 */
static rs_runrec *index_rec(const char *id, const char *commit, double duration, double months)
{
	rs_runrec *r = calloc(1, sizeof(*r));
	struct rs_runrec_pair *p;

	assert_non_null(r);
	r->format = RS_RUNREC_FORMAT;
	r->id = strdup(id);
	r->commit = strdup(commit);
	r->branch = strdup("main");
	r->trigger = strdup("ci");
	r->recorded_at = strdup("2026-11-30T09:30:12Z");
	/* sorted by name, as the decoder keeps a map */
	p = r->metrics.items = calloc(3, sizeof(*p));
	assert_non_null(p);
	p[0] = (struct rs_runrec_pair){ strdup("cpu_time"), { RS_RUNREC_REAL, 0, duration, NULL } };
	p[1] = (struct rs_runrec_pair){ strdup("duration"), { RS_RUNREC_REAL, 0, duration, NULL } };
	p[2] = (struct rs_runrec_pair){ strdup("months"), { RS_RUNREC_INT, (int64_t)months, months,
							   NULL } };
	r->metrics.n = 3;
	return r;
}

static void test_typed_index_records(void **state)
{
	rs_runrec *hist[3], *head = index_rec("r4", "c4", 13, 12), *other = index_rec("r5", "c5", 10, 24);
	const rs_runrec *const *h = (const rs_runrec *const *)hist;
	struct rs_check_result *r = NULL;
	const char *key = NULL;
	char why[160] = "";
	double w = 0;

	(void)state;
	hist[0] = index_rec("r3", "c3", 10.1, 12);
	hist[1] = index_rec("r2", "c2", 9.9, 12);
	hist[2] = index_rec("r1", "c1", 10, 12);
	assert_true(rs_runview_workload(head, NULL, &key, &w));
	assert_string_equal(key, "months");
	assert_true(w == 12);
	assert_true(rs_runview_same_config(head, hist[0], NULL, "here", "there", why, sizeof(why)));
	assert_false(rs_runview_same_config(head, other, NULL, "here", "there", why, sizeof(why)));
	assert_string_equal(why, "months 12 here, 24 there");
	assert_null(rs_runview_session_oid(head));
	assert_int_equal(rs_check_run(&r, head, h, 3, NULL), 0);
	assert_int_equal(r->n_baseline, 3);
	assert_true(r->regressed);
	assert_false(r->functions_judged); /* no summary: no function-level test */
	rs_check_free(r);
	/* twice the months in the same time: judged per month, faster */
	assert_int_equal(rs_check_run(&r, other, h, 3, NULL), 0);
	assert_int_equal(r->n_baseline, 3);
	assert_non_null(r->workload_key);
	assert_string_equal(r->workload_key, "months");
	assert_false(r->regressed);
	assert_true(r->improved);
	rs_check_free(r);
	free_typed(hist, 3);
	rs_runrec_free(head);
	rs_runrec_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_diff),
		cmocka_unit_test(test_new_and_vanished),
		cmocka_unit_test(test_rename_detected),
		cmocka_unit_test(test_rename_needs_same_line),
		cmocka_unit_test(test_truncated_lists),
		cmocka_unit_test(test_class_is_incidental),
		cmocka_unit_test(test_workload_normalised),
		cmocka_unit_test(test_check_flags_new_function),
		cmocka_unit_test(test_check_noise_band),
		cmocka_unit_test(test_check_rerun_same_commit_quiet),
		cmocka_unit_test(test_check_other_machine),
		cmocka_unit_test(test_check_more_work_not_flagged),
		cmocka_unit_test(test_check_window_and_metrics),
		cmocka_unit_test(test_changepoint),
		cmocka_unit_test(test_trend),
		cmocka_unit_test(test_render_diff),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_html_verdicts),
		cmocka_unit_test(test_odd_input),
		cmocka_unit_test(test_owncode),
		cmocka_unit_test(test_explain_by_total),
		cmocka_unit_test(test_ran_below_and_probable_rename),
		cmocka_unit_test(test_below_floor_never_zero),
		cmocka_unit_test(test_trend_function_names),
		cmocka_unit_test(test_render_numbers),
		cmocka_unit_test(test_trend_like_with_like),
		cmocka_unit_test(test_check_window_outlier),
		cmocka_unit_test(test_check_machine_slower),
		cmocka_unit_test(test_check_function_noise),
		cmocka_unit_test(test_check_unknown_config),
		cmocka_unit_test(test_check_config_from_session),
		cmocka_unit_test(test_typed_index_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
