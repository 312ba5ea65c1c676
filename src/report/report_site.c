/*
 * results/report.h: the static site (`results site`), built from committed
 * files only: index.html (sortable table of runs), trends.html (the
 * charts of `results trend --html`) and runs/<id>.html (summary, stats
 * and call tree of each run) with runs/<id>.diff.html (its differential
 * flame graph against its check baseline, else the run before it).
 */
#include "report/report_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/html.h"
#include "analysis/series.h"
#include "results/buf.h"
#include "results/json.h"
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
 * runs/<id>.diff.html: the differential flame graph of run `head` against
 * `base` from their stored call trees -- the baseline run its check
 * verdict was judged against (`is_baseline`), else the run recorded
 * before it. *written says whether there is a page: none without a base
 * or a tree.
 */
static int flame_page(int *written, const char *dir, const struct rs_run_doc *head,
		      const struct rs_run_doc *base, int is_baseline, const char *id)
{
	struct rs_deep_diff *d = NULL;
	struct rs_buf page = RS_BUF_INIT, name = RS_BUF_INIT, title = RS_BUF_INIT;
	int err;

	*written = 0;
	if (!base)
		return 0;
	err = rs_deep_diff_trees(&d, base->rec->summary, head->rec->summary);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (err)
		goto out;
	err = rs_buf_printf(&title, "%s: differential flame graph against %s %s", id,
			    is_baseline ? "its check baseline, run" : "the run before it,",
			    base->rec->id);
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
static int run_pages(const char *dir, struct rs_run_doc *run, const struct rs_run_doc *base,
		     int is_baseline, const char *id, const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	int err, written;

	err = flame_page(&written, dir, run, base, is_baseline, id);
	if (err)
		goto out;
	/* best effort, as before: without the link the page is still whole */
	if (written && rs_buf_printf(&sub, "%s.diff.html", id) == 0)
		json_object_set_new(run->json, "diff_page", json_string(sub.ptr));
	rs_buf_clear(&sub);
	err = rs_html_run_page(&out, run->rec, run->json, links);
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

/* index.html (the table of runs, `newest_first`) and trends.html. */
static int index_pages(const char *dir, struct rs_run_doc **newest_first, size_t n,
		       const char *title, const struct rs_html_links *links)
{
	struct rs_buf out = RS_BUF_INIT, sub = RS_BUF_INIT;
	const json_t **rows = calloc(n ? n : 1, sizeof(*rows));
	const rs_runrec **recs = calloc(n ? n : 1, sizeof(*recs));
	struct rs_trend_run *oldest_first = calloc(n ? n : 1, sizeof(*oldest_first));
	struct rs_trend *t = NULL;
	int err = 0;

	if (!rows || !recs || !oldest_first) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		rows[i] = newest_first[i]->json;
		recs[i] = newest_first[i]->rec;
		rs_report_trend_run(&oldest_first[n - 1 - i], newest_first[i]);
	}
	err = rs_html_site_index(&out, recs, rows, n, title, links);
	if (err)
		goto out;
	err = write_page(dir, "index.html", &out);
	if (err)
		goto out;
	err = rs_trend_build(&t, oldest_first, n, NULL);
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
	free(rows);
	free(recs);
	free(oldest_first);
	rs_trend_free(t);
	rs_buf_release(&out);
	rs_buf_release(&sub);
	return err;
}

/* An index entry of run `e` that keeps its record's verdict and flame graph link. */
static int entry_with_verdict(struct rs_run_doc **out, const struct rs_run_entry *e,
			      const json_t *run)
{
	json_t *o;
	int err;

	err = rs_run_doc_from_entry(out, e);
	if (err)
		return err;
	o = (*out)->json;
	if ((json_object_get(run, "check") &&
	     json_object_set(o, "check", json_object_get(run, "check"))) ||
	    (json_object_get(run, "diff_page") &&
	     json_object_set(o, "diff_page", json_object_get(run, "diff_page")))) {
		rs_run_doc_free(*out);
		*out = NULL;
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/*
 * What is up to date: <dir>/.results-site.json (SITE_STATE) names, for
 * every run of the last build, the tree of the run's folder it was
 * rendered from (any change to a committed file of the run changes it),
 * its check verdict and whether it has a diff page; with what shapes every
 * page (site_stamp). Which runs are judged and rendered again: plan().
 * index.html and trends.html are always rewritten. The state is the
 * user's folder's, not trusted: unreadable, over its cap or of another
 * stamp, it is ignored (every page is rewritten); a verdict it holds is
 * rendered as the untrusted text every verdict is.
 */
#define SITE_STATE ".results-site.json"
#define SITE_STATE_MAX (64u * 1024 * 1024)

/* One run of the walk, newest first. */
struct site_run {
	const struct rs_run_entry *e;
	char tree[GIT_OID_HEXSZ + 1];   /* its folder's tree in HEAD ("" if none) */
	int stale;                      /* judged and rendered again (plan) */
	int has_diff;                   /* a diff page exists (or was just written) */
	json_t *check;                  /* its verdict (borrowed), NULL until known */
};

/*
 * What shapes every page, as the state records it: the options, the
 * results version (check's defaults) and the committed .results.json
 * (own_code and the check's configuration), by its blob id.
 */
static json_t *site_stamp(const struct rs_report_site_opts *o, const struct rs_runs *runs)
{
	git_tree *root = NULL;
	git_tree_entry *te = NULL;
	char id[GIT_OID_HEXSZ + 1] = "";

	/* the entry's id, from the tree: the blob itself is not read (best effort: "") */
	if (rs_repo_rev_tree(&root, runs->repo->git, NULL) != 0)
		rs_error_clear();
	if (root && git_tree_entry_bypath(&te, root, ".results.json") == 0)
		git_oid_tostr(id, sizeof(id), git_tree_entry_id(te));
	git_tree_entry_free(te);
	git_tree_free(root);
	return json_pack("{s:s,s:s,s:s?,s:s}", "version", RS_VERSION, "title",
			 o->title ? o->title : "", "commit_url", o->commit_url, "config", id);
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
	git_tree *root = NULL;

	/* best effort: without HEAD's tree every folder is "" */
	if (rs_repo_rev_tree(&root, runs->repo->git, NULL) != 0)
		rs_error_clear();
	for (size_t i = 0; i < n; i++) {
		git_tree_entry *te = NULL;

		w[i].tree[0] = '\0';
		if (root && rs_repo_tree_entry_bypath(&te, root, w[i].e->path) == 0 &&
		    git_tree_entry_type(te) == GIT_OBJECT_TREE)
			git_oid_tostr(w[i].tree, sizeof(w[i].tree), git_tree_entry_id(te));
		rs_error_clear(); /* best effort, as above */
		git_tree_entry_free(te);
	}
	git_tree_free(root);
}

static int str_is(const json_t *o, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(o, key));

	return want && v && !strcmp(v, want);
}


/*
 * Which runs the state says are stale, and so are judged and rendered
 * again. A run's verdict depends only on its own record and those of
 * runs recorded before it (its check history), so a run is stale when
 * its folder's tree, its cached verdict or one of its pages is not what
 * the state says, or when an older run of the walk is stale. A new run
 * is the newest: after one, only it is stale.
 */
static void plan(struct site_run *w, size_t n, const json_t *runs_state, const char *dir, int full)
{
	for (size_t k = n; k-- > 0;) {
		const json_t *st = json_object_get(runs_state, w[k].e->id);
		int diff = json_is_true(json_object_get(st, "diff"));

		w[k].stale = full || !w[k].tree[0] || !str_is(st, "tree", w[k].tree) ||
			     !json_is_object(json_object_get(st, "check")) ||
			     !file_exists(dir, "runs/%s.html", w[k].e->id) ||
			     (diff && !file_exists(dir, "runs/%s.diff.html", w[k].e->id)) ||
			     (k + 1 < n && w[k + 1].stale);
		w[k].has_diff = diff;
		w[k].check = w[k].stale ? NULL : json_object_get(st, "check");
	}
}

/* The state after this build: one entry per run of the walk. */
static int state_save(const char *dir, json_t *st, const struct site_run *w, size_t n)
{
	json_t *runs = json_object();
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	int err = 0;

	for (size_t i = 0; runs && i < n && !err; i++)
		if (json_object_set_new(runs, w[i].e->id,
					json_pack("{s:s,s:O?,s:b}", "tree", w[i].tree, "check",
						  w[i].check, "diff", w[i].has_diff)))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	if (!runs || err || json_object_set_new(st, "runs", runs)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_json_dump(&text, st, JSON_COMPACT);
	if (err)
		goto out;
	err = rs_path_join(&path, dir, SITE_STATE, 0, "site state");
	if (!err)
		err = rs_fs_write_file_atomic(path.ptr, text.ptr, text.len);
out:
	rs_buf_release(&text);
	rs_buf_release(&path);
	return err;
}

/*
 * A stale run i: its verdict (rs_report_judge_run, what `results check`
 * says of it), its page and its flame graph against the baseline run of
 * that verdict, else the run recorded before it. `*run` gets its record
 * with the verdict.
 */
static int stale_run(struct rs_run_doc **run, struct site_run *w, size_t i, size_t n,
		     struct rs_report_judge *judge, const struct rs_runs *runs, const char *dir,
		     const struct rs_html_links *links)
{
	const struct rs_run_doc *base = NULL;
	struct rs_run_doc *before = NULL;
	json_t *o;
	int err;

	err = rs_report_judge_record(run, judge, w[i].e);
	if (err)
		return err;
	o = (*run)->json;
	err = rs_report_judge_run(judge, w[i].e, *run, &base);
	if (err)
		goto out;
	/* no baseline (a first run, another configuration): against the run before it */
	if (!base && i + 1 < n) {
		err = rs_run_doc_load(&before, runs, w[i + 1].e);
		if (err)
			goto out;
	}
	err = rs_report_attach_chart_files(o, (*run)->rec, runs, w[i].e->path);
	if (err)
		goto out;
	err = run_pages(dir, *run, base ? base : before, base != NULL, w[i].e->id, links);
	/* the CSV texts are for this page only: the walk keeps records of many runs */
	json_object_del(o, "chart_files");
	if (err)
		goto out;
	w[i].has_diff = json_object_get(o, "diff_page") != NULL;
	w[i].check = json_object_get(o, "check");
out:
	rs_run_doc_free(before);
	if (err) {
		rs_run_doc_free(*run);
		*run = NULL;
	}
	return err;
}

/*
 * A run whose pages are up to date: its record only for the trend's
 * function series (`want_record`, the newest --summaries), else its index
 * entry; either with the verdict and diff link the state kept.
 */
static int fresh_run(struct rs_run_doc **out, const struct site_run *r, int want_record,
		     struct rs_report_judge *judge)
{
	struct rs_buf sub = RS_BUF_INIT;
	json_t *o;
	int err;

	if (want_record)
		err = rs_report_judge_record(out, judge, r->e);
	else
		err = rs_run_doc_from_entry(out, r->e);
	if (err)
		return err;
	o = (*out)->json;
	err = json_object_set(o, "check", r->check) ? rs_error_set(RS_EGENERIC, "out of memory") : 0;
	if (!err && r->has_diff) {
		err = rs_buf_printf(&sub, "%s.diff.html", r->e->id);
		if (!err && json_object_set_new(o, "diff_page", json_string(sub.ptr)))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	rs_buf_release(&sub);
	if (err) {
		rs_run_doc_free(*out);
		*out = NULL;
	}
	return err;
}

/*
 * The records the walk below reads (the stale runs', the newest
 * `summaries`): in a partial clone, fetched together first, in one git
 * call per RS_GIT_FETCH_OIDS_MAX instead of one each.
 */
static int prefetch_records(const struct rs_runs *runs, const struct site_run *w, size_t n,
			    size_t summaries)
{
	const struct rs_run_entry **want = calloc(n ? n : 1, sizeof(*want));
	size_t k = 0;
	int err;

	if (!want)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < n; i++) {
		if (w[i].stale || i < summaries)
			want[k++] = w[i].e;
	}
	err = rs_runs_prefetch(runs, want, k, "run.json");
	free(want);
	return err;
}

int rs_report_site(const struct rs_runs *runs, const char *dir,
		   const struct rs_report_site_opts *opts, size_t *pages)
{
	struct rs_html_links site_links = { "runs/{id}.html", opts->commit_url, "runs/" };
	struct rs_html_links run_links = { NULL, opts->commit_url, NULL };
	const struct rs_run_entry **picked = NULL;
	struct rs_report_judge *judge = NULL;
	struct site_run *w = NULL;
	struct rs_run_doc **newest_first = NULL;
	json_t *stamp = NULL, *state = NULL;
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
	err = rs_report_judge_new(&judge, runs);
	if (err)
		goto out;
	w = calloc(n ? n : 1, sizeof(*w));
	newest_first = calloc(slots, sizeof(*newest_first));
	stamp = site_stamp(opts, runs);
	if (!w || !newest_first || !stamp) {
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
	err = prefetch_records(runs, w, n, opts->summaries);
	if (err)
		goto out;
	/*
	 * Newest first (the judge's cache wants that order): a record is read
	 * only for a stale run (its verdict, its pages, and its check history)
	 * or for the trend's function series (the newest `summaries`).
	 */
	for (i = 0; i < n; i++) {
		if (w[i].stale) {
			err = stale_run(&newest_first[i], w, i, n, judge, runs, dir, &run_links);
			if (err)
				goto out;
			(*pages)++;
			if (i >= opts->summaries) {
				/* older runs keep only their index entry, with the verdict */
				struct rs_run_doc *rec = newest_first[i];

				err = entry_with_verdict(&newest_first[i], w[i].e, rec->json);
				rs_run_doc_free(rec);
				if (err)
					goto out;
				w[i].check = json_object_get(newest_first[i]->json, "check");
			}
		} else {
			err = fresh_run(&newest_first[i], &w[i], i < opts->summaries, judge);
			if (err)
				goto out;
		}
	}
	err = index_pages(dir, newest_first, n, opts->title, &site_links);
	if (!err)
		err = state_save(dir, state, w, n);
out:
	rs_report_judge_free(judge);
	for (i = 0; newest_first && i < n; i++)
		rs_run_doc_free(newest_first[i]);
	json_decref(state);
	json_decref(stamp);
	free(newest_first);
	free(picked);
	free(w);
	return err;
}
