/*
 * rs_phases: where a run's time went by phase, and when (issue 22):
 * the inclusive time under each named phase of a run (building the
 * population, simulating, processing the logs), and a timeline of each
 * phase's share of the run per time slice, computed in the summary's one
 * streaming pass (chained on rs_summary_options.chain).
 *
 * Phases are named in `.results.json`:
 *     "phases": {"initialise": "Simulation.make_initial_population",
 *                "simulate": "Simulation.simulate",
 *                "logs": "parse_log_file"}
 * A spec is "Class.function", "function", or "path/suffix.py:function"
 * (the file's path ends with the suffix); every function the spec matches
 * counts, and a sample counts once per phase whatever the recursion, so
 * a phase's time is exactly the time of the samples whose stack holds one
 * of its functions. Without a configuration the top-level frames under
 * the script's entry point serve: from the root, the call path is followed
 * through frames that pass all their time (99% or more) to one child;
 * the children of the first frame that splits its time become the phases
 * (those holding at least 1% of the run; the rest is "other"). Only the
 * first RS_PHASES_MAX_DEPTH levels of the stacks are looked at for that.
 *
 * Samples are in time order (pyinstrument writes them so), and each
 * sample's time is its duration: their running sum places each sample on
 * the run's time axis. The timeline keeps at most RS_PHASES_MAX_SLICES
 * slices; when full, neighbouring slices merge and the slice width
 * doubles, so memory stays bounded whatever the run's length.
 *
 * The result, as JSON (run.json "phases"; docs/run-format.md):
 *   {"source": "config"|"default", "names": [n1, ...],
 *    "specs": [s1, ...],                       (config only)
 *    "totals": {n1: s, ...}, "other": s, "sampled": s,
 *    "timeline": {"slice": width_s, "rows": [[t_start, s1, ..., s_other], ...]}}
 */
#ifndef RS_PHASES_H
#define RS_PHASES_H

#include <jansson.h>

#include "results/error.h"
#include "session/session.h"

#define RS_PHASES_MAX 16           /* phases named in .results.json */
#define RS_PHASES_MAX_NAME 64      /* bytes of a phase's name */
#define RS_PHASES_MAX_SPEC 512     /* bytes of a spec */
#define RS_PHASES_MAX_SLICES 240   /* timeline slices */
#define RS_PHASES_MAX_DEPTH 12     /* stack levels looked at for the default */
#define RS_PHASES_MAX_NODES 1024   /* call paths kept for the default (2 MB of timeline) */
#define RS_PHASES_DEFAULT_MAX 8    /* default phases at most */

struct rs_phases;

/*
 * Make an accumulator. `config` is the "phases" object of .results.json
 * or NULL (the default phases). RS_EUSAGE, with a message naming the
 * phase, for a config that is not an object of strings, a name not of
 * [A-Za-z0-9_.-] (1 to 64 bytes), a spec that is empty or too long, or
 * more than RS_PHASES_MAX phases. The caller's (rs_phases_free).
 */
RS_MUST_CHECK int rs_phases_new(struct rs_phases **out, const json_t *config);
void rs_phases_free(struct rs_phases *ph);

/* Callbacks to chain on the summary's parser (ctx is `ph`). */
void rs_phases_callbacks(struct rs_phases *ph, struct rs_session_callbacks *cb);

/*
 * After the pass: the result above in `*out` (the caller's), or
 * RS_EGENERIC when out of memory. Empty phases (no samples) give an
 * object with no names.
 */
RS_MUST_CHECK int rs_phases_json(const struct rs_phases *ph,
				 const struct rs_session_parser *parser, json_t **out);

/*
 * The phase metrics of a run's "phases" object: "phase.<name>" = seconds
 * for each name, set in `metrics`. Nothing for a missing or malformed
 * object (an old run.json).
 */
RS_MUST_CHECK int rs_phases_metrics(const json_t *phases, json_t *metrics);

#endif
