/*
 * What every command that writes to a repository does first
 * (results/store.h, rs_repo_repair).
 */
#include "git/commit.h"
#include "git/repo.h"
#include "results/store.h"

int rs_repo_repair(struct rs_repo *r, struct rs_buf *note, enum rs_repo_repair_step *failed)
{
	int err;

	*failed = RS_REPO_REPAIR_COMMIT;
	err = rs_commit_recover(r, note);
	if (err)
		return err;
	*failed = RS_REPO_REPAIR_TMP;
	return rs_repo_clean_stale_tmp(r, NULL);
}
