/*
 * The two maps of the run index (docs/run-format.md, "Branch map" and
 * "Commit map"): for every branch, the index shards holding its newest
 * runs, so that a reader wanting the runs of one branch (check's window)
 * reads those shards and no other; for every profiled commit, the shards
 * holding its runs, so that a reader resolving a commit (check
 * --baseline, compare, show, fetch) or asking which of a list of commits
 * is profiled (the GitHub Action's pull-request path) reads those. Both
 * let a reader learn that a branch or a commit has no run without
 * reading every shard.
 *
 * On disk, beside the shards (M: "branches" or "commits"):
 *   index/branches/X/Y.jsonl  one line a branch whose FNV-1a hash's low
 *                             byte is XY (X, Y: lower-case hex digits):
 *     {"branch":"main","shards":[["2026-11",3,7],["2026-11",2,8]],"more":true}
 *   index/commits/X/Y/Z.jsonl one line a profiled commit whose first
 *                             three hex digits are XYZ (lower-cased):
 *     {"commit":"ab12...","shards":[["2026-11",3,1]]}
 *     the shards (month, number, runs of the branch or commit there)
 *     newest first, as many as hold its newest RS_BRANCHMAP_RUNS runs;
 *     "more": it has runs in older shards than those listed
 *   index/M/covered.json      {"run":"<id>"}: the map accounts for every
 *                             run up to this one (in recording order)
 *
 * `results add` writes both maps in the commit of the run. A run recorded
 * by a results that predates a map is not in it: it is newer than the
 * covered run, and readers read the shards newer than that run's in full,
 * as before; the next add brings the map up to date. Without its
 * covered.json (an older repository) nothing of a map is used, and the
 * first add builds it from every shard. Each map has its own covered.json:
 * a repository whose branch map predates the commit map gets the commit
 * map at its next add.
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

/* The newest runs of a key whose shards a map lists (check reads at most 65). */
#define RS_BRANCHMAP_RUNS 128
#define RS_BRANCHMAP_BUCKETS 256
/* The commit map: buckets by the first RS_COMMITMAP_DIGITS hex digits of the commit. */
#define RS_COMMITMAP_DIGITS 3
#define RS_COMMITMAP_BUCKETS 4096
/* Caps on untrusted input: the maps come from a clone. */
#define RS_BRANCHMAP_MAX_BUCKET (64u * 1024 * 1024) /* one bucket file */
#define RS_BRANCHMAP_MAX_SHARDS 1024                /* shards of one line */
#define RS_BRANCHMAP_MAX_COVERED 1024               /* covered.json */

/* Which map: its folder under index/ and the field that keys its lines. */
enum rs_map {
	RS_MAP_BRANCHES, /* index/branches/, "branch" */
	RS_MAP_COMMITS,  /* index/commits/, "commit" */
};

struct rs_map_shard {
	char month[8];     /* "YYYY-MM" */
	unsigned seq;      /* 1: index/YYYY-MM.jsonl, else index/YYYY-MM/NNNN.jsonl */
	unsigned runs;     /* runs of the key in that shard */
};

struct rs_map_entry {
	char *key;         /* the branch, or the commit (hex) */
	struct rs_map_shard *shards; /* newest first */
	size_t count, alloc;
	int more;          /* older shards than these hold runs of the key */
};

void rs_map_entry_release(struct rs_map_entry *e);

/* Several lines of a map (rs_commitmap_prefix); the caller's. */
struct rs_map_entries {
	struct rs_map_entry *entries;
	size_t count, alloc;
};

void rs_map_entries_release(struct rs_map_entries *l);

/*
 * The id of the run map `m` of index/ `sub` covers up to, appended to
 * `id`. RS_ENOTFOUND when the tree has no such map (an older
 * repository); RS_ECORRUPT for a malformed or oversized covered.json.
 */
RS_MUST_CHECK
int rs_map_covered(struct rs_buf *id, git_repository *repo, git_tree *sub, enum rs_map m);

/*
 * The branch map's line of `branch` in index/ `sub` into `*out` (`*found`
 * 1), or `*found` 0 when the map lists no run of it. RS_ECORRUPT for a
 * malformed or oversized bucket (the message names it and the line).
 */
RS_MUST_CHECK
int rs_branchmap_lookup(struct rs_map_entry *out, int *found, git_repository *repo,
			git_tree *sub, const char *branch);

/*
 * The line of `key` in the text of a bucket of map `m` (`name` for
 * messages), as rs_branchmap_lookup. Every line up to it is checked:
 * RS_ECORRUPT names `name` and the line. A line of the commit map must
 * key a hex commit of the bucket `key` is in, lines sorted by commit.
 */
RS_MUST_CHECK
int rs_map_find(struct rs_map_entry *out, int *found, const char *text, size_t len,
		const char *name, enum rs_map m, const char *key);

/*
 * Every line of the commit map in index/ `sub` whose commit starts with
 * `prefix` (RS_COMMITMAP_DIGITS to 64 hex digits, either case; RS_EUSAGE
 * otherwise),
 * appended to `out`, in the bucket's order. None (0) when the bucket is
 * not there. RS_ECORRUPT for a malformed or oversized bucket, named.
 */
RS_MUST_CHECK
int rs_commitmap_prefix(struct rs_map_entries *out, git_repository *repo, git_tree *sub,
			const char *prefix);

/*
 * Of the commits `commits[0..n)` (full ids, hex), the first that the
 * commit map of index/ `sub` lists, exactly as spelled: `*at` its index
 * and `*found` 1, or `*found` 0. Each bucket is read once, only those the
 * candidates fall in, and only until the first is found. RS_ECORRUPT for
 * a malformed or oversized bucket, named.
 */
RS_MUST_CHECK
int rs_commitmap_first(size_t *at, int *found, git_repository *repo, git_tree *sub,
		       const char *const *commits, size_t n);

/* `e` as its line of a bucket of map `m`, with the trailing '\n', appended to `out`. */
RS_MUST_CHECK
int rs_map_entry_to_line(struct rs_buf *out, const struct rs_map_entry *e, enum rs_map m);

/* A file of a map to commit: its path and its whole new text. */
struct rs_map_file {
	struct rs_buf path, text;
};

struct rs_map_files {
	struct rs_map_file *files;
	size_t count, alloc;
};

void rs_map_files_release(struct rs_map_files *f);

/*
 * The files of map `m` that recording `e` into the shard at `shard_path`
 * ("index/YYYY-MM.jsonl" or "index/YYYY-MM/NNNN.jsonl") in HEAD's tree
 * changes, into `out` (empty on entry): the bucket of its branch or
 * commit, covered.json, and the buckets of any run HEAD's map does not
 * cover yet (runs recorded without the map: every run, the first time).
 * Reads the shards newer than the covered run only, from the newest one
 * back. When a shard or the map cannot be read, `out` stays empty and the
 * error is returned: the map then stays as it was, still true of the runs
 * it covers.
 */
RS_MUST_CHECK
int rs_map_record(struct rs_map_files *out, struct rs_repo *repo, const struct rs_run_entry *e,
		  const char *shard_path, enum rs_map m);

#endif
