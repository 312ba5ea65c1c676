/*
 * The noise-aware gate; the model is described in check.h.
 *
 * Noise band of a metric: over every group of comparable runs that share
 * a commit (the head's own group included), take
 *   - the pooled relative standard deviation s (residuals from each
 *     group's mean, divided by that mean, pooled over the groups'
 *     degrees of freedom), and
 *   - the largest relative range (max - min) / median seen in a group.
 * The band is max(3 s, largest range): a change that big has been seen
 * to happen with no code change at all, so it is not evidence of one.
 * The baseline window adds its own: three robust spreads (noise.h) of
 * the window's values relative to their median, once it holds three runs.
 * With neither, the band is 0 and only the threshold applies.
 */
#include "analysis/check.h"
#include "analysis/culprit.h"
#include "analysis/render.h"
#include "analysis/runview.h"
#include "results/buf.h"
#include "results/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs looked at for the noise estimate, at most. */
#define NOISE_RUNS_MAX 64
#define CHECK_MAX_PHASES 16 /* phase metrics checked by default (RS_PHASES_MAX) */

struct spec {
	const char *metric; /* raw metric name */
	const char *per;    /* workload key, or NULL */
	int gating;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* check.h */
const struct rs_check_metric *rs_check_headline(const struct rs_check_result *r)
{
	size_t i;

	for (i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].gating && !strncmp(r->metrics[i].name, "duration", 8))
			return &r->metrics[i];
	for (i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].gating)
			return &r->metrics[i];
	return NULL;
}

double rs_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int spec_value(const rs_runrec *run, const struct spec *s, double *out)
{
	double v, w;
	const char *key;

	if (!rs_runview_metric(run, s->metric, &v))
		return 0;
	if (!s->per) {
		*out = v;
		return 1;
	}
	if (!rs_runview_workload(run, s->per, &key, &w))
		return 0;
	*out = v / w;
	return 1;
}

/* Whether a spec is wall time, which a loaded machine distorts. */
static int is_wall(const struct spec *s)
{
	return !strcmp(s->metric, "duration");
}

static double noise_band(const struct spec *s, const rs_runrec *const *runs, size_t n)
{
	double sumsq = 0, maxrange = 0, vals[NOISE_RUNS_MAX];
	size_t dof = 0, i, j;
	unsigned char done[NOISE_RUNS_MAX] = { 0 };

	for (i = 0; i < n; i++) {
		const char *ci = runs[i]->commit;
		size_t k = 0;
		double mean = 0, lo, hi, med;

		if (done[i] || !ci)
			continue;
		for (j = i; j < n; j++) {
			const char *cj = runs[j]->commit;

			if (done[j] || !cj || strcmp(ci, cj))
				continue;
			done[j] = 1;
			if (spec_value(runs[j], s, &vals[k]))
				k++;
		}
		if (k < 2)
			continue;
		for (j = 0; j < k; j++)
			mean += vals[j];
		mean /= (double)k;
		if (mean == 0)
			continue;
		for (j = 0; j < k; j++) {
			double r = (vals[j] - mean) / mean;

			sumsq += r * r;
		}
		dof += k - 1;
		med = rs_median(vals, k); /* sorts vals */
		lo = vals[0];
		hi = vals[k - 1];
		if (med != 0 && (hi - lo) / fabs(med) > maxrange)
			maxrange = (hi - lo) / fabs(med);
	}
	if (!dof)
		return 0;
	return fmax(3 * sqrt(sumsq / (double)dof), maxrange);
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

/* The row of d->funcs that culprit `x` names, or (size_t)-1. */
static size_t culprit_row(const struct rs_diff *d, const struct rs_culprit *x)
{
	for (size_t i = 0; i < d->n_funcs; i++) {
		const struct rs_func_delta *f = &d->funcs[i];

		if (f->change != RS_FUNC_VANISHED && f->line == x->line && !strcmp(f->file, x->file) &&
		    !strcmp(f->function, x->function))
			return i;
	}
	for (size_t i = 0; i < d->n_funcs; i++) {
		const struct rs_func_delta *f = &d->funcs[i];
		const char *bare = strrchr(x->function, '.');

		bare = bare ? bare + 1 : x->function;
		if (f->change != RS_FUNC_VANISHED && !strcmp(f->file, x->file) && f->key &&
		    !strncmp(f->key, bare, strlen(bare)) && f->key[strlen(bare)] == '\x1f')
			return i;
	}
	return (size_t)-1;
}

/*
 * Name the functions behind a regression. First the culprits the diff
 * found by calling context (rs_culprits_find: a new call, a function
 * slower wherever it is called, or slower in its own body); then,
 * to fill the list, by total (inclusive) time (rs_diff_explain): the
 * deepest frames whose total grew by at least a fifth of the growth of
 * the run's duration (per unit of workload when normalised). Own time
 * alone misses the usual culprit in library-heavy code: a new function
 * with 13 ms of its own and 4 s in the pandas calls it makes.
 */
static int pick_responsible(struct rs_check_result *r, size_t max)
{
	const struct rs_diff *d = r->diff;
	double wb = 1, wh = 1, grow = 0;
	size_t i, n = 0, *more = NULL, nmore;

	if (d->workload_key && d->base_workload > 0 && d->head_workload > 0) {
		wb = d->base_workload;
		wh = d->head_workload;
	}
	for (i = 0; i < d->n_metrics; i++)
		if (!strcmp(d->metrics[i].name, "duration"))
			grow = d->metrics[i].head / wh - d->metrics[i].base / wb;
	r->responsible = calloc(max ? max : 1, sizeof(*r->responsible));
	more = calloc(max ? max : 1, sizeof(*more));
	if (!r->responsible || !more) {
		free(more);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; d->culprits && i < d->culprits->n && n < max; i++) {
		size_t row = culprit_row(d, &d->culprits->c[i]), j;

		for (j = 0; j < n && row != (size_t)-1; j++)
			if (r->responsible[j] == row)
				row = (size_t)-1;
		if (row != (size_t)-1)
			r->responsible[n++] = row;
	}
	nmore = rs_diff_explain(d, wb, wh, grow > 0 ? grow / 5 : 0, more, max);
	for (i = 0; i < nmore && n < max; i++) {
		size_t j;

		for (j = 0; j < n && r->responsible[j] != more[i]; j++)
			;
		if (j == n)
			r->responsible[n++] = more[i];
	}
	r->n_responsible = n;
	free(more);
	return 0;
}

/* What rs_check_run works on, step by step. */
struct check_ctx {
	const rs_runrec *head;
	const struct rs_check_opts *opts;  /* may be NULL */
	int explicit_baseline;
	struct rs_check_result *r;
	const rs_runrec **comparable;         /* history runs that may be compared */
	size_t n_comp;
	const rs_runrec **baseline;           /* of those, the baseline */
	size_t n_base;
	struct spec *specs;                /* what is judged */
	size_t n_specs;
	size_t *metric_spec;               /* r->metrics[i] is specs[metric_spec[i]] */
	double *vals;                      /* scratch: one value per history run */
	const rs_runrec *noise_runs[NOISE_RUNS_MAX];
	size_t n_noise;
	unsigned char *wall_out;           /* baseline[i]'s wall time is distorted */
	const rs_runrec *typical;             /* the baseline run the diff is against */
};

static int out_of_memory(void)
{
	return rs_error_set(RS_EGENERIC, "out of memory");
}

/* The result and the working arrays, sized for the history and the metric names. */
static int check_alloc(struct check_ctx *c, size_t n_history, size_t n_names)
{
	size_t nh = n_history ? n_history : 1;

	c->r = calloc(1, sizeof(*c->r));
	c->comparable = calloc(nh, sizeof(*c->comparable));
	c->baseline = calloc(nh, sizeof(*c->baseline));
	c->vals = calloc(nh, sizeof(*c->vals));
	c->specs = calloc(2 * n_names + 1, sizeof(*c->specs));
	c->metric_spec = calloc(2 * n_names + 1, sizeof(*c->metric_spec));
	c->wall_out = calloc(nh, sizeof(*c->wall_out));
	if (!c->r || !c->comparable || !c->baseline || !c->vals || !c->specs || !c->metric_spec ||
	    !c->wall_out)
		return out_of_memory();
	c->r->head_id = xstrdup(c->head->id);
	c->r->head_commit = xstrdup(c->head->commit);
	if (!c->r->head_id || !c->r->head_commit)
		return out_of_memory();
	return 0;
}

static void check_release(struct check_ctx *c)
{
	free(c->comparable);
	free(c->baseline);
	free(c->vals);
	free(c->specs);
	free(c->metric_spec);
	free(c->wall_out);
}

/* A history run from another machine: left out, or (the user's baseline) an error. */
static int other_machine(struct check_ctx *c, const rs_runrec *h, const char *why)
{
	if (!c->explicit_baseline) {
		c->r->n_other_machine++;
		return 0;
	}
	return rs_error_set(RS_EUSAGE,
		"baseline '%s' ran on another machine (%s '%s', not '%s'); "
		"compare runs of the same runner, or use 'results compare'",
		h->id ? h->id : "?", why, str_or_empty(rs_runview_machine(h, why)),
		str_or_empty(rs_runview_machine(c->head, why)));
}

/*
 * Whether history run `h` (session `oid`) repeats a session already
 * counted: the head's (remembered in duplicate_of) or a comparable run's.
 */
static int is_duplicate(struct check_ctx *c, const rs_runrec *h, const char *oid,
			const char *head_oid, int *dup)
{
	size_t j;

	*dup = 0;
	if (!oid)
		return 0;
	if (head_oid && !strcmp(oid, head_oid)) {
		if (!c->r->duplicate_of) {
			c->r->duplicate_of = xstrdup(h->id ? h->id : "?");
			if (!c->r->duplicate_of)
				return out_of_memory();
		}
		*dup = 1;
		return 0;
	}
	for (j = 0; j < c->n_comp; j++) {
		const char *o2 = rs_runview_session_oid(c->comparable[j]);

		if (o2 && !strcmp(o2, oid)) {
			*dup = 1;
			break;
		}
	}
	return 0;
}

/*
 * Step 1: the runs that may be compared with the head at all: same
 * machine, same configuration (`vary`, the workload key, may differ), not
 * a repeat of a session already counted.
 */
static int pick_comparable(struct check_ctx *c, const rs_runrec *const *history, size_t n_history,
			   const char *vary)
{
	const char *head_id = c->r->head_id, *head_oid = rs_runview_session_oid(c->head);
	struct rs_check_result *r = c->r;
	int err, dup;

	for (size_t i = 0; i < n_history; i++) {
		const char *why = NULL;
		char cwhy[sizeof(r->other_config)];

		if (*head_id && !strcmp(str_or_empty(history[i]->id), head_id))
			continue;
		if (!rs_runview_same_machine(c->head, history[i], &why)) {
			err = other_machine(c, history[i], why);
			if (err)
				return err;
			continue;
		}
		if (!c->explicit_baseline &&
		    !rs_runview_same_config(c->head, history[i], vary, "here", "in those runs",
					    cwhy, sizeof(cwhy))) {
			if (!r->n_other_config)
				memcpy(r->other_config, cwhy, sizeof(cwhy));
			r->n_other_config++;
			continue;
		}
		err = is_duplicate(c, history[i], rs_runview_session_oid(history[i]), head_oid,
				   &dup);
		if (err)
			return err;
		if (dup)
			r->n_duplicates++;
		else
			c->comparable[c->n_comp++] = history[i];
	}
	return 0;
}

/*
 * Step 2: the baseline, other code than the head's: the window of the
 * newest comparable runs of earlier commits (RS_CHECK_WINDOW by default),
 * never past a run that accepted a slowdown. Their median is the
 * baseline, so one odd run among them neither becomes the baseline nor
 * hides a change (Bencher and conbench judge a run against a window of
 * history the same way). Earlier runs of the head's own commit (re-runs)
 * say how noisy the figures are, not whether this code is slower -- a
 * retried nightly job must not pass by being compared with its own first
 * attempt.
 */
static void pick_baseline(struct check_ctx *c)
{
	const char *hc = str_or_empty(c->head->commit);
	size_t window = c->opts && c->opts->window ? c->opts->window : RS_CHECK_WINDOW;
	int reached_accepted = 0;

	for (size_t i = 0; i < c->n_comp; i++) {
		const char *cm = str_or_empty(c->comparable[i]->commit);

		if (c->explicit_baseline) {
			c->baseline[c->n_base++] = c->comparable[i];
			continue;
		}
		if (*hc && !strcmp(cm, hc))
			continue;
		/* an accepted slowdown starts a new baseline */
		if (c->n_base < window && !reached_accepted) {
			c->baseline[c->n_base++] = c->comparable[i];
			reached_accepted = rs_runview_accepted(c->comparable[i]) != NULL;
		}
	}
}

/* The baseline's ids, commit and "accept" reason in the result. */
static int record_baseline(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;
	const char *accepted;

	r->baseline_ids = calloc(c->n_base ? c->n_base : 1, sizeof(*r->baseline_ids));
	if (!r->baseline_ids)
		return out_of_memory();
	for (size_t i = 0; i < c->n_base; i++) {
		const char *cm = str_or_empty(c->baseline[i]->commit);
		size_t j;

		r->baseline_ids[i] = xstrdup(c->baseline[i]->id ? c->baseline[i]->id : "?");
		if (!r->baseline_ids[i])
			return out_of_memory();
		r->n_baseline++;
		for (j = 0; j < i; j++)
			if (!strcmp(cm, str_or_empty(c->baseline[j]->commit)))
				break;
		if (j == i)
			r->n_baseline_commits++;
	}
	if (!c->n_base)
		return 0;
	r->baseline_commit = xstrdup(c->baseline[0]->commit);
	if (!r->baseline_commit)
		return out_of_memory();
	accepted = rs_runview_accepted(c->baseline[0]);
	if (accepted) {
		r->baseline_accepted = xstrdup(accepted);
		if (!r->baseline_accepted)
			return out_of_memory();
	}
	return 0;
}

/*
 * Step 3a: whether to gate per unit of workload: when the head and the
 * baseline record one and it differs (r->workload_key); the same
 * workload on both sides would only print every time twice
 * (r->same_workload says which).
 */
static int pick_workload(struct check_ctx *c)
{
	const char *per = c->opts ? c->opts->per : NULL, *wkey = NULL;
	struct rs_buf b = RS_BUF_INIT;
	double w, wb, wj;
	int differs = 0;

	if ((c->opts && c->opts->no_workload) ||
	    !rs_runview_workload(c->head, per, &wkey, &w) ||
	    !rs_runview_workload(c->baseline[0], wkey, &wkey, &wb))
		return 0;
	for (size_t j = 0; j < c->n_base; j++)
		if (!rs_runview_workload(c->baseline[j], wkey, &wkey, &wj) || wj != w)
			differs = 1;
	if (differs) {
		c->r->workload_key = xstrdup(wkey);
		return c->r->workload_key ? 0 : out_of_memory();
	}
	if (rs_buf_printf(&b, "%s = ", wkey) || rs_render_number(&b, w)) {
		rs_buf_release(&b);
		return out_of_memory();
	}
	c->r->same_workload = rs_buf_detach(&b, NULL);
	return 0;
}

/* Step 3b: what is judged: each metric, and per unit of workload for times. */
static void pick_specs(struct check_ctx *c, const char *const *names, size_t n_names)
{
	const char *wkey = c->r->workload_key;

	for (size_t i = 0; i < n_names; i++) {
		int timed = rs_diff_is_time_metric(names[i]);

		c->specs[c->n_specs++] = (struct spec){ names[i], NULL, !(timed && wkey) };
		if (timed && wkey)
			c->specs[c->n_specs++] = (struct spec){ names[i], wkey, 1 };
	}
}

/* Step 4: the noise runs (head and the newest comparable ones), and how many repeat a commit. */
static void pick_noise_runs(struct check_ctx *c)
{
	size_t i, j;

	c->noise_runs[c->n_noise++] = c->head;
	for (i = 0; i < c->n_comp && c->n_noise < NOISE_RUNS_MAX; i++)
		c->noise_runs[c->n_noise++] = c->comparable[i];
	for (i = 0; i < c->n_noise; i++) {
		for (j = 0; j < c->n_noise; j++)
			if (j != i && c->noise_runs[i]->commit && c->noise_runs[j]->commit &&
			    !strcmp(c->noise_runs[i]->commit, c->noise_runs[j]->commit))
				break;
		if (j < c->n_noise)
			c->r->n_noise_runs++;
	}
}

/*
 * A phase (phase.* metric) is judged on its own, so that a slower phase
 * hidden in the total is named; but a small phase moves by large
 * fractions from run to run (a 0.25 s phase of a 9 s run moves 40%
 * between reruns of generated sessions). So a phase's change counts only
 * when it also amounts to half the threshold of the whole run's duration
 * (on the same basis: per unit of workload when the spec is).
 */
static int phase_matters(const struct check_ctx *c, const struct spec *sp, double change,
			 double threshold)
{
	struct spec dur = { "duration", sp->per, sp->gating };
	double d;

	if (strncmp(sp->metric, "phase.", 6) != 0)
		return 1;
	if (!spec_value(c->head, &dur, &d) || !(d > 0))
		return 1;
	return fabs(change) >= 0.5 * threshold * d;
}

/* Judge spec `i` into the next r->metrics slot (skipped when a side lacks it). */
static int judge_spec(struct check_ctx *c, size_t i, double threshold)
{
	struct rs_check_result *r = c->r;
	struct rs_check_metric *m = &r->metrics[r->n_metrics];
	const struct spec *sp = &c->specs[i];
	struct rs_buf name = RS_BUF_INIT;
	size_t k = 0;
	double hv, limit, spread;
	int err;

	if (!spec_value(c->head, sp, &hv))
		return 0;
	for (size_t j = 0; j < c->n_base; j++)
		if (!(c->wall_out[j] && is_wall(sp)) && spec_value(c->baseline[j], sp, &c->vals[k]))
			k++;
	if (!k)
		return 0;
	if (sp->per)
		err = rs_buf_printf(&name, "%s/%s", sp->metric, sp->per);
	else
		err = rs_buf_puts(&name, sp->metric);
	if (err)
		return err;
	m->name = rs_buf_detach(&name, NULL);
	m->head = hv;
	spread = rs_noise_spread(c->vals, k, &m->base);
	m->n_base = k;
	m->rel = m->base != 0 ? (hv - m->base) / fabs(m->base) : NAN;
	m->band = noise_band(sp, c->noise_runs, c->n_noise);
	if (m->base != 0 && 3 * spread / fabs(m->base) > m->band)
		m->band = 3 * spread / fabs(m->base);
	m->gating = sp->gating;
	limit = fmax(threshold, m->band);
	if (!isnan(m->rel) && phase_matters(c, sp, hv - m->base, threshold)) {
		m->regressed = m->rel > limit;
		m->improved = m->rel < -limit;
	}
	if (m->gating && m->regressed)
		r->regressed = 1;
	if (m->gating && m->improved)
		r->improved = 1;
	c->metric_spec[r->n_metrics] = i;
	r->n_metrics++;
	return 0;
}

/*
 * Step 5: the run-level diff behind the verdict, against the baseline run
 * closest to the median of the first gating metric, so one outlier does
 * not explain anything; a run whose wall time was distorted is never it
 * while another is there (its every function is slower).
 */
static int diff_typical(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;
	const rs_runrec *typical = NULL;
	struct rs_diff_opts dopts = { r->workload_key, r->workload_key == NULL,
				      c->opts ? c->opts->own : NULL };
	double best = INFINITY, v;
	size_t i, j;

	for (i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].gating)
			break;
	for (j = 0; i < r->n_metrics && j < c->n_base; j++)
		if (!c->wall_out[j] && spec_value(c->baseline[j], &c->specs[c->metric_spec[i]], &v) &&
		    fabs(v - r->metrics[i].base) < best) {
			best = fabs(v - r->metrics[i].base);
			typical = c->baseline[j];
		}
	for (j = 0; !typical && j < c->n_base; j++)
		if (!c->wall_out[j])
			typical = c->baseline[j];
	if (!typical)
		typical = c->baseline[0];
	c->typical = typical;
	free(r->baseline_commit);
	r->baseline_commit = xstrdup(typical->commit);
	r->baseline_id = xstrdup(typical->id);
	if (!r->baseline_commit || !r->baseline_id)
		return out_of_memory();
	return rs_diff_runs(&r->diff, typical, c->head, &dopts);
}

/* The functions responsible, and a head run that accepts its slowdown. */
static int explain(struct check_ctx *c, size_t max_funcs)
{
	struct rs_check_result *r = c->r;
	const char *accepted = rs_runview_accepted(c->head);
	int err;

	if (r->regressed) {
		err = pick_responsible(r, max_funcs);
		if (err)
			return err;
	}
	if (!accepted)
		return 0;
	r->accepted = xstrdup(accepted);
	if (!r->accepted)
		return out_of_memory();
	if (r->regressed) {
		r->accepted_regression = 1;
		r->regressed = 0;
	}
	return 0;
}

/*
 * Step 3c, the machine check of wall time: the wall/CPU ratio of each
 * baseline run and of the head against the baseline's median ratio. A
 * loaded runner stretches wall time (every sample takes longer), not the
 * CPU time the program used, so a ratio far from the window's is the
 * machine: such a baseline run's wall time is left out of the baseline,
 * and when the head's is, its wall time does not gate -- CPU time does
 * (with the default metrics), and the report says so.
 */
static void machine_wall(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;
	double q, spread, ref;
	size_t k = 0;

	r->wall_cpu_head = r->wall_cpu_base = NAN;
	for (size_t j = 0; j < c->n_base; j++)
		if (rs_noise_wall_cpu(c->baseline[j], &c->vals[k]))
			k++;
	if (!k)
		return;
	spread = rs_noise_spread(c->vals, k, &ref);
	r->wall_cpu_base = ref;
	for (size_t j = 0; j < c->n_base; j++)
		if (rs_noise_wall_cpu(c->baseline[j], &q) && rs_noise_wall_distorted(q, ref, spread)) {
			c->wall_out[j] = 1;
			r->n_wall_left_out++;
		}
	if (!rs_noise_wall_cpu(c->head, &q))
		return;
	r->wall_cpu_head = q;
	r->wall_distorted = rs_noise_wall_distorted(q, ref, spread);
	if (!r->wall_distorted || (c->opts && c->opts->metrics))
		return;
	for (size_t i = 0; i < c->n_specs; i++)
		if (!strcmp(c->specs[i].metric, "cpu_time") && c->specs[i].gating)
			r->gating = "cpu_time";
	for (size_t i = 0; r->gating && i < c->n_specs; i++)
		if (is_wall(&c->specs[i]))
			c->specs[i].gating = 0;
}

/* The first gating metric's judgement, or NULL. */
static const struct rs_check_metric *first_gating(const struct rs_check_result *r)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].gating)
			return &r->metrics[i];
	return NULL;
}

/* Step 6a: the functions whose share of the run moved beyond their own noise. */
static int judge_functions(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;
	size_t max = r->diff ? r->diff->n_funcs : 0;
	double nb, nh;

	if (!max)
		return 0;
	r->findings = calloc(max, sizeof(*r->findings));
	if (!r->findings)
		return out_of_memory();
	r->functions_judged = rs_runview_samples(c->typical, &nb) &&
			      rs_runview_samples(c->head, &nh);
	if (r->functions_judged)
		r->n_findings = rs_noise_functions(r->diff, c->typical, c->head, c->baseline,
						   c->n_base, r->findings, max);
	return 0;
}

/* Whether a finding says a function took a larger share of the run. */
static int grew(const struct rs_noise_finding *f)
{
	return f->head_share > f->base_share;
}

/* The time a run's profile covers (its summary's sampled time): 1 and *out, or 0. */
static int sampled_time(const rs_runrec *run, double *out)
{
	if (run->summary) {
		*out = run->summary->sampled_time;
		return *out > 0;
	}
	return rs_runview_metric(run, "sampled_time", out) && *out > 0;
}

/*
 * Step 6b: the machine, not the code. The head is slower, but no
 * function's share of the run moved beyond its noise while the profile
 * itself took longer by about as much (every function slowed by the same
 * factor) and its samples did (pyinstrument's sampler is delayed on a
 * busy machine: the same count of longer samples) -- or its wall time is
 * distorted and CPU time did not show a code change either. Such a run is reported as "the machine was
 * slower", and does not fail.
 */
static void judge_machine(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;
	const struct rs_check_metric *m = first_gating(r);
	double wb = 1, wh = 1, sb, sh, nb, nh;
	size_t i;

	if (!r->functions_judged || !sampled_time(c->typical, &sb) || !sampled_time(c->head, &sh))
		return;
	for (i = 0; i < r->n_findings; i++)
		if (grew(&r->findings[i]))
			return;
	if (r->diff->workload_key && r->diff->base_workload > 0 && r->diff->head_workload > 0) {
		wb = r->diff->base_workload;
		wh = r->diff->head_workload;
	}
	r->machine_factor = (sh / wh) / (sb / wb);
	if (r->wall_distorted && r->wall_cpu_head > r->wall_cpu_base) {
		r->machine_slower = 1;
	} else if (r->regressed && m && !isnan(m->rel) && r->machine_factor - 1 >= 0.5 * m->rel &&
		   rs_runview_samples(c->typical, &nb) && rs_runview_samples(c->head, &nh) &&
		   (sh / nh) / (sb / nb) - 1 >= 0.5 * (r->machine_factor - 1)) {
		/* every sample took longer, not more samples of the usual
		 * length: a contended machine, not more work (which also
		 * leaves the shares alone) */
		r->machine_slower = 1;
	}
	if (r->machine_slower)
		r->regressed = 0;
}

/*
 * Step 6c: a run within its noise with a function beyond its own (a
 * helper holding 5% of the run that grew by 90% moves the run by 4%): a
 * warning, or a failure when configured.
 */
static void judge_function_warning(struct check_ctx *c)
{
	struct rs_check_result *r = c->r;

	if (r->regressed || r->machine_slower)
		return;
	for (size_t i = 0; i < r->n_findings; i++)
		if (grew(&r->findings[i]))
			r->function_warning = 1;
	if (r->function_warning && c->opts && c->opts->fail_on_functions)
		r->regressed = 1;
}

/*
 * Step 6d: where a faster run saved its time, as a slower one names
 * where it went: the functions beyond their noise that lost time, else
 * the largest savings in total time that are not root frames nor callers
 * passing a saving on; most saved first.
 */
static int pick_savings(struct check_ctx *c, size_t max)
{
	struct rs_check_result *r = c->r;
	const struct rs_diff *d = r->diff;

	if (!r->improved || r->regressed || r->machine_slower || !d || !d->n_funcs)
		return 0;
	r->saved = calloc(max ? max : 1, sizeof(*r->saved));
	if (!r->saved)
		return out_of_memory();
	for (size_t i = 0; i < r->n_findings && r->n_saved < max; i++)
		if (!grew(&r->findings[i]) && r->findings[i].delta < 0)
			r->saved[r->n_saved++] = r->findings[i].func;
	if (!r->n_saved) {
		size_t best = d->n_funcs;
		double most = 0;

		for (size_t i = 0; i < d->n_funcs; i++) {
			const struct rs_func_delta *f = &d->funcs[i];
			double df = f->head_total - f->base_total;

			if (!f->root && !f->wrapper && df < most) {
				most = df;
				best = i;
			}
		}
		if (best < d->n_funcs && max)
			r->saved[r->n_saved++] = best;
	}
	return 0;
}

/* Steps 3 to 6, once there is a baseline. */
static int judge(struct check_ctx *c, const char *const *names, size_t n_names)
{
	const struct rs_check_opts *o = c->opts;
	double threshold = c->r->threshold;
	int err;

	err = pick_workload(c);
	if (err)
		return err;
	pick_specs(c, names, n_names);
	machine_wall(c);
	pick_noise_runs(c);
	c->r->metrics = calloc(c->n_specs, sizeof(*c->r->metrics));
	if (!c->r->metrics)
		return out_of_memory();
	for (size_t i = 0; i < c->n_specs; i++) {
		err = judge_spec(c, i, threshold);
		if (err)
			return err;
	}
	err = diff_typical(c);
	if (err)
		return err;
	err = judge_functions(c);
	if (err)
		return err;
	judge_machine(c);
	judge_function_warning(c);
	err = explain(c, o && o->max_functions ? o->max_functions : 5);
	if (err)
		return err;
	return pick_savings(c, o && o->max_functions ? o->max_functions : 5);
}

/*
 * What is checked without --metric: duration and cpu_time, and each
 * phase of the run (phase.* metrics, session/phases.h), so that a slower
 * phase is named even when the other phases hide it in the total. The
 * names are borrowed from `head`.
 */
static size_t default_metrics(const rs_runrec *head, const char **names)
{
	const struct rs_runrec_map *metrics = &head->metrics;
	size_t n = 0;

	names[n++] = "duration";
	names[n++] = "cpu_time";
	for (size_t i = 0; i < metrics->n && n < 2 + CHECK_MAX_PHASES; i++)
		if (!strncmp(metrics->items[i].name, "phase.", 6))
			names[n++] = metrics->items[i].name;
	return n;
}

int rs_check_run(struct rs_check_result **out, const rs_runrec *head,
		 const rs_runrec *const *history, size_t n_history,
		 const struct rs_check_opts *opts)
{
	const char *defaults[2 + CHECK_MAX_PHASES];
	const char *const *names = opts && opts->metrics ? opts->metrics : defaults;
	size_t n_names = opts && opts->metrics ? opts->n_metrics : default_metrics(head, defaults);
	struct check_ctx c = { .head = head, .opts = opts };
	const char *vary = NULL;
	double w;
	int err;

	c.explicit_baseline = opts && opts->explicit_baseline;
	err = check_alloc(&c, n_history, n_names);
	if (err)
		goto out;
	c.r->threshold = opts && opts->threshold > 0 ? opts->threshold : 0.05;
	if (!rs_runview_workload(head, opts ? opts->per : NULL, &vary, &w))
		vary = NULL;
	err = pick_comparable(&c, history, n_history, vary);
	if (err)
		goto out;
	pick_baseline(&c);
	err = record_baseline(&c);
	if (err)
		goto out;
	/* without a baseline the check passes; the report says why */
	if (c.n_base)
		err = judge(&c, names, n_names);
out:
	check_release(&c);
	if (err) {
		rs_check_free(c.r);
		return err;
	}
	*out = c.r;
	return 0;
}

void rs_check_free(struct rs_check_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n_metrics; i++)
		free(r->metrics[i].name);
	for (i = 0; i < r->n_baseline; i++)
		free(r->baseline_ids[i]);
	free(r->metrics);
	free(r->baseline_ids);
	free(r->head_id);
	free(r->head_commit);
	free(r->baseline_commit);
	free(r->baseline_id);
	free(r->workload_key);
	free(r->responsible);
	free(r->duplicate_of);
	free(r->accepted);
	free(r->baseline_accepted);
	free(r->same_workload);
	free(r->findings);
	free(r->saved);
	rs_diff_free(r->diff);
	free(r);
}
