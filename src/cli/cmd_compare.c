/*
 * `results compare`: what changed between two recorded runs, from their
 * committed run.json records (no session download).
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/report.h"
#include "results/runs.h"

static const char usage[] =
	"usage: results compare <run-or-commit> <run-or-commit>\n"
	"                       [--format text|markdown|json] [--top N]\n"
	"                       [--per KEY | --no-workload] [--deep [--html FILE]]\n"
	"                       [-o FILE]\n"
	"\n"
	"Compare two recorded runs, the first being the base: every metric both\n"
	"runs have (duration, CPU time, samples, numeric stats) with absolute and\n"
	"relative change; where added time went (by total time, the project's\n"
	"own code first); the functions whose own and total time changed most,\n"
	"in seconds and as a share of the sampled time; new and vanished\n"
	"functions (new: did not run at all in the base); and renames (same file\n"
	"and first line, or nearby with a similar time) shown as renames.\n"
	"\n"
	"When both runs record a workload in their stats (months, population,\n"
	"n_individuals ... or the key given with --per), time metrics are also\n"
	"shown per unit of it. Reads only committed files: works in a clone\n"
	"without session content. --format markdown suits a pull-request comment\n"
	"or $GITHUB_STEP_SUMMARY.\n"
	"\n"
	"--deep also reads the two raw sessions (fetched on demand, see 'results\n"
	"fetch') and reports the functions that did not run in the base and the\n"
	"call paths whose total time changed most, renamed functions matched\n"
	"under their new names. --html FILE also writes a differential flame graph:\n"
	"the head's call paths coloured by their change against the base, one\n"
	"self-contained page.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"4 unknown or ambiguous run or commit, 5 remote unreachable and 6 session\n"
	"missing on the remote (--deep), 7 corrupt run files, 8 other.\n";

static const struct option options[] = {
	RS_CLI_OPTION_FORMAT,
	{ "top", required_argument, NULL, 't' },
	RS_CLI_OPTION_PER,
	RS_CLI_OPTION_NO_WORKLOAD,
	{ "deep", no_argument, NULL, 'd' },
	{ "html", required_argument, NULL, 'H' },
	RS_CLI_OPTION_OUTPUT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* What the command line asks for. */
struct compare_args {
	struct rs_report_compare_opts copts;
	const char *output, *html;
	int deep;
};

/* One option of the command's own; RS_EXIT_*. */
static int take_option(void *ctx, struct rs_cli_opts *opts, int opt)
{
	struct compare_args *a = ctx;

	(void)opts;
	switch (opt) {
	case 't': return rs_runsel_parse_count(optarg, &a->copts.top);
	case 'd': a->deep = 1; break;
	case 'H': a->html = optarg; break;
	}
	return RS_EXIT_OK;
}

/* Parse the command line into `a`; `*done` when the command ends with the status returned. */
static int parse_args(struct compare_args *a, int argc, char **argv, int *done)
{
	struct rs_cli_opts opts = {
		.command = "compare", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_FORMAT | RS_CLI_OPT_WORKLOAD | RS_CLI_OPT_OUTPUT,
	};
	int opt;

	*done = 1;
	a->copts.top = 10;
	opt = rs_cli_opts_parse(&opts, argc, argv, take_option, a);
	if (opt < 0)
		return opts.status;
	a->copts.format = opts.fmt;
	a->output = opts.output;
	a->copts.per = opts.per;
	a->copts.no_workload = opts.no_workload;
	if (rs_cli_opts_operands(&opts, argc, argv, 2) < 0)
		return opts.status;
	if (optind != argc - 2)
		return rs_cli_usage("compare", "give two runs or commits, base first");
	if (a->html && !a->deep)
		return rs_cli_fail(RS_EXIT_USAGE, "--html needs --deep (the flame graph is "
				   "built from the sessions)");
	*done = 0;
	return RS_EXIT_OK;
}

/* The two runs, resolved and loaded. */
static int load_runs(struct rs_run_doc **da, struct rs_run_doc **db,
		     const struct rs_run_entry **a, const struct rs_run_entry **b,
		     const struct rs_runsel *sel, char **names)
{
	int status;

	status = rs_runsel_resolve(a, sel, names[0]);
	if (status)
		return status;
	status = rs_runsel_resolve(b, sel, names[1]);
	if (status)
		return status;
	status = rs_runsel_load(da, sel, *a);
	if (status)
		return status;
	return rs_runsel_load(db, sel, *b);
}

int cmd_compare(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct compare_args args = { .output = NULL };
	const struct rs_run_entry *a = NULL, *b = NULL;
	struct rs_run_doc *da = NULL, *db = NULL;
	struct rs_buf out = RS_BUF_INIT, flame = RS_BUF_INIT;
	struct rs_buf sa = RS_BUF_INIT, sb = RS_BUF_INIT;
	int err, status, done;

	status = parse_args(&args, argc, argv, &done);
	if (done)
		return status;
	/* two runs and no history: the shards the commit map names for them */
	status = rs_runsel_open_for(&sel, (const char *const *)argv + optind, 2);
	if (!status)
		status = load_runs(&da, &db, &a, &b, &sel, argv + optind);
	if (!status && args.deep) {
		status = rs_runsel_session_path(&sa, &sel, a, da);
		if (!status)
			status = rs_runsel_session_path(&sb, &sel, b, db);
		args.copts.base_session = sa.ptr;
		args.copts.head_session = sb.ptr;
	}
	if (status)
		goto out;
	err = rs_report_compare(&out, args.html ? &flame : NULL, sel.runs, da, db, &args.copts);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (args.html) {
		status = rs_runsel_write(args.html, &flame);
		if (status)
			goto out;
	}
	status = rs_runsel_write(args.output, &out);
out:
	rs_buf_release(&sa);
	rs_buf_release(&sb);
	rs_run_doc_free(da);
	rs_run_doc_free(db);
	rs_buf_release(&out);
	rs_buf_release(&flame);
	rs_runsel_close(&sel);
	return status;
}
