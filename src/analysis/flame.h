/*
 * rs_flame: the flame graphs of every page that draws one -- the
 * differential graph of `results compare --deep --html` and of the
 * site's runs/<id>.diff.html, and the one-run graph of the site's run
 * pages and of `results open` -- from one source, markup, style and
 * script alike.
 *
 * A graph is an icicle (roots on top) of the head run's call paths of an
 * rs_deep_diff: each frame a <div class="f"> of the width of its share of
 * the run, one row per level. The page's script makes it interactive,
 * with no network and no data in the script itself (every name is in
 * the markup, escaped; the script reads it back as text):
 *
 *   - click a frame (or Enter/Space on it) to zoom into it: its subtree
 *     fills the graph's width, its callers stay above it at full width;
 *     the zoom path above the graph, a click on a root frame, the
 *     "reset zoom" button or Escape goes back;
 *   - the search box (a substring of the function or file, any case; no
 *     regular expression) highlights the matching frames and says how
 *     many match and what share of the run's time they hold (a frame
 *     inside a matching one is not counted twice);
 *   - the graph is one tab stop (an ARIA tree with a roving tabindex):
 *     arrow keys move between frames (up: the caller, down: the heaviest
 *     callee, left/right: the neighbours in the row), Enter zooms,
 *     Escape resets, '/' focuses the search box; the focused frame has a
 *     visible ring;
 *   - every frame is a treeitem whose accessible name gives its function,
 *     file and times.
 */
#ifndef RS_ANALYSIS_FLAME_H
#define RS_ANALYSIS_FLAME_H

#include "results/error.h"

#include "analysis/deep.h"
#include "results/buf.h"

/* How a graph colours its frames. */
enum rs_flame_kind {
	/*
	 * Two runs: by the change in each frame's time that is not in the
	 * frames drawn below it, as a share of the base run (a path new in
	 * the head: red; grew: towards red; shrank: towards blue; 2% or more:
	 * full colour; callers of a changed function stay grey).
	 */
	RS_FLAME_DIFF = 0,
	/* One run (base and head the same): by the share of each frame's
	 * time spent in its own body, pale (passes its time on) to orange. */
	RS_FLAME_RUN,
};

/* The rows of a graph are this many pixels high. */
#define RS_FLAME_ROW 18

/*
 * Append the style rules of the graphs (no <style> tags): once per page,
 * in its head.
 */
RS_MUST_CHECK
int rs_flame_css(struct rs_buf *out);

/*
 * Append one graph of `d` with its search box, zoom path and colour key
 * (a <div class="fgw">). `label` names the graph for assistive
 * technology (escaped here). Nothing is drawn for a run without time.
 */
RS_MUST_CHECK
int rs_flame_graph(struct rs_buf *out, const struct rs_deep_diff *d, enum rs_flame_kind kind,
		   const char *label);

/*
 * Append the script (with its <script> tags) that makes every graph of
 * the page interactive: once per page, after the graphs.
 */
RS_MUST_CHECK
int rs_flame_script(struct rs_buf *out);

/*
 * A differential flame graph as one self-contained HTML page (inline
 * CSS and script, no network): the head run's call paths as an
 * RS_FLAME_DIFF graph, titled `title` (escaped here; NULL: a default).
 */
RS_MUST_CHECK
int rs_deep_flame_html(struct rs_buf *out, const struct rs_deep_diff *d, const char *title);

#endif
