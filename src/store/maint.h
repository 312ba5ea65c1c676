/*
 * Store maintenance: a census of what a remote holds, verification of
 * objects (shallow: manifests and pack listings; deep: every chunk and
 * every object hashed), garbage collection with the mark / grace / sweep
 * protocol, and repair of damaged packs. docs/store-format.md ("Garbage
 * collection and repair") specifies every step; this file implements it.
 *
 * Nothing here knows about git: the caller (the results command) decides
 * which objects are still needed and which clone holds which object.
 *
 * Ownership: a census is the caller's (init with RS_STORE_CENSUS_INIT,
 * release with rs_store_census_release); pointers into it are borrowed.
 */
#ifndef RS_MAINT_H
#define RS_MAINT_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

#include "remote/remote.h"
#include "store/format.h"
#include "results/buf.h"
#include "util/hash.h"

/* One pack as the remote lists it, with the collector's bookkeeping. */
struct rs_pack_state {
	struct rs_id id;
	uint64_t pack_size;    /* bytes of the .pack (0 when not listed) */
	uint64_t ref_bytes;    /* stored bytes that manifests reference */
	int64_t seen_at;       /* gc/seen/<id>: first seen unreferenced (0: never) */
	int64_t marked_at;     /* gc/marked/<id>: when its .idx was removed (0: never) */
	int64_t sweeping_at;   /* gc/sweeping/<id>: a sweep of it began (0: none) */
	unsigned has_pack : 1;
	unsigned has_idx : 1;
	unsigned quarantined : 1;
	unsigned referenced : 1;   /* named by a manifest in objects/ or trash/ */
	unsigned kept_ref : 1;     /* named by one that this gc does not let go */
	unsigned damaged : 1;  /* a deep verify found a bad chunk in it */
	unsigned sweep : 1;    /* gc: due to be swept (set and read inside one collection) */
};

struct rs_store_census {
	struct rs_pack_state *packs; /* sorted by id */
	size_t npacks;
	struct rs_id *objects;       /* manifests listed, sorted */
	size_t nobjects;
	struct rs_id *removed;       /* tombstones listed, sorted */
	size_t nremoved;
	struct rs_id *trash;         /* manifests set aside by retention, sorted */
	size_t ntrash;
	struct rs_id *touched;       /* gc/touched marks of pushes, sorted */
	size_t ntouched;
	int has_format;              /* FORMAT is there */
	/*
	 * The manifests this gc lets go (dropped now, or set aside and not
	 * brought back): kept across rs_store_census_take, so that the
	 * collection knows which packs only they hold.
	 */
	struct rs_id *going;
	size_t ngoing, agoing;
};

#define RS_STORE_CENSUS_INIT { 0 }

/*
 * List packs/ (with their .quarantine marks), objects/, removed/, trash/ and gc/ of `remote` into
 * `c` (released first, except `going`), and read the collector's timestamps. Keys that
 * are not of the documented forms are ignored. RS_ENEWER (nothing
 * listed) when FORMAT names another format: a newer results wrote it.
 */
RS_MUST_CHECK
int rs_store_census_take(struct rs_store_census *c, struct rs_remote *remote);
void rs_store_census_release(struct rs_store_census *c);

/* The pack with id `id`, or NULL (borrowed). */
struct rs_pack_state *rs_store_census_pack(const struct rs_store_census *c,
					   const struct rs_id *id);
int rs_store_census_has_object(const struct rs_store_census *c, const struct rs_id *oid);
int rs_store_census_is_removed(const struct rs_store_census *c, const struct rs_id *oid);
/* Whether retention set the manifest of `oid` aside (trash/), to be deleted or brought back. */
int rs_store_census_in_trash(const struct rs_store_census *c, const struct rs_id *oid);

/* What a verify found for one object. */
enum rs_verify_state {
	RS_VERIFY_OK = 0,
	RS_VERIFY_MISSING,     /* no manifest, no tombstone */
	RS_VERIFY_REMOVED,     /* removed by retention (a tombstone) */
	RS_VERIFY_INCOMPLETE,  /* a pack it names is not listed */
	RS_VERIFY_DAMAGED,     /* manifest or chunk bytes do not check out */
	RS_VERIFY_NEWER,       /* written by a newer results (manifest version or
				  transform, codec version): never damage */
};

#define RS_VERIFY_STATES (RS_VERIFY_NEWER + 1)

const char *rs_verify_state_name(enum rs_verify_state st);

/*
 * Check object `oid` of `size` bytes (UINT64_MAX: any) against the census.
 * Shallow: the manifest parses and describes the object, and every pack
 * it names is listed. Deep: every chunk is read, its entry header
 * checked, decompressed and hashed, and (identity transform) the whole
 * object hashed against `oid`. Packs holding a bad chunk get `damaged`
 * set in `c`. `*state` receives the verdict and `why` (cleared first) a
 * sentence for the report. Returns 0 when a verdict was reached (whatever
 * it is), or the remote's error when it could not be asked.
 */
RS_MUST_CHECK
int rs_store_verify_object(struct rs_remote *remote, struct rs_store_census *c,
			   const struct rs_id *oid, uint64_t size, int deep,
			   enum rs_verify_state *state, struct rs_buf *why);

/* What the caller's policy says of a raw session, by oid (rs_gc_options.judge). */
enum rs_gc_verdict {
	RS_GC_DROP = 0,  /* runs name it and none is kept */
	RS_GC_KEEP,      /* a kept run names it */
	RS_GC_UNKNOWN,   /* no known run names it: in doubt, keep it */
};

struct rs_gc_options {
	int dry_run;    /* count, write nothing */
	int64_t now;    /* unix seconds */
	int64_t grace;  /* G, seconds */
	double repack;  /* repack packs less used than this share (0: never) */
	/* The policy's verdict on a set-aside manifest; NULL: RS_GC_UNKNOWN for all. */
	enum rs_gc_verdict (*judge)(const struct rs_id *oid, void *payload);
	void *judge_payload;
};

struct rs_gc_stats {
	size_t manifests_removed;      /* set aside (trash/) by this run */
	size_t manifests_touched;      /* not set aside: a push relies on it */
	size_t manifests_restored;     /* brought back from trash/ */
	size_t manifests_confirmed;    /* set aside a grace period ago, deleted now */
	size_t manifests_pending;      /* set aside, within the grace period */
	size_t manifests_unreferenced; /* listed, named by no run: kept */
	size_t packs;
	size_t packs_started;  /* clock started (gc/seen or gc/marked written) */
	size_t packs_marked;
	size_t packs_rescued;
	size_t packs_swept;
	size_t packs_waiting;  /* unreferenced, within the grace period */
	size_t packs_repacked;
	size_t orphan_indexes;
	uint64_t bytes_swept;
	uint64_t bytes_unreferenced; /* stored bytes in unreferenced packs */
	uint64_t bytes_repacked;     /* freed by repacking (once swept) */
	uint64_t bytes_pending;      /* in packs only manifests this gc lets go hold:
					freed by later runs, after the grace period */
	size_t packs_spared;         /* due to be swept, but a manifest named it meanwhile */
};

/*
 * Before gc writes anything: RS_ENEWER when a manifest listed in `c`
 * (objects/ or trash/) was written by a newer results, whose packs this
 * one cannot tell. Nothing is written.
 */
RS_MUST_CHECK
int rs_store_gc_check_newer(struct rs_remote *remote, const struct rs_store_census *c);

/*
 * Step 1: for every oid of `drop` that the remote holds and no push has
 * touched (gc/touched/<oid>), set the manifest aside: copy it to
 * trash/<oid>, write the tombstone removed/<oid> (dated `opts->now`),
 * delete objects/<oid>, then look for a touch once more (a push that
 * found the manifest just before) and bring it back if there is one.
 * Then every set-aside manifest is judged again (`opts->judge`): kept or
 * touched, it is brought back; dropped and set aside at least G ago, it
 * is deleted; otherwise it waits. The caller has already taken out every
 * oid that a kept run needs. Touch marks that gc has seen for G expire.
 */
RS_MUST_CHECK
int rs_store_gc_drop(struct rs_remote *remote, struct rs_store_census *c,
		     const struct rs_id *drop, size_t ndrop,
		     const struct rs_gc_options *opts, struct rs_gc_stats *stats);

/*
 * Steps 2 to 5: read every manifest, then start clocks, mark, rescue,
 * sweep (and repack) packs as the protocol says. Safe against writers
 * pushing at the same time, and idempotent: a killed run is run again.
 */
RS_MUST_CHECK
int rs_store_gc_collect(struct rs_remote *remote, struct rs_store_census *c,
			const struct rs_gc_options *opts, struct rs_gc_stats *stats);

/*
 * Repair step 1: quarantine pack `id` (write packs/<id>.quarantine, then
 * delete its .idx) so that no writer borrows from it again.
 */
RS_MUST_CHECK
int rs_store_quarantine(struct rs_remote *remote, const struct rs_id *id,
			const char *reason, int64_t now);

/*
 * Repair step 3: rewrite the manifest of `oid` so that every reference
 * into a quarantined or damaged pack points at a good copy of the same
 * chunk in a pack that has an index. The new manifest is written only
 * after the object it rebuilds was read back and hashed to `oid`.
 * RS_ENOTFOUND when some chunk has no good copy (nothing written).
 */
RS_MUST_CHECK
int rs_store_repoint(struct rs_remote *remote, struct rs_store_census *c,
		     const struct rs_id *oid);

/*
 * Bring back the manifest of `oid` that retention set aside (trash/ in
 * the census `c`): objects/<oid> written again, the tombstone deleted.
 * RS_ENOTFOUND when none is set aside (deleted for good, or never).
 */
RS_MUST_CHECK
int rs_store_bring_back(struct rs_remote *remote, const struct rs_store_census *c,
			const struct rs_id *oid);

/*
 * When `oid` was removed by retention: 0 and the date ("2026-12-01")
 * appended to `date`; RS_ENOTFOUND otherwise.
 */
RS_MUST_CHECK
int rs_store_removed_date(struct rs_remote *remote, const struct rs_id *oid,
			  struct rs_buf *date);

#endif
