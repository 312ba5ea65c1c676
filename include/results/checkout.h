/*
 * results: putting an LFS object where a user reads it: a verified copy,
 * and the working-tree checkout that replaces a pointer file by its
 * content, as `git lfs checkout` does (results fetch). Conventions:
 * results/repo.h. The pointer is a parsed LFS pointer (git/pointer.h),
 * the oid a SHA-256 (util/hash.h).
 */
#ifndef RESULTS_CHECKOUT_H
#define RESULTS_CHECKOUT_H

#include "results/error.h"

struct rs_buf;
struct rs_id;
struct rs_pointer;
struct rs_repo;

/*
 * Copy `src` to a new file `dest` (atomically: temporary name, rename).
 * With `oid`, hash on the way and fail with RS_ECORRUPT unless it matches:
 * objects that were already in the local LFS store are trusted by
 * git-lfs, but a copy we hand out should be as checked as a download.
 * Without `oid` (the object was verified by the store a moment ago) the
 * kernel copies it (copy_file_range). With `r`, `dest` is in its working
 * tree and the temporary file goes where git never sees it
 * (.git/results/tmp, rs_repo_tmpfile_for); without, beside `dest`.
 */
RS_MUST_CHECK
int rs_repo_copy_object(struct rs_repo *r, const char *src, const char *dest,
			const struct rs_id *oid);

/*
 * Replace the pointer at `rel` (a path in the working tree whose folders
 * exist) by the content of the local LFS object at `object_path`, like
 * `git lfs checkout`, and record the new file's stat data in the index
 * entry of `rel`, keeping its blob when that blob is `pointer_text`: what
 * `git add` would store, since the clean filter turns the content back
 * into that pointer (otherwise git reports the file as modified; this
 * part is best effort). `verified`: the object was checked against its
 * oid a moment ago (no second hash).
 *
 * A file at `rel` that is neither `p`'s pointer nor absent is the user's:
 * left alone, `*placed` 0. `*placed` is 1 when the working-tree file
 * holds the content (also when it already did). Returns 0, or the copy's
 * error (`*placed` 0; the object itself is still in place).
 */
RS_MUST_CHECK
int rs_repo_checkout_object(struct rs_repo *r, const char *rel, const char *object_path,
			    const struct rs_pointer *p, const struct rs_buf *pointer_text,
			    int verified, int *placed);

#endif
