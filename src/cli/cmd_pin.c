/*
 * results pin <run>... [--unpin]: keep (or stop keeping) the raw sessions
 * of runs whatever the retention policy says. Pins are committed in
 * pins.txt, one run id per line, so that every clone's gc honours them
 * (results/pins.h does the work; this file reads the command line and
 * reports).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/error.h"
#include "results/pins.h"
#include "results/repo.h"

static const char usage[] =
	"usage: results pin <run-or-commit>... [--unpin]\n"
	"\n"
	"Keep the raw sessions of these runs whatever the retention policy says\n"
	"('results gc'); --unpin stops keeping them. Commits pins.txt.\n";

/* The options: 1 for --unpin, 0 without; -1 with *status to return. */
static int parse_args(int argc, char **argv, int *status)
{
	static const struct option longopts[] = {
		{ "unpin", no_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	int unpin = 0;
	const struct rs_cli_bind bind[] = { { 'u', &unpin, NULL }, { 0 } };
	struct rs_cli_opts opts = { .command = "pin", .usage = usage, .longopts = longopts,
				    .bind = bind };

	*status = RS_EXIT_OK;
	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return -1;
	}
	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0) {
		*status = opts.status;
		return -1;
	}
	if (optind == argc) {
		*status = rs_cli_usage("pin", "name at least one run");
		return -1;
	}
	return unpin;
}

/* Pin or unpin each run named, saying what it was: RS_EXIT_*. */
static int change_all(struct rs_pins *pins, int unpin, int argc, char **argv)
{
	for (int i = optind; i < argc; i++) {
		const char *id;
		int had, err = rs_pins_change(pins, argv[i], !unpin, &id, &had);

		if (err == RS_ENOTFOUND)
			return rs_cli_error(RS_EXIT_UNKNOWN);
		if (err)
			return rs_cli_report(err);
		struct rs_buf safe = RS_BUF_INIT;

		printf("%s %s\n", unpin ? (had ? "unpinned" : "was not pinned:")
				       : (had ? "already pinned:" : "pinned"), rs_cli_term(&safe, id));
		rs_buf_release(&safe);
	}
	return RS_EXIT_OK;
}

int cmd_pin(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_pins *pins = NULL;
	int unpin, status, err, changed = 0;

	unpin = parse_args(argc, argv, &status);
	if (unpin < 0)
		return status;
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	err = rs_pins_open(&pins, repo);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	status = change_all(pins, unpin, argc, argv);
	if (status)
		goto out;
	err = rs_pins_commit(pins, &changed);
	if (err)
		status = rs_cli_report(err);
	else if (changed)
		printf("committed pins.txt: 'git push' to share it\n");
out:
	rs_pins_free(pins);
	rs_repo_free(repo);
	return status;
}
