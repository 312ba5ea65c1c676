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
 * runs/<id>.diff.html: the differential flame graph of run `head` against
 * `base` from their stored call trees -- the baseline run its check
 * verdict was judged against (`is_baseline`), else the run recorded
 * before it. *written says whether there is a page: none without a base
 * or a tree.
 */
static int flame_page(int *written, const char *dir, const json_t *head, const json_t *base,
		      int is_baseline, const char *id)
{
	struct rs_deep_diff *d = NULL;
	struct rs_buf page = RS_BUF_INIT, name = RS_BUF_INIT, title = RS_BUF_INIT;
	int err;

	*written = 0;
	if (!base)
		return 0;
	err = rs_deep_diff_trees(&d, base, head);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (err)
		goto out;
	err = rs_buf_printf(&title, "%s: differential flame graph against %s %s", id,
			    is_baseline ? "its check baseline, run" : "the run before it,",
			    rs_runview_str(base, "id", "?"));
	if (err)
		goto out;
	err = rs_deep_flame_html(&page, d, title.ptr);
	if (err)
		goto out;
	err = rs_buf_printf(&name, "runs/%s.diff.html", id);
	if (err)
		goto out;
	err = write_page(dir, name.ptr, &page);
	*written = !err;
out:
	rs_deep_diff_free(d);
	rs_buf_release(&page);
	rs_buf_release(&name);
	rs_buf_release(&title);
	return err;
}

/*
 * runs/<id>.html for `run` and its flame graph against `base`
 * (flame_page), which the page and the index link to.
 */
static int run_pages(const char *dir, json_t *run, const json_t *base, int is_baseline,
		     const char *id, const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	int err, written;

	err = flame_page(&written, dir, run, base, is_baseline, id);
	if (err)
		goto out;
	/* best effort, as before: without the link the page is still whole */
	if (written && rs_buf_printf(&sub, "%s.diff.html", id) == 0)
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
	struct rs_report_judge *judge;      /* verdicts, and the records they read */
};

/* An index entry of run `e` that keeps its record's verdict and flame graph link. */
static json_t *entry_with_verdict(const struct rs_run_entry *e, const json_t *run)
{
	json_t *o = rs_run_entry_object(e);

	if (!o)
		return NULL;
	if (json_object_get(run, "check"))
		json_object_set(o, "check", json_object_get(run, "check"));
	if (json_object_get(run, "diff_page"))
		json_object_set(o, "diff_page", json_object_get(run, "diff_page"));
	return o;
}

/*
 * The pages of run `i` of the walk: its verdict (rs_report_judge_run,
 * what `results check` says of it), its page and its flame graph
 * against the baseline run of that verdict. The record read for them
 * also feeds the trend's function series for the newest `summaries` runs;
 * older runs keep only their index entry, with the verdict.
 */
static int site_run(struct site_walk *w, size_t i, const struct rs_runs *runs, const char *dir,
		    const struct rs_report_site_opts *o, const struct rs_html_links *links)
{
	const struct rs_run_entry *e = w->picked[i];
	const json_t *base = NULL;
	json_t *run = NULL, *before = NULL;
	int err;

	err = rs_report_judge_record(&run, w->judge, e);
	if (err)
		return err;
	err = rs_report_judge_run(w->judge, e, run, &base);
	if (err)
		goto out;
	/* no baseline (a first run, another configuration): against the run before it */
	if (!base && i + 1 < w->n) {
		err = rs_report_load_object(&before, runs, w->picked[i + 1]);
		if (err)
			goto out;
	}
	err = rs_report_attach_chart_files(run, runs, e->path);
	if (err)
		goto out;
	err = run_pages(dir, run, base ? base : before, base != NULL, e->id, links);
	/* the CSV texts are for this page only: the walk keeps records of many runs */
	json_object_del(run, "chart_files");
	if (err)
		goto out;
	if (i < o->summaries) {
		w->newest_first[i] = json_incref(run);
	} else {
		w->newest_first[i] = entry_with_verdict(e, run);
		if (!w->newest_first[i])
			err = RS_EGENERIC;
	}
out:
	json_decref(before);
	json_decref(run);
	return err;
}

int rs_report_site(const struct rs_runs *runs, const char *dir,
		   const struct rs_report_site_opts *opts, size_t *pages)
{
	struct rs_html_links site_links = { "runs/{id}.html", opts->commit_url, "runs/" };
	struct rs_html_links run_links = { NULL, opts->commit_url, NULL };
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
	err = rs_report_judge_new(&w.judge, runs);
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
	rs_report_judge_free(w.judge);
	for (i = 0; w.newest_first && i < w.n; i++)
		json_decref(w.newest_first[i]);
	free(w.newest_first);
	free(oldest_first);
	free(w.picked);
	return err;
}
