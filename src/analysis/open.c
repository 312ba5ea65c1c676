/*
 * The single-run call tree page of `results open` (see open.h).
 */
#include "analysis/open.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/html.h"
#include "analysis/render.h"
#include "results/error.h"
#include "results/escape.h"

#define OPEN_MAX_DEPTH 64      /* deeper frames are not drawn (bounded recursion) */
#define OPEN_OPEN_DEPTH 2      /* levels unfolded when the page opens, */
#define OPEN_OPEN_SHARE 0.20   /* and below them frames of this share of the run */
#define OPEN_HOT_SHARE 0.10    /* frames highlighted from this share of the run */

struct tree {
	const struct rs_deep_diff *d;
	size_t *first, *next;  /* first child, next sibling; (size_t)-1 none */
	double root;           /* the run's time */
};

static const char page_css[] =
	"body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;"
	"color:#1f2328;background:#fff}h1{font-size:1.4em}.muted{color:#57606a}"
	".tree{font-family:ui-monospace,monospace;font-size:13px;line-height:1.6}"
	".tree details,.tree .leaf{margin-left:18px}.tree>details,.tree>.leaf{margin-left:0}"
	".tree summary{cursor:pointer;white-space:nowrap}.tree .leaf{white-space:nowrap;padding-left:14px}"
	".t{display:inline-block;min-width:6.5em;text-align:right;font-variant-numeric:tabular-nums}"
	".o{display:inline-block;min-width:6.5em;text-align:right;color:#57606a;font-variant-numeric:tabular-nums}"
	".p{display:inline-block;min-width:4em;text-align:right;color:#57606a}"
	".n{margin-left:10px;font-weight:600}.hot>.t,.hot>summary>.t,.hot>.n,.hot>summary>.n{color:#cf222e}"
	"button{margin-right:8px}";

/* Expand or fold every frame. */
static const char page_js[] =
	"<script>\n"
	"function rsFold(open){document.querySelectorAll('.tree details').forEach("
	"function(d){d.open=open;});}\n"
	"document.getElementById('expand').addEventListener('click',function(){rsFold(true);});\n"
	"document.getElementById('collapse').addEventListener('click',function(){rsFold(false);});\n"
	"</script>\n";

static int node_line(struct rs_buf *out, const struct tree *t, const struct rs_path_delta *p)
{
	const char *label = rs_deep_last_label(p->path), *paren = strrchr(label, '(');
	int has_file = paren && paren > label && paren[-1] == ' ';
	struct rs_buf name = RS_BUF_INIT;
	int err;

	if (has_file)
		err = rs_buf_put(&name, label, (size_t)(paren - 1 - label));
	else
		err = rs_buf_puts(&name, label);
	if (err)
		goto out;
	err = rs_buf_puts(out, "<span class=\"t\" title=\"total\">");
	if (err)
		goto out;
	err = rs_render_seconds(out, p->head_total);
	if (err)
		goto out;
	err = rs_buf_puts(out, "</span><span class=\"o\" title=\"own\">");
	if (err)
		goto out;
	err = rs_render_seconds(out, p->head_self);
	if (err)
		goto out;
	err = rs_buf_printf(out, "</span><span class=\"p\">%.1f%%</span><span class=\"n\">",
			    t->root > 0 ? p->head_total / t->root * 100 : 0);
	if (err)
		goto out;
	err = rs_escape_html_text(out, name.ptr ? name.ptr : "");
	if (err)
		goto out;
	err = rs_buf_puts(out, "</span> <span class=\"muted\">");
	if (!err && has_file)
		err = rs_escape_html_text(out, paren);
	if (!err)
		err = rs_buf_puts(out, "</span>");
out:
	rs_buf_release(&name);
	return err;
}

static int node(struct rs_buf *out, const struct tree *t, size_t i, size_t depth)
{
	const struct rs_path_delta *p = &t->d->paths[i];
	int hot = t->root > 0 && p->head_total >= OPEN_HOT_SHARE * t->root;
	int kids = t->first[i] != (size_t)-1 && depth + 1 < OPEN_MAX_DEPTH;
	size_t c;
	int err;

	if (!kids) {
		err = rs_buf_printf(out, "<div class=\"leaf%s\" data-t=\"%.6f\">", hot ? " hot" : "",
				    p->head_total);
		if (err)
			return err;
		err = node_line(out, t, p);
		if (err)
			return err;
		return rs_buf_puts(out, "</div>\n");
	}
	err = rs_buf_printf(out, "<details%s data-t=\"%.6f\"%s><summary>", hot ? " class=\"hot\"" : "",
			    p->head_total, depth < OPEN_OPEN_DEPTH ||
			    (t->root > 0 && p->head_total >= OPEN_OPEN_SHARE * t->root) ? " open" : "");
	if (err)
		return err;
	err = node_line(out, t, p);
	if (err)
		return err;
	err = rs_buf_puts(out, "</summary>\n");
	if (err)
		return err;
	for (c = t->first[i]; c != (size_t)-1; c = t->next[c]) {
		err = node(out, t, c, depth + 1);
		if (err)
			return err;
	}
	return rs_buf_puts(out, "</details>\n");
}

static int render(struct rs_buf *out, const struct rs_deep_diff *d, const char *title,
		  double min_share, const rs_runrec *rec, const json_t *run)
{
	struct tree t = { d, NULL, NULL, d->head_time };
	size_t *order = NULL, i;
	int err;

	err = rs_deep_tree(d, 1, &t.first, &t.next, &order);
	if (err)
		goto out;
	err = rs_buf_puts(out, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>");
	if (err)
		goto out;
	err = rs_escape_html_text(out, title);
	if (err)
		goto out;
	err = rs_buf_printf(out, "</title><style>%s", page_css);
	if (!err)
		err = rs_flame_css(out);
	if (!err)
		err = rs_buf_puts(out, "</style></head><body>\n<h1>");
	if (err)
		goto out;
	err = rs_escape_html_text(out, title);
	if (err)
		goto out;
	err = rs_buf_puts(out, "</h1>\n");
	/* the run's timelines (phases, the process tree, logged stats) above the tree */
	if (!err && rec)
		err = rs_html_run_charts(out, rec, run);
	if (!err)
		err = rs_buf_puts(out, "<h2>Flame graph</h2>\n");
	if (!err)
		err = rs_flame_graph(out, d, RS_FLAME_RUN, "flame graph of the session");
	if (!err)
		err = rs_buf_puts(out, "<h2>Call tree</h2>\n<p class=\"muted\">Call tree of the whole session: ");
	if (err)
		goto out;
	err = rs_render_seconds(out, d->head_time);
	if (err)
		goto out;
	err = rs_buf_printf(out, " sampled. Each line: total time (the frame and what it calls), own "
			    "time (the frame itself executing), share of the run, function and file; "
			    "children sorted by total time, frames below %g%% of the run left out, "
			    "frames of %.0f%% or more in red. Click a line to unfold or fold it.</p>\n"
			    "<p><button id=\"expand\" type=\"button\">expand all</button>"
			    "<button id=\"collapse\" type=\"button\">collapse all</button></p>\n",
			    min_share * 100, OPEN_HOT_SHARE * 100);
	if (!err)
		err = rs_buf_puts(out, "<div class=\"tree\">\n");
	for (i = 0; !err && i < d->n_paths; i++) {
		const struct rs_path_delta *p = &d->paths[order[i]];

		if (strstr(p->path, " > ") || p->head_total <= 0)
			continue;
		err = node(out, &t, order[i], 0);
	}
	if (err)
		goto out;
	err = rs_buf_printf(out, "</div>\n%s", page_js);
	if (!err)
		err = rs_flame_script(out);
	if (!err)
		err = rs_buf_puts(out, "</body></html>\n");
out:
	free(t.first);
	free(t.next);
	free(order);
	return err;
}

int rs_open_html(struct rs_buf *out, const char *session_path, const char *title,
		 double min_share, const rs_runrec *rec, const json_t *run)
{
	struct rs_deep_diff *d = NULL;
	int err;

	if (min_share <= 0)
		min_share = 0.001;
	/* the session against itself: its call paths with their times */
	err = rs_deep_diff_sessions(&d, session_path, session_path, min_share);
	if (!err)
		err = render(out, d, title ? title : "call tree", min_share, rec, run);
	rs_deep_diff_free(d);
	return err;
}
