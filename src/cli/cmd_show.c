/*
 * `results show`: one run's summary (summary.md) or record (run.json),
 * read from the committed tree: no session content is needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/runs.h"
#include "results/store.h"

static const char usage[] =
	"usage: results show <commit-or-run> [--json]\n"
	"\n"
	"Show one recorded run: its summary.md (duration, CPU time, samples,\n"
	"top functions and files, stats), or with --json its run.json. The run\n"
	"is named by its run id (see 'results list') or by the profiled\n"
	"commit: the full sha or a unique prefix of at least 4 hex digits; when\n"
	"that commit was profiled several times, the most recent run is shown.\n"
	"Works in a clone without any session content. When the run's raw\n"
	"session was removed from the remote by retention (see 'results gc'),\n"
	"a last line says so and when; the summary is kept.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"4 unknown or ambiguous run or commit, 7 corrupt run files, 8 other.\n";

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Print the run `query` names in `repo`: its summary, or with `json` its record. */
static int show(struct rs_repo *repo, const char *query, int json)
{
	struct rs_runs *runs = NULL;
	const struct rs_run_entry *e = NULL;
	struct rs_buf text = RS_BUF_INIT;
	int err, status = RS_EXIT_OK;

	/* one run: the shards the commit map names for it (rs_runs_open_for) */
	err = rs_runs_open_for(&runs, repo, NULL, &query, 1);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = rs_runs_resolve(&e, runs, query);
	if (err) {
		status = rs_cli_error(RS_EXIT_UNKNOWN);
		goto out;
	}
	/* Checked before printing: with --json, callers pipe this into JSON tools. */
	err = rs_show_run_file(&text, runs, e, json);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	/*
	 * The committed bytes: a terminal sees no control byte of them; a
	 * pipe gets --json's record as committed (JSON escapes its controls).
	 */
	if (json && !isatty(STDOUT_FILENO))
		fwrite(text.ptr, 1, text.len, stdout);
	else if (rs_cli_print(stdout, text.ptr, text.len))
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write the output: %s", strerror(errno));
	if (text.len && text.ptr[text.len - 1] != '\n')
		putchar('\n');
	rs_buf_clear(&text);
	/* a note, never an error; on stderr with --json (stdout is JSON) */
	if (rs_show_removed_by_retention(&text, runs, e)) {
		struct rs_buf when = RS_BUF_INIT;

		fprintf(json ? stderr : stdout, "\nraw session removed by retention on %s; summary kept\n",
			rs_cli_term(&when, text.ptr));
		rs_buf_release(&when);
	}
	if (fflush(stdout) != 0)
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write the output");
out:
	rs_buf_release(&text);
	rs_runs_free(runs);
	return status;
}

int cmd_show(int argc, char **argv)
{
	int json = 0, status;
	const struct rs_cli_bind bind[] = { { 'j', &json, NULL }, { 0 } };
	struct rs_cli_opts opts = { .command = "show", .usage = usage, .longopts = options,
				    .bind = bind };
	struct rs_repo *repo = NULL;

	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (optind != argc - 1)
		return rs_cli_usage("show", "give one commit or run id");
	status = rs_cli_open_repo(&repo);
	if (status == RS_EXIT_OK)
		status = show(repo, argv[optind], json);
	rs_repo_free(repo);
	return status;
}
