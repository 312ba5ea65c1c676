/*
 * results: the sessions this clone recorded that the store may not hold
 * yet (conventions: results/repo.h).
 *
 * git-lfs's own `git lfs prune` deletes from .git/lfs/objects every object
 * it believes pushed: with the committed `.lfsconfig` excluding sessions
 * from fetches (git-lfs 3.3), that is every session of a pushed commit,
 * even one pushed with `git push --no-verify`, whose session never reached
 * the store, and even with `--verify-remote`, which cannot ask a
 * standalone transfer agent. So `results add` keeps a second name for each
 * LFS object it records, a hard link (a copy across file systems) at
 * <common git dir>/results/unpushed/<oid>, outside git-lfs's reach, until
 * the store is known to hold the object: lfs-agent drops it after each
 * upload (also one the store already had), `results verify --repair`
 * after pushing it again, and `results prune` once the store has proved
 * it can rebuild it. The pre-push hook puts held objects that git-lfs
 * lost back and uploads the ones still held; `results fetch` and
 * lfs-agent's downloads take a held object before asking the store.
 *
 * Names found in that folder are used only when they are 64 lower-case
 * hex digits naming a regular file (no symlink is followed).
 */
#ifndef RESULTS_UNPUSHED_H
#define RESULTS_UNPUSHED_H

#include <stddef.h>
#include <stdint.h>

#include "results/error.h"

struct rs_repo;

/*
 * The store holds object `oid_hex`: drop this clone's held copy of it, if
 * any (0 as well when there is none, or `r` is NULL).
 */
RS_MUST_CHECK
int rs_unpushed_release(struct rs_repo *r, const char *oid_hex);

/*
 * Copy the held object `oid_hex` of `size` bytes to the new file `dest`
 * (a hard link when it can, else a copy hashed against the oid).
 * RS_ENOTFOUND when this clone holds no such copy (or one of another
 * size); RS_ECORRUPT when the held copy does not match its oid.
 */
RS_MUST_CHECK
int rs_unpushed_copy(struct rs_repo *r, const char *oid_hex, uint64_t size, const char *dest);

/* 1 when this clone holds a copy of some object (the store may lack it), else 0. */
int rs_unpushed_any(struct rs_repo *r);

/* What `results prune` found (and freed, unless a dry run). */
struct rs_prune_report {
	size_t objects;        /* local objects looked at (LFS store and held copies) */
	size_t freed;          /* proved to be in the store: deleted (or would be) */
	uint64_t bytes_freed;  /* disk bytes those took (a hard-linked pair once) */
	size_t kept;           /* kept: not in the store, or not proven */
	uint64_t bytes_kept;
};

/*
 * `results prune`: delete the local copies of LFS objects (in
 * .git/lfs/objects and the held copies) that the store on this clone's
 * remote is proven to hold: it rebuilds each one, every chunk checked and
 * the whole object hashed against its oid, into a temporary file under
 * .git/lfs/tmp that is deleted at once (so the check needs room for the
 * largest object, one at a time). Anything else is kept, with a line
 * through `fn` saying why (not in the store: push it). With `dry_run`
 * the same proof, nothing deleted. Working-tree files (a session `results
 * fetch` checked out) are left alone. `report` is the caller's. Returns 0
 * (whatever was kept), or the error that stopped it before the first
 * deletion could be proven: no remote, an unreachable remote, a pulled
 * change of remote this clone has not followed.
 */
RS_MUST_CHECK
int rs_prune_local(struct rs_repo *r, int dry_run, void (*fn)(const char *line, void *payload),
		   void *payload, struct rs_prune_report *report);

#endif
