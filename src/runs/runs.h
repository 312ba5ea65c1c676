/*
 * The library's side of results/runs.h: what the opaque run types hold,
 * for the layers that work on a run's JSON (analysis through repo).
 */
#ifndef RS_REPO_RUNS_H
#define RS_REPO_RUNS_H

#include <jansson.h>

#include "git/repo.h"
#include "runs/runindex.h"
#include "results/runs.h"
#include "runrec/runrec.h"
#include "runrec/runrec_json.h"

struct rs_runs {
	struct rs_repo *repo;    /* borrowed */
	struct rs_runindex idx;  /* every run, oldest first */
};

struct rs_run_doc {
	json_t *json;            /* owned: the run.json object, plus "path" from the index */
	rs_runrec *rec;          /* owned: the same record, typed and checked */
};

/* The record's JSON (borrowed from `doc`). */
static inline const json_t *rs_run_doc_get(const struct rs_run_doc *doc)
{
	return doc ? doc->json : NULL;
}

/* The record (borrowed from `doc`). */
static inline const rs_runrec *rs_run_doc_record(const struct rs_run_doc *doc)
{
	return doc ? doc->rec : NULL;
}

/*
 * The committed run.json of run `e` in the tree of `rev` (NULL: HEAD),
 * decoded (rs_runrec_decode's checks): the
 * caller's record, and with `json` non-NULL the caller's reference to the
 * same JSON object. Every message names the run and the file; a file the
 * index names but the tree lacks is RS_ECORRUPT.
 */
RS_MUST_CHECK int rs_run_record_read(rs_runrec **out, json_t **json, struct rs_repo *repo,
				     const char *rev, const struct rs_run_entry *e);

/*
 * An index entry as a partial run record, for analysis that reads index
 * lines where it needs no more than they hold (trend and find over a long
 * history): id, commit, branch, trigger, recorded_at and the metrics
 * (which carry every numeric stat: analysis reads the workload from them
 * when a record has no stats); no summary, no session, no stats, no
 * files. The caller's record (rs_runrec_free); RS_EGENERIC out of memory.
 */
RS_MUST_CHECK int rs_run_entry_record(rs_runrec **out, const struct rs_run_entry *e);

/*
 * An index entry as a run document: its JSON (rs_run_entry_object) and
 * its partial record (rs_run_entry_record), for the pages and trends that
 * read the index for older runs. The caller's (rs_run_doc_free).
 */
RS_MUST_CHECK int rs_run_doc_from_entry(struct rs_run_doc **out, const struct rs_run_entry *e);

/*
 * An index entry as a JSON object shaped like run.json (id, commit,
 * branch, trigger, recorded_at, path, metrics); the caller's reference,
 * NULL (message set) out of memory.
 */
json_t *rs_run_entry_object(const struct rs_run_entry *e);

#endif
