/*
 * One commit through libgit2 that adds, replaces or removes a set of files
 * on top of HEAD, with the index and the working tree kept consistent.
 *
 * libgit2 runs neither the LFS filter nor hooks: the bytes given here are
 * exactly what goes into the blob (an LFS pointer for a session; the
 * caller places the object in .git/lfs/objects with rs_repo_lfs_*), and
 * the same bytes are written to the working tree. A pointer in the working
 * tree is what git-lfs itself leaves for paths excluded by
 * lfs.fetchexclude, so `git status` stays clean.
 *
 * Atomicity: the branch ref is moved LAST, with a compare-and-swap from
 * the HEAD commit read at the start; that single ref update is the commit
 * point. Before it, the commit object is an unreferenced loose object and
 * the new files are put into the working tree and index (temporary files
 * under .git/results/tmp, renamed into place). If the swap fails (someone
 * else committed meanwhile) those files are put back and RS_ERETRY is
 * returned. A journal (.git/results/commit-journal) names the branch, the
 * old and the new commit while this happens, so that after a kill the
 * next results command can undo the files (branch not moved) or finish
 * the checkout (branch moved): see rs_commit_recover and
 * docs/run-format.md, "Crash consistency".
 */
#ifndef RS_COMMIT_H
#define RS_COMMIT_H

#include <stddef.h>

#include "git/repo.h"
#include "results/error.h"

/* One change. `path` is relative to the repository root, '/'-separated. */
struct rs_commit_file {
	const char *path;
	const void *data;   /* the blob bytes; NULL with `remove` set */
	size_t size;
	int executable;     /* mode 100755 instead of 100644 */
	int remove;         /* delete `path` (absent already: no-op) */
};

struct rs_commit_options {
	const char *message;       /* required */
	/* NULL: GIT_AUTHOR_NAME/EMAIL from the environment, else user.name /
	   user.email from git config, else "results" <results@localhost>. */
	const char *author_name;
	const char *author_email;
	/* Refuse (RS_EUSAGE) when a touched path has local changes in the
	   working tree or index that the commit would overwrite. Default on;
	   set to 1 to overwrite them instead. */
	int force;
};

struct stat;

/*
 * Copy the stat data git keeps in an index entry (times, device, inode,
 * owner, size) from `st` into `e`: what makes git see a file we wrote as
 * unchanged without hashing it again.
 */
void rs_commit_entry_stat(git_index_entry *e, const struct stat *st);

/*
 * Commit `nfiles` changes as ONE commit on top of HEAD (the current branch,
 * or an unborn branch: the commit is then the first one; a detached HEAD
 * is moved itself).
 *
 * Paths are validated: no absolute paths, no "." / ".." / empty
 * components, nothing under ".git", no path given twice.
 *
 * When the resulting tree equals HEAD's tree no commit is made, `*changed`
 * is set to 0 and `commit_hex_out` receives HEAD's id (this makes
 * `results init` idempotent). Otherwise `*changed` is 1.
 *
 * commit_hex_out: caller's buffer of at least 41 bytes (may be NULL).
 * changed: may be NULL.
 *
 * Returns 0; RS_EUSAGE for a bad path, an empty message or local changes
 * in the way; RS_ERETRY when HEAD moved during the call; RS_EGENERIC for
 * libgit2 or I/O failures (message says which).
 *
 * Nothing can fail after the commit point: on every error `*changed` is
 * 0, the branch did not move and the working tree and index are as they
 * were (when putting them back failed too, the message says so and the
 * journal is kept for rs_commit_recover). An RS_ERETRY names what was in
 * the way (the branch moved, another results command is recording, a
 * '.git/index.lock' exists).
 */
RS_MUST_CHECK
int rs_commit_files(struct rs_repo *repo, const struct rs_commit_file *files,
		    size_t nfiles, const struct rs_commit_options *opts,
		    char *commit_hex_out, int *changed);

/*
 * Finish what a killed results process left half done: when the journal
 * of a dead process exists, its files are taken out of the working tree
 * and index again (its branch never moved) or checked out (it did); its
 * own stale '.lock' files are removed, recognised by their content; paths
 * the user changed since are left alone. `note` (may be NULL) receives a
 * sentence for the user when something was done. 0 also when there was
 * nothing to do or the journal's owner is still running.
 */
RS_MUST_CHECK
int rs_commit_recover(struct rs_repo *repo, struct rs_buf *note);

#endif
