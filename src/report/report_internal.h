/*
 * What the files behind results/report.h share (src/report/report*.c): the
 * JSON of runs for the analysis layer, which works on json_t.
 */
#ifndef RS_REPO_REPORT_INTERNAL_H
#define RS_REPO_REPORT_INTERNAL_H

#include <jansson.h>

#include "runs/runs.h"
#include "results/report.h"

/* The record of `e` as a JSON object (the caller's reference). */
RS_MUST_CHECK
/*
 * The CSV files of the run's folder (`folder`, from HEAD's tree, each
 * through a 4 MiB cap) that its page draws (analysis/html.h,
 * rs_html_run_charts): results run's timeline and the logged-stats
 * files, into run["chart_files"]. Best effort: a file that cannot be read
 * is left out and the page is still whole; RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_report_attach_chart_files(json_t *run, const struct rs_runs *runs, const char *folder);

int rs_report_load_object(json_t **out, const struct rs_runs *runs,
			  const struct rs_run_entry *e);

#endif
