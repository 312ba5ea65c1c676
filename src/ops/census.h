/*
 * The library's side of results/store.h's struct rs_survey: what verify
 * (census.c) and gc (gcrun.c) share.
 */
#ifndef RS_REPO_CENSUS_H
#define RS_REPO_CENSUS_H

#include "git/repo.h"
#include "runs/retention.h"
#include "results/store.h"
#include "store/maint.h"

/* What verify found for one plan item. */
struct rs_verdict {
	enum rs_verify_state state;
	char *why;               /* owned; NULL: nothing to say */
	char hex[RS_ID_HEXSZ + 1];
};

struct rs_survey {
	struct rs_repo *repo;      /* borrowed */
	struct rs_remote *remote;  /* owned */
	struct rs_git_refs git_refs; /* the git remote's branches and tags */
	struct rs_retention_plan plan;
	struct rs_store_census census;
	struct rs_verdict *v;      /* one per plan item, after rs_verify_check */
	size_t counts[RS_VERIFY_STATES], objects, restored, lost;
};

/* The index of the first item before `upto` naming `oid`, or -1. */
int rs_survey_find_oid(const struct rs_retention_plan *plan, size_t upto,
		       const struct rs_id *oid);

#endif
