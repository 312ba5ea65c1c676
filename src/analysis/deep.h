/*
 * rs_deep: the call-path diff of two runs, computed from their raw
 * sessions (`results compare --deep`). The stored summaries give flat
 * functions and a pruned tree; this reads every sample of both sessions,
 * so it can say that `apply()` got slower when called from
 * `BirthEvent.run` and not from elsewhere.
 *
 * A call path is the sequence of functions from the thread root down to
 * a frame, each function identified by its bare name and file (as in
 * rs_diff: lines move, classes of `self` vary). Paths below `min_share`
 * of their run's time on both sides are left out.
 */
#ifndef RS_ANALYSIS_DEEP_H
#define RS_ANALYSIS_DEEP_H

#include "results/error.h"

#include <jansson.h>
#include <stddef.h>

#include "analysis/diff.h"
#include "analysis/render.h"
#include "runrec/runrec.h"
#include "results/buf.h"

/* Levels of a stored call tree read at most (a flame graph draws 48 rows). */
#define RS_DEEP_TREE_DEPTH 48
/* Levels of a session's call tree the culprits read (culprit.c walks 64). */
#define RS_DEEP_SUMMARY_DEPTH 62

struct rs_path_delta {
	char *path;        /* function names joined by " > " (borrowed labels) */
	size_t depth;
	size_t name_len;   /* the last frame's function name: the first bytes
	                      of rs_deep_last_label(path), before " (file)" */
	double base_total, head_total;   /* seconds spent in the path and below */
	double base_self, head_self;     /* seconds with the path's last frame executing */
};

struct rs_deep_func {
	char *label;          /* "name (file)" */
	double head_total;    /* outermost calls only */
};

struct rs_deep_diff {
	double base_time, head_time;     /* sum of the records' times */
	struct rs_path_delta *paths;     /* sorted by |total change|, largest first */
	size_t n_paths;
	struct rs_deep_func *new_funcs;  /* ran in the head, never in the base,
	                                    at least min_share of the head's time */
	size_t n_new;
	size_t n_renamed;                /* renames applied to the base's names */
	double unknown_below;            /* from pruned trees: a path missing on
	                                    one side is below this share there,
	                                    not absent; 0 for sessions */
	struct rs_culprits *culprits;    /* two sessions: the culprits of the
	                                    head's growth from their whole call
	                                    trees (analysis/culprit.h); else NULL */
};

/*
 * Read both sessions (files) and diff their call paths. `min_share` 0
 * means 0.001 (0.1% of a run's time). *out is the caller's
 * (rs_deep_diff_free). Errors: RS_ENOTFOUND, the parser's RS_ECORRUPT /
 * RS_EUSAGE (with the file name), RS_EGENERIC.
 */
RS_MUST_CHECK
int rs_deep_diff_sessions(struct rs_deep_diff **out, const char *base_session,
			  const char *head_session, double min_share);

/*
 * The same, knowing the renames of the runs' summary diff (`summary`, may
 * be NULL): a renamed function takes its new name in the base session
 * too, so its paths are matched, not shown as one vanished and one new.
 * Two sessions (not one against itself) also give d->culprits, from
 * summaries of the sessions made in the same pass with their whole call
 * trees (the stored ones stop at 0.5% of a run), per unit
 * of workload when `summary` judges time so.
 */
RS_MUST_CHECK
int rs_deep_diff_sessions_with(struct rs_deep_diff **out, const char *base_session,
			       const char *head_session, double min_share,
			       const struct rs_diff *summary);

void rs_deep_diff_free(struct rs_deep_diff *d);

/* Append the `top` paths whose total time changed most. */
RS_MUST_CHECK
int rs_render_deep(struct rs_buf *out, const struct rs_deep_diff *d,
		   enum rs_format fmt, size_t top);

/*
 * The head run's call tree over the paths of `d`: `*first` and `*next`
 * (n_paths entries each) link every path to its first child and its next
 * sibling, (size_t)-1 ending a list; siblings come heaviest first by head
 * total time, and `*order` lists every path index in that order. A path
 * whose parent path is not in `d` is linked nowhere (a root, or a child of
 * a parent below the stored floor). With `skip_empty`, paths without head
 * time are left unlinked. The three arrays are the caller's to free, also
 * on error.
 */
/*
 * The last frame, "name (file)", of a call path "a (f) > b (g)". Names
 * hold '>' themselves ("<module>"): only " > " separates. Borrowed from
 * `path`.
 */
const char *rs_deep_last_label(const char *path);

RS_MUST_CHECK
int rs_deep_tree(const struct rs_deep_diff *d, int skip_empty, size_t **first,
		 size_t **next, size_t **order);

/*
 * A path diff from two runs' stored call trees (their typed summaries,
 * borrowed; pruned at 0.5% of a run), for a flame graph where no session
 * is at hand (the static site). RS_ENOTFOUND when either run has no
 * summary (NULL).
 */
RS_MUST_CHECK
int rs_deep_diff_trees(struct rs_deep_diff **out, const struct rs_runrec_summary *base,
		       const struct rs_runrec_summary *head);

#endif
