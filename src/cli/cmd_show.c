/*
 * `results show`: one run's summary (summary.md) or record (run.json),
 * read from the committed tree: no session content is needed.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "repo/repo.h"
#include "repo/run.h"
#include "repo/runindex.h"
#include "util/error.h"

static const char usage[] =
	"usage: results show <commit-or-run> [--json]\n"
	"\n"
	"Show one recorded run: its summary.md (duration, CPU time, samples,\n"
	"top functions and files, stats), or with --json its run.json. The run\n"
	"is named by its run id (see 'results list') or by the profiled\n"
	"commit: the full sha or a unique prefix of at least 4 hex digits; when\n"
	"that commit was profiled several times, the most recent run is shown.\n"
	"Works in a clone without any session content.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"4 unknown or ambiguous run or commit, 7 corrupt run files, 8 other.\n";

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_show(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_runindex idx;
	const struct rs_run_entry *e = NULL;
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	json_t *doc = NULL;
	json_error_t jerr;
	int opt, err, json = 0, status = RS_EXIT_OK;

	rs_runindex_init(&idx);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			goto out;
		case 'j': json = 1; break;
		default:
			status = rs_cli_fail(RS_EXIT_USAGE,
					     "unknown option '%s'; see 'results show --help'",
					     argv[optind - 1]);
			goto out;
		}
	}
	if (optind != argc - 1) {
		status = rs_cli_fail(RS_EXIT_USAGE, "give exactly one commit or run id; "
				     "see 'results show --help'");
		goto out;
	}
	status = rs_cli_open_repo(&repo);
	if (status != RS_EXIT_OK)
		goto out;
	if ((err = rs_runindex_load(&idx, repo, NULL, 0))) {
		status = rs_cli_report(err);
		goto out;
	}
	if ((err = rs_runindex_resolve(&e, &idx, argv[optind]))) {
		status = rs_cli_error(RS_EXIT_UNKNOWN);
		goto out;
	}
	if ((err = rs_buf_printf(&path, "%s/%s", e->path, json ? "run.json" : "summary.md"))) {
		status = rs_cli_report(err);
		goto out;
	}
	err = rs_repo_read_tree_file(repo, NULL, path.ptr,
				     json ? RS_RUN_MAX_RUN_JSON : RS_RUN_MAX_SUMMARY_MD, &text);
	if (err) {
		status = rs_cli_fail(err == RS_ENOTFOUND ? RS_EXIT_CORRUPT : rs_cli_exit_for(err),
				     "run %s is in the index but %s cannot be read: %s",
				     e->id, path.ptr, rs_error_message());
		goto out;
	}
	if (json) {
		/* Check before printing: callers pipe this into JSON tools. */
		doc = json_loadb(text.ptr, text.len, 0, &jerr);
		if (!json_is_object(doc)) {
			status = rs_cli_fail(RS_EXIT_CORRUPT, "%s is not a JSON object: %s",
					     path.ptr, doc ? "wrong type" : jerr.text);
			goto out;
		}
	}
	fwrite(text.ptr, 1, text.len, stdout);
	if (text.len && text.ptr[text.len - 1] != '\n')
		putchar('\n');
	if (fflush(stdout) != 0)
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write the output");
out:
	json_decref(doc);
	rs_buf_release(&path);
	rs_buf_release(&text);
	rs_runindex_release(&idx);
	rs_repo_free(repo);
	return status;
}
