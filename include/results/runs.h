/*
 * results: the runs of a results repository, for programs. A run is one
 * recorded profiling run: a line of the run index (index/YYYY-MM.jsonl,
 * what `results list` shows) and a record in its run folder (run.json,
 * what compare, check, trend and site read). Conventions as in
 * results/repo.h: 0 or a negative RS_E* code with a message; objects the
 * caller gets are freed with their _free function (NULL is fine);
 * `const char *` results are borrowed from the object that gave them.
 *
 * All three types are opaque: programs see runs only through these
 * functions, never through the library's JSON or index structures.
 */
#ifndef RESULTS_RUNS_H
#define RESULTS_RUNS_H

#include <stddef.h>

#include "results/error.h"

struct rs_buf;
struct rs_repo;

/* The run index of one repository at one revision, loaded. */
struct rs_runs;
/* One run of an index; borrowed from its struct rs_runs. */
struct rs_run_entry;
/* One run's record (run.json), loaded; the caller's. */
struct rs_run_doc;

/*
 * Load the run index of `repo` at `rev` (a revspec; NULL: HEAD). `repo`
 * is borrowed and must outlive the result. An unborn HEAD or a tree with
 * no index gives no runs (0). RS_ECORRUPT for a malformed index (the
 * message names the shard and line), RS_ENOTFOUND if `rev` does not
 * resolve.
 */
RS_MUST_CHECK int rs_runs_open(struct rs_runs **out, struct rs_repo *repo, const char *rev);
void rs_runs_free(struct rs_runs *runs);

/*
 * The runs of `repo` at `rev` (NULL: HEAD) as rs_runs_open loads them, reading the index newest shard first only until at
 * least `want_recent` runs are held (0: all): what `results list` needs
 * costs the same whatever the length of the history.
 */
RS_MUST_CHECK int rs_runs_open_recent(struct rs_runs **out, struct rs_repo *repo,
				      const char *rev, size_t want_recent);

/*
 * The same, reading the index newest shard first only until at least
 * `want` runs (0: all) of `branch` are held -- of any branch when
 * `branch` is NULL, of the newest run's branch with `newest_branch`:
 * what `check` and `trend` need without a named run.
 */
RS_MUST_CHECK int rs_runs_open_window(struct rs_runs **out, struct rs_repo *repo,
				      const char *rev, size_t want, const char *branch,
				      int newest_branch);

/*
 * The runs of `repo` at `rev` (NULL: HEAD) that rs_runs_resolve needs to
 * resolve each of `queries[0..n)` (run ids or profiled commits) as it
 * would on every run: with the commit map of the index
 * (docs/run-format.md, "Commit map"), the shards holding the runs of the
 * commits they name, and no other; every shard in a repository without
 * the map. What the result holds beside the runs resolved is not the
 * history: use it to resolve these queries, not to walk runs.
 */
RS_MUST_CHECK int rs_runs_open_for(struct rs_runs **out, struct rs_repo *repo, const char *rev,
				   const char *const *queries, size_t n);

/* The most candidates one rs_runs_first_profiled takes. */
#define RS_RUNS_MAX_CANDIDATES 100000

/*
 * Of `commits[0..n)` (full commit ids, hex, e.g. `git rev-list` of a
 * merge base), the first that has a recorded run in `repo` at `rev`
 * (NULL: HEAD), matched exactly as spelled: `*at` its index and `*found`
 * 1, or `*found` 0 when none has. Through the commit map it reads the
 * map's buckets of the candidates up to the first profiled one, and the
 * shards recorded since the map was written (every shard without it).
 * RS_EUSAGE for a candidate that is not 4 to 64 hex digits or more than
 * RS_RUNS_MAX_CANDIDATES of them; RS_ECORRUPT for a malformed index or map.
 */
RS_MUST_CHECK int rs_runs_first_profiled(size_t *at, int *found, struct rs_repo *repo,
					 const char *rev, const char *const *commits, size_t n);

/* How many runs, and the i-th, oldest first (NULL past the end). */
size_t rs_runs_count(const struct rs_runs *runs);
const struct rs_run_entry *rs_runs_at(const struct rs_runs *runs, size_t i);

/* The position of `e` (a run of `runs`) in rs_runs_at's order. */
size_t rs_runs_pos(const struct rs_runs *runs, const struct rs_run_entry *e);

/*
 * The run named by `query`: a run id, or a profiled commit (full sha or a
 * unique prefix of 4+ hex digits; the newest run of that commit).
 * RS_ENOTFOUND with a message saying what to do when nothing or more than
 * one commit matches.
 */
RS_MUST_CHECK int rs_runs_resolve(const struct rs_run_entry **out, const struct rs_runs *runs,
				  const char *query);

/*
 * The newest runs (at most `limit`), newest first, of `branch` (NULL: of
 * every branch). `*out` is the caller's array (free()) of borrowed runs;
 * `*n` how many it holds.
 */
RS_MUST_CHECK int rs_runs_newest(const struct rs_run_entry ***out, size_t *n,
				 const struct rs_runs *runs, const char *branch, size_t limit);

/* What the index says of a run (borrowed; NULL where it says nothing). */
const char *rs_run_entry_id(const struct rs_run_entry *e);
const char *rs_run_entry_commit(const struct rs_run_entry *e);      /* full sha, hex */
const char *rs_run_entry_branch(const struct rs_run_entry *e);
const char *rs_run_entry_trigger(const struct rs_run_entry *e);
const char *rs_run_entry_recorded_at(const struct rs_run_entry *e); /* ISO 8601 UTC */
const char *rs_run_entry_path(const struct rs_run_entry *e);        /* run folder */

/* The value of metric `name` of the run in `*out`; RS_ENOTFOUND if it has none. */
RS_MUST_CHECK
int rs_run_entry_metric(const struct rs_run_entry *e, const char *name, double *out);

/*
 * `results list --json`: the index entries of `runs` (n of them, in that
 * order) as one pretty-printed JSON array (id, commit, branch, trigger,
 * recorded_at, path, metrics), appended to `out` without a final newline.
 */
RS_MUST_CHECK int rs_run_entries_json(struct rs_buf *out,
				      const struct rs_run_entry *const *runs, size_t n);

/*
 * Load the record of run `e` of `runs`. The index is the authority on
 * where the run lives and what it is called: a record of an older format
 * that lacks them gets the index's id, commit and path. RS_ECORRUPT when
 * the index names a run whose run.json is missing, too large or not a
 * JSON object (the message names the run and file).
 */
RS_MUST_CHECK int rs_run_doc_load(struct rs_run_doc **out, const struct rs_runs *runs,
				  const struct rs_run_entry *e);

/*
 * Before reading one file `leaf` ("run.json", "summary.md") of each of
 * the runs entries[0..n): in a partial clone (the developer clone,
 * `results clone`), bring the ones this clone lacks from the git remote
 * in one git call per RS_GIT_FETCH_OIDS_MAX files instead of one per file
 * as each read would. Nothing to do (0) in a full clone. RS_ERETRY
 * naming a file and the remote when they cannot be fetched (offline).
 */
RS_MUST_CHECK int rs_runs_prefetch(const struct rs_runs *runs,
				   const struct rs_run_entry *const *entries, size_t n,
				   const char *leaf);
void rs_run_doc_free(struct rs_run_doc *doc);

/* The run's id (never NULL for a loaded record). */
const char *rs_run_doc_id(const struct rs_run_doc *doc);

#endif
