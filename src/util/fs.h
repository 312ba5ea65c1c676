/*
 * File helpers with the durability rules the store depends on:
 * a file becomes visible under its final name only after its bytes and
 * its directory entry are on disk (write to a temporary name, fsync,
 * rename, fsync the directory).
 */
#ifndef RS_FS_H
#define RS_FS_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "results/buf.h"

/* mkdir -p. */
RS_MUST_CHECK
int rs_fs_mkdir_p(const char *path, mode_t mode);

/* mkdir -p of the folder that holds the file `path` (nothing when it has no '/'). */
RS_MUST_CHECK
int rs_fs_mkdir_parent(const char *path, mode_t mode);

/* fsync the directory that holds `path` (a file or directory name). */
RS_MUST_CHECK
int rs_fs_fsync_parent(const char *path);

/*
 * Create a new unique file next to `final_path` (same directory, so the
 * later rename is atomic) and return its descriptor; the name goes in
 * `tmp_out` (caller's buffer). The name is `<final_path>.tmp-XXXXXX`
 * (rs_fs_is_tmp_name), and the descriptor holds a shared flock on it for
 * as long as it is open, which tells rs_fs_remove_stale the file is live.
 */
RS_MUST_CHECK
int rs_fs_tmpfile_near(struct rs_buf *tmp_out, const char *final_path, int *fd_out);

/*
 * fsync `fd`, close it, rename `tmp` to `final_path` and fsync the
 * directory. On failure `tmp` is removed. `fd` is always closed.
 */
RS_MUST_CHECK
int rs_fs_commit_tmp(int fd, const char *tmp, const char *final_path);

/*
 * Like rs_fs_commit_tmp without the fsyncs: the rename is still atomic
 * for readers, but after a power cut the file may be empty or short. For
 * copies that can be made again (a download of what the remote holds),
 * where waiting for the disk would cost more than the copy itself.
 */
RS_MUST_CHECK
int rs_fs_publish_tmp(int fd, const char *tmp, const char *final_path);

/*
 * A writer's way out when its temporary file (open at `fd`, named `tmp`)
 * was not committed: close it and remove it. Nothing when `fd` < 0 (not
 * created, or already handed to rs_fs_commit_tmp).
 */
void rs_fs_drop_tmp(int fd, const char *tmp);

/* Write all of `n` bytes, retrying on EINTR and short writes. */
RS_MUST_CHECK
int rs_fs_write_all(int fd, const void *p, size_t n);

/* pread exactly `n` bytes or fail (RS_ECORRUPT on a short file). */
RS_MUST_CHECK
int rs_fs_pread_all(int fd, void *p, size_t n, uint64_t off);

/* Atomically replace `path` with `n` bytes of `p`. */
RS_MUST_CHECK
int rs_fs_write_file_atomic(const char *path, const void *p, size_t n);

/*
 * Like rs_fs_write_file_atomic without the fsyncs (rs_fs_publish_tmp):
 * readers see the old file or the new one, but after a power cut the file
 * may be empty or short. Only for a cache whose reader checks what it
 * reads and can do without it (a pack index copy with its trailer hash).
 */
RS_MUST_CHECK
int rs_fs_write_file_cache(const char *path, const void *p, size_t n);

/*
 * Read a whole file into `out`, refusing files larger than `max` bytes
 * (RS_EUSAGE). RS_ENOTFOUND when it does not exist.
 */
RS_MUST_CHECK
int rs_fs_read_file(struct rs_buf *out, const char *path, size_t max);

int rs_fs_exists(const char *path);

/*
 * Open `path` for reading, only if it is a regular file: a FIFO or device
 * does not block the open (O_NONBLOCK, cleared again), and with
 * `nofollow` a symbolic link -- even one that appeared after an lstat --
 * is refused instead of read through (O_NOFOLLOW). RS_ENOTFOUND when
 * missing; RS_EUSAGE for a symlink (with `nofollow`), a symlink loop or
 * anything that is not a regular file, with a message naming `path`.
 */
RS_MUST_CHECK
int rs_fs_open_regular(const char *path, int nofollow, int *fd_out)
	__attribute__((warn_unused_result));

/*
 * Read the whole file open at `fd` (from offset 0) into `out`, refusing
 * more than `max` bytes (RS_EUSAGE). `path` names it in messages.
 */
RS_MUST_CHECK
int rs_fs_read_fd(struct rs_buf *out, int fd, const char *path, size_t max)
	__attribute__((warn_unused_result));

/* Whether `name` (a file name, no folder) ends in ".tmp-" and six [A-Za-z0-9]. */
int rs_fs_is_tmp_name(const char *name);

/*
 * Take the shared "live" lock on a temporary file a writer just created
 * (rs_fs_tmpfile_near does it itself). Best effort: a filesystem without
 * locks leaves the age rule alone to protect the file.
 */
void rs_fs_mark_live(int fd);

/*
 * The grace period before a leftover temporary file counts as stale, in
 * seconds: git config results.tmpGracePeriod, one hour when unset, never
 * under a minute. One setting for every folder that is cleaned (the
 * repository's, the store's cache, a folder remote, lfs-agent's
 * downloads); programs read it and pass it down.
 */
#define RS_TMP_GRACE_KEY "results.tmpGracePeriod"
#define RS_TMP_GRACE_DEFAULT 3600
#define RS_TMP_GRACE_MIN 60

/*
 * Parse a value of RS_TMP_GRACE_KEY into `*out`: RS_TMP_GRACE_DEFAULT
 * when `value` is NULL (unset); RS_EUSAGE, naming the key and the fix,
 * when it is not a number of seconds of at least RS_TMP_GRACE_MIN.
 */
RS_MUST_CHECK
int rs_fs_parse_grace(const char *value, long *out);

/*
 * Remove the stale temporary files of `dir` (not recursive): regular
 * files (never symlinks) whose name `match` accepts, owned by this uid,
 * last modified more than `grace` seconds ago, and not locked by a live
 * writer (rs_fs_mark_live). Best effort: a file that cannot be examined
 * or removed is left alone, and a missing `dir` is fine. Returns how many
 * were removed. The assumption, for files of writers that take no lock
 * (older versions, other filesystems): a live writer keeps writing to its
 * temporary file, so its mtime is never older than the grace period.
 */
unsigned rs_fs_remove_stale(const char *dir, int (*match)(const char *name), long grace);

/* The same with a matcher that takes `arg` (a name to match against, say). */
unsigned rs_fs_remove_stale_with(const char *dir, int (*match)(const char *name, const void *arg),
				 const void *arg, long grace);

/* Join two path parts with exactly one '/' into `out`. */
RS_MUST_CHECK
int rs_fs_join(struct rs_buf *out, const char *a, const char *b);

#endif
