/*
 * `results check`: the CI gate. Exit 0 when nothing regressed, 1 when
 * something did, 2 on any error -- CI scripts need to tell a slower
 * commit from a broken job, nothing finer.
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
#include "results/runs.h"

#define METRICS_MAX 32

static const char usage[] =
	"usage: results check [<run-or-commit>] [--baseline <run-or-commit> | --window N]\n"
	"                     [--threshold PCT] [--metric NAME]... [--branch NAME]\n"
	"                     [--per KEY | --no-workload] [--strict] [--fail-on-functions]\n"
	"                     [--format text|markdown|json] [-o FILE]\n"
	"\n"
	"Decide whether a run (default: the newest, on --branch if given) is\n"
	"slower than its baseline: the median of a window of the newest\n"
	"comparable runs of earlier commits (5; --window N for N), so one odd run\n"
	"neither becomes the baseline nor hides a change; --baseline names one run.\n"
	"\n"
	"Noise-aware: the spread of the window (median absolute deviation) and of\n"
	"repeated runs of one commit set a noise band, and a metric is flagged only\n"
	"when its change exceeds both the band and the threshold (default 5%).\n"
	"Runs from other machines or runners (machine.runner, hostname, cpu_model\n"
	"in run.json) are never used as the baseline. A run whose wall and CPU time\n"
	"disagree far more than in the window, or whose functions all slowed alike\n"
	"(shares of the run unchanged, every sample longer), is reported as \"the\n"
	"machine was slower\" and passes; CPU time decides when wall time is\n"
	"distorted, and such a run's wall time is never a baseline. Functions are\n"
	"judged against their own noise (sampling error from their sample counts,\n"
	"the window's spread): one beyond it is a warning when the run as a whole\n"
	"is within its noise, a failure with --fail-on-functions. A faster run\n"
	"names where the time was saved.\n"
	"\n"
	"Checked metrics: duration and cpu_time, or those named with --metric\n"
	"(any numeric metric or stat, e.g. mem.peak_mb; higher is worse). When\n"
	"the runs record a workload (months, population, n_individuals... or\n"
	"--per KEY), time is judged per unit of it, so a commit that simulates\n"
	"more is not called slower; with the same workload on both sides time is\n"
	"compared as is. Runs of another configuration (another population,\n"
	"months, recorded argument or profiled program and arguments, apart from\n"
	"the workload key time is normalised by) are never the baseline; a run\n"
	"recorded without stats is an unknown configuration,\n"
	"compared only with others like it. With no comparable run the check\n"
	"says so and passes, or fails with status 2 under --strict. A session\n"
	"recorded twice (same oid) counts once. A run recorded with\n"
	"--meta accept=REASON is an accepted slowdown: reported, exit 0.\n"
	"\n"
	"The report names the metrics and the culprits, from where the added\n"
	"time appears by calling context: a new call (the highest new frame),\n"
	"a function slower wherever it is called, or one slower in its own body,\n"
	"each with its call path; then the frames responsible by total time, the\n"
	"project's own code first (\"own_code\" in .results.json; default: not\n"
	"site-packages, dist-packages or the standard library). --format\n"
	"markdown suits $GITHUB_STEP_SUMMARY or a pull-request comment.\n"
	"\n"
	"exit status: 0 no regression (or nothing comparable), 1 regression,\n"
	"2 error (bad usage, not a results repository, unknown run, unreadable\n"
	"run files; with --strict, no comparable baseline).\n";

static const struct option options[] = {
	{ "baseline", required_argument, NULL, 'b' },
	{ "window", required_argument, NULL, 'w' },
	{ "threshold", required_argument, NULL, 't' },
	{ "metric", required_argument, NULL, 'm' },
	RS_CLI_OPTION_BRANCH,
	RS_CLI_OPTION_PER,
	RS_CLI_OPTION_NO_WORKLOAD,
	{ "strict", no_argument, NULL, 'S' },
	{ "fail-on-functions", no_argument, NULL, 'F' },
	RS_CLI_OPTION_FORMAT,
	RS_CLI_OPTION_OUTPUT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* The run named (`query`), or else the newest run (on `branch` when given). */
static int pick_head(const struct rs_run_entry **head, const struct rs_runsel *sel,
		     const char *query, const char *branch)
{
	const struct rs_run_entry **newest = NULL;
	size_t n = 0;
	int err;

	if (query)
		return rs_runsel_resolve(head, sel, query);
	err = rs_runs_newest(&newest, &n, sel->runs, branch, 1);
	if (err)
		return rs_cli_report(err);
	if (n)
		*head = newest[0];
	free(newest);
	if (n)
		return RS_EXIT_OK;
	return rs_cli_fail(RS_EXIT_UNKNOWN, branch ? "no run recorded on branch '%s'"
			   : "no run recorded yet%s", branch ? branch : "");
}

/* What the command line asks for. */
struct check_args {
	struct rs_report_check_opts copts;
	const char *metrics[METRICS_MAX];
	const char *baseline, *output, *query;
	int strict;
};

/* One option of the command's own; RS_EXIT_*. */
static int take_option(void *ctx, struct rs_cli_opts *opts, int opt)
{
	struct check_args *a = ctx;
	int status;

	(void)opts;
	switch (opt) {
	case 'b': a->baseline = optarg; break;
	case 'w':
		status = rs_runsel_parse_count(optarg, &a->copts.window);
		if (status)
			return status;
		if (a->copts.window > RS_REPORT_CHECK_HISTORY_MAX)
			return rs_cli_fail(RS_EXIT_USAGE, "--window is at most %d runs",
					   RS_REPORT_CHECK_HISTORY_MAX);
		break;
	case 't':
		return rs_runsel_parse_pct(optarg, &a->copts.threshold);
	case 'm':
		if (a->copts.n_metrics == METRICS_MAX)
			return rs_cli_fail(RS_EXIT_USAGE, "at most %d --metric options",
					   METRICS_MAX);
		a->metrics[a->copts.n_metrics++] = optarg;
		a->copts.metrics = a->metrics;
		break;
	case 'S': a->strict = 1; break;
	case 'F': a->copts.fail_on_functions = 1; break;
	}
	return RS_EXIT_OK;
}

/* Parse the command line into `a`; RS_EXIT_OK to go on, else the status to return. */
static int parse_args(struct check_args *a, int argc, char **argv, int *done)
{
	struct rs_cli_opts opts = {
		.command = "check", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_FORMAT | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD |
			 RS_CLI_OPT_OUTPUT,
	};
	int opt;

	*done = 1;
	opt = rs_cli_opts_parse(&opts, argc, argv, take_option, a);
	if (opt < 0)
		return opts.status;
	a->copts.format = opts.fmt;
	a->output = opts.output;
	a->copts.branch = opts.branch;
	a->copts.per = opts.per;
	a->copts.no_workload = opts.no_workload;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (a->baseline && a->copts.window)
		return rs_cli_fail(RS_EXIT_USAGE, "--baseline and --window exclude each other");
	a->query = optind == argc - 1 ? argv[optind] : NULL;
	*done = 0;
	return RS_EXIT_OK;
}

/* The head run and (--baseline) the baseline run, resolved and loaded. */
static int load_runs(struct rs_run_doc **hd, struct rs_run_doc **bd,
		     const struct rs_run_entry **head, const struct rs_runsel *sel,
		     const struct check_args *a)
{
	const struct rs_run_entry *base = NULL;
	int status;

	status = pick_head(head, sel, a->query, a->copts.branch);
	if (status)
		return status;
	status = rs_runsel_load(hd, sel, *head);
	if (status || !a->baseline)
		return status;
	status = rs_runsel_resolve(&base, sel, a->baseline);
	if (status)
		return status;
	return rs_runsel_load(bd, sel, base);
}

/*
 * `check RUN` without --baseline judges RUN against the runs before it on
 * its branch. When RUN is the newest run of that branch (the run a CI job
 * just recorded), those are what a bounded load of the branch holds
 * (rs_runsel_open_window, through the branch map): RUN is resolved first
 * through the commit map, to learn its branch, then found again in that
 * load. An older run, or --branch naming another branch, loads every run
 * as before. The verdict is the same either way.
 */
static int open_named(struct rs_runsel *sel, const struct check_args *a, size_t want)
{
	struct rs_runsel probe = RS_RUNSEL_INIT;
	const struct rs_run_entry *e = NULL, **newest = NULL;
	char *id = NULL, *branch = NULL;
	size_t n = 0;
	int status, err, bounded = 0;

	status = rs_runsel_open_for(&probe, &a->query, 1);
	if (!status)
		status = rs_runsel_resolve(&e, &probe, a->query);
	if (status)
		goto out;
	if (!a->copts.branch || !strcmp(a->copts.branch, rs_run_entry_branch(e))) {
		id = strdup(rs_run_entry_id(e));
		branch = strdup(rs_run_entry_branch(e));
		if (!id || !branch) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
	}
	rs_runsel_close(&probe);
	if (branch) {
		status = rs_runsel_open_window(sel, want, branch, 0);
		if (status)
			goto out;
		err = rs_runs_newest(&newest, &n, sel->runs, branch, 1);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
		bounded = n == 1 && !strcmp(rs_run_entry_id(newest[0]), id);
		if (!bounded)
			rs_runsel_close(sel);
	}
	if (!bounded)
		status = rs_runsel_open(sel);
out:
	rs_runsel_close(&probe);
	free(newest);
	free(id);
	free(branch);
	return status;
}

static int run(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct check_args a = { .baseline = NULL };
	struct rs_report_verdict verdict = { 0, 0 };
	const struct rs_run_entry *head = NULL;
	struct rs_run_doc *hd = NULL, *bd = NULL;
	struct rs_buf out = RS_BUF_INIT;
	size_t want;
	int err, status, done;

	status = parse_args(&a, argc, argv, &done);
	if (done)
		return status;
	want = 1 + (a.copts.window > RS_REPORT_CHECK_HISTORY_DEFAULT ? a.copts.window
								     : RS_REPORT_CHECK_HISTORY_DEFAULT);
	/*
	 * Without a named run, the head is the newest (of --branch): only the
	 * shards holding it and the window of its branch before it are read.
	 * A named run against --baseline needs those two runs and no history:
	 * the shards the commit map names for them (rs_runs_open_for); a
	 * named run alone, its branch's window before it (open_named).
	 */
	if (a.query && a.baseline) {
		const char *const queries[] = { a.query, a.baseline };

		status = rs_runsel_open_for(&sel, queries, 2);
	} else if (a.baseline) {
		status = rs_runsel_open(&sel);
	} else if (a.query) {
		status = open_named(&sel, &a, want);
	} else {
		status = rs_runsel_open_window(&sel, want, a.copts.branch, !a.copts.branch);
	}
	if (!status)
		status = load_runs(&hd, &bd, &head, &sel, &a);
	if (status)
		goto out;
	a.copts.baseline = bd;
	err = rs_report_check(&out, &verdict, sel.runs, head, hd, &a.copts);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = rs_runsel_write(a.output, &out);
	if (!status && verdict.regressed)
		status = RS_EXIT_REGRESSION;
	if (!status && a.strict && !verdict.n_baseline)
		status = rs_cli_fail(RS_EXIT_USAGE, "no comparable baseline for run '%s' "
				     "(--strict); record a run of the same configuration "
				     "on this machine first", rs_run_doc_id(hd));
out:
	rs_run_doc_free(hd);
	rs_run_doc_free(bd);
	rs_buf_release(&out);
	rs_runsel_close(&sel);
	return status;
}

int cmd_check(int argc, char **argv)
{
	int status = run(argc, argv);

	return status == RS_EXIT_OK || status == RS_EXIT_REGRESSION ? status
								    : RS_EXIT_USAGE;
}
