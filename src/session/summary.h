/*
 * rs_summary: where the time went in one pyinstrument session, computed
 * in one streaming pass (docs/session-summary.md defines every figure).
 *
 *   struct rs_summary *s;
 *   json_t *j;
 *   rs_summary_new(&s, NULL);
 *   while (read a piece) rs_summary_feed(s, piece, n);
 *   rs_summary_finish(s);
 *   rs_summary_json(s, &j);         -- the figures, see the schema below
 *   rs_summary_markdown(j, &md);    -- a page that reads well on GitHub
 *   rs_summary_free(s);
 *
 * The JSON (other layers store and compare it; key names are stable):
 *   {"layout": "5"|"4", "start_time", "duration", "cpu_time",
 *    "min_interval", "max_interval", "sample_count",   (header; null if absent)
 *    "target": "..." | null,           (target_description, or 4.x program)
 *    "samples": N, "sampled_time": s,  (frame records and the sum of their times)
 *    "distinct_frames": N, "distinct_functions": N,
 *    "sys_path": [...],                (first 64 entries; for shortening paths)
 *    "functions": [{"function","file","line","class"(only when known),
 *                   "self","total","self_samples","total_samples"}],
 *                  (union of the top 50 by self and the top 50 by total,
 *                   sorted by self, then total, descending)
 *    "more_functions": {"floor": 0.001, "files": [...],
 *                       "rows": [[function, file index, line, self us, total us]]},
 *                  (every other function whose own or total time is at
 *                   least `floor` of the sampled time: 0.1%, or 10
 *                   samples' worth when that is more)
 *    "ran": "AbC9...",  (every function that ran: its 24-bit name hash,
 *                        rs_summary_name_hash, 4 base64 digits each, sorted)
 *    "files": [{"file","self","total"}],   (top 30 by self)
 *    "tree": {"function":"[root]","file":"","line":0,"total","self",
 *             "children":[{"function","file","line","total","self","children"}]},
 *    "tree_truncated": true                (only when the node cap was hit)}
 * Times are seconds (JSON reals), counts are integers.
 */
#ifndef RS_SUMMARY_H
#define RS_SUMMARY_H

#include "results/error.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "session/session.h"
#include "results/buf.h"

/* Share of the sampled time above which every function is stored ... */
#define RS_SUMMARY_FLOOR 0.001
/* ... and at least this many samples' worth of time (short runs). */
#define RS_SUMMARY_FLOOR_SAMPLES 10
/* The layout of summary.calls rows: [caller, callee, total us, self us]. */
#define RS_SUMMARY_CALLS_VERSION 1

/* Call-tree nodes kept while reading; beyond this the tree stops growing. */
#define RS_SUMMARY_MAX_NODES (1u << 20)

struct rs_summary_options {
	unsigned top_functions;   /* per ranking; 0: 50 */
	unsigned top_files;       /* 0: 30 */
	double prune_fraction;    /* tree nodes below this share of time are cut; 0: 0.005 */
	unsigned max_depth;       /* tree levels below the root; 0: 40 */
	unsigned max_nodes;       /* tree nodes kept while reading; 0: RS_SUMMARY_MAX_NODES */
	double floor_share;       /* "more_functions" floor; 0: RS_SUMMARY_FLOOR */
	/*
	 * Optional: callbacks run after the summary's own for every event,
	 * so another consumer (a codec, a diff) shares the same single pass.
	 * Copied; NULL members are skipped.
	 */
	const struct rs_session_callbacks *chain;
};

struct rs_summary;

/*
 * Make a summary with its own parser. `opts` may be NULL (defaults) and
 * is copied. Returns 0 and the caller's object (rs_summary_free), or
 * RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_summary_new(struct rs_summary **out, const struct rs_summary_options *opts);

/*
 * Feed the next `n` bytes of the session (pieces of any size). Returns
 * 0 or the parser's error (see rs_session_parser_feed).
 */
RS_MUST_CHECK
int rs_summary_feed(struct rs_summary *s, const void *bytes, size_t n);

/* End of input; 0 when a whole session was read (see rs_session_parser_finish). */
RS_MUST_CHECK
int rs_summary_finish(struct rs_summary *s);

/*
 * Build the JSON above. Valid only after rs_summary_finish returned 0
 * (RS_EUSAGE otherwise). `*out` is a new reference: the caller's, to be
 * json_decref'd. RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_summary_json(const struct rs_summary *s, json_t **out);

/* The summary's parser, for its frame tables (borrowed; lives as long as `s`). */
const struct rs_session_parser *rs_summary_parser(const struct rs_summary *s);

/*
 * The 24-bit hash of a function's bare name and file that "ran" holds
 * (FNV-1a, folded). A false "ran" for a function that did not run has
 * a chance of about (functions in the run) / 2^24, 1 in 15,000 for a
 * run of 1,100 functions.
 */
uint32_t rs_summary_name_hash(const char *function, const char *file);

/*
 * Whether a function (bare name, file) ran in the run of `summary`: 1,
 * 0, or -1 when the summary has no "ran" (recorded by an older version).
 */
int rs_summary_ran(const json_t *summary, const char *function, const char *file);

/* The same over the text of "ran" (NUL-terminated; NULL: none, -1). */
int rs_summary_ran_in(const char *ran, const char *function, const char *file);

/* Free the summary and its parser. NULL is a no-op. */
void rs_summary_free(struct rs_summary *s);

/*
 * Summarise a session file: open, stream in 1 MiB pieces, finish, build
 * the JSON. `opts` may be NULL. `*out` is the caller's (json_decref).
 * RS_ENOTFOUND when the file does not exist; parser errors as above,
 * with the path in front of the message.
 */
RS_MUST_CHECK
int rs_summary_file(const char *path, const struct rs_summary_options *opts, json_t **out);

/*
 * Append a Markdown rendering of a summary JSON (as made by
 * rs_summary_json, or read back from a stored run) to `out`: a table of
 * duration, CPU time, samples, interval and target; the top 15 functions
 * by own time and by total time with file:line; the top files. Paths are
 * shown relative to the longest matching sys_path entry. Missing keys are
 * shown as "n/a", so older stored summaries still render. Returns 0, or
 * RS_EUSAGE when `summary` is not an object or `out` hits its cap.
 */
RS_MUST_CHECK
int rs_summary_markdown(const json_t *summary, struct rs_buf *out);

#endif
