/*
 * Trend series and change points.
 *
 * Change points use the classic mean-shift statistic: for a split of m
 * values into kb before and ka after, |mean_a - mean_b| *
 * sqrt(kb ka / m). Prefix sums make one scan O(m); binary segmentation
 * repeats it on both halves of every accepted split, so finding c change
 * points costs O(m c) at worst (m log m when they are well spread).
 */
#include "analysis/series.h"
#include "analysis/check.h"
#include "analysis/diff.h"
#include "analysis/runview.h"
#include "session/summary.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/escape.h"
#include "util/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The non-NAN values of v with their original positions. */
struct packed {
	double *x;
	size_t *at;
	size_t m;
};

static int pack(struct packed *p, const double *v, size_t n)
{
	size_t i;

	p->m = 0;
	p->x = malloc((n ? n : 1) * sizeof(*p->x));
	p->at = malloc((n ? n : 1) * sizeof(*p->at));
	if (!p->x || !p->at) {
		free(p->x);
		free(p->at);
		p->x = NULL;
		p->at = NULL;
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; i < n; i++)
		if (!isnan(v[i])) {
			p->x[p->m] = v[i];
			p->at[p->m++] = i;
		}
	return 0;
}

/*
 * Best split of x[lo, hi): returns k (lo < k < hi) or 0 when the segment
 * has fewer than two values; fills the step, the level before and the
 * pooled within-segment standard deviation (0 when undefined).
 */
static size_t best_split(const double *x, size_t lo, size_t hi, double *step,
			 double *before, double *sd)
{
	double total = 0, left = 0, best = -1;
	size_t m = hi - lo, k, bestk = 0, i;

	if (m < 2)
		return 0;
	for (i = lo; i < hi; i++)
		total += x[i];
	for (k = lo + 1; k < hi; k++) {
		double kb = (double)(k - lo), ka = (double)(hi - k), score;
		double mb, ma;

		left += x[k - 1];
		mb = left / kb;
		ma = (total - left) / ka;
		score = fabs(ma - mb) * sqrt(kb * ka / (double)m);
		if (score > best) {
			best = score;
			bestk = k;
			*step = ma - mb;
			*before = mb;
		}
	}
	if (sd) {
		double mb = *before, ma = *before + *step, ss = 0;

		for (i = lo; i < hi; i++) {
			double d = x[i] - (i < bestk ? mb : ma);

			ss += d * d;
		}
		*sd = m > 2 ? sqrt(ss / (double)(m - 2)) : 0;
	}
	return bestk;
}

int rs_changepoint_best(size_t *at, const double *v, size_t n, double *step, double *rel)
{
	struct packed p;
	double st = 0, before = 0;
	size_t k;
	int err;

	err = pack(&p, v, n);
	if (err)
		return err;
	*at = 0;
	k = best_split(p.x, 0, p.m, &st, &before, NULL);
	if (k) {
		*at = p.at[k];
		if (step)
			*step = st;
		if (rel)
			*rel = before != 0 ? st / fabs(before) : NAN;
	}
	free(p.x);
	free(p.at);
	return 0;
}

/*
 * Noise of x[lo, hi) from successive differences: 1.4826 * median |x[i+1]
 * - x[i]| / sqrt(2) estimates the standard deviation of the noise and,
 * unlike the residuals around one split, is hardly moved by further level
 * shifts inside the segment (they spoil only a few differences).
 */
static double diff_sigma(const double *x, size_t lo, size_t hi, double *d)
{
	size_t m = hi - lo, i;

	if (m < 3)
		return 0;
	/* d: the caller's scratch of the whole series' length, so that no
	 * allocation can fail here (a noise of 0 would keep any step) */
	for (i = lo; i + 1 < hi; i++)
		d[i - lo] = fabs(x[i + 1] - x[i]);
	return 1.4826 * rs_median(d, m - 1) / sqrt(2.0);
}

static void segment(const struct packed *p, double *scratch, size_t lo, size_t hi,
		    double min_rel, size_t *out, size_t max, size_t *count)
{
	double step = 0, before = 0, sd = 0, se;
	size_t k;

	if (*count >= max)
		return;
	k = best_split(p->x, lo, hi, &step, &before, &sd);
	if (!k)
		return;
	/* From nothing to something (a new function) is a change of any
	 * relative size; otherwise the step must be min_rel of the level. */
	if (step == 0 || (before != 0 && fabs(step) / fabs(before) < min_rel))
		return;
	/* The smaller of the two noise estimates: the split's residuals
	 * overstate noise when the segment holds more than one step. */
	sd = fmin(sd, diff_sigma(p->x, lo, hi, scratch));
	se = sd * sqrt(1.0 / (double)(k - lo) + 1.0 / (double)(hi - k));
	if (sd > 0 && fabs(step) < 3 * se)
		return;
	segment(p, scratch, lo, k, min_rel, out, max, count);
	if (*count < max)
		out[(*count)++] = p->at[k];
	segment(p, scratch, k, hi, min_rel, out, max, count);
}

int rs_changepoints(size_t *n_found, const double *v, size_t n, double min_rel,
		    size_t *out, size_t max)
{
	struct packed p = { NULL, NULL, 0 };
	double *scratch = NULL;
	size_t count = 0;
	int err;

	err = pack(&p, v, n);
	if (err)
		goto out;
	scratch = malloc((p.m ? p.m : 1) * sizeof(*scratch));
	if (!scratch) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (max)
		segment(&p, scratch, 0, p.m, min_rel, out, max, &count);
	*n_found = count;
out:
	free(scratch);
	free(p.x);
	free(p.at);
	return err;
}

/* ---- trend building ---- */

#define MAX_CHANGES 16

static void series_release(struct rs_series *s)
{
	free(s->name);
	free(s->function);
	free(s->v);
	free(s->changes);
}

static int series_init(struct rs_series *s, const char *name, const char *function,
		       size_t n)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	s->function = function ? strdup(function) : NULL;
	s->v = malloc((n ? n : 1) * sizeof(*s->v));
	s->changes = malloc(MAX_CHANGES * sizeof(*s->changes));
	if (!s->name || (function && !s->function) || !s->v || !s->changes) {
		series_release(s);
		memset(s, 0, sizeof(*s));
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; i < n; i++)
		s->v[i] = NAN;
	return 0;
}


/* One function row of a summary: "functions" then "more_functions".rows. */
struct fnrow_view {
	const char *bare, *cls, *file;
	long line;
	double self, total;
};

static size_t summary_rows(const struct rs_runrec_summary *sum)
{
	return sum ? sum->nfunctions + (sum->has_more ? sum->more.nrows : 0) : 0;
}

/* Row `j` (< summary_rows) of `sum` into `r`. */
static void summary_row(const struct rs_runrec_summary *sum, size_t j, struct fnrow_view *r)
{
	memset(r, 0, sizeof(*r));
	if (j < sum->nfunctions) {
		const struct rs_runrec_function *f = &sum->functions[j];

		r->bare = f->function;
		r->cls = f->class_name;
		r->file = f->file;
		r->line = (long)f->line;
		r->self = f->self;
		r->total = f->total;
	} else {
		const struct rs_runrec_more_row *row = &sum->more.rows[j - sum->nfunctions];

		r->bare = row->function;
		r->file = sum->more.files[row->file];
		r->line = (long)row->line;
		r->self = (double)row->self_us / 1e6;
		r->total = (double)row->total_us / 1e6;
	}
}

/* Key of a function across runs: its bare name and file (lines move,
 * and the class of a base-class method's `self` varies). */
static int fn_key(struct rs_buf *key, const struct fnrow_view *r)
{
	rs_buf_clear(key);
	return rs_buf_printf(key, "%s\x1f%s", r->bare, r->file);
}

/* Its place: file and first line, which a rename keeps. */
static int fn_place(struct rs_buf *key, const struct fnrow_view *r)
{
	rs_buf_clear(key);
	return rs_buf_printf(key, "%s\x1f%ld", r->file, r->line);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct top {
	const char *key;
	double weight;
};

static int cmp_top(const void *a, const void *b)
{
	const struct top *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight < y->weight ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* The requested name (index) function row `r` is, or -1; every row when none are requested. */
static long fn_wanted(const struct fnrow_view *r, const struct rs_trend_opts *o)
{
	size_t bl = strlen(r->bare);

	if (!o || !o->functions)
		return 0;
	for (size_t q = 0; q < o->n_functions; q++) {
		const char *w = o->functions[q];
		size_t wl = strlen(w);

		if (!strcmp(w, r->bare))
			return (long)q;
		/* "Class.fn": the class a row names, or any when a row names none */
		if (wl > bl + 1 && w[wl - bl - 1] == '.' && !strcmp(w + wl - bl, r->bare) &&
		    (!r->cls || (strlen(r->cls) == wl - bl - 1 && !strncmp(w, r->cls, wl - bl - 1))))
			return (long)q;
	}
	return -1;
}

/* The measure a trend follows: own time, or total time with opts.total. */
static double measure(const struct fnrow_view *r, const struct rs_trend_opts *o)
{
	return o && o->total ? r->total : r->self;
}

/*
 * Pass 1 for requested functions: the places (file, first line) where
 * each was seen, mapped to its key, so that a run where it carries
 * another name (a rename keeps file and first line) continues its series.
 * `found[q]` is set for each requested name seen at all.
 */
static int wanted_places(json_t *places, unsigned char *found, const rs_runrec *const *runs,
			 size_t n, const struct rs_trend_opts *o)
{
	struct rs_buf key = RS_BUF_INIT, place = RS_BUF_INIT;
	struct fnrow_view r;
	int err = 0;

	for (size_t i = 0; !err && i < n; i++) {
		const struct rs_runrec_summary *sum = runs[i]->summary;

		for (size_t j = 0; !err && j < summary_rows(sum); j++) {
			long q;

			summary_row(sum, j, &r);
			q = fn_wanted(&r, o);
			if (q < 0)
				continue;
			found[q] = 1;
			err = fn_key(&key, &r);
			if (!err && r.line > 0)
				err = fn_place(&place, &r);
			if (!err && r.line > 0 && !json_object_get(places, place.ptr) &&
			    json_object_set_new(places, place.ptr, json_string(key.ptr)))
				err = rs_error_set(RS_EGENERIC, "out of memory");
		}
	}
	rs_buf_release(&key);
	rs_buf_release(&place);
	return err;
}

/*
 * The series key of row `r` into `key`: its own, or (a renamed requested
 * function) the key its place maps to; 0 when the row is not followed.
 */
static int series_key(struct rs_buf *key, const struct fnrow_view *r, const json_t *places,
		      const struct rs_trend_opts *o, int *follow)
{
	const json_t *v;
	int err;

	*follow = 0;
	err = fn_key(key, r);
	if (err)
		return err;
	if (fn_wanted(r, o) >= 0) {
		*follow = 1;
		return 0;
	}
	if (!places || r->line <= 0)
		return 0;
	err = fn_place(key, r);
	if (err)
		return err;
	v = json_object_get(places, key->ptr);
	if (!json_is_string(v))
		return 0;
	rs_buf_clear(key);
	*follow = 1;
	return rs_buf_puts(key, json_string_value(v));
}

/*
 * Every followed function's weight in `weights` (key -> number): its
 * measure as a share of each run's duration, summed over the runs.
 */
static int weigh_functions(json_t *weights, const json_t *places, const rs_runrec *const *runs,
			   size_t n, const struct rs_trend_opts *o)
{
	struct rs_buf key = RS_BUF_INIT;
	struct fnrow_view r;
	int err = 0, follow;

	for (size_t i = 0; !err && i < n; i++) {
		const struct rs_runrec_summary *sum = runs[i]->summary;
		double base = sum && sum->duration.present ? sum->duration.v : 0;

		if (base <= 0)
			base = 1;
		for (size_t j = 0; !err && j < summary_rows(sum); j++) {
			const json_t *v;

			summary_row(sum, j, &r);
			err = series_key(&key, &r, places, o, &follow);
			if (err || !follow)
				continue;
			v = json_object_get(weights, key.ptr);
			if (json_object_set_new(weights, key.ptr,
				json_real((v ? json_real_value(v) : 0) + measure(&r, o) / base + 1e-12)))
				err = rs_error_set(RS_EGENERIC, "out of memory");
		}
	}
	rs_buf_release(&key);
	return err;
}

/* One function series per top entry (`want` of them); `sel` maps each key to its series. */
static int make_function_series(struct rs_trend *t, json_t *sel, const struct top *tops,
				size_t want)
{
	struct rs_buf label = RS_BUF_INIT, name = RS_BUF_INIT;
	int err = 0;

	t->funcs = calloc(want ? want : 1, sizeof(*t->funcs));
	if (!t->funcs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; !err && i < want; i++) {
		const char *sep = strchr(tops[i].key, '\x1f');

		rs_buf_clear(&name);
		rs_buf_clear(&label);
		err = rs_buf_put(&name, tops[i].key, (size_t)(sep - tops[i].key));
		if (err)
			break;
		err = rs_buf_printf(&label, "%s (%s)", name.ptr, basename_of(sep + 1));
		if (err)
			break;
		err = series_init(&t->funcs[t->n_funcs], label.ptr, name.ptr, t->n);
		if (err)
			break;
		t->n_funcs++;
		if (json_object_set_new(sel, tops[i].key, json_integer((json_int_t)i)))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	rs_buf_release(&name);
	rs_buf_release(&label);
	return err;
}

/* A requested name no run has: an error that says where it looked. */
static int unknown_function(const unsigned char *found, size_t n,
			    const struct rs_trend_opts *o)
{
	for (size_t q = 0; o && o->functions && q < o->n_functions; q++)
		if (!found[q])
			return rs_error_set(RS_EUSAGE,
				"no function '%s' in the stored summaries of the %zu run%s read "
				"(functions above 0.1%% of a run are stored; 'results show RUN' lists them)",
				o->functions[q], n, n == 1 ? "" : "s");
	return 0;
}

/*
 * Choose the function series: requested names (an error when one is in
 * no run), or the heaviest by the sum over runs of their share of the
 * measure. *chosen maps key -> series index, *places (requested only:
 * file and first line -> key) follows renames; both the caller's.
 */
static int choose_functions(struct rs_trend *t, json_t **chosen, json_t **places,
			    const rs_runrec *const *runs, size_t n,
			    const struct rs_trend_opts *o)
{
	json_t *weights = json_object(), *sel = json_object();
	unsigned char *found = calloc(o && o->functions ? o->n_functions + 1 : 1, 1);
	struct top *tops = NULL;
	size_t ntop = 0, want;
	const char *k;
	json_t *v;
	int err = 0;

	*places = NULL;
	if (!weights || !sel || !found) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (o && o->functions) {
		*places = json_object();
		if (!*places) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		err = wanted_places(*places, found, runs, n, o);
		if (!err)
			err = unknown_function(found, n, o);
		if (err)
			goto out;
	}
	err = weigh_functions(weights, *places, runs, n, o);
	if (err)
		goto out;
	tops = calloc(json_object_size(weights) + 1, sizeof(*tops));
	if (!tops) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	json_object_foreach(weights, k, v) {
		tops[ntop].key = k;
		tops[ntop++].weight = json_real_value(v);
	}
	qsort(tops, ntop, sizeof(*tops), cmp_top);
	want = o && o->functions ? ntop : (o && o->top_functions ? o->top_functions : 8);
	if (want > ntop)
		want = ntop;
	err = make_function_series(t, sel, tops, want);
out:
	free(tops);
	free(found);
	json_decref(weights);
	if (err) {
		json_decref(sel);
		json_decref(*places);
		*places = NULL;
		return err;
	}
	*chosen = sel;
	return 0;
}

/*
 * The starting value of each chosen function in run `i` (summary `sum`):
 * not stored is 0 only when the run says it did not run at all; below
 * the stored floor (or an older summary's cut) it is unknown (NAN).
 */
static void fill_absent(struct rs_trend *t, const json_t *chosen,
			const struct rs_runrec_summary *sum, size_t i)
{
	int has_ran = sum->ran != NULL;
	const char *k;
	json_t *at0;

	json_object_foreach((json_t *)chosen, k, at0) {
		const char *sep = strchr(k, '\x1f');
		size_t q = (size_t)json_integer_value(at0);
		int ran = -1;

		if (q >= t->n_funcs)
			continue;
		if (has_ran && sep) {
			char *bare = strndup(k, (size_t)(sep - k));

			if (bare)
				ran = rs_summary_ran_in(sum->ran, bare, sep + 1);
			free(bare);
		}
		t->funcs[q].v[i] = ran == 0 || !has_ran ? 0 : NAN;
	}
}

/* Add `seconds` to function series `q` at run `i` (NAN counts as 0). */
static void fill_add(struct rs_trend *t, size_t q, size_t i, double seconds)
{
	if (isnan(t->funcs[q].v[i]))
		t->funcs[q].v[i] = 0;
	t->funcs[q].v[i] += seconds;
}

static int fill_functions(struct rs_trend *t, const json_t *chosen, const json_t *places,
			  const rs_runrec *const *runs, const struct rs_trend_opts *o)
{
	struct rs_buf key = RS_BUF_INIT;
	struct fnrow_view r;
	int err = 0, follow;

	for (size_t i = 0; !err && i < t->n; i++) {
		const struct rs_runrec_summary *sum = runs[i]->summary;

		if (!sum)
			continue; /* no summary: unknown, stays NAN */
		fill_absent(t, chosen, sum, i);
		for (size_t j = 0; !err && j < summary_rows(sum); j++) {
			const json_t *at;

			summary_row(sum, j, &r);
			err = series_key(&key, &r, places, o && o->functions ? o : NULL, &follow);
			if (err)
				break;
			at = json_object_get(chosen, key.ptr);
			if (at)
				fill_add(t, (size_t)json_integer_value(at), i, measure(&r, o));
		}
	}
	rs_buf_release(&key);
	return err;
}

static int add_metric_series(struct rs_trend *t, size_t *alloc, const char *name,
			     const char *per, const rs_runrec *const *runs)
{
	struct rs_buf label = RS_BUF_INIT;
	struct rs_series *s;
	size_t i;
	int err;

	err = rs_array_grow(&t->metrics, alloc, t->n_metrics + 1, sizeof(*t->metrics), 8);
	if (err)
		return err;
	err = per ? rs_buf_printf(&label, "%s/%s", name, per) : rs_buf_puts(&label, name);
	if (err)
		return err;
	s = &t->metrics[t->n_metrics];
	err = series_init(s, label.ptr, NULL, t->n);
	rs_buf_release(&label);
	if (err)
		return err;
	t->n_metrics++;
	for (i = 0; i < t->n; i++) {
		double v, w;
		const char *k;

		if (!rs_runview_metric(runs[i], name, &v))
			continue;
		if (per) {
			if (!rs_runview_workload(runs[i], per, &k, &w))
				continue;
			v /= w;
		}
		s->v[i] = v;
	}
	return 0;
}

static char *dup_str(const char *s)
{
	return strdup(s ? s : "");
}

/* Distinct configurations told apart when choosing the trend's reference. */
#define CONFIGS_MAX 16

size_t rs_trend_reference(const rs_runrec *const *runs, size_t n, const char *vary)
{
	size_t rep[CONFIGS_MAX] = { 0 }, count[CONFIGS_MAX] = { 0 }, n_rep = 0, ref, best, i, j;

	if (!n)
		return 0;
	/* The reference: the configuration most runs share (the newest on a
	 * tie), so one odd run at the end does not hide the history. */
	for (i = n; i-- > 0;) {
		for (j = 0; j < n_rep; j++)
			if (rs_runview_same_config(runs[rep[j]], runs[i], vary, NULL, NULL, NULL, 0))
				break;
		if (j < n_rep) {
			count[j]++;
		} else if (n_rep < CONFIGS_MAX) {
			rep[n_rep] = i;
			count[n_rep++] = 1;
		}
	}
	ref = rep[0];
	for (j = 1, best = count[0]; j < n_rep; j++)
		if (count[j] > best) {
			best = count[j];
			ref = rep[j];
		}
	return ref;
}

/* t->left_out[i] = what + detail, unless it says why already (best effort). */
static void left_out(struct rs_trend *t, size_t i, const char *what, const char *detail)
{
	size_t a = strlen(what), b = strlen(detail);

	if (t->left_out[i])
		return;
	t->left_out[i] = malloc(a + b + 1);
	if (!t->left_out[i])
		return;
	memcpy(t->left_out[i], what, a);
	memcpy(t->left_out[i] + a, detail, b + 1);
}

/*
 * The runs' check verdicts (a run's "check", set by the report that
 * judged it), and why the check kept a run out of the baselines.
 */
static int trend_verdicts(struct rs_trend *t, const struct rs_trend_run *runs)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *cls = runs[i].verdict;
		const char *text = runs[i].verdict_text;
		const char *why = runs[i].verdict_why;

		if (!cls)
			continue;
		t->verdicts[i] = strdup(cls);
		t->verdict_texts[i] = strdup(text ? text : "");
		if (!t->verdicts[i] || !t->verdict_texts[i])
			return rs_error_set(RS_EGENERIC, "out of memory");
		if (why && !strcmp(cls, "machine"))
			left_out(t, i, "its wall time is no baseline: ", why);
		else if (why && !strcmp(cls, "not-comparable"))
			left_out(t, i, "not compared: ", why);
	}
	return 0;
}

/* The change points of `s`, from the values that are evidence of one (rs_trend_evidence). */
int rs_trend_evidence(const struct rs_trend *t, const struct rs_series *s, size_t i)
{
	int cpu = !s->function && !strncmp(s->name, "cpu_time", 8);

	return !isnan(s->v[i]) &&
	       (cpu || !t->verdicts || !t->verdicts[i] || strcmp(t->verdicts[i], "machine"));
}

static int series_changes(struct rs_trend *t, struct rs_series *s, double min_step)
{
	double *v = malloc((t->n ? t->n : 1) * sizeof(*v));
	int err;

	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < t->n; i++)
		v[i] = rs_trend_evidence(t, s, i) ? s->v[i] : NAN;
	err = rs_changepoints(&s->n_changes, v, t->n, min_step, s->changes, MAX_CHANGES);
	free(v);
	return err;
}

/* Like with like: see rs_trend_build. */
static void exclude_unlike(struct rs_trend *t, const rs_runrec *const *runs,
			   const struct rs_trend_opts *o)
{
	const char *vary = NULL;
	size_t ref, i, j;
	double w;

	if (!t->n)
		return;
	if (!rs_runview_workload(runs[t->n - 1], o ? o->per : NULL, &vary, &w))
		vary = NULL;
	ref = rs_trend_reference(runs, t->n, vary);
	for (i = 0; i < t->n; i++) {
		const char *oid = rs_runview_session_oid(runs[i]);
		char why[sizeof(t->excluded_why)];
		int out = 0;

		if (!rs_runview_same_config(runs[i], runs[ref], vary, "in that run",
					    "in most runs", why, sizeof(why))) {
			if (!t->n_excluded || !t->excluded_why[0])
				memcpy(t->excluded_why, why, sizeof(why));
			out = 1;
			left_out(t, i, "another configuration: ", why);
		}
		for (j = 0; !out && oid && j < i; j++) {
			const char *o2 = rs_runview_session_oid(runs[j]);

			out = o2 && !strcmp(o2, oid);
			if (out)
				left_out(t, i, "a repeated record of the session of run ", t->ids[j]);
		}
		if (!out)
			continue;
		t->n_excluded++;
		for (j = 0; j < t->n_metrics; j++)
			t->metrics[j].v[i] = NAN;
		for (j = 0; j < t->n_funcs; j++)
			t->funcs[j].v[i] = NAN;
	}
}

/* The runs' ids, commits, dates and folders. */
static int trend_runs(struct rs_trend *t, const struct rs_trend_run *runs, size_t n)
{
	t->n = n;
	t->ids = calloc(n ? n : 1, sizeof(char *));
	t->commits = calloc(n ? n : 1, sizeof(char *));
	t->dates = calloc(n ? n : 1, sizeof(char *));
	t->paths = calloc(n ? n : 1, sizeof(char *));
	t->verdicts = calloc(n ? n : 1, sizeof(char *));
	t->verdict_texts = calloc(n ? n : 1, sizeof(char *));
	t->left_out = calloc(n ? n : 1, sizeof(char *));
	if (!t->ids || !t->commits || !t->dates || !t->paths || !t->verdicts || !t->verdict_texts ||
	    !t->left_out)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < n; i++) {
		t->ids[i] = dup_str(runs[i].rec->id);
		t->commits[i] = dup_str(runs[i].rec->commit);
		t->dates[i] = dup_str(runs[i].rec->recorded_at);
		t->paths[i] = dup_str(runs[i].path);
		if (!t->ids[i] || !t->commits[i] || !t->dates[i] || !t->paths[i])
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/*
 * --all-metrics: a series for every numeric metric any run has, first
 * seen first (jansson objects keep insertion order), and the `names`.
 */
static int all_metric_series(struct rs_trend *t, size_t *alloc, const rs_runrec *const *runs,
			     size_t n, const char *const *names, size_t n_names)
{
	json_t *all = json_object();
	const char *k;
	json_t *v;
	size_t i;
	int err = 0;

	if (!all)
		return rs_error_set(RS_EGENERIC, "out of memory");
	/* a name not set would be a metric missing from the trend */
	for (i = 0; i < n && !err; i++)
		for (size_t j = 0; j < runs[i]->metrics.n && !err; j++)
			if (json_object_set_new(all, runs[i]->metrics.items[j].name, json_true()))
				err = rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n_names && !err; i++)
		if (!json_object_get(all, names[i]) &&
		    json_object_set_new(all, names[i], json_true()))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	json_object_foreach(all, k, v) {
		if (err)
			break;
		err = add_metric_series(t, alloc, k, NULL, runs);
		if (err)
			break;
	}
	json_decref(all);
	return err;
}

/*
 * The time metrics among `names` per unit of workload, the one the newest
 * run that records a workload names.
 */
static int workload_series(struct rs_trend *t, size_t *alloc, const rs_runrec *const *runs,
			   size_t n, const char *const *names, size_t n_names, const char *per)
{
	const char *key = NULL;
	double w;
	size_t i;
	int err;

	for (i = n; i-- > 0;)
		if (rs_runview_workload(runs[i], per, &key, &w))
			break;
	if (!key)
		return 0;
	t->workload_key = strdup(key);
	if (!t->workload_key)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n_names; i++) {
		if (!rs_diff_is_time_metric(names[i]))
			continue;
		err = add_metric_series(t, alloc, names[i], t->workload_key, runs);
		if (err)
			return err;
	}
	return 0;
}

/* Every metric series: the names (or all, --all-metrics), then per unit of workload. */
static int metric_series(struct rs_trend *t, const rs_runrec *const *runs, size_t n,
			 const struct rs_trend_opts *o)
{
	static const char *const default_metrics[] = { "duration", "cpu_time" };
	const char *const *names = o && o->metrics ? o->metrics : default_metrics;
	size_t n_names = o && o->metrics ? o->n_metrics : 2, alloc = 0;
	int err = 0;

	if (o && o->all_metrics)
		err = all_metric_series(t, &alloc, runs, n, names, n_names);
	for (size_t i = 0; !(o && o->all_metrics) && !err && i < n_names; i++)
		err = add_metric_series(t, &alloc, names[i], NULL, runs);
	if (err || (o && o->no_workload))
		return err;
	return workload_series(t, &alloc, runs, n, names, n_names, o ? o->per : NULL);
}

/*
 * The names asked for become series names and JSON strings (a name jansson
 * refuses would read as out of memory when the trend is written): each
 * must be UTF-8.
 */
static int names_utf8(const char *what, const char *const *names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		if (!rs_utf8_valid(names[i]))
			return rs_error_set(RS_EUSAGE, "a %s name given is not UTF-8", what);
	return 0;
}

int rs_trend_build(struct rs_trend **out, const struct rs_trend_run *given, size_t n,
		   const struct rs_trend_opts *o)
{
	double min_step = o && o->min_step > 0 ? o->min_step : 0.05;
	struct rs_trend *t = calloc(1, sizeof(*t));
	const rs_runrec **runs = calloc(n ? n : 1, sizeof(*runs));
	json_t *chosen = NULL, *places = NULL;
	size_t i;
	int err;

	if (!t || !runs) {
		free(t);
		free(runs);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; i < n; i++)
		runs[i] = given[i].rec;
	t->total = o && o->total;
	err = o ? names_utf8("metric", o->metrics, o->n_metrics) : 0;
	if (!err && o)
		err = names_utf8("function", o->functions, o->n_functions);
	if (!err && o && o->per && !rs_utf8_valid(o->per))
		err = rs_error_set(RS_EUSAGE, "the workload key given is not UTF-8");
	if (err)
		goto out;
	err = trend_runs(t, given, n);
	if (err)
		goto out;
	err = metric_series(t, runs, n, o);
	if (err)
		goto out;
	err = choose_functions(t, &chosen, &places, runs, n, o);
	if (err)
		goto out;
	err = fill_functions(t, chosen, places, runs, o);
	if (err)
		goto out;
	exclude_unlike(t, runs, o);
	err = trend_verdicts(t, given);
	if (err)
		goto out;
	for (i = 0; !err && i < t->n_metrics; i++)
		err = series_changes(t, &t->metrics[i], min_step);
	for (i = 0; !err && i < t->n_funcs; i++)
		err = series_changes(t, &t->funcs[i], min_step);
out:
	free(runs);
	json_decref(chosen);
	json_decref(places);
	if (err) {
		rs_trend_free(t);
		return err;
	}
	*out = t;
	return 0;
}

void rs_trend_free(struct rs_trend *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++) {
		if (t->ids)
			free(t->ids[i]);
		if (t->commits)
			free(t->commits[i]);
		if (t->dates)
			free(t->dates[i]);
		if (t->paths)
			free(t->paths[i]);
		if (t->verdicts)
			free(t->verdicts[i]);
		if (t->verdict_texts)
			free(t->verdict_texts[i]);
		if (t->left_out)
			free(t->left_out[i]);
	}
	free(t->verdicts);
	free(t->verdict_texts);
	free(t->left_out);
	free(t->ids);
	free(t->commits);
	free(t->dates);
	free(t->paths);
	for (i = 0; i < t->n_metrics; i++)
		series_release(&t->metrics[i]);
	for (i = 0; i < t->n_funcs; i++)
		series_release(&t->funcs[i]);
	free(t->metrics);
	free(t->funcs);
	free(t->workload_key);
	free(t);
}

const struct rs_series *rs_trend_metric(const struct rs_trend *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n_metrics; i++)
		if (!strcmp(t->metrics[i].name, name))
			return &t->metrics[i];
	return NULL;
}
