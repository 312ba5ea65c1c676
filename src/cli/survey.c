/*
 * The survey for gc and verify, and what its failures mean for the exit
 * status (see survey.h).
 */
#include "cli/survey.h"

#include "cli/cli.h"
#include "results/error.h"
#include "results/store.h"

int rs_cli_survey(struct rs_survey **out, struct rs_repo *repo, int64_t now, int only_head)
{
	enum rs_survey_step failed;
	int err = rs_survey_open(out, repo, now, only_head, &failed);

	if (!err)
		return RS_EXIT_OK;
	switch (failed) {
	case RS_SURVEY_REMOTE:
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO : RS_EXIT_REMOTE);
	case RS_SURVEY_PLAN:
		return rs_cli_report(err);
	default:
		return rs_cli_error(err == RS_ENEWER ? RS_EXIT_NEWER : RS_EXIT_REMOTE);
	}
}
