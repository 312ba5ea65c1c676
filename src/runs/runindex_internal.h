/*
 * What runindex.c and branchmap.c share about index/ in a tree: its
 * shards, listed newest first, and how one is read. Nothing else includes
 * this header.
 */
#ifndef RS_RUNINDEX_INTERNAL_H
#define RS_RUNINDEX_INTERNAL_H

#include <stddef.h>

#include <git2.h>

#include "results/buf.h"
#include "results/error.h"

/*
 * One shard of index/: a month's first shard "YYYY-MM.jsonl" (seq 1) or
 * one of its further shards "YYYY-MM/NNNN.jsonl" (seq NNNN >= 2).
 */
struct rs_shard_ref {
	char month[8];   /* "YYYY-MM" */
	unsigned seq;
	git_oid oid;
};

struct rs_shard_list {
	struct rs_shard_ref *refs; /* newest first: later month, then higher number */
	size_t count;
	size_t alloc;
};

/*
 * The index/ folder of the tree of `rev` (NULL: HEAD) into `*sub`; NULL
 * (and 0) when there is none: an unborn HEAD, or no index/ folder.
 */
RS_MUST_CHECK
int rs_runindex_tree(git_tree **sub, git_repository *repo, const char *rev);

/*
 * Every shard of index/ `sub` (both layouts: docs/run-format.md), newest
 * first. `month` non-NULL: only that month's. Names that are neither are
 * ignored. `l` is the caller's (free l->refs).
 */
RS_MUST_CHECK
int rs_runindex_list_shards(struct rs_shard_list *l, git_repository *repo, git_tree *sub,
			    const char *month);

/* "index/YYYY-MM.jsonl" or "index/YYYY-MM/NNNN.jsonl" of `ref`, appended to `out`. */
RS_MUST_CHECK
int rs_runindex_ref_path(struct rs_buf *out, const struct rs_shard_ref *ref);

/* The blob of shard `ref`, through the shard cap; its path appended to `label`. */
RS_MUST_CHECK
int rs_runindex_read_shard(git_blob **blob, git_repository *repo, const struct rs_shard_ref *ref,
			   struct rs_buf *label);

/* "YYYY-MM" at the start of `n`. */
int rs_runindex_is_month(const char *n);

#endif
