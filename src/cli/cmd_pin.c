/*
 * results pin <run>... [--unpin]: keep (or stop keeping) the raw sessions
 * of runs whatever the retention policy says. Pins are committed in
 * pins.txt, one run id per line, so that every clone's gc honours them.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "repo/commit.h"
#include "repo/repo.h"
#include "repo/retention.h"
#include "repo/runindex.h"
#include "results/error.h"

#define PINS_MAX (1u * 1024 * 1024)

static const char usage[] =
	"usage: results pin <run-or-commit>... [--unpin]\n"
	"\n"
	"Keep the raw sessions of these runs whatever the retention policy says\n"
	"('results gc'); --unpin stops keeping them. Commits pins.txt.\n";

/* `text` without the line `id`; 1 when it was there. */
static int drop_line(struct rs_buf *out, const struct rs_buf *text, const char *id)
{
	const char *p = text->ptr, *end = text->ptr + text->len;
	int found = 0;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len == strlen(id) && !memcmp(p, id, len))
			found = 1;
		else if (rs_buf_put(out, p, len) || rs_buf_putc(out, '\n'))
			return -1;
		p = nl ? nl + 1 : NULL;
	}
	return found;
}

int cmd_pin(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "unpin", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_repo *repo = NULL;
	struct rs_runindex idx;
	struct rs_buf pins = RS_BUF_INIT, next = RS_BUF_INIT, msg = RS_BUF_INIT;
	struct rs_commit_options co = { 0 };
	struct rs_commit_file file = { 0 };
	int unpin = 0, c, status = RS_EXIT_OK, err, changed = 0, i;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		if (c != 'u')
			return rs_cli_fail(RS_EXIT_USAGE, "see 'results pin --help'");
		unpin = 1;
	}
	if (optind == argc)
		return rs_cli_fail(RS_EXIT_USAGE, "name at least one run; see 'results pin --help'");
	rs_runindex_init(&idx);
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	err = rs_runindex_load(&idx, repo, NULL, 0);
	if (!err) {
		err = rs_repo_read_tree_file(repo, NULL, RS_PINS_FILE, PINS_MAX, &pins);
		if (err == RS_ENOTFOUND) {
			rs_error_clear();
			err = rs_buf_puts(&pins, "# Runs whose raw sessions 'results gc' keeps: 'results pin <run>'\n");
		}
	}
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = rs_buf_puts(&msg, unpin ? "results: unpin" : "results: pin");
	for (i = optind; !err && i < argc; i++) {
		const struct rs_run_entry *run = NULL;
		int had;

		if (rs_runindex_resolve(&run, &idx, argv[i])) {
			status = rs_cli_error(RS_EXIT_UNKNOWN);
			goto out;
		}
		rs_buf_clear(&next);
		had = drop_line(&next, &pins, run->id);
		if (had < 0) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			break;
		}
		if (!unpin && !had)
			err = rs_buf_printf(&next, "%s\n", run->id);
		if (!err) {
			rs_buf_clear(&pins);
			err = rs_buf_put(&pins, next.ptr, next.len);
		}
		if (!err)
			err = rs_buf_printf(&msg, " %s", run->id);
		if (!err)
			printf("%s %s\n", unpin ? (had ? "unpinned" : "was not pinned:") : (had ? "already pinned:" : "pinned"),
			       run->id);
	}
	if (!err) {
		file.path = RS_PINS_FILE;
		file.data = pins.ptr;
		file.size = pins.len;
		co.message = msg.ptr;
		err = rs_commit_files(repo, &file, 1, &co, NULL, &changed);
	}
	if (err)
		status = rs_cli_report(err);
	else if (changed)
		printf("committed %s: 'git push' to share it\n", RS_PINS_FILE);
out:
	rs_runindex_release(&idx);
	rs_buf_release(&pins);
	rs_buf_release(&next);
	rs_buf_release(&msg);
	rs_repo_free(repo);
	return status;
}
