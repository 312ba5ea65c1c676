/*
 * rs_diff: what changed between two recorded runs, computed from their
 * run.json records alone (metrics and the stored summary), so that it
 * works in a clone that holds no session objects.
 *
 *  - metrics: every metric both runs have (duration, cpu_time, samples,
 *    sampled_time and every numeric stat), with absolute and relative
 *    change; plus, when both runs record a workload (see
 *    rs_runview_workload), the time metrics divided by it, so that a run
 *    that simulated more months is not mistaken for a slower one;
 *  - functions: own ("self") and total time in seconds and as a share of
 *    the run's samples, matched across the runs by name and file; a
 *    function present on one side only is new or vanished, unless the
 *    other side has an unmatched function in the same file starting on
 *    the same line under another name, which makes it a rename.
 *    Stored summaries list only the top functions; a small function
 *    listed on one side only may just be below the other side's cut,
 *    so it is counted in n_uncompared instead of being called new.
 */
#ifndef RS_ANALYSIS_DIFF_H
#define RS_ANALYSIS_DIFF_H

#include "results/error.h"

#include <jansson.h>
#include <stddef.h>

#include "runrec/runrec.h"

struct rs_owncode;
struct rs_culprits;

struct rs_metric_delta {
	char *name;        /* "duration", "mem.peak_mb", "duration/months" */
	double base;
	double head;
	double abs;        /* head - base */
	double rel;        /* abs / base; NAN when base is 0 */
	int normalised;    /* 1: a time metric divided by the workload */
};

enum rs_func_change {
	RS_FUNC_CHANGED = 0, /* on both sides under the same name */
	RS_FUNC_NEW,         /* only in head */
	RS_FUNC_VANISHED,    /* only in base */
	RS_FUNC_RENAMED,     /* same file and first line, another name */
};

struct rs_func_delta {
	enum rs_func_change change;
	char *function;      /* head's name (base's for a vanished one) */
	char *old_function;  /* base's name for a rename, else NULL */
	char *file;
	long line;
	double base_self, head_self;     /* seconds; 0 on the absent side */
	double base_total, head_total;
	double base_self_share, head_self_share;   /* 0..1 of the samples */
	double base_total_share, head_total_share;
	int own;             /* the project's own code (see owncode.h) */
	int wrapper;         /* its total changed only because a function it
	                        calls did (that one explains the change) */
	int root;            /* ~100% of both runs: <module>, MainThread, main */
	char *key;           /* "bare name\x1f file": the call-tree identity */
	double base_below;   /* > 0: ran in base below this share of the time,
	                        so base figures are 0 but unknown (not stored) */
	double head_below;   /* the same for head */
	double base_max, head_max; /* with *_below: that side's floor in seconds,
	                              the most its unstored figures can be */
	int probable;        /* a rename judged by place and size, not exact line */
};

struct rs_diff {
	char *base_id, *head_id;
	char *base_commit, *head_commit;
	char *workload_key;             /* NULL when not normalised */
	double base_workload, head_workload;
	struct rs_metric_delta *metrics;
	size_t n_metrics;
	struct rs_func_delta *funcs;    /* sorted by |self change|, largest first */
	size_t n_funcs;
	size_t n_uncompared;            /* small functions listed on one side only:
	                                   the other run's stored top list is cut
	                                   above them, so they are left out */
	size_t n_wrappers;              /* callers left out of "total time" rows */
	size_t n_below;                 /* rows with base_below or head_below */
	void *ancestry;                 /* call-tree pairs (private) */
	struct rs_culprits *culprits;   /* who is to blame for a longer run, by
	                                   calling context (culprit.h); NULL
	                                   when the run did not grow */
	const struct rs_owncode *own;   /* during rs_diff_runs only; then NULL */
};

struct rs_diff_opts {
	const char *per;   /* workload stats key; NULL: detect */
	int no_workload;   /* 1: never normalise */
	const struct rs_owncode *own; /* NULL: the default rule */
};

/*
 * Compare `base` with `head` (run records, borrowed). On success *out is
 * a new diff the caller frees with rs_diff_free. Runs without a summary
 * (--raw, or read from the index) simply yield no function rows.
 * Errors: RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_diff_runs(struct rs_diff **out, const rs_runrec *base, const rs_runrec *head,
		 const struct rs_diff_opts *opts);

void rs_diff_free(struct rs_diff *d);

/*
 * The frames that explain a growth of the run: by total (inclusive)
 * time, since in library-heavy code the function that caused a step
 * often has almost no own time. delta(f) = head_total / wh - base_total
 * / wb (wb, wh: the workloads, 1 when not normalised). Candidates are
 * the functions with delta >= floor that are not root frames (~100% of
 * both runs); a candidate is dropped when the deepest candidates below
 * it (the nearest ones) in either run's call tree explain 80% of its growth (own code is
 * never dropped for library code below it). The rest are listed the
 * project's own code first, then library code, each by delta, largest
 * first. Writes at most
 * `max` indices into d->funcs to `out` and returns how many.
 */
size_t rs_diff_explain(const struct rs_diff *d, double wb, double wh, double floor,
		       size_t *out, size_t max);

/* Whether function `a` calls `b`, directly or not, in either run's tree. */
RS_MUST_CHECK
int rs_diff_calls(const struct rs_diff *d, const struct rs_func_delta *a,
		  const struct rs_func_delta *b);

/*
 * The smallest change of own time `f` can have had, in seconds: the
 * change itself, or, with a side below its floor (*_below), the distance
 * from the stored side to what the unstored side can have been. The
 * own-time rows are ranked by it, so a function that merely dropped
 * under the floor does not push real changes out of the table.
 */
double rs_func_self_change_min(const struct rs_func_delta *f);

/* The metric named `name` in `d`, or NULL (borrowed). */
const struct rs_metric_delta *rs_diff_metric(const struct rs_diff *d, const char *name);

/* Whether a metric is a time (seconds) that workload normalisation applies to. */
int rs_diff_is_time_metric(const char *name);

#endif
