/*
 * The session container's decoder (docs/codec.md, "Untrusted containers"):
 * every byte it reads comes from a remote. Each length is checked against
 * the bytes present and what it decodes to against the object before
 * anything is allocated.
 */
#define _GNU_SOURCE /* qsort_r */
#include "codec/codec_internal.h"
#include "results/error.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "codec/rc_model.h"
#include "codec/rc_stacks.h"
#include "util/array.h"

/* ---- decoder ------------------------------------------------------------ */

/*
 * The output is double-buffered: while the decoder fills one buffer, a
 * thread of its own hands the other to the sink (which writes and hashes:
 * as much work as the decoding itself). Without a thread, the sink is
 * called in line.
 */

struct out {
	rs_codec_write_fn write;
	void *ctx;
	unsigned char buf[2][OUT_BUF];
	int cur;                  /* the buffer being filled */
	size_t len;
	uint64_t total, max;

	pthread_t thread;
	int threaded;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int pending;              /* the other buffer waits for the sink */
	size_t pending_len;
	int done;                 /* no more buffers */
	int werr;                 /* the sink's first error, and its message */
	struct rs_error_saved wsaved; /* (error slots are per thread) */
};

static void *out_writer(void *arg)
{
	struct out *o = arg;

	pthread_mutex_lock(&o->mu);
	for (;;) {
		while (!o->pending && !o->done)
			pthread_cond_wait(&o->cv, &o->mu);
		if (!o->pending)
			break;
		pthread_mutex_unlock(&o->mu);
		{
			int err = o->werr ? 0 : o->write(o->ctx, o->buf[o->cur ^ 1], o->pending_len);

			pthread_mutex_lock(&o->mu);
			if (err && !o->werr) {
				o->werr = err;
				rs_error_save(&o->wsaved, err);
			}
		}
		o->pending = 0;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

static void out_start(struct out *o, rs_codec_write_fn write, void *ctx, uint64_t max)
{
	o->write = write;
	o->ctx = ctx;
	o->cur = 0;
	o->len = 0;
	o->total = 0;
	o->max = max;
	o->pending = o->done = o->werr = 0;
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	o->threaded = max > 4 * OUT_BUF && pthread_create(&o->thread, NULL, out_writer, o) == 0;
}

/* Wait until the sink is idle; its error, if any. */
static int out_idle(struct out *o)
{
	int err;

	pthread_mutex_lock(&o->mu);
	while (o->pending)
		pthread_cond_wait(&o->cv, &o->mu);
	err = o->werr;
	pthread_mutex_unlock(&o->mu);
	/* Set once, before werr, and never again: no lock needed to read it. */
	return err ? rs_error_restore(&o->wsaved) : 0;
}

static int out_flush(struct out *o)
{
	int err;

	if (!o->len)
		return 0;
	if (!o->threaded) {
		err = o->write(o->ctx, o->buf[o->cur], o->len);
		o->len = 0;
		return err;
	}
	err = out_idle(o);
	if (err)
		return err;
	pthread_mutex_lock(&o->mu);
	o->pending = 1;
	o->pending_len = o->len;
	o->cur ^= 1; /* the writer takes buf[cur ^ 1] */
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	o->len = 0;
	return 0;
}

/* Flush (unless `abandon`), wait for the sink, stop the thread. */
static int out_finish(struct out *o, int abandon)
{
	int err = abandon ? 0 : out_flush(o);

	if (o->threaded) {
		int werr = out_idle(o);

		pthread_mutex_lock(&o->mu);
		o->done = 1;
		pthread_cond_broadcast(&o->cv);
		pthread_mutex_unlock(&o->mu);
		pthread_join(o->thread, NULL);
		if (!err)
			err = werr;
	}
	pthread_mutex_destroy(&o->mu);
	pthread_cond_destroy(&o->cv);
	return err;
}

static int out_put_slow(struct out *o, const void *p, size_t n);

/* The common case in line: the bytes fit the buffer and the size. */
static inline int out_put(struct out *o, const void *p, size_t n)
{
	if (n <= OUT_BUF - o->len && n <= o->max - o->total) {
		memcpy(o->buf[o->cur] + o->len, p, n);
		o->len += n;
		o->total += n;
		if (o->len < OUT_BUF)
			return 0;
		return out_flush(o);
	}
	return out_put_slow(o, p, n);
}

static int out_put_slow(struct out *o, const void *p, size_t n)
{
	int err;

	if (n > o->max - o->total)
		return rs_error_set(RS_ECORRUPT, "the session container decodes to more than %llu bytes",
				    (unsigned long long)o->max);
	o->total += n;
	while (n) {
		size_t k = OUT_BUF - o->len;

		if (k > n)
			k = n;
		memcpy(o->buf[o->cur] + o->len, p, k);
		o->len += k;
		p = (const char *)p + k;
		n -= k;
		if (o->len == OUT_BUF) {
			err = out_flush(o);
			if (err)
				return err;
		}
	}
	return 0;
}

static int corrupt(const char *why)
{
	return rs_error_set(RS_ECORRUPT, "the session container is damaged: %s", why);
}

void codec_decoded_release(struct decoded *d)
{
	int i;

	for (i = 0; i < SEC_SLOTS; i++)
		free(d->owned[i]);
	codec_base_tree_release(&d->bt);
	free(d->frames);
	free(d->quoted);
	free(d->parent);
	free(d->node_frame);
	free(d->path);
	if (d->repr_owned)
		free(d->repr);
}

/*
 * Codec 3: the frame list `raw`/`raw_len` rebuilt from its front coding
 * `fc`/`n` (per frame: varint bytes shared with the previous frame,
 * varint bytes after those, those bytes), which must fill it exactly.
 */
static int unfront(unsigned char *raw, size_t raw_len, const unsigned char *fc, size_t n)
{
	struct cursor c = { fc, n, 0 };
	size_t at = 0, prev = 0, prev_len = 0;

	while (c.pos < c.len) {
		uint64_t k, rest;
		unsigned char tmp[10];
		size_t vl;

		if (get_varint(&c, &k) || get_varint(&c, &rest) || k > prev_len || rest > c.len - c.pos)
			return corrupt("a front-coded frame list is inconsistent");
		vl = codec_varint_put(tmp, k + rest);
		if (vl > raw_len - at || k + rest > raw_len - at - vl)
			return corrupt("a front-coded frame list is larger than it says");
		memcpy(raw + at, tmp, vl);
		memmove(raw + at + vl, raw + prev, (size_t)k); /* the previous frame's text, already written */
		memcpy(raw + at + vl + k, c.p + c.pos, (size_t)rest);
		c.pos += (size_t)rest;
		prev = at + vl;
		prev_len = (size_t)(k + rest);
		at += vl + prev_len;
	}
	return at == raw_len ? 0 : corrupt("a front-coded frame list is shorter than it says");
}

/*
 * Codec 4 (version 3): a frame list in columns. Its zstd frame holds a
 * varint |A|, the column A of varints, then the column B of texts, each
 * ended by '\n' (a frame's raw JSON text holds no raw newline). Per frame
 * A gives a kind (COL_*), then per part a table reference: 0, the part is
 * B's next text and joins its table; v >= 1, the table's v-th most recent
 * entry. The tables (names, files, classes) start empty in every list and
 * hold at most one entry per frame. The frames must fill `raw` exactly,
 * and A and B must be used up.
 *
 * Codec 5 (version 4) is the same frames with A cut in six columns, one
 * per field (kinds, name refs, file refs, first lines, class refs, line
 * differences), their lengths first, and one more kind, COL_SAME: the
 * previous frame's name, file, first line and class, and a line coded
 * against the previous frame's line (or its first line if it had none).
 * The reader keeps a cursor per field; codec 4's six are one and the same.
 */
struct col_table {
	uint32_t *at;             /* each entry's offset in B */
	uint32_t n;               /* at most MAX_FRAMES */
	size_t cap;               /* rs_array_grow's */
};

struct col_reader {
	struct cursor col[COLF_N];
	struct cursor *f[COLF_N]; /* each field's cursor: col[0] for all (codec 4), or col[i] */
	int split;                /* codec 5: COL_SAME may be used */
	const unsigned char *b;
	size_t b_len, b_pos;
	struct col_table names, files, classes;
	/* codec 5: the previous frame's parts, for COL_SAME (has_prev 0: none may follow) */
	int has_prev, prev_has_class;
	size_t prev_off[3], prev_len[3];
	uint64_t prev_first, prev_line;
};

/* B's next text: its offset and length. */
static int col_text(struct col_reader *r, size_t *off, size_t *len)
{
	const unsigned char *nl;

	if (r->b_pos >= r->b_len)
		return corrupt("a frame list in columns lacks a text");
	nl = memchr(r->b + r->b_pos, '\n', r->b_len - r->b_pos);
	if (!nl)
		return corrupt("a frame list in columns has an unended text");
	*off = r->b_pos;
	*len = (size_t)(nl - (r->b + r->b_pos));
	r->b_pos += *len + 1;
	return 0;
}

/* A part of a frame by its table reference: its text in B. */
static int col_part(struct col_reader *r, struct col_table *t, struct cursor *c, size_t *off, size_t *len)
{
	uint64_t v;
	int err;

	if (get_varint(c, &v))
		return corrupt("a frame list in columns is cut short");
	if (v == 0) {
		err = col_text(r, off, len);
		if (err)
			return err;
		if (t->n >= MAX_FRAMES)
			return corrupt("a frame list in columns has too many parts");
		err = rs_array_grow(&t->at, &t->cap, (size_t)t->n + 1, sizeof(*t->at), 256);
		if (err)
			return err;
		t->at[t->n++] = (uint32_t)*off;
		return 0;
	}
	if (v > t->n)
		return corrupt("a frame list in columns names a part it does not have");
	*off = t->at[t->n - v];
	*len = (size_t)((const unsigned char *)memchr(r->b + *off, '\n', r->b_len - *off) - (r->b + *off));
	return 0;
}

/* A line number (at most 9 digits) as decimal text into `out`; its length. */
static size_t col_decimal(uint64_t v, char *out)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* One part of a frame's text: a mark (or NULL), then `len` bytes from B or from `num`. */
struct col_piece {
	const char *mark;
	size_t mark_len;
	const unsigned char *p;
	size_t len;
};

/* The pieces of the next frame, into `pc` (6 of them at most) and `num` (its two lines' digits). */
static int col_frame(struct col_reader *r, struct col_piece *pc, size_t *np_out, char num[2][12])
{
	uint64_t kind, first, dline, line_base;
	size_t np = 0, off = 0, len = 0, part_off[3] = { 0, 0, 0 }, part_len[3] = { 0, 0, 0 };
	int err, has_class, has_line;

	if (get_varint(r->f[COLF_KIND], &kind) || kind > (r->split ? COL_SAME : COL_REST))
		return corrupt("a frame list in columns has an unknown kind of frame");
	if (kind == COL_VERBATIM) {
		err = col_text(r, &off, &len);
		if (err)
			return err;
		pc[np++] = (struct col_piece){ NULL, 0, r->b + off, len };
		*np_out = np;
		r->has_prev = 0;
		return 0;
	}
	if (kind == COL_SAME) {
		if (!r->has_prev)
			return corrupt("a frame list in columns repeats a frame it does not have");
		memcpy(part_off, r->prev_off, sizeof(part_off));
		memcpy(part_len, r->prev_len, sizeof(part_len));
		first = r->prev_first;
		has_class = r->prev_has_class;
		has_line = 1;
		line_base = r->prev_line;
	} else {
		has_class = kind == COL_WITH_CLASS || kind == COL_CLASS_LINE;
		has_line = kind == COL_WITH_LINE || kind == COL_CLASS_LINE;
		err = col_part(r, &r->names, r->f[COLF_NAME], &part_off[0], &part_len[0]);
		if (err)
			return err;
		err = col_part(r, &r->files, r->f[COLF_FILE], &part_off[1], &part_len[1]);
		if (err)
			return err;
		if (get_varint(r->f[COLF_FIRST], &first) || first > COL_MAX_LINE)
			return corrupt("a frame list in columns has a bad line");
		if (has_class) {
			err = col_part(r, &r->classes, r->f[COLF_CLASS], &part_off[2], &part_len[2]);
			if (err)
				return err;
		}
		line_base = first;
	}
	pc[np++] = (struct col_piece){ NULL, 0, r->b + part_off[0], part_len[0] };
	pc[np++] = (struct col_piece){ COL_SEP, COL_SEP_LEN, r->b + part_off[1], part_len[1] };
	pc[np++] = (struct col_piece){ COL_SEP, COL_SEP_LEN, (const unsigned char *)num[0], col_decimal(first, num[0]) };
	if (has_class)
		pc[np++] = (struct col_piece){ COL_CLASS, COL_ATTR_LEN, r->b + part_off[2], part_len[2] };
	r->prev_line = first;
	if (has_line) {
		int64_t line;

		if (get_varint(r->f[COLF_LINE], &dline))
			return corrupt("a frame list in columns is cut short");
		line = (int64_t)line_base + unzigzag(dline);
		if (line < 0 || line > (int64_t)COL_MAX_LINE)
			return corrupt("a frame list in columns has a bad line");
		pc[np++] = (struct col_piece){ COL_LINE, COL_ATTR_LEN, (const unsigned char *)num[1],
					       col_decimal((uint64_t)line, num[1]) };
		r->prev_line = (uint64_t)line;
	}
	if (kind == COL_REST) {
		err = col_text(r, &off, &len);
		if (err)
			return err;
		pc[np++] = (struct col_piece){ NULL, 0, r->b + off, len };
	}
	/* what a COL_SAME after this one repeats (a frame with a rest of its own repeats nothing) */
	r->has_prev = kind != COL_REST;
	memcpy(r->prev_off, part_off, sizeof(part_off));
	memcpy(r->prev_len, part_len, sizeof(part_len));
	r->prev_first = first;
	r->prev_has_class = has_class;
	*np_out = np;
	return 0;
}

/* Codec 4 (`split` 0) or 5: the columns `cols`/`n` rebuilt into the list `raw`/`raw_len`. */
static int uncolumn_any(unsigned char *raw, size_t raw_len, const unsigned char *cols, size_t n, int split)
{
	struct col_reader r;
	struct cursor head = { cols, n, 0 };
	uint64_t col_len[COLF_N];
	size_t at = 0, k;
	int err = 0, i, ncols = split ? COLF_N : 1;

	memset(&r, 0, sizeof(r));
	r.split = split;
	for (i = 0; i < ncols; i++)
		if (get_varint(&head, &col_len[i]))
			return corrupt("a frame list in columns is cut short");
	for (i = 0; i < ncols; i++) {
		if (col_len[i] > n - head.pos)
			return corrupt("a frame list in columns is cut short");
		r.col[i].p = cols + head.pos;
		r.col[i].len = (size_t)col_len[i];
		head.pos += (size_t)col_len[i];
	}
	for (i = 0; i < COLF_N; i++)
		r.f[i] = &r.col[split ? i : 0];
	r.b = cols + head.pos;
	r.b_len = n - head.pos;
	while (!err && r.f[COLF_KIND]->pos < r.f[COLF_KIND]->len) {
		struct col_piece pc[6];
		char num[2][12];
		unsigned char tmp[10];
		size_t np = 0, len = 0, vl;

		err = col_frame(&r, pc, &np, num);
		if (err)
			break;
		for (k = 0; k < np; k++)
			len += pc[k].mark_len + pc[k].len;
		vl = codec_varint_put(tmp, len);
		if (vl > raw_len - at || len > raw_len - at - vl) {
			err = corrupt("a frame list in columns is larger than it says");
			break;
		}
		memcpy(raw + at, tmp, vl);
		at += vl;
		for (k = 0; k < np; k++) {
			if (pc[k].mark_len) /* no mark: NULL, which memcpy may not be given */
				memcpy(raw + at, pc[k].mark, pc[k].mark_len);
			at += pc[k].mark_len;
			memcpy(raw + at, pc[k].p, pc[k].len);
			at += pc[k].len;
		}
	}
	if (!err && (at != raw_len || r.b_pos != r.b_len))
		err = corrupt("a frame list in columns is shorter than it says");
	for (i = 1; !err && i < ncols; i++)
		if (r.col[i].pos != r.col[i].len)
			err = corrupt("a frame list in columns has bytes left over");
	free(r.names.at);
	free(r.files.at);
	free(r.classes.at);
	return err;
}

static int uncolumn(unsigned char *raw, size_t raw_len, const unsigned char *cols, size_t n)
{
	return uncolumn_any(raw, raw_len, cols, n, 0);
}

static int uncolumn_split(unsigned char *raw, size_t raw_len, const unsigned char *cols, size_t n)
{
	return uncolumn_any(raw, raw_len, cols, n, 1);
}

/*
 * Codec 3, 4 or 5 at `at`: its zstd frame (its content at most
 * `max_coded` bytes: the front coding 3 bytes per frame more than the
 * list, the columns no more than the list) into a buffer of its own,
 * then `undo` (unfront, uncolumn, uncolumn_split) rebuilds the list into
 * `raw`.
 */
typedef int (*undo_fn)(unsigned char *raw, size_t raw_len, const unsigned char *coded, size_t n);

static int unpack_recoded(unsigned char *raw, size_t raw_len, const unsigned char *at, uint64_t stored,
			  unsigned long long max_coded, undo_fn undo)
{
	unsigned long long coded_len = ZSTD_getFrameContentSize(at, (size_t)stored);
	unsigned char *coded;
	size_t got;
	int err;

	if (coded_len == ZSTD_CONTENTSIZE_UNKNOWN || coded_len == ZSTD_CONTENTSIZE_ERROR ||
	    coded_len > max_coded || ZSTD_findFrameCompressedSize(at, (size_t)stored) != stored)
		return corrupt("a compressed stream does not say its length");
	coded = malloc(coded_len ? (size_t)coded_len : 1);
	if (!coded)
		return rs_error_set(RS_EGENERIC, "out of memory");
	got = ZSTD_decompress(coded, (size_t)coded_len, at, (size_t)stored);
	err = ZSTD_isError(got) || got != coded_len ? corrupt("a stream does not decompress")
						     : undo(raw, raw_len, coded, (size_t)coded_len);
	free(coded);
	return err;
}

/*
 * The range-coded streams are decoded before any output: 0.04 s of a
 * 224 MB session's get, and of the proof's check of the compressed
 * container. The samples and the times streams (the largest) are each
 * decoded on a thread of their own, side by side, once the tree is
 * decoded here (they follow it in the container: with only the times
 * aside, the samples were decoded here before its thread started, one
 * after the other); codec_read_sections waits for both before it
 * returns. Each output is the stream's own buffer, allocated (within the
 * caps) beforehand.
 */
#define RC_ASIDE_MIN 4096 /* raw bytes: below, a thread costs more than it saves */

struct rc_aside {
	pthread_t thread;
	int started;
	unsigned char *out;
	size_t raw, stored;
	enum rc_kind kind;
	int version;
	const unsigned char *at;
	const unsigned char *base; /* stacks (version 7): the base's, or NULL */
	size_t base_len;
	int stacks;
	uint64_t max_levels;       /* stacks: stacks_level_budget() */
	int err;
	struct rs_error_saved saved;
};

static void *rc_aside_run(void *arg)
{
	struct rc_aside *a = arg;

	a->err = a->stacks ? rs_stacks_unpack(a->out, a->raw, a->base, a->base_len, a->at, a->stored, a->max_levels)
			   : rs_rc_unpack(a->out, a->raw, a->kind, a->version, a->at, a->stored);
	if (a->err)
		rs_error_save(&a->saved, a->err);
	return NULL;
}

/*
 * Decode the samples or the times stream on a thread: 1 if it started, 0
 * to decode it here. Stacks (version 7) are decoded after `base`, which
 * stays until the thread is joined.
 */
static int rc_aside_start(struct decoded *d, int i, enum rc_kind kind, const unsigned char *at,
			  uint64_t stored, uint64_t raw, const struct cursor *base)
{
	struct rc_aside *a = d->aside ? &d->aside[i == SEC_TIMES] : NULL;

	if (!a || a->started || (i != SEC_TIMES && i != SEC_SAMPLES) || raw < RC_ASIDE_MIN)
		return 0;
	a->out = d->owned[i];
	a->raw = (size_t)raw;
	a->stored = (size_t)stored;
	a->kind = kind;
	a->version = d->version;
	a->at = at;
	a->stacks = base != NULL;
	a->base = base && base->len ? base->p : NULL;
	a->base_len = base ? base->len : 0;
	a->max_levels = stacks_level_budget(d->max_size);
	a->started = pthread_create(&a->thread, NULL, rc_aside_run, a) == 0;
	return a->started;
}

/* A stream's bytes, `stored` at `at`, decoded into d->sec[i] (`raw` bytes, already checked against the caps). */
static int unpack_stream(struct decoded *d, int i, unsigned codec, const unsigned char *at,
			 uint64_t stored, uint64_t raw)
{
	enum rc_kind kind = stream_model(d->version, i);
	/* version 7's samples are the stacks coded after the base's (read before: the base block comes first) */
	const struct cursor *base = i == SEC_SAMPLES ? &d->sec[SEC_BASE_TREE] : NULL;

	if (codec == SEC_CODEC_RAW) {
		if (raw != stored)
			return corrupt("a stored stream's lengths disagree");
		d->sec[i].p = at;
		return 0;
	}
	if (codec != SEC_CODEC_ZSTD && (codec != SEC_CODEC_RC || kind == RC_KINDS) &&
	    (codec != SEC_CODEC_FRONT || d->version < 2 || !is_frame_list(i)) &&
	    (codec != SEC_CODEC_COLUMNS || d->version < 3 || !is_frame_list(i)) &&
	    (codec != SEC_CODEC_SPLIT || d->version < 4 || !is_frame_list(i)) &&
	    (codec != SEC_CODEC_STACKS || !is_stacks_stream(d->version, i)))
		return corrupt("a stream has an unknown codec");
	if (codec == SEC_CODEC_ZSTD &&
	    (ZSTD_getFrameContentSize(at, (size_t)stored) != raw ||
	     ZSTD_findFrameCompressedSize(at, (size_t)stored) != stored))
		return corrupt("a compressed stream does not say its length");
	d->owned[i] = malloc(raw ? (size_t)raw : 1);
	if (!d->owned[i])
		return rs_error_set(RS_EGENERIC, "out of memory");
	d->sec[i].p = d->owned[i];
	if (codec == SEC_CODEC_RC && rc_aside_start(d, i, kind, at, stored, raw, NULL))
		return 0;
	if (codec == SEC_CODEC_STACKS && i == SEC_SAMPLES && rc_aside_start(d, i, kind, at, stored, raw, base))
		return 0;
	if (codec == SEC_CODEC_STACKS)
		return rs_stacks_unpack(d->owned[i], (size_t)raw, base && base->len ? base->p : NULL,
					base ? base->len : 0, at, (size_t)stored, stacks_level_budget(d->max_size));
	if (codec == SEC_CODEC_RC && i == SEC_TREE)
		return rs_rc_unpack_base(d->owned[i], (size_t)raw, kind, d->version, &d->bt.rc, at, (size_t)stored);
	if (codec == SEC_CODEC_RC)
		return rs_rc_unpack(d->owned[i], (size_t)raw, kind, d->version, at, (size_t)stored);
	if (codec == SEC_CODEC_FRONT)
		return unpack_recoded(d->owned[i], (size_t)raw, at, stored, raw + 3ull * MAX_FRAMES, unfront);
	if (codec == SEC_CODEC_COLUMNS)
		return unpack_recoded(d->owned[i], (size_t)raw, at, stored, raw, uncolumn);
	if (codec == SEC_CODEC_SPLIT)
		return unpack_recoded(d->owned[i], (size_t)raw, at, stored, raw, uncolumn_split);
	{
		size_t got = ZSTD_decompress(d->owned[i], (size_t)raw, at, (size_t)stored);

		if (ZSTD_isError(got) || got != raw)
			return corrupt("a stream does not decompress");
	}
	return 0;
}

/*
 * One stream at p[*at]: its header, then its bytes, decoded into
 * d->sec[i]. What it says it decodes to is checked before anything is
 * allocated: at most `cap` bytes, and the streams' total at most
 * RS_CODEC_MAX_STREAMS.
 */
static int read_section(struct decoded *d, int i, const unsigned char *p, size_t len, size_t *at,
			uint64_t cap, uint64_t *total)
{
	size_t pos = *at;
	uint64_t raw, stored;
	int err;

	if (len - pos < SECTION_HEADER_SIZE)
		return corrupt("a stream header is cut short");
	if (!rs_all_zero(p + pos + 17, 7))
		return corrupt("a stream header has reserved bytes set");
	raw = get_le64(p + pos);
	stored = get_le64(p + pos + 8);
	pos += SECTION_HEADER_SIZE;
	if (stored > len - pos)
		return corrupt("a stream is cut short");
	if (raw > cap)
		return corrupt("a stream would decode to more than the object allows");
	if (raw > RS_CODEC_MAX_STREAMS - *total)
		return corrupt("its streams are larger than any valid one");
	*total += raw;
	err = unpack_stream(d, i, p[*at + 16], p + pos, stored, raw);
	if (err)
		return err;
	d->sec[i].len = (size_t)raw;
	*at = pos + (size_t)stored;
	return 0;
}

/* The version a block header states, if this build reads it. */
static int read_version(const unsigned char *p, int *version)
{
	uint32_t v = get_le32(p + 8);

	/* Below the oldest: no results wrote it, damage. Above: a newer writer's. */
	if (v < RS_CODEC_OLDEST)
		return corrupt("it states a session codec version no results writes");
	if (v > RS_CODEC_VERSION)
		return rs_error_set(RS_ENEWER, "the object was stored with session codec version %u, "
				    "which this build cannot read: upgrade results", v);
	*version = (int)v;
	return 0;
}

static int count_texts(const struct cursor *c, uint64_t *n);

/*
 * Version 5's base block holds the base tree after the dictionary: it is
 * read (and checked) before the main streams, whose tree's range coder
 * follows it.
 */
static int read_base_tree(struct decoded *d, const unsigned char *p, size_t len, size_t *pos, uint64_t *total)
{
	uint64_t nbase;
	int err;

	err = read_section(d, SEC_BASE_TREE, p, len, pos, MAX_FRAME_BYTES, total);
	if (err)
		return err;
	err = count_texts(&d->sec[SEC_BASE], &nbase);
	if (err)
		return err;
	return codec_base_tree_read(&d->bt, d->sec[SEC_BASE_TREE].p, d->sec[SEC_BASE_TREE].len, nbase);
}

/*
 * The container: the base block (magic, version, reserved, one stream:
 * the shared dictionary; version 5: a second, the base tree), then the
 * main header (magic, version, stream count, the object's size: at most
 * `max_size`) and its streams, none of which may decode to more than the
 * object's size.
 */
static int read_sections(struct decoded *d, const unsigned char *p, size_t len, uint64_t max_size)
{
	size_t pos = BASE_HEADER_SIZE;
	uint64_t total = 0;
	int i, err, count;

	d->max_size = max_size;
	if (len < BASE_HEADER_SIZE || memcmp(p, BASE_MAGIC, 8))
		return corrupt("it does not start with its magic");
	err = read_version(p, &d->version);
	if (err)
		return err;
	if (get_le32(p + 12) != 0)
		return corrupt("its base block header has reserved bytes set");
	err = read_section(d, SEC_BASE, p, len, &pos, MAX_FRAME_BYTES, &total);
	if (err)
		return err;
	if (d->version >= 7) {
		/* the base's stacks: another run's, so not bounded by this object's size */
		err = read_section(d, SEC_BASE_TREE, p, len, &pos, MAX_STACKS_BYTES, &total);
		if (err)
			return err;
	} else if (d->version >= 5) {
		err = read_base_tree(d, p, len, &pos, &total);
		if (err)
			return err;
	}
	count = d->version == 1 ? SEC_COUNT : V2_COUNT;
	if (len - pos < HEADER_SIZE || memcmp(p + pos, RS_CODEC_MAGIC, 8))
		return corrupt("its main streams do not start with their magic");
	if (get_le32(p + pos + 8) != (uint32_t)d->version || get_le32(p + pos + 12) != (uint32_t)count)
		return corrupt("it does not have the streams of its version");
	d->size = get_le64(p + pos + 16);
	if (d->size > max_size)
		return corrupt("it rebuilds more bytes than the object has");
	pos += HEADER_SIZE;
	for (i = 0; i < count; i++) {
		int k = d->version == 1 ? i : codec_v2_streams[i];
		uint64_t cap = d->size;

		/* version 7: the base's stacks and this run's together within MAX_STACKS_BYTES */
		if (d->version >= 7 && k == SEC_SAMPLES && cap > MAX_STACKS_BYTES - d->sec[SEC_BASE_TREE].len)
			cap = MAX_STACKS_BYTES - d->sec[SEC_BASE_TREE].len;
		err = read_section(d, k, p, len, &pos, cap, &total);
		if (err)
			return err;
	}
	if (pos != len)
		return corrupt("bytes follow the last stream");
	return 0;
}

int codec_read_sections(struct decoded *d, const unsigned char *p, size_t len, uint64_t max_size)
{
	struct rc_aside aside[2]; /* the samples', the times' */
	int err, k;

	memset(aside, 0, sizeof(aside));
	d->aside = aside;
	err = read_sections(d, p, len, max_size);
	for (k = 0; k < 2; k++) {
		if (!aside[k].started)
			continue;
		pthread_join(aside[k].thread, NULL);
		if (!err && aside[k].err)
			err = rs_error_restore(&aside[k].saved);
	}
	d->aside = NULL;
	return err;
}

/* How many texts a dictionary stream holds (each at least one byte). */
static int count_texts(const struct cursor *c, uint64_t *n)
{
	struct cursor k = *c;
	uint64_t l;

	*n = 0;
	while (k.pos < k.len) {
		if (get_varint(&k, &l) || l > k.len - k.pos)
			return corrupt("a frame string is cut short");
		k.pos += (size_t)l;
		(*n)++;
	}
	return 0;
}

/* Frame texts of the dictionary and thread sections: varint length + bytes. */
static int read_texts(struct cursor *c, struct text *t, uint64_t n)
{
	uint64_t i, l;

	for (i = 0; i < n; i++) {
		if (get_varint(c, &l) || l > c->len - c->pos || l > UINT32_MAX)
			return corrupt("a frame string is cut short");
		t[i].p = c->p + c->pos;
		t[i].len = (uint32_t)l;
		c->pos += (size_t)l;
	}
	if (c->pos != c->len)
		return corrupt("bytes follow the last frame string");
	return 0;
}

/*
 * Each frame as written after another, `, "frame"`, in one piece (the
 * first of a stack skips the `, `): one copy per frame instead of three.
 * The frames' bytes come from streams of at most RS_CODEC_MAX_STREAMS in
 * all, and there are at most MAX_FRAMES of them: the sum cannot overflow.
 */
static int quote_frames(struct decoded *d, uint64_t n)
{
	size_t total = 0, at = 0;
	uint64_t i;

	for (i = 0; i < n; i++)
		total += (size_t)d->frames[i].len + 4;
	d->quoted = malloc(total ? total : 1);
	if (!d->quoted)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n; i++) {
		struct text *t = &d->frames[i];

		memcpy(d->quoted + at, ", \"", 3);
		memcpy(d->quoted + at + 3, t->p, t->len);
		d->quoted[at + 3 + t->len] = '"';
		t->p = d->quoted + at;
		t->len += 4;
		at += t->len;
	}
	return 0;
}

/*
 * The call tree (codec_walk_tree, session_tree.c). In version 5 an empty
 * tree stream says the tree is the base tree, its thread slots this run's
 * threads; otherwise, with a base tree, the tree is coded against it.
 */
static int read_tree(struct decoded *d, uint64_t nnodes, uint64_t nbase, uint64_t nframes, uint64_t nthreads)
{
	const struct codec_base_tree *bt = &d->bt;
	struct tree_walk w;
	uint64_t k;

	if (d->version >= 5 && bt->rc.n && !d->sec[SEC_TREE].len) {
		/* read_params: nnodes is the base tree's */
		d->parent[0] = UINT32_MAX;
		d->node_frame[0] = UINT32_MAX;
		for (k = 1; k < nnodes; k++) {
			uint32_t f = bt->frame[k];

			if (f >= bt->nbase && f - bt->nbase >= nthreads)
				return corrupt("the call tree names a thread it does not have");
			d->parent[k] = bt->parent[k];
			d->node_frame[k] = f < bt->nbase ? f : (uint32_t)(nbase + nframes + (f - bt->nbase));
		}
		return 0;
	}
	memset(&w, 0, sizeof(w));
	w.c = &d->sec[SEC_TREE];
	w.version = d->version;
	w.nnodes = nnodes;
	w.nframes = nbase + nframes + nthreads;
	w.base = d->version >= 5 && bt->rc.n ? bt : NULL;
	w.thread_at = nbase + nframes;
	w.nthreads = nthreads;
	w.parent = d->parent;
	w.node_frame = d->node_frame;
	return codec_walk_tree(&w);
}

/*
 * A record's time code and, for a modelled one, zigzag(n - ref):
 * version 1 keeps the code as a byte (residual + 128) and the value
 * split into a low byte and a varint in two streams of their own;
 * version 2 has both in one stream, the code as a varint (1 + the
 * residual's zigzag). *code 0: the time is text.
 */
static int read_time_code(struct decoded *d, int *code, uint64_t *v)
{
	struct cursor *c = &d->sec[SEC_TCODE];
	uint64_t k;

	if (d->version == 1) {
		if (c->pos >= c->len)
			return corrupt("a time is missing");
		*code = c->p[c->pos++];
		if (*code && get_split(&d->sec[SEC_TVAL], &d->sec[SEC_TVAL_HI], v))
			return corrupt("a time is missing");
		return 0;
	}
	if (get_varint(c, &k) || k > 255)
		return corrupt("a time is missing");
	if (k == 0) {
		*code = 0;
		return 0;
	}
	*code = (int)(unzigzag(k - 1) + 128);
	if (*code < 1 || *code > 255 || get_varint(c, v))
		return corrupt("a time is missing");
	return 0;
}

/*
 * Record r's time: its text as kept (*text, *len), or, modelled, *text
 * NULL and its value *x, on the grid of the reading before it (d->grid;
 * version 6: one coarser after it when r is the next grid change).
 */
static int read_time(struct decoded *d, uint64_t r, int64_t ref, double *x, const unsigned char **text,
		     size_t *len)
{
	struct cursor *e = &d->sec[SEC_TESC];
	int code = 0, err, s = d->grid;
	int change = d->grid_next < d->ngrid && d->grid_at[d->grid_next] == r;
	int64_t n, m;
	uint64_t v = 0;

	err = read_time_code(d, &code, &v);
	if (err)
		return err;
	if (code == 0 && change)
		return corrupt("its clock changes grid at a time kept as text");
	if (code == 0) {
		if (get_varint(e, &v) || v > e->len - e->pos || v > MAX_NUMBER)
			return corrupt("a time kept as text is cut short");
		*text = e->p + e->pos;
		*len = (size_t)v;
		e->pos += (size_t)v;
		return 0;
	}
	if (s < 1 || v >> 52)
		return corrupt("a time is out of range");
	n = ref + unzigzag(v);
	if (n < 0 || n > (INT64_C(1) << 50))
		return corrupt("a time is out of range");
	/*
	 * With a phase the readings' grid values are worked out, not only the
	 * difference: past 2^55 steps no valid time goes (m below 2^53, the
	 * phase below 2^(s-9) <= 2^53 steps), and 64 bits would overflow.
	 */
	if (d->phased && (((__int128)n + CLOCK_PERIOD) << s) >= ((__int128)1000000000 << 55))
		return corrupt("a time is out of range");
	if (d->phased) {
		/* a change: the first reading on the grid twice coarser (version 6) */
		m = (change ? change_steps(d->clock_x, n, s) : phase_steps(d->clock_x, n, s)) + (int64_t)code - 128;
		d->clock_x = phase_next(d->clock_x, n);
		d->grid -= change;
		d->grid_next += change;
	} else {
		m = grid_of_ns(n, s) + (int64_t)code - 128;
	}
	if (m <= 0 || m >= (INT64_C(1) << 53))
		return corrupt("a time is out of range");
	*text = NULL;
	*x = ldexp((double)m, -s);
	return 0;
}

/* `[[` (`, [[` after the first record), the `depth` frames at `f` from the root, quoted (quote_frames), and `], `. */
static int write_frames(struct decoded *d, struct out *o, const uint32_t *f, size_t depth, int first)
{
	size_t i;
	int err = out_put(o, first ? "[[" : ", [[", first ? 2 : 4);

	for (i = 0; !err && i < depth; i++) {
		const struct text *t = &d->frames[f[i]];
		size_t skip = i == 0 ? 2 : 0; /* the root's has no `, ` */

		err = out_put(o, t->p + skip, t->len - skip);
	}
	return err ? err : out_put(o, "], ", 3);
}

/* The record's stack from the root to `node` (write_frames): d->path filled from its end, up from the node. */
static int write_stack(struct decoded *d, struct out *o, uint32_t node, int first)
{
	size_t depth = 0;
	uint32_t at;

	for (at = node; at != 0; at = d->parent[at])
		d->path[MAX_DEPTH - ++depth] = d->node_frame[at]; /* depth < MAX_DEPTH: read_tree */
	return write_frames(d, o, d->path + MAX_DEPTH - depth, depth, first);
}

/*
 * The record's end node as the difference from the previous record's:
 * version 1 splits it into a low byte and a varint (two streams), version
 * 2 has the varint whole.
 */
static int read_sample(struct decoded *d, uint64_t nnodes, uint32_t *node)
{
	uint64_t v;
	int64_t at;

	if (d->version == 1 ? get_split(&d->sec[SEC_SAMPLES], &d->sec[SEC_SAMPLES_HI], &v)
			    : get_varint(&d->sec[SEC_SAMPLES], &v))
		return corrupt("a sample reference is missing");
	if (v / 2 > nnodes)
		return corrupt("a sample names no node of the call tree");
	at = (int64_t)*node + unzigzag(v);
	if (at < 0 || (uint64_t)at >= nnodes)
		return corrupt("a sample names no node of the call tree");
	*node = (uint32_t)at;
	return 0;
}

/* A record's time (its text, or x as Python's repr writes it) and the `]` that closes the record. */
static int write_time(struct decoded *d, struct out *o, double x, const unsigned char *text, size_t len)
{
	char num[64];
	int err;

	if (!text) {
		len = codec_py_repr_cached(d->repr, x, num);
		text = (const unsigned char *)num;
	}
	err = out_put(o, text, len);
	return err ? err : out_put(o, "]", 1);
}

/*
 * The records. A modelled time is read before its stack is written, and
 * its slot of the formatted-time cache fetched meanwhile: the cache is
 * larger than what stays in a core's cache while 224 MB stream past, and
 * the wait for it was most of the time of a look-up.
 */
static int write_records(struct decoded *d, struct out *o, uint64_t nrecords, uint64_t nnodes, int64_t ref)
{
	uint64_t r;
	uint32_t node = 0;
	int err;

	for (r = 0; r < nrecords; r++) {
		const unsigned char *text = NULL;
		size_t len = 0;
		double x = 0;

		err = read_sample(d, nnodes, &node);
		if (err)
			return err;
		err = read_time(d, r, ref, &x, &text, &len);
		if (err)
			return err;
		if (!text)
			codec_repr_prefetch(d->repr, x);
		err = write_stack(d, o, (uint32_t)node, r == 0);
		if (!err)
			err = write_time(d, o, x, text, len);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Version 7: the records' stacks are the samples stream, or, when that is
 * empty, the base's (a run that made its base).
 */
static struct cursor *stacks_of(struct decoded *d)
{
	return d->sec[SEC_SAMPLES].len ? &d->sec[SEC_SAMPLES] : &d->sec[SEC_BASE_TREE];
}

/*
 * Version 7's records: per record the frames it keeps from the previous
 * record's stack and the ranks of the rest (read_params_stacks read the
 * header), each checked against the frames there are and MAX_DEPTH, the
 * time read as write_records does.
 */
static int write_stacks(struct decoded *d, struct out *o, uint64_t nrecords, uint64_t nall, int64_t ref)
{
	struct cursor *c = stacks_of(d);
	uint64_t r, k, m, f;
	size_t depth = 0, i;
	int err;

	for (r = 0; r < nrecords; r++) {
		const unsigned char *text = NULL;
		size_t len = 0;
		double x = 0;

		if (get_varint(c, &k) || get_varint(c, &m) || k > depth || m > MAX_DEPTH - k)
			return corrupt("a record's stack is unreadable");
		for (i = 0; i < m; i++) {
			if (get_varint(c, &f) || f >= nall)
				return corrupt("a record's stack names no frame");
			d->path[k + i] = (uint32_t)f;
		}
		depth = (size_t)(k + m);
		err = read_time(d, r, ref, &x, &text, &len);
		if (err)
			return err;
		if (!text)
			codec_repr_prefetch(d->repr, x);
		err = write_frames(d, o, d->path, depth, r == 0);
		if (!err)
			err = write_time(d, o, x, text, len);
		if (err)
			return err;
	}
	return 0;
}

int rs_codec_decode(const unsigned char *p, size_t len, uint64_t max_size,
		    rs_codec_write_fn write, void *ctx)
{
	return codec_decode(p, len, max_size, write, ctx, NULL);
}

/* The counts of the parameters stream. */
struct dec_params {
	uint64_t s, ref, nframes, nthreads, nnodes, nrecords, nbase, phase;
};

/*
 * Version 6's grid changes: a count (at most GRID_CHANGES_MAX), then per
 * change the records since the one after the previous change (the first:
 * its record), so that they only increase. 1 when unreadable.
 */
static int read_grid_changes(struct decoded *d, struct cursor *c)
{
	uint64_t k, gap, at = 0;

	if (get_varint(c, &k) || k > GRID_CHANGES_MAX)
		return 1;
	for (d->ngrid = 0; d->ngrid < (int)k; d->ngrid++) {
		if (get_varint(c, &gap) || at > (UINT64_C(1) << 40) || gap > (UINT64_C(1) << 40) - at)
			return 1;
		at += gap;
		d->grid_at[d->ngrid] = at++;
	}
	return 0;
}

/*
 * Version 7: either is the stream's frames, its threads after them, and
 * at least two bytes a record. There is no call tree: its count is 0, its
 * stream empty.
 */
static int read_params_stacks(struct decoded *d, const struct dec_params *pr)
{
	struct cursor *c = stacks_of(d);
	uint64_t a, t;

	if (pr->nnodes != 0 || d->sec[SEC_TREE].len)
		return corrupt("it has a call tree, which its version does not");
	if (get_varint(c, &a) || get_varint(c, &t) || a != pr->nbase + pr->nframes || t != pr->nthreads)
		return corrupt("its stacks do not name its frames");
	if (pr->nrecords > (c->len - c->pos) / 2 || pr->nrecords > d->sec[SEC_TIMES].len)
		return corrupt("its counts do not fit its streams");
	return 0;
}

/* The parameters stream, each count checked against the stream it sizes. */
static int read_params(struct decoded *d, struct dec_params *pr)
{
	struct cursor *c = &d->sec[SEC_PARAMS];
	uint64_t nbase_said;
	int err;

	err = count_texts(&d->sec[SEC_BASE], &pr->nbase);
	if (err)
		return err;
	if (get_varint(c, &nbase_said) || nbase_said != pr->nbase || get_varint(c, &pr->s) ||
	    get_varint(c, &pr->ref) || get_varint(c, &pr->nframes) || get_varint(c, &pr->nthreads) ||
	    get_varint(c, &pr->nnodes) || get_varint(c, &pr->nrecords) ||
	    (d->version >= 2 && get_varint(c, &pr->phase)) || (d->version >= 6 && read_grid_changes(d, c)) ||
	    c->pos != c->len)
		return corrupt("its parameters are unreadable");
	if (pr->phase > CLOCK_PERIOD || (pr->phase && pr->s < 9))
		return corrupt("its clock's phase is out of range");
	/* every change needs a phase to follow and leaves a grid of 2^-9 or finer */
	if (d->ngrid && (!pr->phase || pr->s > 62 || (uint64_t)d->ngrid > pr->s - 9 ||
			 d->grid_at[d->ngrid - 1] >= pr->nrecords))
		return corrupt("its clock's grid changes are out of range");
	d->phased = pr->phase != 0;
	d->clock_x = pr->phase ? (int64_t)pr->phase - 1 : 0;
	d->grid = (int)(pr->s > 62 ? 0 : pr->s);
	d->grid_next = 0;
	/*
	 * Every count is backed by at least one byte of its stream, and the
	 * streams by the object's size and the caps: allocations stay bounded.
	 */
	if (pr->s > 62 || pr->ref >> 52 || pr->nframes > d->sec[SEC_DICT].len ||
	    pr->nthreads > d->sec[SEC_THREADS].len || pr->nbase > MAX_FRAMES ||
	    pr->nframes + pr->nthreads > MAX_FRAMES - pr->nbase ||
	    d->sec[SEC_DICT].len + d->sec[SEC_THREADS].len > MAX_FRAME_BYTES)
		return corrupt("its counts do not fit its streams");
	if (d->version >= 7)
		return read_params_stacks(d, pr);
	if (pr->nnodes < 1 ||
	    (pr->nnodes - 1 > d->sec[SEC_TREE].len / 2 && (d->version < 5 || d->sec[SEC_TREE].len)))
		return corrupt("its counts do not fit its streams");
	if (pr->nnodes > MAX_NODES || pr->nnodes > d->size / 4 + 1)
		return corrupt("its call tree is larger than the object allows");
	if (d->version >= 5 && !d->sec[SEC_TREE].len && pr->nnodes != d->bt.rc.n)
		return corrupt("its call tree is not its base tree");
	if (d->version == 1 ? pr->nrecords != d->sec[SEC_SAMPLES].len || pr->nrecords != d->sec[SEC_TCODE].len
			    : pr->nrecords > d->sec[SEC_SAMPLES].len || pr->nrecords > d->sec[SEC_TIMES].len)
		return corrupt("its counts do not fit its streams");
	return 0;
}

static void free_stream(struct decoded *d, int i)
{
	free(d->owned[i]);
	d->owned[i] = NULL;
	d->sec[i].p = NULL;
	d->sec[i].len = d->sec[i].pos = 0;
}

/* The frame texts (base dictionary, dictionary, threads), quoted, and the call tree. */
static int read_frames_and_tree(struct decoded *d, const struct dec_params *pr)
{
	uint64_t nall = pr->nbase + pr->nframes + pr->nthreads;
	int err;

	err = read_texts(&d->sec[SEC_BASE], d->frames, pr->nbase);
	if (err)
		return err;
	err = read_texts(&d->sec[SEC_DICT], d->frames + pr->nbase, pr->nframes);
	if (err)
		return err;
	err = read_texts(&d->sec[SEC_THREADS], d->frames + pr->nbase + pr->nframes, pr->nthreads);
	if (err)
		return err;
	err = quote_frames(d, nall);
	if (err)
		return err;
	free_stream(d, SEC_BASE); /* the frames are quoted: their streams are no longer read */
	free_stream(d, SEC_DICT);
	free_stream(d, SEC_THREADS);
	if (d->version >= 7) {
		if (d->sec[SEC_SAMPLES].len) /* the base's stacks primed the samples' decoder: no longer read */
			free_stream(d, SEC_BASE_TREE);
		return 0;
	}
	free_stream(d, SEC_BASE_TREE);
	return read_tree(d, pr->nnodes, pr->nbase, pr->nframes, pr->nthreads);
}

/* The session's text: prefix, records, suffix; then every stream must be used up. */
static int write_decoded(struct decoded *d, struct out *o, const struct dec_params *pr)
{
	int err, i;

	err = out_put(o, d->sec[SEC_PREFIX].p, d->sec[SEC_PREFIX].len);
	if (err)
		return err;
	if (d->version >= 7)
		err = write_stacks(d, o, pr->nrecords, pr->nbase + pr->nframes + pr->nthreads, unzigzag(pr->ref));
	else
		err = write_records(d, o, pr->nrecords, pr->nnodes, unzigzag(pr->ref));
	if (err)
		return err;
	err = out_put(o, "]", 1);
	if (err)
		return err;
	err = out_put(o, d->sec[SEC_SUFFIX].p, d->sec[SEC_SUFFIX].len);
	if (err)
		return err;
	for (i = SEC_SAMPLES; i < SEC_COUNT; i++)
		if (d->sec[i].pos != d->sec[i].len)
			return corrupt("a stream has bytes no record uses");
	if (d->version >= 7 && d->sec[SEC_BASE_TREE].pos != d->sec[SEC_BASE_TREE].len)
		return corrupt("a stream has bytes no record uses");
	return 0;
}

/* `repr`: a cache to use (the encoder's, for its proof), or NULL for one of its own. */
int codec_decode(const unsigned char *p, size_t len, uint64_t max_size, rs_codec_write_fn write,
		  void *ctx, struct repr_cache *repr)
{
	struct decoded d;
	struct dec_params pr = { 0 };
	struct out *o = NULL;
	int err, started = 0;

	memset(&d, 0, sizeof(d));
	err = codec_read_sections(&d, p, len, max_size);
	if (err)
		goto out;
	err = read_params(&d, &pr);
	if (err)
		goto out;
	d.frames = malloc((size_t)(pr.nbase + pr.nframes + pr.nthreads + 1) * sizeof(*d.frames));
	d.parent = malloc(((size_t)pr.nnodes + 1) * sizeof(*d.parent));
	d.node_frame = malloc(((size_t)pr.nnodes + 1) * sizeof(*d.node_frame));
	d.path = malloc(MAX_DEPTH * sizeof(*d.path));
	d.repr = repr ? repr : codec_repr_cache_new();
	d.repr_owned = !repr;
	o = malloc(sizeof(*o));
	if (!d.frames || !d.parent || !d.node_frame || !d.path || !d.repr || !o) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = read_frames_and_tree(&d, &pr);
	if (err)
		goto out;
	out_start(o, write, ctx, d.size);
	started = 1;
	err = write_decoded(&d, o, &pr);
	if (err)
		goto out;
	if (o->total != d.size) {
		err = corrupt("it rebuilds fewer bytes than the object has");
		goto out;
	}
out:
	if (started) {
		int ferr = out_finish(o, err != 0);

		if (!err)
			err = ferr;
	}
	free(o);
	codec_decoded_release(&d);
	return err;
}

