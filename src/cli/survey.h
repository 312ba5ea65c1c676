/*
 * What gc and verify both start from: the survey of a repository
 * (results/store.h: its remote, the retention plan, the census of what
 * the remote holds), with its failures turned into exit statuses.
 */
#ifndef RS_CLI_SURVEY_H
#define RS_CLI_SURVEY_H

#include "results/error.h"
#include <stdint.h>

#include "results/store.h"

struct rs_repo;

/*
 * Survey `repo` as of `now` (the runs `scope` says) into `*out` (the
 * caller's, rs_survey_free). Returns an RS_EXIT_* status, the error
 * already printed.
 */
RS_MUST_CHECK
int rs_cli_survey(struct rs_survey **out, struct rs_repo *repo, int64_t now,
		  enum rs_survey_scope scope);

/*
 * Say what the survey's policies keep by default (stdout) and its doubts
 * (stderr, "results: <line>", after `doubt_prefix`). Returns the number of
 * doubts.
 */
size_t rs_cli_survey_say(const struct rs_survey *s, const char *doubt_prefix);

#endif
