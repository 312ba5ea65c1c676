/*
 * Trends: series of metrics and of functions' own time across runs in
 * the order the caller gives (commit order: recording order of the
 * index), and change points in them.
 */
#ifndef RS_ANALYSIS_SERIES_H
#define RS_ANALYSIS_SERIES_H

#include "results/error.h"

#include <stddef.h>

#include "runrec/runrec.h"

struct rs_series {
	char *name;     /* metric name, "duration/months", or "func (file:line)" */
	char *function; /* function series: the function's name; else NULL */
	double *v;      /* one value per run; NAN where the run lacks it */
	size_t *changes;/* change points: index of the first run of a new level */
	size_t n_changes;
};

struct rs_trend {
	size_t n;                     /* runs */
	char **ids, **commits, **dates, **paths;
	struct rs_series *metrics;
	size_t n_metrics;
	struct rs_series *funcs;      /* own (or total) time in seconds of the
	                                 top or requested functions */
	size_t n_funcs;
	int total;                    /* funcs are total (inclusive) time */
	char *workload_key;           /* NULL when no workload was found */
	size_t n_excluded;            /* runs left out (values NAN): another
	                                 configuration than most runs, or
	                                 a repeated record of one session */
	char excluded_why[320];       /* the first configuration difference */
	char **verdicts;              /* per run: the class of its check verdict
	                                 ("regression", "improvement", ...: its
	                                 "check", report/report_internal.h), or NULL */
	char **verdict_texts;         /* per run: that verdict's line, or NULL */
	char **left_out;              /* per run: why it is left out -- of the
	                                 series (another configuration, a repeated
	                                 session) or of the check's baselines (the
	                                 machine was slower, not comparable) -- or NULL */
};

struct rs_trend_opts {
	const char *const *metrics;   /* NULL: duration, cpu_time (+ per workload) */
	size_t n_metrics;
	int all_metrics;              /* 1: every numeric metric any run has */
	const char *const *functions; /* NULL: the top_functions by own time */
	size_t n_functions;
	size_t top_functions;         /* 0: 8 */
	int total;                    /* 1: total (inclusive) time, not own time */
	const char *per;              /* workload key; NULL: detect */
	int no_workload;
	double min_step;              /* change points: relative step; 0: 0.05 */
};

/* One run of a trend, borrowed: its record, and what its report adds. */
struct rs_trend_run {
	const rs_runrec *rec;      /* the whole record, or an index line's
	                              (runs/runs.h: metrics only, no summary) */
	const char *path;          /* the run folder; NULL: not known */
	const char *verdict;       /* the class of its check verdict ("regression",
	                              "machine", ...: report/report_internal.h), or NULL */
	const char *verdict_text;  /* that verdict's line, or NULL */
	const char *verdict_why;   /* why the check keeps it out of baselines, or NULL */
};

/*
 * Build the series over `runs` (oldest first; borrowed). Like with like: runs of another configuration than
 * the one most runs share (the newest run's on a tie; see
 * rs_runview_same_config; the workload key may vary)
 * and repeated records of a session get NAN everywhere, so a run with 4x
 * the population does not hide a +13% step; t->left_out says why, and
 * also names the runs whose check verdict (`verdict`) keeps them
 * out of the baselines. Function series need the runs' "summary"; runs
 * without one get NAN there. A requested function matches on its name
 * ("fn" or "Class.fn") in the stored lists (the top functions and the
 * compact list above the floor); a run where a function of the same file
 * and first line carries another name (a rename) continues its series.
 * Errors: RS_EUSAGE when a requested function is in no run's summary.
 * *out is the caller's (rs_trend_free).
 */
RS_MUST_CHECK
int rs_trend_build(struct rs_trend **out, const struct rs_trend_run *runs, size_t n,
		   const struct rs_trend_opts *opts);

void rs_trend_free(struct rs_trend *t);

/*
 * The like-with-like reference of `runs` (n > 0, any order): the index of
 * a run of the configuration most of them share (rs_runview_same_config,
 * `vary` may differ), the last such run on a tie. Trend and find leave
 * out the runs of any other configuration.
 */
size_t rs_trend_reference(const rs_runrec *const *runs, size_t n, const char *vary);

/*
 * Whether run `i`'s value of `s` is evidence of a change point: it has
 * one, and the check did not find the machine slower on that run -- such
 * a run has every sample longer, so its wall time and each function's
 * sampled time are the machine's, no step of the code (its CPU time
 * still counts). It stays drawn.
 */
int rs_trend_evidence(const struct rs_trend *t, const struct rs_series *s, size_t i);

/* The metric series named `name`, or NULL (borrowed). */
const struct rs_series *rs_trend_metric(const struct rs_trend *t, const char *name);

/*
 * The largest step change of `v` (n values, NAN ignored): the split k
 * (0 < k < n; v[k] is the first value of the new level) that maximises
 * |mean(after) - mean(before)| * sqrt(kb * ka / (kb + ka)), the
 * statistic of a two-sample test, so a long stable stretch beats one
 * outlier. *step gets mean(after) - mean(before) and *rel the step
 * relative to mean(before). *at gets k, or 0 when fewer than two
 * values. Returns 0 or RS_EGENERIC out of memory (not a series without
 * a step).
 */
RS_MUST_CHECK
int rs_changepoint_best(size_t *at, const double *v, size_t n, double *step, double *rel);

/*
 * All change points by binary segmentation: split at the best step, keep
 * it when the step is at least `min_rel` of the level before and, where
 * the segments show noise, at least 3 standard errors; recurse on both
 * sides. Writes at most `max` indices in increasing order to `out`, and
 * how many to *n_found. Returns 0 or RS_EGENERIC out of memory (never a
 * shorter or a longer list for want of memory).
 */
RS_MUST_CHECK
int rs_changepoints(size_t *n_found, const double *v, size_t n, double min_rel,
		    size_t *out, size_t max);

#endif
