/*
 * The results repository: a git clone (opened with libgit2) whose runs,
 * index and summaries are committed files and whose sessions are LFS
 * objects kept in the store behind the remote.
 *
 * Ownership: rs_repo_open returns an object the caller frees with
 * rs_repo_free. Strings inside it are borrowed from it.
 */
#ifndef RS_REPO_H
#define RS_REPO_H

#include <stdint.h>

#include <git2.h>
#include <jansson.h>

#include "remote/remote.h"
#include "git/config.h"
#include "results/repo.h"
#include "results/buf.h"
#include "util/hash.h"

/* The committed file that marks a results repository and names its remote. */
#define RS_REPO_MARKER ".results.json"

/*
 * Git config key holding the committed remote (as committed, without
 * credentials) that `results init` last set this clone up for: a
 * committed remote that differs from it is a change this clone has not
 * followed, while a results.remote set by hand to another URL (a mirror,
 * a proxy) is not.
 */
#define RS_REPO_FOLLOWED_KEY "results.committedremote"

/* Caps on committed files read back from the tree (untrusted input). */
#define RS_REPO_MARKER_MAX (64 * 1024)

/* The library's view of results/repo.h's opaque struct. */
struct rs_repo {
	git_repository *git;  /* owned */
	char *workdir;        /* root of the working tree, ends with '/'; NULL
				 when opened bare (RS_REPO_OPEN_BARE) */
	char *gitdir;         /* the common git dir (.git/), ends with '/' */
	char *lfs_dir;        /* <gitdir>lfs, or lfs.storage (no trailing '/') */
	struct rs_config *config; /* private: config read once (rs_repo_config) */
};

/*
 * rs_repo_open, rs_repo_open_ext, rs_repo_free, rs_repo_workdir,
 * rs_repo_config, rs_repo_lfs_tmp_dir, rs_repo_check_results and
 * rs_repo_check_transfer: declared in results/repo.h.
 */

/*
 * A git config value (all levels, local winning) appended to `out`.
 * RS_ENOTFOUND when unset.
 */
RS_MUST_CHECK
int rs_repo_config_get(struct rs_repo *r, const char *key, struct rs_buf *out);

/*
 * RS_REPO_MARKER committed in the tree of `rev` ("HEAD" when NULL),
 * parsed (duplicate keys refused), in *out (the caller's); NULL in *out
 * when there is no such file. RS_ECORRUPT when it is not a JSON object.
 */
RS_MUST_CHECK
int rs_repo_read_marker(struct rs_repo *r, const char *rev, json_t **out);

/*
 * git_odb_read_header through a small cache of the headers read in this
 * thread: an id's type and size never change, so a tree or file looked
 * up again (an add reads index/ for its verdict, its two maps and its
 * README) costs no second walk of its delta chain. libgit2's return codes; missing objects are
 * not kept. Every cap is still judged by the caller on the size given.
 */
int rs_repo_read_header(size_t *len, git_object_t *type, git_odb *odb, const git_oid *id);

/*
 * The size of the blob `id` in *out, from the object's header alone (no
 * content is read). RS_ECORRUPT naming `what` for an object that is not a
 * blob or cannot be read.
 */
RS_MUST_CHECK
int rs_repo_blob_size(size_t *out, git_repository *git, const git_oid *id, const char *what);

/*
 * The blob `id` in *out (the caller's, git_blob_free), after its size was
 * read from the object's header: a blob larger than `max` is refused
 * (RS_ECORRUPT naming `what`) before any of it is read, so that memory
 * stays bounded whatever a repository holds; RS_ECORRUPT too for an
 * object that is not a blob or cannot be read.
 */
RS_MUST_CHECK
int rs_repo_blob_capped(git_blob **out, git_repository *git, const git_oid *id, size_t max,
			const char *what);

/*
 * Bytes of a commit or tag object that are read (rs_repo_peel_commit,
 * rs_repo_rev_commit, rs_repo_commit_capped): a commit is a tree id,
 * parents, two signatures and a message; git's own commits stay far below
 * a MiB, so 16 MiB refuses only a hostile or broken object.
 */
#define RS_REPO_REF_OBJECT_MAX (16u * 1024 * 1024)
/*
 * Bytes of a tree object that are read (rs_repo_rev_tree,
 * rs_repo_tree_capped): about 50 bytes an entry, so 64 MiB is over a
 * million entries in one folder, far more than a results repository's
 * root, index/ or a day's runs folder holds; libgit2 keeps a parsed tree
 * in about twice its size.
 */
#define RS_REPO_TREE_MAX (64u * 1024 * 1024)
/* Tags of tags followed at most. */
#define RS_REPO_PEEL_DEPTH 16

/*
 * The commit that `id` (a ref's target) names, through annotated tags,
 * into *out. Each object's type and size are read from its header before
 * it is read: only commits and tags within RS_REPO_REF_OBJECT_MAX are
 * read, so a tag (or a tag of a tag) of a 1 GB blob costs no memory,
 * unlike git_object_peel and git_reference_peel, which read every object
 * of the chain whole. RS_ENOTFOUND when `id` names no commit (a blob, a
 * tree, a tag of one, a missing object); RS_ECORRUPT, naming the object,
 * when it names a commit or tag that is not read (past its cap, a chain
 * deeper than RS_REPO_PEEL_DEPTH, an object that does not parse): what
 * it holds is unknown, not absent.
 */
RS_MUST_CHECK
int rs_repo_peel_commit(git_oid *out, git_repository *git, const git_oid *id);

/*
 * The commit `id` in *out (the caller's, git_commit_free), after its type
 * and size were read from the object's header: RS_ECORRUPT naming `what`
 * (and the id) for an object that is not a commit or is larger than
 * RS_REPO_REF_OBJECT_MAX, before any of it is read; RS_ENOTFOUND when
 * there is no such object.
 */
RS_MUST_CHECK
int rs_repo_commit_capped(git_commit **out, git_repository *git, const git_oid *id,
			  const char *what);

/* The tree `id` in *out, as rs_repo_commit_capped, within RS_REPO_TREE_MAX. */
RS_MUST_CHECK
int rs_repo_tree_capped(git_tree **out, git_repository *git, const git_oid *id, const char *what);

/*
 * The entry at `path` ("a/b/c") in `root` in *out (the caller's,
 * git_tree_entry_free), as git_tree_entry_bypath, but each folder on the
 * way read through rs_repo_tree_capped, where libgit2 reads it whole.
 * RS_ENOTFOUND "no 'PATH'" when there is no such path (a component
 * missing, or a file on the way); RS_ECORRUPT naming the folder past its
 * cap.
 */
RS_MUST_CHECK
int rs_repo_tree_entry_bypath(git_tree_entry **out, const git_tree *root, const char *path);

/*
 * Revisions, resolved without reading any object whole before its header
 * (type and size) was checked: unlike git_revparse_single and
 * git_object_peel, which read every object of the chain whole, so that a
 * hostile repository whose HEAD is a 1 GB commit (or names a 1 GB tree)
 * costs no memory. `rev` (NULL: "HEAD") is
 *
 *   NAME SUFFIX...
 *
 * NAME: "HEAD" (or "@"); a ref as git spells it short or whole ("main",
 * "v1.0", "origin/main", "refs/heads/main"), found by reading ref files
 * only; a full object id; a unique prefix of one (4 to 39 hex digits,
 * refs first as git does). SUFFIX: "~N" (the Nth first-parent ancestor;
 * "~" is "~1"), "^N" (the Nth parent; "^" is "^1", "^0" the commit
 * itself), "^{commit}", "^{tree}" (last). Annotated tags are peeled on the
 * way, at most RS_REPO_PEEL_DEPTH deep; commits and tags are read within
 * RS_REPO_REF_OBJECT_MAX, the tree within RS_REPO_TREE_MAX.
 *
 * Returns RS_ENOTFOUND "no revision 'REV'" when nothing matches (an unborn
 * HEAD, a missing object, a parent that is not there); RS_EUSAGE for a
 * form not read here (reflogs "@{...}", "REV:path", ":/text", ranges
 * "A..B", "^A", other "^{...}") naming the forms accepted, and for an
 * ambiguous prefix; RS_ECORRUPT naming the object when a cap is passed,
 * when the revision names no commit (a blob, a tag of one; a tree for
 * rs_repo_rev_commit) or when tags nest too deep.
 *
 * rs_repo_rev_commit: the commit's id in *out. rs_repo_rev_tree: its tree
 * (or the tree the revision names) in *out, the caller's (git_tree_free).
 */
RS_MUST_CHECK
int rs_repo_rev_commit(git_oid *out, git_repository *git, const char *rev);
RS_MUST_CHECK
int rs_repo_rev_tree(git_tree **out, git_repository *git, const char *rev);

/*
 * The id of the blob at `path` in `tree` (the tree of the revision `rev`
 * names, for messages) in *out, read from the tree entries alone.
 * RS_ENOTFOUND when there is no such path or it is not a file.
 */
RS_MUST_CHECK
int rs_repo_tree_file_id(git_oid *out, git_tree *tree, const char *path, const char *rev);

/*
 * Read the blob at `path` in the tree of `rev` ("HEAD" when NULL) into
 * `out`, refusing blobs larger than `max` (RS_ECORRUPT). RS_ENOTFOUND when
 * there is no such path (or HEAD is unborn).
 */
RS_MUST_CHECK
int rs_repo_read_tree_file(struct rs_repo *r, const char *rev, const char *path,
			   size_t max, struct rs_buf *out);

/*
 * Where the store lives: the results.remote config value, else the
 * "remote" of RS_REPO_MARKER committed in HEAD. The URL is appended to
 * `out`. `*from_config` (may be NULL) says which one answered.
 * RS_ENOTFOUND when neither names one.
 */
RS_MUST_CHECK
int rs_repo_remote_url(struct rs_repo *r, struct rs_buf *out, int *from_config);

/*
 * The "remote" named by the committed RS_REPO_MARKER in HEAD (as
 * committed: without credentials), appended to `out`. RS_ENOTFOUND when
 * there is no marker or it names no remote; RS_ECORRUPT when it is not
 * JSON.
 */
RS_MUST_CHECK
int rs_repo_committed_remote(struct rs_repo *r, struct rs_buf *out);

/* The "remote" of the RS_REPO_MARKER bytes `text` (as rs_repo_committed_remote). */
RS_MUST_CHECK
int rs_repo_marker_remote(const char *text, size_t len, struct rs_buf *out);

/*
 * rs_repo_check_remote and rs_repo_check_remote_arg: results/repo.h.
 * The pieces (remote_change.c):
 *
 * rs_repo_remote_moved: 1 when `committed` (the remote committed in
 * RS_REPO_MARKER) is not the one this clone was set up for: it differs
 * from RS_REPO_FOLLOWED_KEY, or (in a clone set up before that key
 * existed) from `local` (results.remote); compared without credentials
 * and trailing '/'.
 *
 * rs_repo_remote_moved_error: the error for it (`code`, returned), naming
 * both remotes, the commit and author that set the committed one
 * (rs_repo_remote_set_by) and how to follow or keep.
 *
 * rs_repo_remote_set_by: the commit that made HEAD's committed remote
 * what it is, appended as "commit <12 hex> by <name> <<email>> on
 * <date>: "<subject>"" (control bytes of the untrusted name and subject
 * as '?'; "(or an earlier commit ...)" when a shallow clone's history
 * stops first). Found by following, from HEAD, a parent whose marker
 * names the same store, until none does: a merge names the side that
 * brought the change, not the merge. RS_ENOTFOUND without a marker.
 */
RS_MUST_CHECK
int rs_repo_remote_moved(struct rs_repo *r, const char *committed, const char *local);
RS_MUST_CHECK
int rs_repo_remote_moved_error(struct rs_repo *r, int code, const char *committed,
			       const char *local);
RS_MUST_CHECK
int rs_repo_remote_set_by(struct rs_repo *r, struct rs_buf *out);

/*
 * What rs_repo_check_transfer looks at: the name of the standalone
 * transfer agent git-lfs would use here (empty when none), its
 * lfs.customtransfer.<name>.path (empty when unset) and the LFS endpoint
 * without credentials (empty when unknown), each appended.
 */
RS_MUST_CHECK
int rs_repo_transfer_agent(struct rs_repo *r, struct rs_buf *name_out,
			   struct rs_buf *path_out, struct rs_buf *endpoint_out);

/*
 * Open the remote of rs_repo_remote_url, after rs_repo_check_remote. Backends that need more settings
 * read them from this repository's git config. The remote is the caller's
 * (rs_remote_free); `url_out` (may be NULL) receives the URL.
 */
RS_MUST_CHECK
int rs_repo_open_remote(struct rs_repo *r, struct rs_remote **out,
			struct rs_buf *url_out);

/*
 * `url` without a "user:password@" part and without a "?query" (a SAS
 * token), for committed files and messages, appended to `out`
 * (rs_remote_url_display).
 */
RS_MUST_CHECK
int rs_url_strip_credentials(struct rs_buf *out, const char *url);

/*
 * 1 when the remote URLs `a` and `b` name the same store: equal once
 * credentials, query and trailing '/' are removed; 0 otherwise.
 */
int rs_url_same_remote(const char *a, const char *b);

/*
 * The LFS endpoint git-lfs derives from a git remote URL, spelled as
 * `git lfs env` prints it (the key of lfs.<endpoint>.* settings):
 * http(s)://host/path[.git]/info/lfs; ssh:// and scp-like user@host:path
 * become https://host/path.git/info/lfs; file:// URLs and local paths
 * become file:///abs/path. User credentials are dropped. Appended to `out`.
 */
RS_MUST_CHECK
int rs_lfs_endpoint(struct rs_buf *out, const char *git_url);

/* .git/lfs/objects/<oid[0:2]>/<oid[2:4]>/<oid>, appended to `out`. */
RS_MUST_CHECK
int rs_repo_lfs_object_path(struct rs_buf *out, const struct rs_repo *r,
			    const struct rs_id *oid);

/*
 * 0 when the local LFS store holds `oid` with `size` bytes (the size is
 * checked, the content is not re-hashed); RS_ENOTFOUND otherwise.
 */
int rs_repo_lfs_has(const struct rs_repo *r, const struct rs_id *oid, uint64_t size);

/*
 * A fresh temporary file name under .git/lfs/tmp (same file system as the
 * objects, so a rename into place is atomic), appended to `out`. The
 * directory is created; the file is not.
 */
RS_MUST_CHECK
int rs_repo_lfs_tmp_path(struct rs_buf *out, const struct rs_repo *r);

/*
 * Private state of results inside the git dir of this working tree:
 * "<git dir>/results/<leaf>" appended to `out` (the folder is created).
 * Git never looks there, so nothing in it can be committed by accident.
 */
RS_MUST_CHECK
int rs_repo_state_path(struct rs_buf *out, const struct rs_repo *r, const char *leaf);

/*
 * A new empty file that will be renamed to `final_path` in the working
 * tree: created under .git/results/tmp, where `git status` and
 * `git add -A` never see it, when that folder is on the file system of
 * `final_path` (so the rename stays atomic); beside `final_path` (as
 * rs_fs_tmpfile_near) otherwise. The name goes in `tmp_out` (caller's),
 * the open descriptor in `fd_out`.
 */
RS_MUST_CHECK
int rs_repo_tmpfile_for(const struct rs_repo *r, const char *final_path,
			struct rs_buf *tmp_out, int *fd_out);

/*
 * Remove temporary files that killed results processes left in
 * .git/lfs/tmp and .git/results/tmp. Only files that are ours by name
 * (see is_our_tmp in repo.c), regular (not symlinks), owned by this user
 * and not modified for the grace period (git config
 * results.tmpGracePeriod, util/fs.h) go: a live process's file is younger than that,
 * since it writes to it. Best effort; `removed_out` (may be NULL) counts
 * them. RS_EUSAGE for a bad results.tmpGracePeriod.
 */
RS_MUST_CHECK
int rs_repo_clean_stale_tmp(struct rs_repo *r, unsigned *removed_out);

/*
 * results.tmpGracePeriod of `r` in seconds: the age after which a leftover
 * temporary file of a killed process counts as stale (the default when
 * unset). RS_EUSAGE naming the key for a bad value.
 */
RS_MUST_CHECK int rs_repo_tmp_grace(struct rs_repo *r, long *out);

/*
 * Copy the file at `src` into the local LFS store, hashing it on the way:
 * the copy goes to .git/lfs/tmp, is fsynced and renamed to its object
 * path only when complete. `oid_out` and `size_out` (may be NULL) receive
 * the object's id and size. If `expect` is not NULL the content must hash
 * to it (RS_ECORRUPT otherwise, nothing placed). An object already
 * present is left as it is.
 */
RS_MUST_CHECK
int rs_repo_lfs_store_file(struct rs_repo *r, const char *src,
			   const struct rs_id *expect, struct rs_id *oid_out,
			   uint64_t *size_out);

/*
 * Move the complete, verified file `tmp` (under .git/lfs/tmp) to the
 * object path of `oid`. On failure `tmp` is removed.
 */
RS_MUST_CHECK
int rs_repo_lfs_adopt(struct rs_repo *r, const char *tmp, const struct rs_id *oid);

#endif
