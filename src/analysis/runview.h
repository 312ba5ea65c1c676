/*
 * Read-only accessors over a run record (run.json, format 1) or an index
 * line, as the analysis layer needs them. Every function tolerates missing
 * keys: a run recorded by an older `results add`, or an index line that
 * carries only metrics, simply yields "absent".
 *
 * All returned strings are borrowed from the json_t and live as long as it.
 */
#ifndef RS_ANALYSIS_RUNVIEW_H
#define RS_ANALYSIS_RUNVIEW_H

#include "results/error.h"

#include <jansson.h>

/* A string member of `obj`, or `fallback` when absent or not a string. */
const char *rs_runview_str(const json_t *obj, const char *key, const char *fallback);

/* A numeric member (integer or real) of `obj`: 1 and *out set, or 0. */
int rs_runview_num(const json_t *obj, const char *key, double *out);

/* run["metrics"][name], falling back to run["stats"][name]; "stats.NAME"
 * reaches a stat that a session metric of the same name shadows. 1 or 0. */
int rs_runview_metric(const json_t *run, const char *name, double *out);

/*
 * The workload of a run: the value of stats key `per` when given, else
 * the first of the well-known workload keys (months, population,
 * n_individuals, ...) that the run's stats or metrics hold, matched on
 * the whole name or on the last '.'-separated component. *key_out gets
 * the key found (borrowed). 1 when found and > 0, else 0.
 */
int rs_runview_workload(const json_t *run, const char *per,
			const char **key_out, double *out);

/*
 * Whether two runs come from machines that may be compared: runner,
 * hostname and cpu_model must be equal wherever both runs record them.
 * On a mismatch *why gets the name of the first differing field.
 */
int rs_runview_same_machine(const json_t *a, const json_t *b, const char **why);

/*
 * Whether two runs ran the same configuration: the same value for every
 * workload stat (months, population, n_individuals... as in
 * rs_runview_workload) that both record, except `vary` (the workload key
 * time is normalised by; NULL: none); the same profiled program and
 * arguments (summary.target: pyinstrument's target_description, 4.x's
 * program) when both record one, `vary`'s value left out; and, when both
 * record arguments ("args", the flattened *.args.json), the same
 * arguments (again except `vary`). A run without a workload stat (one
 * recorded without stats) is an unknown configuration: like another
 * unknown one, never like a known one. On a difference `why` gets it with `a`'s value first,
 * labelled `here`, and `b`'s labelled `there` ("population 120000 here,
 * 30000 in the baseline") and 0 is returned.
 */
int rs_runview_same_config(const json_t *a, const json_t *b, const char *vary,
			   const char *here, const char *there, char *why, size_t why_len);

/* Whether the run is marked as an accepted (intended) slowdown: its
 * meta "accept" (a reason), else NULL. */
const char *rs_runview_accepted(const json_t *run);

/* The oid of the run's main session, or NULL. */
const char *rs_runview_session_oid(const json_t *run);

#endif
