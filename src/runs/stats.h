/*
 * Stats files that profiling scripts write next to a session, read into
 * the flat name -> value maps of run.json ("stats", "args", "metrics"):
 *
 *   <x>.stats.json, --stats FILE   a JSON object; nested objects are
 *                                  flattened with '.' ({"a":{"b":1}} gives
 *                                  "a.b"), arrays with their index ("a.0").
 *   <x>.args.json                  the script's arguments, same flattening
 *                                  (kept apart from stats: inputs, not
 *                                  measurements).
 *   <x>.logged-stats.csv           a header row, then one row per sample;
 *                                  every column becomes "<x>.<column>.last"
 *                                  and, when it holds numbers,
 *                                  "<x>.<column>.max" and "<x>.<column>.mean".
 *
 * All of them are untrusted input: JSON files are capped at
 * RS_STATS_MAX_JSON bytes, CSV files are streamed line by line with a cap
 * on the line length and the number of columns, and at most
 * RS_STATS_MAX_KEYS values are kept per map. Names longer than
 * RS_STATS_MAX_NAME are refused.
 *
 * Values are jansson json_t: numbers (integer or real) and strings;
 * booleans become 0/1, null is dropped. The maps are the caller's.
 */
#ifndef RS_STATS_H
#define RS_STATS_H

#include "results/error.h"

#include <stddef.h>

#include <stdio.h>

#include <jansson.h>

#define RS_STATS_MAX_JSON (4u * 1024 * 1024)
#define RS_STATS_MAX_KEYS 4096
#define RS_STATS_MAX_NAME 256
#define RS_STATS_MAX_DEPTH 16
#define RS_STATS_MAX_CSV_LINE (64u * 1024)
#define RS_STATS_MAX_CSV_COLUMNS 512

/*
 * Flatten the JSON object in `text` into `out` (an object), each name
 * prefixed with "<prefix>." when `prefix` is not NULL. A name already in
 * `out` is replaced. `what` names the input in error messages.
 * RS_ECORRUPT if the text is not a JSON object, RS_EUSAGE past the caps.
 */
RS_MUST_CHECK
int rs_stats_flatten_json(json_t *out, const char *prefix, const char *text,
			  size_t len, const char *what);

/* rs_stats_flatten_json on the contents of the file `path`. */
RS_MUST_CHECK
int rs_stats_read_json_file(json_t *out, const char *prefix, const char *path);

/*
 * Summarise the CSV file at `path` into `out` under "<prefix>.<column>.*"
 * (see above). Streams the file: memory is bounded by the caps, not by
 * the number of rows. Quoted fields ("a,b", "" for a quote) are handled.
 * RS_ECORRUPT for a file with no header row or an unterminated quote.
 */
RS_MUST_CHECK
int rs_stats_read_csv_file(json_t *out, const char *prefix, const char *path);

/*
 * rs_stats_read_csv_file on an open stream (the caller's: not closed),
 * for a file opened without following symlinks. `path` names it in
 * messages.
 */
RS_MUST_CHECK
int rs_stats_read_csv_stream(json_t *out, const char *prefix, FILE *f, const char *path);

/* Copy every number of `stats` into `metrics` (same names). */
RS_MUST_CHECK
int rs_stats_numbers(json_t *metrics, const json_t *stats);

/*
 * What a file of a run folder is, from its name: "session"
 * (*.pyisession), "stats" (*.stats.json), "args" (*.args.json),
 * "logged-stats" (*.logged-stats.csv), "html" (*.html, *.htm) or "other".
 * Returns a static string.
 */
const char *rs_stats_file_role(const char *name);

/*
 * The stem of a known file name: "pop1k" for "pop1k.logged-stats.csv",
 * written to `out` (the whole name for other files). RS_EUSAGE when it
 * does not fit in `outsz`. Used as the prefix of logged-stats names.
 */
RS_MUST_CHECK
int rs_stats_file_stem(char *out, size_t outsz, const char *name);

#endif
