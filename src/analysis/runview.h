/*
 * What the analysis layer asks of a run, over the typed run record
 * (runrec/runrec.h, decoded once where it was read): its metrics, its
 * workload, whether two runs may be compared. A record read from an
 * index line (runs/runs.h, rs_run_entry_record) has metrics only: its
 * workload is read from them, and what it lacks (machine, arguments,
 * summary, session) is "not recorded", as in an old record.
 *
 * All returned strings are borrowed from the record and live as long as it.
 */
#ifndef RS_ANALYSIS_RUNVIEW_H
#define RS_ANALYSIS_RUNVIEW_H

#include "results/error.h"
#include "runrec/runrec.h"

/* The number of `map`'s `name`: 1 and *out set, or 0 (absent or a string). */
int rs_runview_map_num(const struct rs_runrec_map *map, const char *name, double *out);

/* metrics[name], falling back to stats[name]; "stats.NAME" reaches a stat
 * that a session metric of the same name shadows. 1 or 0. */
int rs_runview_metric(const rs_runrec *run, const char *name, double *out);

/*
 * The workload of a run: the value of stats key `per` when given, else
 * the first of the well-known workload keys (months, population,
 * n_individuals, ...) that the run's stats or metrics hold, matched on
 * the whole name or on the last '.'-separated component. *key_out gets
 * the key found (borrowed). 1 when found and > 0, else 0.
 */
int rs_runview_workload(const rs_runrec *run, const char *per,
			const char **key_out, double *out);

/* machine.runner, .hostname or .cpu_model by `field`'s name; NULL when
 * not recorded (or another name). */
const char *rs_runview_machine(const rs_runrec *run, const char *field);

/*
 * Whether two runs come from machines that may be compared: runner,
 * hostname and cpu_model must be equal wherever both runs record them.
 * On a mismatch *why gets the name of the first differing field.
 */
int rs_runview_same_machine(const rs_runrec *a, const rs_runrec *b, const char **why);

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
int rs_runview_same_config(const rs_runrec *a, const rs_runrec *b, const char *vary,
			   const char *here, const char *there, char *why, size_t why_len);

/* Whether the run is marked as an accepted (intended) slowdown: its
 * meta "accept" (a reason), else NULL. */
const char *rs_runview_accepted(const rs_runrec *run);

/* The oid of the run's main session, or NULL. */
const char *rs_runview_session_oid(const rs_runrec *run);

/* summary.samples when the run has a summary with samples (> 0): 1 and *out, or 0. */
int rs_runview_samples(const rs_runrec *run, double *out);

#endif
