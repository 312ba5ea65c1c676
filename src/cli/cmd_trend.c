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

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/report.h"

#define NAMES_MAX 32

static const char usage[] =
	"usage: results trend [--branch NAME] [--metric NAME]... [--function NAME]...\n"
	"                     [--total] [--all-metrics] [--limit N] [--summaries N]\n"
	"                     [--per KEY | --no-workload] [--json | --format text|json]\n"
	"                     [--html FILE [--title T] [--run-url TEMPLATE]\n"
	"                      [--commit-url TEMPLATE]] [-o FILE]\n"
	"\n"
	"Series of run metrics (default duration and cpu_time; --metric names any\n"
	"numeric metric or stat, --all-metrics takes every one) and of the top\n"
	"functions' own time (or those named with --function; --total: their total\n"
	"time, what a function and everything it calls took), over the newest\n"
	"--limit runs (default 500) in recording order, with change points.\n"
	"A --function name no run's stored summary holds is an error; a function\n"
	"renamed on the way (same file and first line) keeps its series.\n"
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
	{ "total", no_argument, NULL, 'U' },
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

/* What the command line asks for. */
struct trend_args {
	struct rs_report_trend_opts topts;
	const char *metrics[NAMES_MAX], *functions[NAMES_MAX];
	const char *html, *output;
};

/* One option of the command's own; RS_EXIT_*. */
/* `name` added to `names` (`*n` of NAMES_MAX so far), given as --`option`; RS_EXIT_*. */
static int add_name(const char **names, size_t *n, const char *option, const char *name)
{
	if (*n == NAMES_MAX)
		return rs_cli_fail(RS_EXIT_USAGE, "too many --%s options", option);
	names[(*n)++] = name;
	return RS_EXIT_OK;
}

static int take_option(void *ctx, struct rs_cli_opts *opts, int opt)
{
	struct trend_args *a = ctx;
	struct rs_report_trend_opts *t = &a->topts;

	switch (opt) {
	case 'm':
		t->metrics = a->metrics;
		return add_name(a->metrics, &t->n_metrics, "metric", optarg);
	case 'F':
		t->functions = a->functions;
		return add_name(a->functions, &t->n_functions, "function", optarg);
	case 'A': t->all_metrics = 1; break;
	case 'U': t->total = 1; break;
	case 'l':
	case 's':
		return rs_runsel_parse_count(optarg, opt == 'l' ? &t->limit : &t->summaries);
	case 'j': opts->fmt = RS_FORMAT_JSON; break;
	case 'H': a->html = optarg; break;
	case 'T': t->title = optarg; break;
	case 'r': t->run_url = optarg; break;
	case 'c': t->commit_url = optarg; break;
	}
	return RS_EXIT_OK;
}

/* Parse the command line into `a`; `*done` when the command ends with the status returned. */
static int parse_args(struct trend_args *a, int argc, char **argv, int *done)
{
	struct rs_cli_opts opts = {
		.command = "trend", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_TEXT_JSON | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD |
			 RS_CLI_OPT_OUTPUT,
	};
	int opt;

	*done = 1;
	a->topts.limit = 500;
	a->topts.summaries = 50;
	opt = rs_cli_opts_parse(&opts, argc, argv, take_option, a);
	if (opt < 0)
		return opts.status;
	a->topts.format = opts.fmt;
	a->output = opts.output;
	a->topts.branch = opts.branch;
	a->topts.per = opts.per;
	a->topts.no_workload = opts.no_workload;
	a->topts.html = a->html != NULL;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	*done = 0;
	return RS_EXIT_OK;
}

int cmd_trend(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct trend_args a = { .html = NULL };
	struct rs_buf out = RS_BUF_INIT;
	size_t n = 0, charts = 0;
	int err, status, done;

	status = parse_args(&a, argc, argv, &done);
	if (done)
		return status;
	/* the newest --limit runs (of --branch): the shards that hold them */
	status = rs_runsel_open_window(&sel, a.topts.limit, a.topts.branch, 0);
	if (status)
		goto out;
	err = rs_report_trend(&out, &n, &charts, sel.runs, &a.topts);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = rs_runsel_write(a.html ? a.html : a.output, &out);
	if (!status && a.html)
		fprintf(stderr, "wrote %s (%zu runs, %zu charts)\n", a.html, n, charts);
out:
	rs_buf_release(&out);
	rs_runsel_close(&sel);
	return status;
}
