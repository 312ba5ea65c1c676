/*
 * store-damage: damage a results store on purpose, for the repair tests,
 * the way a bug or a hostile writer would and not the way a disk does:
 * every checksum and chunk id that would catch a flipped bit is
 * recomputed with the library's own functions, so the damage reaches the
 * last proof (the object rebuilt and hashed to its oid). It talks to the
 * store through the remote layer, so it works on every backend (a
 * folder, or S3 with the AWS_* environment).
 *
 *   store-damage URL manifest OID            print the manifest: a header
 *                                            line, then one line per chunk
 *   store-damage URL wrong-chunks OID OTHER  OID's manifest lists OTHER's chunks
 *   store-damage URL size OID DELTA          OID's manifest says DELTA more bytes
 *   store-damage URL set-byte OID K POS V [--all]
 *        byte POS (-1: the middle) of chunk K (-1: the last) of OID becomes V
 *        ("flip": its complement); the chunk gets its new id and is written
 *        alone to a new pack with its index; OID's manifest (--all: every
 *        manifest naming the old chunk) is re-pointed at it
 *   store-damage URL manifest-version OID V  OID's manifest says format version V
 *                                            (its trailing checksum recomputed)
 *   store-damage URL lying-pack OID K        a new pack whose entry and index claim
 *        chunk K of OID but hold it with one byte flipped: a pack whose
 *        index lies; no manifest names it, a push may borrow from it
 *   store-damage URL container OID SIZE FILE
 *        OID becomes a session-codec object (transform 1) of SIZE bytes
 *        whose container is FILE's bytes, one chunk in a new pack: what a
 *        hostile writer with access to the remote can store
 *   store-damage URL put KEY TEXT | del KEY | list PREFIX
 *
 * Exit 0, or 1 with a message. A test tool: it trusts its arguments.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "remote/remote.h"
#include "results/buf.h"
#include "results/error.h"
#include "store/format.h"
#include "store/store.h"
#include "util/hash.h"

static int die(const char *what)
{
	fprintf(stderr, "store-damage: %s: %s\n", what, rs_error_message());
	return 1;
}

static int oid_arg(struct rs_id *id, const char *hex)
{
	return rs_id_from_hex(id, hex, strlen(hex));
}

static int print_manifest(struct rs_remote *r, const struct rs_id *oid)
{
	struct rs_manifest m;
	uint32_t i;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(r, oid, &m);
	if (err)
		return err;
	printf("transform %u size %" PRIu64 " transformed %" PRIu64 " chunks %u\n", m.transform,
	       m.size, m.transformed_size, m.nchunks);
	for (i = 0; i < m.nchunks; i++) {
		char c[RS_ID_HEXSZ + 1], p[RS_ID_HEXSZ + 1];

		rs_id_to_hex(c, &m.chunks[i].chunk);
		rs_id_to_hex(p, &m.chunks[i].pack);
		printf("%u %s %s %" PRIu64 " %u %u %u\n", i, c, p, m.chunks[i].offset,
		       m.chunks[i].raw_len, m.chunks[i].stored_len, m.chunks[i].codec);
	}
	rs_manifest_release(&m);
	return 0;
}

static int wrong_chunks(struct rs_remote *r, const struct rs_id *oid, const struct rs_id *other)
{
	struct rs_manifest m, o;
	int err;

	memset(&m, 0, sizeof(m));
	memset(&o, 0, sizeof(o));
	err = rs_store_fetch_manifest(r, oid, &m);
	if (!err)
		err = rs_store_fetch_manifest(r, other, &o);
	if (err)
		goto out;
	/* Sizes that still add up: the manifest parses, only its chunks are wrong. */
	free(m.chunks);
	m.chunks = o.chunks;
	m.nchunks = o.nchunks;
	m.transformed_size = o.transformed_size;
	if (m.transform == RS_TRANSFORM_IDENTITY)
		m.size = o.size;
	o.chunks = NULL;
	err = rs_store_put_manifest(r, oid, &m);
out:
	rs_manifest_release(&m);
	rs_manifest_release(&o);
	return err;
}

static int resize(struct rs_remote *r, const struct rs_id *oid, long delta)
{
	struct rs_manifest m;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(r, oid, &m);
	if (!err) {
		m.size += (uint64_t)(int64_t)delta;
		err = rs_store_put_manifest(r, oid, &m);
	}
	rs_manifest_release(&m);
	return err;
}

/* The raw bytes of chunk `ref`, checked, into `raw`. */
static int read_raw(struct rs_remote *r, const struct rs_chunk_ref *ref, struct rs_buf *raw)
{
	struct rs_buf key = RS_BUF_INIT, got = RS_BUF_INIT;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	const char *why = NULL;
	int err;

	err = rs_key_pack(&key, &ref->pack);
	if (!err)
		err = r->get(r, key.ptr, ref->offset, RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)ref->stored_len,
			     &got);
	if (!err)
		err = rs_buf_grow(raw, ref->raw_len + 1);
	if (!err && rs_chunk_decode((const unsigned char *)got.ptr, got.len, ref,
				    (unsigned char *)raw->ptr, dctx, &why))
		err = rs_error_set(RS_ECORRUPT, "the chunk to change is damaged already: %s", why);
	if (!err)
		raw->len = ref->raw_len;
	ZSTD_freeDCtx(dctx);
	rs_buf_release(&key);
	rs_buf_release(&got);
	return err;
}

/*
 * `raw` stored as is, alone in a new pack (and its index): its reference
 * into `ref`. The entry claims chunk id `claim` (NULL: the bytes' own).
 */
static int write_pack(struct rs_remote *r, const struct rs_buf *raw, const struct rs_id *claim,
		      struct rs_chunk_ref *ref)
{
	struct rs_buf pack = RS_BUF_INIT, idx = RS_BUF_INIT, key = RS_BUF_INIT;
	unsigned char h[RS_PACK_HEADER_SIZE], e[RS_PACK_ENTRY_HEADER_SIZE];
	int err;

	memset(ref, 0, sizeof(*ref));
	rs_sha256(&ref->chunk, raw->ptr, raw->len);
	if (claim)
		ref->chunk = *claim;
	/* The chunk's id names the pack too: unique, and the same again on a rerun. */
	ref->pack = ref->chunk;
	ref->pack.id[0] ^= 0x5a;
	ref->offset = RS_PACK_HEADER_SIZE;
	ref->raw_len = ref->stored_len = (uint32_t)raw->len;
	ref->codec = RS_CODEC_STORED;
	rs_pack_header(h);
	rs_pack_entry_header(e, ref);
	err = rs_buf_put(&pack, h, sizeof(h));
	if (!err)
		err = rs_buf_put(&pack, e, sizeof(e));
	if (!err)
		err = rs_buf_put(&pack, raw->ptr, raw->len);
	if (!err)
		err = rs_key_pack(&key, &ref->pack);
	if (!err)
		err = r->put_buf(r, key.ptr, pack.ptr, pack.len);
	if (!err)
		err = rs_idx_encode(&idx, &ref->pack, ref, 1);
	if (!err)
		err = rs_key_idx(&key, &ref->pack);
	if (!err)
		err = r->put_buf(r, key.ptr, idx.ptr, idx.len);
	rs_buf_release(&pack);
	rs_buf_release(&idx);
	rs_buf_release(&key);
	return err;
}

/* Point every reference to chunk `old` in the manifest of `oid` at `now`. */
static int repoint(struct rs_remote *r, const struct rs_id *oid, const struct rs_id *old,
		   const struct rs_chunk_ref *now)
{
	struct rs_manifest m;
	uint32_t i, hits = 0;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(r, oid, &m);
	for (i = 0; !err && i < m.nchunks; i++) {
		if (rs_id_cmp(&m.chunks[i].chunk, old))
			continue;
		m.transformed_size = m.transformed_size - m.chunks[i].raw_len + now->raw_len;
		m.chunks[i] = *now;
		hits++;
	}
	if (!err && hits)
		err = rs_store_put_manifest(r, oid, &m);
	rs_manifest_release(&m);
	return err;
}

struct oids {
	struct rs_id *v;
	size_t n;
};

static int on_object(const char *key, uint64_t size, void *payload)
{
	struct oids *o = payload;
	struct rs_id *v;

	(void)size;
	v = realloc(o->v, (o->n + 1) * sizeof(*o->v));
	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	o->v = v;
	if (rs_key_parse(key, RS_KEY_OBJECTS, "", &o->v[o->n]) == 0)
		o->n++;
	return 0;
}

static int set_byte(struct rs_remote *r, const struct rs_id *oid, long k, long pos,
		    const char *value, int all)
{
	struct rs_manifest m;
	struct rs_buf raw = RS_BUF_INIT;
	struct rs_chunk_ref now;
	struct rs_id old;
	struct oids o = { NULL, 0 };
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(r, oid, &m);
	if (err)
		goto out;
	if (k < 0)
		k = (long)m.nchunks - 1;
	if (k < 0 || (uint32_t)k >= m.nchunks) {
		err = rs_error_set(RS_EUSAGE, "no chunk %ld", k);
		goto out;
	}
	old = m.chunks[k].chunk;
	err = read_raw(r, &m.chunks[k], &raw);
	if (err)
		goto out;
	if (pos < 0)
		pos = (long)raw.len / 2;
	if ((size_t)pos >= raw.len) {
		err = rs_error_set(RS_EUSAGE, "chunk %ld has %zu bytes", k, raw.len);
		goto out;
	}
	if (!strcmp(value, "flip"))
		raw.ptr[pos] = (char)~raw.ptr[pos];
	else
		raw.ptr[pos] = (char)strtol(value, NULL, 0);
	err = write_pack(r, &raw, NULL, &now);
	if (err)
		goto out;
	if (!all) {
		err = repoint(r, oid, &old, &now);
		goto out;
	}
	err = r->list(r, RS_KEY_OBJECTS, on_object, &o);
	for (size_t i = 0; !err && i < o.n; i++)
		err = repoint(r, &o.v[i], &old, &now);
out:
	free(o.v);
	rs_buf_release(&raw);
	rs_manifest_release(&m);
	return err;
}

static int lying_pack(struct rs_remote *r, const struct rs_id *oid, long k)
{
	struct rs_manifest m;
	struct rs_buf raw = RS_BUF_INIT;
	struct rs_chunk_ref now;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_store_fetch_manifest(r, oid, &m);
	if (!err && (k < 0 || (uint32_t)k >= m.nchunks))
		err = rs_error_set(RS_EUSAGE, "no chunk %ld", k);
	if (!err)
		err = read_raw(r, &m.chunks[k], &raw);
	if (!err) {
		raw.ptr[raw.len / 2] = (char)~raw.ptr[raw.len / 2];
		err = write_pack(r, &raw, &m.chunks[k].chunk, &now);
	}
	rs_buf_release(&raw);
	rs_manifest_release(&m);
	return err;
}

static int manifest_version(struct rs_remote *r, const struct rs_id *oid, uint32_t v)
{
	struct rs_buf key = RS_BUF_INIT, b;
	struct rs_id sum;
	int err;

	rs_buf_init(&b, RS_MANIFEST_MAX_SIZE);
	err = rs_key_manifest(&key, oid);
	if (!err)
		err = r->get(r, key.ptr, 0, UINT64_MAX, &b);
	if (!err && b.len < RS_MANIFEST_HEADER_SIZE + RS_ID_RAWSZ)
		err = rs_error_set(RS_ECORRUPT, "the manifest is too short");
	if (!err) {
		unsigned char *p = (unsigned char *)b.ptr;

		p[8] = (unsigned char)v;
		p[9] = (unsigned char)(v >> 8);
		p[10] = (unsigned char)(v >> 16);
		p[11] = (unsigned char)(v >> 24);
		rs_sha256(&sum, p, b.len - RS_ID_RAWSZ);
		memcpy(p + b.len - RS_ID_RAWSZ, sum.id, RS_ID_RAWSZ);
		err = r->put_buf(r, key.ptr, b.ptr, b.len);
	}
	rs_buf_release(&key);
	rs_buf_release(&b);
	return err;
}

/* The manifest of `oid`: a transform-1 object of `size` bytes whose container is `path`'s bytes. */
static int put_container(struct rs_remote *r, const struct rs_id *oid, uint64_t size, const char *path)
{
	struct rs_buf raw = RS_BUF_INIT;
	struct rs_chunk_ref ref;
	struct rs_manifest m;
	FILE *f = fopen(path, "rb");
	char tmp[65536];
	size_t n;
	int err = f ? 0 : rs_error_set(RS_ENOTFOUND, "cannot open '%s'", path);

	while (!err) {
		n = fread(tmp, 1, sizeof(tmp), f);
		if (!n)
			break;
		err = rs_buf_put(&raw, tmp, n);
	}
	if (f)
		fclose(f);
	if (!err)
		err = write_pack(r, &raw, NULL, &ref);
	if (!err) {
		memset(&m, 0, sizeof(m));
		m.oid = *oid;
		m.size = size;
		m.transform = RS_TRANSFORM_SESSION;
		m.transformed_size = raw.len;
		m.nchunks = 1;
		m.chunks = &ref;
		err = rs_store_put_manifest(r, oid, &m);
	}
	rs_buf_release(&raw);
	return err;
}

static int print_key(const char *key, uint64_t size, void *payload)
{
	(void)payload;
	printf("%s %" PRIu64 "\n", key, size);
	return 0;
}

int main(int argc, char **argv)
{
	struct rs_remote *r = NULL;
	struct rs_id a, b;
	const char *cmd;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: store-damage URL COMMAND ARGS (see the source)\n");
		return 2;
	}
	cmd = argv[2];
	if (rs_remote_open(&r, argv[1], NULL))
		return die("cannot open the remote");
	if (!strcmp(cmd, "manifest") && argc == 4)
		err = oid_arg(&a, argv[3]) || print_manifest(r, &a);
	else if (!strcmp(cmd, "wrong-chunks") && argc == 5)
		err = oid_arg(&a, argv[3]) || oid_arg(&b, argv[4]) || wrong_chunks(r, &a, &b);
	else if (!strcmp(cmd, "size") && argc == 5)
		err = oid_arg(&a, argv[3]) || resize(r, &a, strtol(argv[4], NULL, 10));
	else if (!strcmp(cmd, "set-byte") && (argc == 7 || argc == 8))
		err = oid_arg(&a, argv[3]) ||
		      set_byte(r, &a, strtol(argv[4], NULL, 10), strtol(argv[5], NULL, 10), argv[6],
			       argc == 8 && !strcmp(argv[7], "--all"));
	else if (!strcmp(cmd, "lying-pack") && argc == 5)
		err = oid_arg(&a, argv[3]) || lying_pack(r, &a, strtol(argv[4], NULL, 10));
	else if (!strcmp(cmd, "manifest-version") && argc == 5)
		err = oid_arg(&a, argv[3]) ||
		      manifest_version(r, &a, (uint32_t)strtoul(argv[4], NULL, 10));
	else if (!strcmp(cmd, "container") && argc == 6)
		err = oid_arg(&a, argv[3]) ||
		      put_container(r, &a, strtoull(argv[4], NULL, 10), argv[5]);
	else if (!strcmp(cmd, "put") && argc == 5)
		err = r->put_buf(r, argv[3], argv[4], strlen(argv[4]));
	else if (!strcmp(cmd, "del") && argc == 4)
		err = r->del(r, argv[3]);
	else if (!strcmp(cmd, "list") && argc == 4)
		err = r->list(r, argv[3], print_key, NULL);
	else
		err = rs_error_set(RS_EUSAGE, "unknown command or wrong arguments");
	rs_remote_free(r);
	return err ? die(cmd) : 0;
}
