/*
 * The refs of the results repository's git remote, as the remote has them
 * now, whatever this clone's refspec fetched: what gc and verify judge
 * retention with (docs/retention.md, "Which refs count").
 *
 * A CI checkout (`git clone --depth 1`, which implies --single-branch)
 * knows one branch of the remote; its remote-tracking refs say nothing of
 * the others. So the remote is asked (`git ls-remote`), and each tip this
 * clone lacks is fetched into a namespace of our own, refs/results/gc/
 * (heads/<branch>, tags/<tag>; depth 1 in a shallow clone: retention reads
 * only the files committed at each tip), which then mirrors the remote's
 * branches and tags. git itself does the talking, so that the clone's
 * credentials, url.insteadOf and http.extraheader settings apply as they
 * do to `git fetch`.
 *
 * Ownership: struct rs_git_refs is the caller's (RS_GIT_REFS_INIT,
 * rs_git_refs_release); its strings belong to it.
 */
#ifndef RS_REPO_GITREMOTE_H
#define RS_REPO_GITREMOTE_H

#include <stddef.h>

#include <git2.h>

#include "git/repo.h"
#include "results/error.h"

/* Where the remote's tips are kept for retention. */
#define RS_GIT_REFS_NAMESPACE "refs/results/gc/"

/* Caps on what the remote answers (untrusted). */
#define RS_GIT_REFS_MAX 100000               /* refs */
#define RS_GIT_LS_MAX (32u * 1024 * 1024)    /* bytes of `git ls-remote` output */

struct rs_git_ref {
	char *name;   /* as the remote names it: "refs/heads/main", "refs/tags/v1" */
	git_oid oid;  /* its tip, in this clone once rs_git_refs_sync returned 0 */
};

struct rs_git_refs {
	char *remote;            /* the git remote asked ("origin"); NULL: none configured */
	struct rs_git_ref *refs; /* its branches and tags */
	size_t n, alloc;
	size_t fetched;          /* tips fetched because this clone lacked them */
};

#define RS_GIT_REFS_INIT { NULL, NULL, 0, 0, 0 }

/*
 * List the branches and tags of the git remote of `r` (the remote of the
 * checked-out branch's upstream, else "origin") and make every tip
 * present in this clone: `fetch` 1 fetches the missing ones into
 * RS_GIT_REFS_NAMESPACE (and drops the namespace's refs of branches the
 * remote no longer has); `fetch` 0 fetches nothing and fails when a tip is
 * missing. A clone without that git remote gives `out->remote` NULL and
 * no refs (0). Errors (the message says which remote and what failed):
 * RS_EGENERIC when git cannot list or fetch, RS_ECORRUPT for an answer
 * that does not parse or is too big, RS_ENOTFOUND for a tip missing with
 * `fetch` 0. On error `*out` holds the remote's name and nothing else.
 */
RS_MUST_CHECK int rs_git_refs_sync(struct rs_git_refs *out, struct rs_repo *r, int fetch);
void rs_git_refs_release(struct rs_git_refs *refs);

/*
 * In a partial clone (git clone --filter=blob:none, the developer clone
 * of docs/user-guide.md), bring the missing object `id` (a committed file,
 * `what` in messages) from the promisor remote: libgit2 cannot, so the
 * git program does (`git cat-file -t`, which fetches and keeps it), with
 * the clone's credentials and a deadline. RS_ENOTFOUND (no message) when
 * this is no partial clone; RS_ERETRY (exit 5) naming the file and remote when
 * git cannot fetch it (offline).
 */
RS_MUST_CHECK int rs_git_fetch_promised(git_repository *git, const git_oid *id, const char *what);

/*
 * The same for the objects ids[0..n) (`what[i]` names ids[i] in the
 * messages), in as few git calls as possible: the ones this clone lacks
 * are fetched from the promisor remote by one `git fetch` per
 * RS_GIT_FETCH_OIDS_MAX of them (what git's own lazy fetch runs), so that
 * a command needing twenty run records waits for one fetch, not twenty.
 * `*fetched` (may be NULL) counts the objects asked for. Nothing to do
 * (0) when this is no partial clone or nothing is missing. RS_ERETRY
 * (exit 5) naming the first file not fetched and the remote when git
 * cannot fetch (offline).
 */
#define RS_GIT_FETCH_OIDS_MAX 1000 /* object ids on one `git fetch` command line (41 KB) */
RS_MUST_CHECK int rs_git_fetch_promised_many(git_repository *git, const git_oid *ids,
					     const char *const *what, size_t n, size_t *fetched);

/*
 * What a partial clone's filter says of the blobs it lacks: every blob
 * missing from a clone made with `--filter=blob:limit=N` holds at least N
 * bytes (git leaves out the blobs of N bytes or more), so a reader
 * looking for small files (LFS pointers, under RS_POINTER_MAX) can pass
 * over the missing ones without fetching them. 0 (nothing known) in a
 * full clone or with any other filter (blob:none lacks every blob).
 */
size_t rs_git_promised_min_size(git_repository *git);

/*
 * Run `git [--git-dir=<gitdir_path>] <args>` (gitdir_path NULL: none),
 * with `env_extra` (NULL-terminated "NAME=value" strings, may be NULL)
 * before our environment and prompts for credentials off, its stdin
 * /dev/null, its stdout into `out` (at most `max` bytes), within
 * `deadline_s` seconds. `what` names the step in the messages, which
 * quote the first line of git's stderr. RS_EGENERIC when git fails or
 * times out, RS_ECORRUPT when it says more than `max`.
 */
RS_MUST_CHECK int rs_git_run(const char *gitdir_path, const char *const *env_extra,
			     const char *const *args, size_t nargs, struct rs_buf *out, size_t max,
			     int deadline_s, const char *what);

#endif
