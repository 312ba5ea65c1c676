/*
 * The library's side of results/runs.h: what the opaque run types hold,
 * for the layers that work on a run's JSON (analysis through repo).
 */
#ifndef RS_REPO_RUNS_H
#define RS_REPO_RUNS_H

#include <jansson.h>

#include "runs/runindex.h"
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

/*
 * An index entry as a JSON object shaped like run.json (id, commit,
 * branch, trigger, recorded_at, path, metrics); the caller's reference,
 * NULL (message set) out of memory.
 */
json_t *rs_run_entry_object(const struct rs_run_entry *e);

#endif
