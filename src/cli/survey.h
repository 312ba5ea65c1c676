/*
 * What gc and verify both start from: the survey of a repository
 * (results/store.h: its remote, the retention plan, the census of what
 * the remote holds), with its failures turned into exit statuses.
 */
#ifndef RS_CLI_SURVEY_H
#define RS_CLI_SURVEY_H

#include <stdint.h>

struct rs_repo;
struct rs_survey;

/*
 * Survey `repo` as of `now` (only HEAD's runs when `only_head`) into
 * `*out` (the caller's, rs_survey_free). Returns an RS_EXIT_* status,
 * the error already printed.
 */
int rs_cli_survey(struct rs_survey **out, struct rs_repo *repo, int64_t now, int only_head);

#endif
