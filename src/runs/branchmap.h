/*
 * The branch map of the run index (docs/run-format.md, "Branch map"):
 * for every branch, the index shards holding its newest runs, so that a
 * reader wanting the runs of one branch (check's window) reads those
 * shards and no other, and learns that a branch has no earlier run
 * without reading every shard.
 *
 * On disk, beside the shards:
 *   index/branches/X/Y.jsonl  one line a branch whose FNV-1a hash's low
 *                             byte is XY (X, Y: lower-case hex digits):
 *     {"branch":"main","shards":[["2026-11",3,7],["2026-11",2,8]],"more":true}
 *     the shards (month, number, runs of the branch there) newest first,
 *     as many as hold its newest RS_BRANCHMAP_RUNS runs; "more": the
 *     branch has runs in older shards than those listed
 *   index/branches/covered.json  {"run":"<id>"}: the map accounts for
 *                             every run up to this one (in recording order)
 *
 * `results add` writes both in the commit of the run. A run recorded by a
 * results that predates the map is not in it: it is newer than the
 * covered run, and readers read the shards newer than that run's in full,
 * as before; the next add brings the map up to date. Without
 * covered.json (an older repository) nothing of the map is used, and the
 * first add builds it from every shard.
 *
 * Ownership: every struct here is the caller's (release functions below).
 */
#ifndef RS_BRANCHMAP_H
#define RS_BRANCHMAP_H

#include <stddef.h>

#include <git2.h>

#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"
#include "runs/runindex.h"

/* The newest runs of a branch whose shards the map lists (check reads at most 65). */
#define RS_BRANCHMAP_RUNS 128
#define RS_BRANCHMAP_BUCKETS 256
/* Caps on untrusted input: the map comes from a clone. */
#define RS_BRANCHMAP_MAX_BUCKET (64u * 1024 * 1024) /* one bucket file */
#define RS_BRANCHMAP_MAX_SHARDS 1024                /* shards of one branch's line */
#define RS_BRANCHMAP_MAX_COVERED 1024               /* covered.json */

struct rs_branch_shard {
	char month[8];     /* "YYYY-MM" */
	unsigned seq;      /* 1: index/YYYY-MM.jsonl, else index/YYYY-MM/NNNN.jsonl */
	unsigned runs;     /* runs of the branch in that shard */
};

struct rs_branch_entry {
	char *branch;
	struct rs_branch_shard *shards; /* newest first */
	size_t count, alloc;
	int more;          /* older shards than these hold runs of the branch */
};

void rs_branch_entry_release(struct rs_branch_entry *e);

/*
 * The id of the run the map of index/ `sub` covers up to, appended to
 * `id`. RS_ENOTFOUND when the tree has no map (an older repository);
 * RS_ECORRUPT for a malformed or oversized covered.json.
 */
RS_MUST_CHECK
int rs_branchmap_covered(struct rs_buf *id, git_repository *repo, git_tree *sub);

/*
 * The map's line of `branch` in index/ `sub` into `*out` (`*found` 1), or
 * `*found` 0 when the map lists no run of it. RS_ECORRUPT for a malformed
 * or oversized bucket (the message names it and the line).
 */
RS_MUST_CHECK
int rs_branchmap_lookup(struct rs_branch_entry *out, int *found, git_repository *repo,
			git_tree *sub, const char *branch);

/*
 * The line of `branch` in the text of a bucket (`name` for messages), as
 * rs_branchmap_lookup. Every line up to it is checked: RS_ECORRUPT names
 * `name` and the line.
 */
RS_MUST_CHECK
int rs_branchmap_find(struct rs_branch_entry *out, int *found, const char *text, size_t len,
		      const char *name, const char *branch);

/* `e` as its line of a bucket, with the trailing '\n', appended to `out`. */
RS_MUST_CHECK
int rs_branch_entry_to_line(struct rs_buf *out, const struct rs_branch_entry *e);

/* A file of the map to commit: its path and its whole new text. */
struct rs_branchmap_file {
	struct rs_buf path, text;
};

struct rs_branchmap_files {
	struct rs_branchmap_file *files;
	size_t count, alloc;
};

void rs_branchmap_files_release(struct rs_branchmap_files *f);

/*
 * The map's files that recording `e` into the shard at `shard_path`
 * ("index/YYYY-MM.jsonl" or "index/YYYY-MM/NNNN.jsonl") in HEAD's tree
 * changes, into `out`: the bucket of its branch, covered.json, and the
 * buckets of any run HEAD's map does not cover yet (runs recorded without
 * the map: every run, the first time). Reads the shards newer than the
 * covered run only, from the newest one back. When a shard or the map
 * cannot be read, `out` stays empty and the error is returned: the map
 * then stays as it was, still true of the runs it covers.
 */
RS_MUST_CHECK
int rs_branchmap_record(struct rs_branchmap_files *out, struct rs_repo *repo,
			const struct rs_run_entry *e, const char *shard_path);

#endif
