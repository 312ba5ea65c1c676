/*
 * rs_check: the CI gate. Decides whether a run regressed against the
 * runs before it, telling real changes from run-to-run noise.
 *
 * Model. Every checked metric is "higher is worse" (times, memory). The
 * baseline value is the median over the baseline runs; the change is
 * (head - baseline) / baseline. The noise band comes from the history
 * itself: wherever the same commit was profiled more than once on the
 * same machine (scheduled re-runs, retries), the spread of those runs is
 * what chance alone does to that metric. A metric regressed only when its
 * change is beyond both the band and the threshold.
 *
 * Runs from another machine or runner (machine.runner / hostname /
 * cpu_model in run.json) are left out of the baseline and of the noise
 * estimate: a faster CI runner is not an improvement.
 *
 * Like with like: runs of another configuration -- another value of a
 * workload stat (population, months...) or of a recorded argument -- are
 * left out too, except for the one workload key time is normalised by.
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

#include <jansson.h>
#include <stddef.h>

#include "analysis/diff.h"
#include "analysis/owncode.h"

struct rs_check_opts {
	double threshold;          /* relative, e.g. 0.05; <= 0 means 0.05 */
	size_t window;             /* 0: the runs of the newest earlier commit;
	                              N: the N newest comparable runs; both
	                              leave out runs of the head's own commit */
	int explicit_baseline;     /* history is the user's chosen baseline */
	const char *per;           /* workload key; NULL: detect */
	int no_workload;           /* 1: never normalise */
	const char *const *metrics;/* metrics to gate on; NULL: time metrics */
	size_t n_metrics;
	size_t max_functions;      /* functions named when regressed; 0: 5 */
	const struct rs_owncode *own; /* the project's own code; NULL: default */
};

struct rs_check_metric {
	char *name;
	double base;      /* median over the baseline runs */
	double head;
	double rel;       /* (head - base) / base; NAN when base is 0 */
	double band;      /* relative noise band; 0 when no repeated runs */
	size_t n_base;    /* baseline runs that had the metric */
	int gating;       /* 1: this metric decides the verdict */
	int regressed;
	int improved;
};

struct rs_check_result {
	int regressed;                 /* 1 when a gating metric regressed */
	char *head_id, *head_commit;
	char *baseline_commit;         /* newest baseline run's commit */
	char **baseline_ids;
	size_t n_baseline;
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
	char other_config[160];        /* the first difference, "population 400, not 100" */
	size_t n_duplicates;           /* history runs repeating a session (same oid) */
	char *duplicate_of;            /* the head repeats this run's session, or NULL */
	char *accepted;                /* the head's "accept" reason, or NULL */
	int accepted_regression;       /* regressed, but accepted: does not fail */
	char *baseline_accepted;       /* the newest baseline run's "accept" reason */
	char *same_workload;           /* "months = 6": equal on both sides, so time
	                                  is compared as is (no per-unit rows) */
};

/*
 * Check `head` against `history` (earlier runs of the same branch, newest
 * first; borrowed run.json objects, the head itself may be among them and
 * is skipped). An empty comparable history is not an error: the result
 * says so and does not regress (a first run must pass CI).
 * Errors: RS_EUSAGE when `explicit_baseline` is set and the baseline ran
 * on another machine, or on malformed input; RS_EGENERIC out of memory.
 * *out is the caller's (rs_check_free).
 */
RS_MUST_CHECK
int rs_check_run(struct rs_check_result **out, const json_t *head,
		 const json_t *const *history, size_t n_history,
		 const struct rs_check_opts *opts);

void rs_check_free(struct rs_check_result *r);

/* Median of `n` values (the array is reordered). NAN when n is 0. */
double rs_median(double *v, size_t n);

#endif
