/*
 * The proof that a container rebuilds its object, and codec_build(), which
 * makes the container from the parse and proves it (docs/codec.md, "The
 * proof"). It decodes through session_decode.c, the very reader a fetch
 * uses, and reads the encoder's state (codec_internal.h).
 */
#define _GNU_SOURCE /* qsort_r */
#include "codec/codec_internal.h"
#include "results/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

/* ---- the proof ---------------------------------------------------------- */

/*
 * The proof runs on its own thread while the streams are compressed: it
 * decodes a container of the uncompressed streams and compares the
 * output, as it comes, with the file (the mapped bytes, or read again);
 * enc_parse has already checked that the file hashes to the oid. The
 * compressed container is checked stream by stream against the
 * uncompressed one meanwhile, and then the file's change time against the one it had
 * when it was opened: together they prove that the stored bytes rebuild
 * the very bytes that hash to the oid.
 *
 * Comparing instead of hashing the output is what lets the hash run
 * alongside the parse: memcmp is ten times faster than SHA-256.
 */
struct proof {
	const struct rs_buf *container;
	struct repr_cache *repr;  /* the encoder's: it holds the times the parse checked */
	uint64_t size;
	const unsigned char *map; /* the file, mapped; or NULL: read from fd */
	int fd;
	unsigned char *scratch;   /* OUT_BUF bytes to read the file into */
	size_t page;
	uint64_t n, dropped;      /* bytes compared; map[0..dropped) given back */
	int err;
	struct rs_error_saved saved; /* err's message, from the proof's thread */
};

/* `n` bytes of the unmapped file at `off`, into pr->scratch. */
static int proof_read(struct proof *pr, uint64_t off, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(pr->fd, pr->scratch + got, n - got, (off_t)(off + got));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return rs_error_errno(RS_EGENERIC, "cannot read the session again");
		if (k == 0)
			return rs_error_set(RS_ECORRUPT, "the file is shorter than the object");
		got += (size_t)k;
	}
	return 0;
}

/* The sink: the decoded bytes must be the file's, from where the last ones ended. */
static int proof_write(void *ctx, const void *p, size_t n)
{
	struct proof *pr = ctx;
	const unsigned char *have = pr->map ? pr->map + pr->n : pr->scratch;

	while (n) {
		size_t k = pr->map || n < OUT_BUF ? n : OUT_BUF;
		int err = pr->map ? 0 : proof_read(pr, pr->n, k);

		if (err)
			return err;
		if (memcmp(have, p, k))
			return rs_error_set(RS_ECORRUPT, "the container does not rebuild the object "
					    "(it differs within bytes %llu-%llu)", (unsigned long long)pr->n,
					    (unsigned long long)(pr->n + k));
		pr->n += k;
		p = (const unsigned char *)p + k;
		n -= k;
	}
	if (pr->map && pr->n >= pr->dropped + DROP_STEP) {
		size_t upto = (size_t)pr->n & ~(pr->page - 1);

		madvise((void *)(pr->map + pr->dropped), upto - (size_t)pr->dropped, MADV_DONTNEED);
		pr->dropped = upto;
	}
	return 0;
}

static void *proof_run(void *arg)
{
	struct proof *pr = arg;

	pr->err = codec_decode((const unsigned char *)pr->container->ptr, pr->container->len, pr->size,
			 proof_write, pr, pr->repr);
	if (pr->err)
		rs_error_save(&pr->saved, pr->err);
	return NULL;
}

static int proof_init(struct proof *pr, const struct enc *e, const struct rs_buf *rawc, uint64_t size)
{
	memset(pr, 0, sizeof(*pr));
	pr->container = rawc;
	pr->repr = e->repr;
	pr->size = size;
	pr->map = e->mapped ? e->buf : NULL;
	pr->fd = e->fd;
	pr->page = (size_t)sysconf(_SC_PAGESIZE);
	if (pr->map)
		return 0;
	pr->scratch = malloc(OUT_BUF);
	return pr->scratch ? 0 : rs_error_set(RS_EGENERIC, "out of memory");
}

/*
 * Every compressed stream of `c` decompresses to the stream of `raw`
 * (same layout), read as the decoder reads an object of `size` bytes
 * (the stacks model's budget is the object's).
 */
static int same_streams(const struct rs_buf *c, const struct rs_buf *raw, uint64_t size)
{
	struct decoded a, b;
	int k, same = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!codec_read_sections(&a, (const unsigned char *)c->ptr, c->len, size) &&
	    !codec_read_sections(&b, (const unsigned char *)raw->ptr, raw->len, size)) {
		same = 1;
		for (k = 0; k < SEC_SLOTS; k++)
			if (a.sec[k].len != b.sec[k].len ||
			    (a.sec[k].len && memcmp(a.sec[k].p, b.sec[k].p, a.sec[k].len)))
				same = 0;
	}
	codec_decoded_release(&a);
	codec_decoded_release(&b);
	return same;
}

/*
 * The file as the proof compared it is the file the parse read and the
 * hash covered, unless something wrote to it meanwhile: the kernel then
 * changed its change time (even for the same bytes written back), and the
 * generic path, which hashes the very bytes it stores, takes the object.
 */
static int file_unchanged(struct enc *e)
{
	const struct stat *was = &e->opened;
	struct stat now;

	if (fstat(e->fd, &now) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat the session");
	if (now.st_size != was->st_size || now.st_mtim.tv_sec != was->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != was->st_mtim.tv_nsec || now.st_ctim.tv_sec != was->st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != was->st_ctim.tv_nsec)
		return codec_decline(e, "the file changed while it was encoded");
	return 0;
}

/*
 * What the proof found; 0 when `out` is proven to rebuild the file.
 * `same`: every stream of `out` decodes to the stream of the
 * uncompressed container (same_streams, checked while the proof ran).
 */
static int proof_verdict(struct enc *e, const struct proof *pr, const struct rs_buf *out, int same)
{
	if (out->len > RS_CODEC_MAX_CONTAINER)
		return codec_decline(e, "the container would be too large");
	if (pr->err == RS_ECORRUPT || pr->err == RS_EUSAGE || pr->err == RS_ETOOBIG ||
	    pr->err == RS_EFORMAT || pr->err == RS_ENEWER)
		return codec_decline(e, pr->saved.message);
	if (pr->err)
		return rs_error_restore(&pr->saved);
	if (pr->n != pr->size)
		return codec_decline(e, "the container does not rebuild the object");
	if (!same)
		return codec_decline(e, "a compressed stream does not give back its bytes");
	return file_unchanged(e);
}

/*
 * A container the decoder would refuse is not made: streams past its
 * caps (read_sections, read_params) decline, and the generic path takes
 * the session (one larger than about 1 GB).
 */
static int within_decoder_caps(struct enc *e, const struct streams *st, uint64_t size)
{
	uint64_t total = st->sec[SEC_BASE].len + st->sec[SEC_BASE_TREE].len;
	int k;

	for (k = 0; k < SEC_COUNT; k++) {
		if (st->sec[k].len > size)
			return codec_decline(e, "a stream would be larger than the session");
		total += st->sec[k].len;
	}
	if (total > RS_CODEC_MAX_STREAMS || st->sec[SEC_BASE].len > MAX_FRAME_BYTES ||
	    st->sec[SEC_DICT].len + st->sec[SEC_THREADS].len > MAX_FRAME_BYTES ||
	    (uint64_t)st->sec[SEC_BASE_TREE].len + st->sec[SEC_SAMPLES].len > MAX_STACKS_BYTES)
		return codec_decline(e, "the session is too large for the session codec's caps");
	return 0;
}

/* The base for the next run (BASE_CACHE_MAGIC's layout): the dictionary's and the base stacks' raw streams. */
static int put_next_base(struct rs_buf *next, const struct streams *st)
{
	unsigned char h[BASE_CACHE_HEADER];
	int err;

	memcpy(h, BASE_CACHE_MAGIC, 8);
	put_le64(h + 8, st->sec[SEC_BASE].len);
	rs_buf_clear(next);
	err = rs_buf_put(next, h, sizeof(h));
	if (!err)
		err = rs_buf_put(next, st->sec[SEC_BASE].ptr, st->sec[SEC_BASE].len);
	if (!err)
		err = rs_buf_put(next, st->sec[SEC_BASE_TREE].ptr, st->sec[SEC_BASE_TREE].len);
	return err;
}

/*
 * Build the streams and the container from what the parse collected, and
 * prove it: 0 only when `out` rebuilds exactly the `size` bytes of the
 * file, and those hash to `oid`.
 */
int codec_build(struct enc *e, struct rs_buf *out, uint64_t size, const struct rs_id *oid)
{
	struct streams st;
	struct rs_buf rawc = RS_BUF_INIT;
	struct proof pr;
	pthread_t thread;
	ZSTD_CCtx *cctx = NULL;
	int started = 0, same = 0, err;

	codec_streams_init(&st);
	memset(&pr, 0, sizeof(pr));
	err = codec_make_streams(e, &st);
	if (!err)
		err = within_decoder_caps(e, &st, size);
	if (err)
		goto out;
	err = codec_input_is_the_object(e, oid, size);
	if (err)
		goto out;
	err = codec_put_container(&rawc, NULL, &st, size, NULL);
	if (err)
		goto out;
	err = proof_init(&pr, e, &rawc, size);
	if (err)
		goto out;
	started = pthread_create(&thread, NULL, proof_run, &pr) == 0;
	if (!started)
		proof_run(&pr);
	cctx = ZSTD_createCCtx();
	err = cctx ? codec_put_container(out, cctx, &st, size, &e->block_len)
		   : rs_error_set(RS_EGENERIC, "out of memory");
	if (!err && e->next_base)
		err = put_next_base(e->next_base, &st);
	/* undoing the range coder and zstd takes as long as they did: beside the proof's decode */
	same = !err && same_streams(out, &rawc, size);
	if (started)
		pthread_join(thread, NULL);
	if (err)
		goto out;
	err = proof_verdict(e, &pr, out, same);
out:
	free(pr.scratch);
	rs_buf_release(&rawc);
	codec_streams_release(&st);
	ZSTD_freeCCtx(cctx);
	return err;
}

