/*
 * results/report.h: the static site (`results site`), built from committed
 * files only: index.html (sortable table of runs), trends.html (the
 * charts of `results trend --html`) and runs/<id>.html (summary, stats
 * and call tree of each run) with runs/<id>.diff.html (its differential
 * flame graph against the run before it).
 */
#include "report/report_internal.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/html.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "results/buf.h"
#include "util/fs.h"
#include "util/path.h"

/*
 * <dir>/<name>, where name ("runs/<id>.html") holds a run id from the
 * repository: checked by the one path checker (the index reader checked
 * the id already; this is the write), and written without following a
 * symlink below <dir> (the user's; it may be one).
 */
static int write_page(const char *dir, const char *name, const struct rs_buf *b)
{
	struct rs_buf path = RS_BUF_INIT;
	int err;

	err = rs_path_join(&path, dir, name, RS_PATH_NO_DOTFILES, "page name");
	if (err)
		goto out;
	err = rs_path_mkdirs_under(dir, name);
	if (err)
		goto out;
	err = rs_fs_write_file_atomic(path.ptr, b->ptr ? b->ptr : "", b->len);
out:
	rs_buf_release(&path);
	return err;
}

/*
 * runs/<head_id>.diff.html: the differential flame graph of the newer run
 * `head` (the previous iteration) against `base`, the run recorded before
 * it, from their stored call trees. Nothing for the newest-first loop's
 * first run or a run without a tree.
 */
static int flame_page(const char *dir, const json_t *head, const json_t *base,
		      const char *head_id)
{
	struct rs_deep_diff *d = NULL;
	struct rs_buf page = RS_BUF_INIT, name = RS_BUF_INIT, title = RS_BUF_INIT;
	int err;

	if (!head)
		return 0;
	err = rs_deep_diff_trees(&d, base, head);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (err)
		goto out;
	err = rs_buf_printf(&title, "%s: differential flame graph against %s", head_id,
			    rs_runview_str(base, "id", "the run before"));
	if (err)
		goto out;
	err = rs_deep_flame_html(&page, d, title.ptr);
	if (err)
		goto out;
	err = rs_buf_printf(&name, "runs/%s.diff.html", head_id);
	if (err)
		goto out;
	err = write_page(dir, name.ptr, &page);
out:
	rs_deep_diff_free(d);
	rs_buf_release(&page);
	rs_buf_release(&name);
	rs_buf_release(&title);
	return err;
}

/*
 * runs/<id>.html for `run`, and the flame graph of `newer` (the run after
 * it, if any) against it. `has_older`: a run before it will get such a
 * page, so this one links to it.
 */
static int run_pages(const char *dir, const json_t *newer, json_t *run, const char *newer_id,
		     const char *id, int has_older, const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	int err;

	err = flame_page(dir, newer, run, newer_id);
	if (err)
		goto out;
	/* best effort, as before: without the link the page is still whole */
	if (has_older && rs_buf_printf(&sub, "%s.diff.html", id) == 0)
		json_object_set_new(run, "diff_page", json_string(sub.ptr));
	rs_buf_clear(&sub);
	err = rs_html_run_page(&out, run, links);
	if (err)
		goto out;
	err = rs_buf_printf(&sub, "runs/%s.html", id);
	if (err)
		goto out;
	err = write_page(dir, sub.ptr, &out);
out:
	rs_buf_release(&out);
	rs_buf_release(&sub);
	return err;
}

/* index.html (the table of runs) and trends.html. */
static int index_pages(const char *dir, json_t **newest_first, json_t **oldest_first, size_t n,
		       const char *title, const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	struct rs_trend *t = NULL;
	int err;

	err = rs_html_site_index(&out, (const json_t *const *)newest_first, n, title, links);
	if (err)
		goto out;
	err = write_page(dir, "index.html", &out);
	if (err)
		goto out;
	err = rs_trend_build(&t, (const json_t *const *)oldest_first, n, NULL);
	if (err)
		goto out;
	rs_buf_clear(&out);
	err = rs_buf_printf(&sub, "%s: trends", title);
	if (err)
		goto out;
	err = rs_html_trend_page(&out, t, sub.ptr, links);
	if (err)
		goto out;
	err = write_page(dir, "trends.html", &out);
out:
	rs_trend_free(t);
	rs_buf_release(&out);
	rs_buf_release(&sub);
	return err;
}

/* The state of the newest-first walk over the site's runs. */
struct site_walk {
	const struct rs_run_entry **picked; /* newest first */
	size_t n;
	json_t **newest_first;              /* records, or index entries past `summaries` */
	json_t *prev;                       /* the newer run's record */
};

/*
 * The pages of run `i` of the walk. The record read for them also feeds
 * the trend's function series for the newest `summaries` runs; older runs
 * keep only their index entry.
 */
static int site_run(struct site_walk *w, size_t i, const struct rs_runs *runs, const char *dir,
		    const struct rs_report_site_opts *o, const struct rs_html_links *links)
{
	json_t *run = NULL;
	int err;

	err = rs_report_load_object(&run, runs, w->picked[i]);
	if (err)
		return err;
	err = rs_report_attach_chart_files(run, runs, w->picked[i]->path);
	if (err) {
		json_decref(run);
		return err;
	}
	err = run_pages(dir, w->prev, run, w->picked[i > 0 ? i - 1 : 0]->id, w->picked[i]->id,
			i + 1 < w->n, links);
	/* the CSV texts are for this page only: the walk keeps records of many runs */
	json_object_del(run, "chart_files");
	json_decref(w->prev);
	w->prev = json_incref(run);
	if (err) {
		json_decref(run);
		return err;
	}
	if (i < o->summaries) {
		w->newest_first[i] = run;
		return 0;
	}
	json_decref(run);
	w->newest_first[i] = rs_run_entry_object(w->picked[i]);
	return w->newest_first[i] ? 0 : RS_EGENERIC;
}

int rs_report_site(const struct rs_runs *runs, const char *dir,
		   const struct rs_report_site_opts *opts, size_t *pages)
{
	struct rs_html_links site_links = { "runs/{id}.html", opts->commit_url };
	struct rs_html_links run_links = { NULL, opts->commit_url };
	struct site_walk w = { NULL, 0, NULL, NULL };
	json_t **oldest_first = NULL;
	size_t i, done = 0, slots = opts->limit ? opts->limit : 1;
	int err;

	err = rs_fs_mkdir_p(dir, 0755);
	if (err)
		goto out;
	err = rs_path_mkdirs_under(dir, "runs/index.html");
	if (err)
		goto out;
	err = rs_runs_newest(&w.picked, &w.n, runs, opts->branch, opts->limit);
	if (err)
		goto out;
	w.newest_first = calloc(slots, sizeof(*w.newest_first));
	oldest_first = calloc(slots, sizeof(*oldest_first));
	if (!w.newest_first || !oldest_first) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (done = 0; done < w.n; done++) {
		err = site_run(&w, done, runs, dir, opts, &run_links);
		if (err)
			goto out;
	}
	for (i = 0; i < w.n; i++)
		oldest_first[i] = w.newest_first[w.n - 1 - i];
	err = index_pages(dir, w.newest_first, oldest_first, w.n, opts->title, &site_links);
	if (err)
		goto out;
	*pages = done;
out:
	json_decref(w.prev);
	for (i = 0; w.newest_first && i < w.n; i++)
		json_decref(w.newest_first[i]);
	free(w.newest_first);
	free(oldest_first);
	free(w.picked);
	return err;
}
