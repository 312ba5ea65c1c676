/*
 * rs_open: one run's session as a self-contained interactive HTML page
 * (`results open`): its interactive flame graph (analysis/flame.h), then,
 * in the manner of pyinstrument's own HTML view, the call tree, each frame with its total and own time, children sorted by
 * total time, collapsible (<details>; the top levels and the frames of
 * a fifth of the run or more open), frames
 * of 10% or more of the run highlighted. Built from every sample of the
 * session through rs_deep's call paths (paths below `min_share` of the
 * run's time are left out); inline CSS and script, no network.
 */
#ifndef RS_ANALYSIS_OPEN_H
#define RS_ANALYSIS_OPEN_H

#include <jansson.h>

#include "results/buf.h"
#include "runrec/runrec.h"

/*
 * Read the session at `session_path` and append the page to `out`.
 * `title` heads it; `min_share` 0 means 0.001. `rec` (may be NULL): the
 * run's record, whose timelines are drawn above the tree
 * (rs_html_run_charts, with the CSV texts of `run`, the JSON beside it:
 * "chart_files"). Errors: RS_ENOTFOUND,
 * the parser's RS_ECORRUPT / RS_EUSAGE, RS_EGENERIC.
 */
RS_MUST_CHECK
int rs_open_html(struct rs_buf *out, const char *session_path, const char *title,
		 double min_share, const rs_runrec *rec, const json_t *run);

#endif
