/*
 * `results trend`: metric and function series across recorded runs, as
 * text, JSON or one self-contained HTML page.
 *
 * Metrics come from the index (no run file read); function series need
 * each run's stored summary, so only the newest --summaries runs are
 * read -- that keeps the command about a second on a 10,000-run history.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/html.h"
#include "analysis/render.h"
#include "analysis/series.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "results/error.h"

#define NAMES_MAX 32

static const char usage[] =
	"usage: results trend [--branch NAME] [--metric NAME]... [--function NAME]...\n"
	"                     [--all-metrics] [--limit N] [--summaries N]\n"
	"                     [--per KEY | --no-workload] [--json | --format text|json]\n"
	"                     [--html FILE [--title T] [--run-url TEMPLATE]\n"
	"                      [--commit-url TEMPLATE]] [-o FILE]\n"
	"\n"
	"Series of run metrics (default duration and cpu_time; --metric names any\n"
	"numeric metric or stat, --all-metrics takes every one) and of the top\n"
	"functions' own time (or those named with --function), over the newest\n"
	"--limit runs (default 500) in recording order, with change points.\n"
	"When the runs record a workload (months, population ... or --per KEY),\n"
	"time metrics are also given per unit of it.\n"
	"\n"
	"--html FILE writes one self-contained page (no network needed) with a\n"
	"chart per series, change points marked, every point linking to its run\n"
	"(--run-url, default '{path}/summary.md') and commits linked with\n"
	"--commit-url (e.g. 'https://github.com/ORG/REPO/commit/{commit}').\n"
	"Function series read the stored summaries of the newest --summaries\n"
	"runs (default 50).\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"7 corrupt run files, 8 other.\n";

static const struct option options[] = {
	RS_CLI_OPTION_BRANCH,
	{ "metric", required_argument, NULL, 'm' },
	{ "function", required_argument, NULL, 'F' },
	{ "all-metrics", no_argument, NULL, 'A' },
	{ "limit", required_argument, NULL, 'l' },
	{ "summaries", required_argument, NULL, 's' },
	RS_CLI_OPTION_PER,
	RS_CLI_OPTION_NO_WORKLOAD,
	{ "json", no_argument, NULL, 'j' },
	RS_CLI_OPTION_FORMAT,
	{ "html", required_argument, NULL, 'H' },
	{ "title", required_argument, NULL, 'T' },
	{ "run-url", required_argument, NULL, 'r' },
	{ "commit-url", required_argument, NULL, 'c' },
	RS_CLI_OPTION_OUTPUT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/*
 * The runs `picked` (newest first) into `runs`, oldest first: the newest
 * `summaries` as their whole run.json (function series need the
 * summary), the others as their index entry.
 */
static int load_runs(json_t **runs, struct rs_runsel *sel, const struct rs_run_entry **picked,
		     size_t n, size_t summaries)
{
	int status = RS_EXIT_OK;

	for (size_t i = 0; i < n && !status; i++) {
		const struct rs_run_entry *e = picked[n - 1 - i];

		if (n - 1 - i < summaries)
			status = rs_runsel_load(&runs[i], sel, e);
		else if (!(runs[i] = rs_runsel_entry_json(e)))
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	}
	return status;
}

int cmd_trend(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	struct rs_trend_opts topts = { 0 };
	struct rs_html_links links = { NULL, NULL };
	const char *metrics[NAMES_MAX], *functions[NAMES_MAX];
	const char *branch = NULL, *html = NULL, *title = NULL, *output = NULL;
	enum rs_format fmt = RS_FORMAT_TEXT;
	size_t limit = 500, summaries = 50, n = 0, i;
	const struct rs_run_entry **picked = NULL;
	struct rs_trend *t = NULL;
	struct rs_buf out = RS_BUF_INIT;
	json_t **runs = NULL;
	struct rs_cli_opts opts = {
		.command = "trend", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_TEXT_JSON | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD |
			 RS_CLI_OPT_OUTPUT,
	};
	int opt, err, status = RS_EXIT_OK, opened = 0;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		switch (opt) {
		case 'm':
			if (topts.n_metrics == NAMES_MAX)
				return rs_cli_fail(RS_EXIT_USAGE, "too many --metric options");
			metrics[topts.n_metrics++] = optarg;
			topts.metrics = metrics;
			break;
		case 'F':
			if (topts.n_functions == NAMES_MAX)
				return rs_cli_fail(RS_EXIT_USAGE, "too many --function options");
			functions[topts.n_functions++] = optarg;
			topts.functions = functions;
			break;
		case 'A': topts.all_metrics = 1; break;
		case 'l':
		case 's':
			status = rs_runsel_parse_count(optarg, opt == 'l' ? &limit : &summaries);
			if (status)
				return status;
			break;
		case 'j': opts.fmt = RS_FORMAT_JSON; break;
		case 'H': html = optarg; break;
		case 'T': title = optarg; break;
		case 'r': links.run_url = optarg; break;
		case 'c': links.commit_url = optarg; break;
		}
	}
	if (opt < 0)
		return opts.status;
	fmt = opts.fmt;
	output = opts.output;
	branch = opts.branch;
	topts.per = opts.per;
	topts.no_workload = opts.no_workload;
	if (optind != argc)
		return rs_cli_fail(RS_EXIT_USAGE, "unexpected argument '%s'; see 'results trend --help'",
				   argv[optind]);
	status = rs_runsel_open(&sel);
	opened = 1;
	if (status)
		goto out;

	/* The newest `limit` runs of the branch, then back to oldest first. */
	status = rs_runsel_newest(&picked, &n, &sel, branch, limit);
	if (status)
		goto out;
	runs = calloc(limit, sizeof(*runs));
	status = runs ? load_runs(runs, &sel, picked, n, summaries)
		      : rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	if (status)
		goto out;
	err = rs_trend_build(&t, (const json_t *const *)runs, n, &topts);
	if (!err) {
		if (html)
			err = rs_html_trend_page(&out, t, title, &links);
		else
			err = rs_render_trend(&out, t, fmt);
	}
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = rs_runsel_write(html ? html : output, &out);
	if (!status && html)
		fprintf(stderr, "wrote %s (%zu runs, %zu charts)\n", html, n,
			t->n_metrics + t->n_funcs);
out:
	rs_trend_free(t);
	for (i = 0; runs && i < n; i++)
		json_decref(runs[i]);
	free(runs);
	free(picked);
	rs_buf_release(&out);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}
