/*
 * What the files behind results/report.h share (src/repo/report*.c): the
 * JSON of runs for the analysis layer, which works on json_t.
 */
#ifndef RS_REPO_REPORT_INTERNAL_H
#define RS_REPO_REPORT_INTERNAL_H

#include <jansson.h>

#include "repo/runs.h"
#include "results/report.h"

/* The record of `e` as a JSON object (the caller's reference). */
RS_MUST_CHECK
int rs_report_load_object(json_t **out, const struct rs_runs *runs,
			  const struct rs_run_entry *e);

#endif
