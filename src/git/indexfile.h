/*
 * The clone's .git/index read and rewritten as bytes, for a commit that
 * changes a handful of paths (issue 21).
 *
 * libgit2 can only load the whole index into memory (an allocation, a
 * hash-map insert and a sort per entry, the checksum re-hashed) and write
 * the whole of it back: at 100,000 runs that is 300,000 entries, 40 MB,
 * most of them skip-worktree entries of run folders no one checks out,
 * and most of the time of a `results add`. Here the file is mapped, its
 * entries are found by one pass that only hops from entry to entry, and
 * the new index is the old bytes copied around the few entries that
 * change, the cache tree (TREE extension) kept with the changed paths'
 * folders invalidated, and a new SHA-1 trailer. The cost left is a copy
 * and a hash of the file, tens of milliseconds at 40 MB.
 *
 * The index replaced is kept as `<index>.results-spare` (a hard link made
 * before the rename), and the next commit takes that file as its lock and
 * writes over it in place: its pages are in the page cache and its blocks
 * allocated, so a 40 MB index costs neither 10,000 fresh pages and blocks
 * nor freeing the old ones (together 40-140 ms on this project's VMs,
 * against 20 ms for the write itself). The spare is taken with link(),
 * as exclusive as git's O_EXCL lock, and written only when it is a
 * regular file with no other name (never a symlink's target, a file
 * linked from elsewhere or the live index); else a new lock is made as
 * before. It costs the disk one more copy of the index.
 *
 * Only what can be spliced safely is: index versions 2, 3 and 4 (in v4
 * each path is written as what differs from the one before: the paths
 * are read out whole into memory, and the first entry copied after a
 * change is written again against its new predecessor); a split index's
 * "link" extension and other versions give RS_EFORMAT, and the caller
 * goes through libgit2 as before. Optional
 * extensions other than TREE and REUC (the untracked and fsmonitor
 * caches, the entry-offset tables) are dropped, as git itself drops the
 * caches it cannot keep up to date: they are rebuilt by git on demand.
 *
 * git's sparse index (the "sdir" extension, which libgit2 refuses) is
 * spliced too: there a folder outside the sparse checkout's cone can be
 * one entry, a sparse directory entry (its path ending in '/', mode
 * 040000, the id of its tree, skip-worktree), instead of an entry per
 * file below it: a clone made by `results clone` holds "index/" and
 * "runs/", a few hundred bytes instead of 300,000 entries. A commit that
 * changes paths inside such a folder sets its entry to the folder's new
 * tree (the file is not in the work tree: git writes none there either);
 * a path in no entry whose folders leave the cone
 * (.git/info/sparse-checkout, cone mode) makes a sparse directory entry
 * for the outermost folder outside it, as git's `read-tree -m -u` of the
 * new commit would. The cache tree node of such a folder becomes git's
 * leaf of one entry with the new tree's id.
 *
 * The index lock (.git/index.lock, git's protocol) is taken before the
 * file is read and held until the new file is renamed over it, so no git
 * command can change the index in between.
 */
#ifndef RS_INDEXFILE_H
#define RS_INDEXFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <git2.h>

#include "results/error.h"

struct rs_index_file;

/*
 * Map `index_path` (absent: an empty index). With `lock` set, first take
 * `<index_path>.lock` (O_EXCL): RS_ERETRY, naming it, when it exists.
 * RS_EFORMAT for what this file does not splice (see above), RS_ECORRUPT
 * for bytes that are no index (entries out of bounds or out of order).
 * *out is the caller's (rs_index_file_free, which drops the lock).
 */
RS_MUST_CHECK
int rs_index_file_open(struct rs_index_file **out, const char *index_path, int lock);

/*
 * Take the lock of a file opened without it, and read the index again
 * unless it is the same file as the one read (inode, size, times): what
 * was read before the lock stays valid only if no one wrote it since.
 * Errors as rs_index_file_open's; the lock is dropped by
 * rs_index_file_free, whatever the outcome.
 */
RS_MUST_CHECK
int rs_index_file_lock(struct rs_index_file *f);

void rs_index_file_free(struct rs_index_file *f);

/* Entries in the file (all stages). */
size_t rs_index_file_count(const struct rs_index_file *f);

/* 1 when an entry has a stage other than 0 (an unresolved merge). */
int rs_index_file_has_conflicts(const struct rs_index_file *f);

/*
 * The stage-0 entry of `path`: 1 and its id (and mode, may be NULL) when
 * there is one, else 0. A binary search over the entries.
 */
int rs_index_file_find(const struct rs_index_file *f, const char *path, git_oid *id,
		       uint32_t *mode);

/* 1 when the index is sparse (an "sdir" extension). */
int rs_index_file_is_sparse(const struct rs_index_file *f);

/*
 * Where the index keeps file `path`: *dir_len 0 when in an entry of its
 * own (always, in an index that is not sparse; inside the cone, or in a
 * folder git expanded); else the length of the folder ("runs/") whose
 * sparse directory entry holds it, and *dir_id (may be NULL) that entry's
 * tree id, or zero when the entry is still to be made (the path's
 * outermost folder outside the cone). RS_EFORMAT when that cannot be
 * told (sparse-checkout patterns that are not git's cone mode).
 */
RS_MUST_CHECK
int rs_index_file_where(const struct rs_index_file *f, const char *path, size_t *dir_len,
			git_oid *dir_id);

/*
 * RS_ECORRUPT unless the file's trailer is the SHA-1 of what is before
 * it (a complete index: what a lock left by a killed writer may not be).
 */
RS_MUST_CHECK
int rs_index_file_verify(const struct rs_index_file *f);

/* One change of a path's stage-0 entry. */
struct rs_index_edit {
	const char *path;
	int remove;          /* drop the entry (absent: no-op) */
	git_oid id;          /* else the entry: blob id, mode ... */
	uint32_t mode;       /* GIT_FILEMODE_BLOB or _EXECUTABLE */
	struct stat st;      /* ... and the stat data of the file written */
};

/*
 * Write the index with `edits` applied (paths distinct, each given once;
 * the array is sorted in place) into the lock and rename it over the
 * index: the lock must have been taken (rs_index_file_open with `lock`).
 * In a sparse index, the edits of paths a sparse folder holds
 * (rs_index_file_where) set that folder's entry to its tree in `tree`
 * (the tree whose versions the edits write; removed when it has no such
 * folder; their id, mode and stat are not used); `tree` may be NULL for
 * an index that is not sparse. A path with entries at other stages
 * gives RS_EFORMAT before anything is written. On any error the index is
 * as it was.
 */
RS_MUST_CHECK
int rs_index_file_commit(struct rs_index_file *f, struct rs_index_edit *edits, size_t n,
			 git_tree *tree);

#endif
