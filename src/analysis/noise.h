/*
 * rs_noise: how much of a change chance alone explains, for the CI gate
 * (check.c). Three questions, each answered from the recorded runs only:
 *
 *  - the spread of a metric over a window of runs, robustly (median and
 *    median absolute deviation), so that one odd run widens nothing;
 *  - whether a run's wall time is distorted: its wall/CPU ratio far from
 *    the window's (a loaded runner doubles wall time, not CPU time);
 *  - which functions changed beyond their own noise: a sampled profile
 *    gives each function's sample count, so the sampling error of its
 *    share of the run is known; the spread of that share over the window
 *    is added to it. Shares do not move when the machine is uniformly
 *    slower, so "no function changed" tells a machine from the code.
 *
 * docs/regressions.md ("Noise") gives the figures and their reasons.
 */
#ifndef RS_ANALYSIS_NOISE_H
#define RS_ANALYSIS_NOISE_H

#include "results/error.h"

#include <stddef.h>

#include "analysis/diff.h"
#include "runrec/runrec.h"

/* The scale of the median absolute deviation that estimates a normal standard deviation. */
#define RS_NOISE_MAD_SCALE 1.4826

/*
 * Robust centre and spread of `n` values (scratch: overwritten, with
 * their deviations from the median): *median, and the
 * return value 1.4826 * median |v - median| (a standard deviation for
 * normal noise, hardly moved by one outlier). 0 for fewer than 3 values
 * (no spread can be told from two); *median is NAN for none.
 */
double rs_noise_spread(double *v, size_t n, double *median);

/* A run's wall time over its CPU time: 1 and *out, or 0 when either is missing or 0. */
int rs_noise_wall_cpu(const rs_runrec *run, double *out);

/*
 * Whether a wall/CPU ratio `q` is far from the window's (median
 * `q_ref`, robust spread `q_spread`, both from rs_noise_spread): off by
 * more than 10%, or 4 spreads when the window is noisier than that.
 */
int rs_noise_wall_distorted(double q, double q_ref, double q_spread);

/* One function whose share of the run moved beyond its noise. */
struct rs_noise_finding {
	size_t func;          /* index into the diff's funcs */
	double base_share;    /* share of the run's samples (total time), base */
	double head_share;
	double z;             /* change / its standard error (signed) */
	double delta;         /* total time, head - base, in seconds (per unit of
	                         workload when the diff normalises) */
};

/*
 * The functions of `d` (base run vs head run) whose share of the run's
 * total time moved beyond their noise, and whose time moved the same way
 * (by at least half as much: a saving elsewhere raises an unchanged
 * function's share, not its time): |z| >= 4 with the standard error
 * sqrt(p_b/N_b + p_h/N_h + s_w^2) (N: the runs' sample counts, the
 * sampling error of a share; s_w: the robust spread of the function's
 * share over the `window` runs, when at least three record it), and by
 * at least 0.5% of the run and a tenth of the function's share. Root
 * frames are left out, and so is a function whose change is explained
 * (80%, same sign) by a finding it calls: it only passed that time on.
 * Writes at most `max` findings to `out`, largest |share change|
 * first, and returns how many. `base`, `head` and `window` are the
 * runs' records (borrowed).
 */
size_t rs_noise_functions(const struct rs_diff *d, const rs_runrec *base, const rs_runrec *head,
			  const rs_runrec *const *window, size_t n_window,
			  struct rs_noise_finding *out, size_t max);

#endif
