/*
 * HTML pages with inline SVG charts.
 *
 * A chart maps run i of n to x = left + i * width / (n - 1) and a value
 * to y linearly between the series' minimum and maximum (padded 8%), so
 * a step stands out however large the numbers. Missing values break the
 * line rather than pulling it to zero. Each point is an <a> around a
 * <circle> with a <title>, so hovering names the run and clicking opens
 * its summary; change points are dashed vertical lines labelled with the
 * relative step.
 */
#include "analysis/html.h"
#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/render.h"
#include "analysis/jsonview.h"
#include "analysis/runview.h"
#include "results/error.h"
#include "results/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHART_W 860
#define CHART_H 240
#define PAD_L 78
#define PAD_R 24
#define PAD_T 18
#define PAD_B 42
#define TREE_MAX_DEPTH 64
#define TREE_MIN_SHARE 0.005

static const char css[] =
	"body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;"
	"margin:24px;color:#1f2328;background:#fff}"
	"h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:8px 0}"
	"td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;font-size:14px}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#f6f8fa}th.sort{cursor:pointer}"
	"figure.chart{margin:12px 0 20px 0}figcaption{font-weight:600;margin-bottom:4px}"
	"svg .line{fill:none;stroke:#0969da;stroke-width:2}"
	"svg .pt{fill:#0969da}svg .pt:hover{fill:#cf222e}"
	"svg .axis{stroke:#8c959f;stroke-width:1}svg .grid{stroke:#eaeef2;stroke-width:1}"
	"svg .cp{stroke:#cf222e;stroke-width:1.5;stroke-dasharray:5 4}"
	"svg text{font-size:11px;fill:#57606a}svg text.cpl{fill:#cf222e;font-weight:600}"
	"details{margin-left:14px}summary{cursor:pointer;font-family:ui-monospace,monospace;font-size:13px}"
	"code{font-family:ui-monospace,monospace}.muted{color:#57606a}"
	/* verdicts: a class, a colour and a symbol, so a regression reads as one
	 * without colour or without CSS */
	"tr.v-regression td{background:#ffebe9}tr.v-regression td.verdict,tr.v-regression td.verdict a"
	"{color:#a40e26;font-weight:700}"
	"tr.v-improvement td.verdict,tr.v-improvement td.verdict a{color:#1a7f37;font-weight:600}"
	"tr.v-machine td.verdict,tr.v-machine td.verdict a{color:#7d4e00}"
	"tr.v-not-comparable td.verdict,tr.v-not-comparable td.verdict a{color:#57606a}"
	"p.verdict.v-regression{background:#ffebe9;color:#a40e26;padding:4px 8px}"
	"p.verdict.v-improvement{color:#1a7f37}"
	"svg .mk-regression{fill:#cf222e;stroke:#fff;stroke-width:1}"
	"svg .mk-improvement{fill:#1a7f37;stroke:#fff;stroke-width:1}"
	"svg .pt.out{fill:#fff;stroke:#8c959f;stroke-width:1.5}svg .outm{fill:#fff;stroke:#8c959f;stroke-width:1.5}"
	"svg text.tick{font-family:ui-monospace,monospace;font-size:10px}"
	".legend{font-size:13px;color:#57606a;margin:2px 0 4px 0}.legend span{margin-right:14px}"
	".sym-regression{color:#cf222e}.sym-improvement{color:#1a7f37}.sym-out{color:#8c959f}"
	"ul.left-out{font-size:13px;margin:4px 0 8px 0;color:#57606a}";

/* Sort a table on a header click: numbers by data-v, else text. */
static const char sort_js[] =
	"<script>\n"
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	" t.querySelectorAll('th').forEach(function(th,i){\n"
	"  th.classList.add('sort');\n"
	"  th.addEventListener('click',function(){\n"
	"   var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\n"
	"   var asc=th.dataset.dir!=='asc';th.dataset.dir=asc?'asc':'desc';\n"
	"   rows.sort(function(x,y){\n"
	"    var a=x.cells[i],c=y.cells[i];\n"
	"    var va=a.dataset.v!==undefined?parseFloat(a.dataset.v):a.textContent;\n"
	"    var vc=c.dataset.v!==undefined?parseFloat(c.dataset.v):c.textContent;\n"
	"    var r=(typeof va==='number'&&typeof vc==='number')?va-vc:String(va).localeCompare(String(vc));\n"
	"    return asc?r:-r;});\n"
	"   rows.forEach(function(r){b.appendChild(r);});});});});\n"
	"</script>\n";

static int esc(struct rs_buf *out, const char *s)
{
	return rs_escape_html_text(out, s);
}

static int esc_attr(struct rs_buf *out, const char *s)
{
	return rs_escape_html_attr(out, s);
}

/* `before`, `value` escaped, `after`. */
static int esc_between(struct rs_buf *out, const char *before, const char *value,
		       const char *after)
{
	int err;

	err = rs_buf_puts(out, before);
	if (!err)
		err = esc(out, value);
	if (!err)
		err = rs_buf_puts(out, after);
	return err;
}

/*
 * A value from a run at the very start of an href would choose its
 * scheme: "javascript:..." is a valid run path component. Such a value
 * (a ':' before any '/') is written after "./", which keeps it a
 * relative link.
 */
static int link_value(struct rs_buf *out, const char *v, int first)
{
	const char *colon = strchr(v, ':'), *slash = strchr(v, '/');
	int err;

	if (first && colon && (!slash || colon < slash)) {
		err = rs_buf_puts(out, "./");
		if (err)
			return err;
	}
	return esc_attr(out, v);
}

int rs_html_link(struct rs_buf *out, const char *tmpl, const char *id,
		 const char *path, const char *commit)
{
	const char *p = tmpl;
	int err;

	while (*p) {
		int first = p == tmpl;

		if (!strncmp(p, "{id}", 4)) {
			err = link_value(out, id, first);
			if (err)
				return err;
			p += 4;
		} else if (!strncmp(p, "{path}", 6)) {
			err = link_value(out, path, first);
			if (err)
				return err;
			p += 6;
		} else if (!strncmp(p, "{commit}", 8)) {
			err = link_value(out, commit, first);
			if (err)
				return err;
			p += 8;
		} else {
			char c[2] = { *p++, 0 };

			err = esc_attr(out, c);
			if (err)
				return err;
		}
	}
	return 0;
}

static int page_head(struct rs_buf *out, const char *title)
{
	int err;

	err = rs_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			  "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>");
	if (err)
		return err;
	err = esc(out, title);
	if (err)
		return err;
	/* the flame graph's rules too: one place gives every page its style */
	err = rs_buf_printf(out, "</title>\n<style>%s", css);
	if (!err)
		err = rs_flame_css(out);
	if (!err)
		err = rs_buf_puts(out, "</style>\n</head><body>\n<h1>");
	if (err)
		return err;
	err = esc(out, title);
	if (err)
		return err;
	return rs_buf_puts(out, "</h1>\n");
}

static int value_text(struct rs_buf *out, const char *name, double v, int is_time)
{
	if (is_time)
		return rs_render_seconds(out, v);
	return rs_render_metric_value(out, name, v);
}

static double xpos(size_t i, size_t n)
{
	double w = CHART_W - PAD_L - PAD_R;

	return n > 1 ? PAD_L + w * (double)i / (double)(n - 1) : PAD_L + w / 2;
}

/* Mean of the values of runs [from, to) that are evidence of a level (rs_trend_evidence). */
static double range_mean(const struct rs_trend *t, const struct rs_series *s, size_t from,
			 size_t to)
{
	double sum = 0;
	size_t got = 0, i;

	for (i = from; i < to; i++)
		if (rs_trend_evidence(t, s, i)) {
			sum += s->v[i];
			got++;
		}
	return got ? sum / (double)got : NAN;
}

/* One chart being drawn: its series and the value scale. */
struct chart {
	const struct rs_trend *t;
	const struct rs_series *s;
	int is_time;
	double lo, span;          /* the y axis: lo .. lo + span */
	double r;                 /* point radius */
	struct rs_buf label;      /* scratch */
};

/* The y position of value `v`. */
static double chart_y(const struct chart *c, double v)
{
	return CHART_H - PAD_B - (CHART_H - PAD_T - PAD_B) * (v - c->lo) / c->span;
}

/* <figure> and its caption; `present` values are recorded. */
static int chart_open(struct rs_buf *out, const struct rs_series *s, size_t present)
{
	int err;

	err = rs_buf_puts(out, "<figure class=\"chart\" data-series=\"");
	if (err)
		return err;
	err = esc_attr(out, s->name);
	if (err)
		return err;
	err = rs_buf_printf(out, "\" data-points=\"%zu\" data-change-points=\"%zu\"><figcaption>",
			    present, s->n_changes);
	if (err)
		return err;
	err = esc(out, s->name);
	if (err)
		return err;
	return rs_buf_puts(out, "</figcaption>\n");
}

/* The y range of the values, padded 8% (a series never negative keeps 0 as floor). */
static void chart_scale(struct chart *c, double lo, double hi)
{
	double span = hi - lo;

	if (span <= 0)
		span = hi != 0 ? fabs(hi) * 0.02 : 1;
	lo = lo >= 0 && lo - span * 0.08 < 0 ? 0 : lo - span * 0.08;
	hi += span * 0.08;
	c->lo = lo;
	c->span = hi - lo;
	c->r = c->t->n > 2000 ? 1.5 : c->t->n > 300 ? 2.5 : 3.5;
}

/*
 * The x axis is the runs in commit (recording) order, evenly spaced: each
 * labelled tick is a commit's short id, every k-th run so that labels
 * TICK_GAP px apart never overlap (the last run always labelled, the
 * label before it dropped when too close); every point's title names
 * its commit too.
 */
#define TICK_GAP 56

/* A commit's short id, escaped (the commit comes from the repository). */
static int short_commit(struct rs_buf *out, const char *commit)
{
	char c[8];

	snprintf(c, sizeof(c), "%.7s", commit ? commit : "");
	return esc(out, c);
}

/* The tick of run `i` and its commit under the axis. */
static int chart_tick(struct rs_buf *out, const struct rs_trend *t, size_t i)
{
	double x = xpos(i, t->n);
	int err;

	err = rs_buf_printf(out, "<line class=\"axis\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			    "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x, x,
			    CHART_H - PAD_B, CHART_H - PAD_B + 4, x, CHART_H - PAD_B + 18);
	if (!err)
		err = short_commit(out, t->commits[i]);
	if (!err)
		err = rs_buf_puts(out, "</text>\n");
	return err;
}

static int chart_ticks(struct rs_buf *out, const struct rs_trend *t)
{
	double w = CHART_W - PAD_L - PAD_R;
	size_t fit = (size_t)(w / TICK_GAP) + 1, step, i;
	int err = 0;

	if (!t->n)
		return 0;
	step = t->n <= fit ? 1 : (t->n + fit - 2) / (fit - 1);
	for (i = 0; !err && i + 1 < t->n; i += step)
		if (xpos(t->n - 1, t->n) - xpos(i, t->n) >= TICK_GAP)
			err = chart_tick(out, t, i);
	if (!err)
		err = chart_tick(out, t, t->n - 1);
	return err;
}

/* <svg>, the grid with the y labels, the axis, its commits and the first and last dates. */
static int chart_grid(struct rs_buf *out, struct chart *c)
{
	const struct rs_trend *t = c->t;
	int err;

	err = rs_buf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
			    "viewBox=\"0 0 %d %d\" role=\"img\">\n", CHART_W, CHART_H, CHART_W, CHART_H);
	for (size_t k = 0; !err && k <= 4; k++) {
		double v = c->lo + c->span * (double)k / 4;
		double y = CHART_H - PAD_B - (CHART_H - PAD_T - PAD_B) * (double)k / 4;

		rs_buf_clear(&c->label);
		err = value_text(&c->label, c->s->name, v, c->is_time);
		if (!err)
			err = rs_buf_printf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
					    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
					    PAD_L, CHART_W - PAD_R, y, y, PAD_L - 6, y + 4, c->label.ptr);
	}
	if (!err)
		err = rs_buf_printf(out, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n",
				    PAD_L, CHART_W - PAD_R, CHART_H - PAD_B, CHART_H - PAD_B);
	if (!err)
		err = chart_ticks(out, t);
	if (!err && t->n)
		err = rs_buf_printf(out, "<text class=\"date\" x=\"%d\" y=\"%d\">%.10s</text>"
				    "<text class=\"date\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%.10s</text>\n",
				    PAD_L - 40, CHART_H - 4, t->dates[0], CHART_W - PAD_R + 20,
				    CHART_H - 4, t->dates[t->n - 1]);
	return err;
}

/* The line through the values, lifted over missing ones. */
static int chart_line(struct rs_buf *out, const struct chart *c)
{
	int pen = 0, err;

	err = rs_buf_puts(out, "<path class=\"line\" d=\"");
	for (size_t i = 0; !err && i < c->t->n; i++) {
		if (isnan(c->s->v[i])) {
			pen = 0;
			continue;
		}
		err = rs_buf_printf(out, "%c%.1f %.1f ", pen ? 'L' : 'M', xpos(i, c->t->n),
				    chart_y(c, c->s->v[i]));
		pen = 1;
	}
	if (!err)
		err = rs_buf_puts(out, "\"/>\n");
	return err;
}

/*
 * Change point `k`: a vertical line, labelled with the step between the
 * levels on either side, each level running to the neighbouring change
 * point.
 */
static int chart_change(struct rs_buf *out, struct chart *c, size_t k)
{
	const struct rs_series *s = c->s;
	size_t cp = s->changes[k], n = c->t->n;
	double x = cp ? (xpos(cp - 1, n) + xpos(cp, n)) / 2 : xpos(cp, n);
	size_t from = k ? s->changes[k - 1] : 0;
	size_t to = k + 1 < s->n_changes ? s->changes[k + 1] : n;
	double before = range_mean(c->t, s, from, cp), after = range_mean(c->t, s, cp, to);
	double rel = before != 0 ? (after - before) / fabs(before) * 100 : 0;
	int err;

	err = rs_buf_printf(out, "<line class=\"cp\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\">"
			    "<title>change point at run ", x, x, PAD_T, CHART_H - PAD_B);
	if (err)
		return err;
	err = esc(out, c->t->ids[cp]);
	if (err)
		return err;
	/* a level from zero (a new function) has no relative step:
	 * label it with the new level instead */
	rs_buf_clear(&c->label);
	if (before == 0)
		err = value_text(&c->label, s->name, after, c->is_time);
	else
		err = rs_buf_printf(&c->label, "%+.1f%%", rel);
	if (err)
		return err;
	return rs_buf_printf(out, "</title></line><text class=\"cpl\" x=\"%.1f\" y=\"%d\">%s%s</text>\n",
				    x + 3, PAD_T + 10, before == 0 ? "from 0 to " : "", c->label.ptr);
	return err;
}

/* Run `i`'s verdict class when it is one a chart marks, else NULL. */
static const char *marked_verdict(const struct rs_trend *t, size_t i)
{
	const char *v = t->verdicts ? t->verdicts[i] : NULL;

	return v && (!strcmp(v, "regression") || !strcmp(v, "improvement")) ? v : NULL;
}

/* The verdict's marker at point (x, y): a triangle up above it, or down below it. */
static int chart_marker(struct rs_buf *out, const struct rs_trend *t, size_t i, double x, double y)
{
	const char *v = marked_verdict(t, i);
	double above, tip, base;
	int up, err;

	if (!v)
		return 0;
	up = !strcmp(v, "regression");
	/* above the point (below it at the top of the chart), never on it:
	 * the tip of ▲ up, of ▼ down */
	above = y - 19 >= 2 ? -1 : 1;
	tip = y + above * (up ? 19 : 7);
	base = y + above * (up ? 8 : 18);
	err = rs_buf_printf(out, "<path class=\"mk-%s\" d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1fZ\"><title>",
			    v, x, tip, x - 6, base, x + 6, base);
	if (!err)
		err = esc_between(out, up ? "regression: " : "improvement: ", t->verdict_texts[i],
				  "</title></path>\n");
	return err;
}

/* Point `i`, a link to its run; hollow when the run is left out of the baselines. */
static int chart_point(struct rs_buf *out, struct chart *c, size_t i, const char *run_url)
{
	const struct rs_trend *t = c->t;
	const char *why = t->left_out ? t->left_out[i] : NULL;
	double x = xpos(i, t->n), y = chart_y(c, c->s->v[i]);
	int err;

	err = rs_buf_puts(out, "<a href=\"");
	if (err)
		return err;
	err = rs_html_link(out, run_url, t->ids[i], t->paths[i], t->commits[i]);
	if (err)
		return err;
	err = rs_buf_printf(out, "\"><circle class=\"pt%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"><title>",
			    why ? " out" : "", x, y, c->r);
	if (err)
		return err;
	err = esc(out, t->ids[i]);
	if (!err)
		err = rs_buf_puts(out, " commit ");
	if (!err)
		err = short_commit(out, t->commits[i]);
	if (err)
		return err;
	rs_buf_clear(&c->label);
	err = value_text(&c->label, c->s->name, c->s->v[i], c->is_time);
	if (err)
		return err;
	err = esc_between(out, ": ", c->label.ptr, "");
	if (!err && t->verdict_texts && t->verdict_texts[i])
		err = esc_between(out, "; check: ", t->verdict_texts[i], "");
	if (!err && why)
		err = esc_between(out, "; left out: ", why, "");
	if (!err)
		err = rs_buf_puts(out, "</title></circle></a>\n");
	if (!err)
		err = chart_marker(out, t, i, x, y);
	return err;
}

/* A run left out of the series (no value): a hollow square on the axis, titled why. */
static int chart_out_mark(struct rs_buf *out, const struct rs_trend *t, size_t i)
{
	int err;

	err = rs_buf_printf(out, "<rect class=\"outm\" x=\"%.1f\" y=\"%d\" width=\"8\" height=\"8\"><title>",
			    xpos(i, t->n) - 4, CHART_H - PAD_B - 4);
	if (!err)
		err = esc(out, t->ids[i]);
	if (!err)
		err = esc_between(out, " left out: ", t->left_out[i], "</title></rect>\n");
	return err;
}

/*
 * Under a chart: what its marks mean, and each run left out with why
 * (`list`: the runs themselves, else only how many -- the list is under
 * the metric charts).
 */
#define LEFT_OUT_SHOWN 10 /* runs listed as left out before the rest is folded */

static int chart_notes(struct rs_buf *out, const struct rs_trend *t, int list)
{
	size_t i, n_out = 0, n_marked = 0, shown;
	int err;

	for (i = 0; i < t->n; i++) {
		n_out += t->left_out && t->left_out[i];
		n_marked += marked_verdict(t, i) != NULL;
	}
	if (!n_out && !n_marked)
		return 0;
	err = rs_buf_puts(out, "<div class=\"legend\">"
			  "<span><b class=\"sym-regression\">\xe2\x96\xb2</b> check: regression</span>"
			  "<span><b class=\"sym-improvement\">\xe2\x96\xbc</b> check: improvement</span>"
			  "<span><b class=\"sym-out\">\xe2\x97\x8b</b> left out of the baselines</span>"
			  "<span><b class=\"sym-out\">\xe2\x96\xa1</b> left out of the chart</span>"
			  "<span>x axis: runs in commit order, evenly spaced; labels are short commit ids</span>"
			  "</div>\n");
	if (err || !n_out)
		return err;
	if (!list)
		return rs_buf_printf(out, "<p class=\"muted\">%zu run%s left out: see under the metric "
				     "charts.</p>\n", n_out, n_out == 1 ? "" : "s");
	/* newest first; past LEFT_OUT_SHOWN, the rest folded away */
	err = rs_buf_puts(out, "<ul class=\"left-out\">\n");
	for (i = t->n, shown = 0; !err && i-- > 0;) {
		if (!t->left_out[i])
			continue;
		if (shown++ == LEFT_OUT_SHOWN)
			err = rs_buf_printf(out, "</ul><details><summary>%zu more left out</summary>"
					    "<ul class=\"left-out\">\n", n_out - LEFT_OUT_SHOWN);
		if (!err)
			err = esc_between(out, "<li>run <code>", t->ids[i], "</code> (commit <code>");
		if (!err)
			err = short_commit(out, t->commits[i]);
		if (!err)
			err = esc_between(out, "</code>): ", t->left_out[i], "</li>\n");
	}
	if (!err)
		err = rs_buf_puts(out, shown > LEFT_OUT_SHOWN ? "</ul></details>\n" : "</ul>\n");
	return err;
}

/* Under the chart: the commits on either side of change point `cp`, linked. */
static int chart_commit_link(struct rs_buf *out, const struct rs_trend *t, size_t cp,
			     const struct rs_html_links *links)
{
	int err;

	err = rs_buf_puts(out, "<div class=\"muted\">change between ");
	if (!err && cp > 0)
		err = rs_buf_printf(out, "<code>%.7s</code> and ", t->commits[cp - 1]);
	if (err)
		return err;
	if (links && links->commit_url) {
		err = rs_buf_puts(out, "<a href=\"");
		if (!err)
			err = rs_html_link(out, links->commit_url, t->ids[cp], t->paths[cp],
					   t->commits[cp]);
		if (!err)
			err = rs_buf_printf(out, "\"><code>%.7s</code></a>", t->commits[cp]);
	} else {
		err = rs_buf_printf(out, "<code>%.7s</code>", t->commits[cp]);
	}
	if (err)
		return err;
	return esc_between(out, " (run ", t->ids[cp], ")</div>\n");
}

/* The drawing itself: grid, line, change points, points, then the commit links. */
static int chart_body(struct rs_buf *out, struct chart *c, const struct rs_html_links *links)
{
	const char *run_url = links && links->run_url ? links->run_url : "{path}/summary.md";
	size_t i, k;
	int err;

	err = chart_grid(out, c);
	if (!err)
		err = chart_line(out, c);
	for (k = 0; !err && k < c->s->n_changes; k++)
		err = chart_change(out, c, k);
	for (i = 0; !err && i < c->t->n; i++)
		if (!isnan(c->s->v[i]))
			err = chart_point(out, c, i, run_url);
		else if (c->t->left_out && c->t->left_out[i])
			err = chart_out_mark(out, c->t, i);
	if (!err)
		err = rs_buf_puts(out, "</svg>\n");
	if (!err)
		err = chart_notes(out, c->t, c->s->function == NULL);
	for (k = 0; !err && k < c->s->n_changes; k++)
		err = chart_commit_link(out, c->t, c->s->changes[k], links);
	return err;
}

int rs_html_chart(struct rs_buf *out, const struct rs_trend *t,
		  const struct rs_series *s, int is_time,
		  const struct rs_html_links *links)
{
	struct chart c = { t, s, is_time, 0, 0, 0, RS_BUF_INIT };
	double lo = INFINITY, hi = -INFINITY;
	size_t present = 0;
	int err;

	for (size_t i = 0; i < t->n; i++)
		if (!isnan(s->v[i])) {
			lo = fmin(lo, s->v[i]);
			hi = fmax(hi, s->v[i]);
			present++;
		}
	err = chart_open(out, s, present);
	if (err)
		return err;
	if (!present)
		return rs_buf_puts(out, "<p class=\"muted\">no values recorded</p></figure>\n");
	chart_scale(&c, lo, hi);
	err = chart_body(out, &c, links);
	if (!err)
		err = rs_buf_puts(out, "</figure>\n");
	rs_buf_release(&c.label);
	return err;
}

static int is_time_series(const char *name)
{
	return !strncmp(name, "duration", 8) || !strncmp(name, "cpu_time", 8) ||
	       !strncmp(name, "sampled_time", 12) ||
	       (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, "_time"));
}

static int trend_body(struct rs_buf *out, const struct rs_trend *t,
		      const struct rs_html_links *links)
{
	size_t i;
	int err;

	err = rs_buf_printf(out, "<p class=\"muted\">%zu runs", t->n);
	if (err)
		return err;
	if (t->n) {
		err = rs_buf_printf(out, " from %.10s to %.10s", t->dates[0], t->dates[t->n - 1]);
		if (err)
			return err;
	}
	if (t->workload_key) {
		err = rs_buf_puts(out, "; workload <code>");
		if (err)
			return err;
		err = esc(out, t->workload_key);
		if (err)
			return err;
		err = rs_buf_puts(out, "</code>: time is also charted per unit");
		if (err)
			return err;
	}
	err = rs_buf_puts(out, ". Dashed red lines mark change points; each point links to its run.</p>\n"
			  "<h2>Metrics</h2>\n");
	if (err)
		return err;
	for (i = 0; i < t->n_metrics; i++) {
		err = rs_html_chart(out, t, &t->metrics[i],
				    is_time_series(t->metrics[i].name), links);
		if (err)
			return err;
	}
	if (t->n_funcs) {
		err = rs_buf_puts(out, t->total ? "<h2>Functions, total time (the function and what it calls)</h2>\n"
					: "<h2>Functions, own time</h2>\n");
		if (err)
			return err;
		for (i = 0; i < t->n_funcs; i++) {
			err = rs_html_chart(out, t, &t->funcs[i], 1, links);
			if (err)
				return err;
		}
	}
	return 0;
}

int rs_html_trend_page(struct rs_buf *out, const struct rs_trend *t,
		       const char *title, const struct rs_html_links *links)
{
	int err;

	err = page_head(out, title ? title : "Profiling trends");
	if (err)
		return err;
	err = trend_body(out, t, links);
	if (err)
		return err;
	return rs_buf_puts(out, "</body></html>\n");
}

/* A string of the record for a page: "" for NULL (not recorded). */
static const char *text_of(const char *s)
{
	return s ? s : "";
}

/* The cell of metric `name`'s value `x`. */
static int value_cell(struct rs_buf *out, const char *name, double x)
{
	struct rs_buf v = RS_BUF_INIT;
	int err;

	err = rs_render_metric_value(&v, name, x);
	if (!err)
		err = rs_buf_printf(out, "<td class=\"n\" data-v=\"%.9g\">%s</td>", x, v.ptr);
	rs_buf_release(&v);
	return err;
}

/* The cell of `metrics`' `name`, "-" without it. */
static int num_cell(struct rs_buf *out, const struct rs_runrec_map *metrics, const char *name)
{
	double x;

	if (!rs_runview_map_num(metrics, name, &x))
		return rs_buf_puts(out, "<td class=\"n\" data-v=\"-1\">-</td>");
	return value_cell(out, name, x);
}

static int commit_cell(struct rs_buf *out, const char *commit, const char *id,
		       const char *path, const struct rs_html_links *links)
{
	int err;

	err = rs_buf_puts(out, "<td><code>");
	if (err)
		return err;
	if (links && links->commit_url) {
		err = rs_buf_puts(out, "<a href=\"");
		if (err)
			return err;
		err = rs_html_link(out, links->commit_url, id, path, commit);
		if (err)
			return err;
		err = rs_buf_puts(out, "\">");
		if (err)
			return err;
	}
	err = rs_buf_printf(out, "%.7s", commit ? commit : "");
	if (err)
		return err;
	if (links && links->commit_url) {
		err = rs_buf_puts(out, "</a>");
		if (err)
			return err;
	}
	return rs_buf_puts(out, "</code></td>");
}

/*
 * The verdict classes a run's "check" may carry (report/report_internal.h),
 * each with the symbol that marks it wherever it is shown -- so that a
 * regression reads as one without colour and without CSS -- and its rank
 * when the table is sorted by verdict (worst first on a second click).
 */
static const struct verdict_kind {
	const char *cls, *symbol;
	int rank;
} verdict_kinds[] = {
	{ "regression", "\xe2\x96\xb2", 5 },     /* ▲ */
	{ "accepted", "\xe2\x96\xb3", 4 },       /* △ */
	{ "machine", "~", 3 },
	{ "not-comparable", "\xe2\x88\x85", 2 }, /* ∅ */
	{ "no-change", "=", 1 },
	{ "improvement", "\xe2\x96\xbc", 0 },    /* ▼ */
};

/* The kind of run `r`'s verdict, NULL when it has none (or an unknown one). */
static const struct verdict_kind *run_verdict(const json_t *r)
{
	const char *cls = rs_jsonview_str(json_object_get(r, "check"), "verdict", NULL);

	for (size_t i = 0; cls && i < sizeof(verdict_kinds) / sizeof(verdict_kinds[0]); i++)
		if (!strcmp(cls, verdict_kinds[i].cls))
			return &verdict_kinds[i];
	return NULL;
}

/* How a verdict's metric reads: "wall time", "CPU time per months". */
static int metric_label(struct rs_buf *out, const char *name)
{
	const char *slash = strchr(name, '/');
	size_t base = slash ? (size_t)(slash - name) : strlen(name);
	int err;

	if (base == 8 && !strncmp(name, "duration", 8))
		err = rs_buf_puts(out, "wall time");
	else if (base == 8 && !strncmp(name, "cpu_time", 8))
		err = rs_buf_puts(out, "CPU time");
	else {
		char *head = strndup(name, base);

		err = head ? esc(out, head) : rs_error_set(RS_EGENERIC, "out of memory");
		free(head);
	}
	if (!err && slash)
		err = esc_between(out, " per ", slash + 1, "");
	return err;
}

/*
 * The verdict and change cells of a row: the symbol and the verdict's
 * name, linked to the run's flame graph against its baseline (with the
 * verdict's whole line as the link's title), then the change of the
 * metric the verdict quotes, in %, and that metric.
 */
static int verdict_cells(struct rs_buf *out, const json_t *r, const struct rs_html_links *links)
{
	const struct verdict_kind *k = run_verdict(r);
	const json_t *c = json_object_get(r, "check");
	const char *diff = rs_jsonview_str(r, "diff_page", NULL);
	const char *why = rs_jsonview_str(c, "why", NULL);
	const char *metric = rs_jsonview_str(c, "metric", NULL);
	double rel;
	int link = diff && links && links->diff_prefix, err;

	if (!k)
		return rs_buf_puts(out, "<td class=\"verdict\" data-v=\"-1\">-</td>"
				   "<td class=\"n change\" data-v=\"-1e9\">-</td>");
	err = rs_buf_printf(out, "<td class=\"verdict\" data-v=\"%d\">", k->rank);
	if (!err && link) {
		err = esc_between(out, "<a href=\"", links->diff_prefix, "");
		if (!err)
			err = link_value(out, diff, 0);
		if (!err)
			err = rs_buf_puts(out, "\" title=\"");
		if (!err)
			err = esc_attr(out, rs_jsonview_str(c, "text", ""));
		if (!err)
			err = rs_buf_puts(out, " (flame graph against the baseline)\">");
	}
	if (!err)
		err = rs_buf_printf(out, "<span class=\"sym\">%s</span> ", k->symbol);
	if (!err)
		err = esc(out, rs_jsonview_str(c, "label", k->cls));
	if (!err && link)
		err = rs_buf_puts(out, "</a>");
	/* not comparable: why, in the row (the other verdicts say it in the title) */
	if (!err && !strcmp(k->cls, "not-comparable"))
		err = esc_between(out, " <span class=\"muted why\">(",
				  why ? why : rs_jsonview_str(c, "text", ""), ")</span>");
	if (!err)
		err = rs_buf_puts(out, "</td>");
	if (err)
		return err;
	if (!rs_jsonview_num(c, "change", &rel) || !metric)
		return rs_buf_puts(out, "<td class=\"n change\" data-v=\"-1e9\">-</td>");
	err = rs_buf_printf(out, "<td class=\"n change\" data-v=\"%.6g\">%+.1f%% <span class=\"muted\">",
			    rel * 100, rel * 100);
	if (!err)
		err = metric_label(out, metric);
	if (!err)
		err = rs_buf_puts(out, "</span></td>");
	return err;
}

/* One row of the site's table of runs: record `rec`, the report's additions `r`. */
static int site_index_row(struct rs_buf *out, const rs_runrec *rec, const json_t *r,
			  const char *run_url, const struct rs_html_links *links)
{
	const struct rs_runrec_map *m = &rec->metrics;
	const char *id = text_of(rec->id), *path = rs_jsonview_str(r, "path", "");
	const char *commit = text_of(rec->commit);
	const struct verdict_kind *k = run_verdict(r);
	int err;

	err = k ? rs_buf_printf(out, "<tr class=\"v-%s\" data-verdict=\"%s\">", k->cls, k->cls)
		: rs_buf_puts(out, "<tr>");
	if (!err)
		err = rs_buf_puts(out, "<td><a href=\"");
	if (err)
		return err;
	err = rs_html_link(out, run_url, id, path, commit);
	if (err)
		return err;
	err = esc_between(out, "\">", id, "</a></td><td>");
	if (err)
		return err;
	err = esc_between(out, "", text_of(rec->recorded_at), "</td><td>");
	if (err)
		return err;
	err = esc_between(out, "", text_of(rec->branch), "</td><td>");
	if (err)
		return err;
	err = esc_between(out, "", text_of(rec->trigger), "</td>");
	if (err)
		return err;
	err = commit_cell(out, commit, id, path, links);
	if (err)
		return err;
	err = verdict_cells(out, r, links);
	if (err)
		return err;
	err = num_cell(out, m, "duration");
	if (err)
		return err;
	err = num_cell(out, m, "cpu_time");
	if (err)
		return err;
	err = num_cell(out, m, "samples");
	if (err)
		return err;
	err = rs_buf_puts(out, "</tr>\n");
	return err;
}

int rs_html_site_index(struct rs_buf *out, const rs_runrec *const *recs,
		       const json_t *const *runs, size_t n, const char *title,
		       const struct rs_html_links *links)
{
	const char *run_url = links && links->run_url ? links->run_url : "{path}/summary.md";
	int err;

	err = page_head(out, title ? title : "Profiling runs");
	if (err)
		return err;
	err = rs_buf_printf(out, "<p><a href=\"trends.html\">Trend charts</a> · %zu runs. "
			    "Click a column header to sort.</p>\n", n);
	if (!err)
		err = rs_buf_puts(out, "<p class=\"legend\">Verdict: what <code>results check</code> says of "
				  "the run against its baseline window; the change is that of the metric "
				  "it names. \xe2\x96\xb2 regression, \xe2\x96\xbc improvement, = no change, "
				  "~ the machine was slower, \xe2\x88\x85 not comparable, \xe2\x96\xb3 slower "
				  "but accepted. A verdict links to the run's flame graph against its "
				  "baseline.</p>\n");
	if (err)
		return err;
	err = rs_buf_puts(out, "<table class=\"sortable\" id=\"runs\"><thead><tr><th>run</th>"
			  "<th>recorded (UTC)</th><th>branch</th><th>trigger</th><th>commit</th>"
			  "<th>verdict</th><th class=\"n\">change</th>"
			  "<th class=\"n\">duration</th><th class=\"n\">CPU time</th>"
			  "<th class=\"n\">samples</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; !err && i < n; i++)
		err = site_index_row(out, recs[i], runs[i], run_url, links);
	if (err)
		return err;
	err = rs_buf_puts(out, "</tbody></table>\n");
	if (err)
		return err;
	err = rs_buf_puts(out, sort_js);
	if (err)
		return err;
	err = rs_buf_puts(out, "</body></html>\n");
	return err;
}

/* The session's own figures: a stat of the same name does not replace them. */
static int is_session_metric(const char *k)
{
	return !strcmp(k, "duration") || !strcmp(k, "cpu_time") || !strcmp(k, "samples") ||
	       !strcmp(k, "sampled_time");
}

/*
 * A table of name -> value. With `session` (the run's metrics), a stat
 * named like one of the session's metrics is shown as "stats.NAME" with
 * a note, instead of a second, different "cpu_time" on the same page.
 */
static int kv_table(struct rs_buf *out, const struct rs_runrec_map *map, const char *heading,
		    const struct rs_runrec_map *session)
{
	int err;

	if (!map->n)
		return 0;
	err = rs_buf_printf(out, "<h2>%s</h2>\n<table class=\"sortable\"><thead><tr><th>name</th>"
			    "<th class=\"n\">value</th></tr></thead><tbody>\n", heading);
	if (err)
		return err;
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->items[i].name;
		const struct rs_runrec_value *v = &map->items[i].value;
		int shadow = session && is_session_metric(k) && rs_runrec_map_get(session, k);

		err = rs_buf_puts(out, "<tr><td>");
		if (err)
			return err;
		if (shadow) {
			err = rs_buf_puts(out, "stats.");
			if (err)
				return err;
		}
		err = esc(out, k);
		if (err)
			return err;
		if (shadow) {
			err = rs_buf_printf(out, " <span class=\"muted\">(a stat, not the session's %s "
					    "under Metrics; use --metric stats.%s)</span>", k, k);
			if (err)
				return err;
		}
		err = rs_buf_puts(out, "</td>");
		if (err)
			return err;
		if (v->kind != RS_RUNREC_STRING) {
			err = value_cell(out, k, v->d);
			if (err)
				return err;
		} else {
			err = rs_buf_puts(out, "<td>");
			if (err)
				return err;
			err = esc(out, v->s);
			if (err)
				return err;
			err = rs_buf_puts(out, "</td>");
			if (err)
				return err;
		}
		err = rs_buf_puts(out, "</tr>\n");
		if (err)
			return err;
	}
	return rs_buf_puts(out, "</tbody></table>\n");
}

/* One row of the functions table; `dur` is the sampled time shares are of. */
static int function_row(struct rs_buf *out, const struct rs_runrec_function *f, double dur)
{
	const char *cls = f->class_name, *file = f->file;
	double self = f->self, total = f->total, line = (double)f->line;
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT;
	char lt[32];
	int err;

	/* a thread's "line" is its id, new every run: not shown */
	if (!strcmp(file, "<thread>"))
		line = 0;
	if (line > 0)
		snprintf(lt, sizeof(lt), ":%.0f", line);
	else
		lt[0] = 0;
	if (cls && *cls)
		err = esc_between(out, "<tr><td><code>", cls, ".");
	else
		err = rs_buf_puts(out, "<tr><td><code>");
	if (err)
		goto out;
	err = esc_between(out, "", f->function, "</code></td><td>");
	if (err)
		goto out;
	err = esc(out, file);
	if (err)
		goto out;
	err = rs_render_seconds(&a, self);
	if (err)
		goto out;
	err = rs_render_seconds(&b, total);
	if (err)
		goto out;
	err = rs_buf_printf(out, "%s</td><td class=\"n\" data-v=\"%.9g\">%s</td>"
			    "<td class=\"n\" data-v=\"%.9g\">%s</td>"
			    "<td class=\"n\" data-v=\"%.9g\">%.1f%%</td></tr>\n",
			    lt, self, a.ptr, total, b.ptr,
			    dur > 0 ? self / dur : 0,
			    dur > 0 ? self / dur * 100 : 0);
out:
	rs_buf_release(&a);
	rs_buf_release(&b);
	return err;
}

static int functions_table(struct rs_buf *out, const struct rs_runrec_summary *summary)
{
	double dur;
	int err;

	if (!summary || !summary->nfunctions)
		return 0;
	/* shares of the sampled time: the one definition show and compare use */
	dur = summary->sampled_time;
	if (!(dur > 0))
		dur = summary->duration.present ? summary->duration.v : dur;
	err = rs_buf_puts(out, "<h2>Functions</h2>\n<table class=\"sortable\"><thead><tr>"
			  "<th>function</th><th>file:line</th><th class=\"n\">own time</th>"
			  "<th class=\"n\">total time</th><th class=\"n\">own %</th></tr></thead><tbody>\n");
	for (size_t i = 0; !err && i < summary->nfunctions; i++)
		err = function_row(out, &summary->functions[i], dur);
	if (!err)
		err = rs_buf_puts(out, "</tbody></table>\n");
	return err;
}

/* One tree node and its heavy children; bounded depth. */
static int tree_node(struct rs_buf *out, const struct rs_runrec_node *node, double root_total,
		     unsigned depth)
{
	double total = node->total, line = (double)node->line;
	struct rs_buf t = RS_BUF_INIT;
	size_t i, shown = 0;
	int err;

	for (i = 0; i < node->nchildren; i++) {
		double kt = node->children[i].total;

		if (root_total <= 0 || kt / root_total >= TREE_MIN_SHARE)
			shown++;
	}
	if (depth >= TREE_MAX_DEPTH)
		shown = 0;
	err = rs_buf_puts(out, shown ? (depth < 3 ? "<details open><summary>" : "<details><summary>")
				     : "<div class=\"leaf\"><summary>");
	if (err)
		return err;
	err = rs_render_seconds(&t, total);
	if (!err)
		err = rs_buf_printf(out, "%s %.1f%% ", t.ptr,
				    root_total > 0 ? total / root_total * 100 : 0);
	rs_buf_release(&t);
	if (err)
		return err;
	err = esc_between(out, "", node->function, " <span class=\"muted\">");
	if (!err)
		err = esc(out, node->file);
	if (err)
		return err;
	if (line > 0 && strcmp(node->file, "<thread>")) {
		err = rs_buf_printf(out, ":%.0f", line);
		if (err)
			return err;
	}
	err = rs_buf_puts(out, "</span></summary>\n");
	if (err)
		return err;
	for (i = 0; shown && i < node->nchildren; i++) {
		const struct rs_runrec_node *k = &node->children[i];

		if (root_total > 0 && k->total / root_total < TREE_MIN_SHARE)
			continue;
		err = tree_node(out, k, root_total, depth + 1);
		if (err)
			return err;
	}
	return rs_buf_puts(out, shown ? "</details>\n" : "</div>\n");
}

/* The run page's table of what the run is: commit, branch, ..., machine, target. */
static int run_page_facts(struct rs_buf *out, const rs_runrec *run, const char *path,
			  const struct rs_html_links *links)
{
	const char *rows[][2] = {
		{ "branch", run->branch }, { "trigger", run->trigger },
		{ "recorded", run->recorded_at }, { "message", run->message },
	};
	const char *id = run->id ? run->id : "run";
	struct rs_buf th = RS_BUF_INIT;
	int err;

	err = rs_buf_puts(out, "<tr><th>commit</th>");
	if (!err)
		err = commit_cell(out, text_of(run->commit), id, text_of(path), links);
	if (!err)
		err = rs_buf_puts(out, "</tr>\n");
	for (size_t i = 0; !err && i < sizeof(rows) / sizeof(rows[0]); i++) {
		rs_buf_clear(&th);
		err = rs_buf_printf(&th, "<tr><th>%s</th><td>", rows[i][0]);
		if (!err)
			err = esc_between(out, th.ptr, text_of(rows[i][1]), "</td></tr>\n");
	}
	rs_buf_release(&th);
	if (err)
		return err;
	err = esc_between(out, "<tr><th>machine</th><td>", text_of(run->machine.hostname), " ");
	if (err)
		return err;
	err = esc_between(out, "", text_of(run->machine.runner), " ");
	if (err)
		return err;
	err = esc_between(out, "", text_of(run->machine.cpu_model), "</td></tr>\n");
	if (err)
		return err;
	return esc_between(out, "<tr><th>target</th><td><code>",
			   text_of(run->summary ? run->summary->target : NULL),
			   "</code></td></tr></table>\n");
}

/* The call tree of summary.tree as nested <details>, if the run has one. */
static int run_page_tree(struct rs_buf *out, const struct rs_runrec_summary *summary)
{
	const struct rs_runrec_node *tree = summary ? &summary->tree : NULL;
	double root;
	int err;

	if (!tree)
		return 0;
	root = tree->total;
	err = rs_buf_puts(out, "<h2>Call tree</h2>\n<p class=\"muted\">Paths below 0.5% of the "
			  "time are left out; click a line to fold or unfold it.</p>\n<div class=\"tree\">\n");
	if (err)
		return err;
	err = tree_node(out, tree, root, 0);
	if (err)
		return err;
	err = rs_buf_puts(out, "</div>\n");
	return err;
}

/*
 * The run's check verdict (its "check", when the site judged it) and the
 * link to its flame graph: against the check's baseline run, or the run
 * before it when it has none.
 */
static int run_page_verdict(struct rs_buf *out, const json_t *run, const char *diff_page)
{
	const struct verdict_kind *k = run_verdict(run);
	const json_t *c = json_object_get(run, "check");
	const char *base = rs_jsonview_str(c, "baseline", NULL);
	int err = 0;

	if (k) {
		err = rs_buf_printf(out, "<p class=\"verdict v-%s\"><b>Check verdict:</b> %s ", k->cls,
				    k->symbol);
		if (!err)
			err = esc(out, rs_jsonview_str(c, "label", k->cls));
		if (!err)
			err = esc_between(out, " &mdash; ", rs_jsonview_str(c, "text", ""), "</p>\n");
	}
	if (err || !diff_page)
		return err;
	err = rs_buf_puts(out, "<p><a href=\"");
	if (!err)
		err = link_value(out, diff_page, 1);
	if (!err)
		err = rs_buf_puts(out, "\">Differential flame graph</a>");
	if (!err && base)
		err = esc_between(out, " against the check's baseline run <code>", base, "</code>.</p>\n");
	else if (!err)
		err = rs_buf_puts(out, " against the run before it.</p>\n");
	return err;
}

/*
 * The flame graph of summary.tree (the run against itself: its paths
 * with their times), if the run has a tree; with its script.
 */
static int run_page_flame(struct rs_buf *out, const rs_runrec *run)
{
	struct rs_deep_diff *d = NULL;
	int err;

	err = rs_deep_diff_trees(&d, run->summary, run->summary);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (err)
		return err;
	err = rs_buf_puts(out, "<h2>Flame graph</h2>\n");
	if (!err)
		err = rs_flame_graph(out, d, RS_FLAME_RUN, "flame graph of the run");
	if (!err)
		err = rs_flame_script(out);
	rs_deep_diff_free(d);
	return err;
}

int rs_html_run_page(struct rs_buf *out, const rs_runrec *rec, const json_t *run,
		     const struct rs_html_links *links)
{
	const struct rs_runrec_summary *summary = rec->summary;
	const char *diff_page = rs_jsonview_str(run, "diff_page", NULL);
	int err;

	err = page_head(out, rec->id ? rec->id : "run");
	if (err)
		return err;
	err = rs_buf_puts(out, "<p><a href=\"../index.html\">All runs</a> · "
			  "<a href=\"../trends.html\">Trends</a></p>\n<table>");
	if (err)
		return err;
	err = run_page_facts(out, rec, rs_jsonview_str(run, "path", NULL), links);
	if (err)
		return err;
	err = run_page_verdict(out, run, diff_page);
	if (err)
		return err;
	err = kv_table(out, &rec->metrics, "Metrics", NULL);
	if (err)
		return err;
	err = kv_table(out, &rec->stats, "Stats", &rec->metrics);
	if (err)
		return err;
	err = kv_table(out, &rec->meta, "Metadata", NULL);
	if (err)
		return err;
	err = rs_html_run_charts(out, rec, run);
	if (err)
		return err;
	err = run_page_flame(out, rec);
	if (err)
		return err;
	err = functions_table(out, summary);
	if (err)
		return err;
	err = run_page_tree(out, summary);
	if (err)
		return err;
	err = rs_buf_puts(out, sort_js);
	if (err)
		return err;
	return rs_buf_puts(out, "</body></html>\n");
}
