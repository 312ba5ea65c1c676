/*
 * Self-contained HTML: the trend report (`results trend --html`) and the
 * pages of the static site (`results site`). Everything is inline -- CSS,
 * SVG charts, a few lines of script for sorting tables -- so a page opens
 * from disk or GitHub Pages with no network.
 *
 * Link templates: "{id}", "{path}" and "{commit}" are replaced by the
 * run's id, folder and commit (HTML-escaped). run_url NULL means
 * "{path}/summary.md"; commit_url NULL means commits are shown as text.
 *
 * All functions append to `out` and return 0 or an RS_E* code.
 */
#ifndef RS_ANALYSIS_HTML_H
#define RS_ANALYSIS_HTML_H

#include "results/error.h"

#include <jansson.h>
#include <stddef.h>

#include "analysis/series.h"
#include "runrec/runrec.h"
#include "results/buf.h"

struct rs_html_links {
	const char *run_url;
	const char *commit_url;
	const char *diff_prefix;  /* the site index links a run's verdict to
	                             <diff_prefix><its "diff_page">; NULL: no link */
};

/* Expand a link template for one run. */
RS_MUST_CHECK
int rs_html_link(struct rs_buf *out, const char *tmpl, const char *id,
		 const char *path, const char *commit);

/* One <svg> line chart of `s` over the runs of `t`, change points marked. */
RS_MUST_CHECK
int rs_html_chart(struct rs_buf *out, const struct rs_trend *t,
		  const struct rs_series *s, int is_time,
		  const struct rs_html_links *links);

/* A whole page: metric charts, then function charts. */
RS_MUST_CHECK
int rs_html_trend_page(struct rs_buf *out, const struct rs_trend *t,
		       const char *title, const struct rs_html_links *links);

/*
 * The site's index: a sortable table of the runs `recs` (whole records or
 * index lines', runs/runs.h; shown in the given order) linking to each
 * run's page (links->run_url) and commit, and a link to trends.html.
 * From `runs[i]`, the JSON the report keeps beside record i, only what
 * the report adds is read: "path", "diff_page" and "check" (its verdict,
 * report/report_internal.h); a run with a verdict shows it and its
 * change, linked to its flame graph; a regression's row stands out by
 * class, colour and a symbol.
 */
RS_MUST_CHECK
int rs_html_site_index(struct rs_buf *out, const rs_runrec *const *recs,
		       const json_t *const *runs, size_t n, const char *title,
		       const struct rs_html_links *links);

/*
 * One run's page from its record `rec` (typed, borrowed): header,
 * metrics, stats, the interactive flame graph of summary.tree
 * (analysis/flame.h), top functions by own and total time, and the call
 * tree of summary.tree as nested <details> (nodes below 0.5% of the
 * run's time left out). From `run`, the JSON the report keeps beside the
 * record, only what the report adds is read: "path" (the run folder, for
 * links), "check" (its verdict, report/report_internal.h), "diff_page"
 * (linked as the run's differential flame graph) and "chart_files"
 * (rs_html_run_charts, with run["phases"]).
 */
RS_MUST_CHECK
int rs_html_run_page(struct rs_buf *out, const rs_runrec *rec, const json_t *run,
		     const struct rs_html_links *links);

/*
 * The timelines of one run's page (runcharts.c): the phases' shares over
 * the run from its record's phases (`rec`, NULL: none), and the charts of
 * each CSV text in run["chart_files"] (`run`: the report's JSON beside
 * the record, may be NULL) ([{"name", "role": "timeline"|"logged-stats",
 * "text"}], put there by the caller from the run's folder): memory and
 * CPU of the process tree (results-run.timeline.csv), every numeric
 * column of a logged-stats CSV. Nothing for a run without them.
 */
RS_MUST_CHECK
int rs_html_run_charts(struct rs_buf *out, const rs_runrec *rec, const json_t *run);

#endif
