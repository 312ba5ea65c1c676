/*
 * Putting and getting whole objects.
 *
 * put: one pass over the file. The calling thread reads it in segments
 * and finds chunk boundaries (gear hash); a thread of its own feeds the
 * bytes, in order, to the whole-object SHA-256; worker threads hash each
 * chunk, look it up in the chunk index and compress the new ones; the
 * calling thread collects them in order and appends new chunks to a
 * local pack file. When the remote can stream (put_stream), a thread per
 * pack uploads it while it is being written, so the transfer overlaps
 * the compression; otherwise a pack is uploaded whole once it is
 * complete. A pack is named by a random id chosen when it is started, so
 * its name is known before its content. The last pack is sealed only
 * after the object's hash and size have been checked, and the indexes
 * and the manifest are uploaded only then: an object is either fully
 * present or absent, never half there, and an interrupted push leaves at
 * most unreferenced packs that the next attempt may reuse or a collector
 * may delete.
 *
 * Deduplication against chunks another push stored relies on the chunk
 * index. Before a manifest names such a "foreign" pack, the pack is
 * checked to still exist; after the manifest is written, every pack it
 * names is checked again against the collector's sweeping marks
 * (confirm_packs), and a new pack a sweep took is sent again, so that a
 * garbage collector removing unused packs (docs/store-format.md) cannot
 * leave a manifest pointing at nothing, whatever its grace period or
 * clock. An object already stored is touched (gc/touched) before the
 * push says so, so that a collector setting its manifest aside at that
 * moment brings it back.
 *
 * get: fetch the manifest, fetch and decompress chunks on worker threads
 * (each checked against its id), write them in order to a temporary file
 * next to the destination while hashing, and rename it into place only
 * if the whole object matches its oid (or, for a caller that checks the
 * file itself, RS_GET_CALLER_HASHES, only if it has the object's size).
 */
#include "store/store.h"
#include "codec/session_codec.h"
#include "util/array.h"
#include "store/backend.h"
#include "store/cache.h"
#include "store/chunker.h"
#include "store/chunkindex.h"
#include "store/format.h"
#include "store/maint.h"
#include "store/workq.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/growing.h"

#include <openssl/rand.h>

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

/* A pack is closed once it holds this many stored bytes. */
#define PACK_TARGET (32u * 1024 * 1024)
/* Packs of one object uploading at the same time, at most. */
#define STREAMS_MAX 2

struct rs_store {
	struct rs_remote *remote;
	struct rs_chunker chunker;
	int level;
	int threads;
	uint32_t transform;
	int generic_only;
	int replace;        /* opts->replace */
	long tmp_grace;     /* opts->tmp_grace, or the default */
	char *cache_dir;
	struct rs_chunk_index *index;
	int index_fresh;
	int format_known;
	int format_missing; /* the last look found no FORMAT */
	int tmp_cleaned;    /* stale temporary files removed (tmp_dir_for) */
	/* Packs an existing manifest named that were found on the remote
	   (listed, not quarantined) by this store: asked once per process. */
	struct rs_id *packs_seen;
	size_t npacks_seen, packs_seen_alloc;
};

static int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

int rs_store_open(struct rs_store **out, struct rs_remote *remote,
		  const struct rs_store_options *opts)
{
	struct rs_store_options defaults = { 0 };
	struct rs_store *s;
	int err;

	if (!opts)
		opts = &defaults;
	err = rs_store_check_backend(remote);
	if (err)
		return err;
	if (opts->transform != RS_TRANSFORM_IDENTITY)
		return rs_error_set(RS_EUSAGE, "transform %u is not available in this build", opts->transform);
	s = calloc(1, sizeof(*s));
	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	s->remote = remote;
	s->level = opts->zstd_level ? opts->zstd_level : RS_STORE_DEFAULT_LEVEL;
	if (s->level < ZSTD_minCLevel() || s->level > ZSTD_maxCLevel()) {
		free(s);
		return rs_error_set(RS_EUSAGE, "zstd level %d is outside %d..%d", opts->zstd_level,
				    ZSTD_minCLevel(), ZSTD_maxCLevel());
	}
	s->threads = opts->threads > 0 ? opts->threads : cpu_count();
	s->transform = opts->transform;
	s->generic_only = opts->generic_only;
	s->replace = opts->replace;
	s->tmp_grace = opts->tmp_grace > 0 ? opts->tmp_grace : RS_TMP_GRACE_DEFAULT;
	err = rs_chunker_init(&s->chunker, RS_CHUNK_MIN, RS_CHUNK_AVG, RS_CHUNK_MAX);
	if (!err && opts->cache_dir) {
		/* One cache folder per remote: name it after the remote's URL. */
		struct rs_buf dir = RS_BUF_INIT;

		err = rs_store_cache_folder(&dir, opts->cache_dir, remote->display_url);
		s->cache_dir = rs_buf_detach(&dir, NULL);
	}
	if (!err)
		err = rs_chunk_index_open(&s->index, s->cache_dir);
	if (err) {
		rs_store_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void rs_store_free(struct rs_store *s)
{
	if (!s)
		return;
	rs_chunk_index_free(s->index);
	free(s->packs_seen);
	free(s->cache_dir);
	free(s);
}

int rs_store_has(struct rs_store *s, const struct rs_id *oid)
{
	struct rs_buf key = RS_BUF_INIT;
	int err = rs_key_manifest(&key, oid);

	if (!err)
		err = s->remote->stat(s->remote, key.ptr, NULL);
	rs_buf_release(&key);
	return err;
}

int rs_store_read_format(struct rs_remote *remote)
{
	struct rs_buf text;
	int err;

	rs_buf_init(&text, 4096); /* FORMAT is one short line */
	err = remote->get(remote, RS_KEY_FORMAT, 0, UINT64_MAX, &text);
	if (!err)
		err = rs_format_text_check(text.ptr, text.len);
	if (err == RS_ENEWER || err == RS_EFORMAT || err == RS_ETOOBIG)
		err = rs_error_wrap(err, "'%s'", remote->display_url);
	rs_buf_release(&text);
	return err;
}

int rs_store_check_format(struct rs_store *s)
{
	int err;

	if (s->format_known)
		return 0;
	err = rs_store_read_format(s->remote);
	if (err == RS_ENOTFOUND)
		err = rs_store_no_store_error(s->remote);
	if (!err)
		s->format_known = 1;
	s->format_missing = err == RS_ENOTFOUND;
	return err;
}

int rs_store_no_store_error(const struct rs_remote *remote)
{
	return rs_error_set(RS_ENOTFOUND, "'%s' holds no results store (no FORMAT file): check "
			    "results.remote ('results init --remote URL' sets it); a first push creates "
			    "the store", remote->display_url);
}

/* Write FORMAT on a new store; refuse a store written in another format. */
static int check_format(struct rs_store *s)
{
	/* A new store the agent just looked at: no second look. */
	int err = s->format_missing ? RS_ENOTFOUND : rs_store_check_format(s);

	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = s->remote->put_buf(s->remote, RS_KEY_FORMAT, RS_FORMAT_TEXT, strlen(RS_FORMAT_TEXT));
		if (!err)
			s->format_known = 1;
	}
	return err;
}

/* ---- put ---------------------------------------------------------------- */

struct put_job {
	struct rs_store *store;
	const unsigned char *raw; /* borrowed: points into a read segment */
	size_t raw_len;
	int segment;              /* which one, released when collected */
	struct rs_id id;
	int known;               /* the index has it: nothing to compress */
	struct rs_chunk_ref ref; /* where, when known */
	unsigned char *stored;
	size_t stored_len, stored_alloc;
	uint8_t codec;
	ZSTD_CCtx *cctx;
};

static int put_work(void *arg, void *ctx)
{
	struct put_job *j = arg;
	struct rs_store *s = ctx;
	size_t bound, n;

	rs_sha256(&j->id, j->raw, j->raw_len);
	j->known = rs_chunk_index_lookup(s->index, &j->id, &j->ref) == 0;
	if (j->known)
		return 0;
	bound = ZSTD_compressBound(j->raw_len);
	if (rs_array_grow(&j->stored, &j->stored_alloc, bound, 1, bound))
		return rs_error_last();
	if (!j->cctx) {
		j->cctx = ZSTD_createCCtx();
		if (!j->cctx)
			return rs_error_set(RS_EGENERIC, "cannot create a zstd context");
		ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_compressionLevel, s->level);
		ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_checksumFlag, 0);
	}
	n = ZSTD_compress2(j->cctx, j->stored, j->stored_alloc, j->raw, j->raw_len);
	if (ZSTD_isError(n))
		return rs_error_set(RS_EGENERIC, "zstd: %s", ZSTD_getErrorName(n));
	if (n >= j->raw_len) {
		/* Incompressible: store as is, so reading costs a copy only. */
		memcpy(j->stored, j->raw, j->raw_len);
		j->stored_len = j->raw_len;
		j->codec = RS_CODEC_STORED;
	} else {
		j->stored_len = n;
		j->codec = RS_CODEC_ZSTD;
	}
	return 0;
}

/*
 * A pack being written locally. With a streaming remote, `thread` uploads
 * it as it grows (`grow` is the handshake); otherwise it is uploaded whole
 * once the object is verified.
 */
struct new_pack {
	struct rs_buf path;
	int fd;
	uint64_t size;
	struct rs_id id;
	struct rs_chunk_ref *refs; /* entries, for the .idx */
	size_t nrefs, arefs;
	struct rs_buf idx;

	struct rs_remote *remote;
	struct rs_buf key;          /* packs/<id>.pack */
	struct rs_growing *grow;    /* non-NULL while a thread streams it */
	pthread_t thread;
	int stream_err;             /* the upload's result, once joined */
	int sent;                   /* the .pack is on the remote */
	struct rs_error_saved stream_saved; /* its failure: threads have their own slots */
};

struct put_state {
	struct rs_store *s;
	struct rs_manifest m;
	size_t achunks, apack_of;
	long *pack_of;            /* per manifest chunk: new pack number, or -1 */
	struct new_pack **packs;  /* each its own allocation: upload threads point at them */
	size_t npacks, apacks;
	int open_pack;            /* index of the pack being filled, or -1 */
	struct rs_buf tmp_dir;
	struct rs_store_put_stats *stats;
};

static void *stream_pack(void *arg)
{
	struct new_pack *p = arg;

	p->stream_err = p->remote->put_stream(p->remote, p->key.ptr, p->grow);
	if (p->stream_err)
		rs_error_save(&p->stream_saved, p->stream_err);
	return NULL;
}

/* Wait for the pack's upload thread, if any; its result is the return. */
static int join_stream(struct new_pack *p)
{
	if (!p->grow)
		return 0;
	pthread_join(p->thread, NULL);
	rs_growing_free(p->grow);
	p->grow = NULL;
	if (p->stream_err)
		return rs_error_restore(&p->stream_saved);
	p->sent = 1;
	return 0;
}

static void new_pack_release(struct new_pack *p)
{
	if (p->grow) {
		/* Whatever the upload sent never shows: put_stream's promise. */
		rs_growing_cancel(p->grow);
		pthread_join(p->thread, NULL);
		rs_growing_free(p->grow);
	}
	if (p->fd >= 0)
		close(p->fd);
	if (p->path.ptr)
		unlink(p->path.ptr);
	rs_buf_release(&p->path);
	rs_buf_release(&p->key);
	rs_buf_release(&p->idx);
	free(p->refs);
	free(p);
}

/*
 * Start a new pack: a random id (its name is needed before its content is
 * known, to stream it), a local file with the header, and with a streaming
 * remote a thread that uploads the file as it grows.
 */
static int start_pack(struct put_state *st)
{
	struct rs_remote *r = st->s->remote;
	struct new_pack *p;
	unsigned char h[RS_PACK_HEADER_SIZE];
	int err;

	err = rs_array_grow(&st->packs, &st->apacks, st->npacks + 1, sizeof(*st->packs), 64);
	if (err)
		return err;
	/*
	 * At most STREAMS_MAX uploads at once: when the link is slower than
	 * the compression, wait for the oldest (it is sealed, so it ends).
	 */
	if (st->npacks >= STREAMS_MAX) {
		err = join_stream(st->packs[st->npacks - STREAMS_MAX]);
		if (err)
			return err;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return rs_error_set(RS_EGENERIC, "out of memory");
	st->packs[st->npacks++] = p;
	p->fd = -1;
	p->remote = r;
	err = rs_buf_printf(&p->path, "%s/pack-XXXXXX", st->tmp_dir.ptr);
	if (err)
		return err;
	if (RAND_bytes(p->id.id, sizeof(p->id.id)) != 1)
		return rs_error_set(RS_EGENERIC, "no random bytes for a pack id");
	err = rs_key_pack(&p->key, &p->id);
	if (err)
		return err;
	p->fd = mkstemp(p->path.ptr);
	if (p->fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot create a pack file in '%s'", st->tmp_dir.ptr);
	rs_fs_mark_live(p->fd); /* rs_fs_remove_stale leaves it alone while open */
	rs_pack_header(h);
	err = rs_fs_write_all(p->fd, h, sizeof(h));
	if (err)
		return rs_error_wrap(err, "cannot write pack '%s'", p->path.ptr);
	p->size = sizeof(h);
	st->open_pack = (int)st->npacks - 1;
	if (r->put_stream) {
		err = rs_growing_new(&p->grow, p->path.ptr);
		if (err)
			return err;
		rs_growing_publish(p->grow, p->size);
		if (pthread_create(&p->thread, NULL, stream_pack, p) != 0) {
			/* No thread to be had: upload it whole at the end. */
			rs_growing_free(p->grow);
			p->grow = NULL;
		}
	}
	return 0;
}

/* The open pack is complete: its streaming upload may finish. */
static int close_pack(struct put_state *st)
{
	struct new_pack *p;

	if (st->open_pack < 0)
		return 0;
	p = st->packs[st->open_pack];
	st->open_pack = -1;
	/*
	 * No fsync: this file is a copy on its way to the remote, and the
	 * remote's put makes the pack durable there.
	 */
	if (close(p->fd) != 0) {
		p->fd = -1;
		return rs_error_errno(RS_EGENERIC, "cannot write pack '%s'", p->path.ptr);
	}
	p->fd = -1;
	if (p->grow)
		rs_growing_seal(p->grow, p->size);
	return rs_idx_encode(&p->idx, &p->id, p->refs, p->nrefs);
}

static int append_chunk(struct put_state *st, struct put_job *j, struct rs_chunk_ref *ref)
{
	unsigned char h[RS_PACK_ENTRY_HEADER_SIZE];
	struct new_pack *p;
	int err;

	if (st->open_pack < 0) {
		err = start_pack(st);
		if (err)
			return err;
	}
	p = st->packs[st->open_pack];
	memset(ref, 0, sizeof(*ref));
	ref->chunk = j->id;
	ref->pack = p->id;
	ref->offset = p->size;
	ref->raw_len = (uint32_t)j->raw_len;
	ref->stored_len = (uint32_t)j->stored_len;
	ref->codec = j->codec;
	rs_pack_entry_header(h, ref);
	err = rs_fs_write_all(p->fd, h, sizeof(h));
	if (!err)
		err = rs_fs_write_all(p->fd, j->stored, j->stored_len);
	if (err)
		return rs_error_wrap(err, "cannot write pack '%s'", p->path.ptr);
	p->size += sizeof(h) + j->stored_len;
	if (p->grow)
		rs_growing_publish(p->grow, p->size);
	err = rs_array_grow(&p->refs, &p->arefs, p->nrefs + 1, sizeof(*p->refs), 64);
	if (err)
		return err;
	p->refs[p->nrefs++] = *ref;
	st->stats->chunks_new++;
	st->stats->bytes_stored += sizeof(h) + j->stored_len;
	if (p->size >= PACK_TARGET)
		return close_pack(st);
	return 0;
}

/* An earlier chunk of this same object with the same id, if any. */
static long find_in_object(const struct put_state *st, const struct rs_id *id)
{
	uint32_t i;

	for (i = 0; i < st->m.nchunks; i++)
		if (!rs_id_cmp(&st->m.chunks[i].chunk, id))
			return (long)i;
	return -1;
}

/* Take one finished job, in object order, into the manifest and packs. */
static int take_job(struct put_state *st, struct put_job *j)
{
	struct rs_chunk_ref ref;
	long pack_no = -1, earlier = -1;
	int err;

	err = rs_array_grow(&st->m.chunks, &st->achunks, st->m.nchunks + 1, sizeof(*st->m.chunks), 64);
	if (err)
		return err;
	err = rs_array_grow(&st->pack_of, &st->apack_of, st->m.nchunks + 1, sizeof(*st->pack_of), 64);
	if (err)
		return err;
	if (!j->known)
		earlier = find_in_object(st, &j->id);
	if (j->known) {
		ref = j->ref;
	} else if (earlier >= 0) {
		ref = st->m.chunks[earlier];
		pack_no = st->pack_of[earlier];
	} else {
		err = append_chunk(st, j, &ref);
		if (err)
			return err;
		/* append_chunk may have closed the pack the chunk went into */
		pack_no = st->open_pack >= 0 ? st->open_pack : (long)st->npacks - 1;
	}
	st->pack_of[st->m.nchunks] = pack_no;
	st->m.chunks[st->m.nchunks++] = ref;
	st->m.transformed_size += j->raw_len;
	st->stats->chunks++;
	return 0;
}

/* 0 when pack `pack` and its index are both on the remote, RS_ENOTFOUND when either is not. */
static int stat_pack(struct rs_remote *r, struct rs_buf *key, const struct rs_id *pack)
{
	int err;

	err = rs_key_idx(key, pack);
	if (err)
		return err;
	err = r->stat(r, key->ptr, NULL);
	if (err)
		return err;
	err = rs_key_pack(key, pack);
	if (err)
		return err;
	return r->stat(r, key->ptr, NULL);
}
/*
 * Check that every pack the manifest borrows from other pushes still
 * exists: both its .idx (a collector deletes that first, to mark the pack)
 * and its .pack. A stat per borrowed pack, not per chunk.
 */
static int check_foreign_packs(struct put_state *st, int *missing)
{
	struct rs_remote *r = st->s->remote;
	struct rs_buf key = RS_BUF_INIT;
	uint32_t i, k;
	int err = 0;

	*missing = 0;
	for (i = 0; !err && i < st->m.nchunks; i++) {
		const struct rs_id *pack = &st->m.chunks[i].pack;

		if (st->pack_of[i] >= 0)
			continue;
		for (k = 0; k < i; k++)
			if (st->pack_of[k] < 0 && !rs_id_cmp(&st->m.chunks[k].pack, pack))
				break;
		if (k < i)
			continue; /* checked already */
		err = stat_pack(r, &key, pack);
		if (err == RS_ENOTFOUND) {
			rs_chunk_index_forget(st->s->index, pack);
			*missing = 1;
			err = 0;
		}
	}
	rs_buf_release(&key);
	return err;
}

int rs_store_put_manifest_at(struct rs_remote *remote, const char *prefix,
			     const struct rs_id *oid, const struct rs_manifest *m)
{
	struct rs_buf key = RS_BUF_INIT, bytes = RS_BUF_INIT;
	int err;

	err = rs_manifest_encode(&bytes, m);
	if (err)
		goto out;
	err = rs_key_make(&key, prefix, oid, "");
	if (err)
		goto out;
	err = remote->put_buf(remote, key.ptr, bytes.ptr, bytes.len);
out:
	rs_buf_release(&key);
	rs_buf_release(&bytes);
	return err;
}

int rs_store_put_manifest(struct rs_remote *remote, const struct rs_id *oid,
			  const struct rs_manifest *m)
{
	return rs_store_put_manifest_at(remote, RS_KEY_OBJECTS, oid, m);
}

/* Send one pack (only once, whatever retries follow) and its index. */
static int upload_pack(struct rs_remote *r, struct new_pack *p, struct rs_buf *key)
{
	int err;

	if (p->grow) {
		err = join_stream(p);
		if (err)
			return err;
	} else if (!p->sent) {
		err = r->put_file(r, p->key.ptr, p->path.ptr);
		if (err)
			return err;
		p->sent = 1;
	}
	err = rs_key_idx(key, &p->id);
	if (err)
		return err;
	return r->put_buf(r, key->ptr, p->idx.ptr, p->idx.len);
}

static int upload_packs(struct put_state *st)
{
	struct rs_remote *r = st->s->remote;
	struct rs_buf key = RS_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < st->npacks; i++) {
		struct new_pack *p = st->packs[i];

		err = upload_pack(r, p, &key);
		if (err) {
			err = rs_error_wrap(err, "cannot upload a pack to '%s'", r->display_url);
			break;
		}
		/*
		 * From now on the pack is the remote's: if the manifest or a later
		 * pack fails, a retry in this process borrows it instead of
		 * sending it again. Best effort: without the entry a retry
		 * only sends the pack again.
		 */
		if (rs_chunk_index_add(st->s->index, &p->id, (unsigned char *)p->idx.ptr, p->idx.len))
			rs_error_clear();
	}
	rs_buf_release(&key);
	return err;
}

static int read_some(int fd, unsigned char *p, size_t n, size_t *got)
{
	*got = 0;
	while (*got < n) {
		ssize_t r = read(fd, p + *got, n - *got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return rs_error_errno(RS_EGENERIC, "read failed");
		}
		if (r == 0)
			break;
		*got += (size_t)r;
	}
	return 0;
}

/* "pack-XXXXXX": a local pack being written (start_pack's mkstemp name). */
static int is_pack_tmp_name(const char *name)
{
	return !strncmp(name, "pack-", 5) && strlen(name) == 11;
}

static int tmp_dir_for(struct rs_buf *out, struct rs_store *s)
{
	const char *t = getenv("TMPDIR");
	int err;

	if (s->cache_dir) {
		err = rs_buf_printf(out, "%s/tmp", s->cache_dir);
		if (!err)
			err = rs_fs_mkdir_p(out->ptr, 0700);
		/*
		 * Once per store: the leftovers of killed pushes (local packs
		 * and cached indexes half written), never a live writer's.
		 */
		if (!err && !s->tmp_cleaned) {
			rs_fs_remove_stale(out->ptr, is_pack_tmp_name, s->tmp_grace);
			rs_fs_remove_stale(s->cache_dir, rs_fs_is_tmp_name, s->tmp_grace);
			s->tmp_cleaned = 1;
		}
		return err;
	}
	return rs_buf_puts(out, t && *t ? t : "/tmp");
}

/*
 * The reading side of put_once. The file is read into a few segments,
 * used in turn, and chunk jobs point into them: no chunk is copied. A
 * chunk never straddles two segments. Whatever has been read is cut at
 * once (a cut found in a prefix is final, see rs_chunker_next); when the
 * bytes left in a segment hold no cut and are fewer than max_size, they
 * are copied to the start of the next segment and the read goes on after
 * them. That tail is under one chunk: on session JSON a fifth of the
 * bytes is copied once (57 of 300 MB), where a sliding window copied
 * every byte into its job and moved many down within the window besides.
 *
 * A segment is refilled only once every chunk job pointing into it has
 * been collected and the whole-object hasher is done with it. The hasher
 * is a work queue of one thread, which runs its jobs one at a time in
 * submission order: each read is hashed as it lands, in file order, while
 * this thread reads and cuts the next bytes and the workers hash and
 * compress chunks. Hashing here instead kept this thread the slowest
 * stage of the pipeline.
 *
 * Segments are 1.5 max_size (12 MiB): each refill reads at least half a
 * maximum chunk, and one segment holds about three chunks of session
 * JSON, so there are enough of them for one per job slot plus the one
 * being filled. Memory: segments * 12 MiB, 24 MiB on one or two cores.
 */
#define SEGMENT_ALIGN ((size_t)2 << 20) /* a huge page on x86-64 */

struct put_segment {
	unsigned char *buf;
	size_t len;   /* bytes in buf */
	size_t fresh; /* buf[fresh..len) came from the last read: the hasher's part */
	int chunks;   /* chunk jobs pointing into buf, not yet collected */
	int hashing;  /* its hash job is not yet collected */
};

struct put_feed {
	struct rs_workq *q;  /* chunk jobs, on s->threads workers */
	struct rs_workq *hq; /* whole-object hash, one thread */
	struct rs_sha256 *whole;
	struct put_job *jobs;
	int nslots;
	uint64_t seq;
	struct put_segment *seg;
	int nseg;
	size_t seg_size;
	uint64_t done;       /* bytes of the chunks collected */
	rs_progress_fn progress;
	void *payload;
	uint64_t size;
};

/*
 * Segments are filled whole, again and again, so ask for transparent huge
 * pages (the kernel's "madvise" mode): a 12 MiB segment then costs 6 page
 * faults instead of 3072. On a VM, where a fault is dear, the faults of
 * small pages were a tenth of a put's CPU time. Where huge pages are off,
 * madvise fails and nothing changes.
 */
static unsigned char *segment_alloc(size_t n)
{
	void *p;

	if (posix_memalign(&p, SEGMENT_ALIGN, n))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
}

static int hash_work(void *arg, void *ctx)
{
	struct put_segment *g = arg;

	rs_sha256_update(ctx, g->buf + g->fresh, g->len - g->fresh);
	return 0;
}

/* Collect the oldest chunk job; take it into the manifest unless `take` is 0. */
static int collect_chunk(struct put_feed *f, struct put_state *st, int take)
{
	void *job;
	struct put_job *j;
	int err = rs_workq_collect(f->q, &job);

	j = job;
	assert(j); /* callers collect only while jobs are pending */
	f->seg[j->segment].chunks--;
	if (!take)
		return err;
	if (!err)
		err = take_job(st, j);
	if (!err) {
		f->done += j->raw_len;
		if (f->progress)
			err = f->progress(f->done, f->size, f->payload);
	}
	return err;
}

static void collect_hash(struct put_feed *f)
{
	void *job;

	/* hash_work cannot fail: it only hashes bytes already in memory */
	if (rs_workq_collect(f->hq, &job))
		assert(!"hash_work failed");
	((struct put_segment *)job)->hashing = 0;
}

/* Collect jobs, in order, until none uses segment `n` any more. */
static int release_segment(struct put_feed *f, struct put_state *st, int n)
{
	int err;

	while (f->seg[n].chunks > 0) {
		err = collect_chunk(f, st, 1);
		if (err)
			return err;
	}
	while (f->seg[n].hashing)
		collect_hash(f);
	return 0;
}

/*
 * Refill the released segment `n`: first the `tail_len` bytes at `tail`
 * (the end of the current segment, where no cut was found), then as much
 * of the file as fits; the new bytes go to the hasher.
 */
static int fill_segment(struct put_feed *f, int n, int fd, const unsigned char *tail,
			size_t tail_len, int *eof)
{
	struct put_segment *g = &f->seg[n];
	size_t nread;
	int err;

	memcpy(g->buf, tail, tail_len);
	err = read_some(fd, g->buf + tail_len, f->seg_size - tail_len, &nread);
	if (err)
		return err;
	*eof = nread < f->seg_size - tail_len;
	g->len = tail_len + nread;
	g->fresh = tail_len;
	if (nread) {
		g->hashing = 1;
		rs_workq_submit(f->hq, g);
	}
	return 0;
}

/* Collect every job still queued, taking chunks only while `err` is 0; the first error wins. */
static int drain_feed(struct put_feed *f, struct put_state *st, int err)
{
	while (rs_workq_pending(f->q) > 0) {
		int e = collect_chunk(f, st, !err);

		if (!err && e)
			err = e;
	}
	while (rs_workq_pending(f->hq) > 0)
		collect_hash(f);
	return err;
}

/* Queue bytes [pos, pos + len) of segment `seg` as the next chunk job. */
static int submit_chunk(struct put_feed *f, struct put_state *st, int seg, size_t pos, size_t len)
{
	struct put_job *j;
	int err;

	if (rs_workq_pending(f->q) == f->nslots) {
		err = collect_chunk(f, st, 1);
		if (err)
			return err;
	}
	j = &f->jobs[f->seq++ % (uint64_t)f->nslots];
	j->raw = f->seg[seg].buf + pos;
	j->raw_len = len;
	j->segment = seg;
	f->seg[seg].chunks++;
	rs_workq_submit(f->q, j);
	return 0;
}

/*
 * Read the file at `fd` through the segments (see above), cut it into
 * chunks and queue them; every job is collected, in order, before this
 * returns. A boundary is forced at `cut_at` when it is not 0.
 */
static int chunk_file(struct put_feed *f, struct put_state *st, int fd, const char *path,
		      uint64_t cut_at)
{
	struct rs_chunker *chunker = &st->s->chunker;
	size_t pos = 0, max = chunker->max_size;
	uint64_t at = 0; /* file offset of g->buf + pos */
	int cur = f->nseg - 1, eof = 0, err = 0; /* the first fill goes to segment 0 */

	for (;;) {
		struct put_segment *g = &f->seg[cur];
		size_t left = g->len - pos, cut;

		cut = left ? rs_chunker_next(chunker, g->buf + pos, left) : 0;
		if (cut_at > at && cut_at < at + cut)
			cut = (size_t)(cut_at - at);
		if (!eof && cut == left && left < max) {
			/* No cut in the bytes at hand: carry them over and read on. */
			int next = (cur + 1) % f->nseg;

			err = release_segment(f, st, next);
			if (err)
				break;
			err = fill_segment(f, next, fd, g->buf + pos, left, &eof);
			if (err) {
				err = rs_error_wrap(err, "cannot read '%s'", path);
				break;
			}
			cur = next;
			pos = 0;
			continue;
		}
		if (!left)
			break;
		err = submit_chunk(f, st, cur, pos, cut);
		if (err)
			break;
		pos += cut;
		at += cut;
	}
	return drain_feed(f, st, err);
}

/* The segments, the job slots and both queues of one put. */
static int put_feed_open(struct put_feed *f, struct rs_store *s, uint64_t file_size,
			 rs_progress_fn progress, void *payload)
{
	size_t max = s->chunker.max_size;
	int i, err;

	f->nslots = s->threads + 1;
	f->nseg = 1 + (f->nslots + 2) / 3;
	f->seg_size = (max + max / 2 + SEGMENT_ALIGN - 1) & ~(SEGMENT_ALIGN - 1);
	f->progress = progress;
	f->payload = payload;
	f->size = file_size;
	f->jobs = calloc((size_t)f->nslots, sizeof(*f->jobs));
	f->seg = calloc((size_t)f->nseg, sizeof(*f->seg));
	f->whole = rs_sha256_new();
	if (!f->jobs || !f->seg || !f->whole)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < f->nseg; i++) {
		f->seg[i].buf = segment_alloc(f->seg_size);
		if (!f->seg[i].buf)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	err = rs_workq_new(&f->q, s->threads, f->nslots, put_work, s);
	if (err)
		return err;
	return rs_workq_new(&f->hq, 1, f->nseg, hash_work, f->whole);
}

static void put_feed_release(struct put_feed *f)
{
	int i;

	/* The queues first: their threads may still read the segments. */
	rs_workq_free(f->q);
	rs_workq_free(f->hq);
	for (i = 0; f->jobs && i < f->nslots; i++) {
		free(f->jobs[i].stored);
		ZSTD_freeCCtx(f->jobs[i].cctx);
	}
	free(f->jobs);
	for (i = 0; f->seg && i < f->nseg; i++)
		free(f->seg[i].buf);
	free(f->seg);
	rs_sha256_free(f->whole);
	memset(f, 0, sizeof(*f));
}

static void put_state_init(struct put_state *st, struct rs_store *s, const struct rs_id *oid,
			   uint64_t size, uint32_t transform, struct rs_store_put_stats *stats)
{
	memset(st, 0, sizeof(*st));
	st->s = s;
	st->open_pack = -1;
	st->stats = stats;
	st->m.oid = *oid;
	st->m.size = size;
	st->m.transform = transform;
}

static void put_state_release(struct put_state *st)
{
	size_t i;

	for (i = 0; i < st->npacks; i++)
		new_pack_release(st->packs[i]);
	free(st->packs);
	free(st->pack_of);
	rs_manifest_release(&st->m);
	rs_buf_release(&st->tmp_dir);
}

/* Open the file to chunk, which must be `file_size` bytes. */
static int open_source(const char *path, uint64_t file_size, int *fd_out)
{
	struct stat sb;
	int fd;

	memset(&sb, 0, sizeof(sb));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rs_error_errno(RS_ENOTFOUND, "cannot open '%s'", path);
	*fd_out = fd;
	if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size != file_size)
		return rs_error_set(RS_ECORRUPT, "'%s' is %lld bytes, but the object should be %llu",
				    path, (long long)sb.st_size, (unsigned long long)file_size);
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

/* The bytes chunked are the ones git-lfs hashed: checked before the last pack is sealed. */
static int check_source(struct put_feed *f, const struct put_state *st, const char *path,
			const struct rs_id *file_id, uint64_t file_size)
{
	char want_hex[RS_ID_HEXSZ + 1], got_hex[RS_ID_HEXSZ + 1];
	struct rs_id got;

	rs_sha256_final(f->whole, &got);
	if (!rs_id_cmp(&got, file_id) && st->m.transformed_size == file_size)
		return 0;
	rs_id_to_hex(want_hex, file_id);
	rs_id_to_hex(got_hex, &got);
	return rs_error_set(RS_ECORRUPT, "'%s' does not match object %.12s (its SHA-256 is %.12s): "
			    "the file changed since git-lfs hashed it", path, want_hex, got_hex);
}

/*
 * With `touch`, touch the manifest of `oid` (gc/touched/<oid>: "<unix
 * seconds> push"); then look whether objects/<oid> is there
 * (`*present`). A collector deletes the manifest, then looks for the
 * touch: one of the two sees the other, so a push that found the
 * manifest and reports "stored" never has it deleted under it
 * (docs/store-format.md, "Garbage collection").
 */
static int touch_manifest(struct rs_remote *r, const struct rs_id *oid, int touch, int *present)
{
	struct rs_buf key = RS_BUF_INIT, text = RS_BUF_INIT;
	int err = 0;

	*present = 0;
	if (touch) {
		err = rs_key_make(&key, RS_KEY_TOUCHED, oid, "");
		if (!err)
			err = rs_buf_printf(&text, "%lld push\n", (long long)time(NULL));
		if (!err)
			err = r->put_buf(r, key.ptr, text.ptr, text.len);
	}
	if (!err)
		err = rs_key_manifest(&key, oid);
	if (!err)
		err = rs_store_key_present(r, key.ptr, present);
	rs_buf_release(&key);
	rs_buf_release(&text);
	return err;
}

int rs_store_key_present(struct rs_remote *remote, const char *key, int *present)
{
	int err = remote->stat(remote, key, NULL);

	*present = !err;
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
	}
	return err;
}

struct id_list {
	struct rs_id *ids;
	size_t n, alloc;
};

static int on_sweeping(const char *key, uint64_t size, void *payload)
{
	struct id_list *l = payload;
	struct rs_id id;

	(void)size;
	if (rs_key_parse(key, RS_KEY_SWEEPING, "", &id))
		return 0;
	return rs_array_push_id(&l->ids, &l->n, &l->alloc, &id);
}

/*
 * 1 when pack `pack` may be gone by the time the manifest is read: a
 * sweep of it has begun (listed in `sweeping`), or its .pack is not
 * there any more.
 */
static int pack_in_doubt(struct rs_remote *r, const struct id_list *sweeping,
			 const struct rs_id *pack, struct rs_buf *key, int *doubt)
{
	size_t i;
	int err, present = 0;

	*doubt = 1;
	for (i = 0; i < sweeping->n; i++)
		if (!rs_id_cmp(&sweeping->ids[i], pack))
			return 0;
	err = rs_key_pack(key, pack);
	if (!err)
		err = rs_store_key_present(r, key->ptr, &present);
	*doubt = !present;
	return err;
}

/*
 * Send new pack `p` again under a new id (a sweep may delete the old
 * name at any moment): the local copy is still there, its index is
 * encoded again with the new id.
 */
static int resend_pack(struct put_state *st, struct new_pack *p)
{
	struct rs_remote *r = st->s->remote;
	struct rs_buf key = RS_BUF_INIT;
	int err;

	rs_chunk_index_forget(st->s->index, &p->id);
	if (RAND_bytes(p->id.id, sizeof(p->id.id)) != 1)
		return rs_error_set(RS_EGENERIC, "no random bytes for a pack id");
	err = rs_idx_encode(&p->idx, &p->id, p->refs, p->nrefs);
	if (!err)
		err = rs_key_pack(&p->key, &p->id);
	if (!err)
		err = r->put_file(r, p->key.ptr, p->path.ptr);
	if (!err)
		err = rs_key_idx(&key, &p->id);
	if (!err)
		err = r->put_buf(r, key.ptr, p->idx.ptr, p->idx.len);
	if (!err && rs_chunk_index_add(st->s->index, &p->id, (unsigned char *)p->idx.ptr, p->idx.len))
		rs_error_clear();
	rs_buf_release(&key);
	return err;
}

/* The manifest's references to new packs, from their current ids. */
static void name_new_packs(struct put_state *st)
{
	uint32_t i;

	for (i = 0; i < st->m.nchunks; i++)
		if (st->pack_of[i] >= 0)
			st->m.chunks[i].pack = st->packs[st->pack_of[i]]->id;
}

/* Confirmation rounds before a push gives up (each replaces what a sweep took). */
#define CONFIRM_ROUNDS 4

/*
 * After the manifest is written: read gc/sweeping/, and check
 * that every pack it names is still there and not being swept. A
 * collector marks a sweep, then reads every manifest, then deletes: so
 * a pack that passes here is never deleted while this manifest names
 * it, whatever the grace period or the clocks. A new pack in doubt is
 * sent again under a new id and the manifest rewritten; a borrowed one
 * is forgotten and the put starts again without it (*again). A
 * manifest a collector set aside meanwhile is written again.
 */
static int confirm_packs(struct put_state *st, const struct rs_id *oid, int *again)
{
	struct rs_remote *r = st->s->remote;
	struct rs_buf key = RS_BUF_INIT;
	struct id_list sweeping = { NULL, 0, 0 };
	int round, err = 0;

	for (round = 0; round < CONFIRM_ROUNDS && !err; round++) {
		int present = 0, resent = 0;
		uint32_t i, k;

		sweeping.n = 0;
		err = r->list(r, RS_KEY_SWEEPING, on_sweeping, &sweeping);
		for (i = 0; !err && i < st->m.nchunks; i++) {
			const struct rs_id *pack = &st->m.chunks[i].pack;
			int doubt = 0;

			for (k = 0; k < i; k++)
				if (!rs_id_cmp(&st->m.chunks[k].pack, pack))
					break;
			if (k < i)
				continue; /* checked already */
			err = pack_in_doubt(r, &sweeping, pack, &key, &doubt);
			if (err || !doubt)
				continue;
			if (st->pack_of[i] < 0) {
				rs_chunk_index_forget(st->s->index, pack);
				*again = 1;
				continue;
			}
			err = resend_pack(st, st->packs[st->pack_of[i]]);
			resent = 1;
		}
		if (!err && !*again)
			err = touch_manifest(r, oid, 0, &present);
		if (err || *again)
			break;
		if (present && !resent)
			goto out;
		name_new_packs(st);
		err = rs_store_put_manifest(r, oid, &st->m);
	}
	if (!err && !*again) {
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, oid);
		err = rs_error_set(RS_ERETRY, "the packs of object %.12s on '%s' keep being swept while it is "
				   "pushed: is a garbage collection with a very short grace period running? "
				   "try again", hex, r->display_url);
	}
out:
	free(sweeping.ids);
	rs_buf_release(&key);
	return err;
}

/*
 * The object is chunked and checked: send its packs, then their indexes,
 * then the manifest (docs/store-format.md, "Writing an object"), then
 * confirm it (confirm_packs). *again is set when a borrowed pack
 * vanished: before anything was sent, or after the manifest (which the
 * next attempt then writes again).
 */
static int put_publish(struct put_state *st, const struct rs_id *oid, int *again)
{
	struct rs_remote *r = st->s->remote;
	int err, missing = 0;

	err = check_foreign_packs(st, &missing);
	if (err)
		return err;
	if (missing) {
		*again = 1;
		return 0;
	}
	err = close_pack(st);
	if (err)
		return err;
	err = upload_packs(st);
	if (err)
		return err;
	name_new_packs(st);
	err = rs_store_put_manifest(r, oid, &st->m);
	if (err)
		return rs_error_wrap(err, "cannot write the manifest to '%s'", r->display_url);
	err = confirm_packs(st, oid, again);
	if (err)
		return err;
	rs_error_clear();
	return 0;
}

/*
 * One attempt; *again is set when a borrowed pack vanished mid-way. The
 * file at `path` is what gets chunked: the object itself (transform 0),
 * or its transformed bytes, which must hash to `file_id` and be
 * `file_size` bytes. A chunk boundary is forced at `cut_at` when it is
 * not 0 (the session codec's shared block is a chunk of its own).
 */
static int put_once(struct rs_store *s, const struct rs_id *oid, uint64_t size,
		    const char *path, const struct rs_id *file_id, uint64_t file_size,
		    uint32_t transform, uint64_t cut_at, rs_progress_fn progress, void *payload,
		    struct rs_store_put_stats *stats, int *again)
{
	struct put_state st;
	struct put_feed f;
	int fd = -1, err;

	put_state_init(&st, s, oid, size, transform, stats);
	memset(&f, 0, sizeof(f));
	*again = 0;
	err = tmp_dir_for(&st.tmp_dir, s);
	if (err)
		goto out;
	err = open_source(path, file_size, &fd);
	if (err)
		goto out;
	err = put_feed_open(&f, s, file_size, progress, payload);
	if (err)
		goto out;
	err = chunk_file(&f, &st, fd, path, cut_at);
	if (err)
		goto out;
	err = check_source(&f, &st, path, file_id, file_size);
	if (err)
		goto out;
	err = put_publish(&st, oid, again);
out:
	put_feed_release(&f);
	put_state_release(&st);
	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- the session codec hook (transform 1) -------------------------------- */

/*
 * The object's transformed form when the session codec takes it: the
 * proven container (rs_codec_encode_file decodes it and checks the oid
 * before it says yes) in a temporary file, chunked and stored like any
 * object. Anything the codec declines goes the generic path, unchanged.
 */
struct session_encoding {
	int applies;
	struct rs_buf path;   /* the container's temporary file */
	struct rs_id id;      /* its SHA-256 */
	uint64_t size;
	uint64_t block_len;   /* its first block: the shared dictionary */
	struct rs_buf base;   /* the shared dictionary it used */
};

struct scaled_progress {
	rs_progress_fn fn;
	void *payload;
	uint64_t size, file_size;
};

static int scale_progress(uint64_t done, uint64_t total, void *payload)
{
	struct scaled_progress *sp = payload;

	(void)total;
	return sp->fn(sp->file_size ? (uint64_t)((unsigned __int128)done * sp->size / sp->file_size) : 0,
		      sp->size, sp->payload);
}

static void session_encoding_release(struct session_encoding *c)
{
	if (c->path.ptr)
		unlink(c->path.ptr);
	rs_buf_release(&c->path);
	rs_buf_release(&c->base);
}

/*
 * The shared dictionary of the last session pushed to this remote lives
 * in the remote's cache folder, so that the next run's container starts
 * with the same block (a chunk the remote already has). Losing it costs
 * one dictionary, never correctness: the block is always in the container.
 */
#define CODEC_BASE_FILE "codec-base"
#define CODEC_BASE_LIMIT (16u * 1024 * 1024)

static void remember_base(struct rs_store *s, const struct session_encoding *c)
{
	struct rs_buf path = RS_BUF_INIT;

	int err;

	/* Best effort: without the cached base the next put only compresses less. */
	if (!s->cache_dir)
		return;
	err = rs_buf_printf(&path, "%s/%s", s->cache_dir, CODEC_BASE_FILE);
	if (err)
		goto out;
	err = rs_fs_mkdir_p(s->cache_dir, 0700);
	if (err)
		goto out;
	/* not fsynced: a short or damaged base after a power cut is dropped
	   (load_base) or, read as another list of texts, only shares less */
	err = rs_fs_write_file_cache(path.ptr, c->base.ptr, c->base.len);
out:
	rs_buf_release(&path);
	rs_error_clear();
}

static int session_encode(struct rs_store *s, struct session_encoding *c, const struct rs_id *oid,
			  uint64_t size, const char *path)
{
	struct rs_buf container = RS_BUF_INIT, dir = RS_BUF_INIT, base = RS_BUF_INIT;
	struct rs_codec_dict dict;
	int fd = -1, applies = 0, err;

	if (s->generic_only)
		return 0;
	memset(&dict, 0, sizeof(dict));
	if (s->cache_dir) {
		struct rs_buf bpath = RS_BUF_INIT;

		if (!rs_buf_printf(&bpath, "%s/%s", s->cache_dir, CODEC_BASE_FILE) &&
		    !rs_fs_read_file(&base, bpath.ptr, CODEC_BASE_LIMIT)) {
			dict.base = (const unsigned char *)base.ptr;
			dict.base_len = base.len;
		}
		rs_buf_release(&bpath);
		rs_error_clear(); /* no base yet: this container starts one */
	}
	err = rs_codec_encode_file(&container, &applies, path, size, oid, &dict, NULL);
	if (err || !applies)
		goto out;
	c->block_len = dict.block_len;
	c->base = dict.next;
	memset(&dict.next, 0, sizeof(dict.next));
	err = tmp_dir_for(&dir, s);
	if (err)
		goto out;
	err = rs_buf_printf(&c->path, "%s/session-XXXXXX", dir.ptr);
	if (err)
		goto out;
	fd = mkstemp(c->path.ptr);
	if (fd < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot create a file in '%s'", dir.ptr);
		rs_buf_release(&c->path);
		goto out;
	}
	err = rs_fs_write_all(fd, container.ptr, container.len);
	if (close(fd) != 0 && !err)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", c->path.ptr);
	if (err)
		goto out;
	rs_sha256(&c->id, container.ptr, container.len);
	c->size = container.len;
	c->applies = 1;
out:
	rs_buf_release(&container);
	rs_buf_release(&dir);
	rs_buf_release(&base);
	rs_buf_release(&dict.next);
	return err;
}

/*
 * Pack `pack`, which an existing manifest names, is on the remote: its
 * .pack is there and no .quarantine says it is damaged. Two stats the
 * first time, nothing after (the answer is kept in `s`). Its .idx is not
 * needed: a reader never reads one, and a collector that removed it to
 * mark the pack rescues it once it finds the manifest naming it.
 */
static int pack_on_remote(struct rs_store *s, const struct rs_id *pack, int *present)
{
	struct rs_buf key = RS_BUF_INIT;
	size_t i;
	int err;

	*present = 1;
	for (i = 0; i < s->npacks_seen; i++)
		if (!rs_id_cmp(&s->packs_seen[i], pack))
			return 0;
	err = rs_key_pack(&key, pack);
	if (!err)
		err = s->remote->stat(s->remote, key.ptr, NULL);
	if (!err)
		err = rs_key_make(&key, RS_KEY_PACKS, pack, ".quarantine");
	if (!err) {
		/* A quarantine mark: the pack is damaged, as good as gone. */
		int q = s->remote->stat(s->remote, key.ptr, NULL);

		if (q == 0)
			err = RS_ENOTFOUND;
		else if (q != RS_ENOTFOUND)
			err = q;
	}
	rs_buf_release(&key);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		*present = 0;
		return 0;
	}
	if (err)
		return err;
	return rs_array_push_id(&s->packs_seen, &s->npacks_seen, &s->packs_seen_alloc, pack);
}

/*
 * The manifest of `oid` is listed: is the object really stored? Only if
 * the manifest parses and every pack it names is on the remote (a pack
 * lost to a bad gc, a hand-made deletion or a quarantine leaves a
 * manifest that cannot be read back, and a push that trusted it would
 * upload nothing: the object would stay lost while the only clone that
 * has it reports success). A manifest of a newer results is left alone.
 * One check per pack, not per chunk, cached for the process.
 */
static int manifest_whole(struct rs_store *s, const struct rs_id *oid, int *whole)
{
	struct rs_manifest m;
	uint32_t i;
	int err;

	memset(&m, 0, sizeof(m));
	*whole = 0;
	err = rs_store_fetch_manifest(s->remote, oid, &m);
	if (err == RS_ENEWER) {
		*whole = 1; /* a newer writer's: never overwritten by this one */
		err = 0;
		goto out;
	}
	if (err == RS_ENOTFOUND || err == RS_ECORRUPT) {
		err = 0; /* vanished, or damaged: written again */
		goto out;
	}
	if (err)
		goto out;
	*whole = 1; /* an empty object names no pack */
	for (i = 0; i < m.nchunks && *whole && !err; i++)
		if (!i || rs_id_cmp(&m.chunks[i].pack, &m.chunks[i - 1].pack))
			err = pack_on_remote(s, &m.chunks[i].pack, whole);
out:
	if (!err)
		rs_error_clear();
	rs_manifest_release(&m);
	return err;
}

/*
 * What a put needs of the remote before its first pack: FORMAT (written
 * on a new store) and the chunk index refreshed (the first put of a
 * process lists the remote's packs).
 */
static int prepare_remote(struct rs_store *s)
{
	int err = check_format(s);

	if (err)
		return err;
	if (!s->index_fresh) {
		err = rs_chunk_index_refresh(s->index, s->remote);
		if (err)
			return err;
		s->index_fresh = 1;
	}
	return 0;
}

/*
 * prepare_remote on a thread of its own while the session codec encodes
 * the file, which reads only the file and the cache's codec-base: the
 * remote's round trips (and FORMAT's fsyncs on a new folder store) no
 * longer wait in front of the encode. Joined before any pack is made.
 */
struct prepare_job {
	struct rs_store *s;
	int err;
	struct rs_error_saved saved;
};

static void *prepare_run(void *arg)
{
	struct prepare_job *j = arg;

	j->err = prepare_remote(j->s);
	if (j->err)
		rs_error_save(&j->saved, j->err);
	return NULL;
}

int rs_store_put_file(struct rs_store *s, const struct rs_id *oid, uint64_t size,
		      const char *path, rs_progress_fn progress, void *payload,
		      struct rs_store_put_stats *stats)
{
	struct rs_store_put_stats local;
	struct session_encoding codec = { 0 };
	struct prepare_job prep;
	pthread_t thread;
	int err, again = 0, attempt, started;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	stats->bytes_raw = size;
	err = s->replace ? RS_ENOTFOUND : rs_store_has(s, oid);
	if (!err) {
		int present = 0, whole = 0;

		/* It is there: touched, so that no collector deletes it under this
		   push; then its packs checked, as a listed manifest is no proof. */
		err = touch_manifest(s->remote, oid, 1, &present);
		if (!err && present)
			err = manifest_whole(s, oid, &whole);
		if (err)
			return err;
		if (present && whole) {
			stats->already_present = 1;
			return progress ? progress(size, size, payload) : 0;
		}
		/* set aside meanwhile, or its packs are gone: stored again, the new
		   manifest replacing the listed one */
		err = RS_ENOTFOUND;
	}
	if (err != RS_ENOTFOUND)
		return err;
	rs_error_clear();
	/* Before any pack is sent (packs may start streaming at once); beside
	   the encode when there is one. */
	memset(&prep, 0, sizeof(prep));
	prep.s = s;
	started = !s->generic_only && pthread_create(&thread, NULL, prepare_run, &prep) == 0;
	if (!started) {
		err = prepare_remote(s);
		if (err)
			return err;
	}
	err = session_encode(s, &codec, oid, size, path);
	if (started) {
		pthread_join(thread, NULL);
		/* the remote's failure first, as when it came before the encode */
		if (prep.err) {
			rs_error_clear();
			err = rs_error_restore(&prep.saved);
		}
	}
	if (err) {
		/* its dictionary, and its container's file if it had made one */
		session_encoding_release(&codec);
		return err;
	}
	/* A second attempt runs without the packs found missing in the first. */
	for (attempt = 0; attempt < 2; attempt++) {
		memset(stats, 0, sizeof(*stats));
		stats->bytes_raw = size;
		if (codec.applies) {
			/* progress in object bytes: the container is its stand-in */
			struct scaled_progress sp = { progress, payload, size, codec.size };

			err = put_once(s, oid, size, codec.path.ptr, &codec.id, codec.size, RS_TRANSFORM_SESSION,
				       codec.block_len, progress ? scale_progress : NULL, &sp, stats, &again);
		} else {
			err = put_once(s, oid, size, path, oid, size, RS_TRANSFORM_IDENTITY, 0, progress,
				       payload, stats, &again);
		}
		if (err || !again)
			break;
	}
	if (!err && codec.applies)
		remember_base(s, &codec);
	session_encoding_release(&codec);
	if (err || !again)
		return err;
	return rs_error_set(RS_ERETRY, "packs on '%s' keep disappearing during the push: is a garbage "
			    "collection running? try again", s->remote->display_url);
}

/* ---- get ---------------------------------------------------------------- */

struct get_job {
	struct rs_store *store;
	const struct rs_chunk_ref *ref;
	struct rs_buf fetched;
	unsigned char *raw;
	size_t raw_alloc;
	ZSTD_DCtx *dctx;
};

/*
 * A chunk that fails its checks in a pack that is there: the pack is
 * damaged on the remote. The manifest is not the fault, and deleting it
 * and pushing again would borrow the same damaged chunk (the chunk index
 * trusts the pack's .idx): the advice says so.
 */
static int corrupt_chunk(const struct rs_store *s, const struct rs_chunk_ref *ref, const char *why)
{
	char chunk[RS_ID_HEXSZ + 1], pack[RS_ID_HEXSZ + 1];

	rs_id_to_hex(chunk, &ref->chunk);
	rs_id_to_hex(pack, &ref->pack);
	return rs_error_set(RS_ECORRUPT, "pack 'packs/%s.pack' on '%s' is damaged: its chunk %.12s %s; "
			    "the object's manifest is fine, do not delete it; run 'results verify --repair' "
			    "in a clone that holds the session (it quarantines the pack and pushes the "
			    "session again, or re-points it at good copies of its chunks)",
			    pack, s->remote->display_url, chunk, why);
}

/*
 * The remote gave fewer bytes than a chunk's entry needs. Ask for the
 * pack's size to say whose fault it is: a manifest pointing past the end
 * of the pack (the pack is shorter than the manifest says), or a server
 * that answered short although the bytes are there (a transfer fault).
 */
static int short_chunk(const struct rs_store *s, const struct rs_chunk_ref *ref, const char *key)
{
	char pack[RS_ID_HEXSZ + 1];
	struct rs_error_saved why; /* the backend's own words */
	uint64_t end = ref->offset + RS_PACK_ENTRY_HEADER_SIZE + (uint64_t)ref->stored_len, size = 0;
	int err;

	rs_error_save(&why, rs_error_last());
	err = s->remote->stat(s->remote, key, &size);
	rs_id_to_hex(pack, &ref->pack);
	if (err == RS_ENOTFOUND)
		return rs_error_set(RS_ECORRUPT, "pack 'packs/%s.pack' is missing from '%s': the object's manifest "
				    "names it; run 'results verify --repair' in a clone that holds the session "
				    "(it pushes it again)", pack, s->remote->display_url);
	if (err)
		return err;
	if (end > size)
		return rs_error_set(RS_ECORRUPT, "the manifest points past the end of pack 'packs/%s.pack' on '%s' "
				    "(bytes %llu..%llu of a %llu-byte pack): the pack is shorter than the manifest "
				    "expects; run 'results verify --repair' in a clone that holds the session "
				    "(it pushes it again)", pack, s->remote->display_url,
				    (unsigned long long)ref->offset, (unsigned long long)end, (unsigned long long)size);
	return rs_error_set(RS_ERETRY, "'%s' answered a read of '%s' with another number of bytes than asked, "
			    "though the file holds them (%s): a transfer fault, run the command again",
			    s->remote->display_url, key, why.message);
}

static int get_work(void *arg, void *ctx)
{
	struct get_job *j = arg;
	struct rs_store *s = ctx;
	const struct rs_chunk_ref *ref = j->ref;
	struct rs_buf key = RS_BUF_INIT;
	const char *why = NULL;
	size_t want;
	int err;

	/* Exactly the entry, never more: the manifest's lengths are capped. */
	want = RS_PACK_ENTRY_HEADER_SIZE + (size_t)ref->stored_len;
	rs_buf_clear(&j->fetched);
	j->fetched.max = want;
	err = rs_key_pack(&key, &ref->pack);
	if (!err)
		err = s->remote->get(s->remote, key.ptr, ref->offset, want, &j->fetched);
	if (err == RS_ENOTFOUND || err == RS_ECORRUPT)
		err = short_chunk(s, ref, key.ptr);
	else if (err == RS_ETOOBIG || (!err && j->fetched.len != want))
		err = rs_error_set(RS_ERETRY, "'%s' answered a read of %zu bytes of '%s' with %s bytes: a "
				   "transfer fault, run the command again", s->remote->display_url, want,
				   key.ptr, err || j->fetched.len > want ? "more" : "fewer");
	rs_buf_release(&key);
	if (err)
		return err;
	if (ref->raw_len > j->raw_alloc) {
		/*
		 * In whole huge pages, like put's segments: a buffer is
		 * filled whole again and again, and on a VM the first
		 * touches of small pages (7,700 faults for 300 MB) were
		 * half a get's system time. The buffer grows in 2 MiB
		 * steps, so a few chunk sizes settle it for good.
		 */
		size_t n = ((size_t)ref->raw_len + SEGMENT_ALIGN - 1) & ~(SEGMENT_ALIGN - 1);

		free(j->raw);
		j->raw_alloc = 0;
		j->raw = segment_alloc(n);
		if (!j->raw)
			return rs_error_set(RS_EGENERIC, "out of memory");
		j->raw_alloc = n;
	}
	if (ref->codec == RS_CODEC_ZSTD && !j->dctx) {
		j->dctx = ZSTD_createDCtx();
		if (!j->dctx)
			return rs_error_set(RS_EGENERIC, "cannot create a zstd context");
	}
	if (rs_chunk_decode((const unsigned char *)j->fetched.ptr, j->fetched.len, ref, j->raw,
			    j->dctx, &why))
		return corrupt_chunk(s, ref, why);
	return 0;
}

/* The manifest of `oid` is not listed: removed by retention, or never pushed. */
static int manifest_missing(struct rs_remote *remote, const struct rs_id *oid, const char *hex)
{
	struct rs_buf date = RS_BUF_INIT;
	int err;

	if (!rs_store_removed_date(remote, oid, &date))
		err = rs_error_set(RS_ENOTFOUND, "raw session %.12s removed by retention on %s; summary kept",
				   hex, rs_buf_cstr(&date));
	else
		err = rs_error_set(RS_ENOTFOUND, "object %s is not on the remote '%s': push it from a clone that has it",
				   hex, remote->display_url);
	rs_buf_release(&date);
	return err;
}

/*
 * Exactly the `size` bytes the listing gave for the manifest at `key`,
 * into a buffer capped at them: an answer of another length is a
 * transfer fault (RS_ERETRY), never damage.
 */
static int get_manifest_bytes(struct rs_remote *remote, const char *key, uint64_t size,
			      struct rs_buf *bytes)
{
	int err;

	rs_buf_init(bytes, (size_t)size);
	err = remote->get(remote, key, 0, size, bytes);
	if (err == RS_ECORRUPT || err == RS_ETOOBIG || (!err && bytes->len != size))
		return rs_error_set(RS_ERETRY, "'%s' answered a read of the %llu-byte '%s' with %s bytes: a "
				    "transfer fault, run the command again", remote->display_url,
				    (unsigned long long)size, key,
				    err == RS_ECORRUPT || (!err && bytes->len < size) ? "fewer" : "more");
	return err;
}

int rs_store_fetch_manifest_at(struct rs_remote *remote, const char *prefix,
			       const struct rs_id *oid, struct rs_manifest *m)
{
	struct rs_buf key = RS_BUF_INIT, bytes = RS_BUF_INIT;
	char hex[RS_ID_HEXSZ + 1];
	uint64_t msize = 0;
	int err, objects = !strcmp(prefix, RS_KEY_OBJECTS);

	rs_id_to_hex(hex, oid);
	err = rs_key_make(&key, prefix, oid, "");
	if (!err)
		err = remote->stat(remote, key.ptr, &msize);
	if (err == RS_ENOTFOUND && objects)
		err = manifest_missing(remote, oid, hex);
	if (err)
		goto out;
	if (msize > RS_MANIFEST_MAX_SIZE || msize < RS_MANIFEST_HEADER_SIZE + RS_ID_RAWSZ)
		err = rs_error_set(RS_ECORRUPT, "it is %llu bytes, which no valid manifest is",
				   (unsigned long long)msize);
	else
		err = get_manifest_bytes(remote, key.ptr, msize, &bytes);
	if (!err)
		err = rs_manifest_parse(m, oid, (unsigned char *)bytes.ptr, bytes.len);
	/* Here, and only here, the manifest itself is at fault: a new push rewrites it. */
	if (err == RS_ECORRUPT)
		err = rs_error_wrap(err, "the manifest '%s' on '%s' is damaged (delete it on the remote, "
				    "then push the file again from a clone that has it)", key.ptr,
				    remote->display_url);
out:
	rs_buf_release(&key);
	rs_buf_release(&bytes);
	return err;
}

int rs_store_fetch_manifest(struct rs_remote *remote, const struct rs_id *oid, struct rs_manifest *m)
{
	return rs_store_fetch_manifest_at(remote, RS_KEY_OBJECTS, oid, m);
}

/*
 * Transform 1: the decoded object goes to the file and the hasher. The
 * codec hands each piece of output (256 KiB) over from its own writer
 * thread while it decodes the next; writing a piece and hashing it one
 * after the other made that thread the slowest of a get (0.25 s of a
 * 224 MB session, against 0.1 s of decoding), so a piece of a large
 * object is hashed on a thread of its own (a work queue of one) while it
 * is written, and the sink returns, giving the piece back, once both are
 * done.
 */
#define SINK_HASH_MIN ((uint64_t)1 << 20) /* below that, one thread does both */

struct sink_piece {
	const void *p;
	size_t n;
};

struct session_sink {
	int fd;
	const char *path;
	struct rs_sha256 *whole; /* NULL: the caller hashes the file (RS_GET_CALLER_HASHES) */
	uint64_t *done;
	struct rs_workq *hq; /* NULL: hash in line */
};

static int sink_hash_work(void *arg, void *ctx)
{
	const struct sink_piece *piece = arg;

	rs_sha256_update(ctx, piece->p, piece->n);
	return 0;
}

static int session_sink_write(void *ctx, const void *p, size_t n)
{
	struct session_sink *k = ctx;
	struct sink_piece piece = { p, n };
	void *job;
	int err;

	if (k->hq)
		rs_workq_submit(k->hq, &piece);
	err = rs_fs_write_all(k->fd, p, n);
	if (k->hq) {
		/* sink_hash_work cannot fail: it only hashes bytes in memory */
		if (rs_workq_collect(k->hq, &job))
			assert(!"sink_hash_work failed");
	} else if (!err && k->whole) {
		rs_sha256_update(k->whole, p, n);
	}
	if (err)
		return rs_error_wrap(err, "cannot write '%s'", k->path);
	*k->done += n;
	return 0;
}

static int session_decode(const struct rs_buf *container, const struct rs_manifest *m, int fd,
			  const char *path, struct rs_sha256 *whole, uint64_t *done)
{
	struct session_sink k = { fd, path, whole, done, NULL };
	int err;

	/* Without the thread (no memory, no thread) the sink hashes in line: slower, not wrong. */
	if (whole && m->size >= SINK_HASH_MIN && rs_workq_new(&k.hq, 1, 1, sink_hash_work, whole)) {
		k.hq = NULL;
		rs_error_clear();
	}
	err = rs_codec_decode((const unsigned char *)container->ptr, container->len, m->size,
			      session_sink_write, &k);
	rs_workq_free(k.hq);
	return err;
}

/* One get in flight: where the chunks go, in object order. */
struct get_state {
	struct rs_store *s;
	const struct rs_manifest *m;
	const char *hex;         /* the oid, for messages */
	int fd;                  /* the temporary file, at `tmp` */
	const char *tmp;
	struct rs_sha256 *whole; /* NULL: the caller hashes the file (RS_GET_CALLER_HASHES) */
	struct rs_buf container; /* transform 1: the container, gathered */
	uint64_t done;           /* object bytes written */
	rs_progress_fn progress;
	void *payload;
};

/*
 * Refuse, before anything is written, a manifest this build cannot undo
 * or whose object is not the one asked for.
 */
static int check_wanted(const struct rs_store *s, const struct rs_manifest *m, const char *hex,
			uint64_t size)
{
	if (m->transform != RS_TRANSFORM_IDENTITY && m->transform != RS_TRANSFORM_SESSION)
		return rs_error_set(RS_ENEWER, "object %.12s uses transform %u, which this build cannot undo: "
				    "upgrade results", hex, m->transform);
	if (m->transform == RS_TRANSFORM_SESSION && m->transformed_size > RS_CODEC_MAX_CONTAINER)
		return rs_error_set(RS_ECORRUPT, "object %.12s on '%s' is damaged: its session container is "
				    "%llu bytes, more than any valid one", hex, s->remote->display_url,
				    (unsigned long long)m->transformed_size);
	/*
	 * The manifest's chunks add up to its size (rs_manifest_parse), and
	 * its size must be the one asked for. The manifest is named by the
	 * oid, so when the two differ it is the repository's pointer that is
	 * wrong (edited, or hostile), not the store: nothing there needs
	 * deleting.
	 */
	if (size != UINT64_MAX && m->size != size)
		return rs_error_set(RS_ECORRUPT, "the repository's pointer for object %.12s says %llu bytes, but "
				    "the object with that oid on '%s' is %llu bytes: the pointer is wrong (edited "
				    "or damaged in the repository), the store is fine; nothing was written",
				    hex, (unsigned long long)size, s->remote->display_url,
				    (unsigned long long)m->size);
	return 0;
}

/* Take one fetched chunk, in object order. */
static int take_chunk(struct get_state *g, const struct get_job *j)
{
	uint32_t n = j->ref->raw_len;
	int err;

	if (g->m->transform == RS_TRANSFORM_SESSION)
		/* The container is small: gather it, decode it once complete. */
		return rs_buf_put(&g->container, j->raw, n);
	/* Never more than the object's size, whatever the chunks say. */
	if (n > g->m->size - g->done)
		return rs_error_set(RS_ECORRUPT, "the chunks of object %.12s add up to more than its "
				    "%llu bytes", g->hex, (unsigned long long)g->m->size);
	err = rs_fs_write_all(g->fd, j->raw, n);
	if (err)
		return rs_error_wrap(err, "cannot write '%s'", g->tmp);
	if (g->whole)
		rs_sha256_update(g->whole, j->raw, n);
	g->done += n;
	return g->progress ? g->progress(g->done, g->m->size, g->payload) : 0;
}

/* Fetch every chunk on `threads` workers, `nslots` in flight, and take them in order. */
static int get_chunks(struct get_state *g, struct get_job *jobs, int threads, int nslots)
{
	struct rs_workq *q = NULL;
	uint32_t next = 0;
	int err;

	err = rs_workq_new(&q, threads, nslots, get_work, g->s);
	if (err)
		return err;
	while (!err && (next < g->m->nchunks || rs_workq_pending(q) > 0)) {
		void *job;

		if (next < g->m->nchunks && rs_workq_pending(q) < nslots) {
			struct get_job *j = &jobs[next % (uint32_t)nslots];

			j->ref = &g->m->chunks[next++];
			rs_workq_submit(q, j);
			continue;
		}
		err = rs_workq_collect(q, &job);
		if (!err)
			err = take_chunk(g, job);
	}
	rs_workq_free(q);
	return err;
}

/* Transform 1: decode the gathered container into the file. */
static int get_decode(struct get_state *g)
{
	int err = session_decode(&g->container, g->m, g->fd, g->tmp, g->whole, &g->done);

	if (!err && g->progress)
		err = g->progress(g->done, g->m->size, g->payload);
	return err;
}

/* Every chunk matched its id: the whole must match the oid (unless the caller checks that). */
static int check_rebuilt(struct get_state *g, const struct rs_id *oid)
{
	struct rs_id got;

	if (g->whole)
		rs_sha256_final(g->whole, &got);
	if (g->done == g->m->size && (!g->whole || !rs_id_cmp(&got, oid)))
		return 0;
	return rs_error_set(RS_ECORRUPT, "object %.12s rebuilt from '%s' does not match its oid, although "
			    "every chunk matched its id: the manifest names the wrong chunks (delete "
			    "'objects/%s' on the remote, then push the file again from a clone that has it)",
			    g->hex, g->s->remote->display_url, g->hex);
}

static void get_jobs_free(struct get_job *jobs, int nslots)
{
	int i;

	for (i = 0; jobs && i < nslots; i++) {
		rs_buf_release(&jobs[i].fetched);
		free(jobs[i].raw);
		ZSTD_freeDCtx(jobs[i].dctx);
	}
	free(jobs);
}

int rs_store_get_file_flags(struct rs_store *s, const struct rs_id *oid, uint64_t size,
			    const char *dest, unsigned flags, rs_progress_fn progress, void *payload)
{
	struct rs_manifest m;
	struct get_state g;
	struct get_job *jobs = NULL;
	struct rs_buf tmp = RS_BUF_INIT;
	char hex[RS_ID_HEXSZ + 1];
	int threads = s->threads < 4 ? 4 : s->threads; /* fetches wait on I/O too */
	int nslots = threads + 2, err;

	memset(&m, 0, sizeof(m));
	memset(&g, 0, sizeof(g));
	rs_id_to_hex(hex, oid);
	g.s = s;
	g.m = &m;
	g.hex = hex;
	g.fd = -1;
	g.progress = progress;
	g.payload = payload;
	err = rs_store_fetch_manifest(s->remote, oid, &m);
	if (err)
		goto out;
	err = check_wanted(s, &m, hex, size);
	if (err)
		goto out;
	rs_buf_init(&g.container, RS_CODEC_MAX_CONTAINER);
	jobs = calloc((size_t)nslots, sizeof(*jobs));
	g.whole = flags & RS_GET_CALLER_HASHES ? NULL : rs_sha256_new();
	if (!jobs || (!g.whole && !(flags & RS_GET_CALLER_HASHES))) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_fs_tmpfile_near(&tmp, dest, &g.fd);
	if (err)
		goto out;
	g.tmp = tmp.ptr;
	err = get_chunks(&g, jobs, threads, nslots);
	if (!err && m.transform == RS_TRANSFORM_SESSION)
		err = get_decode(&g);
	if (err == RS_ECORRUPT)
		err = rs_error_wrap(err, "object %.12s cannot be rebuilt", hex);
	if (err)
		goto out;
	err = check_rebuilt(&g, oid);
	if (err)
		goto out;
	/* Not fsynced: the file is a verified copy the remote can give again. */
	err = rs_fs_publish_tmp(g.fd, tmp.ptr, dest);
	g.fd = -1;
out:
	rs_fs_drop_tmp(g.fd, tmp.ptr);
	get_jobs_free(jobs, nslots);
	rs_sha256_free(g.whole);
	rs_manifest_release(&m);
	rs_buf_release(&tmp);
	rs_buf_release(&g.container);
	return err;
}

int rs_store_get_file(struct rs_store *s, const struct rs_id *oid, uint64_t size,
		      const char *dest, rs_progress_fn progress, void *payload)
{
	return rs_store_get_file_flags(s, oid, size, dest, 0, progress, payload);
}
