#include "store/format.h"
#include "results/error.h"

#include <stdlib.h>
#include <string.h>

#include <zstd.h>

void rs_pack_header(unsigned char out[RS_PACK_HEADER_SIZE])
{
	memcpy(out, RS_PACK_MAGIC, 8);
	rs_put_le32(out + 8, RS_FORMAT_VERSION);
	rs_put_le32(out + 12, 0);
}

void rs_pack_entry_header(unsigned char out[RS_PACK_ENTRY_HEADER_SIZE],
			  const struct rs_chunk_ref *ref)
{
	memcpy(out, ref->chunk.id, RS_ID_RAWSZ);
	rs_put_le32(out + 32, ref->raw_len);
	rs_put_le32(out + 36, ref->stored_len);
	out[40] = ref->codec;
	memset(out + 41, 0, 7);
}

int rs_pack_header_check(const unsigned char *p, size_t n)
{
	if (n < RS_PACK_HEADER_SIZE || memcmp(p, RS_PACK_MAGIC, 8) != 0)
		return rs_error_set(RS_ECORRUPT, "not a pack file");
	/* 0 is below the first version: no results wrote it (docs/hacking.md, "Which code") */
	if (rs_get_le32(p + 8) < RS_FORMAT_VERSION)
		return rs_error_set(RS_ECORRUPT, "pack version %u is older than any results wrote: "
				    "the pack is damaged", rs_get_le32(p + 8));
	if (rs_get_le32(p + 8) != RS_FORMAT_VERSION)
		return rs_error_set(RS_ENEWER, "pack version %u is not supported (this build reads %u): "
				    "upgrade results", rs_get_le32(p + 8), RS_FORMAT_VERSION);
	if (!rs_all_zero(p + 12, 4))
		return rs_error_set(RS_ECORRUPT, "pack header has reserved bytes set");
	return 0;
}

/*
 * Is `p`/`n` exactly "results-store N\n" with N (decimal, no leading zero)
 * above RS_FORMAT_VERSION: a newer writer's store, not garbage?
 */
static int newer_format_text(const char *p, size_t n)
{
	static const char prefix[] = "results-store ";
	size_t at = sizeof(prefix) - 1, digits = 0;
	uint64_t v = 0;

	if (n < at + 2 || memcmp(p, prefix, at) != 0 || p[n - 1] != '\n' || p[at] == '0')
		return 0;
	for (; at < n - 1; at++, digits++) {
		if (p[at] < '0' || p[at] > '9' || digits >= 9)
			return 0;
		v = v * 10 + (uint64_t)(p[at] - '0');
	}
	return digits > 0 && v > RS_FORMAT_VERSION;
}

int rs_format_text_check(const char *p, size_t n)
{
	size_t i;

	if (n == strlen(RS_FORMAT_TEXT) && memcmp(p, RS_FORMAT_TEXT, n) == 0)
		return 0;
	/* Quote at most one printable line of it: it came from outside. */
	for (i = 0; i < n && i < 40 && p[i] >= 0x20 && p[i] < 0x7f; i++)
		;
	if (newer_format_text(p, n))
		return rs_error_set(RS_ENEWER, "the store is in another format ('%.*s'), written by "
				    "a newer results: upgrade results",
				    (int)i, p);
	return rs_error_set(RS_EFORMAT, "the store is in another format ('%.*s'): upgrade results",
			    (int)i, p);
}

int rs_pack_entry_check(const unsigned char *p, size_t n, const struct rs_chunk_ref *ref)
{
	char hex[RS_ID_HEXSZ + 1];

	if (n < RS_PACK_ENTRY_HEADER_SIZE ||
	    n - RS_PACK_ENTRY_HEADER_SIZE < ref->stored_len ||
	    memcmp(p, ref->chunk.id, RS_ID_RAWSZ) != 0 ||
	    rs_get_le32(p + 32) != ref->raw_len ||
	    rs_get_le32(p + 36) != ref->stored_len || p[40] != ref->codec ||
	    !rs_all_zero(p + 41, 7)) {
		rs_id_to_hex(hex, &ref->pack);
		return rs_error_set(RS_ECORRUPT,
				    "pack %.12s does not hold the expected chunk at offset %llu",
				    hex, (unsigned long long)ref->offset);
	}
	return 0;
}

int rs_chunk_decode(const unsigned char *p, size_t n, const struct rs_chunk_ref *ref,
		    unsigned char *raw, struct ZSTD_DCtx_s *dctx, const char **why)
{
	const unsigned char *stored = p + RS_PACK_ENTRY_HEADER_SIZE;
	struct rs_id id;

	if (n != RS_PACK_ENTRY_HEADER_SIZE + (size_t)ref->stored_len ||
	    rs_pack_entry_check(p, n, ref)) {
		rs_error_clear();
		*why = "is not where the manifest says";
		return RS_ECORRUPT;
	}
	if (ref->codec == RS_CODEC_ZSTD && dctx) {
		size_t got = ZSTD_decompressDCtx(dctx, raw, ref->raw_len, stored, ref->stored_len);

		if (ZSTD_isError(got) || got != ref->raw_len) {
			*why = "does not decompress";
			return RS_ECORRUPT;
		}
	} else if (ref->codec == RS_CODEC_STORED && ref->stored_len == ref->raw_len) {
		memcpy(raw, stored, ref->raw_len);
	} else {
		*why = "has an unknown codec";
		return RS_ECORRUPT;
	}
	rs_sha256(&id, raw, ref->raw_len);
	if (rs_id_cmp(&id, &ref->chunk)) {
		*why = "does not match its id";
		return RS_ECORRUPT;
	}
	return 0;
}

/*
 * A chunk's location as .idx entries and manifests both store it, at
 * `p`: offset (8), raw length (4), stored length (4), codec (1),
 * reserved (7, zero).
 */
static void put_location(unsigned char *p, const struct rs_chunk_ref *r)
{
	rs_put_le64(p, r->offset);
	rs_put_le32(p + 8, r->raw_len);
	rs_put_le32(p + 12, r->stored_len);
	p[16] = r->codec;
	memset(p + 17, 0, 7);
}

/* The inverse of put_location (the reserved bytes are the caller's to check). */
static void get_location(struct rs_chunk_ref *r, const unsigned char *p)
{
	r->offset = rs_get_le64(p);
	r->raw_len = rs_get_le32(p + 8);
	r->stored_len = rs_get_le32(p + 12);
	r->codec = p[16];
}

void rs_idx_entry_get(struct rs_chunk_ref *r, const unsigned char *e, const struct rs_id *pack)
{
	memcpy(r->chunk.id, e, RS_ID_RAWSZ);
	r->pack = *pack;
	get_location(r, e + 32);
}

/* The SHA-256 of everything in `out`, appended: the trailer of .idx files and manifests. */
static int put_trailer(struct rs_buf *out)
{
	struct rs_id sum;

	rs_sha256(&sum, out->ptr, out->len);
	return rs_buf_put(out, sum.id, RS_ID_RAWSZ);
}

static int ref_cmp(const void *a, const void *b)
{
	return rs_id_cmp(&((const struct rs_chunk_ref *)a)->chunk,
			 &((const struct rs_chunk_ref *)b)->chunk);
}

int rs_idx_encode(struct rs_buf *out, const struct rs_id *pack,
		  struct rs_chunk_ref *refs, size_t n)
{
	unsigned char h[RS_IDX_HEADER_SIZE], e[RS_IDX_ENTRY_SIZE];
	size_t i;
	int err;

	if (n > RS_IDX_MAX_ENTRIES)
		return rs_error_set(RS_EUSAGE, "too many chunks (%zu) for one pack", n);
	if (n)
		qsort(refs, n, sizeof(*refs), ref_cmp);
	rs_buf_clear(out);
	memcpy(h, RS_IDX_MAGIC, 8);
	rs_put_le32(h + 8, RS_FORMAT_VERSION);
	rs_put_le32(h + 12, (uint32_t)n);
	memcpy(h + 16, pack->id, RS_ID_RAWSZ);
	err = rs_buf_put(out, h, sizeof(h));
	for (i = 0; !err && i < n; i++) {
		memcpy(e, refs[i].chunk.id, RS_ID_RAWSZ);
		put_location(e + 32, &refs[i]);
		err = rs_buf_put(out, e, sizeof(e));
	}
	if (err)
		return err;
	return put_trailer(out);
}

/* The checksum trailer of idx and manifest files. */
static int check_trailer(const unsigned char *p, size_t len, const char *what)
{
	struct rs_id sum;

	if (len < RS_ID_RAWSZ)
		return rs_error_set(RS_ECORRUPT, "%s is truncated", what);
	rs_sha256(&sum, p, len - RS_ID_RAWSZ);
	if (memcmp(sum.id, p + len - RS_ID_RAWSZ, RS_ID_RAWSZ) != 0)
		return rs_error_set(RS_ECORRUPT, "%s fails its checksum", what);
	return 0;
}

/*
 * An entry's header starts after the pack header, and the entry must end
 * within what a uint64 offset can address (offset + 48 + stored_len).
 */
static int check_offset(uint64_t offset, uint32_t stored_len)
{
	if (offset < RS_PACK_HEADER_SIZE)
		return rs_error_set(RS_ECORRUPT, "chunk offset %llu inside the pack header",
				    (unsigned long long)offset);
	if (offset > UINT64_MAX - RS_PACK_ENTRY_HEADER_SIZE - stored_len)
		return rs_error_set(RS_ECORRUPT, "chunk offset %llu is past any possible pack",
				    (unsigned long long)offset);
	return 0;
}

int rs_transform_known(uint32_t transform)
{
	return transform == RS_TRANSFORM_IDENTITY || transform == RS_TRANSFORM_SESSION;
}

/*
 * A version this build does not read. A later version is written whole,
 * with a valid trailer (every version keeps the SHA-256 trailer): then
 * the user should upgrade. A flipped bit in the version field fails the
 * checksum: that is damage, not a newer writer; so is a version below the
 * first (0), which no results wrote.
 */
static int other_version(const unsigned char *p, size_t len, const char *what)
{
	struct rs_id sum;

	rs_sha256(&sum, p, len - RS_ID_RAWSZ);
	if (memcmp(sum.id, p + len - RS_ID_RAWSZ, RS_ID_RAWSZ) != 0)
		return rs_error_set(RS_ECORRUPT, "%s fails its checksum", what);
	if (rs_get_le32(p + 8) < RS_FORMAT_VERSION)
		return rs_error_set(RS_ECORRUPT, "%s version %u is older than any results wrote: "
				    "the file is damaged", what, rs_get_le32(p + 8));
	return rs_error_set(RS_ENEWER, "%s version %u is not supported (this build reads %u): "
			    "upgrade results", what, rs_get_le32(p + 8), RS_FORMAT_VERSION);
}

int rs_chunk_lengths_check(uint8_t codec, uint32_t raw_len, uint32_t stored_len)
{
	if (codec != RS_CODEC_STORED && codec != RS_CODEC_ZSTD)
		return rs_error_set(RS_ECORRUPT, "unknown chunk codec %u", codec);
	if (raw_len == 0 || raw_len > RS_CHUNK_LIMIT || stored_len > RS_STORED_LIMIT ||
	    (codec == RS_CODEC_STORED && stored_len != raw_len))
		return rs_error_set(RS_ECORRUPT, "impossible chunk lengths %u/%u", raw_len, stored_len);
	return 0;
}

/*
 * The checks an .idx entry and a manifest's chunk reference share: codec
 * and lengths, offset, and the 7 reserved bytes at `reserved`. `what`
 * and `i` name the entry in the message.
 */
static int check_ref(const struct rs_chunk_ref *r, const unsigned char *reserved, const char *what,
		     uint32_t i)
{
	int err;

	err = rs_chunk_lengths_check(r->codec, r->raw_len, r->stored_len);
	if (err)
		return err;
	err = check_offset(r->offset, r->stored_len);
	if (err)
		return err;
	if (!rs_all_zero(reserved, 7))
		return rs_error_set(RS_ECORRUPT, "%s %u has reserved bytes set", what, i);
	return 0;
}

int rs_idx_parse(struct rs_chunk_ref **refs_out, size_t *n_out, const struct rs_id *pack,
		 const unsigned char *p, size_t len)
{
	struct rs_chunk_ref *refs = NULL;
	struct rs_id self;
	uint32_t n, i;
	int err;

	if (len < RS_IDX_HEADER_SIZE + RS_ID_RAWSZ || memcmp(p, RS_IDX_MAGIC, 8) != 0)
		return rs_error_set(RS_ECORRUPT, "not a pack index");
	if (rs_get_le32(p + 8) != RS_FORMAT_VERSION)
		return other_version(p, len, "pack index");
	n = rs_get_le32(p + 12);
	if (n > RS_IDX_MAX_ENTRIES ||
	    len != RS_IDX_HEADER_SIZE + (size_t)n * RS_IDX_ENTRY_SIZE + RS_ID_RAWSZ)
		return rs_error_set(RS_ECORRUPT, "pack index length does not match its %u entries", n);
	err = check_trailer(p, len, "pack index");
	if (err)
		return err;
	if (pack && memcmp(p + 16, pack->id, RS_ID_RAWSZ) != 0)
		return rs_error_set(RS_ECORRUPT, "pack index describes another pack");
	memcpy(self.id, p + 16, RS_ID_RAWSZ);
	refs = calloc(n ? n : 1, sizeof(*refs));
	if (!refs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n; i++) {
		const unsigned char *e = p + RS_IDX_HEADER_SIZE + (size_t)i * RS_IDX_ENTRY_SIZE;

		rs_idx_entry_get(&refs[i], e, &self);
		err = check_ref(&refs[i], e + 49, "pack index entry", i);
		if (!err && i > 0 && rs_id_cmp(&refs[i - 1].chunk, &refs[i].chunk) >= 0)
			err = rs_error_set(RS_ECORRUPT, "pack index is not sorted");
		if (err) {
			free(refs);
			return err;
		}
	}
	*refs_out = refs;
	*n_out = n;
	return 0;
}

int rs_manifest_encode(struct rs_buf *out, const struct rs_manifest *m)
{
	unsigned char h[RS_MANIFEST_HEADER_SIZE], e[RS_MANIFEST_ENTRY_SIZE];
	uint32_t i;
	int err;

	rs_buf_clear(out);
	memcpy(h, RS_MANIFEST_MAGIC, 8);
	rs_put_le32(h + 8, RS_FORMAT_VERSION);
	rs_put_le32(h + 12, m->transform);
	memcpy(h + 16, m->oid.id, RS_ID_RAWSZ);
	rs_put_le64(h + 48, m->size);
	rs_put_le64(h + 56, m->transformed_size);
	rs_put_le32(h + 64, m->nchunks);
	rs_put_le32(h + 68, 0);
	err = rs_buf_put(out, h, sizeof(h));
	for (i = 0; !err && i < m->nchunks; i++) {
		const struct rs_chunk_ref *r = &m->chunks[i];

		memcpy(e, r->chunk.id, RS_ID_RAWSZ);
		memcpy(e + 32, r->pack.id, RS_ID_RAWSZ);
		put_location(e + 64, r);
		err = rs_buf_put(out, e, sizeof(e));
	}
	if (err)
		return err;
	return put_trailer(out);
}

/* The manifest's header: everything but the chunk references, into `m`. */
static int parse_manifest_header(struct rs_manifest *m, const struct rs_id *oid,
				 const unsigned char *p, size_t len)
{
	int err;

	if (len < RS_MANIFEST_HEADER_SIZE + RS_ID_RAWSZ || memcmp(p, RS_MANIFEST_MAGIC, 8) != 0)
		return rs_error_set(RS_ECORRUPT, "not an object manifest");
	if (rs_get_le32(p + 8) != RS_FORMAT_VERSION)
		return other_version(p, len, "manifest");
	m->transform = rs_get_le32(p + 12);
	memcpy(m->oid.id, p + 16, RS_ID_RAWSZ);
	m->size = rs_get_le64(p + 48);
	m->transformed_size = rs_get_le64(p + 56);
	m->nchunks = rs_get_le32(p + 64);
	if (m->nchunks > RS_MANIFEST_MAX_CHUNKS ||
	    len != RS_MANIFEST_HEADER_SIZE + (size_t)m->nchunks * RS_MANIFEST_ENTRY_SIZE + RS_ID_RAWSZ)
		return rs_error_set(RS_ECORRUPT, "manifest length does not match its %u chunks", m->nchunks);
	err = check_trailer(p, len, "manifest");
	if (err)
		return err;
	if (oid && rs_id_cmp(oid, &m->oid) != 0)
		return rs_error_set(RS_ECORRUPT, "manifest describes another object");
	if (!rs_all_zero(p + 68, 4))
		return rs_error_set(RS_ECORRUPT, "manifest header has reserved bytes set");
	if (!rs_transform_known(m->transform))
		return rs_error_set(RS_ENEWER, "the object uses transform %u, which this build cannot undo: "
				    "upgrade results", m->transform);
	return 0;
}

/* The chunk references after the header, checked, into m->chunks (allocated here). */
static int parse_manifest_chunks(struct rs_manifest *m, const unsigned char *p)
{
	uint64_t total = 0;
	uint32_t i;
	int err;

	m->chunks = calloc(m->nchunks ? m->nchunks : 1, sizeof(*m->chunks));
	if (!m->chunks)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < m->nchunks; i++) {
		const unsigned char *e = p + RS_MANIFEST_HEADER_SIZE + (size_t)i * RS_MANIFEST_ENTRY_SIZE;
		struct rs_chunk_ref *r = &m->chunks[i];

		memcpy(r->chunk.id, e, RS_ID_RAWSZ);
		memcpy(r->pack.id, e + 32, RS_ID_RAWSZ);
		get_location(r, e + 64);
		err = check_ref(r, e + 81, "manifest chunk", i);
		if (err)
			return err;
		total += r->raw_len;
	}
	/* No overflow: at most 2^24 chunks of at most 2^26 bytes. */
	if (total != m->transformed_size ||
	    (m->transform == RS_TRANSFORM_IDENTITY && m->transformed_size != m->size))
		return rs_error_set(RS_ECORRUPT, "manifest chunk sizes add up to %llu, but it says %llu "
				    "(object size %llu)", (unsigned long long)total,
				    (unsigned long long)m->transformed_size, (unsigned long long)m->size);
	return 0;
}

int rs_manifest_parse(struct rs_manifest *m, const struct rs_id *oid,
		      const unsigned char *p, size_t len)
{
	struct rs_manifest tmp;
	int err;

	memset(&tmp, 0, sizeof(tmp));
	err = parse_manifest_header(&tmp, oid, p, len);
	if (!err)
		err = parse_manifest_chunks(&tmp, p);
	if (err) {
		free(tmp.chunks);
		return err;
	}
	*m = tmp;
	return 0;
}

void rs_manifest_release(struct rs_manifest *m)
{
	free(m->chunks);
	m->chunks = NULL;
	m->nchunks = 0;
}

int rs_key_make(struct rs_buf *out, const char *prefix, const struct rs_id *id, const char *suffix)
{
	char hex[RS_ID_HEXSZ + 1];

	rs_id_to_hex(hex, id);
	rs_buf_clear(out);
	return rs_buf_printf(out, "%s%s%s", prefix, hex, suffix);
}

int rs_key_parse(const char *key, const char *prefix, const char *suffix, struct rs_id *id)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), kl = strlen(key);

	if (kl != pl + RS_ID_HEXSZ + sl || strncmp(key, prefix, pl) ||
	    strcmp(key + pl + RS_ID_HEXSZ, suffix))
		return -1;
	if (rs_id_from_hex(id, key + pl, RS_ID_HEXSZ)) {
		rs_error_clear();
		return -1;
	}
	return 0;
}

int rs_key_pack(struct rs_buf *out, const struct rs_id *pack)
{
	return rs_key_make(out, RS_KEY_PACKS, pack, ".pack");
}

int rs_key_idx(struct rs_buf *out, const struct rs_id *pack)
{
	return rs_key_make(out, RS_KEY_PACKS, pack, ".idx");
}

int rs_key_manifest(struct rs_buf *out, const struct rs_id *oid)
{
	return rs_key_make(out, RS_KEY_OBJECTS, oid, "");
}
