/*
 * `results find <from>..<to>`: where, over a range of recorded runs, did
 * a metric change most? The largest step (see rs_changepoint_best) over
 * the runs between the two, in recording order, on one branch.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/report.h"

static const char usage[] =
	"usage: results find <from>..<to> [--metric NAME] [--branch NAME]\n"
	"                    [--per KEY | --no-workload] [--format text|json]\n"
	"\n"
	"Locate the largest step change of a metric over the recorded runs from\n"
	"<from> to <to> (run ids or profiled commits, either order), on the\n"
	"branch of <to> unless --branch says otherwise, and print the runs and\n"
	"commits on each side of it. The metric defaults to duration, judged per\n"
	"unit of workload when the runs record one (months, population ... or\n"
	"--per KEY). Reads only the run index.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage or fewer than two runs in the range,\n"
	"3 not a results repository, 4 unknown or ambiguous run or commit, 8 other.\n";

static const struct option options[] = {
	{ "metric", required_argument, NULL, 'm' },
	RS_CLI_OPTION_BRANCH,
	RS_CLI_OPTION_PER,
	RS_CLI_OPTION_NO_WORKLOAD,
	RS_CLI_OPTION_FORMAT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/*
 * `arg` is "<from>..<to>" (`dots` at the ".."): the two runs it names,
 * resolved.
 */
static int resolve_range(const struct rs_run_entry **a, const struct rs_run_entry **b,
			 const struct rs_runsel *sel, const char *arg, const char *dots)
{
	char *from = strndup(arg, (size_t)(dots - arg));
	int status;

	if (!from)
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	status = rs_runsel_resolve(a, sel, from);
	free(from);
	if (status)
		return status;
	return rs_runsel_resolve(b, sel, dots + 2);
}

/* The ".." of a range "<from>..<to>" with both ends given, or NULL. */
static const char *range_dots(const char *arg)
{
	const char *dots = strstr(arg, "..");

	if (!dots || dots == arg || !dots[2])
		return NULL;
	return dots;
}

int cmd_find(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct rs_report_find_opts fopts = { .metric = "duration" };
	const struct rs_run_entry *from = NULL, *to = NULL;
	struct rs_buf out = RS_BUF_INIT;
	struct rs_cli_opts opts = {
		.command = "find", .usage = usage, .shortopts = "h", .longopts = options,
		.take = RS_CLI_OPT_TEXT_JSON | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD,
	};
	const char *dots = NULL;
	int opt, err, status;

	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		if (opt == 'm')
			fopts.metric = optarg;
	}
	if (opt < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (optind == argc - 1)
		dots = range_dots(argv[optind]);
	if (!dots)
		return rs_cli_usage("find", "give a range <from>..<to>");
	fopts.format = opts.fmt;
	fopts.branch = opts.branch;
	fopts.per = opts.per;
	fopts.no_workload = opts.no_workload;
	fopts.range = argv[optind];
	status = rs_runsel_open(&sel);
	if (!status)
		status = resolve_range(&from, &to, &sel, argv[optind], dots);
	if (status)
		goto out;
	err = rs_report_find(&out, sel.runs, from, to, &fopts);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = rs_runsel_write(NULL, &out);
out:
	rs_buf_release(&out);
	rs_runsel_close(&sel);
	return status;
}
