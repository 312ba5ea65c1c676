/*
 * `results compare`: what changed between two recorded runs, from their
 * committed run.json records (no session download).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/deep.h"
#include "analysis/diff.h"
#include "analysis/render.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "analysis/owncode.h"
#include "cli/runsel.h"
#include "results/error.h"

/* Entries of "own_code" in .results.json used, at most. */
#define OWN_SPECS_MAX 64

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

/* The summary diff, then (--deep) the call paths; one document in JSON. */
static int render_report(struct rs_buf *out, const struct rs_diff *d, int deep,
			 const struct rs_deep_diff *dd, enum rs_format fmt, size_t top)
{
	struct rs_buf a1 = RS_BUF_INIT, a2 = RS_BUF_INIT;
	int err;

	if (!deep || fmt != RS_FORMAT_JSON) {
		err = rs_render_diff(out, d, fmt, top);
		if (!err && deep)
			err = rs_render_deep(out, dd, fmt, top);
		return err;
	}
	/* one JSON document: {"summary": <diff>, "deep": <paths>} */
	err = rs_render_diff(&a1, d, fmt, top);
	if (!err)
		err = rs_render_deep(&a2, dd, fmt, top);
	if (!err)
		err = rs_buf_printf(out, "{\"summary\": %s, \"deep\": %s}\n", a1.ptr, a2.ptr);
	rs_buf_release(&a1);
	rs_buf_release(&a2);
	return err;
}

/* --html FILE: the differential flame graph page. RS_EXIT_*. */
static int write_flame(const char *html, const struct rs_diff *d, const struct rs_deep_diff *dd)
{
	struct rs_buf page = RS_BUF_INIT, title = RS_BUF_INIT;
	int status, err;

	err = rs_buf_printf(&title, "%s -> %s: differential flame graph", d->base_id, d->head_id);
	if (!err)
		err = rs_deep_flame_html(&page, dd, title.ptr);
	status = err ? rs_cli_report(err) : rs_runsel_write(html, &page);
	rs_buf_release(&page);
	rs_buf_release(&title);
	return status;
}

int cmd_compare(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	const struct rs_run_entry *a = NULL, *b = NULL;
	struct rs_diff_opts dopts = { NULL, 0, NULL };
	enum rs_format fmt = RS_FORMAT_TEXT;
	struct rs_diff *d = NULL;
	struct rs_buf out = RS_BUF_INIT;
	json_t *ra = NULL, *rb = NULL;
	const char *output = NULL, *html = NULL;
	size_t top = 10;
	struct rs_buf sa = RS_BUF_INIT, sb = RS_BUF_INIT;
	struct rs_deep_diff *dd = NULL;
	struct rs_owncode own = { NULL, 0 };
	const char *own_specs[OWN_SPECS_MAX];
	json_t *config = NULL;
	struct rs_cli_opts opts = {
		.command = "compare", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_FORMAT | RS_CLI_OPT_WORKLOAD | RS_CLI_OPT_OUTPUT,
	};
	int opt, err, status = RS_EXIT_OK, opened = 0, deep = 0;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		switch (opt) {
		case 't':
			status = rs_runsel_parse_count(optarg, &top);
			if (status)
				return status;
			break;
		case 'd': deep = 1; break;
		case 'H': html = optarg; break;
		}
	}
	if (opt < 0)
		return opts.status;
	fmt = opts.fmt;
	output = opts.output;
	dopts.per = opts.per;
	dopts.no_workload = opts.no_workload;
	if (optind != argc - 2)
		return rs_cli_fail(RS_EXIT_USAGE, "give two runs or commits, base first; "
				   "see 'results compare --help'");
	if (html && !deep)
		return rs_cli_fail(RS_EXIT_USAGE, "--html needs --deep (the flame graph is "
				   "built from the sessions)");
	status = rs_runsel_open(&sel);
	opened = 1;
	if (status)
		goto out;
	/* the project's own code, from the committed config */
	config = rs_runsel_config(&sel);
	own.n_specs = rs_owncode_from_config(config, own_specs, OWN_SPECS_MAX);
	own.specs = own_specs;
	dopts.own = &own;
	status = rs_runsel_resolve(&a, &sel, argv[optind]);
	if (!status)
		status = rs_runsel_resolve(&b, &sel, argv[optind + 1]);
	if (!status)
		status = rs_runsel_load(&ra, &sel, a);
	if (!status)
		status = rs_runsel_load(&rb, &sel, b);
	if (status)
		goto out;
	if (deep) {
		status = rs_runsel_session_path(&sa, &sel, a);
		if (!status)
			status = rs_runsel_session_path(&sb, &sel, b);
		if (status)
			goto out;
	}
	err = rs_diff_runs(&d, ra, rb, &dopts);
	if (!err && deep)
		err = rs_deep_diff_sessions_with(&dd, sa.ptr, sb.ptr, 0, d);
	if (!err)
		err = render_report(&out, d, deep, dd, fmt, top);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (html) {
		status = write_flame(html, d, dd);
		if (status)
			goto out;
	}
	status = rs_runsel_write(output, &out);
out:
	rs_deep_diff_free(dd);
	rs_buf_release(&sa);
	rs_buf_release(&sb);
	rs_diff_free(d);
	json_decref(ra);
	json_decref(rb);
	rs_buf_release(&out);
	json_decref(config);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}
