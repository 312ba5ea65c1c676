/*
 * What gc and verify both start from: the repository's remote, the
 * retention plan (which raw sessions the refs keep) and the census of
 * what the remote holds.
 */
#ifndef RS_CLI_SURVEY_H
#define RS_CLI_SURVEY_H

#include <time.h>

#include "repo/repo.h"
#include "repo/retention.h"
#include "store/maint.h"

/*
 * Open `repo`'s remote into *remote, make the plan as of `now` (only
 * HEAD's runs when `only_head`) and take the remote's census. Returns an
 * RS_EXIT_* status, the error already printed; whatever was filled is
 * the caller's to release either way.
 */
int rs_cli_survey(struct rs_remote **remote, struct rs_retention_plan *plan,
		  struct rs_store_census *census, struct rs_repo *repo, time_t now,
		  int only_head);

#endif
