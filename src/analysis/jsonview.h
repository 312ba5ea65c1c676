/*
 * Permissive readers of what the report adds to a run for its pages
 * (html.c): "path", "diff_page", "chart_files" and the "check" object
 * (report/report_internal.h), kept in the JSON beside the run's record.
 * A missing key or one of another type reads as absent: these are the
 * report's own, optional, annotations.
 *
 * Never a key of run.json: run records reach the analysis typed and
 * checked (runrec/runrec.h, analysis/runview.h).
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
