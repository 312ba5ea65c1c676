/*
 * `results site <dir>`: a static site for GitHub Pages or any web server,
 * built from committed files only: index.html (sortable table of runs),
 * trends.html (the charts of `results trend --html`) and runs/<id>.html
 * (summary, stats and call tree of each run).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/deep.h"
#include "analysis/html.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/path.h"

static const char usage[] =
	"usage: results site <dir> [--branch NAME] [--limit N] [--summaries N]\n"
	"                    [--title T] [--commit-url TEMPLATE]\n"
	"\n"
	"Write a static site into <dir> (created if needed): index.html with a\n"
	"sortable table of the newest --limit runs (default 1000), one page per\n"
	"run under runs/ with its metrics, stats, top functions and expandable\n"
	"call tree and a differential flame graph against the run before it\n"
	"(runs/<id>.diff.html, from the stored call trees), and trends.html with\n"
	"the trend charts (function series from\n"
	"the newest --summaries runs, default 100). Pages are self-contained:\n"
	"no network is needed to view them. --commit-url links commits, e.g.\n"
	"'https://github.com/ORG/REPO/commit/{commit}'.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"7 corrupt run files, 8 other (e.g. <dir> not writable).\n";

static const struct option options[] = {
	RS_CLI_OPTION_BRANCH,
	{ "limit", required_argument, NULL, 'l' },
	{ "summaries", required_argument, NULL, 's' },
	{ "title", required_argument, NULL, 'T' },
	{ "commit-url", required_argument, NULL, 'c' },
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/*
 * <dir>/<name>, where name ("runs/<id>.html") holds a run id from the
 * repository: checked by the one path checker (the index reader checked
 * the id already; this is the write), and written without following a
 * symlink below <dir> (the user's; it may be one).
 */
static int write_page(const char *dir, const char *name, const struct rs_buf *b)
{
	struct rs_buf path = RS_BUF_INIT;
	int err = rs_path_join(&path, dir, name, RS_PATH_NO_DOTFILES, "page name");

	if (!err)
		err = rs_path_mkdirs_under(dir, name);
	if (!err)
		err = rs_fs_write_file_atomic(path.ptr, b->ptr ? b->ptr : "", b->len);
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
	if (!err)
		err = rs_buf_printf(&title, "%s: differential flame graph against %s", head_id,
				    rs_runview_str(base, "id", "the run before"));
	if (!err)
		err = rs_deep_flame_html(&page, d, title.ptr);
	if (!err)
		err = rs_buf_printf(&name, "runs/%s.diff.html", head_id);
	if (!err)
		err = write_page(dir, name.ptr, &page);
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
	int err = flame_page(dir, newer, run, newer_id);

	if (!err && has_older && rs_buf_printf(&sub, "%s.diff.html", id) == 0)
		json_object_set_new(run, "diff_page", json_string(sub.ptr));
	rs_buf_clear(&sub);
	if (!err)
		err = rs_html_run_page(&out, run, links);
	if (!err)
		err = rs_buf_printf(&sub, "runs/%s.html", id);
	if (!err)
		err = write_page(dir, sub.ptr, &out);
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
	if (!err)
		err = write_page(dir, "index.html", &out);
	if (!err)
		err = rs_trend_build(&t, (const json_t *const *)oldest_first, n, NULL);
	rs_buf_clear(&out);
	if (!err)
		err = rs_buf_printf(&sub, "%s: trends", title);
	if (!err)
		err = rs_html_trend_page(&out, t, sub.ptr, links);
	if (!err)
		err = write_page(dir, "trends.html", &out);
	rs_trend_free(t);
	rs_buf_release(&out);
	rs_buf_release(&sub);
	return err;
}

int cmd_site(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	struct rs_html_links site_links = { "runs/{id}.html", NULL };
	struct rs_html_links run_links = { NULL, NULL };
	const char *branch = NULL, *title = "Profiling results", *dir;
	size_t limit = 1000, summaries = 100, n = 0, i, pages = 0;
	const struct rs_run_entry **picked = NULL;
	json_t **newest_first = NULL, **oldest_first = NULL;
	json_t *prev = NULL;
	struct rs_cli_opts opts = {
		.command = "site", .usage = usage, .shortopts = "h", .longopts = options,
		.take = RS_CLI_OPT_BRANCH,
	};
	int opt, err = 0, status = RS_EXIT_OK, opened = 0;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		switch (opt) {
		case 'l':
		case 's':
			status = rs_runsel_parse_count(optarg, opt == 'l' ? &limit : &summaries);
			if (status)
				return status;
			break;
		case 'T': title = optarg; break;
		case 'c': site_links.commit_url = run_links.commit_url = optarg; break;
		}
	}
	if (opt < 0)
		return opts.status;
	branch = opts.branch;
	if (optind != argc - 1)
		return rs_cli_fail(RS_EXIT_USAGE, "give the output directory; see 'results site --help'");
	dir = argv[optind];
	status = rs_runsel_open(&sel);
	opened = 1;
	if (status)
		goto out;
	err = rs_fs_mkdir_p(dir, 0755);
	if (!err)
		err = rs_path_mkdirs_under(dir, "runs/index.html");
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}

	status = rs_runsel_newest(&picked, &n, &sel, branch, limit);
	if (status)
		goto out;
	newest_first = calloc(limit, sizeof(*newest_first));
	oldest_first = calloc(limit, sizeof(*oldest_first));
	if (!newest_first || !oldest_first) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	/* One page per run; the run.json read for it also feeds the trend's
	 * function series for the newest `summaries` runs. */
	for (i = 0; i < n; i++) {
		json_t *run = NULL;

		status = rs_runsel_load(&run, &sel, picked[i]);
		if (status)
			goto out;
		err = run_pages(dir, prev, run, picked[i > 0 ? i - 1 : 0]->id, picked[i]->id,
				i + 1 < n, &run_links);
		json_decref(prev);
		prev = json_incref(run);
		if (err) {
			json_decref(run);
			status = rs_cli_report(err);
			goto out;
		}
		pages++;
		if (i < summaries) {
			newest_first[i] = run;
		} else {
			json_decref(run);
			newest_first[i] = rs_runsel_entry_json(picked[i]);
			if (!newest_first[i]) {
				status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
				goto out;
			}
		}
	}
	for (i = 0; i < n; i++)
		oldest_first[i] = newest_first[n - 1 - i];

	err = index_pages(dir, newest_first, oldest_first, n, title, &site_links);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	fprintf(stderr, "wrote %s: index.html, trends.html and %zu run pages\n", dir, pages);
out:
	json_decref(prev);
	for (i = 0; newest_first && i < n; i++)
		json_decref(newest_first[i]);
	free(newest_first);
	free(oldest_first);
	free(picked);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}
