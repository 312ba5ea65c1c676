/*
 * The project's own code (analysis/owncode.h) as the repository commits
 * it: "own_code" in .results.json in HEAD's tree. Read by every judge of
 * runs (check, compare, the verdict of add, gc's keep_flagged) alike.
 */
#ifndef RS_REPO_OWNCODE_CONFIG_H
#define RS_REPO_OWNCODE_CONFIG_H

#include <jansson.h>

#include "analysis/owncode.h"

struct rs_repo;

/* Entries of "own_code" used, at most. */
#define RS_OWN_SPECS_MAX 64

struct rs_own_code {
	json_t *config;                      /* owned: the parsed marker file */
	const char *specs[RS_OWN_SPECS_MAX]; /* borrowed from config */
	struct rs_owncode oc;                /* what the analysis takes */
};

/*
 * Load the setting of `repo`. Best effort: without the file, or when it
 * does not parse, the default rule applies (the setting is optional), so
 * nothing here fails and no message is left.
 */
void rs_own_code_load(struct rs_own_code *own, struct rs_repo *repo);
void rs_own_code_release(struct rs_own_code *own);

#endif
