/*
 * The remote, the retention plan and the census for gc and verify (see
 * survey.h).
 */
#include "cli/survey.h"

#include "cli/cli.h"
#include "results/error.h"

int rs_cli_survey(struct rs_remote **remote, struct rs_retention_plan *plan,
		  struct rs_store_census *census, struct rs_repo *repo, time_t now,
		  int only_head)
{
	int err = rs_repo_open_remote(repo, remote, NULL);

	if (err)
		return rs_cli_fail(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO : RS_EXIT_REMOTE,
				   "cannot open the remote: %s", rs_error_message());
	err = rs_retention_plan_make(repo, now, only_head, plan);
	if (err)
		return rs_cli_report(err);
	err = rs_store_census_take(census, *remote);
	if (err)
		return rs_cli_fail(RS_EXIT_REMOTE, "cannot list the remote '%s': %s",
				   (*remote)->display_url, rs_error_message());
	return RS_EXIT_OK;
}
