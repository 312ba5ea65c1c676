/*
 * rs_check: the CI gate. Decides whether a run regressed against the
 * runs before it, telling real changes from run-to-run noise.
 *
 * Model. Every checked metric is "higher is worse" (times, memory). The
 * baseline is a window of the newest comparable runs of earlier commits
 * (RS_CHECK_WINDOW), its value their median; the change is (head -
 * baseline) / baseline. The noise band comes from the history itself:
 * the window's robust spread (noise.h), and wherever the same commit was
 * profiled more than once on the same machine (scheduled re-runs,
 * retries), the spread of those runs -- what chance alone does to that
 * metric. A metric regressed only when its change is beyond both the band
 * and the threshold.
 *
 * The machine, not the code (noise.h): a run whose wall/CPU ratio is far
 * from the window's has a distorted wall time -- CPU time gates instead,
 * and such a baseline run's wall time is left out; a slower run whose
 * functions' shares did not move beyond their sampling noise, with every
 * sample longer, is "the machine was slower" and does not fail. Functions
 * beyond their own noise are listed; with the run within its band they
 * are a warning (a failure with fail_on_functions). A faster run names
 * where the time was saved.
 *
 * Runs from another machine or runner (machine.runner / hostname /
 * cpu_model in run.json) are left out of the baseline and of the noise
 * estimate: a faster CI runner is not an improvement.
 *
 * Like with like: runs of another configuration -- another value of a
 * workload stat (population, months...), of a recorded argument or of the
 * profiled program and its arguments -- are left out too, except for the
 * one workload key time is normalised by; a run without stats is an
 * unknown configuration, never the baseline of a known one.
 * A run recorded twice (the same session oid) counts once: a repeat is
 * not evidence of noise.
 *
 * When the head and the baseline record a workload that differs (simulated
 * months...), the gate looks at the time metrics per unit of it, so a
 * commit that asks the model for more work is not flagged; the raw
 * metrics are still reported. When the workload is the same on both
 * sides, time is compared as is (one row per fact).
 *
 * A head run whose meta holds "accept" (a reason, recorded with
 * `results add --meta accept=...`) is an intended slowdown: reported, not
 * failed; with --window the baseline never reaches back past such a run.
 */
#ifndef RS_ANALYSIS_CHECK_H
#define RS_ANALYSIS_CHECK_H

#include "results/error.h"

#include <stddef.h>

#include "analysis/diff.h"
#include "analysis/noise.h"
#include "analysis/owncode.h"
#include "runrec/runrec.h"

struct rs_check_opts {
	double threshold;          /* relative, e.g. 0.05; <= 0 means 0.05 */
	size_t window;             /* the N newest comparable runs of earlier
	                              commits (0: RS_CHECK_WINDOW); runs of the
	                              head's own commit are never the baseline */
	int explicit_baseline;     /* history is the user's chosen baseline */
	const char *per;           /* workload key; NULL: detect */
	int no_workload;           /* 1: never normalise */
	const char *const *metrics;/* metrics to gate on; NULL: time metrics */
	size_t n_metrics;
	size_t max_functions;      /* functions named when regressed; 0: 5 */
	const struct rs_owncode *own; /* the project's own code; NULL: default */
	int fail_on_functions;     /* 1: a function beyond its noise fails the
	                              check even when the run as a whole did not */
};

/* The default baseline window: comparable runs of earlier commits. */
#define RS_CHECK_WINDOW 5

struct rs_check_metric {
	char *name;
	double base;      /* median over the baseline runs */
	double head;
	double rel;       /* (head - base) / base; NAN when base is 0 */
	double band;      /* relative noise band: the larger of the repeated
	                     runs' and 3 robust spreads of the window; 0 when
	                     neither can be told */
	size_t n_base;    /* baseline runs that had the metric */
	int gating;       /* 1: this metric decides the verdict */
	int regressed;
	int improved;
};

struct rs_check_result {
	int regressed;                 /* 1 when a gating metric regressed */
	char *head_id, *head_commit;
	char *baseline_commit;         /* the commit of the baseline run the diff is
	                                  against (closest to the median) */
	char *baseline_id;             /* that run's id; NULL without a baseline */
	char **baseline_ids;
	size_t n_baseline;
	size_t n_baseline_commits;     /* distinct commits among them */
	size_t n_other_machine;        /* history runs left out */
	size_t n_noise_runs;           /* runs in repeated-commit groups */
	double threshold;
	char *workload_key;            /* NULL when not normalised */
	struct rs_check_metric *metrics;
	size_t n_metrics;
	struct rs_diff *diff;          /* head vs the most typical baseline run;
	                                  NULL without a baseline */
	size_t *responsible;           /* indices into diff->funcs, the
	                                  culprits' functions first */
	size_t n_responsible;
	size_t n_other_config;         /* history runs of another configuration */
	char other_config[320];        /* the first difference: "population 120000 here,
					  30000 in the baseline" */
	size_t n_duplicates;           /* history runs repeating a session (same oid) */
	char *duplicate_of;            /* the head repeats this run's session, or NULL */
	char *accepted;                /* the head's "accept" reason, or NULL */
	int accepted_regression;       /* regressed, but accepted: does not fail */
	char *baseline_accepted;       /* the newest baseline run's "accept" reason */
	char *same_workload;           /* "months = 6": equal on both sides, so time
	                                  is compared as is (no per-unit rows) */
	/* Telling the machine from the code (noise.h). */
	int wall_distorted;            /* the head's wall/CPU ratio is far from the
	                                  baseline's: its wall time does not gate */
	double wall_cpu_head, wall_cpu_base; /* those ratios; NAN when not recorded */
	size_t n_wall_left_out;        /* baseline runs whose wall time was distorted
	                                  (left out of the wall-time baseline) */
	const char *gating;            /* "cpu_time" when wall time was distorted and
	                                  CPU time decided instead; else NULL (static) */
	int functions_judged;          /* both runs give sample counts: the
	                                  function-level test below was made */
	int machine_slower;            /* slower, but no function's share moved:
	                                  the machine, not the code (exit 0) */
	double machine_factor;         /* head / base sampled time: "all functions x2.1" */
	struct rs_noise_finding *findings; /* functions beyond their own noise */
	size_t n_findings;
	int function_warning;          /* the run within its noise, a function beyond
	                                  its own: a warning (a failure with
	                                  fail_on_functions, then regressed is 1) */
	size_t *saved;                 /* a faster run: where the time was saved,
	                                  indices into diff->funcs, most first */
	size_t n_saved;
	int improved;                  /* a gating metric improved beyond its band */
};

/*
 * Check `head` against `history` (earlier runs of the same branch, newest
 * first; borrowed run records, the head itself may be among them and
 * is skipped). An empty comparable history is not an error: the result
 * says so and does not regress (a first run must pass CI).
 * Errors: RS_EUSAGE when `explicit_baseline` is set and the baseline ran
 * on another machine; RS_EGENERIC out of memory.
 * *out is the caller's (rs_check_free).
 */
RS_MUST_CHECK
int rs_check_run(struct rs_check_result **out, const rs_runrec *head,
		 const rs_runrec *const *history, size_t n_history,
		 const struct rs_check_opts *opts);

void rs_check_free(struct rs_check_result *r);

/*
 * The metric a verdict quotes: the first gating wall-time metric
 * ("duration", or per unit of workload), else the first gating one (CPU
 * time when wall time was distorted); NULL when none gates. Borrowed
 * from `r`.
 */
const struct rs_check_metric *rs_check_headline(const struct rs_check_result *r);

/* Median of `n` values (the array is reordered). NAN when n is 0. */
double rs_median(double *v, size_t n);

#endif
