/*
 * results/report.h over many runs: the trend, the largest step of a
 * metric over a range (find) and the static site. Metrics come from the
 * run index; function series and run pages need each run's record, so
 * only the newest `summaries` runs are read -- that keeps a trend about a
 * second on a 10,000-run history.
 */
#include "report/report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff.h"
#include "analysis/html.h"
#include "analysis/render.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "results/buf.h"
#include "results/json.h"

/* report_internal.h */
void rs_report_trend_run(struct rs_trend_run *out, const struct rs_run_doc *doc)
{
	const json_t *check = json_object_get(doc->json, "check");

	memset(out, 0, sizeof(*out));
	out->rec = rs_run_doc_record(doc);
	out->path = json_string_value(json_object_get(doc->json, "path"));
	/* the report's own object (report_judge.c, or the site's state) */
	out->verdict = json_string_value(json_object_get(check, "verdict"));
	out->verdict_text = json_string_value(json_object_get(check, "text"));
	out->verdict_why = json_string_value(json_object_get(check, "why"));
}

/*
 * The runs `picked` (newest first) into `out`, oldest first: the newest
 * `summaries` as their whole record (function series need the summary),
 * the others as their index entry.
 */
static int load_runs(struct rs_run_doc **out, const struct rs_runs *runs,
		     const struct rs_run_entry **picked, size_t n, size_t summaries)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		const struct rs_run_entry *e = picked[n - 1 - i];

		if (n - 1 - i < summaries)
			err = rs_run_doc_load(&out[i], runs, e);
		else
			err = rs_run_doc_from_entry(&out[i], e);
	}
	return err;
}

/*
 * As load_runs, for the HTML page: the newest `summaries` records carry
 * their check verdict (rs_report_judge_run), which the charts mark. The
 * judge reads newest first.
 */
static int load_judged_runs(struct rs_run_doc **out, const struct rs_runs *runs,
			    const struct rs_run_entry **picked, size_t n, size_t summaries)
{
	struct rs_report_judge *j = NULL;
	const struct rs_run_doc *base;
	size_t k;
	int err;

	err = rs_report_judge_new(&j, runs);
	for (k = 0; !err && k < n; k++) {
		struct rs_run_doc **slot = &out[n - 1 - k];

		if (k >= summaries) {
			err = rs_run_doc_from_entry(slot, picked[k]);
			continue;
		}
		err = rs_report_judge_record(slot, j, picked[k]);
		if (!err)
			err = rs_report_judge_run(j, picked[k], *slot, &base);
	}
	rs_report_judge_free(j);
	return err;
}

/* The series and their rendering: HTML, text or JSON. */
static int render_trend(struct rs_buf *out, size_t *n_charts, struct rs_run_doc **runs, size_t n,
			const struct rs_report_trend_opts *o)
{
	struct rs_trend_opts topts = {
		.metrics = o->metrics, .n_metrics = o->n_metrics, .all_metrics = o->all_metrics,
		.functions = o->functions, .n_functions = o->n_functions, .total = o->total,
		.per = o->per, .no_workload = o->no_workload,
	};
	struct rs_html_links links = { o->run_url, o->commit_url, NULL };
	struct rs_trend_run *tr = calloc(n ? n : 1, sizeof(*tr));
	struct rs_trend *t = NULL;
	int err;

	if (!tr)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < n; i++)
		rs_report_trend_run(&tr[i], runs[i]);
	err = rs_trend_build(&t, tr, n, &topts);
	if (err)
		goto out;
	if (o->html)
		err = rs_html_trend_page(out, t, o->title, &links);
	else
		err = rs_render_trend(out, t, o->format);
	if (err)
		goto out;
	*n_charts = t->n_metrics + t->n_funcs;
out:
	rs_trend_free(t);
	free(tr);
	return err;
}

int rs_report_trend(struct rs_buf *out, size_t *n_runs, size_t *n_charts,
		    const struct rs_runs *runs, const struct rs_report_trend_opts *opts)
{
	const struct rs_run_entry **picked = NULL;
	struct rs_run_doc **loaded = NULL;
	size_t n = 0;
	int err;

	/* The newest `limit` runs of the branch, then back to oldest first. */
	err = rs_runs_newest(&picked, &n, runs, opts->branch, opts->limit);
	if (err)
		goto out;
	loaded = calloc(opts->limit ? opts->limit : 1, sizeof(*loaded));
	if (!loaded) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	/* the newest `summaries` records, in one fetch in a partial clone */
	err = rs_runs_prefetch(runs, picked, n < opts->summaries ? n : opts->summaries, "run.json");
	if (err)
		goto out;
	if (opts->html)
		err = load_judged_runs(loaded, runs, picked, n, opts->summaries);
	else
		err = load_runs(loaded, runs, picked, n, opts->summaries);
	if (err)
		goto out;
	err = render_trend(out, n_charts, loaded, n, opts);
	if (err)
		goto out;
	*n_runs = n;
out:
	for (size_t i = 0; loaded && i < n; i++)
		rs_run_doc_free(loaded[i]);
	free(loaded);
	free(picked);
	return err;
}

/* ---- find ---------------------------------------------------------------- */

/* The metric over the range's runs on one branch, oldest first. */
struct find_series {
	const struct rs_run_entry **runs;
	double *vals;        /* NAN where a run lacks the metric or workload */
	size_t n;
	struct rs_buf name;  /* "duration", or "duration/<workload key>" */
	size_t n_excluded;   /* runs of another configuration (values NAN) */
	char excluded_why[320];
};

/* The largest step: the means on each side and the runs around it. */
struct find_step {
	double step, rel, before, after;
	size_t last_before, first_after;  /* indexes into the series */
};

/*
 * The positions of `from` and `to` in the index, lo <= hi, with lo moved
 * back to the first run of its commit (resolving picks a commit's newest
 * run; a commit named as the start stands for all of its runs).
 */
static void find_range(size_t *lo, size_t *hi, const struct rs_runs *runs,
		       const struct rs_run_entry *from, const struct rs_run_entry *to)
{
	*lo = rs_runs_pos(runs, from);
	*hi = rs_runs_pos(runs, to);
	if (*lo > *hi) {
		size_t tmp = *lo;

		*lo = *hi;
		*hi = tmp;
	}
	while (*lo > 0 && !strcmp(rs_runs_at(runs, *lo - 1)->commit, rs_runs_at(runs, *lo)->commit))
		(*lo)--;
}

/* The value of `metric` of run `e` (divided by its workload `wkey` when set); NAN if none. */
static int find_value(double *out, const struct rs_run_entry *e, const char *metric,
		      const char *wkey)
{
	rs_runrec *j = NULL;
	const char *k2;
	double v, w;
	int err;

	err = rs_run_entry_record(&j, e);
	if (err)
		return err;
	*out = NAN;
	if (rs_runview_metric(j, metric, &v)) {
		if (!wkey)
			*out = v;
		else if (rs_runview_workload(j, wkey, &k2, &w))
			*out = v / w;
	}
	rs_runrec_free(j);
	return 0;
}

/*
 * The workload key time is divided by: the newest run's of the range
 * (the --per key or the usual ones) when the metric is a time and
 * normalising is not turned off; NULL otherwise.
 */
static int find_workload(char **wkey, const struct rs_run_entry *newest,
			 const char *metric, const struct rs_report_find_opts *o)
{
	rs_runrec *ej = NULL;
	const char *key = NULL;
	double w;
	int err;

	*wkey = NULL;
	if (o->no_workload || !rs_diff_is_time_metric(metric))
		return 0;
	err = rs_run_entry_record(&ej, newest);
	if (err)
		return err;
	if (rs_runview_workload(ej, o->per, &key, &w)) {
		*wkey = strdup(key);
		if (!*wkey)
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	rs_runrec_free(ej);
	return err;
}

/*
 * Like with like, as check and trend: the runs of another configuration
 * than most of the range's (rs_trend_reference) get NAN, so a run with 4x
 * the population is not the step.
 */
static int find_exclude(struct find_series *s, const struct rs_report_find_opts *o)
{
	rs_runrec **objs = calloc(s->n ? s->n : 1, sizeof(*objs));
	const char *vary = NULL;
	size_t ref, i;
	double w;
	int err = 0;

	if (!objs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < s->n && !err; i++)
		err = rs_run_entry_record(&objs[i], s->runs[i]);
	if (err || !s->n)
		goto out;
	if (!rs_runview_workload(objs[s->n - 1], o->per, &vary, &w))
		vary = NULL;
	ref = rs_trend_reference((const rs_runrec *const *)objs, s->n, vary);
	for (i = 0; i < s->n; i++) {
		char why[sizeof(s->excluded_why)];

		if (rs_runview_same_config(objs[i], objs[ref], vary, "in that run", "in most runs",
					   why, sizeof(why)))
			continue;
		if (!s->n_excluded)
			memcpy(s->excluded_why, why, sizeof(why));
		s->n_excluded++;
		s->vals[i] = NAN;
	}
out:
	for (i = 0; i < s->n; i++)
		rs_runrec_free(objs[i]);
	free(objs);
	return err;
}

/* The values of `metric` for the runs lo..hi on `branch`. */
static int find_collect(struct find_series *s, const struct rs_runs *runs, size_t lo,
			size_t hi, const char *branch, const char *metric,
			const struct rs_report_find_opts *o)
{
	char *wkey = NULL;
	int err;

	s->runs = calloc(hi - lo + 1, sizeof(*s->runs));
	s->vals = calloc(hi - lo + 1, sizeof(*s->vals));
	if (!s->runs || !s->vals)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = find_workload(&wkey, rs_runs_at(runs, hi), metric, o);
	if (err)
		goto out;
	err = rs_buf_printf(&s->name, wkey ? "%s/%s" : "%s", metric, wkey);
	if (err)
		goto out;
	for (size_t i = lo; i <= hi; i++) {
		const struct rs_run_entry *e = rs_runs_at(runs, i);

		if (branch && (!e->branch || strcmp(e->branch, branch)))
			continue;
		err = find_value(&s->vals[s->n], e, metric, wkey);
		if (err)
			goto out;
		s->runs[s->n++] = e;
	}
	err = find_exclude(s, o);
out:
	free(wkey);
	return err;
}

/* The largest step of the series (`range`: the argument, for the message). */
static int find_locate(struct find_step *st, const struct find_series *s, const char *range)
{
	const double *vals = s->vals;
	size_t i, k, nb = 0, na = 0;
	int err;

	st->step = 0;
	st->rel = NAN;
	st->before = st->after = 0;
	err = rs_changepoint_best(&k, vals, s->n, &st->step, &st->rel);
	if (err)
		return err;
	if (!k)
		return rs_error_set(RS_EUSAGE, "fewer than two runs with %s in the range %s",
				    s->name.ptr, range);
	for (i = 0; i < s->n; i++) {
		if (isnan(vals[i]))
			continue;
		if (i < k) {
			st->before += vals[i];
			nb++;
		} else {
			st->after += vals[i];
			na++;
		}
	}
	st->before /= (double)nb;
	st->after /= (double)na;
	/* the runs on each side: the last value before, the first after */
	for (i = k; i-- > 0;)
		if (!isnan(vals[i]))
			break;
	st->last_before = i;
	st->first_after = k;
	return 0;
}

static int find_render_json(struct rs_buf *out, const struct find_series *s,
			    const struct find_step *st)
{
	const struct rs_run_entry *lb = s->runs[st->last_before], *fa = s->runs[st->first_after];
	json_t *o = json_pack("{s:s,s:i,s:i,s:f,s:f,s:f,s:o,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}}",
		"metric", s->name.ptr, "runs", (json_int_t)s->n,
		"excluded_runs", (json_int_t)s->n_excluded, "before", st->before,
		"after", st->after, "step", st->step,
		"rel", isnan(st->rel) ? json_null() : json_real(st->rel),
		"last_before", "id", lb->id, "commit", lb->commit,
		"recorded_at", lb->recorded_at ? lb->recorded_at : "",
		"first_after", "id", fa->id, "commit", fa->commit,
		"recorded_at", fa->recorded_at ? fa->recorded_at : "");
	int err;

	err = rs_json_dump(out, o, JSON_INDENT(2)); /* o NULL: out of memory */
	json_decref(o);
	if (err)
		return err;
	return rs_buf_putc(out, '\n');
}

static int find_render(struct rs_buf *out, enum rs_format fmt, const struct find_series *s,
		       const struct find_step *st)
{
	const struct rs_run_entry *lb = s->runs[st->last_before], *fa = s->runs[st->first_after];
	struct rs_buf v1 = RS_BUF_INIT, v2 = RS_BUF_INIT;
	int err;

	err = rs_render_metric_value(&v1, s->name.ptr, st->before);
	if (err)
		goto out;
	err = rs_render_metric_value(&v2, s->name.ptr, st->after);
	if (err)
		goto out;
	if (fmt == RS_FORMAT_JSON) {
		err = find_render_json(out, s, st);
		goto out;
	}
	if (rs_buf_printf(out,
			  "largest step in %s over %zu runs: %s -> %s (%+.1f%%)\n"
			  "  last before: %s  commit %s\n"
			  "  first after: %s  commit %s\n",
			  s->name.ptr, s->n, v1.ptr, v2.ptr, isnan(st->rel) ? 0 : st->rel * 100,
			  lb->id, lb->commit, fa->id, fa->commit))
		err = rs_error_set(RS_EGENERIC, "out of memory");
	if (!err && s->n_excluded &&
	    rs_buf_printf(out, "%zu run%s of another configuration left out (%s)\n", s->n_excluded,
			  s->n_excluded == 1 ? "" : "s", s->excluded_why))
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	rs_buf_release(&v1);
	rs_buf_release(&v2);
	return err;
}

int rs_report_find(struct rs_buf *out, const struct rs_runs *runs,
		   const struct rs_run_entry *from, const struct rs_run_entry *to,
		   const struct rs_report_find_opts *opts)
{
	struct find_series s = { NULL, NULL, 0, RS_BUF_INIT, 0, "" };
	const char *metric = opts->metric ? opts->metric : "duration";
	const char *branch;
	struct find_step st;
	size_t lo, hi;
	int err;

	find_range(&lo, &hi, runs, from, to);
	branch = opts->branch ? opts->branch : rs_runs_at(runs, hi)->branch;
	err = find_collect(&s, runs, lo, hi, branch, metric, opts);
	if (err)
		goto out;
	err = find_locate(&st, &s, opts->range ? opts->range : "");
	if (err)
		goto out;
	err = find_render(out, opts->format, &s, &st);
out:
	free(s.runs);
	free(s.vals);
	rs_buf_release(&s.name);
	return err;
}
