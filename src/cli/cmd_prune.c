/*
 * results prune [--dry-run]: free the local copies of sessions that the
 * store is proven to hold (results/unpushed.h, rs_prune_local). The safe
 * counterpart of `git lfs prune`, which deletes sessions it only believes
 * pushed.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/unpushed.h"

static const char usage[] =
	"usage: results prune [--dry-run]\n"
	"\n"
	"Delete the local copies of sessions (and other LFS objects) that the\n"
	"results store holds: in .git/lfs/objects, and the copies 'results add'\n"
	"keeps until the store has a session. The store must prove it holds each\n"
	"one by rebuilding it (every chunk checked, the whole session hashed);\n"
	"anything it cannot rebuild is kept and named. Sessions checked out in\n"
	"the work tree are left as they are. 'results fetch' brings a pruned\n"
	"session back. Unlike 'git lfs prune', it never deletes a session the\n"
	"store lacks.\n"
	"\n"
	"  --dry-run  check the same way, delete nothing: say what would be freed\n"
	"\n"
	"exit status: 0 done (whatever was kept), 2 bad usage, 3 not a results\n"
	"repository, 5 the remote does not answer, 8 other (nothing more deleted)\n";

static void print_line(const char *line, void *payload)
{
	(void)payload;
	printf("%s\n", line);
}

int cmd_prune(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	int dry_run = 0;
	const struct rs_cli_bind bind[] = { { 'n', &dry_run, NULL }, { 0 } };
	struct rs_cli_opts opts = { .command = "prune", .usage = usage, .longopts = longopts,
				    .bind = bind };
	struct rs_repo *repo = NULL;
	struct rs_prune_report rep;
	int err, status;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	err = rs_prune_local(repo, dry_run, print_line, NULL, &rep);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	printf("%s %zu of %zu local copies, %.1f MB (%llu bytes)", dry_run ? "would free" : "freed",
	       rep.freed, rep.objects, (double)rep.bytes_freed / 1e6,
	       (unsigned long long)rep.bytes_freed);
	if (rep.kept)
		printf("; kept %zu, %.1f MB, not in the store (listed above)", rep.kept,
		       (double)rep.bytes_kept / 1e6);
	printf("\n");
out:
	rs_repo_free(repo);
	return status;
}
