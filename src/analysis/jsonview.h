/*
 * Permissive readers of the JSON documents the HTML pages are still
 * built from: a run's run.json object with what the report adds to it
 * ("path", "check", "diff_page", "chart_files"), and the "check" object
 * itself. A missing key or one of another type reads as absent.
 *
 * Run records reach the check, the trend and compare typed and checked
 * (runrec/runrec.h, analysis/runview.h); these remain only for the pages
 * (html.c) until those read the typed record too. No new caller.
 *
 * Returned strings are borrowed from the json_t and live as long as it.
 */
#ifndef RS_ANALYSIS_JSONVIEW_H
#define RS_ANALYSIS_JSONVIEW_H

#include <jansson.h>

/* A string member of `obj`, or `fallback` when absent or not a string. */
const char *rs_jsonview_str(const json_t *obj, const char *key, const char *fallback);

/* A numeric member (integer or real) of `obj`: 1 and *out set, or 0. */
int rs_jsonview_num(const json_t *obj, const char *key, double *out);

#endif
