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
 * With no repeated runs the band is 0 and only the threshold applies.
 */
#include "analysis/check.h"
#include "analysis/render.h"
#include "analysis/runview.h"
#include "results/buf.h"
#include "results/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Runs looked at for the noise estimate, at most. */
#define NOISE_RUNS_MAX 64

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

double rs_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int spec_value(const json_t *run, const struct spec *s, double *out)
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

static double noise_band(const struct spec *s, const json_t *const *runs, size_t n)
{
	double sumsq = 0, maxrange = 0, vals[NOISE_RUNS_MAX];
	size_t dof = 0, i, j;
	unsigned char done[NOISE_RUNS_MAX] = { 0 };

	for (i = 0; i < n; i++) {
		const char *ci = rs_runview_str(runs[i], "commit", NULL);
		size_t k = 0;
		double mean = 0, lo, hi, med;

		if (done[i] || !ci)
			continue;
		for (j = i; j < n; j++) {
			const char *cj = rs_runview_str(runs[j], "commit", NULL);

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

/*
 * Name the functions behind a regression by total (inclusive) time: the
 * deepest frames whose total grew by at least a fifth of the growth of
 * the run's duration (per unit of workload when normalised), the
 * project's own code first (rs_diff_explain). Own time alone misses the
 * usual culprit in library-heavy code: a new function with 13 ms of its
 * own and 4 s in the pandas calls it makes.
 */
static int pick_responsible(struct rs_check_result *r, size_t max)
{
	const struct rs_diff *d = r->diff;
	double wb = 1, wh = 1, grow = 0;
	size_t i;

	if (d->workload_key && d->base_workload > 0 && d->head_workload > 0) {
		wb = d->base_workload;
		wh = d->head_workload;
	}
	for (i = 0; i < d->n_metrics; i++)
		if (!strcmp(d->metrics[i].name, "duration"))
			grow = d->metrics[i].head / wh - d->metrics[i].base / wb;
	r->responsible = calloc(max ? max : 1, sizeof(*r->responsible));
	if (!r->responsible)
		return rs_error_set(RS_EGENERIC, "out of memory");
	r->n_responsible = rs_diff_explain(d, wb, wh, grow > 0 ? grow / 5 : 0,
					   r->responsible, max);
	return 0;
}

int rs_check_run(struct rs_check_result **out, const json_t *head,
		 const json_t *const *history, size_t n_history,
		 const struct rs_check_opts *opts)
{
	static const char *const default_metrics[] = { "duration", "cpu_time" };
	const json_t **comparable = NULL, **baseline = NULL;
	const json_t *noise_runs[NOISE_RUNS_MAX];
	struct rs_check_result *r = NULL;
	struct spec *specs = NULL;
	size_t *metric_spec = NULL;
	size_t n_comp = 0, n_base = 0, n_specs = 0, n_noise = 0, i, j;
	const char *const *names;
	size_t n_names, max_funcs;
	const char *wkey = NULL, *head_id, *vary = NULL, *head_oid;
	double threshold, w, wb, *vals = NULL;
	int reached_accepted = 0;
	int err = 0;

	if (!json_is_object(head))
		return rs_error_set(RS_EUSAGE, "the run to check is not a JSON object");
	threshold = opts && opts->threshold > 0 ? opts->threshold : 0.05;
	names = opts && opts->metrics ? opts->metrics : default_metrics;
	n_names = opts && opts->metrics ? opts->n_metrics : 2;
	max_funcs = opts && opts->max_functions ? opts->max_functions : 5;
	head_id = rs_runview_str(head, "id", "");

	r = calloc(1, sizeof(*r));
	comparable = calloc(n_history ? n_history : 1, sizeof(*comparable));
	baseline = calloc(n_history ? n_history : 1, sizeof(*baseline));
	vals = calloc(n_history ? n_history : 1, sizeof(*vals));
	specs = calloc(2 * n_names + 1, sizeof(*specs));
	metric_spec = calloc(2 * n_names + 1, sizeof(*metric_spec));
	if (!r || !comparable || !baseline || !vals || !specs || !metric_spec) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	r->threshold = threshold;
	r->head_id = xstrdup(head_id);
	r->head_commit = xstrdup(rs_runview_str(head, "commit", ""));
	if (!r->head_id || !r->head_commit) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}

	/* 1. Runs that may be compared with the head at all: same machine,
	 * same configuration, not a repeat of a session already counted. */
	if (!rs_runview_workload(head, opts ? opts->per : NULL, &vary, &w))
		vary = NULL;
	head_oid = rs_runview_session_oid(head);
	for (i = 0; i < n_history; i++) {
		const char *why = NULL, *oid;
		char cwhy[sizeof(r->other_config)];

		if (!json_is_object(history[i])) {
			err = rs_error_set(RS_EUSAGE, "a history run is not a JSON object");
			goto out;
		}
		if (*head_id && !strcmp(rs_runview_str(history[i], "id", ""), head_id))
			continue;
		if (!rs_runview_same_machine(head, history[i], &why)) {
			if (opts && opts->explicit_baseline) {
				err = rs_error_set(RS_EUSAGE,
					"baseline '%s' ran on another machine (%s '%s', not '%s'); "
					"compare runs of the same runner, or use 'results compare'",
					rs_runview_str(history[i], "id", "?"), why,
					rs_runview_str(json_object_get(history[i], "machine"), why, ""),
					rs_runview_str(json_object_get(head, "machine"), why, ""));
				goto out;
			}
			r->n_other_machine++;
			continue;
		}
		if (!(opts && opts->explicit_baseline) &&
		    !rs_runview_same_config(head, history[i], vary, cwhy, sizeof(cwhy))) {
			if (!r->n_other_config)
				memcpy(r->other_config, cwhy, sizeof(cwhy));
			r->n_other_config++;
			continue;
		}
		oid = rs_runview_session_oid(history[i]);
		if (oid && head_oid && !strcmp(oid, head_oid)) {
			if (!r->duplicate_of) {
				r->duplicate_of = xstrdup(rs_runview_str(history[i], "id", "?"));
				if (!r->duplicate_of) {
					err = rs_error_set(RS_EGENERIC, "out of memory");
					goto out;
				}
			}
			r->n_duplicates++;
			continue;
		}
		for (j = 0; oid && j < n_comp; j++) {
			const char *o2 = rs_runview_session_oid(comparable[j]);

			if (o2 && !strcmp(o2, oid))
				break;
		}
		if (oid && j < n_comp) {
			r->n_duplicates++;
			continue;
		}
		comparable[n_comp++] = history[i];
	}

	/* 2. The baseline: other code than the head's. Earlier runs of the
	 * head's own commit (re-runs) say how noisy the figures are, not
	 * whether this code is slower -- a retried nightly job must not pass
	 * by being compared with its own first attempt. */
	{
		const char *hc = rs_runview_str(head, "commit", "");
		const char *prev = NULL;

		for (i = 0; i < n_comp; i++) {
			const char *c = rs_runview_str(comparable[i], "commit", "");

			if (opts && opts->explicit_baseline) {
				baseline[n_base++] = comparable[i];
				continue;
			}
			if (*hc && !strcmp(c, hc))
				continue;
			if (opts && opts->window) {
				/* an accepted slowdown starts a new baseline */
				if (n_base < opts->window && !reached_accepted) {
					baseline[n_base++] = comparable[i];
					reached_accepted = rs_runview_accepted(comparable[i]) != NULL;
				}
				continue;
			}
			if (!prev)
				prev = c;
			if (!strcmp(c, prev))
				baseline[n_base++] = comparable[i];
		}
	}
	r->baseline_ids = calloc(n_base ? n_base : 1, sizeof(*r->baseline_ids));
	if (!r->baseline_ids) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < n_base; i++) {
		r->baseline_ids[i] = xstrdup(rs_runview_str(baseline[i], "id", "?"));
		if (!r->baseline_ids[i]) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		r->n_baseline++;
	}
	if (!n_base)
		goto out; /* nothing to compare with: passes, the report says why */
	r->baseline_commit = xstrdup(rs_runview_str(baseline[0], "commit", ""));
	if (!r->baseline_commit) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}

	if (rs_runview_accepted(baseline[0])) {
		r->baseline_accepted = xstrdup(rs_runview_accepted(baseline[0]));
		if (!r->baseline_accepted) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}

	/* 3. What to gate on: per unit of workload when the head and the
	 * baseline record one and it differs; the same workload on both
	 * sides would only print every time twice. */
	if (!(opts && opts->no_workload) &&
	    rs_runview_workload(head, opts ? opts->per : NULL, &wkey, &w) &&
	    rs_runview_workload(baseline[0], wkey, &wkey, &wb)) {
		int differs = 0;
		double wj;

		for (j = 0; j < n_base; j++)
			if (!rs_runview_workload(baseline[j], wkey, &wkey, &wj) || wj != w)
				differs = 1;
		if (differs) {
			r->workload_key = xstrdup(wkey);
			if (!r->workload_key) {
				err = rs_error_set(RS_EGENERIC, "out of memory");
				goto out;
			}
		} else {
			struct rs_buf b = RS_BUF_INIT;

			if (rs_buf_printf(&b, "%s = ", wkey) || rs_render_number(&b, w)) {
				rs_buf_release(&b);
				err = rs_error_set(RS_EGENERIC, "out of memory");
				goto out;
			}
			r->same_workload = rs_buf_detach(&b, NULL);
		}
	}
	for (i = 0; i < n_names; i++) {
		int timed = rs_diff_is_time_metric(names[i]);

		specs[n_specs++] = (struct spec){ names[i], NULL,
						  !(timed && r->workload_key) };
		if (timed && r->workload_key)
			specs[n_specs++] = (struct spec){ names[i], r->workload_key, 1 };
	}

	/* 4. Noise: repeated commits among the newest comparable runs. */
	noise_runs[n_noise++] = head;
	for (i = 0; i < n_comp && n_noise < NOISE_RUNS_MAX; i++)
		noise_runs[n_noise++] = comparable[i];
	for (i = 0; i < n_noise; i++) {
		for (j = 0; j < n_noise; j++)
			if (j != i && !strcmp(rs_runview_str(noise_runs[i], "commit", "a"),
					      rs_runview_str(noise_runs[j], "commit", "b")))
				break;
		if (j < n_noise)
			r->n_noise_runs++;
	}

	r->metrics = calloc(n_specs, sizeof(*r->metrics));
	if (!r->metrics) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < n_specs; i++) {
		struct rs_check_metric *m = &r->metrics[r->n_metrics];
		struct rs_buf name = RS_BUF_INIT;
		size_t k = 0;
		double hv, limit;

		if (!spec_value(head, &specs[i], &hv))
			continue;
		for (j = 0; j < n_base; j++)
			if (spec_value(baseline[j], &specs[i], &vals[k]))
				k++;
		if (!k)
			continue;
		if (specs[i].per)
			err = rs_buf_printf(&name, "%s/%s", specs[i].metric, specs[i].per);
		else
			err = rs_buf_puts(&name, specs[i].metric);
		if (err)
			goto out;
		m->name = rs_buf_detach(&name, NULL);
		m->head = hv;
		m->base = rs_median(vals, k);
		m->n_base = k;
		m->rel = m->base != 0 ? (hv - m->base) / fabs(m->base) : NAN;
		m->band = noise_band(&specs[i], noise_runs, n_noise);
		m->gating = specs[i].gating;
		limit = fmax(threshold, m->band);
		if (!isnan(m->rel)) {
			m->regressed = m->rel > limit;
			m->improved = m->rel < -limit;
		}
		if (m->gating && m->regressed)
			r->regressed = 1;
		metric_spec[r->n_metrics] = i;
		r->n_metrics++;
	}

	/* 5. The run-level diff behind the verdict: against the baseline run
	 * closest to the median, so one outlier does not explain anything. */
	{
		const json_t *typical = baseline[0];
		struct rs_diff_opts dopts = { r->workload_key, r->workload_key == NULL,
					      opts ? opts->own : NULL };
		double best = INFINITY, v;

		for (i = 0; i < r->n_metrics; i++)
			if (r->metrics[i].gating)
				break;
		for (j = 0; i < r->n_metrics && j < n_base; j++)
			if (spec_value(baseline[j], &specs[metric_spec[i]], &v) &&
			    fabs(v - r->metrics[i].base) < best) {
				best = fabs(v - r->metrics[i].base);
				typical = baseline[j];
			}
		err = rs_diff_runs(&r->diff, typical, head, &dopts);
		if (err)
			goto out;
	}
	if (r->regressed)
		err = pick_responsible(r, max_funcs);
	if (!err && rs_runview_accepted(head)) {
		r->accepted = xstrdup(rs_runview_accepted(head));
		if (!r->accepted)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		else if (r->regressed) {
			r->accepted_regression = 1;
			r->regressed = 0;
		}
	}

out:
	free(comparable);
	free(baseline);
	free(vals);
	free(specs);
	free(metric_spec);
	if (err) {
		rs_check_free(r);
		return err;
	}
	*out = r;
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
	free(r->workload_key);
	free(r->responsible);
	free(r->duplicate_of);
	free(r->accepted);
	free(r->baseline_accepted);
	free(r->same_workload);
	rs_diff_free(r->diff);
	free(r);
}
