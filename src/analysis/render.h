/*
 * Text, Markdown and JSON renderings of the analysis results. Markdown
 * is written to read well as a pull-request comment and as a GitHub
 * Actions job summary ($GITHUB_STEP_SUMMARY): one heading, a verdict
 * line, tables, long lists folded in <details>.
 *
 * All functions append to `out` (caller's buffer) and return 0 or an
 * RS_E* code (out of memory / buffer cap).
 */
#ifndef RS_ANALYSIS_RENDER_H
#define RS_ANALYSIS_RENDER_H

#include "results/error.h"

#include <stddef.h>

#include "analysis/check.h"
#include "analysis/diff.h"
#include "analysis/series.h"
#include "results/buf.h"
#include "results/report.h" /* enum rs_format, rs_format_parse */

/* `top`: function rows shown per section (0: 10). */
RS_MUST_CHECK
int rs_render_diff(struct rs_buf *out, const struct rs_diff *d,
		   enum rs_format fmt, size_t top);

RS_MUST_CHECK
int rs_render_check(struct rs_buf *out, const struct rs_check_result *r,
		    enum rs_format fmt);

/*
 * The check in one line, for a summary page or a table cell:
 * "+13% vs c1d2e3f: trace_contacts (new, 4.1 s)", "+0% vs c1d2e3f: no
 * regression", "no comparable baseline (another configuration)".
 * Plain text holding a function name: a Markdown or HTML writer escapes
 * it (results/escape.h).
 */
RS_MUST_CHECK
int rs_render_verdict(struct rs_buf *out, const struct rs_check_result *r);

/* Text: one row per run with the metric columns; JSON: the whole trend. */
RS_MUST_CHECK
int rs_render_trend(struct rs_buf *out, const struct rs_trend *t,
		    enum rs_format fmt);

/*
 * A duration in s/ms/us with three significant digits ("1.23 s",
 * "1 ms", never "1e+03 us"); "1,234 s" from 1,000 s on.
 */
RS_MUST_CHECK
int rs_render_seconds(struct rs_buf *out, double seconds);

/* `before` (written as it is), then `seconds` as rs_render_seconds writes them. */
RS_MUST_CHECK
int rs_render_seconds_after(struct rs_buf *out, const char *before, double seconds);

/*
 * A number as people write it: "30,000" (not "3e+04"), "12,345.7",
 * "1,234", "512.5", "0.1234"; "-" for NaN.
 */
RS_MUST_CHECK
int rs_render_number(struct rs_buf *out, double v);

/* A metric value: seconds when the name says time, else rs_render_number. */
RS_MUST_CHECK
int rs_render_metric_value(struct rs_buf *out, const char *name, double v);

#endif
