/*
 * Names from outside that become paths.
 *
 * Everything a results repository holds is untrusted: a clone may come
 * from anyone, and its run ids, run folders and file names end up as
 * file names on the user's disk (`results fetch -o DIR`, `results site`,
 * the work tree). Every such name goes through this checker before it is
 * joined to a folder, so that it cannot leave that folder, cannot reach
 * into `.git`, and cannot smuggle control characters into a file name.
 *
 * A plain name (one path component) is accepted when it is
 *   - 1..RS_PATH_MAX_COMPONENT bytes, not "." nor "..";
 *   - free of '/', '\\', NUL and control characters (below 0x20, 0x7f);
 *   - not `.git` in any spelling git itself refuses (see git's
 *     verify_path(), is_ntfs_dotgit() and is_hfs_dotgit()): any case,
 *     with trailing dots or spaces, with an NTFS stream suffix
 *     (".git:x"), the 8.3 short name "git~1", or with the Unicode
 *     code points HFS+ ignores (zero-width joiners and the like);
 *   - with RS_PATH_NO_DOTFILES, not starting with '.' at all.
 * A relative path is 1..RS_PATH_MAX_RELATIVE bytes of plain names joined
 * by single '/' (no leading, trailing or doubled '/').
 *
 * The checks are on bytes; they need no file system, so that a refusal
 * comes before anything is created.
 */
#ifndef RS_PATH_H
#define RS_PATH_H

#include "results/error.h"

#include <stddef.h>

#include "results/buf.h"

#define RS_PATH_MAX_COMPONENT 255
#define RS_PATH_MAX_RELATIVE 4096

enum rs_path_flags {
	RS_PATH_RELATIVE = 1,    /* several components joined by '/' */
	RS_PATH_NO_DOTFILES = 2, /* no component may start with '.' */
};

/*
 * Check `len` bytes at `p` (NUL bytes inside are refused) as a plain name,
 * or with RS_PATH_RELATIVE as a relative path. `what` says what the name
 * is, for the message ("run id", "file name in runs/.../run.json").
 * Returns 0, or RS_ECORRUPT with a message that quotes the name (control
 * characters escaped, long names shortened) and says what is wrong.
 */
RS_MUST_CHECK
int rs_path_check(const char *p, size_t len, unsigned flags, const char *what)
	__attribute__((warn_unused_result));

/* rs_path_check of a C string as one plain name. */
RS_MUST_CHECK
int rs_path_check_component(const char *name, const char *what)
	__attribute__((warn_unused_result));

/* rs_path_check of a C string as a relative path. */
RS_MUST_CHECK
int rs_path_check_relative(const char *path, const char *what)
	__attribute__((warn_unused_result));

/*
 * Check `rel` as a relative path (with `flags`, RS_PATH_RELATIVE implied)
 * and put "<dir>/<rel>" in `out` (appended). `dir` is the caller's, trusted
 * (typically given by the user). RS_ECORRUPT as rs_path_check.
 */
RS_MUST_CHECK
int rs_path_join(struct rs_buf *out, const char *dir, const char *rel, unsigned flags,
		 const char *what)
	__attribute__((warn_unused_result));

/*
 * Make sure every folder of `rel` (a relative path checked as above;
 * every component but the last) exists below `dir`, creating the missing
 * ones (mode 0755), and that none of them is a symbolic link or anything
 * but a folder: a hostile tree may have checked out a symlink where a run
 * folder should be. The last component is not touched; a file written
 * there by temporary name and rename(2) replaces a symlink instead of
 * following it. `dir` itself is the caller's and may be a symlink.
 * RS_ECORRUPT for a symlink or a non-folder in the way (the message names
 * it), RS_EGENERIC for I/O errors.
 */
RS_MUST_CHECK
int rs_path_mkdirs_under(const char *dir, const char *rel)
	__attribute__((warn_unused_result));

#endif
