/*
 * Unit tests of the analysis layer on run records built here, without
 * git: diff (metrics, functions, renames, workload), the noise-aware
 * check, change points, trends and the renderers.
 *
 * Every run is built as the typed record (runrec/runrec.h) through the
 * record builder (rs_runrec_new, rs_runrec_summary_new, ...), so that
 * run.json's keys are spelled only in src/runrec: a test states the
 * figures it is about and the builder gives the rest its neutral value.
 * Only test_odd_input is about run.json itself (what the decoder refuses)
 * and goes through JSON. What the report keeps beside a record for its
 * pages ("path", "check", "diff_page") is the only other JSON here.
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
#include "results/escape.h"

/* A function row: name, file, line, own seconds, total seconds. */
struct fn {
	const char *name;
	const char *file;
	int line;
	double self;
	double total;
};

/* ---- building records (the builder's calls, checked) -------------------- */

static void set_str(char **field, const char *value)
{
	assert_int_equal(rs_runrec_set_string(field, value), 0);
}

/* A real number into a map (metrics, stats): run.json's 3.0. */
static void set_real(struct rs_runrec_map *map, const char *name, double v)
{
	struct rs_runrec_value val = { .kind = RS_RUNREC_REAL, .d = v };

	assert_int_equal(rs_runrec_map_set(map, name, &val), 0);
}

/* An integer into a map: run.json's 3. */
static void set_int(struct rs_runrec_map *map, const char *name, int64_t v)
{
	struct rs_runrec_value val = { .kind = RS_RUNREC_INT, .i = v };

	assert_int_equal(rs_runrec_map_set(map, name, &val), 0);
}

/* A child of `parent` in a call tree (line 1, no own time): the new node, borrowed. */
static struct rs_runrec_node *kid(struct rs_runrec_node *parent, const char *function,
				  const char *file, double total)
{
	struct rs_runrec_node *n = NULL;

	assert_int_equal(rs_runrec_node_add(parent, function, file, 1, total, 0, &n), 0);
	return n;
}

/*
 * A run record as `results add` writes one. Samples are taken at 1 ms,
 * so self_samples = self * 1000 and the share of a function is its own
 * time over the duration. `months` > 0: the workload stat sim.months,
 * also a metric; 0: no stats at all.
 */
static rs_runrec *make_run(const char *id, const char *commit, const char *runner,
			   double duration, double months, const struct fn *fns, size_t n)
{
	rs_runrec *run = NULL;
	struct rs_runrec_summary *sum = NULL;

	assert_int_equal(rs_runrec_new(&run), 0);
	set_str(&run->id, id);
	set_str(&run->commit, commit);
	set_str(&run->branch, "main");
	set_str(&run->trigger, "ci");
	set_str(&run->recorded_at, "2026-11-30T09:30:12Z");
	set_str(&run->machine.runner, runner);
	set_str(&run->machine.hostname, runner);
	set_str(&run->machine.cpu_model, "Test CPU");
	set_real(&run->metrics, "duration", duration);
	set_real(&run->metrics, "cpu_time", duration * 0.98);
	set_int(&run->metrics, "samples", (int64_t)(duration * 1000));
	set_real(&run->metrics, "mem.peak_mb", 512);
	if (months > 0) {
		set_real(&run->stats, "sim.months", months);
		set_real(&run->metrics, "sim.months", months);
	}
	assert_int_equal(rs_runrec_summary_new(&sum), 0);
	run->summary = sum;
	sum->duration.present = 1;
	sum->duration.v = duration;
	sum->samples = (int64_t)(duration * 1000);
	sum->sampled_time = duration;
	for (size_t i = 0; i < n; i++) {
		struct rs_runrec_function f = {
			.function = (char *)fns[i].name, .file = (char *)fns[i].file,
			.line = fns[i].line, .self = fns[i].self, .total = fns[i].total,
			.self_samples = (int64_t)(fns[i].self * 1000),
			.total_samples = (int64_t)(fns[i].total * 1000),
		};

		assert_int_equal(rs_runrec_add_function(sum, &f), 0);
	}
	/* every function listed: the list is whole unless a test says */
	sum->distinct_functions = (int64_t)n;
	return run;
}

/* The usual model: 10 s in three functions. `scale` multiplies work. */
static rs_runrec *model_run(const char *id, const char *commit, double scale)
{
	const struct fn fns[] = {
		{ "main", "model/run.py", 1, 0.5 * scale, 10 * scale },
		{ "step", "model/sim.py", 40, 6 * scale, 9.5 * scale },
		{ "apply_births", "model/births.py", 12, 3.5 * scale, 3.5 * scale },
	};

	return make_run(id, commit, "ci-1", 10 * scale, 12 * scale, fns, 3);
}

static void free_runs(rs_runrec **recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rs_runrec_free(recs[i]);
}

static void decref_all(json_t **o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(o[i]);
}

/* ---- the analysis over them --------------------------------------------- */

/* The site's index of `n` runs, with what the report adds to each (`extra[i]`, may be NULL). */
static int site_index(struct rs_buf *out, rs_runrec *const *runs, json_t *const *extra, size_t n,
		      const struct rs_html_links *links)
{
	return rs_html_site_index(out, (const rs_runrec *const *)runs, (const json_t *const *)extra,
				  n, NULL, links);
}

static int check_run(struct rs_check_result **out, const rs_runrec *head, rs_runrec *const *hist,
		     size_t n, const struct rs_check_opts *opts)
{
	return rs_check_run(out, head, (const rs_runrec *const *)hist, n, opts);
}

/* rs_trend_build over records, each run's "path" and "check" verdict from `extra` (may be NULL). */
static int trend_build(struct rs_trend **out, rs_runrec *const *runs, json_t *const *extra,
		       size_t n, const struct rs_trend_opts *opts)
{
	struct rs_trend_run *tr = calloc(n + 1, sizeof(*tr));
	int err;

	assert_non_null(tr);
	for (size_t i = 0; i < n; i++) {
		const json_t *x = extra ? extra[i] : NULL, *c = json_object_get(x, "check");

		tr[i].rec = runs[i];
		tr[i].path = json_string_value(json_object_get(x, "path"));
		tr[i].verdict = json_string_value(json_object_get(c, "verdict"));
		tr[i].verdict_text = json_string_value(json_object_get(c, "text"));
		tr[i].verdict_why = json_string_value(json_object_get(c, "why"));
	}
	err = rs_trend_build(out, tr, n, opts);
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
	rs_runrec *a = model_run("r1", "aaaaaaa1", 1.0), *b = model_run("r2", "bbbbbbb2", 1.0);
	const struct rs_metric_delta *m;
	struct rs_diff *d = NULL;
	struct rs_diff_opts o = { NULL, 1, NULL };

	(void)state;
	set_real(&b->metrics, "duration", 11.0);
	set_real(&b->metrics, "mem.peak_mb", 640);
	assert_int_equal(rs_diff_runs(&d, a, b, &o), 0);
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
	rs_runrec_free(a);
	rs_runrec_free(b);
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
	rs_runrec *a = make_run("r1", "a", "ci", 10, 0, base, 3);
	rs_runrec *b = make_run("r2", "b", "ci", 11, 0, head, 3);
	const struct rs_func_delta *f;
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
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
	rs_runrec_free(a);
	rs_runrec_free(b);
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
	rs_runrec *a = make_run("r1", "a", "ci", 10, 0, base, 3);
	rs_runrec *b = make_run("r2", "b", "ci", 10, 0, head, 3);
	struct rs_diff *d = NULL;
	size_t i, renamed = 0;

	(void)state;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
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
	rs_runrec_free(a);
	rs_runrec_free(b);
}

static void test_rename_needs_same_line(void **state)
{
	const struct fn base[] = { { "f", "x.py", 10, 1, 1 } };
	const struct fn head[] = { { "g", "x.py", 11, 1, 1 } };
	rs_runrec *a = make_run("r1", "a", "ci", 1, 0, base, 1);
	rs_runrec *b = make_run("r2", "b", "ci", 1, 0, head, 1);
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(d->n_funcs, 2);
	assert_non_null(find_func(d, "g"));
	assert_int_equal(find_func(d, "g")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f")->change, RS_FUNC_VANISHED);
	rs_diff_free(d);
	rs_runrec_free(a);
	rs_runrec_free(b);
}

static void test_workload_normalised(void **state)
{
	rs_runrec *a = model_run("r1", "a", 1.0), *b = model_run("r2", "b", 2.0);
	const struct rs_metric_delta *m;
	struct rs_diff *d = NULL;

	(void)state;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
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

		assert_int_equal(rs_diff_runs(&d, a, b, &o), 0);
		assert_null(d->workload_key);
		assert_null(rs_diff_metric(d, "duration/nonexistent"));
		rs_diff_free(d);
	}
	rs_runrec_free(a);
	rs_runrec_free(b);
}

/* History newest first; check of `head`. */
static struct rs_check_result *check(const rs_runrec *head, rs_runrec **hist, size_t n,
				     const struct rs_check_opts *o)
{
	struct rs_check_result *r = NULL;

	assert_int_equal(check_run(&r, head, hist, n, o), 0);
	return r;
}

static rs_runrec *noisy_run(const char *id, const char *commit, double factor)
{
	rs_runrec *r = model_run(id, commit, 1.0);

	set_real(&r->metrics, "duration", 10 * factor);
	set_real(&r->metrics, "cpu_time", 9.8 * factor);
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
	rs_runrec *hist[3], *head;
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
	rs_runrec_free(head);
	free_runs(hist, 3);
}

static void test_check_noise_band(void **state)
{
	/* c1 ran three times with ~7% spread: that is what noise does here */
	rs_runrec *hist[3], *head;
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
	rs_runrec_free(head);

	/* +20%: beyond band and threshold */
	head = noisy_run("r4", "c2", 1.20);
	r = check(head, hist, 3, NULL);
	assert_true(r->regressed);
	rs_check_free(r);
	rs_runrec_free(head);

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
	rs_runrec_free(head);
	free_runs(hist, 3);
}

static void test_check_rerun_same_commit_quiet(void **state)
{
	rs_runrec *hist[3], *head;
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
	rs_runrec_free(head);

	/* a re-run of a slower commit stays flagged */
	head = noisy_run("r4", "c1", 1.30);
	set_real(&hist[0]->metrics, "duration", 13.1);
	set_real(&hist[1]->metrics, "duration", 12.9);
	r = check(head, hist, 3, NULL);
	assert_true(r->regressed);
	assert_string_equal(r->baseline_commit, "c0");
	rs_check_free(r);

	/* only runs of the head's commit: nothing to compare with */
	r = check(head, hist, 2, NULL);
	assert_false(r->regressed);
	assert_int_equal(r->n_baseline, 0);
	rs_check_free(r);
	rs_runrec_free(head);
	free_runs(hist, 3);
}

static void test_check_other_machine(void **state)
{
	rs_runrec *hist[2], *head;
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
	rs_runrec_free(head);
	rs_runrec_free(hist[0]);
	rs_runrec_free(hist[1]);
}

static void test_check_more_work_not_flagged(void **state)
{
	rs_runrec *hist[1], *head;
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
	rs_runrec_free(head);
	rs_runrec_free(hist[0]);
}

static void test_check_window_and_metrics(void **state)
{
	rs_runrec *hist[4], *head;
	struct rs_check_result *r;
	struct rs_check_opts o = { 0 };
	const char *metrics[] = { "mem.peak_mb" };

	(void)state;
	hist[0] = noisy_run("r4", "c3", 1.0);
	hist[1] = noisy_run("r3", "c2", 1.0);
	hist[2] = noisy_run("r2", "c1", 1.3);
	hist[3] = noisy_run("r1", "c0", 1.3);
	head = noisy_run("r5", "c4", 1.0);
	set_real(&head->metrics, "mem.peak_mb", 700);
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
	rs_runrec_free(head);
	free_runs(hist, 4);
}

static void test_changepoint(void **state)
{
	double flat[] = { 1, 1, 1, 1, 1.2, 1.2, 1.2 };
	double noisy[] = { 10.1, 9.8, 10.2, 9.9, 10.0, 10.3, 11.2, 11.0, 11.3, 10.9 };
	double withnan[] = { 1, NAN, 1, 2, NAN, 2 };
	double two[] = { 1, 1, 1, 2, 2, 2, 1, 1, 1 };
	double noise_only[] = { 10.1, 9.8, 10.2, 9.9, 10.0, 10.3, 9.9, 10.1 };
	size_t cps[8], ncps = 99, at = 99;
	double step, rel;

	(void)state;
	assert_int_equal(rs_changepoint_best(&at, flat, 7, &step, &rel), 0);
	assert_int_equal(at, 4);
	assert_true(fabs(step - 0.2) < 1e-9);
	assert_true(fabs(rel - 0.2) < 1e-9);
	assert_int_equal(rs_changepoint_best(&at, noisy, 10, &step, &rel), 0);
	assert_int_equal(at, 6);
	assert_int_equal(rs_changepoint_best(&at, withnan, 6, &step, &rel), 0);
	assert_int_equal(at, 3);
	assert_int_equal(rs_changepoint_best(&at, flat, 1, &step, &rel), 0);
	assert_int_equal(at, 0);
	assert_int_equal(rs_changepoints(&ncps, two, 9, 0.05, cps, 8), 0);
	assert_int_equal(ncps, 2);
	assert_int_equal(cps[0], 3);
	assert_int_equal(cps[1], 6);
	assert_int_equal(rs_changepoints(&ncps, noise_only, 8, 0.05, cps, 8), 0);
	assert_int_equal(ncps, 0);
	{
		double appears[] = { 0, 0, 0, 0.31, 0.30, 0.33 };

		assert_int_equal(rs_changepoints(&ncps, appears, 6, 0.05, cps, 8), 0);
		assert_int_equal(ncps, 1);
		assert_int_equal(cps[0], 3);
	}
	assert_int_equal(rs_changepoints(&ncps, noisy, 10, 0.05, cps, 8), 0);
	assert_int_equal(ncps, 1);
	assert_int_equal(cps[0], 6);
	assert_true(isnan(rs_median(NULL, 0)));
}

static void test_trend(void **state)
{
	rs_runrec *runs[5];
	struct rs_trend *t = NULL;
	const struct rs_series *s;
	struct rs_buf out = RS_BUF_INIT;
	const struct fn slow[] = {
		{ "main", "model/run.py", 1, 0.5, 12 },
		{ "step", "model/sim.py", 40, 8, 11.5 },
		{ "apply_births", "model/births.py", 12, 3.5, 3.5 },
	};

	(void)state;
	runs[0] = model_run("r1", "c1", 1.0);
	runs[1] = model_run("r2", "c2", 1.0);
	runs[2] = make_run("r3", "c3", "ci-1", 12, 12, slow, 3);
	runs[3] = make_run("r4", "c4", "ci-1", 12, 12, slow, 3);
	runs[4] = make_run("r5", "c5", "ci-1", 12, 12, slow, 3);
	rs_runrec_summary_free(runs[4]->summary); /* index line: metrics only */
	runs[4]->summary = NULL;
	assert_int_equal(trend_build(&t, runs, NULL, 5, NULL), 0);
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
		assert_int_equal(trend_build(&t, runs, NULL, 5, &o), 0);
		assert_int_equal(t->n_funcs, 1);
		assert_string_equal(t->funcs[0].function, "apply_births");
		rs_trend_free(t);
	}

	/* a name that is not UTF-8 is the caller's error, not a series whose
	 * JSON name could not be made (which reads as out of memory) */
	{
		struct rs_trend_opts o = { 0 };
		const char *bad[] = { "duration", "cpu\xff" };

		o.metrics = bad;
		o.n_metrics = 2;
		rs_error_clear();
		assert_int_equal(trend_build(&t, runs, NULL, 5, &o), RS_EUSAGE);
		assert_string_equal(rs_error_message(), "a metric name given is not UTF-8");
		o.all_metrics = 1;
		assert_int_equal(trend_build(&t, runs, NULL, 5, &o), RS_EUSAGE);
		o.metrics = NULL;
		o.n_metrics = 0;
		o.functions = bad;
		o.n_functions = 2;
		assert_int_equal(trend_build(&t, runs, NULL, 5, &o), RS_EUSAGE);
		assert_string_equal(rs_error_message(), "a function name given is not UTF-8");
		assert_int_equal(rs_utf8_valid("h\xc3\xa9 \xe2\x86\x92"), 1);
		assert_int_equal(rs_utf8_valid("\xc0\xaf"), 0); /* overlong '/' */
		assert_int_equal(rs_utf8_valid("\xed\xa0\x80"), 0); /* a surrogate */
	}
	free_runs(runs, 5);
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
	rs_runrec *a = make_run("r1", "aaaaaaaaaa", "ci", 10, 0, base, 3);
	rs_runrec *b = make_run("r2", "bbbbbbbbbb", "ci", 10, 0, head, 3);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	enum rs_format f;

	(void)state;
	assert_int_equal(rs_format_parse(&f, "md"), 0);
	assert_int_equal(f, RS_FORMAT_MARKDOWN);
	assert_int_equal(rs_format_parse(&f, "yaml"), RS_EUSAGE);
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
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
	rs_runrec_free(a);
	rs_runrec_free(b);
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
	rs_runrec *runs[6];
	json_t *extra[6];
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
		set_str(&runs[i]->recorded_at, "2026-11-30T09:00:00Z");
		/* what the report adds to a run for its pages */
		extra[i] = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:f,s:s,s:s*}}", "path", "runs/x",
				     "diff_page", diff, "check", "verdict", cls[i], "label", cls[i],
				     "text", "+13% vs c1: <script>alert(1)</script> \"q\"",
				     "change", 0.131, "metric", i == 2 ? "cpu_time" : "duration",
				     "why", i == 2 ? "the machine was slower" : NULL);
		assert_non_null(extra[i]);
	}
	/* the machine run's wall time doubled: no change point of its own */
	set_real(&runs[2]->metrics, "duration", 2.1);
	assert_int_equal(site_index(&out, runs, extra, 6, &links), 0);
	assert_int_equal(count(out.ptr, "<tr class=\"v-regression\" data-verdict=\"regression\">"), 1);
	assert_non_null(strstr(out.ptr, "<a href=\"runs/r3.diff.html\" title=\"+13% vs c1: &lt;script&gt;"));
	assert_non_null(strstr(out.ptr, "<span class=\"sym\">\xe2\x96\xb2</span> regression</a>"));
	assert_non_null(strstr(out.ptr, "+13.1% <span class=\"muted\">wall time</span>"));
	assert_non_null(strstr(out.ptr, "+13.1% <span class=\"muted\">CPU time</span>"));
	assert_null(strstr(out.ptr, "<script>alert"));
	assert_null(strstr(out.ptr, "forged"));          /* an unknown class is no verdict */
	assert_int_equal(count(out.ptr, "<tr>"), 2);     /* the header's and the forged run's */
	rs_buf_clear(&out);

	assert_int_equal(trend_build(&t, runs, extra, 6, NULL), 0);
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
	free_runs(runs, 6);
	decref_all(extra, 6);
}

static void test_html(void **state)
{
	rs_runrec *runs[6];
	json_t *extra[6];
	struct rs_runrec_summary *sum;
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
		set_str(&runs[i]->recorded_at, "2026-11-30T09:00:00Z");
		extra[i] = json_pack("{s:s}", "path", "runs/x");
		assert_non_null(extra[i]);
		if (i >= 3)
			set_real(&runs[i]->metrics, "duration", 13);
	}
	assert_int_equal(trend_build(&t, runs, extra, 6, NULL), 0);
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

	assert_int_equal(site_index(&out, runs, extra, 6, &links), 0);
	assert_int_equal(count(out.ptr, "<tr>"), 7);
	assert_non_null(strstr(out.ptr, "class=\"sortable\""));
	rs_buf_clear(&out);

	/* a run page: escaped names, a call tree as nested <details> */
	rs_runrec_free(runs[0]);
	runs[0] = make_run("r0", "c0", "ci", 1, 0, lam, 1);
	sum = runs[0]->summary;
	sum->tree.total = 1.0; /* [root] */
	assert_int_equal(rs_runrec_node_add(&sum->tree, "<lambda>", "model/a&b.py", 3, 1.0, 1.0,
					    NULL), 0);
	assert_int_equal(rs_html_run_page(&out, runs[0], NULL, &links), 0);
	assert_non_null(strstr(out.ptr, "&lt;lambda&gt;"));
	assert_null(strstr(out.ptr, "<lambda>"));
	assert_non_null(strstr(out.ptr, "model/a&amp;b.py"));
	assert_int_equal(count(out.ptr, "<details"), 1);
	assert_non_null(strstr(out.ptr, "Call tree"));
	/* a stat named like a session metric is not a second cpu_time */
	rs_buf_clear(&out);
	set_real(&runs[0]->stats, "cpu_time", 99);
	assert_int_equal(rs_html_run_page(&out, runs[0], NULL, &links), 0);
	assert_non_null(strstr(out.ptr, "<tr><td>stats.cpu_time <span class=\"muted\">(a stat, "
					"not the session's cpu_time under Metrics"));
	assert_int_equal(count(out.ptr, "<tr><td>cpu_time</td>"), 1);
	{
		double v = 0;

		assert_true(rs_runview_metric(runs[0], "stats.cpu_time", &v));
		assert_true(v == 99);
		assert_true(rs_runview_metric(runs[0], "cpu_time", &v));
		assert_true(v != 99);
	}
	rs_buf_release(&out);
	rs_trend_free(t);
	free_runs(runs, 6);
	decref_all(extra, 6);
}

/* Stored summaries list only the top functions: a small function listed
 * on one side only is "not compared", a big one is really new/vanished. */
static void test_truncated_lists(void **state)
{
	struct fn base[60], head[60];
	char names[60][16];
	rs_runrec *a, *b;
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
	a->summary->distinct_functions = 500;
	b->summary->distinct_functions = 500;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(find_func(d, "big_new")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f00")->change, RS_FUNC_VANISHED);
	assert_null(find_func(d, "tiny_new"));
	assert_null(find_func(d, "f59"));
	assert_int_equal(d->n_uncompared, 2);
	rs_diff_free(d);

	/* complete lists (distinct_functions == rows): everything is compared */
	a->summary->distinct_functions = 60;
	b->summary->distinct_functions = 60;
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(find_func(d, "tiny_new")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "f59")->change, RS_FUNC_VANISHED);
	assert_int_equal(d->n_uncompared, 0);
	rs_diff_free(d);
	rs_runrec_free(a);
	rs_runrec_free(b);
}

/* A base-class method seen with another subclass is the same function. */
static void test_class_is_incidental(void **state)
{
	rs_runrec *a = model_run("r1", "a", 1.0), *b = model_run("r2", "b", 1.0);
	struct rs_diff *d = NULL;
	size_t i;

	(void)state;
	set_str(&a->summary->functions[1].class_name, "BirthEvent");
	set_str(&b->summary->functions[1].class_name, "DeathEvent");
	assert_int_equal(rs_diff_runs(&d, a, b, NULL), 0);
	assert_int_equal(d->n_funcs, 3);
	for (i = 0; i < d->n_funcs; i++)
		assert_int_equal(d->funcs[i].change, RS_FUNC_CHANGED);
	rs_diff_free(d);
	rs_runrec_free(a);
	rs_runrec_free(b);
}

/*
 * A valid run.json object (the builder's model run, encoded) with the
 * top-level keys of the JSON text `odd` put in its place, and the keys of
 * its "summary" object in the summary's place: what a test of the decoder
 * breaks in an otherwise whole record. The caller's reference.
 */
static json_t *record_with(const char *odd)
{
	rs_runrec *rec = model_run("r1", "c1", 1.0);
	json_t *o = NULL, *patch = json_loads(odd, 0, NULL);
	const char *k;
	json_t *v;

	assert_non_null(patch);
	assert_int_equal(rs_runrec_to_json(rec, &o), 0);
	rs_runrec_free(rec);
	json_object_foreach(patch, k, v) {
		json_t *to = json_object_get(o, k);

		if (!strcmp(k, "summary") && json_is_object(to) && json_is_object(v))
			assert_int_equal(json_object_update(to, v), 0);
		else
			assert_int_equal(json_object_set(o, k, v), 0);
	}
	json_decref(patch);
	return o;
}

/*
 * Committed files come from a clone. The analysis and the pages never
 * see odd JSON: the decoder refuses it, naming the key (a wrong type, a
 * renamed key, a call tree 10,000 levels deep); the deepest tree it
 * takes stops at the page's depth cap. About run.json itself, so through
 * JSON: each odd record is a whole one (record_with) with one part broken.
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
	json_t *deep, *node, *tmpl;
	struct rs_buf out = RS_BUF_INIT;
	rs_runrec *rec = NULL;
	size_t i;

	(void)state;
	/* the record they break decodes whole */
	deep = record_with("{}");
	assert_int_equal(rs_runrec_from_json(deep, &rec), 0);
	rs_runrec_free(rec);
	json_decref(deep);
	for (i = 0; i < n; i++) {
		json_t *run = record_with(odd[i].json);

		rec = NULL;
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
		rs_runrec *r = model_run("r1", "c1", 1.0);

		/* one level built and encoded: its node is the one repeated */
		r->summary->tree.total = 1.0;
		kid(&r->summary->tree, "f", "m.py", 1.0);
		assert_int_equal(rs_runrec_to_json(r, &deep), 0);
		rs_runrec_free(r);
		node = json_object_get(json_object_get(deep, "summary"), "tree");
		tmpl = json_deep_copy(json_array_get(json_object_get(node, "children"), 0));
		assert_non_null(tmpl);
		for (i = 0; i < (size_t)levels; i++) {
			json_t *k = json_deep_copy(tmpl);

			assert_non_null(k);
			assert_int_equal(json_object_set_new(node, "children", json_pack("[o]", k)), 0);
			node = k;
		}
		json_decref(tmpl);
		rec = NULL;
		if (levels > RS_RUNREC_MAX_TREE_DEPTH) {
			assert_int_equal(rs_runrec_from_json(deep, &rec), RS_ECORRUPT);
		} else {
			assert_int_equal(rs_runrec_from_json(deep, &rec), 0);
			rs_buf_clear(&out);
			assert_int_equal(rs_html_run_page(&out, rec, NULL, NULL), 0);
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
	rs_runrec *b = make_run("b", "aaaa", "r", 10, 0, bf, 4);
	rs_runrec *h = make_run("h", "bbbb", "r", 11, 0, hf, 5);
	struct rs_runrec_node *m, *s;
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	size_t idx[4], n;

	(void)state;
	/* base: [root] > main > (step > apply, other) */
	b->summary->tree.total = 10;
	b->summary->tree.line = 1;
	m = kid(&b->summary->tree, "main", "/m/run.py", 10);
	kid(kid(m, "step", "/m/sim.py", 6), "apply", lib, 3);
	kid(m, "other", "/m/sim.py", 3.9);
	/* head: [root] > main > (step > (apply, trace > apply), other) */
	h->summary->tree.total = 11;
	h->summary->tree.line = 1;
	m = kid(&h->summary->tree, "main", "/m/run.py", 11);
	s = kid(m, "step", "/m/sim.py", 7);
	kid(s, "apply", lib, 3);
	kid(kid(s, "trace", "/m/sim.py", 1), "apply", lib, 0.99);
	kid(m, "other", "/m/sim.py", 3.9);
	assert_int_equal(rs_diff_runs(&d, b, h, NULL), 0);
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
	rs_runrec_free(b);
	rs_runrec_free(h);
}

/* "ran" of a summary: the sorted 24-bit hashes of the functions given. */
static void set_ran(rs_runrec *run, const struct fn *fns, size_t n)
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
	set_str(&run->summary->ran, text);
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
	rs_runrec *b = make_run("b", "aaaa", "r", 10, 0, bf, 2);
	rs_runrec *h = make_run("h", "bbbb", "r", 10, 0, hf, 4);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	const struct rs_func_delta *f;

	(void)state;
	set_ran(b, bf, 3);
	set_ran(h, hf, 4);
	assert_int_equal(rs_summary_ran_in(b->summary->ran, "tiny", "m/sim.py"), 1);
	assert_int_equal(rs_summary_ran_in(b->summary->ran, "fresh", "m/sim.py"), 0);
	assert_int_equal(rs_summary_ran_in(b->summary->ran, "tiny", "m/other.py"), 0);
	assert_int_equal(rs_diff_runs(&d, b, h, NULL), 0);
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
	h->summary->functions[1].total = 3.3;
	assert_int_equal(rs_diff_runs(&d, b, h, NULL), 0);
	assert_int_equal(find_func(d, "new_name")->change, RS_FUNC_NEW);
	assert_int_equal(find_func(d, "old_name")->change, RS_FUNC_VANISHED);
	rs_diff_free(d);
	rs_runrec_free(b);
	rs_runrec_free(h);
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
	rs_runrec *b = make_run("b", "aaaa", "r", 30, 0, bf, 3);
	rs_runrec *h = make_run("h", "bbbb", "r", 31.1, 0, hf, 2);
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	const char *own, *real, *dropped;

	(void)state;
	set_ran(b, bf, 3);
	set_ran(h, hf, 3);
	assert_int_equal(rs_diff_runs(&d, b, h, NULL), 0);
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
	rs_runrec_free(b);
	rs_runrec_free(h);
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
	rs_runrec *runs[3];
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char id[8];

		snprintf(id, sizeof(id), "r%zu", i);
		runs[i] = make_run(id, id, "ci-1", 10, 12, fns, 2);
		/* 242 ms of total time, 12 ms own: only in the compact list */
		assert_int_equal(rs_runrec_add_more_row(runs[i]->summary, i == 1 ?
			"get_squeeze_factors_v2" : "get_squeeze_factors", "model/squeeze.py", 30,
			12000 + 1000 * (int64_t)i, 242000 + 10000 * (int64_t)i), 0);
		runs[i]->summary->more.floor = 0.001;
		runs[i]->summary->distinct_functions = 3; /* both lists whole */
	}
	assert_int_equal(trend_build(&t, runs, NULL, 3, &o), 0);
	assert_int_equal(t->n_funcs, 1);
	assert_string_equal(t->funcs[0].function, "get_squeeze_factors");
	for (i = 0; i < 3; i++) /* r1 is the renamed one */
		assert_true(fabs(t->funcs[0].v[i] - (0.012 + 0.001 * (double)i)) < 1e-9);
	rs_trend_free(t);
	o.total = 1;
	assert_int_equal(trend_build(&t, runs, NULL, 3, &o), 0);
	assert_true(t->total);
	assert_true(fabs(t->funcs[0].v[2] - 0.262) < 1e-9);
	rs_trend_free(t);
	t = NULL;
	o.functions = bad;
	assert_int_equal(trend_build(&t, runs, NULL, 3, &o), RS_EUSAGE);
	assert_null(t);
	assert_non_null(strstr(rs_error_message(), "no function 'no_such_function'"));
	free_runs(runs, 3);
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
	rs_runrec *runs[6];
	struct rs_trend *t = NULL;
	const struct rs_series *d;
	size_t i;

	(void)state;
	for (i = 0; i < 5; i++) {
		char id[8], commit[8];

		snprintf(id, sizeof(id), "r%zu", i);
		snprintf(commit, sizeof(commit), "c%zu", i == 4 ? (size_t)3 : i);
		runs[i] = model_run(id, commit, 1.0);
		set_real(&runs[i]->metrics, "duration", dur[i]);
		set_int(&runs[i]->stats, "population", pop[i]);
		/* r4 is r3's session recorded again */
		runs[i]->has_session = 1;
		set_str(&runs[i]->session.path, "session.pyisession");
		set_str(&runs[i]->session.oid, i == 4 ? "o3" : id);
	}
	/* and a sixth run of the usual configuration, the newest */
	runs[5] = model_run("r5", "c5", 1.0);
	set_real(&runs[5]->metrics, "duration", 11.35);
	set_int(&runs[5]->stats, "population", 1000);
	assert_int_equal(trend_build(&t, runs, NULL, 6, NULL), 0);
	d = rs_trend_metric(t, "duration");
	assert_non_null(d);
	assert_true(isnan(d->v[3]) && isnan(d->v[4]));
	assert_int_equal(t->n_excluded, 2);
	assert_string_equal(t->excluded_why, "population 4000 in that run, 1000 in most runs");
	assert_int_equal(d->n_changes, 1);
	assert_int_equal(d->changes[0], 1);   /* the +13% step */
	rs_trend_free(t);
	free_runs(runs, 6);
}

/* ---- issue 19: a baseline one noisy run cannot poison; the machine told from the code ---- */

/* The usual model's functions with `helper` (5% of the run) and a pandas internal;
 * `months` as make_run's (0: no stats). */
static rs_runrec *helper_run_months(const char *id, const char *commit, double duration,
				    double cpu, double births, double helper, double take,
				    double months)
{
	const struct fn fns[] = {
		{ "main", "model/run.py", 1, 0.5, duration },
		{ "step", "model/sim.py", 40, 1, duration - 0.5 },
		{ "apply_births", "model/births.py", 12, births, births },
		{ "fit_lm", "model/lm.py", 30, helper, helper },
		{ "take", "/usr/lib/python3/dist-packages/pandas/core/generic.py", 900, take, take },
	};
	rs_runrec *r = make_run(id, commit, "ci-1", duration, months, fns, 5);

	set_real(&r->metrics, "cpu_time", cpu);
	return r;
}

/* The same over 12 months (sim.months). */
static rs_runrec *helper_run(const char *id, const char *commit, double duration, double cpu,
			     double births, double helper, double take)
{
	return helper_run_months(id, commit, duration, cpu, births, helper, take, 12);
}

/* The sample counts of `run` divided by `factor`: as many samples as before, each longer. */
static void same_samples(rs_runrec *run, double factor)
{
	struct rs_runrec_summary *sum = run->summary;

	sum->samples = (int64_t)((double)sum->samples / factor);
	for (size_t i = 0; i < sum->nfunctions; i++) {
		struct rs_runrec_function *f = &sum->functions[i];

		f->total_samples = (int64_t)((double)f->total_samples / factor);
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
	rs_runrec *hist[5], *head;
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
	rs_runrec_free(head);
	/* +9% in apply_births: a regression, not hidden by the odd run */
	head = helper_run("r6", "c6", 10.9, 10.68, 4.4, 0.5, 1.0);
	r = check(head, hist, 5, NULL);
	assert_true(r->regressed);
	assert_false(r->machine_slower);
	assert_true(r->n_responsible >= 1);
	assert_string_equal(r->diff->funcs[r->responsible[0]].function, "apply_births");
	rs_check_free(r);
	rs_runrec_free(head);
	free_runs(hist, 5);
}

static void test_check_machine_slower(void **state)
{
	rs_runrec *hist[4], *head;
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
	rs_runrec_free(head);

	/* a machine busy for CPU time too (all x1.3, shares unchanged, the
	 * same samples, each longer): not the code */
	head = helper_run("r5", "c5", 13.0, 12.74, 3.5 * 1.3, 0.5 * 1.3, 1.0 * 1.3);
	same_samples(head, 1.3);
	r = check(head, &hist[1], 3, NULL);
	assert_false(r->regressed);
	assert_true(r->machine_slower);
	assert_false(r->wall_distorted);
	rs_check_free(r);
	rs_runrec_free(head);
	/* the same factor with 1.3 times the samples is more work, not the machine */
	head = helper_run("r5", "c5", 13.0, 12.74, 3.5 * 1.3, 0.5 * 1.3, 1.0 * 1.3);
	r = check(head, &hist[1], 3, NULL);
	assert_true(r->regressed);
	assert_false(r->machine_slower);
	rs_check_free(r);
	rs_runrec_free(head);
	free_runs(hist, 4);
}

static void test_check_function_noise(void **state)
{
	rs_runrec *hist[3], *head;
	struct rs_check_result *r;
	struct rs_check_opts o = { 0 };
	char *v;

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
	rs_runrec_free(head);

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
	rs_runrec_free(head);
	free_runs(hist, 3);
}

/* A run recorded without stats: no workload stat, no arguments. */
static rs_runrec *run_without_stats(const char *id, const char *commit, double duration)
{
	return helper_run_months(id, commit, duration, duration * 0.98, 3.5, 0.5, 1.0, 0);
}

static void test_check_unknown_config(void **state)
{
	rs_runrec *hist[3], *head;
	struct rs_check_result *r;

	(void)state;
	hist[0] = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r2", "c2", 10.1, 9.9, 3.5, 0.5, 1.0);
	hist[2] = helper_run("r1", "c1", 9.95, 9.75, 3.5, 0.5, 1.0);
	set_int(&hist[0]->stats, "population", 30000);
	set_int(&hist[1]->stats, "population", 30000);
	set_int(&hist[2]->stats, "population", 120000);
	/* without stats: an unknown configuration, never compared with a known one */
	head = run_without_stats("r4", "c4", 1.0);
	r = check(head, hist, 3, NULL);
	assert_int_equal(r->n_baseline, 0);
	assert_int_equal(r->n_other_config, 3);
	assert_string_equal(r->other_config, "no stats here, sim.months 12 in those runs");
	rs_check_free(r);
	rs_runrec_free(head);
	/* a known configuration never has an unknown one as its baseline */
	rs_runrec_free(hist[2]);
	hist[2] = hist[1];
	hist[1] = hist[0];
	hist[0] = run_without_stats("r4", "c4", 1.0);
	head = helper_run("r5", "c5", 10.0, 9.8, 3.5, 0.5, 1.0);
	set_int(&head->stats, "population", 30000);
	r = check(head, hist, 3, NULL);
	assert_int_equal(r->n_baseline, 2);
	assert_int_equal(r->n_other_config, 1);
	assert_string_equal(r->other_config, "sim.months 12 here, no stats in those runs");
	assert_false(r->regressed);
	rs_check_free(r);
	/* the left-out run of another population, the right way round */
	set_int(&hist[2]->stats, "population", 120000);
	r = check(head, &hist[1], 2, NULL);
	assert_int_equal(r->n_other_config, 1);
	assert_string_equal(r->other_config, "population 30000 here, 120000 in those runs");
	rs_check_free(r);
	rs_runrec_free(head);
	free_runs(hist, 3);
}

static void test_check_config_from_session(void **state)
{
	rs_runrec *hist[2], *head;
	struct rs_check_result *r;

	(void)state;
	hist[0] = helper_run("r2", "c2", 10.0, 9.8, 3.5, 0.5, 1.0);
	hist[1] = helper_run("r1", "c1", 10.0, 9.8, 3.5, 0.5, 1.0);
	set_str(&hist[0]->summary->target, "Program: run_model.py --population 120000 --months 12");
	set_str(&hist[1]->summary->target, "Program: run_model.py --population 30000 --months 6");
	head = helper_run("r3", "c3", 10.0, 9.8, 3.5, 0.5, 1.0);
	set_str(&head->summary->target, "Program: run_model.py --population 30000 --months=12");
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
	rs_runrec_free(head);
	free_runs(hist, 2);
}

/*
 * What an index line gives trend and find (rs_run_entry_record: identity
 * and metrics, no summary, no stats). The workload and the configuration
 * come from the metrics; a slower run is judged on them alone.
 */
static rs_runrec *index_rec(const char *id, const char *commit, double duration, double months)
{
	rs_runrec *r = NULL;

	assert_int_equal(rs_runrec_new(&r), 0);
	set_str(&r->id, id);
	set_str(&r->commit, commit);
	set_str(&r->branch, "main");
	set_str(&r->trigger, "ci");
	set_str(&r->recorded_at, "2026-11-30T09:30:12Z");
	/* set out of order: the map keeps them sorted by name */
	set_int(&r->metrics, "months", (int64_t)months);
	set_real(&r->metrics, "duration", duration);
	set_real(&r->metrics, "cpu_time", duration);
	assert_string_equal(r->metrics.items[0].name, "cpu_time");
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
	free_runs(hist, 3);
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
