/*
 * Noise estimates for the CI gate; the model is in noise.h.
 *
 * Why these statistics. Timings of one program on one machine are not
 * normal: most runs sit within a percent or two, and now and then one is
 * far off (a busy neighbour, a cold cache). A mean and a standard
 * deviation follow that one run; the median and the median absolute
 * deviation (MAD) do not, which is what "one noisy run cannot poison the
 * baseline" asks for. The MAD times 1.4826 estimates the standard
 * deviation of the ordinary runs.
 *
 * Sampling error. pyinstrument samples the stack every interval; a
 * function seen in k of N samples holds a share p = k / N whose standard
 * error is about sqrt(p / N) (Poisson). On three real reruns of one
 * commit (10,000 people, ~9,200 samples each) no function's share moved
 * by more than 2.5 of those errors, and a run on a loaded machine (wall
 * x2.1) moved none by more: shares are what a uniformly slower machine
 * does not change. A change of 4 errors is therefore a finding; the
 * floors (0.5% of the run, a tenth of the share) keep the list to what a
 * reader acts on.
 */
#include "analysis/noise.h"
#include "analysis/check.h"
#include "analysis/runview.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Findings considered at most (the diff's rows are a few hundred). */
#define NOISE_CAND_MAX 256
/* Standard errors a share must move by to be a finding. */
#define NOISE_Z 4.0
/* ... and at least this much of the run, and this much of its own share. */
#define NOISE_MIN_SHARE 0.005
#define NOISE_MIN_REL 0.1
/* A wall/CPU ratio this far from the window's is a distorted wall time. */
#define NOISE_WALL_REL 0.10

double rs_noise_spread(double *v, size_t n, double *median)
{
	double med;

	med = rs_median(v, n);
	if (median)
		*median = med;
	if (n < 3)
		return 0;
	/* the deviations in place: an allocation that could fail here gave
	 * a spread of 0, a narrower band, and a check that fails CI */
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(v[i] - med);
	return RS_NOISE_MAD_SCALE * rs_median(v, n);
}

int rs_noise_wall_cpu(const rs_runrec *run, double *out)
{
	double wall, cpu;

	if (!rs_runview_metric(run, "duration", &wall) || !rs_runview_metric(run, "cpu_time", &cpu) ||
	    wall <= 0 || cpu <= 0)
		return 0;
	*out = wall / cpu;
	return 1;
}

int rs_noise_wall_distorted(double q, double q_ref, double q_spread)
{
	double limit;

	if (!(q_ref > 0) || !(q > 0))
		return 0;
	limit = fmax(NOISE_WALL_REL, 4 * q_spread / q_ref);
	return fabs(q / q_ref - 1) > limit;
}

/* A run's sample count (its summary's, else the metric). */
static double run_samples(const rs_runrec *run)
{
	double n;

	if (rs_runview_samples(run, &n))
		return n;
	if (rs_runview_metric(run, "samples", &n) && n > 0)
		return n;
	return 0;
}

/*
 * The share of run `run`'s time that function `key` ("bare name\x1f file")
 * starting on `line` took in total: from the stored top list (samples),
 * else the compact list (microseconds); 0 when the run's summary does not
 * hold it. The line tells apart the methods of one name in one file
 * (every event class of a module has its `apply`).
 */
static int window_share(const rs_runrec *run, const char *key, long line, double *out)
{
	const struct rs_runrec_summary *sum = run->summary;
	const char *sep = strchr(key, '\x1f');
	size_t bare = sep ? (size_t)(sep - key) : strlen(key);
	double n = run_samples(run);

	if (!sep || n <= 0 || !sum)
		return 0;
	for (size_t i = 0; i < sum->nfunctions; i++) {
		const struct rs_runrec_function *f = &sum->functions[i];

		if (strlen(f->function) == bare && !strncmp(f->function, key, bare) &&
		    !strcmp(f->file, sep + 1) && f->line == line) {
			*out = (double)f->total_samples / n;
			return 1;
		}
	}
	if (!(sum->sampled_time > 0) || !sum->has_more)
		return 0;
	for (size_t i = 0; i < sum->more.nrows; i++) {
		const struct rs_runrec_more_row *row = &sum->more.rows[i];
		const char *file = sum->more.files[row->file];

		if (strlen(row->function) == bare && !strncmp(row->function, key, bare) &&
		    !strcmp(file, sep + 1) && row->line == line) {
			*out = (double)row->total_us / 1e6 / sum->sampled_time;
			return 1;
		}
	}
	return 0;
}

/* The robust spread of function `key`'s share over the window runs (0 below three). */
static double window_spread(const rs_runrec *const *window, size_t n_window, const char *key,
			    long line)
{
	double shares[64];
	size_t k = 0;

	for (size_t i = 0; i < n_window && k < 64; i++)
		if (window_share(window[i], key, line, &shares[k]))
			k++;
	return rs_noise_spread(shares, k, NULL);
}

static int cmp_finding(const void *a, const void *b)
{
	const struct rs_noise_finding *x = a, *y = b;
	double dx = fabs(x->head_share - x->base_share), dy = fabs(y->head_share - y->base_share);

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* Whether finding `f` only passes on the change of another finding it calls. */
static int passes_on(const struct rs_diff *d, const struct rs_noise_finding *c, size_t n,
		     size_t i)
{
	double df = c[i].head_share - c[i].base_share;

	for (size_t j = 0; j < n; j++) {
		double dg = c[j].head_share - c[j].base_share;

		if (j != i && dg * df > 0 && fabs(dg) >= 0.8 * fabs(df) &&
		    rs_diff_calls(d, &d->funcs[c[i].func], &d->funcs[c[j].func]))
			return 1;
	}
	return 0;
}

/*
 * Whether function `f`'s time moved the way its share did, by at least
 * half as much (`sr`: head share / base share; per unit of workload when
 * normalised). A share also moves when the rest of the run does: a
 * saving of 1.2 s elsewhere raises every unchanged function's share by
 * 15%, and that is no growth of theirs.
 */
static int time_agrees(const struct rs_func_delta *f, double sr, double wb, double wh)
{
	double tb = f->base_total / wb, th = f->head_total / wh, tr;

	if (!(tb > 0))
		return th > 0 && sr > 1; /* new: from nothing to something */
	tr = th / tb;
	if (sr > 1)
		return tr - 1 >= 0.5 * (sr - 1);
	return 1 - tr >= 0.5 * (1 - sr);
}

/* The share test of noise.h for one function: 1 and *out filled when it is a finding. */
static int judge_function(const struct rs_diff *d, size_t i, double nb, double nh,
			  const rs_runrec *const *window, size_t n_window,
			  struct rs_noise_finding *out)
{
	const struct rs_func_delta *f = &d->funcs[i];
	double pb = f->base_total_share, ph = f->head_total_share, var, sw, z;
	double wb = 1, wh = 1;

	if (f->root || f->base_below > 0 || f->head_below > 0)
		return 0;
	if (fabs(ph - pb) < NOISE_MIN_SHARE || fabs(ph - pb) < NOISE_MIN_REL * fmax(pb, ph))
		return 0;
	var = pb / nb + ph / nh;
	if (!(var > 0) || fabs(ph - pb) / sqrt(var) < NOISE_Z)
		return 0;
	if (d->workload_key && d->base_workload > 0 && d->head_workload > 0) {
		wb = d->base_workload;
		wh = d->head_workload;
	}
	if (!time_agrees(f, pb > 0 ? ph / pb : INFINITY, wb, wh))
		return 0;
	/* only now the costlier window look-up, for the few that passed */
	sw = f->key ? window_spread(window, n_window, f->key, f->line) : 0;
	z = (ph - pb) / sqrt(var + sw * sw);
	if (fabs(z) < NOISE_Z)
		return 0;
	*out = (struct rs_noise_finding){ i, pb, ph, z, f->head_total / wh - f->base_total / wb };
	return 1;
}

size_t rs_noise_functions(const struct rs_diff *d, const rs_runrec *base, const rs_runrec *head,
			  const rs_runrec *const *window, size_t n_window,
			  struct rs_noise_finding *out, size_t max)
{
	struct rs_noise_finding cand[NOISE_CAND_MAX];
	double nb = run_samples(base), nh = run_samples(head);
	size_t n = 0, kept = 0;

	if (!d || nb <= 0 || nh <= 0)
		return 0;
	for (size_t i = 0; i < d->n_funcs && n < NOISE_CAND_MAX; i++)
		if (judge_function(d, i, nb, nh, window, n_window, &cand[n]))
			n++;
	qsort(cand, n, sizeof(*cand), cmp_finding);
	for (size_t i = 0; i < n && kept < max; i++)
		if (!passes_on(d, cand, n, i))
			out[kept++] = cand[i];
	return kept;
}
