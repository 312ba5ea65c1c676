/*
 * The run index of a results repository: which runs exist, where their
 * folders are, and their headline metrics, without opening any run.
 *
 * On disk (docs/run-format.md): shards of JSON lines, one object per line
 * and per run, in recording order:
 *   {"id","commit","branch","trigger","recorded_at","path","metrics":{...}}
 * A month's (UTC) first RS_RUNINDEX_SHARD_RUNS runs are in
 * index/YYYY-MM.jsonl, its further runs in index/YYYY-MM/0002.jsonl,
 * 0003.jsonl... (RS_RUNINDEX_SHARD_RUNS each). Repositories written before
 * shards were bounded hold one index/YYYY-MM.jsonl of any length a month:
 * the same layout, with a first shard that is full. `path` is the run
 * folder relative to the repository root
 * ("runs/2026/11/30/093012-ci-abc1234"). Recording a run rewrites only the
 * month's last shard, so a commit costs O(1) bytes whatever the history
 * or the month holds; README.md holds a bounded table of recent runs.
 *
 * Everything here reads *committed* files (blobs of a tree), never the
 * work tree and never LFS objects, so it works in a clone that holds no
 * session content (committed files are read with rs_repo_read_tree_file).
 *
 * Ownership: struct rs_runindex is the caller's (init/release); every
 * string and json_t inside an entry belongs to the index. Pointers to
 * entries returned by the lookup functions are borrowed from the index
 * and stay valid until it is released or appended to.
 */
#ifndef RS_RUNINDEX_H
#define RS_RUNINDEX_H

#include <stddef.h>

#include <git2.h>
#include <jansson.h>

#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"

/* Caps on untrusted input: index lines and shards come from a clone. */
#define RS_RUNINDEX_MAX_LINE  (64u * 1024)        /* one run's line */
#define RS_RUNINDEX_MAX_SHARD (256u * 1024 * 1024) /* one month's shard */
#define RS_RUNINDEX_MAX_RUNS  (4u * 1024 * 1024)   /* runs held at once */
/* A shard is full at this many runs: add starts the month's next one. */
#define RS_RUNINDEX_SHARD_RUNS 128

/* Fixed sizes of the fields that make up a run id. */
#define RS_RUN_SHA7 7
#define RS_RUN_MAX_TRIGGER 32
#define RS_RUN_MAX_VERDICT 512    /* a longer "verdict" in a line is cut */

struct rs_run_entry {
	char *id;          /* "YYYYMMDD-HHMMSS-<trigger>-<sha7>[-N]" */
	char *commit;      /* full profiled sha (hex) */
	char *branch;
	char *trigger;
	char *recorded_at; /* ISO 8601 UTC, "2026-11-30T09:30:12Z" */
	char *path;        /* run folder, relative to the repository root */
	json_t *metrics;   /* object name -> number; never NULL */
	char *verdict;     /* one line against the earlier comparable runs
	                      ("+13% vs c1d2e3f: new call g -> f (4.1 s)"), or NULL
	                      (runs recorded before verdicts) */
};

struct rs_runindex {
	struct rs_run_entry *runs; /* oldest first (recorded_at, then line order) */
	size_t count;
	size_t alloc;
};

void rs_runindex_init(struct rs_runindex *idx);
void rs_runindex_release(struct rs_runindex *idx);

/*
 * Load the index of the tree of `rev` (a revspec; NULL means HEAD).
 * `want_recent` = 0 loads every shard; otherwise shards are read newest
 * first (month, then shard number) until at least `want_recent` runs are
 * held (what the README table and `list --limit` need) -- so the cost
 * grows neither with the history nor with the runs of a month. An unborn HEAD or a tree without index/ gives an empty index
 * (0). Returns RS_ECORRUPT for a malformed line (message names the shard
 * and line), RS_ENOTFOUND if `rev` does not resolve.
 */
RS_MUST_CHECK
int rs_runindex_load(struct rs_runindex *idx, struct rs_repo *repo,
		     const char *rev, size_t want_recent);

/*
 * What a bounded load must hold before it stops: at least `runs` runs
 * (0: every shard) of `branch` (NULL: of any branch; with
 * `newest_branch`, of the branch of the newest run loaded).
 */
struct rs_runindex_window {
	size_t runs;
	const char *branch;
	int newest_branch;
};

/*
 * rs_runindex_load with a window: shards are read newest first (month,
 * then shard number) until `w` is met, so `check` and `trend` read the
 * shards their window needs, whatever the history holds. For the window
 * of one branch, the branch map (runs/branchmap.h) names the shards
 * holding its runs: the shards down to the run the map covers are read,
 * then only those, so a branch with fewer runs than the window (the first
 * run of a pull-request branch) does not read every shard. Without a map
 * (a repository recorded before it), every shard is read then.
 */
RS_MUST_CHECK
int rs_runindex_load_window(struct rs_runindex *idx, struct rs_repo *repo, const char *rev,
			    const struct rs_runindex_window *w);

/*
 * Parse the text of one shard and append its runs to `idx`, then keep the
 * index sorted. `name` is only used in error messages. Blank lines are
 * skipped. RS_ECORRUPT on a malformed line and past the caps (the text
 * comes from a clone: too much of it is bad data, exit 7).
 */
RS_MUST_CHECK
int rs_runindex_parse_shard(struct rs_runindex *idx, const char *text,
			    size_t len, const char *name);

/*
 * Append a copy of `e` (deep copy; the caller keeps `e`) and keep the
 * index sorted.
 */
RS_MUST_CHECK
int rs_runindex_add(struct rs_runindex *idx, const struct rs_run_entry *e);

/*
 * Find the run named by `query`:
 *  - a run id (exact), or
 *  - a profiled commit: full sha or a unique hex prefix of at least 4
 *    digits. When that commit was profiled several times, the most recent
 *    run wins.
 * RS_ENOTFOUND with a message that says what to do when nothing matches
 * or when the prefix matches runs of two or more different commits (the
 * message lists a few candidates). `*out` is borrowed from `idx`.
 */
RS_MUST_CHECK
int rs_runindex_resolve(const struct rs_run_entry **out,
			const struct rs_runindex *idx, const char *query);

/*
 * Load, of the index of the tree of `rev` (NULL: HEAD), the runs that
 * rs_runindex_resolve needs to resolve each of `queries[0..n)` as it
 * would on the whole index: through the commit map (runs/branchmap.h),
 * the shards newer than the run it covers and those it lists for the
 * commits a query names (a commit prefix of 4 to 64 hex digits, the
 * commit digits of a run id). Every shard is read when a query names no
 * commit, when the tree has no commit map (an older repository), when a
 * shard the map names is not there, and when a run id is not in the
 * shards read. Errors as rs_runindex_load.
 */
RS_MUST_CHECK
int rs_runindex_load_queries(struct rs_runindex *idx, struct rs_repo *repo, const char *rev,
			     const char *const *queries, size_t n);

/*
 * Of the commits `commits[0..n)` (4 to 64 hex digits each, at most
 * RS_RUNS_MAX_CANDIDATES; RS_EUSAGE otherwise), the first that has a run
 * in the index of the tree of `rev` (NULL: HEAD), spelled as the index
 * spells it: `*at` its index and `*found` 1, or `*found` 0. Reads the
 * shards newer than the run the commit map covers and the map's buckets
 * the candidates fall in, up to the first found; every shard without a
 * map. Errors as rs_runindex_load.
 */
RS_MUST_CHECK
int rs_runindex_first_profiled(size_t *at, int *found, struct rs_repo *repo, const char *rev,
			       const char *const *commits, size_t n);

/* Serialise one entry as its index line, with the trailing '\n'. */
RS_MUST_CHECK
int rs_run_entry_to_line(struct rs_buf *out, const struct rs_run_entry *e);

/* Parse one index line (no '\n' needed) into `out` (caller releases). */
RS_MUST_CHECK
int rs_run_entry_parse(struct rs_run_entry *out, const char *line, size_t len);

/* Deep copy; `out` is the caller's (release with rs_run_entry_release). */
RS_MUST_CHECK
int rs_run_entry_copy(struct rs_run_entry *out, const struct rs_run_entry *e);
void rs_run_entry_release(struct rs_run_entry *e);

/* "index/YYYY-MM.jsonl" for an ISO 8601 recorded_at. RS_EUSAGE if malformed. */
RS_MUST_CHECK
int rs_runindex_shard_path(struct rs_buf *out, const char *recorded_at);

/*
 * The shard of HEAD's tree a run recorded at `recorded_at` is appended
 * to: its path into `path`, its committed text (empty for a new shard)
 * appended to `text`. That is the month's last shard while it holds fewer
 * than RS_RUNINDEX_SHARD_RUNS runs (or is numbered 9999), else the next
 * number (index/YYYY-MM/NNNN.jsonl); a month without runs starts with
 * index/YYYY-MM.jsonl. RS_EUSAGE for a malformed time, RS_ECORRUPT for a
 * shard over RS_RUNINDEX_MAX_SHARD (not read).
 */
RS_MUST_CHECK
int rs_runindex_append_shard(struct rs_buf *path, struct rs_buf *text, struct rs_repo *repo,
			     const char *recorded_at);

/*
 * Render the root README.md: a title, a short paragraph on how to use the
 * repository, and a Markdown table of the `limit` most recent runs of
 * `idx` (newest first) with links to their summary.md. Bounded by
 * `limit`, whatever the size of the history.
 */
RS_MUST_CHECK
int rs_runindex_readme(struct rs_buf *out, const struct rs_runindex *idx,
		       size_t limit);

#endif
