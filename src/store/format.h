/*
 * The store's on-remote file formats, version 1 (docs/store-format.md is
 * the specification; keep the two in step). All integers little-endian.
 *
 *   FORMAT                 text "results-store 1\n"
 *   packs/<packid>.pack    16-byte header, then chunk entries
 *   packs/<packid>.idx     the pack's entries sorted by chunk id
 *   objects/<oid>          the manifest of one LFS object
 *   (and the collector's packs/<packid>.quarantine, removed/, gc/: maint.h)
 *
 * Not every name is content-addressed. A chunk id and a manifest's name
 * (the LFS oid) are the SHA-256 of the bytes they stand for, but a pack
 * id is 32 random bytes drawn when the pack is started, so that the pack
 * can be uploaded while it is still being written (older writers hashed
 * the whole .pack; readers assume neither). An .idx is named after its
 * pack and carries its own checksum, as a manifest does. Files are never
 * modified once written, so two writers, or a retried push, can only
 * write identical or equally valid bytes.
 *
 * The parsers here take untrusted bytes (a remote can be damaged or
 * hostile): every length is checked against the buffer and against the
 * caps below before it is used.
 */
#ifndef RS_FORMAT_H
#define RS_FORMAT_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "util/hash.h"

#define RS_FORMAT_VERSION 1

#define RS_PACK_MAGIC "RSPACK\r\n"
#define RS_IDX_MAGIC "RSINDX\r\n"
#define RS_MANIFEST_MAGIC "RSMANI\r\n"

#define RS_PACK_HEADER_SIZE 16
#define RS_PACK_ENTRY_HEADER_SIZE 48
#define RS_IDX_HEADER_SIZE 48
#define RS_IDX_ENTRY_SIZE 56
#define RS_MANIFEST_HEADER_SIZE 72
#define RS_MANIFEST_ENTRY_SIZE 88

/* A reader refuses chunks larger than this: it bounds its memory. */
#define RS_CHUNK_LIMIT (64u * 1024 * 1024)
/* And stored bytes beyond this (zstd's worst case for RS_CHUNK_LIMIT is below it). */
#define RS_STORED_LIMIT (RS_CHUNK_LIMIT + (RS_CHUNK_LIMIT >> 7))
/* And manifests with more entries than this (a 64 GiB object at 4 KiB chunks). */
#define RS_MANIFEST_MAX_CHUNKS (16u * 1024 * 1024)
#define RS_IDX_MAX_ENTRIES (16u * 1024 * 1024)
/* The largest manifest and .idx those caps allow: the cap of a read of one. */
#define RS_MANIFEST_MAX_SIZE ((size_t)RS_MANIFEST_HEADER_SIZE + \
			      (size_t)RS_MANIFEST_MAX_CHUNKS * RS_MANIFEST_ENTRY_SIZE + RS_ID_RAWSZ)
#define RS_IDX_MAX_SIZE ((size_t)RS_IDX_HEADER_SIZE + \
			 (size_t)RS_IDX_MAX_ENTRIES * RS_IDX_ENTRY_SIZE + RS_ID_RAWSZ)

/* How a chunk's bytes are stored in its pack entry. */
#define RS_CODEC_STORED 0
#define RS_CODEC_ZSTD 1

/* Where one chunk lives. */
struct rs_chunk_ref {
	struct rs_id chunk;   /* SHA-256 of the chunk's raw bytes */
	struct rs_id pack;    /* pack that holds it */
	uint64_t offset;      /* of its entry header in the pack */
	uint32_t raw_len;
	uint32_t stored_len;
	uint8_t codec;
};

struct rs_manifest {
	struct rs_id oid;          /* SHA-256 of the object's bytes */
	uint64_t size;             /* object size */
	uint32_t transform;        /* RS_TRANSFORM_*: how chunks rebuild the object */
	uint64_t transformed_size; /* sum of raw_len over the chunks */
	uint32_t nchunks;
	struct rs_chunk_ref *chunks; /* owned */
};

/* Transforms (manifest field): how the chunks rebuild the object. */
#define RS_TRANSFORM_IDENTITY 0u
/* The session codec (src/codec, docs/codec.md): chunks hold its container. */
#define RS_TRANSFORM_SESSION 1u

/* Whether this build can undo `transform`. */
int rs_transform_known(uint32_t transform);

/*
 * Check a pack's 16-byte header: magic, version (RS_ENEWER: another
 * version, upgrade), reserved bytes zero (RS_ECORRUPT).
 */
RS_MUST_CHECK
int rs_pack_header_check(const unsigned char *p, size_t n);

/*
 * Check the bytes of a FORMAT file: 0 when they are exactly
 * RS_FORMAT_TEXT; RS_ENEWER when they are "results-store N\n" with N
 * above RS_FORMAT_VERSION (a newer writer's: upgrade); RS_EFORMAT
 * otherwise (not a FORMAT this build reads, and not simply newer).
 */
RS_MUST_CHECK
int rs_format_text_check(const char *p, size_t n);

/* Pack header (16 bytes) into `out`. */
void rs_pack_header(unsigned char out[RS_PACK_HEADER_SIZE]);

/* Entry header (48 bytes) for a chunk of `ref`. */
void rs_pack_entry_header(unsigned char out[RS_PACK_ENTRY_HEADER_SIZE],
			  const struct rs_chunk_ref *ref);

/*
 * The lengths and codec every chunk's description must have, wherever it
 * is read (an .idx entry, a manifest reference, a pack entry walked):
 * codec 0 or 1, a raw length of 1 to RS_CHUNK_LIMIT bytes, a stored
 * length of at most RS_STORED_LIMIT, equal to the raw one for codec 0.
 * 0, or RS_ECORRUPT ("unknown chunk codec", "impossible chunk lengths").
 */
RS_MUST_CHECK
int rs_chunk_lengths_check(uint8_t codec, uint32_t raw_len, uint32_t stored_len);

/*
 * Check an entry read at ref->offset: `p` holds the 48-byte header and
 * then ref->stored_len bytes. RS_ECORRUPT if the header does not describe
 * `ref`.
 */
RS_MUST_CHECK
int rs_pack_entry_check(const unsigned char *p, size_t n, const struct rs_chunk_ref *ref);

struct ZSTD_DCtx_s;

/*
 * Rebuild the chunk of entry `p` (n bytes: what rs_pack_entry_check takes)
 * into `raw`, which has room for ref->raw_len bytes, and check it: the
 * header repeats `ref`, the stored bytes decompress to exactly raw_len
 * (`dctx` is needed for zstd chunks only), and they hash to the chunk id.
 * 0, or RS_ECORRUPT with `*why` saying which check failed ("does not
 * decompress", ...) for the caller's message; no error message is set.
 */
RS_MUST_CHECK
int rs_chunk_decode(const unsigned char *p, size_t n, const struct rs_chunk_ref *ref,
		    unsigned char *raw, struct ZSTD_DCtx_s *dctx, const char **why);

/*
 * Encode a pack index for pack `pack` from `refs` (sorted here in place
 * by chunk id) into `out`.
 */
RS_MUST_CHECK
int rs_idx_encode(struct rs_buf *out, const struct rs_id *pack,
		  struct rs_chunk_ref *refs, size_t n);

/*
 * Parse an index. `pack` is the id it must describe. On success `*refs`
 * (caller frees) holds `*n` entries sorted by chunk id. RS_ECORRUPT for
 * damage (length, checksum, order, reserved bytes not zero, impossible
 * lengths or offsets, unknown codec), RS_ENEWER for another version.
 */
/*
 * Entry `e` (RS_IDX_ENTRY_SIZE bytes) of the .idx of `pack`, unchecked,
 * into `r`: for readers of an index rs_idx_parse has already checked.
 */
void rs_idx_entry_get(struct rs_chunk_ref *r, const unsigned char *e, const struct rs_id *pack);

RS_MUST_CHECK
int rs_idx_parse(struct rs_chunk_ref **refs, size_t *n, const struct rs_id *pack,
		 const unsigned char *p, size_t len);

RS_MUST_CHECK
int rs_manifest_encode(struct rs_buf *out, const struct rs_manifest *m);

/*
 * Parse a manifest. `oid` is the object it must describe (NULL: any).
 * `m` is filled on success; release it with rs_manifest_release.
 * RS_ECORRUPT for damage (as rs_idx_parse, and chunk sizes that do not
 * add up to the sizes in the header), RS_ENEWER for another version or
 * a transform this build does not know.
 */
RS_MUST_CHECK
int rs_manifest_parse(struct rs_manifest *m, const struct rs_id *oid,
		      const unsigned char *p, size_t len);
void rs_manifest_release(struct rs_manifest *m);

/* Remote key names; `out` is cleared first. */
RS_MUST_CHECK
int rs_key_pack(struct rs_buf *out, const struct rs_id *pack);
RS_MUST_CHECK
int rs_key_idx(struct rs_buf *out, const struct rs_id *pack);
RS_MUST_CHECK
int rs_key_manifest(struct rs_buf *out, const struct rs_id *oid);
/* "<prefix><64 hex digits of id><suffix>": every other key (marks, tombstones). */
RS_MUST_CHECK
int rs_key_make(struct rs_buf *out, const char *prefix, const struct rs_id *id, const char *suffix);
/*
 * The inverse: 0 and the id when `key` is exactly "<prefix><64 hex
 * digits><suffix>", -1 otherwise (no message).
 */
RS_MUST_CHECK
int rs_key_parse(const char *key, const char *prefix, const char *suffix, struct rs_id *id);

#define RS_KEY_FORMAT "FORMAT"
#define RS_FORMAT_TEXT "results-store 1\n"
#define RS_KEY_PACKS "packs/"
#define RS_KEY_OBJECTS "objects/"
/*
 * The collector's keys and the one writers add (docs/store-format.md,
 * "Garbage collection and repair"): tombstones, manifests set aside by
 * retention, the marks of pushes that rely on a manifest, and the marks
 * of sweeps in progress.
 */
#define RS_KEY_REMOVED "removed/"
#define RS_KEY_TRASH "trash/"
#define RS_KEY_TOUCHED "gc/touched/"
#define RS_KEY_SWEEPING "gc/sweeping/"

#endif
