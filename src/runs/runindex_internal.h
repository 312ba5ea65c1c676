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

/* A month of index/ whose shards are not listed yet: its first shard, its folder. */
struct rs_shard_month {
	char month[8];
	int has_first, has_folder;
	git_oid first, folder;
};

/*
 * The shards listed so far, newest first: later month, then higher
 * number. A listing of every month reads each month's folder only when
 * a reader gets that far (rs_runindex_list_reach): an add, which reads
 * the newest shards, reads one or two of the 66 month folders of a
 * 100,000-run history instead of all of them.
 */
struct rs_shard_list {
	struct rs_shard_ref *refs;
	size_t count;
	size_t alloc;
	git_repository *repo;
	struct rs_shard_month *months; /* newest first; [next, nmonths) not listed yet */
	size_t nmonths, next;
};

/*
 * The index/ folder of the tree of `rev` (NULL: HEAD) into `*sub`; NULL
 * (and 0) when there is none: an unborn HEAD, or no index/ folder.
 */
RS_MUST_CHECK
int rs_runindex_tree(git_tree **sub, git_repository *repo, const char *rev);

/*
 * The shards of index/ `sub` (both layouts: docs/run-format.md), newest
 * first, into `l` (zeroed by the caller; rs_runindex_list_release). With
 * `month` NULL, at least the newest month holding a shard is listed and
 * the older ones as rs_runindex_list_reach asks: l->count is 0 only when
 * there is no shard. `month` non-NULL: that month's, all of them. Names
 * that are neither are ignored.
 */
RS_MUST_CHECK
int rs_runindex_list_shards(struct rs_shard_list *l, git_repository *repo, git_tree *sub,
			    const char *month);

/*
 * More months listed until l->refs[j] is (j < l->count after; SIZE_MAX:
 * every month). An error reading a month's folder is said when it is
 * reached, not before, and that month stays unlisted.
 */
RS_MUST_CHECK
int rs_runindex_list_reach(struct rs_shard_list *l, size_t j);

/* Every month from the newest down to `month` ("YYYY-MM") listed, as above. */
RS_MUST_CHECK
int rs_runindex_list_down_to(struct rs_shard_list *l, const char *month);

void rs_runindex_list_release(struct rs_shard_list *l);

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
