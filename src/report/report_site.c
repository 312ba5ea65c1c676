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
#include <unistd.h>

#include <git2.h>

#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/html.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "results/buf.h"
#include "util/fs.h"
#include "util/path.h"
#include "results_version.h"

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
 * it, from their stored call trees. Nothing for a run without a tree
 * (`*written` says whether the page was written).
 */
static int flame_page(const char *dir, const json_t *head, const json_t *base,
		      const char *head_id, int *written)
{
	struct rs_deep_diff *d = NULL;
	struct rs_buf page = RS_BUF_INIT, name = RS_BUF_INIT, title = RS_BUF_INIT;
	int err;

	*written = 0;
	if (!head || !base)
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
	*written = !err;
out:
	rs_deep_diff_free(d);
	rs_buf_release(&page);
	rs_buf_release(&name);
	rs_buf_release(&title);
	return err;
}

/* runs/<id>.html for `run`. */
static int run_page(const char *dir, const json_t *run, const char *id,
		    const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	int err;

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

/*
 * What is up to date: <dir>/.results-site.json (SITE_STATE) names, for
 * every run page the last build wrote, the tree of the run's folder it
 * was rendered from (any change to a committed file of the run changes
 * it), whether the page linked to a diff page, and the run and folder
 * tree that diff page was drawn against; with the results version and
 * the options that shape every page. A page is rewritten when any of
 * those differ or its file is gone; index.html and trends.html always are.
 * The state is the user's folder's, not trusted: unreadable, over its
 * cap or of another version or options, it is ignored (every page is
 * rewritten).
 */
#define SITE_STATE ".results-site.json"
#define SITE_STATE_MAX (64u * 1024 * 1024)

/* One run of the walk, newest first. */
struct site_run {
	const struct rs_run_entry *e;
	char tree[GIT_OID_HEXSZ + 1];   /* its folder's tree in HEAD ("" if none) */
	int need_page, need_diff;       /* runs/<id>.html, runs/<id>.diff.html */
	int has_diff;                   /* a diff page exists (or was just written) */
};

/* The options that shape every page, as the state records them. */
static json_t *site_stamp(const struct rs_report_site_opts *o)
{
	return json_pack("{s:s,s:s,s:s?}", "version", RS_VERSION, "title", o->title ? o->title : "",
			 "commit_url", o->commit_url);
}

/* The state of the last build into `dir`, if it is of these options; else an empty one. */
static json_t *state_load(const char *dir, const json_t *stamp)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	json_t *st = NULL, *runs;

	if (rs_path_join(&path, dir, SITE_STATE, 0, "site state") == 0 &&
	    rs_fs_read_file(&text, path.ptr, SITE_STATE_MAX) == 0)
		st = json_loadb(text.ptr ? text.ptr : "", text.len, 0, NULL);
	rs_error_clear();
	runs = json_object_get(st, "runs");
	if (!json_is_object(runs) || !json_equal(json_object_get(st, "stamp"), (json_t *)stamp)) {
		json_decref(st);
		st = NULL;
	}
	rs_buf_release(&path);
	rs_buf_release(&text);
	return st ? st : json_pack("{s:O,s:{}}", "stamp", stamp, "runs");
}

static int file_exists(const char *dir, const char *fmt, const char *id)
{
	struct rs_buf name = RS_BUF_INIT, path = RS_BUF_INIT;
	int ok = rs_buf_printf(&name, fmt, id) == 0 &&
		 rs_path_join(&path, dir, name.ptr, RS_PATH_NO_DOTFILES, "page name") == 0 &&
		 access(path.ptr, F_OK) == 0;

	rs_error_clear();
	rs_buf_release(&name);
	rs_buf_release(&path);
	return ok;
}

/* The tree of each run's folder in HEAD (best effort: "" when it cannot be found). */
static void folder_trees(struct site_run *w, size_t n, const struct rs_runs *runs)
{
	git_object *head = NULL;
	git_tree *root = NULL;

	if (git_revparse_single(&head, runs->repo->git, "HEAD^{tree}") == 0)
		root = (git_tree *)head;
	for (size_t i = 0; i < n; i++) {
		git_tree_entry *te = NULL;

		w[i].tree[0] = '\0';
		if (root && git_tree_entry_bypath(&te, root, w[i].e->path) == 0 &&
		    git_tree_entry_type(te) == GIT_OBJECT_TREE)
			git_oid_tostr(w[i].tree, sizeof(w[i].tree), git_tree_entry_id(te));
		git_tree_entry_free(te);
	}
	git_object_free(head);
}

static int str_is(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return want && v && !strcmp(v, want);
}

/* Which pages of the walk the state says are stale (all of them with `full`). */
static void plan(struct site_run *w, size_t n, const json_t *runs_state, const char *dir, int full)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *st = json_object_get(runs_state, w[i].e->id);
		const struct site_run *older = i + 1 < n ? &w[i + 1] : NULL;
		int fresh = !full && w[i].tree[0] && str_is(st, "tree", w[i].tree);

		w[i].need_page = !(fresh &&
				   json_is_true(json_object_get(st, "has_older")) == (older != NULL) &&
				   file_exists(dir, "runs/%s.html", w[i].e->id));
		w[i].has_diff = older && json_is_true(json_object_get(st, "diff"));
		w[i].need_diff = older &&
			!(fresh && older->tree[0] && str_is(st, "older", older->e->id) &&
			  str_is(st, "older_tree", older->tree) &&
			  (!w[i].has_diff || file_exists(dir, "runs/%s.diff.html", w[i].e->id)));
	}
}

/* The state after this build: one entry per run of the walk. */
static int state_save(const char *dir, json_t *st, const struct site_run *w, size_t n)
{
	json_t *runs = json_object();
	struct rs_buf path = RS_BUF_INIT;
	char *text = NULL;
	int err = 0;

	for (size_t i = 0; runs && i < n && !err; i++) {
		const struct site_run *older = i + 1 < n ? &w[i + 1] : NULL;

		if (json_object_set_new(runs, w[i].e->id,
					json_pack("{s:s,s:b,s:s?,s:s?,s:b}", "tree", w[i].tree,
						  "has_older", older != NULL, "older",
						  older ? older->e->id : NULL, "older_tree",
						  older ? older->tree : NULL, "diff", w[i].has_diff)))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (!runs || err || json_object_set_new(st, "runs", runs)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	text = json_dumps(st, JSON_COMPACT);
	if (!text) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_path_join(&path, dir, SITE_STATE, 0, "site state");
	if (!err)
		err = rs_fs_write_file_atomic(path.ptr, text, strlen(text));
out:
	free(text);
	rs_buf_release(&path);
	return err;
}

/* Run i's record with its page's extras (diff link, chart files), for its page. */
static int site_record(json_t **out, const struct site_run *w, size_t i, size_t n,
		       const struct rs_runs *runs)
{
	struct rs_buf sub = RS_BUF_INIT;
	int err;

	err = rs_report_load_object(out, runs, w[i].e);
	if (err)
		return err;
	/* best effort, as before: without the link the page is still whole */
	if (i + 1 < n && rs_buf_printf(&sub, "%s.diff.html", w[i].e->id) == 0)
		json_object_set_new(*out, "diff_page", json_string(sub.ptr));
	rs_buf_release(&sub);
	return 0;
}

int rs_report_site(const struct rs_runs *runs, const char *dir,
		   const struct rs_report_site_opts *opts, size_t *pages)
{
	struct rs_html_links site_links = { "runs/{id}.html", opts->commit_url };
	struct rs_html_links run_links = { NULL, opts->commit_url };
	const struct rs_run_entry **picked = NULL;
	struct site_run *w = NULL;
	json_t **newest_first = NULL, **oldest_first = NULL, *prev = NULL, *stamp = NULL;
	json_t *state = NULL;
	size_t i, n = 0, slots = opts->limit ? opts->limit : 1;
	int err;

	*pages = 0;
	err = rs_fs_mkdir_p(dir, 0755);
	if (err)
		goto out;
	err = rs_path_mkdirs_under(dir, "runs/index.html");
	if (err)
		goto out;
	err = rs_runs_newest(&picked, &n, runs, opts->branch, opts->limit);
	if (err)
		goto out;
	w = calloc(n ? n : 1, sizeof(*w));
	newest_first = calloc(slots, sizeof(*newest_first));
	oldest_first = calloc(slots, sizeof(*oldest_first));
	stamp = site_stamp(opts);
	if (!w || !newest_first || !oldest_first || !stamp) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		w[i].e = picked[i];
	folder_trees(w, n, runs);
	state = state_load(dir, stamp);
	if (!state) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	plan(w, n, json_object_get(state, "runs"), dir, opts->full);
	/*
	 * Newest first: a record is read only for a page to write (its own,
	 * the diff page of the newer run against it, its own diff page) or
	 * for the trend's function series (the newest `summaries`).
	 */
	for (i = 0; i < n; i++) {
		json_t *run = NULL;

		if (w[i].need_page || w[i].need_diff || (i > 0 && w[i - 1].need_diff) ||
		    i < opts->summaries) {
			err = site_record(&run, w, i, n, runs);
			if (err)
				goto out;
		}
		if (i > 0 && w[i - 1].need_diff) {
			err = flame_page(dir, prev, run, w[i - 1].e->id, &w[i - 1].has_diff);
			if (err) {
				json_decref(run);
				goto out;
			}
		}
		if (w[i].need_page) {
			err = rs_report_attach_chart_files(run, runs, w[i].e->path);
			if (!err)
				err = run_page(dir, run, w[i].e->id, &run_links);
			/* the CSV texts are for this page only: the walk keeps records of many runs */
			json_object_del(run, "chart_files");
			if (err) {
				json_decref(run);
				goto out;
			}
			(*pages)++;
		}
		json_decref(prev);
		prev = run;
		if (i < opts->summaries) {
			newest_first[i] = json_incref(run);
			continue;
		}
		newest_first[i] = rs_run_entry_object(w[i].e);
		if (!newest_first[i]) {
			err = RS_EGENERIC;
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		oldest_first[i] = newest_first[n - 1 - i];
	err = index_pages(dir, newest_first, oldest_first, n, opts->title, &site_links);
	if (!err)
		err = state_save(dir, state, w, n);
out:
	json_decref(prev);
	for (i = 0; newest_first && i < n; i++)
		json_decref(newest_first[i]);
	json_decref(state);
	json_decref(stamp);
	free(newest_first);
	free(oldest_first);
	free(picked);
	free(w);
	return err;
}
