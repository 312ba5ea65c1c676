/*
 * The library's side of results/unpushed.h: keeping, restoring and
 * listing the held copies of recorded LFS objects
 * (<common git dir>/results/unpushed/<oid>).
 */
#ifndef RS_REPO_UNPUSHED_H
#define RS_REPO_UNPUSHED_H

#include <stdint.h>

#include "results/unpushed.h"
#include "util/hash.h"

struct rs_buf;

/* <common git dir>/results/unpushed/<oid hex>, appended to `out`. */
RS_MUST_CHECK
int rs_unpushed_path(struct rs_buf *out, const struct rs_repo *r, const struct rs_id *oid);

/*
 * Keep a held copy of the local LFS object `oid` (which must be in
 * .git/lfs/objects): a hard link, or a copy when the two folders are on
 * different file systems. One already held is left as it is.
 */
RS_MUST_CHECK
int rs_unpushed_hold(struct rs_repo *r, const struct rs_id *oid);

/*
 * Put the held copy of `oid` (of `size` bytes) back into .git/lfs/objects
 * when git-lfs lost it: 0 when the local LFS store holds the object
 * afterwards (also when it never lost it), RS_ENOTFOUND when this clone
 * holds no copy of it at all.
 */
RS_MUST_CHECK
int rs_unpushed_restore(struct rs_repo *r, const struct rs_id *oid, uint64_t size);

/*
 * Call `fn` for every entry of the folder `dir` named by an oid (64
 * lower-case hex digits; starting with `prefix` unless NULL) that is a
 * regular file, with its size, until it returns non-zero (returned).
 * A folder that does not exist holds nothing.
 */
RS_MUST_CHECK
int rs_oid_dir_each(const char *dir, const char *prefix,
		    int (*fn)(const struct rs_id *oid, uint64_t size, void *payload), void *payload);

/*
 * Call `fn` for every held copy (its oid and size), in no order, until it
 * returns non-zero (returned). Entries whose name is not an oid, or that
 * are not regular files, are skipped.
 */
RS_MUST_CHECK
int rs_unpushed_each(struct rs_repo *r,
		     int (*fn)(const struct rs_id *oid, uint64_t size, void *payload), void *payload);

#endif
