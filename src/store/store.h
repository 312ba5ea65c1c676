/*
 * The store: LFS objects cut into content-defined chunks, deduplicated by
 * SHA-256 chunk id, zstd-compressed into pack files, and described by one
 * manifest per object that is written last. docs/store-format.md is the
 * byte-level specification; this header is the programming interface.
 */
#ifndef RS_STORE_H
#define RS_STORE_H

#include "results/error.h"

#include <stdint.h>

#include "remote/remote.h"
#include "store/format.h"
#include "util/hash.h"

struct rs_store;

/*
 * Progress callback: `done` bytes of the object handled so far (of
 * `total`). Called from the calling thread only. A non-zero return aborts
 * the transfer with that value.
 */
typedef int (*rs_progress_fn)(uint64_t done, uint64_t total, void *payload) RS_MUST_CHECK;

struct rs_store_options {
	int zstd_level;        /* 0: the default (RS_STORE_DEFAULT_LEVEL) */
	int threads;           /* worker threads for one object; 0: one per core */
	const char *cache_dir; /* local index of the remote's chunks; NULL: no
				  dedup against earlier pushes of other processes */
	uint32_t transform;    /* must be RS_TRANSFORM_IDENTITY (0); kept for callers */
	int generic_only;      /* 1: never the session codec, every object takes
				  transform 0 (benchmarks, tests) */
	int replace;           /* 1: put stores the object even when its manifest
				  is listed and whole, and replaces it (verify
				  --repair, for a manifest that lists the wrong
				  chunks) */
	long tmp_grace;        /* seconds after which a leftover temporary file in
				  the cache folder is stale: the caller reads
				  results.tmpGracePeriod (rs_fs_parse_grace);
				  0: RS_TMP_GRACE_DEFAULT */
};

#define RS_STORE_DEFAULT_LEVEL 3

/*
 * Transforms (store/format.h, the manifest field): put applies the session
 * codec (RS_TRANSFORM_SESSION, docs/codec.md) to every object it
 * recognises as a pyinstrument session it can rebuild byte for byte
 * (proven before anything is stored), unless generic_only; others take
 * RS_TRANSFORM_IDENTITY. Get undoes the transform before the oid check.
 */

struct rs_store_put_stats {
	uint64_t chunks;          /* chunks in the object */
	uint64_t chunks_new;      /* chunks written to a new pack */
	uint64_t bytes_raw;       /* object size */
	uint64_t bytes_stored;    /* compressed bytes written in new packs */
	int already_present;      /* the manifest existed: nothing was sent */
};

/*
 * Open a store on `remote` (borrowed: it must outlive the store).
 * The result is the caller's (rs_store_free).
 */
RS_MUST_CHECK
int rs_store_open(struct rs_store **out, struct rs_remote *remote,
		  const struct rs_store_options *opts);
void rs_store_free(struct rs_store *s);

/*
 * Read the remote's FORMAT file: 0 when it names this format (later calls
 * then cost nothing), RS_ENOTFOUND when the remote holds no store yet
 * (the first upload writes it; the message is rs_store_no_store_error's),
 * RS_ENEWER for a store in another format, and the remote's error when it
 * does not answer.
 */
RS_MUST_CHECK
int rs_store_check_format(struct rs_store *s);

/*
 * The one reader of a remote's FORMAT file, for the store, the census and
 * doctor: 0 when it names this format, RS_ENEWER when it names another
 * (written by a newer results: "upgrade results", naming the remote),
 * RS_ENOTFOUND when there is none, the remote's error otherwise.
 */
RS_MUST_CHECK
int rs_store_read_format(struct rs_remote *remote);

/*
 * Set the one message for "this remote holds no results store" (a read
 * from a remote nothing was pushed to: usually a mistyped
 * results.remote) and return RS_ENOTFOUND. For every program that reads.
 */
RS_MUST_CHECK
int rs_store_no_store_error(const struct rs_remote *remote);

/* 0 when the object's manifest is on the remote, RS_ENOTFOUND when not. */
RS_MUST_CHECK
int rs_store_has(struct rs_store *s, const struct rs_id *oid);

/*
 * Store the file at `path` as object `oid` of `size` bytes. The file is
 * read once, streamed; its SHA-256 and size must match or nothing is
 * committed (RS_ECORRUPT). New chunks go into new packs; the manifest is
 * written only after every pack it names is durable on the remote.
 * Safe to run in several processes at once and to retry after a failure.
 */
RS_MUST_CHECK
int rs_store_put_file(struct rs_store *s, const struct rs_id *oid, uint64_t size,
		      const char *path, rs_progress_fn progress, void *payload,
		      struct rs_store_put_stats *stats);

/*
 * Fetch and parse the manifest of `oid` from `remote` into `m` (release
 * it with rs_manifest_release): exactly its listed size, capped at what
 * the format allows. RS_ENOTFOUND when it is not there (the message says
 * whether retention removed it), RS_ECORRUPT when it is damaged (the
 * message says to delete it and push again), RS_ENEWER for a version or
 * transform this build does not know, RS_ERETRY for a transfer fault.
 * The one reader of manifests, for get, verify, gc and repair.
 */
RS_MUST_CHECK
int rs_store_fetch_manifest(struct rs_remote *remote, const struct rs_id *oid,
			    struct rs_manifest *m);

/*
 * The same for the copy of a manifest kept under another prefix
 * (RS_KEY_TRASH: set aside by retention); RS_ENOTFOUND when it is not there.
 */
RS_MUST_CHECK
int rs_store_fetch_manifest_at(struct rs_remote *remote, const char *prefix,
			       const struct rs_id *oid, struct rs_manifest *m);

/*
 * Encode manifest `m` and write it as objects/<oid>: the last step of
 * every write of one (put, repack, repair), once every pack it names is
 * on the remote.
 */
RS_MUST_CHECK
int rs_store_put_manifest(struct rs_remote *remote, const struct rs_id *oid,
			  const struct rs_manifest *m);

/*
 * Whether `key` is on `remote`: `*present` 1 or 0 (its absence is no
 * error here), or the remote's error when it cannot be asked.
 */
RS_MUST_CHECK
int rs_store_key_present(struct rs_remote *remote, const char *key, int *present);

/* The same under `prefix` (RS_KEY_OBJECTS, or RS_KEY_TRASH to set it aside). */
RS_MUST_CHECK
int rs_store_put_manifest_at(struct rs_remote *remote, const char *prefix,
			     const struct rs_id *oid, const struct rs_manifest *m);

/*
 * Reassemble object `oid` into the new file `dest` (which must not be
 * relied on to exist before). Every chunk is checked against its id and the
 * whole object against `oid` and `size` (pass UINT64_MAX to skip the size
 * check) before `dest` appears: on any error no file is left at `dest`.
 * RS_ENOTFOUND when the remote has no such object, RS_ECORRUPT when stored
 * bytes are damaged. The rename into place is atomic, but the file is not
 * fsynced: it is a verified copy the remote can give again, and waiting
 * for the disk would cost more than the copy. A caller that needs it
 * durable fsyncs it.
 */
RS_MUST_CHECK
int rs_store_get_file(struct rs_store *s, const struct rs_id *oid, uint64_t size,
		      const char *dest, rs_progress_fn progress, void *payload);

/*
 * For rs_store_get_file_flags: the caller checks the whole file against
 * the oid itself before anyone uses it, so it is not hashed here (every
 * chunk still is, against its id, and the size is checked). git-lfs does
 * so for every download of a custom transfer agent (tq/custom.go,
 * VerifyFileHash, from git-lfs 2.0 on), and moves the file into its
 * object store only if it matches: lfs-agent's downloads need no hash
 * of their own.
 */
#define RS_GET_CALLER_HASHES 1u

/* rs_store_get_file, with RS_GET_* `flags` (0: as rs_store_get_file). */
RS_MUST_CHECK
int rs_store_get_file_flags(struct rs_store *s, const struct rs_id *oid, uint64_t size,
			    const char *dest, unsigned flags, rs_progress_fn progress,
			    void *payload);

#endif
