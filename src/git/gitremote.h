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

#endif
