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
#include "remote/remote.h"
#include "repo/repo.h"
#include "repo/run.h"
#include "repo/runindex.h"
#include "store/format.h"
#include "store/maint.h"
#include "results/error.h"
#include "util/hash.h"

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

/*
 * When the remote answers and the run's session is gone from it with a
 * retention tombstone: the date ("2026-12-01") in `date`, 1. Otherwise 0,
 * and nothing said: no remote, a remote that cannot be opened or does
 * not answer, a session present or missing for another reason.
 */
static int removed_by_retention(struct rs_repo *repo, const struct rs_run_entry *e,
				struct rs_buf *date)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT, key = RS_BUF_INIT;
	struct rs_remote *remote = NULL;
	const json_t *files, *f;
	json_t *doc = NULL;
	const char *hex = NULL;
	struct rs_id oid;
	size_t i;
	int removed = 0;

	if (rs_buf_printf(&path, "%s/run.json", e->path) ||
	    rs_repo_read_tree_file(repo, NULL, path.ptr, RS_RUN_MAX_RUN_JSON, &text))
		goto out;
	doc = json_loadb(text.ptr, text.len, 0, NULL);
	files = json_object_get(doc, "files");
	json_array_foreach(files, i, f) {
		const char *role = json_string_value(json_object_get(f, "role"));

		if (role && !strcmp(role, "session") && json_is_true(json_object_get(f, "lfs"))) {
			hex = json_string_value(json_object_get(f, "oid"));
			break;
		}
	}
	if (!hex || rs_id_from_hex(&oid, hex, strlen(hex)) || rs_key_manifest(&key, &oid) ||
	    rs_repo_open_remote(repo, &remote, NULL))
		goto out;
	/* only a manifest that is not there: a remote that does not answer
	 * says nothing either way */
	if (remote->stat(remote, key.ptr, NULL) != RS_ENOTFOUND)
		goto out;
	removed = rs_store_removed_date(remote, &oid, date) == 0;
out:
	rs_error_clear();
	rs_remote_free(remote);
	json_decref(doc);
	rs_buf_release(&path);
	rs_buf_release(&text);
	rs_buf_release(&key);
	return removed;
}

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
	rs_buf_clear(&text);
	/* a note, never an error; on stderr with --json (stdout is JSON) */
	if (removed_by_retention(repo, e, &text))
		fprintf(json ? stderr : stdout, "\nraw session removed by retention on %s; summary kept\n",
			text.ptr);
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
