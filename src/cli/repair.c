/*
 * What every command that writes to the repository does first: finish or
 * undo a commit a killed results process left half done, and remove the
 * temporary files killed processes left behind (rs_repo_repair).
 */
#include <stdio.h>

#include "cli/cli.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/store.h"

int rs_cli_repair_repo(struct rs_repo *repo)
{
	struct rs_buf note = RS_BUF_INIT;
	enum rs_repo_repair_step failed;
	int err;

	err = rs_repo_repair(repo, &note, &failed);
	/* The note says what was finished or undone, also when cleaning failed later. */
	if (note.len && !(err && failed == RS_REPO_REPAIR_COMMIT))
		fprintf(stderr, "results: %s\n", note.ptr);
	rs_buf_release(&note);
	if (err && failed == RS_REPO_REPAIR_COMMIT)
		return rs_cli_error(RS_EXIT_OTHER);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}
