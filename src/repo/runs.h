/*
 * The library's side of results/runs.h: what the opaque run types hold,
 * for the layers that work on a run's JSON (analysis through repo).
 */
#ifndef RS_REPO_RUNS_H
#define RS_REPO_RUNS_H

#include <jansson.h>

#include "repo/runindex.h"
#include "results/runs.h"

struct rs_runs {
	struct rs_repo *repo;    /* borrowed */
	struct rs_runindex idx;  /* every run, oldest first */
};

struct rs_run_doc {
	json_t *json;            /* owned: the run.json object */
};

/* The record's JSON (borrowed from `doc`). */
static inline const json_t *rs_run_doc_get(const struct rs_run_doc *doc)
{
	return doc ? doc->json : NULL;
}

/* Wrap `json` (the reference is taken over, also on failure) as a record. */
RS_MUST_CHECK int rs_run_doc_wrap(struct rs_run_doc **out, json_t *json);

#endif
