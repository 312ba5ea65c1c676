/*
 * Flame graphs (the contract is in flame.h).
 *
 * Markup: the frames are absolutely placed children of one div.fg, in
 * pre-order (a frame, then its callees heaviest first), so that a
 * frame's subtree is the run of frames after it that are deeper. Each
 * carries its place as data: data-x and data-w (left edge and width as
 * shares of the graph), data-d (row), data-p (the emission index of its
 * caller, -1 for a root), data-t (head total time, seconds) and
 * data-name (the function, for the zoom path). Zooming into frame z
 * maps a frame of its subtree to left (x - x_z) / w_z and width
 * w / w_z, draws z's callers at full width and hides the rest; nothing
 * else is recomputed. The script takes every string from the markup as
 * text (textContent, getAttribute) and writes none as HTML, so a
 * function named "</script><img onerror=...>" is only ever text.
 */
#include "analysis/flame.h"
#include "analysis/render.h"
#include "results/error.h"
#include "results/escape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows drawn at most; deeper frames are left out (bounded recursion). */
#define FLAME_DEPTH RS_DEEP_TREE_DEPTH
#define FLAME_ROW RS_FLAME_ROW

static const char flame_css[] =
	".fgbar{margin:8px 0 4px 0;font-size:14px}.fgbar input{font:inherit;width:22em;padding:2px 4px}"
	".fgbar .fgm{margin-left:10px;font-weight:600}.fgbar button{margin-left:10px}"
	".fgpath{margin:4px 0;font:12px/18px ui-monospace,monospace;min-height:20px;overflow-wrap:anywhere}"
	".fgpath button{font:inherit;border:1px solid #d0d7de;background:#f6f8fa;border-radius:4px;"
	"padding:0 5px;cursor:pointer}"
	".fg{position:relative;width:100%;border:1px solid #d0d7de;overflow:hidden}"
	/* no padding, one border: a tiny frame stays tiny instead of
	 * growing to its padding and borders */
	".f{position:absolute;height:18px;box-sizing:border-box;border-right:1px solid #fff;"
	"border-bottom:1px solid #fff;overflow:hidden;white-space:nowrap;cursor:pointer;"
	"font:11px/16px ui-monospace,monospace;text-indent:2px;color:#1f2328}"
	".f:hover{outline:1px solid #1f2328;outline-offset:-1px}"
	".f:focus{outline:3px solid #0550ae;outline-offset:-3px;z-index:2}"
	".f.za{opacity:.8}"
	".f.match{background:rgb(130,80,223)!important;color:#fff}"
	".key span{display:inline-block;width:14px;height:10px;margin:0 4px 0 12px}";

static const char flame_js[] =
	"<script>\n"
	"(function () {\n"
	"'use strict';\n"
	"var graphs = [];\n"
	"function pct(v) { return (v * 100).toFixed(1) + '%'; }\n"
	"function setup(g) {\n"
	" var fg = g.querySelector('.fg'), q = g.querySelector('.fgq'), msg = g.querySelector('.fgm');\n"
	" var path = g.querySelector('.fgpath'), reset = g.querySelector('.fgreset');\n"
	" var fr = [], x = [], w = [], d = [], p = [], t = [], n, k;\n"
	" var total = parseFloat(fg.getAttribute('data-total')) || 0, zoom = -1, cur = 0;\n"
	" for (k = 0; k < fg.children.length; k++)\n"
	"  if (fg.children[k].classList.contains('f')) fr.push(fg.children[k]);\n"
	" n = fr.length;\n"
	" fr.forEach(function (e, i) {\n"
	"  x[i] = parseFloat(e.getAttribute('data-x')); w[i] = parseFloat(e.getAttribute('data-w'));\n"
	"  d[i] = parseInt(e.getAttribute('data-d'), 10); p[i] = parseInt(e.getAttribute('data-p'), 10);\n"
	"  t[i] = parseFloat(e.getAttribute('data-t')); e.setAttribute('data-i', String(i));\n"
	"  e.tabIndex = i === 0 ? 0 : -1;\n"
	" });\n"
	" function under(i, z) { for (; i >= 0; i = p[i]) if (i === z) return true; return false; }\n"
	" function shown(i) { return fr[i].style.display !== 'none'; }\n"
	" function place(i, left, width) {\n"
	"  var s = fr[i].style;\n"
	"  s.display = ''; s.left = (left * 100) + '%'; s.width = (width * 100) + '%';\n"
	" }\n"
	" function focus(i) {\n"
	"  if (i < 0 || i >= n || !shown(i)) return;\n"
	"  fr[cur].tabIndex = -1; cur = i; fr[i].tabIndex = 0; fr[i].focus();\n"
	" }\n"
	" function crumb(text, to, i) {\n"
	"  var b = document.createElement('button');\n"
	"  b.type = 'button'; b.textContent = text;\n"
	"  b.addEventListener('click', function () { zoomTo(to); focus(i); });\n"
	"  path.appendChild(b);\n"
	" }\n"
	" function zoomTo(z) {\n"
	"  var x0 = z < 0 ? 0 : x[z], w0 = z < 0 ? 1 : w[z], chain = [], i;\n"
	"  zoom = z;\n"
	"  for (i = 0; i < n; i++) {\n"
	"   fr[i].classList.remove('za');\n"
	"   if (z < 0 || under(i, z)) place(i, (x[i] - x0) / w0, w[i] / w0);\n"
	"   else if (under(z, i)) { place(i, 0, 1); fr[i].classList.add('za'); }\n"
	"   else fr[i].style.display = 'none';\n"
	"  }\n"
	"  fg.setAttribute('data-zoom', z < 0 ? '' : String(z));\n"
	"  for (i = z; i >= 0; i = p[i]) chain.unshift(i);\n"
	"  path.textContent = '';\n"
	"  crumb('all', -1, chain.length ? chain[0] : cur);\n"
	"  chain.forEach(function (c) {\n"
	"   path.appendChild(document.createTextNode(' \\u203a '));\n"
	"   crumb(fr[c].getAttribute('data-name'), p[c] < 0 && c !== z ? -1 : c, c);\n"
	"  });\n"
	"  reset.disabled = z < 0;\n"
	"  if (!shown(cur)) { fr[cur].tabIndex = -1; cur = z < 0 ? 0 : z; fr[cur].tabIndex = 0; }\n"
	" }\n"
	" function pick(i) {\n"
	"  zoomTo(p[i] < 0 && zoom >= 0 ? -1 : i);\n"
	"  focus(i);\n"
	" }\n"
	" function search() {\n"
	"  var s = q.value.trim().toLowerCase(), hit = [], count = 0, sum = 0, i, a;\n"
	"  for (i = 0; i < n; i++) {\n"
	"   hit[i] = s !== '' && fr[i].textContent.toLowerCase().indexOf(s) >= 0;\n"
	"   fr[i].classList.toggle('match', hit[i]);\n"
	"   if (!hit[i]) continue;\n"
	"   count++;\n"
	"   for (a = p[i]; a >= 0 && !hit[a]; a = p[a]);\n"
	"   if (a < 0) sum += t[i];\n"
	"  }\n"
	"  msg.textContent = s === '' ? '' : count + (count === 1 ? ' frame matches, ' : ' frames match, ') +\n"
	"   pct(total > 0 ? sum / total : 0) + ' of the time';\n"
	" }\n"
	" fg.addEventListener('click', function (ev) {\n"
	"  var e = ev.target.closest ? ev.target.closest('.f') : null;\n"
	"  if (e && e.parentNode === fg) pick(parseInt(e.getAttribute('data-i'), 10));\n"
	" });\n"
	" fg.addEventListener('keydown', function (ev) {\n"
	"  var i = parseInt(ev.target.getAttribute('data-i'), 10), j = -1, c;\n"
	"  if (isNaN(i)) return;\n"
	"  if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); pick(i); return; }\n"
	"  if (ev.key === 'ArrowUp') j = p[i];\n"
	"  else if (ev.key === 'ArrowDown') { for (c = i + 1; c < n && d[c] > d[i]; c++) if (p[c] === i && shown(c)) { j = c; break; } }\n"
	"  else if (ev.key === 'ArrowRight') { for (c = i + 1; c < n; c++) if (d[c] === d[i] && shown(c)) { j = c; break; } }\n"
	"  else if (ev.key === 'ArrowLeft') { for (c = i - 1; c >= 0; c--) if (d[c] === d[i] && shown(c)) { j = c; break; } }\n"
	"  else if (ev.key === 'Home') j = zoom < 0 ? 0 : zoom;\n"
	"  else return;\n"
	"  ev.preventDefault();\n"
	"  focus(j);\n"
	" });\n"
	" q.addEventListener('input', search);\n"
	" reset.addEventListener('click', function () { zoomTo(-1); });\n"
	" zoomTo(-1);\n"
	" search();\n"
	" return { el: g, q: q, escape: function (inSearch) {\n"
	"  var had = document.activeElement;\n"
	"  if (inSearch) { q.value = ''; search(); }\n"
	"  zoomTo(-1);\n"
	"  if (had && had.parentNode === fg) focus(parseInt(had.getAttribute('data-i'), 10));\n"
	" } };\n"
	"}\n"
	"document.querySelectorAll('.fgw').forEach(function (g) {\n"
	" if (g.querySelector('.fg .f')) graphs.push(setup(g));\n"
	"});\n"
	"document.addEventListener('keydown', function (ev) {\n"
	" var a = document.activeElement, tag = ev.target && ev.target.tagName || '', g = graphs[0], i;\n"
	" for (i = 0; i < graphs.length; i++) if (graphs[i].el.contains(a)) g = graphs[i];\n"
	" if (!g) return;\n"
	" if (ev.key === '/' && !/^(INPUT|TEXTAREA|SELECT)$/.test(tag) && !(ev.target && ev.target.isContentEditable)) {\n"
	"  ev.preventDefault(); g.q.focus(); g.q.select();\n"
	" } else if (ev.key === 'Escape') {\n"
	"  g.escape(ev.target === g.q);\n"
	" }\n"
	"});\n"
	"})();\n"
	"</script>\n";

int rs_flame_css(struct rs_buf *out)
{
	return rs_buf_puts(out, flame_css);
}

int rs_flame_script(struct rs_buf *out)
{
	return rs_buf_puts(out, flame_js);
}

/* One graph being drawn: the tree over the paths, the head's time. */
struct flame {
	const struct rs_deep_diff *d;
	enum rs_flame_kind kind;
	size_t *first, *next;   /* first child, next sibling; (size_t)-1 none */
	double root;            /* the head's time */
	long emitted;           /* frames written so far (the next one's index) */
	struct rs_buf scratch;
};

/*
 * A path of the head with no base figure: new, unless the figures come
 * from pruned trees and it is small enough to have been cut from the
 * base's tree (twice the cut: figures move that much between runs).
 */
static int is_new(const struct flame *fl, const struct rs_path_delta *p)
{
	return fl->kind == RS_FLAME_DIFF && p->base_total <= 0 &&
	       p->head_total >= 2 * fl->d->unknown_below * fl->root;
}

/* A path's change; 0 when one side was only cut from a pruned tree. */
static double flame_change(const struct flame *fl, const struct rs_path_delta *p)
{
	if (fl->d->unknown_below > 0 && (p->head_total <= 0 || (p->base_total <= 0 && !is_new(fl, p))))
		return 0;
	return p->head_total - p->base_total;
}

/*
 * The change in seconds of path `i` not passed on to the frames drawn
 * below it (its own time and calls too small to draw), as a share of the
 * base run: callers of a changed function stay grey, as in a differential
 * flame graph of own time.
 */
static double flame_delta(const struct flame *fl, size_t i)
{
	const struct rs_path_delta *p = &fl->d->paths[i];
	double delta = flame_change(fl, p);

	for (size_t c = fl->first[i]; c != (size_t)-1; c = fl->next[c])
		delta -= flame_change(fl, &fl->d->paths[c]);
	/* pruned trees miss small children on one side: a frame whose total
	 * grew is not shown as shrinking (nor the reverse) for that */
	if (fl->d->unknown_below > 0 && delta * flame_change(fl, p) < 0)
		delta = 0;
	return fl->d->base_time > 0 ? delta / fl->d->base_time : 0;
}

/* A frame's colour and class ("new", "grew", "shrank" or none). */
static const char *frame_colour(const struct flame *fl, const struct rs_path_delta *p,
				double delta, int rgb[3])
{
	double k;

	if (fl->kind == RS_FLAME_RUN) {
		/* how much of the frame's time is its own body */
		k = p->head_total > 0 ? fmin(1.0, fmax(0.0, p->head_self / p->head_total)) : 0;
		rgb[0] = 252 - (int)(20 * k), rgb[1] = 229 - (int)(123 * k), rgb[2] = 180 - (int)(140 * k);
		return "";
	}
	k = fmin(1.0, fabs(delta) / 0.02);
	if (is_new(fl, p)) {              /* new in the head: full red */
		rgb[0] = 207, rgb[1] = 34, rgb[2] = 46;
		return " new";
	}
	if (delta > 0) {                  /* grew: towards red */
		rgb[0] = 234 - (int)(27 * k), rgb[1] = 234 - (int)(200 * k), rgb[2] = 234 - (int)(188 * k);
	} else {                          /* shrank: towards blue */
		rgb[0] = 234 - (int)(225 * k), rgb[1] = 234 - (int)(129 * k), rgb[2] = 234 - (int)(16 * k);
	}
	return delta > 0.001 ? " grew" : delta < -0.001 ? " shrank" : "";
}

/*
 * The function and the file of a path's last frame, "name (file)", cut
 * where the path says the name ends (names and files may hold " (" and
 * ")" themselves); the file is "" when the label has none.
 */
static void frame_parts(const struct rs_path_delta *p, const char **name, size_t *name_len,
			const char **file, size_t *file_len)
{
	const char *label = rs_deep_last_label(p->path);
	size_t len = strlen(label), n = p->name_len;

	*name = label;
	*name_len = len;
	*file = "";
	*file_len = 0;
	if (n + 3 <= len && label[n] == ' ' && label[n + 1] == '(' && label[len - 1] == ')') {
		*name_len = n;
		*file = label + n + 2;
		*file_len = len - n - 3;
	}
}

/* `len` bytes of `s` through the attribute escaper (via the scratch buffer). */
static int attr_part(struct rs_buf *out, struct rs_buf *scratch, const char *s, size_t len)
{
	int err;

	rs_buf_clear(scratch);
	err = rs_buf_put(scratch, s, len);
	if (err)
		return err;
	return rs_escape_html_attr(out, scratch->ptr ? scratch->ptr : "");
}

/*
 * The frame's figures, for its accessible name (aria-label) and its
 * tooltip (title, which also holds the whole path): total and own time
 * and share of the run; for two runs, base -> head and the change here.
 */
static int frame_figures(struct rs_buf *out, const struct flame *fl, const struct rs_path_delta *p,
			 double delta)
{
	int err;

	err = rs_render_seconds_after(out, "total ", p->head_total);
	if (!err)
		err = rs_buf_printf(out, " (%.1f%% of the run)", fl->root > 0 ? p->head_total / fl->root * 100 : 0);
	if (!err)
		err = rs_render_seconds_after(out, ", own ", p->head_self);
	if (err || fl->kind == RS_FLAME_RUN)
		return err;
	err = rs_buf_puts(out, "; base ");
	if (!err)
		err = p->base_total > 0 ? rs_render_seconds(out, p->base_total)
					: rs_buf_puts(out, is_new(fl, p) ? "new" : "below the stored tree's cut");
	if (!err)
		err = rs_render_seconds_after(out, " &#8594; head ", p->head_total);
	if (!err)
		err = rs_buf_printf(out, " (%+.1f%% of the base run here, not below)", delta * 100);
	return err;
}

/* The frame's attributes after its style: data-name, aria-label, title. */
static int frame_names(struct rs_buf *out, struct flame *fl, const struct rs_path_delta *p,
		       double delta)
{
	const char *name, *file;
	size_t name_len, file_len;
	int err;

	frame_parts(p, &name, &name_len, &file, &file_len);
	err = rs_buf_puts(out, " data-name=\"");
	if (!err)
		err = attr_part(out, &fl->scratch, name, name_len);
	if (!err)
		err = rs_buf_puts(out, "\" aria-label=\"");
	if (!err)
		err = attr_part(out, &fl->scratch, name, name_len);
	if (!err && file_len) {
		err = rs_buf_puts(out, " in ");
		if (!err)
			err = attr_part(out, &fl->scratch, file, file_len);
	}
	if (!err)
		err = rs_buf_puts(out, ": ");
	if (!err)
		err = frame_figures(out, fl, p, delta);
	if (!err)
		err = rs_buf_puts(out, "\" title=\"");
	if (!err)
		err = rs_escape_html_attr(out, p->path);
	if (!err)
		err = rs_buf_puts(out, "&#10;");
	if (!err)
		err = frame_figures(out, fl, p, delta);
	if (!err)
		err = rs_buf_puts(out, "\">");
	return err;
}

/* Frame `i` at `left` (a share of the graph) in row `depth`, then its callees. */
static int flame_node(struct rs_buf *out, struct flame *fl, size_t i, double left, size_t depth,
		      long parent)
{
	const struct rs_path_delta *p = &fl->d->paths[i];
	double w = p->head_total / fl->root, delta;
	long self_index = fl->emitted;
	const char *cls;
	int rgb[3];
	int err;

	if (depth >= FLAME_DEPTH || w <= 0)
		return 0;
	delta = fl->kind == RS_FLAME_DIFF ? flame_delta(fl, i) : 0;
	cls = frame_colour(fl, p, delta, rgb);
	err = rs_buf_printf(out, "<div class=\"f%s\" role=\"treeitem\" aria-level=\"%zu\" "
				 "data-x=\"%.6f\" data-w=\"%.6f\" data-d=\"%zu\" data-p=\"%ld\" data-t=\"%.6f\" "
				 "style=\"left:%.4f%%;width:%.4f%%;top:%zupx;background:rgb(%d,%d,%d)\"",
			    cls, depth + 1, left, w, depth, parent, p->head_total,
			    left * 100, w * 100, depth * FLAME_ROW, rgb[0], rgb[1], rgb[2]);
	if (err)
		return err;
	fl->emitted++;
	err = frame_names(out, fl, p, delta);
	if (err)
		return err;
	err = rs_escape_html_text(out, rs_deep_last_label(p->path));
	if (err)
		return err;
	err = rs_buf_puts(out, "</div>\n");
	for (size_t c = fl->first[i]; !err && c != (size_t)-1; c = fl->next[c]) {
		err = flame_node(out, fl, c, left, depth + 1, self_index);
		left += fl->d->paths[c].head_total / fl->root;
	}
	return err;
}

/* The controls above the graph: the search box, what it matched, the zoom path. */
static int graph_controls(struct rs_buf *out)
{
	return rs_buf_puts(out,
		"<div class=\"fgbar\"><label>Search <input type=\"search\" class=\"fgq\" "
		"placeholder=\"part of a function or file name\" autocomplete=\"off\" "
		"aria-describedby=\"fgqhow\"></label>"
		"<span class=\"fgm\" role=\"status\" aria-live=\"polite\"></span>"
		"<button type=\"button\" class=\"fgreset\">reset zoom</button></div>\n"
		"<p id=\"fgqhow\" class=\"muted\">The search matches plain text anywhere in a frame's "
		"function and file name, in any case (not a regular expression). Click a frame to zoom "
		"into it; the zoom path below, a click on the root frame or Escape goes back. Keys: Tab "
		"to the graph, arrows move between frames, Enter zooms, Escape resets, / searches.</p>\n"
		"<nav class=\"fgpath\" aria-label=\"zoom path\"></nav>\n");
}

int rs_flame_graph(struct rs_buf *out, const struct rs_deep_diff *d, enum rs_flame_kind kind,
		   const char *label)
{
	struct flame fl = { d, kind, NULL, NULL, d->head_time, 0, RS_BUF_INIT };
	size_t *order = NULL, i, depth = 0;
	double left = 0;
	int err;

	if (!(fl.root > 0))
		return 0;
	err = rs_deep_tree(d, 0, &fl.first, &fl.next, &order);
	if (err)
		goto out;
	for (i = 0; i < d->n_paths; i++)
		if (d->paths[i].head_total > 0 && d->paths[i].depth > depth)
			depth = d->paths[i].depth;
	if (depth > FLAME_DEPTH)
		depth = FLAME_DEPTH;
	err = rs_buf_puts(out, "<div class=\"fgw\">\n");
	if (!err && kind == RS_FLAME_RUN)
		err = rs_buf_puts(out, "<p class=\"muted key\">The call tree as an icicle: each frame as "
				  "wide as its total time, its callees below it, the heaviest first; the more of "
				  "its time a frame spends in its own body, the deeper its orange"
				  "<span style=\"background:rgb(252,229,180)\"></span>passes its time on"
				  "<span style=\"background:rgb(232,106,40)\"></span>runs itself"
				  "<span style=\"background:rgb(130,80,223)\"></span>found by the search.</p>\n");
	if (!err)
		err = graph_controls(out);
	if (!err)
		err = rs_buf_puts(out, "<div class=\"fg\" role=\"tree\" aria-label=\"");
	if (!err)
		err = rs_escape_html_attr(out, label ? label : "flame graph");
	if (!err)
		err = rs_buf_printf(out, "\" data-total=\"%.6f\" style=\"height:%zupx\">\n", fl.root,
				    depth * FLAME_ROW + 2);
	for (i = 0; !err && i < d->n_paths; i++) {
		const char *p = d->paths[order[i]].path;

		if (strstr(p, " > "))
			continue;
		/* several roots (threads) side by side, widths shares of the run */
		err = flame_node(out, &fl, order[i], left, 0, -1);
		left += d->paths[order[i]].head_total / fl.root;
	}
	if (!err)
		err = rs_buf_puts(out, "</div>\n</div>\n");
out:
	rs_buf_release(&fl.scratch);
	free(fl.first);
	free(fl.next);
	free(order);
	return err;
}

/* The differential page up to the graph: title, style and key. */
static int flame_page_head(struct rs_buf *out, const struct rs_deep_diff *d, const char *title)
{
	int err;

	err = rs_buf_puts(out, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
	if (!err)
		err = rs_escape_html_text(out, title);
	if (!err)
		err = rs_buf_puts(out, "</title><style>"
			"body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;"
			"color:#1f2328}.muted{color:#57606a}");
	if (!err)
		err = rs_flame_css(out);
	if (!err)
		err = rs_buf_puts(out, "</style></head><body>\n<h1>");
	if (!err)
		err = rs_escape_html_text(out, title);
	if (!err)
		err = rs_buf_printf(out, "</h1>\n<p class=\"key\">The head run's call paths (at least %g%% of a run), ",
				    d->unknown_below > 0 ? d->unknown_below * 100 : 0.1);
	if (err)
		return err;
	return rs_buf_puts(out, ""
			  "widths by the head's time, colour by the change in each frame's time that is not in the frames below it "
			  "(as a share of the base run; paths new in the head in full red):"
			  "<span style=\"background:rgb(207,34,46)\"></span>new"
			  "<span style=\"background:rgb(214,71,104)\"></span>grew"
			  "<span style=\"background:rgb(234,234,234)\"></span>same"
			  "<span style=\"background:rgb(9,105,218)\"></span>shrank"
			  "<span style=\"background:rgb(130,80,223)\"></span>found by the search. "
			  "Hover a frame for its figures.</p>\n");
}

int rs_deep_flame_html(struct rs_buf *out, const struct rs_deep_diff *d, const char *title)
{
	int err;

	if (!title)
		title = "differential flame graph";
	err = flame_page_head(out, d, title);
	if (!err)
		err = rs_flame_graph(out, d, RS_FLAME_DIFF, title);
	if (!err)
		err = rs_flame_script(out);
	if (!err)
		err = rs_buf_puts(out, "</body></html>\n");
	return err;
}
