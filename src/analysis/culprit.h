/*
 * rs_culprits: who is to blame for a longer run, decided from where the
 * added time appears in the call graph, by calling context -- not from
 * per-function totals, where a shared helper called by a new method
 * looks like the culprit and the new method like a caller that only
 * passed the time on.
 *
 * Input: two stored summaries (run.json "summary"): their function lists
 * and their "calls" tables (time per caller -> callee pair; summaries
 * recorded before it have only the pruned tree, whose parent -> child
 * pairs stand in for it). Three cases, each named in the result:
 *
 *  - RS_CULPRIT_NEW_CALL: time under a new calling context is blamed on
 *    the highest new frame of that context: the call a -> b of a function
 *    b that did not run at all in the base ("new call do_incidence ->
 *    trace_contacts: 4.13 s"), whatever b then calls;
 *  - RS_CULPRIT_EVERYWHERE: a function slower in every context it is
 *    called from, in proportion to its old time there, is blamed itself
 *    ("slower wherever it is called, 31 callers: Predictor.predict");
 *  - RS_CULPRIT_OWN_BODY: a function slower in its own body -- its own
 *    lines, or library calls that grew only under it -- called from one
 *    place (or not in proportion to its old callers).
 *
 * None of this reads the project's own_code setting: a shared helper of
 * the project is told from its new caller by the calling contexts alone.
 * One tie is broken by a fixed rule: a function called from one place
 * only cannot show whether it or its caller changed; library code
 * (site-packages, the standard library, built-ins) is then taken to be
 * unchanged, so the caller is blamed.
 */
#ifndef RS_ANALYSIS_CULPRIT_H
#define RS_ANALYSIS_CULPRIT_H

#include "results/error.h"

#include <stddef.h>

#include "runrec/runrec.h"

enum rs_culprit_case {
	RS_CULPRIT_NEW_CALL = 0,
	RS_CULPRIT_EVERYWHERE,
	RS_CULPRIT_OWN_BODY,
};

struct rs_culprit {
	enum rs_culprit_case kind;
	char *function;       /* the one blamed: the callee of a new call */
	char *file;
	long line;
	char *caller;         /* NEW_CALL: the frame that makes the new call */
	double growth;        /* seconds (head units) blamed on it */
	double head_total;    /* its total time in the head */
	double base_total;    /* and in the base (0 for a new call) */
	double share;         /* growth as a share of the head's sampled time */
	size_t n_callers;     /* EVERYWHERE: the contexts (callers) it grew in */
	char *path;           /* the heaviest head call path to it, root
	                         frames left out: "… > apply > trace_contacts" */
};

struct rs_culprits {
	struct rs_culprit *c; /* largest growth first */
	size_t n;
	double growth;        /* the run's growth, head - scale * base */
	int from_tree;        /* a side had no "calls": pruned tree used */
	int from_sessions;    /* the summaries were made from the whole
	                         sessions (compare --deep), not the stored ones */
};

/*
 * Blame the growth of `head_summary` over `base_summary` (borrowed
 * typed summaries; NULL: a run without one, which blames nothing). `scale` multiplies the base's times (the workload
 * ratio head/base when time is judged per unit; 1 otherwise). Culprits
 * explain at least `floor` seconds each (0: a fifth of the run's growth).
 * A run that did not grow has none. *out is the caller's
 * (rs_culprits_free). Errors: RS_EGENERIC out of memory.
 */
RS_MUST_CHECK
int rs_culprits_find(struct rs_culprits **out, const struct rs_runrec_summary *base_summary,
		     const struct rs_runrec_summary *head_summary, double scale, double floor);

void rs_culprits_free(struct rs_culprits *c);

/* "new call", "slower wherever it is called", "slower in its own body". */
const char *rs_culprit_case_name(enum rs_culprit_case k);

#endif
