/*
 * results: the public interface to a results repository, for programs
 * (the results CLI, lfs-agent). A results repository is a git clone whose
 * runs, index and summaries are committed files and whose sessions are
 * LFS objects kept in a store behind a remote (docs/architecture.md).
 *
 * Conventions of every include/results/ header:
 *  - functions return 0 or a negative RS_E* code (results/error.h) and leave
 *    a message for rs_error_message(); they never print or exit;
 *  - `out` parameters are written only on success;
 *  - objects the library allocates are freed with their _free function,
 *    which accepts NULL; strings returned as `const char *` are borrowed
 *    from the object that returned them and live as long as it does;
 *  - `struct rs_buf *` parameters are the caller's buffers (results/buf.h):
 *    results are appended to them.
 *
 * struct rs_repo is opaque here; the library's own code sees its fields
 * through src/git/repo.h.
 */
#ifndef RESULTS_REPO_H
#define RESULTS_REPO_H

#include "results/error.h"

struct rs_buf;
struct rs_config;
struct rs_repo;

/*
 * Set up (and, at exit, tear down) what the repository layer needs
 * process-wide (libgit2): once, before any other call of the library.
 * Packs are read through windows of RS_REPO_PACK_WINDOW bytes, at most
 * RS_REPO_PACK_MAPPED of them mapped at once, so that the memory of a
 * command reading much of a pack stays bounded (src/git/repo.c).
 */
#define RS_REPO_PACK_WINDOW (4u * 1024 * 1024)
#define RS_REPO_PACK_MAPPED (16u * 1024 * 1024)
void rs_repo_global_init(void);
void rs_repo_global_shutdown(void);

/* The version of libgit2 the library runs with (`results version`). */
void rs_repo_libgit2_version(int *major, int *minor, int *rev);

/* Git config key naming the store's remote (read by lfs-agent too). */
#define RS_REPO_REMOTE_KEY "results.remote"

/*
 * Find the repository that contains `path` (NULL: the current directory)
 * and open it. RS_ENOTFOUND when `path` is in no git working tree (a bare
 * repository counts as none: results needs a working tree). The object
 * is the caller's (rs_repo_free).
 */
RS_MUST_CHECK
int rs_repo_open(struct rs_repo **out, const char *path);

/* rs_repo_open_ext flags. */
#define RS_REPO_OPEN_BARE 1u /* accept a bare repository (no working tree) */

/*
 * rs_repo_open with `flags`. lfs-agent opens the repository git-lfs runs
 * it in this way: git-lfs also transfers from bare repositories, where
 * only the LFS folders and the config make sense.
 */
RS_MUST_CHECK
int rs_repo_open_ext(struct rs_repo **out, const char *path, unsigned flags);

void rs_repo_free(struct rs_repo *r);

/*
 * 0 unless the remote committed in .results.json changed since this clone
 * was set up (a pulled change this clone has not followed: it keeps its
 * results.remote). Then RS_EGENERIC with a message naming both remotes
 * and the commit and author that changed it, and how to follow
 * (`results init --follow-remote`) or keep. 0 as well when either remote
 * is missing. Every command that talks to the store checks it, and so
 * does lfs-agent.
 */
RS_MUST_CHECK
int rs_repo_check_remote(struct rs_repo *r);

/*
 * 0 unless `url`, a remote given explicitly (lfs-agent's --remote, which
 * `results init --global` writes), names another store than the one
 * committed in .results.json: then RS_EUSAGE with the same message. 0
 * when nothing is committed.
 */
RS_MUST_CHECK
int rs_repo_check_remote_arg(struct rs_repo *r, const char *url);

/*
 * The root of the working tree, ending with '/'; NULL for a repository
 * opened bare. Borrowed from `r`.
 */
const char *rs_repo_workdir(const struct rs_repo *r);

/*
 * The repository's git config (results/config.h), read once at the
 * first call: borrowed from `r`, valid until rs_repo_free. NULL (message
 * set) when it cannot be read.
 */
struct rs_config *rs_repo_config(struct rs_repo *r);

/*
 * git-lfs's temporary folder, <lfs dir>/tmp, created, appended to `out`.
 * The LFS dir is <common git dir>/lfs, or lfs.storage (relative to the
 * common git dir, as git-lfs reads it). What is renamed into
 * .git/lfs/objects is written here: the same file system as the objects.
 */
RS_MUST_CHECK
int rs_repo_lfs_tmp_dir(struct rs_buf *out, const struct rs_repo *r);

/*
 * 0 when the repository is a results repository: its marker
 * (.results.json) is in HEAD's tree, or results.remote is configured, or
 * index/ is in HEAD's tree. RS_ENOTFOUND (with a message saying to run `results init`)
 * otherwise.
 */
RS_MUST_CHECK int rs_repo_check_results(struct rs_repo *r);

/*
 * 0 when git-lfs, uploading from this clone, would hand LFS objects to a
 * results lfs-agent: the standalone transfer agent that git-lfs picks for
 * the clone's LFS endpoint (lfs.<url>.standalonetransferagent matched
 * against the endpoint as git matches http.<url>.* keys, else
 * lfs.standalonetransferagent; local, global and GIT_CONFIG_GLOBAL
 * config) has an lfs.customtransfer.<name>.path whose file name is
 * lfs-agent. RS_EGENERIC otherwise, with a message saying where git-lfs
 * would send the sessions instead and to run `results init`. The
 * endpoint is lfs.url, else remote.origin.lfsurl, else lfs.url of the
 * working tree's .lfsconfig, else the one git-lfs derives from
 * remote.origin.url.
 */
RS_MUST_CHECK int rs_repo_check_transfer(struct rs_repo *r);

#endif
