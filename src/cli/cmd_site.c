/*
 * `results site <dir>`: a static site for GitHub Pages or any web server,
 * built from committed files only: index.html (sortable table of runs),
 * trends.html (the charts of `results trend --html`) and runs/<id>.html
 * (summary, stats and call tree of each run).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/report.h"

static const char usage[] =
	"usage: results site <dir> [--branch NAME] [--limit N] [--summaries N]\n"
	"                    [--title T] [--commit-url TEMPLATE] [--full]\n"
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
	"Incremental: <dir>/.results-site.json records what each run page was\n"
	"built from (the tree of the run's folder, the run its diff page is drawn\n"
	"against, the version and options); a page whose inputs did not change is\n"
	"left as it is. index.html and trends.html are always rewritten. --full\n"
	"rewrites every page.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"7 corrupt run files, 8 other (e.g. <dir> not writable).\n";

static const struct option options[] = {
	RS_CLI_OPTION_BRANCH,
	{ "limit", required_argument, NULL, 'l' },
	{ "summaries", required_argument, NULL, 's' },
	{ "title", required_argument, NULL, 'T' },
	{ "commit-url", required_argument, NULL, 'c' },
	{ "full", no_argument, NULL, 'F' },
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

int cmd_site(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct rs_report_site_opts sopts = {
		.limit = 1000, .summaries = 100, .title = "Profiling results",
	};
	struct rs_cli_opts opts = {
		.command = "site", .usage = usage, .shortopts = "h", .longopts = options,
		.take = RS_CLI_OPT_BRANCH,
	};
	size_t pages = 0;
	int opt, err, status = RS_EXIT_OK;

	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		switch (opt) {
		case 'l':
		case 's':
			status = rs_runsel_parse_count(optarg, opt == 'l' ? &sopts.limit
								       : &sopts.summaries);
			if (status)
				return status;
			break;
		case 'T': sopts.title = optarg; break;
		case 'c': sopts.commit_url = optarg; break;
		case 'F': sopts.full = 1; break;
		}
	}
	if (opt < 0)
		return opts.status;
	sopts.branch = opts.branch;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (optind != argc - 1)
		return rs_cli_usage("site", "give the output directory");
	/* the newest --limit runs (of --branch): the index shards that hold them */
	status = rs_runsel_open_window(&sel, sopts.limit, sopts.branch, 0);
	if (status)
		goto out;
	err = rs_report_site(sel.runs, argv[optind], &sopts, &pages);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	fprintf(stderr, "wrote %s: index.html, trends.html and %zu run pages (the others up to date)\n",
		argv[optind], pages);
out:
	rs_runsel_close(&sel);
	return status;
}
