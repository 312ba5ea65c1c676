/*
 * What every command that writes to the repository does first: finish or
 * undo a commit a killed results process left half done (repo/commit.h),
 * and remove the temporary files killed processes left behind.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "repo/commit.h"
#include "repo/repo.h"
#include "results/error.h"

int rs_cli_repair_repo(struct rs_repo *repo)
{
	struct rs_buf note = RS_BUF_INIT;
	int err;

	err = rs_commit_recover(repo, &note);
	if (err) {
		rs_buf_release(&note);
		return rs_cli_error(RS_EXIT_OTHER);
	}
	if (note.len)
		fprintf(stderr, "results: %s\n", note.ptr);
	rs_buf_release(&note);
	err = rs_repo_clean_stale_tmp(repo, NULL);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}
