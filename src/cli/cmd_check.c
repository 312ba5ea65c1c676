/*
 * `results check`: the CI gate. Exit 0 when nothing regressed, 1 when
 * something did, 2 on any error -- CI scripts need to tell a slower
 * commit from a broken job, nothing finer.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/render.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "analysis/owncode.h"
#include "cli/runsel.h"
#include "results/error.h"

/* Earlier runs read for the baseline and the noise estimate: every run
 * costs a run.json read, so look back only as far as the window (or this
 * default) needs -- enough for a commit's re-runs and a noise estimate. */
#define HISTORY_MAX 64
#define HISTORY_DEFAULT 24
#define METRICS_MAX 32

/* Entries of "own_code" in .results.json used, at most. */
#define OWN_SPECS_MAX 64

static const char usage[] =
	"usage: results check [<run-or-commit>] [--baseline <run-or-commit> | --window N]\n"
	"                     [--threshold PCT] [--metric NAME]... [--branch NAME]\n"
	"                     [--per KEY | --no-workload] [--strict]\n"
	"                     [--format text|markdown|json] [-o FILE]\n"
	"\n"
	"Decide whether a run (default: the newest, on --branch if given) is\n"
	"slower than its baseline: by default the runs of the previous profiled\n"
	"commit on the same branch (their median); --window N takes the N\n"
	"newest earlier runs instead; --baseline names one run.\n"
	"\n"
	"Noise-aware: where the history holds repeated runs of the same commit\n"
	"on the same machine, their spread sets a noise band, and a metric is\n"
	"flagged only when its change exceeds both the band and the threshold\n"
	"(default 5%). Runs from other machines or runners (machine.runner,\n"
	"hostname, cpu_model in run.json) are never used as the baseline.\n"
	"\n"
	"Checked metrics: duration and cpu_time, or those named with --metric\n"
	"(any numeric metric or stat, e.g. mem.peak_mb; higher is worse). When\n"
	"the runs record a workload (months, population, n_individuals... or\n"
	"--per KEY), time is judged per unit of it, so a commit that simulates\n"
	"more is not called slower; with the same workload on both sides time is\n"
	"compared as is. Runs of another configuration (another population,\n"
	"months or recorded argument, apart from the workload key time is\n"
	"normalised by) are never the baseline: with no comparable run the check\n"
	"says so and passes, or fails with status 2 under --strict. A session\n"
	"recorded twice (same oid) counts once. A run recorded with\n"
	"--meta accept=REASON is an accepted slowdown: reported, exit 0.\n"
	"\n"
	"The report names the metrics and the frames responsible, by total time,\n"
	"the project's own code first (\"own_code\" in .results.json; default:\n"
	"not site-packages, dist-packages or the standard library). --format\n"
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
	RS_CLI_OPTION_FORMAT,
	RS_CLI_OPTION_OUTPUT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* The run named (`query`), or else the newest run (on `branch` when given). */
static int pick_head(const struct rs_run_entry **head, struct rs_runsel *sel, const char *query,
		     const char *branch)
{
	if (query)
		return rs_runsel_resolve(head, sel, query);
	for (size_t i = sel->idx.count; i-- > 0;)
		if (!branch || (sel->idx.runs[i].branch &&
				!strcmp(sel->idx.runs[i].branch, branch))) {
			*head = &sel->idx.runs[i];
			return RS_EXIT_OK;
		}
	return rs_cli_fail(RS_EXIT_UNKNOWN, branch ? "no run recorded on branch '%s'"
			   : "no run recorded yet%s", branch ? branch : "");
}

/*
 * The runs before `head` on its branch (or `branch`), newest first, at
 * most the window (or HISTORY_DEFAULT); `*n` counts those loaded, also
 * when one fails.
 */
static int load_history(json_t **hist, size_t *n, struct rs_runsel *sel,
			const struct rs_run_entry *head, const char *branch, size_t window)
{
	const char *hb = branch ? branch : head->branch;
	size_t want = window > HISTORY_DEFAULT ? window : HISTORY_DEFAULT;
	int status;

	for (size_t i = rs_runsel_pos(sel, head); i-- > 0 && *n < want;) {
		const struct rs_run_entry *e = &sel->idx.runs[i];

		if (hb && (!e->branch || strcmp(e->branch, hb)))
			continue;
		status = rs_runsel_load(&hist[*n], sel, e);
		if (status)
			return status;
		(*n)++;
	}
	return RS_EXIT_OK;
}

static int run(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	struct rs_check_opts copts = { 0 };
	const char *metrics[METRICS_MAX];
	const char *baseline = NULL, *branch = NULL, *output = NULL;
	const struct rs_run_entry *head = NULL, *base = NULL;
	enum rs_format fmt = RS_FORMAT_TEXT;
	struct rs_check_result *res = NULL;
	struct rs_buf out = RS_BUF_INIT;
	json_t *hj = NULL, *hist[HISTORY_MAX];
	size_t n_hist = 0, i;
	struct rs_owncode own = { NULL, 0 };
	const char *own_specs[OWN_SPECS_MAX];
	json_t *config = NULL;
	struct rs_cli_opts opts = {
		.command = "check", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_FORMAT | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD |
			 RS_CLI_OPT_OUTPUT,
	};
	int opt, err, status = RS_EXIT_OK, opened = 0, strict = 0;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		switch (opt) {
		case 'b': baseline = optarg; break;
		case 'w':
			status = rs_runsel_parse_count(optarg, &copts.window);
			if (status)
				return status;
			if (copts.window > HISTORY_MAX)
				return rs_cli_fail(RS_EXIT_USAGE, "--window is at most %d runs",
						   HISTORY_MAX);
			break;
		case 't':
			status = rs_runsel_parse_pct(optarg, &copts.threshold);
			if (status)
				return status;
			break;
		case 'm':
			if (copts.n_metrics == METRICS_MAX)
				return rs_cli_fail(RS_EXIT_USAGE, "at most %d --metric options",
						   METRICS_MAX);
			metrics[copts.n_metrics++] = optarg;
			copts.metrics = metrics;
			break;
		case 'S': strict = 1; break;
		}
	}
	if (opt < 0)
		return opts.status;
	fmt = opts.fmt;
	output = opts.output;
	branch = opts.branch;
	copts.per = opts.per;
	copts.no_workload = opts.no_workload;
	if (optind < argc - 1)
		return rs_cli_fail(RS_EXIT_USAGE, "give at most one run or commit; "
				   "see 'results check --help'");
	if (baseline && copts.window)
		return rs_cli_fail(RS_EXIT_USAGE, "--baseline and --window exclude each other");

	status = rs_runsel_open(&sel);
	opened = 1;
	if (status)
		goto out;
	/* the project's own code, from the committed config */
	config = rs_runsel_config(&sel);
	own.n_specs = rs_owncode_from_config(config, own_specs, OWN_SPECS_MAX);
	own.specs = own_specs;
	copts.own = &own;
	status = pick_head(&head, &sel, optind == argc - 1 ? argv[optind] : NULL, branch);
	if (!status)
		status = rs_runsel_load(&hj, &sel, head);
	if (!status && baseline) {
		status = rs_runsel_resolve(&base, &sel, baseline);
		if (!status)
			status = rs_runsel_load(&hist[0], &sel, base);
		if (!status) {
			n_hist = 1;
			copts.explicit_baseline = 1;
		}
	} else if (!status) {
		status = load_history(hist, &n_hist, &sel, head, branch, copts.window);
	}
	if (status)
		goto out;

	err = rs_check_run(&res, hj, (const json_t *const *)hist, n_hist, &copts);
	if (!err)
		err = rs_render_check(&out, res, fmt);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = rs_runsel_write(output, &out);
	if (!status && res->regressed)
		status = RS_EXIT_REGRESSION;
	if (!status && strict && !res->n_baseline)
		status = rs_cli_fail(RS_EXIT_USAGE, "no comparable baseline for run '%s' "
				     "(--strict); record a run of the same configuration "
				     "on this machine first", res->head_id);
out:
	rs_check_free(res);
	json_decref(hj);
	for (i = 0; i < n_hist; i++)
		json_decref(hist[i]);
	rs_buf_release(&out);
	json_decref(config);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}

int cmd_check(int argc, char **argv)
{
	int status = run(argc, argv);

	return status == RS_EXIT_OK || status == RS_EXIT_REGRESSION ? status
								    : RS_EXIT_USAGE;
}
