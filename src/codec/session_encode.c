/*
 * The session codec's encoder (docs/codec.md is the format; session_codec.h
 * the contract; codec_internal.h how the parts fit).
 *
 * Encoding reads the file once, in a sliding buffer. A small scanner walks
 * the top-level JSON object until the key `frame_records` followed by
 * `: [`; everything up to there is the prefix, kept verbatim. The records
 * must then be written exactly as Python's json.dump writes them
 * (`[["frame", "frame"], 0.001]` joined by `, `): any other spelling makes
 * the encoder decline. Frame strings are kept as their raw JSON text
 * (escapes included), so no escape is ever decoded or re-encoded: that
 * removes the escape traps altogether. Everything after the closing `]`
 * is the suffix, verbatim.
 *
 * Per record: frames equal to the previous record's at the same depth are
 * settled by a memcmp; the others by a hash look-up in the frame table,
 * then one look-up of (parent node, frame) in the call tree. The record
 * becomes its end node. Its time is parsed; it is modelled only when
 * Python's repr() of the double gives back its text exactly.
 *
 * Times: pyinstrument subtracts two perf_counter readings, each a double
 * made from whole nanoseconds (ns / 1e9). Both readings lie on the grid of
 * the clock's magnitude (2^-s seconds), and the difference is exact, so
 * every time is an integer m of grid steps. m is stored as the nearest
 * whole number of nanoseconds n (jitter around the interval: a few bits)
 * plus the residual m - round(n * 2^s / 1e9), small (-2..2 on real runs, at
 * most -127..127, else the time is text; docs/codec.md). The
 * grid is the finest one the run's times are on; a time off the grid, or
 * any other clock, is kept as text.
 */
#define _GNU_SOURCE /* qsort_r */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_useBlockSplitter (set_stream_zstd), before codec_internal.h's zstd.h */
#include "codec/codec_internal.h"
#include "results/error.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "codec/rc_model.h"
#include "codec/rc_stacks.h"
#include "codec/varint.h"
#include "util/array.h"

/* ---- encoder ------------------------------------------------------------ */

/* Give back the pages both the hash and the parse are past. Called with mu held. */
static void hasher_drop(struct hasher *z)
{
	size_t lo = (z->hashed < z->parsed ? (size_t)z->hashed : z->parsed) & ~(z->page - 1);

	if (lo >= z->dropped + DROP_STEP) {
		madvise((void *)(z->map + z->dropped), lo - z->dropped, MADV_DONTNEED);
		z->dropped = lo;
	}
}

static void *hasher_run(void *arg)
{
	struct hasher *z = arg;
	size_t pos = 0;

	while (pos < z->len) {
		size_t n = z->len - pos < HASH_STEP ? z->len - pos : HASH_STEP;
		int stop;

		pthread_mutex_lock(&z->mu);
		while (!z->stop && pos > z->parsed + HASH_AHEAD)
			pthread_cond_wait(&z->cv, &z->mu);
		stop = z->stop;
		pthread_mutex_unlock(&z->mu);
		if (stop)
			break;
		rs_sha256_update(z->h, z->map + pos, n);
		pos += n;
		pthread_mutex_lock(&z->mu);
		z->hashed = pos;
		hasher_drop(z);
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
	}
	return NULL;
}

/* Hash the mapped `map`/`len` on a thread (or, without one, in hasher_finish). */
static void hasher_start(struct hasher *z, const unsigned char *map, size_t len)
{
	z->map = map;
	z->len = len;
	z->page = (size_t)sysconf(_SC_PAGESIZE);
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv, NULL);
	z->sync = 1;
	z->started = pthread_create(&z->thread, NULL, hasher_run, z) == 0;
}

/* The parse is at `pos` of the mapped file: wait if the hash is too far behind. */
static void hasher_parsed(struct hasher *z, size_t pos)
{
	if (!z->sync)
		return;
	pthread_mutex_lock(&z->mu);
	z->parsed = pos;
	hasher_drop(z);
	pthread_cond_broadcast(&z->cv);
	while (z->started && !z->stop && z->parsed > z->hashed + HASH_AHEAD)
		pthread_cond_wait(&z->cv, &z->mu);
	pthread_mutex_unlock(&z->mu);
}

/* The parse is done with every page: the hash may run to the end. */
static void hasher_parse_done(struct hasher *z)
{
	if (!z->sync)
		return;
	pthread_mutex_lock(&z->mu);
	z->parsed = z->len;
	hasher_drop(z);
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
}

/* Stop the thread (`abandon`) or let it finish, and wait for it. */
static void hasher_join(struct hasher *z, int abandon)
{
	if (!z->sync)
		return;
	pthread_mutex_lock(&z->mu);
	z->parsed = z->len; /* the parse is done with every page */
	z->stop = abandon;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	if (z->started)
		pthread_join(z->thread, NULL);
	else if (!abandon)
		hasher_run(z);
	z->started = 0;
	pthread_mutex_destroy(&z->mu);
	pthread_cond_destroy(&z->cv);
	z->sync = 0;
}


int codec_decline(struct enc *e, const char *why)
{
	snprintf(e->stats->declined, sizeof(e->stats->declined), "%s", why);
	return DECLINE;
}

static uint32_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < n && n >= 8) {
		/* the last 8 bytes, overlapping: one step instead of one per byte
		   (the byte loop was a quarter of the hash; placement only, the
		   frame numbers are given in the order frames first come) */
		uint64_t w;

		memcpy(&w, p + n - 8, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		i = n;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

/* Read more of the file behind the unread bytes; 0 with e->eof at the end. */
static int refill(struct enc *e)
{
	ssize_t n;

	if (e->mapped)
		return 0; /* all of it is there */
	if (e->pos) {
		memmove(e->buf, e->buf + e->pos, e->len - e->pos);
		e->len -= e->pos;
		e->pos = 0;
	}
	while (e->len < READ_BLOCK && !e->eof) {
		n = read(e->fd, e->buf + e->len, READ_BLOCK - e->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return rs_error_errno(RS_EGENERIC, "cannot read the session");
		if (n == 0)
			e->eof = 1;
		rs_sha256_update(e->hz.h, e->buf + e->len, (size_t)n); /* the bytes the parse reads */
		e->hz.hashed += (uint64_t)n;
		e->len += (size_t)n;
	}
	return 0;
}

/* A JSON string being scanned for the key frame_records (keylen -1: not it). */
struct key_scan {
	int in_str, esc, keylen;
	char key[16];
};

/* One byte inside a string: 1 when it closes the string and that string was frame_records. */
static inline int key_scan_char(struct key_scan *k, unsigned char c)
{
	if (k->esc) {
		k->esc = 0;
		k->keylen = -1;
	} else if (c == '\\') {
		k->esc = 1;
	} else if (c == '"') {
		k->in_str = 0;
		return k->keylen == 13 && !memcmp(k->key, "frame_records", 13);
	} else if (k->keylen >= 0 && k->keylen < (int)sizeof(k->key)) {
		k->key[k->keylen++] = (char)c;
	} else {
		k->keylen = -1;
	}
	return 0;
}

/*
 * The prefix: bytes up to and including the `[` that opens the top-level
 * key frame_records, written `"frame_records": [`. A tiny JSON scanner
 * keeps track of strings and nesting so that the same text inside a
 * string or deeper down does not count.
 */
static int read_prefix(struct enc *e)
{
	static const char want_text[] = ": [";
	struct key_scan k = { 0, 0, 0, { 0 } };
	int depth = 0, want = 0, started = 0, err;

	for (;;) {
		if (e->pos == e->len) {
			if (e->eof)
				return codec_decline(e, "no top-level frame_records");
			err = refill(e);
			if (err)
				return err;
			continue;
		}
		unsigned char c = e->buf[e->pos++];

		if (rs_buf_putc(&e->prefix, (char)c))
			return codec_decline(e, "the text before frame_records is too long");
		if (!started) {
			if (c != '{')
				return codec_decline(e, "not a JSON object");
			started = 1;
			depth = 1;
			continue;
		}
		if (k.in_str) {
			if (key_scan_char(&k, c) && depth == 1)
				want = 1;
			continue;
		}
		if (want) {
			if (c == (unsigned char)want_text[want - 1]) {
				if (++want == 4)
					return 0;
				continue;
			}
			want = 0;
		}
		if (c == '"') {
			k.in_str = 1;
			k.keylen = 0;
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth <= 0)
				return codec_decline(e, "no top-level frame_records");
		}
	}
}

static int frame_table_grow(struct enc *e)
{
	size_t size = e->ftab ? (e->ftab_mask + 1) * 2 : 8192, i;
	uint32_t *t = codec_zalloc(size, sizeof(*t));

	if (!t)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < e->nframes; i++) {
		size_t h = e->frames[i].hash & (size - 1);

		while (t[h])
			h = (h + 1) & (size - 1);
		t[h] = (uint32_t)i + 1;
	}
	free(e->ftab);
	e->ftab = t;
	e->ftab_mask = size - 1;
	return 0;
}

static int intern_frame(struct enc *e, const unsigned char *p, size_t n, int depth0, uint32_t *id)
{
	uint32_t h = hash_bytes(p, n);
	size_t at;
	int err;

	at = h & e->ftab_mask;
	while (e->ftab[at]) {
		const struct frame_entry *f = &e->frames[e->ftab[at] - 1];

		if (f->hash == h && f->len == n && !memcmp(e->arena.ptr + f->off, p, n)) {
			*id = e->ftab[at] - 1;
			e->frames[*id].used = 1;
			return 0;
		}
		at = (at + 1) & e->ftab_mask;
	}
	if (e->nframes >= MAX_FRAMES)
		return codec_decline(e, "too many distinct frames");
	err = rs_array_grow(&e->frames, &e->aframes, (size_t)e->nframes + 1, sizeof(*e->frames), 4096);
	if (err)
		return err;
	e->frames[e->nframes].off = e->arena.len;
	e->frames[e->nframes].len = (uint32_t)n;
	e->frames[e->nframes].hash = h;
	e->frames[e->nframes].thread = (uint8_t)depth0;
	e->frames[e->nframes].used = 1;
	if (rs_buf_put(&e->arena, p, n))
		return codec_decline(e, "the frame strings are too long");
	e->ftab[at] = e->nframes + 1;
	*id = e->nframes++;
	if ((size_t)e->nframes * 2 > e->ftab_mask) {
		err = frame_table_grow(e);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Take the base an earlier container used (BASE_CACHE_MAGIC's layout):
 * its dictionary's frames become frames 0..nbase-1, its stacks those
 * this run's are coded after. A base that is not that layout, whose
 * dictionary is not a list of distinct texts or whose stacks do not read
 * as the stacks of that dictionary (a damaged cache file, or one an
 * older build wrote: version 4's held the dictionary alone, versions 5
 * and 6's the base tree) is dropped: it only costs sharing.
 */
static void load_base(struct enc *e, const unsigned char *p, size_t len)
{
	struct cursor c = { p, len, 0 };
	uint64_t l, dict_len = 0, a, t, n;
	uint32_t id, i;
	int ok = len >= BASE_CACHE_HEADER && !memcmp(p, BASE_CACHE_MAGIC, 8);

	if (ok) {
		dict_len = get_le64(p + 8);
		ok = dict_len <= len - BASE_CACHE_HEADER;
	}
	if (ok) {
		c.p = p + BASE_CACHE_HEADER;
		c.len = (size_t)dict_len;
	}
	while (ok && c.pos < c.len) {
		if (get_varint(&c, &l) || l > c.len - c.pos || l > UINT32_MAX ||
		    intern_frame(e, c.p + c.pos, (size_t)l, 0, &id) || id + 1 != e->nframes)
			ok = 0;
		c.pos += ok ? (size_t)l : 0;
	}
	if (ok) {
		const unsigned char *stacks = p + BASE_CACHE_HEADER + dict_len;
		size_t stacks_len = len - BASE_CACHE_HEADER - (size_t)dict_len;

		ok = !rs_stacks_check(stacks, stacks_len, &a, &t, &n, &e->base_levels) && a == e->nframes &&
		     !rs_buf_put(&e->base_stacks, stacks, stacks_len);
	}
	if (!ok) {
		rs_buf_clear(&e->base_stacks);
		e->nframes = 0;
		rs_buf_clear(&e->arena);
		memset(e->ftab, 0, (e->ftab_mask + 1) * sizeof(*e->ftab));
		e->stats->declined[0] = '\0';
		rs_error_clear();
	}
	for (i = 0; i < e->nframes; i++)
		e->frames[i].used = 0;
	e->nbase = e->nframes;
}

static int node_table_grow(struct enc *e)
{
	size_t size = e->ntab ? (e->ntab_mask + 1) * 2 : 65536, i;
	struct node_slot *t = codec_zalloc(size, sizeof(*t));

	if (!t)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; e->ntab && i <= e->ntab_mask; i++) {
		size_t h;

		if (!e->ntab[i].node1)
			continue;
		h = e->ntab[i].path & (size - 1);
		while (t[h].node1)
			h = (h + 1) & (size - 1);
		t[h] = e->ntab[i];
	}
	free(e->ntab);
	e->ntab = t;
	e->ntab_mask = size - 1;
	return 0;
}

/*
 * The call tree's table is placed by a hash of a node's path (its frames
 * from the root), not of its (parent, frame) key: a record's new frames
 * then give the slots of all their nodes before any is looked up, and
 * record_stack fetches those slots together. Placed by the key, each
 * look-up waited for the one before (the parent), and the table (4 MB for
 * the generated 224 MB session) missed the cache each time: 85 ms of the
 * parse's 0.25 s on the calling thread. Node numbers are given in the
 * order the records first reach them, whatever the slots.
 */
#define PATH_ROOT 0x2545F491u

static inline uint32_t path_hash(uint32_t parent_path, uint32_t frame)
{
	return (uint32_t)((((uint64_t)parent_path << 32 | frame) * 0x9E3779B97F4A7C15ull) >> 32);
}

static int child_node(struct enc *e, uint32_t parent, uint32_t frame, uint32_t path, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	size_t at = path & e->ntab_mask;
	int err;

	while (e->ntab[at].node1) {
		if (e->ntab[at].key == key) {
			*out = e->ntab[at].node1 - 1;
			return 0;
		}
		at = (at + 1) & e->ntab_mask;
	}
	if (e->nnodes >= MAX_NODES)
		return codec_decline(e, "the call tree is too large");
	err = rs_array_grow(&e->node_parent, &e->anode_parent, (size_t)e->nnodes + 1,
			    sizeof(*e->node_parent), 65536);
	if (err)
		return err;
	err = rs_array_grow(&e->node_frame, &e->anode_frame, (size_t)e->nnodes + 1,
			    sizeof(*e->node_frame), 65536);
	if (err)
		return err;
	e->node_parent[e->nnodes] = parent;
	e->node_frame[e->nnodes] = frame;
	e->ntab[at].key = key;
	e->ntab[at].node1 = e->nnodes + 1;
	e->ntab[at].path = path;
	*out = e->nnodes++;
	if ((size_t)e->nnodes * 2 > e->ntab_mask) {
		err = node_table_grow(e);
		if (err)
			return err;
	}
	return 0;
}

/* A JSON string at p[0] == '"': its end (the closing quote), or NULL when not in the buffer. */
static const unsigned char *string_end(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *q = p + 1;

	for (;;) {
		const unsigned char *bs;

		q = memchr(q, '"', (size_t)(end - q));
		if (!q)
			return NULL;
		/* escaped when preceded by an odd run of backslashes */
		for (bs = q; bs > p + 1 && bs[-1] == '\\'; bs--)
			;
		if (((q - bs) & 1) == 0)
			return q;
		q++;
	}
}

/* The characters a time may be written with (a table: strchr per character cost 2% of the encode). */
static const unsigned char number_char[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['.'] = 1, ['-'] = 1, ['+'] = 1, ['e'] = 1, ['E'] = 1,
};

/* strtod of the `n` (at most MAX_NUMBER) characters at p. */
static double number_value(const unsigned char *p, size_t n)
{
	char num[MAX_NUMBER + 1];

	memcpy(num, p, n);
	num[n] = '\0';
	return strtod(num, NULL);
}

/* 10^0..10^27, each exact in x87's 64-bit mantissa (5^27 < 2^64) */
static const long double pow10_ld[28] = {
	1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L,
	1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L,
	1e26L, 1e27L,
};

/*
 * The value of the `n` number characters at p, fast: the digits as one
 * integer m (at most 19 of them) and a decimal exponent of at most 27
 * either way give m / 10^k (or m * 10^k) in long double, rounded to a
 * double. That is strtod's value but for a double rounding (rare), so the
 * result is a guess (*exact 0) that commit_record checks: when Python's
 * repr() of the guess is the text, the guess is strtod's value, as repr()
 * gives the shortest text that strtod takes back to the same double
 * (codec_py_repr checks each candidate with strtod). Anything else (more
 * digits, a larger exponent, a spelling strtod would read otherwise) is
 * strtod's (*exact 1). strtod on every time was 137M instructions of
 * the tokenizer thread on the generated 224 MB session, the guess 58M.
 */
static double number_guess(const unsigned char *p, size_t n, int *exact)
{
	uint64_t m = 0;
	size_t i = 0;
	int neg = 0, digits = 0, seen = 0, frac = 0, ex = 0, eneg = 0, e10;
	long double v;

	*exact = 1;
	if (i < n && p[i] == '-') {
		neg = 1;
		i++;
	}
	for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, seen++) {
		digits += m || p[i] != '0';
		m = m * 10 + (uint64_t)(p[i] - '0');
	}
	if (i < n && p[i] == '.') {
		for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, seen++, frac++) {
			digits += m || p[i] != '0';
			m = m * 10 + (uint64_t)(p[i] - '0');
		}
	}
	if (seen && i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t e0;

		i++;
		if (i < n && (p[i] == '-' || p[i] == '+'))
			eneg = p[i++] == '-';
		for (e0 = i; i < n && i - e0 < 3 && p[i] >= '0' && p[i] <= '9'; i++)
			ex = ex * 10 + (p[i] - '0');
		if (i == e0)
			seen = 0;
	}
	e10 = (eneg ? -ex : ex) - frac;
	if (!seen || i != n || digits > 19 || e10 < -27 || e10 > 27)
		return number_value(p, n);
	v = e10 < 0 ? (long double)m / pow10_ld[-e10] : (long double)m * pow10_ld[e10];
	*exact = 0;
	return neg ? -(double)v : (double)v;
}

struct tok {
	size_t depth;
	size_t num_off, numlen;
	double time;  /* the number's value, or a guess at it (exact 0): see number_guess */
	int exact;
	size_t next;
	int last;
	const char *why;
};

/* The tokenizer's refusal: why, and 1. */
static int tok_bad(struct tok *t, const char *why)
{
	t->why = why;
	return 1;
}

/*
 * A record's frames from *p (after `[[`, not at `]`) to after the `]`
 * that ends them: their spans in span_off/span_len, their count in
 * t->depth. Returns as tokenize_record does.
 */
static inline int tokenize_frames(const unsigned char *buf, const unsigned char **at,
				  const unsigned char *end, size_t *span_off, uint32_t *span_len,
				  struct tok *t)
{
	const unsigned char *p = *at, *q;

	for (;;) {
		if (end - p < 1)
			return 2;
		if (*p != '"')
			return tok_bad(t, "a frame is not a string");
		q = string_end(p, end);
		if (!q)
			return 2;
		if (t->depth >= MAX_DEPTH || q - p - 1 > (ptrdiff_t)UINT32_MAX)
			return tok_bad(t, "a stack is too deep");
		span_off[t->depth] = (size_t)(p + 1 - buf);
		span_len[t->depth] = (uint32_t)(q - p - 1);
		t->depth++;
		p = q + 1;
		if (end - p < 1)
			return 2;
		if (*p == ']') {
			*at = p + 1;
			return 0;
		}
		if (end - p < 2)
			return 2;
		if (p[0] != ',' || p[1] != ' ')
			return tok_bad(t, "frames are not separated by ', '");
		p += 2;
	}
}

/*
 * The shape of one record at buf[pos]: `[[` frames `], ` number `]` then
 * `, ` or `]` (the end of frame_records). Fills the frame spans (offsets
 * into buf), the number's offset and length, the position after it and
 * `last`. Returns 0, 1 with `why` set (not json.dump's spelling: decline)
 * or 2 when the record is not all in buf[..len) yet. Touches nothing
 * else: the tokenizer thread runs it ahead of the commit.
 */
static int tokenize_record(const unsigned char *buf, size_t pos, size_t len, size_t *span_off,
			   uint32_t *span_len, struct tok *t)
{
	const unsigned char *p = buf + pos, *end = buf + len;
	int err;

	t->depth = 0;
	t->numlen = 0;
	if (end - p < 3)
		return 2;
	if (p[0] != '[' || p[1] != '[')
		return tok_bad(t, "a frame record is not written as json.dump writes it");
	p += 2;
	if (*p == ']') {
		p++;
	} else {
		err = tokenize_frames(buf, &p, end, span_off, span_len, t);
		if (err)
			return err;
	}
	if (end - p < 2)
		return 2;
	if (p[0] != ',' || p[1] != ' ')
		return tok_bad(t, "a record's time is not after ', '");
	p += 2;
	t->num_off = (size_t)(p - buf);
	for (;;) {
		if (end - p < 1)
			return 2;
		if (*p == ']')
			break;
		if (!number_char[*p] || t->numlen >= MAX_NUMBER)
			return tok_bad(t, "a record's time is not a plain number");
		t->numlen++;
		p++;
	}
	p++;
	if (end - p < 1)
		return 2;
	if (*p == ']') {
		t->last = 1;
		p++;
	} else {
		if (end - p < 2)
			return 2;
		if (p[0] != ',' || p[1] != ' ')
			return tok_bad(t, "records are not separated by ', '");
		t->last = 0;
		p += 2;
	}
	if (!t->numlen)
		return tok_bad(t, "a record has no time");
	t->next = (size_t)(p - buf);
	t->time = number_guess(buf + t->num_off, t->numlen, &t->exact);
	return 0;
}

/*
 * A record's stack into the frame table and the tree: *node its end node.
 * The frames it shares with the record before are known without a lookup.
 */
static inline int record_stack(struct enc *e, const unsigned char *buf, const size_t *span_off,
			       const uint32_t *span_len, size_t depth, uint32_t *node)
{
	uint32_t path;
	size_t i, first;
	int err;

	for (i = 0; i < depth && i < e->prev_depth; i++) {
		const struct frame_entry *pf = &e->frames[e->prev_frame[i]];

		if (pf->len != span_len[i] || memcmp(e->arena.ptr + pf->off, buf + span_off[i], span_len[i]))
			break;
		*node = e->prev_node[i];
	}
	/* the frames after those the record shares with the one before, and the slots of their nodes */
	first = i;
	path = first ? e->prev_path[first - 1] : PATH_ROOT;
	for (; i < depth; i++) {
		err = intern_frame(e, buf + span_off[i], span_len[i], i == 0, &e->prev_frame[i]);
		if (err)
			return err;
		path = path_hash(path, e->prev_frame[i]);
		e->prev_path[i] = path;
		__builtin_prefetch(&e->ntab[path & e->ntab_mask]);
	}
	for (i = first; i < depth; i++) {
		err = child_node(e, *node, e->prev_frame[i], e->prev_path[i], node);
		if (err)
			return err;
		e->prev_node[i] = *node;
	}
	e->prev_depth = depth;
	return 0;
}

/* Room for one more record in each of its three columns (doubling from 65536). */
static int records_grow(struct enc *e)
{
	size_t need = (size_t)e->nrecords + 1;
	int err;

	err = rs_array_grow(&e->rec_node, &e->arec_node, need, sizeof(*e->rec_node), 65536);
	if (err)
		return err;
	err = rs_array_grow(&e->rec_time, &e->arec_time, need, sizeof(*e->rec_time), 65536);
	if (err)
		return err;
	return rs_array_grow(&e->rec_verbatim, &e->arec_verbatim, need, sizeof(*e->rec_verbatim),
			     65536);
}

/* Take one tokenized record into the frame table, the tree and the times. */
static int commit_record(struct enc *e, const unsigned char *buf, const size_t *span_off,
			 const uint32_t *span_len, const struct tok *tk)
{
	size_t numlen = tk->numlen;
	uint32_t node = 0;
	int err, same;
	char num[MAX_NUMBER + 1], again[64];
	double t;

	memcpy(num, buf + tk->num_off, numlen);
	num[numlen] = '\0';
	err = record_stack(e, buf, span_off, span_len, tk->depth, &node);
	if (err)
		return err;
	if (e->nrecords >= MAX_RECORDS)
		return codec_decline(e, "too many records");
	err = records_grow(e);
	if (err)
		return err;
	t = tk->time;
	same = codec_py_repr_cached(e->repr, t, again) == numlen && !memcmp(again, num, numlen);
	if (!same && !tk->exact) {
		/* a wrong guess, or a text repr() does not give: strtod's value decides */
		t = number_value(buf + tk->num_off, numlen);
		same = codec_py_repr_cached(e->repr, t, again) == numlen && !memcmp(again, num, numlen);
	}
	e->rec_node[e->nrecords] = node;
	e->rec_time[e->nrecords] = t;
	e->rec_verbatim[e->nrecords] = 0;
	if (!same) {
		/* Not the formatter's text: keep it as it is. */
		e->rec_verbatim[e->nrecords] = 1;
		if (put_varint(&e->esc_text, numlen) || rs_buf_put(&e->esc_text, num, numlen))
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	e->nrecords++;
	return 0;
}

/*
 * With the file mapped, a tokenizer thread finds the records' shapes
 * (string ends, separators: half the parse) ahead of the thread that
 * commits them, in batches handed over through a ring of two. Pages
 * behind the commit are dropped as it goes, so memory stays bounded.
 */
#define BATCH 2048

struct batch {
	struct tok tok[BATCH];
	size_t *span_off;
	uint32_t *span_len;
	size_t nspans, aspan_off, aspan_len; /* capacities: rs_array_grow's */
	size_t n;
	int status;   /* 0, or tokenize_record's 1 (why in the last tok) / 2 (truncated) */
	int full;
};

struct tokenizer {
	const unsigned char *map;
	size_t len, start;
	struct batch b[2];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;     /* the committer gave up */
	int oom;
};

static void *tokenizer_run(void *arg)
{
	struct tokenizer *z = arg;
	size_t pos = z->start;
	int k = 0, done = 0;

	while (!done) {
		struct batch *b = &z->b[k];

		pthread_mutex_lock(&z->mu);
		while (b->full && !z->stop)
			pthread_cond_wait(&z->cv, &z->mu);
		pthread_mutex_unlock(&z->mu);
		if (z->stop)
			break;
		b->n = 0;
		b->nspans = 0;
		b->status = 0;
		while (b->n < BATCH) {
			struct tok *t = &b->tok[b->n];
			int r;

			/* room for a record as deep as any may be; a failure
			   is told through z->oom (this thread's message is lost) */
			if (rs_array_grow(&b->span_off, &b->aspan_off, b->nspans + MAX_DEPTH,
					  sizeof(*b->span_off), MAX_DEPTH) ||
			    rs_array_grow(&b->span_len, &b->aspan_len, b->nspans + MAX_DEPTH,
					  sizeof(*b->span_len), MAX_DEPTH)) {
				z->oom = 1;
				b->status = 2;
				done = 1;
				break;
			}
			r = tokenize_record(z->map, pos, z->len, b->span_off + b->nspans,
					    b->span_len + b->nspans, t);
			if (r) {
				b->status = r;
				done = 1;
				break;
			}
			b->nspans += t->depth;
			b->n++;
			pos = t->next;
			if (t->last) {
				done = 1;
				break;
			}
		}
		pthread_mutex_lock(&z->mu);
		b->full = 1;
		pthread_cond_broadcast(&z->cv);
		pthread_mutex_unlock(&z->mu);
		k ^= 1;
	}
	return NULL;
}

/*
 * Commit a batch the tokenizer filled; *ended once the last record is in.
 * When the batch ends short of that, its status (or oom) says why.
 */
static inline int commit_batch(struct enc *e, const struct batch *b, int oom, int *ended)
{
	size_t i, sp = 0;
	int err = 0;

	for (i = 0; !err && i < b->n; i++) {
		if (i + 2 < b->n) /* see write_records */
			codec_repr_prefetch(e->repr, b->tok[i + 2].time);
		err = commit_record(e, e->buf, b->span_off + sp, b->span_len + sp, &b->tok[i]);
		sp += b->tok[i].depth;
		e->pos = b->tok[i].next;
		*ended = b->tok[i].last;
	}
	if (!err && !*ended) {
		if (oom)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		else if (b->status == 1)
			err = codec_decline(e, b->tok[b->n].why);
		else if (b->status == 2)
			err = codec_decline(e, "the session ends inside frame_records");
	}
	return err;
}

static int read_records_mapped(struct enc *e)
{
	struct tokenizer z;
	pthread_t th;
	size_t reported = 0;
	int k = 0, err = 0, ended = 0;

	memset(&z, 0, sizeof(z));
	z.map = e->buf;
	z.len = e->len;
	z.start = e->pos;
	pthread_mutex_init(&z.mu, NULL);
	pthread_cond_init(&z.cv, NULL);
	if (pthread_create(&th, NULL, tokenizer_run, &z) != 0) {
		pthread_mutex_destroy(&z.mu);
		pthread_cond_destroy(&z.cv);
		return 3; /* no thread: the caller parses in line */
	}
	while (!err && !ended) {
		struct batch *b = &z.b[k];

		pthread_mutex_lock(&z.mu);
		while (!b->full)
			pthread_cond_wait(&z.cv, &z.mu);
		pthread_mutex_unlock(&z.mu);
		err = commit_batch(e, b, z.oom, &ended);
		/* The committed pages are done with (once hashed): out of memory, not of the file. */
		if (e->pos - reported >= DROP_STEP) {
			hasher_parsed(&e->hz, e->pos);
			reported = e->pos;
		}
		pthread_mutex_lock(&z.mu);
		b->full = 0;
		if (err || ended)
			z.stop = 1;
		pthread_cond_broadcast(&z.cv);
		pthread_mutex_unlock(&z.mu);
		k ^= 1;
	}
	pthread_join(th, NULL);
	for (k = 0; k < 2; k++) {
		free(z.b[k].span_off);
		free(z.b[k].span_len);
	}
	pthread_mutex_destroy(&z.mu);
	pthread_cond_destroy(&z.cv);
	return err;
}

static int read_records(struct enc *e)
{
	struct tok t;
	int err;

	if (e->pos == e->len) {
		err = refill(e);
		if (err)
			return err;
	}
	if (e->pos < e->len && e->buf[e->pos] == ']') {
		e->pos++; /* an empty frame_records */
		return 0;
	}
	if (e->mapped) {
		err = read_records_mapped(e);
		if (err != 3)
			return err;
	}
	for (;;) {
		err = tokenize_record(e->buf, e->pos, e->len, e->span_off, e->span_len, &t);
		if (err == 1)
			return codec_decline(e, t.why);
		if (err == 2) {
			size_t before = e->len - e->pos;

			if (e->eof)
				return codec_decline(e, "the session ends inside frame_records");
			err = refill(e);
			if (err)
				return err;
			if (e->len - e->pos == before && before == READ_BLOCK)
				return codec_decline(e, "a frame record is longer than the read buffer");
			continue;
		}
		err = commit_record(e, e->buf, e->span_off, e->span_len, &t);
		if (err)
			return err;
		e->pos = t.next;
		if (t.last)
			return 0;
	}
}

static int read_suffix(struct enc *e)
{
	int err;

	for (;;) {
		if (rs_buf_put(&e->suffix, e->buf + e->pos, e->len - e->pos))
			return codec_decline(e, "the text after frame_records is too long");
		e->pos = e->len;
		if (e->eof)
			return 0;
		err = refill(e);
		if (err)
			return err;
	}
}

#define Q_RANGE 1100

/*
 * The time model: `t` is m steps of 2^-s seconds, m = round(n * 2^s / 1e9)
 * + res for n whole nanoseconds. Returns res + 128 (1..255) and sets *n,
 * or 0 when t does not fit (it is then kept as text).
 */
/*
 * 2^k, made from its bits: t * pow2(k) is ldexp(t, k), exactly, for a
 * finite t whose product neither overflows nor leaves the normal range
 * (the callers scale times up, below 2^53); ldexp's call was a third of
 * time_code, which choose_grid, time_ref and put_times run per record.
 */
static inline double pow2(int k)
{
	uint64_t u;
	double d;

	if (k < -1022 || k > 1023)
		return ldexp(1.0, k);
	u = (uint64_t)(k + 1023) << 52;
	memcpy(&d, &u, sizeof(d));
	return d;
}

static int time_code(double t, int s, int64_t *n)
{
	double md;
	int64_t m, res;

	if (!s || !(t > 0) || t >= pow2(53 - s))
		return 0;
	md = t * pow2(s);
	if (md != floor(md))
		return 0;
	m = (int64_t)md;
	*n = ns_of_grid(m, s);
	res = m - grid_of_ns(*n, s);
	if (*n > (INT64_C(1) << 50) || res < -127 || res > 127)
		return 0;
	return (int)res + 128;
}

/* Lowest power of two `t` is a multiple of: t = odd * 2^q. */
static int low_exponent(double t)
{
	int ex;
	double f = frexp(t, &ex);
	uint64_t mant = (uint64_t)(f * pow2(53));

	return ex - 53 + __builtin_ctzll(mant);
}

static int cmp_frames(const void *a, const void *b, void *arg)
{
	const struct enc *sort_ctx = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct frame_entry *fa = &sort_ctx->frames[ia];
	const struct frame_entry *fb = &sort_ctx->frames[ib];
	size_t n = fa->len < fb->len ? fa->len : fb->len;
	int c;

	if (fa->cls != fb->cls)
		return fa->cls - fb->cls;
	if (fa->cls == FRAME_BASE && !sort_ctx->rebase)
		return ia < ib ? -1 : ia > ib; /* the base keeps its order */
	c = memcmp(sort_ctx->arena.ptr + fa->off, sort_ctx->arena.ptr + fb->off, n);
	if (c)
		return c;
	return fa->len < fb->len ? -1 : fa->len > fb->len;
}

/* ---- the streams -------------------------------------------------------- */

void codec_streams_init(struct streams *st)
{
	int k;

	memset(st, 0, sizeof(*st));
	for (k = 0; k < SEC_SLOTS; k++)
		rs_buf_init(&st->sec[k], RS_CODEC_MAX_STREAMS);
}

void codec_streams_release(struct streams *st)
{
	int k;

	for (k = 0; k < SEC_SLOTS; k++)
		rs_buf_release(&st->sec[k]);
	free(st->rank);
}

/*
 * The dictionary's classes. The base (shared by runs: the first block, a
 * chunk of its own) keeps the given order; frames new to it follow,
 * sorted, then the thread frames, which change every run. When too many
 * frames are new, or the base's stacks and this run's together would
 * pass codec_stacks_budget, this run's frames, sorted, become the new
 * base.
 */
static void classify_frames(struct enc *e)
{
	uint32_t nnew = 0, i;

	for (i = e->nbase; i < e->nframes; i++)
		nnew += !e->frames[i].thread;
	e->rebase = e->nbase == 0 || (uint64_t)nnew * 4 > e->nbase || e->force_rebase;
	for (i = 0; i < e->nframes; i++) {
		struct frame_entry *f = &e->frames[i];

		if (f->thread)
			f->cls = FRAME_THREAD;
		else if (e->rebase)
			f->cls = f->used ? FRAME_BASE : FRAME_DROPPED;
		else
			f->cls = i < e->nbase ? FRAME_BASE : FRAME_NEW;
	}
}

/* The base, dict and threads streams, and every frame's rank. */
static int put_dictionary(struct enc *e, struct streams *st)
{
	uint32_t *order, i;
	int err = 0;

	order = malloc(((size_t)e->nframes + 1) * sizeof(*order));
	st->rank = malloc(((size_t)e->nframes + 1) * sizeof(*st->rank));
	if (!order || !st->rank) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	classify_frames(e);
	for (i = 0; i < e->nframes; i++)
		order[i] = i;
	qsort_r(order, e->nframes, sizeof(*order), cmp_frames, e);
	for (i = 0; i < e->nframes; i++) {
		const struct frame_entry *f = &e->frames[order[i]];
		struct rs_buf *b = f->cls == FRAME_BASE ? &st->sec[SEC_BASE]
				   : f->cls == FRAME_NEW ? &st->sec[SEC_DICT] : &st->sec[SEC_THREADS];

		st->rank[order[i]] = i;
		if (f->cls == FRAME_DROPPED)
			continue;
		st->nbase += f->cls == FRAME_BASE;
		st->ndict += f->cls == FRAME_NEW;
		st->nthreads += f->cls == FRAME_THREAD;
		err = put_varint(b, f->len);
		if (err)
			goto out;
		err = rs_buf_put(b, e->arena.ptr + f->off, f->len);
		if (err)
			goto out;
	}
out:
	free(order);
	return err;
}

/*
 * The stacks stream (version 7; rc_stacks.h has its syntax): where the
 * thread frames start and their count, then per record the frames it
 * keeps from the previous record's stack and the ranks of the rest, from
 * the root down. The parse's call tree gives both: the frames two
 * records share are the path to the deepest node they share, and a
 * node's path is its frames. A run that starts a new base writes its
 * stacks as the base's (the base block's second stream), and its own
 * stream stays empty; a run that keeps the base is coded after the
 * base's stacks, which the base block holds again as they were.
 */
static int put_stacks(struct enc *e, struct streams *st)
{
	struct rs_buf *out = e->rebase ? &st->sec[SEC_BASE_TREE] : &st->sec[SEC_SAMPLES];
	uint32_t *depth = NULL, *path = NULL, *up = NULL, plen = 0;
	uint64_t r;
	int err;

	if (!e->rebase) {
		err = rs_buf_put(&st->sec[SEC_BASE_TREE], e->base_stacks.ptr, e->base_stacks.len);
		if (err)
			return err;
	}
	depth = malloc(((size_t)e->nnodes + 1) * sizeof(*depth));
	path = malloc(((size_t)MAX_DEPTH + 1) * sizeof(*path));
	up = malloc(((size_t)MAX_DEPTH + 1) * sizeof(*up));
	if (!depth || !path || !up) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	/* a node is made after its parent: one pass gives every depth */
	depth[0] = 0;
	for (r = 1; r < e->nnodes; r++) {
		depth[r] = depth[e->node_parent[r]] + 1;
		if (depth[r] > MAX_DEPTH) {
			err = codec_decline(e, "the call tree is too deep");
			goto out;
		}
	}
	err = put_varint(out, (uint64_t)st->nbase + st->ndict);
	if (!err)
		err = put_varint(out, st->nthreads);
	e->stacks_levels = 0;
	for (r = 0; !err && r < e->nrecords; r++) {
		uint32_t u = e->rec_node[r], m = 0, k;

		/* up from the record's node to the deepest node the previous record's path holds */
		while (u && (depth[u] > plen || path[depth[u] - 1] != u)) {
			up[m++] = u;
			u = e->node_parent[u];
		}
		k = depth[u];
		err = put_varint(out, k);
		if (!err)
			err = put_varint(out, m);
		while (!err && m) {
			u = up[--m];
			path[depth[u] - 1] = u;
			err = put_varint(out, st->rank[e->node_frame[u]]);
		}
		plen = depth[e->rec_node[r]];
		e->stacks_levels += plen + 1;
	}
out:
	free(depth);
	free(path);
	free(up);
	return err;
}

/*
 * The clock's grid: the coarsest power of two that at least 3/4 of the
 * times are multiples of. On a real clock every time is on its grid
 * (half of them on twice the grid, a quarter on four times...); a few
 * strays (times written by something else) must not force a grid so fine
 * that nothing fits the nanosecond model.
 */
static int coarse_grid(const struct enc *e)
{
	uint64_t qcount[2 * Q_RANGE] = { 0 }, nq = 0, acc = 0, r;
	int k;

	for (r = 0; r < e->nrecords; r++) {
		double t = e->rec_time[r];

		if (!e->rec_verbatim[r] && t > 0 && isfinite(t)) {
			int q = low_exponent(t);

			if (q >= -Q_RANGE && q < Q_RANGE) {
				qcount[q + Q_RANGE]++;
				nq++;
			}
		}
	}
	for (k = 2 * Q_RANGE - 1; k >= 0 && nq; k--) {
		acc += qcount[k];
		if (acc * 4 >= nq * 3)
			return k - Q_RANGE < 0 && k - Q_RANGE >= -62 ? Q_RANGE - k : 0;
	}
	return 0;
}

/*
 * A run that crosses a power of two of the clock's reading has its
 * earlier times on a grid twice finer (or more): try a few finer grids
 * than the coarse one and keep the one that models the most times (the
 * coarser on a tie: smaller residuals).
 */
static int choose_grid(const struct enc *e)
{
	uint64_t best = 0, r;
	int s = coarse_grid(e), cand, best_s = s;
	int64_t n_unused;

	for (cand = s; s && cand <= s + 3 && cand <= 62; cand++) {
		uint64_t fit = 0;

		for (r = 0; r < e->nrecords; r++)
			fit += !e->rec_verbatim[r] && time_code(e->rec_time[r], cand, &n_unused) != 0;
		if (fit > best) {
			best = fit;
			best_s = cand;
		}
	}
	return best_s;
}

/* A time kept as text: the parse's (its varint and text, at *esc), or repr() of t. */
static int put_time_text(struct enc *e, struct rs_buf *tesc, int verbatim, double t,
			 const unsigned char **esc)
{
	char txt[64];
	const unsigned char *text = (const unsigned char *)txt;
	uint64_t l = 0;
	int sh = 0, err;

	if (verbatim) {
		do {
			l |= (uint64_t)(**esc & 0x7f) << sh;
			sh += 7;
		} while (*(*esc)++ & 0x80);
		text = *esc;
		*esc += l;
	} else {
		l = codec_py_repr(t, txt);
	}
	e->stats->times_verbatim++;
	err = put_varint(tesc, l);
	if (err)
		return err;
	return rs_buf_put(tesc, text, (size_t)l);
}

/*
 * The nanoseconds times are counted from: the median of the modelled
 * times, so that the values are the jitter around the run's interval,
 * small either way.
 */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The value a sort of v[0..n) would put at v[want]: a quickselect (the
 * median of 4.5M times: 3 ms, where qsort took 13 ms of the calling
 * thread, between the parse and the container). Pivots are medians of
 * three; a range that has not shrunk to a quarter after 64 rounds is
 * sorted instead, so no input makes it quadratic.
 */
static int64_t select_i64(int64_t *v, size_t n, size_t want)
{
	size_t lo = 0, hi = n - 1; /* want is in [lo, hi] */
	int rounds = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		int64_t a = v[lo], b = v[mid], c = v[hi], pivot, tmp;

		if (++rounds > 64 && hi - lo > n / 4) {
			qsort(v + lo, hi - lo + 1, sizeof(*v), cmp_i64);
			break;
		}
		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		/* Hoare's partition: v[lo..j] <= pivot <= v[i..hi] */
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			tmp = v[i];
			v[i] = v[j];
			v[j] = tmp;
			i++;
			j--;
		}
		if (want <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[want];
}

static int time_ref(struct enc *e, struct streams *st)
{
	int64_t *ns = malloc(((size_t)e->nrecords + 1) * sizeof(*ns));
	uint64_t r, k = 0;

	if (!ns)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (r = 0; r < e->nrecords; r++)
		if (!e->rec_verbatim[r] && time_code(e->rec_time[r], st->s, &ns[k]))
			k++;
	st->ref = k ? select_i64(ns, (size_t)k, (size_t)(k / 2)) : 0;
	free(ns);
	return 0;
}

/*
 * The time t (on the grid: time_code said so) against the clock's phase
 * *x: n is the nanoseconds that take the reading from *x to one exactly t
 * later, when there is such a reading (residual 0), else the nearest
 * whole nanoseconds and the residual that makes up the difference.
 * Returns residual + 128, or 0 (keep it as text); *x moves on by n.
 */
static int phase_code(double t, int s, int64_t *x, int64_t *n)
{
	int64_t m = (int64_t)(t * pow2(s)), g = grid_of_ns(*x, s) + m, res; /* time_code said t fits */
	__int128 v = (__int128)g * 1000000000 - 500000000; /* the first y with grid_of_ns(y) >= g */
	int64_t y = v <= 0 ? 0 : (int64_t)((v + ((__int128)1 << s) - 1) >> s);

	if (y > *x && grid_of_ns(y, s) == g) {
		*n = y - *x;
	} else {
		*n = ns_of_grid(m, s);
	}
	res = m - phase_steps(*x, *n, s);
	if (*n <= 0 || *n > (INT64_C(1) << 50) || res < -127 || res > 127)
		return 0;
	*x = phase_next(*x, *n);
	return (int)res + 128;
}

/*
 * The time t (on the grid 2^-s: time_code said so) as the first reading
 * on the grid 2^-(s-1) (change_steps): when some whole nanosecond y past
 * *x reads (grid_of_ns(*x, s) + m) / 2 there, n = y - *x, *x moves on and
 * 128 (no residual) is returned; else 0 and nothing moves. s >= 10.
 */
static int change_code(double t, int s, int64_t *x, int64_t *n)
{
	int64_t m = (int64_t)(t * pow2(s)), g = grid_of_ns(*x, s) + m, y;
	__int128 v;

	if (s < 10 || (g & 1))
		return 0;
	g /= 2;
	v = (__int128)g * 1000000000 - 500000000; /* the first y with grid_of_ns(y, s - 1) >= g */
	y = v <= 0 ? 0 : (int64_t)((v + ((__int128)1 << (s - 1)) - 1) >> (s - 1));
	if (y <= *x || y - *x > (INT64_C(1) << 50) || grid_of_ns(y, s - 1) != g)
		return 0;
	*n = y - *x;
	if (change_steps(*x, *n, s) != m)
		return 0;
	*x = phase_next(*x, *n);
	return 128;
}

/*
 * needs[g]: 1 + the last record whose time is on no grid coarser than
 * 2^-g (0: none). A change at record r is taken only when none after r
 * needs the grid it leaves: past the power of two every time is on the
 * coarser grid, which a phase that explains times by chance does not give.
 */
static void grid_needs(const struct enc *e, uint64_t needs[64])
{
	uint64_t r;
	int g;

	memset(needs, 0, 64 * sizeof(*needs));
	for (r = 0; r < e->nrecords; r++) {
		double t = e->rec_time[r];

		if (e->rec_verbatim[r] || !(t > 0) || !isfinite(t))
			continue;
		g = -low_exponent(t);
		needs[g < 0 ? 0 : g > 63 ? 63 : g] = r + 1;
	}
	for (g = 62; g >= 0; g--)
		if (needs[g + 1] > needs[g])
			needs[g] = needs[g + 1];
}

/*
 * A modelled time (on the grid 2^-*s, with a phase) as put_times codes
 * it: on the grid when the phase explains it (128), else, while fewer
 * than GRID_CHANGES_MAX changes were taken (`taken`) and no later time
 * needs the grid 2^-*s (`needs`), as the first reading on the grid twice
 * coarser when that explains it (128, *changed set, *s one less): a run
 * whose clock passes 512 s, 1024 s, ... of the machine's uptime (a CI
 * runner's clock usually starts near 0); else with a residual, or 0
 * (text, *x unmoved).
 */
static int clock_step(const struct enc *e, const uint64_t needs[64], uint64_t r, int *s, int64_t *x,
		      int64_t *n, int taken, int *changed)
{
	int64_t y = *x;

	*changed = 0;
	if (phase_code(e->rec_time[r], *s, &y, n) == 128) {
		*x = y;
		return 128;
	}
	y = *x;
	if (taken < GRID_CHANGES_MAX && needs[*s] <= r + 1 && change_code(e->rec_time[r], *s, &y, n) == 128) {
		*x = y;
		*changed = 1;
		(*s)--;
		return 128;
	}
	return phase_code(e->rec_time[r], *s, x, n);
}

/*
 * The times from the phase q0 as put_times codes them (clock_step): the
 * first record whose time has a residual, or nrecords when none has.
 */
static uint64_t clock_walk(const struct enc *e, const uint64_t needs[64], int s, int64_t q0)
{
	uint64_t r;
	int64_t x = q0, n;
	int taken = 0, changed;

	for (r = 0; r < e->nrecords; r++) {
		if (e->rec_verbatim[r] || !time_code(e->rec_time[r], s, &n))
			continue; /* kept as text: the reading is not followed */
		if (clock_step(e, needs, r, &s, &x, &n, taken, &changed) != 128)
			return r;
		taken += changed;
	}
	return r;
}

/*
 * Whether the candidate q0, whose run of times explained on the grid
 * 2^-s stopped at record r, explains every time with grid changes. Only
 * a run stopped where the grid may change (no time after r on the finer
 * grid) is walked again, from the start; a wrong phase's walk ends at
 * its first miss, as its run did. The records walked count against the
 * search's budget (*steps), as the run's did.
 */
static int explains_with_changes(const struct enc *e, const uint64_t needs[64], int s, int64_t q0, uint64_t run,
				 uint64_t r, uint64_t *steps)
{
	uint64_t walked;

	if (!run || r >= e->nrecords || s < 10 || needs[s] > r + 1)
		return 0;
	walked = clock_walk(e, needs, s, q0);
	*steps += walked;
	return walked == e->nrecords;
}

/*
 * The clock's phase that explains the most times from the start (the
 * first that explains them all ends the search): a candidate usually
 * fails within a few times, so the search over all 1,953,125 costs a few
 * ms (3 ms for the real 78 MB run). A budget of steps bounds it whatever
 * the times.
 *
 * A run whose clock cannot be followed to its end (a reading missed, as
 * in the generated 224 MB session) tries every candidate, ~23 times each:
 * 44.5M steps, 1.3 s of CPU when each step was time_code and phase_code
 * (two ldexp and four 128-bit divisions). phase_code gives the residual 0
 * exactly when some whole nanosecond reads g = grid_of_ns(x, s) + m on
 * the grid (x the phase, m the time's grid steps; the first nanosecond
 * reaching g is then past x, and the phase moves to it). With 1e9 = 2^9
 * CLOCK_PERIOD and W = 2^(s-9), grid_of_ns(y, s) = floor((y W + h) /
 * CLOCK_PERIOD) with h = CLOCK_PERIOD / 2 (CLOCK_PERIOD is odd), so y reads
 * g when |y W - g CLOCK_PERIOD| <= h: some y does when (g CLOCK_PERIOD +
 * h) mod W <= 2h. Moving the phase by whole periods moves g by multiples
 * of W, so the g of a candidate's k-th time is, mod W, grid_of_ns(q0, s)
 * plus the first k times' m: a step is an addition, a mask and a
 * comparison on sums worked out once (mod 2^64, which W divides).
 * phase_code also wants the nanoseconds y - x at most 2^50; they are
 * below (m + 1) 1e9 / 2^s, so the fast steps are taken only when that
 * holds for every time, else the slow ones (`reference`).
 */
static int find_phase_reference(const struct enc *e, int s, uint64_t budget, int64_t *phase)
{
	uint64_t steps = 0, best_run = 0, needs[64];
	int64_t q0, best = 0;

	grid_needs(e, needs);
	for (q0 = 0; q0 < CLOCK_PERIOD && steps < budget; q0++) {
		int64_t x = q0, n;
		uint64_t r, run = 0;

		for (r = 0; r < e->nrecords; r++, steps++) {
			if (e->rec_verbatim[r] || !time_code(e->rec_time[r], s, &n))
				continue;
			if (phase_code(e->rec_time[r], s, &x, &n) != 128)
				break;
			run++;
		}
		if (run > best_run) {
			best_run = run;
			best = q0 + 1;
		}
		if (r == e->nrecords)
			break;
		if (explains_with_changes(e, needs, s, q0, run, r, &steps)) { /* it takes the search's place */
			best = q0 + 1;
			break;
		}
	}
	*phase = best;
	return 0;
}

#define PHASE_OFF UINT64_MAX /* a time off the model: no step */

/*
 * The first of c[0..k) whose g is off the grid for the phase `base`
 * (k when none is): four at a time, which the search's short runs (~23
 * times per candidate) keep in one or two rounds of independent tests.
 */
static inline uint64_t first_miss(const uint64_t *c, uint64_t k, uint64_t base, uint64_t mask,
				  uint64_t lim)
{
	uint64_t j;

	for (j = 0; j + 4 <= k; j += 4) {
		int f0 = ((c[j] + base) & mask) > lim, f1 = ((c[j + 1] + base) & mask) > lim;
		int f2 = ((c[j + 2] + base) & mask) > lim, f3 = ((c[j + 3] + base) & mask) > lim;

		if (f0 | f1 | f2 | f3)
			return j + (f0 ? 0 : f1 ? 1 : f2 ? 2 : 3);
	}
	for (; j < k; j++)
		if (((c[j] + base) & mask) > lim)
			return j;
	return k;
}

int codec_find_phase(const struct enc *e, int s, uint64_t budget, int reference, int64_t *phase)
{
	const uint64_t h = CLOCK_PERIOD / 2;
	uint64_t steps = 0, best_run = 0, r, k = 0, j, mask, acc = 0, *sum = NULL;
	uint32_t *at = NULL; /* with times off the model: the record of sum[j] */
	int64_t q0, best = 0, n, m, max_m = 0;
	uint64_t needs[64];

	*phase = 0;
	if (s < 9 || s > 62)
		return 0;
	if (reference)
		return find_phase_reference(e, s, budget, phase);
	mask = (UINT64_C(1) << (s - 9)) - 1;
	grid_needs(e, needs);
	sum = malloc(((size_t)e->nrecords + 1) * sizeof(*sum));
	if (!sum)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (r = 0; r < e->nrecords; r++) {
		if (e->rec_verbatim[r] || !time_code(e->rec_time[r], s, &n)) {
			sum[r] = PHASE_OFF;
			continue;
		}
		m = (int64_t)(e->rec_time[r] * pow2(s)); /* as in phase_code */
		max_m = m > max_m ? m : max_m;
		acc += (uint64_t)m * CLOCK_PERIOD;
		sum[r] = (acc + h) & mask;
	}
	if ((unsigned __int128)(max_m + 1) * CLOCK_PERIOD > (unsigned __int128)1 << (41 + s)) {
		free(sum);
		return find_phase_reference(e, s, budget, phase);
	}
	/* the times on the model, packed: a candidate's run is then the index
	   of its first miss, and `at` gives back the record (for the budget) */
	for (r = 0; r < e->nrecords; r++) {
		if (sum[r] == PHASE_OFF && !at) {
			at = malloc(((size_t)e->nrecords + 1) * sizeof(*at));
			if (!at) {
				free(sum);
				return rs_error_set(RS_EGENERIC, "out of memory");
			}
			for (j = 0; j < k; j++)
				at[j] = (uint32_t)j;
		}
		if (sum[r] == PHASE_OFF)
			continue;
		if (at)
			at[k] = (uint32_t)r;
		sum[k++] = sum[r];
	}
	for (q0 = 0; q0 < CLOCK_PERIOD && steps < budget; q0++) {
		uint64_t base = (uint64_t)grid_of_ns(q0, s) * CLOCK_PERIOD, run;

		run = first_miss(sum, k, base, mask, 2 * h);
		/* the record the walk stopped at, as when it went through all of them */
		r = run == k ? e->nrecords : at ? at[run] : run;
		steps += r;
		if (run > best_run) {
			best_run = run;
			best = q0 + 1;
		}
		if (r == e->nrecords)
			break;
		if (explains_with_changes(e, needs, s, q0, run, r, &steps)) { /* it takes the search's place */
			best = q0 + 1;
			break;
		}
	}
	free(sum);
	free(at);
	*phase = best;
	return 0;
}

/*
 * Per record its time: the code and value in SEC_TIMES, or the text in
 * tesc; with a phase, the grid changes taken on the way in st->grid_at.
 */
static int put_times(struct enc *e, struct streams *st, const uint64_t needs[64])
{
	const unsigned char *esc = (const unsigned char *)e->esc_text.ptr;
	struct rs_buf *b = &st->sec[SEC_TIMES];
	uint64_t r;
	int err;

	int64_t x = st->phase - 1;
	int s = st->s;

	err = 0;
	for (r = 0; !err && r < e->nrecords; r++) {
		int64_t n = 0;
		int code = 0;

		if (!e->rec_verbatim[r])
			code = time_code(e->rec_time[r], s, &n);
		if (code && st->phase) {
			int changed;

			code = clock_step(e, needs, r, &s, &x, &n, st->ngrid, &changed);
			if (changed)
				st->grid_at[st->ngrid++] = (uint32_t)r;
		}
		if (code > 0 && code != 128)
			e->stats->times_residual++;
		if (code) {
			err = put_varint(b, 1 + zigzag(code - 128));
			if (!err)
				err = put_varint(b, zigzag(n - st->ref));
		} else {
			err = put_varint(b, 0);
			if (!err)
				err = put_time_text(e, &st->sec[SEC_TESC], e->rec_verbatim[r], e->rec_time[r], &esc);
		}
	}
	return err;
}

/* The params stream (its counts, in the order docs/codec.md lists), prefix and suffix. */
static int put_params(const struct enc *e, struct streams *st)
{
	uint64_t v[8];
	int k, err;

	v[0] = st->nbase;
	v[1] = (uint64_t)st->s;
	v[2] = zigzag(st->ref);
	v[3] = st->ndict;
	v[4] = st->nthreads;
	v[5] = 0; /* version 7: the call tree's nodes, none: the stacks stream holds the stacks */
	v[6] = e->nrecords;
	v[7] = (uint64_t)st->phase;
	for (k = 0; k < 8; k++) {
		err = put_varint(&st->sec[SEC_PARAMS], v[k]);
		if (err)
			return err;
	}
	/* version 6: the grid changes, each as the records since the one before (the first: since record 0) */
	err = put_varint(&st->sec[SEC_PARAMS], (uint64_t)st->ngrid);
	for (k = 0; !err && k < st->ngrid; k++)
		err = put_varint(&st->sec[SEC_PARAMS], st->grid_at[k] - (k ? st->grid_at[k - 1] + 1 : 0));
	if (err)
		return err;
	err = rs_buf_put(&st->sec[SEC_PREFIX], e->prefix.ptr, e->prefix.len);
	if (err)
		return err;
	return rs_buf_put(&st->sec[SEC_SUFFIX], e->suffix.ptr, e->suffix.len);
}

/*
 * The phase search on a thread of its own: it reads only the parse's
 * times, and the dictionary, the tree, the samples and the median time,
 * which do not need the phase, are built meanwhile on the calling thread
 * (the other core is idle once the parse is done).
 */
struct phase_job {
	const struct enc *e;
	int s;
	int64_t phase;
	int err;
	struct rs_error_saved saved;
};

static void *phase_run(void *arg)
{
	struct phase_job *j = arg;

	j->err = codec_find_phase(j->e, j->s, PHASE_BUDGET, 0, &j->phase);
	if (j->err)
		rs_error_save(&j->saved, j->err);
	return NULL;
}

uint64_t codec_stacks_budget = MAX_STACKS_BYTES;

/*
 * The dictionary and the stacks. A run coded after a base holds the
 * base's stacks too (the base block's second stream); when the two pass
 * codec_stacks_budget (a 1 GB session after another: about 11 MB each)
 * the container would pass the decoder's caps and the codec decline, so
 * the run starts a new base instead, and its stacks are the base's (a
 * run whose own stacks pass MAX_STACKS_BYTES declines:
 * within_decoder_caps).
 */
static int put_dictionary_and_stacks(struct enc *e, struct streams *st)
{
	int err = put_dictionary(e, st);

	if (!err)
		err = put_stacks(e, st);
	/* RS_EUSAGE: a stream passed its cap (RS_CODEC_MAX_STREAMS) */
	if (e->rebase || (err && err != RS_EUSAGE) ||
	    (!err && (uint64_t)st->sec[SEC_BASE_TREE].len + st->sec[SEC_SAMPLES].len <= codec_stacks_budget &&
	     e->base_levels + e->stacks_levels <= stacks_level_budget(e->size)))
		goto out;
	e->force_rebase = 1;
	rs_buf_clear(&st->sec[SEC_BASE]);
	rs_buf_clear(&st->sec[SEC_DICT]);
	rs_buf_clear(&st->sec[SEC_THREADS]);
	rs_buf_clear(&st->sec[SEC_BASE_TREE]);
	rs_buf_clear(&st->sec[SEC_SAMPLES]);
	free(st->rank);
	st->rank = NULL;
	st->nbase = st->ndict = st->nthreads = 0;
	err = put_dictionary(e, st);
	if (!err)
		err = put_stacks(e, st);
out:
	if (!err && e->stacks_levels > stacks_level_budget(e->size))
		return codec_decline(e, "the session's stacks are deeper than its size allows");
	return err == RS_EUSAGE ? codec_decline(e, "the session is too large for the session codec's caps") : err;
}

int codec_make_streams(struct enc *e, struct streams *st)
{
	struct phase_job job;
	pthread_t thread;
	uint64_t needs[64];
	int started, err;

	st->s = choose_grid(e);
	memset(&job, 0, sizeof(job));
	job.e = e;
	job.s = st->s;
	started = pthread_create(&thread, NULL, phase_run, &job) == 0;
	if (!started)
		phase_run(&job);
	err = put_dictionary_and_stacks(e, st);
	if (!err)
		err = time_ref(e, st);
	if (started)
		pthread_join(thread, NULL);
	if (err)
		return err;
	if (job.err)
		return rs_error_restore(&job.saved);
	st->phase = job.phase;
	st->ngrid = 0;
	grid_needs(e, needs);
	err = put_times(e, st, needs);
	if (err)
		return err;
	e->stats->grid_changes = (uint64_t)st->ngrid;
	return put_params(e, st);
}

/* ---- the container ------------------------------------------------------ */

/*
 * How each stream is compressed. The streams are ~0.5% of the session,
 * but the high levels are slow per byte: level 15 on every stream took
 * 0.12 s of CPU for a 224 MB session, two thirds of the parse, while the
 * proof waited. Measured on the streams of generated 224 and 70 MB
 * sessions (bench/codec.sh) and the real 4 MB one:
 *
 * - the low bytes (samples, tval) are noise: zstd stores them as they
 *   are at any level, so level 1 finds that out fastest;
 * - tval_hi, the varints of the jitter, is all literals: level 1 codes it
 *   as well as 15 (75.0 KB for 224 MB), the levels between worse;
 * - samples_hi and tcode gain from optimal parsing (btopt) over short
 *   histories with a long target: 52.2 and 21.4 KB in 7-8 ms each, where
 *   level 15 took 29 and 34 ms for 52.3 and 19.5 KB;
 * - the tree: level 10, 47.4 KB in 7 ms (level 15: 44.3 KB in 29 ms);
 * - the base dictionary keeps level 15: it is the block stored once for
 *   many runs, and the same level keeps it byte for byte the block that
 *   stores written by earlier builds already hold. The small streams do
 *   not matter.
 *
 * In all 36 ms instead of 121 (224 MB), and the container 1% larger:
 * 465x instead of 470x (target 440), 388x instead of 393x at 70 MB
 * (target 375).
 */
struct stream_zstd {
	int level;
	int strategy;   /* with the four below; 0: the level's own parameters */
	int table_log;  /* hash and chain tables */
	int search_log, min_match, target_length;
	int split_blocks; /* zstd's block splitter (set_stream_zstd) */
};

#define Z_LEVEL(l) { (l), 0, 0, 0, 0, 0, 0 }
#define Z_OPT_SHORT { 13, ZSTD_btopt, 12, 1, 5, 16, 0 }

static const struct stream_zstd stream_zstd[SEC_SLOTS] = {
	[SEC_PARAMS] = Z_LEVEL(15), [SEC_PREFIX] = Z_LEVEL(15), [SEC_SUFFIX] = Z_LEVEL(15),
	[SEC_DICT] = Z_LEVEL(15), [SEC_THREADS] = Z_LEVEL(15), [SEC_TREE] = Z_LEVEL(10),
	[SEC_SAMPLES] = Z_LEVEL(1), [SEC_SAMPLES_HI] = Z_OPT_SHORT, [SEC_TCODE] = Z_OPT_SHORT,
	[SEC_TVAL] = Z_LEVEL(1), [SEC_TVAL_HI] = Z_LEVEL(1), [SEC_TESC] = Z_LEVEL(15),
	[SEC_BASE] = Z_LEVEL(15), [SEC_BASE_TREE] = Z_LEVEL(10),
};

static int set_stream_zstd(ZSTD_CCtx *cctx, const struct stream_zstd *z)
{
	size_t r = ZSTD_CCtx_reset(cctx, ZSTD_reset_parameters);

	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, z->level);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_strategy, z->strategy);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, z->table_log);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_chainLog, z->table_log);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_searchLog, z->search_log);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, z->min_match);
	if (z->strategy && !ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetLength, z->target_length);
	if (z->split_blocks && !ZSTD_isError(r)) {
		/*
		 * zstd cuts a block where its statistics change (columns of
		 * different numbers, then texts) only for windows of 128 KB
		 * and more, which a stream of known small size does not get:
		 * asked for, it takes the split columns of the real 78 MB
		 * run's base from 16.5 KB to 16.0. An experimental parameter
		 * (zstd 1.5.1): headers before it do not name it, and a
		 * libzstd without it refuses it; the stream is then only
		 * larger, so that refusal is ignored.
		 */
#if ZSTD_VERSION_NUMBER >= 10501
		size_t s = ZSTD_CCtx_setParameter(cctx, ZSTD_c_useBlockSplitter, ZSTD_ps_enable);

		(void)s;
#endif
	}
	return ZSTD_isError(r) ? rs_error_set(RS_EGENERIC, "zstd: %s", ZSTD_getErrorName(r)) : 0;
}

/*
 * A coded stream `rc` of `raw` (what a pack gave: `res` 0, or 1 when it
 * declined) as a section of codec `codec`: its header and its bytes;
 * *done 0 when it was declined or is not smaller (then zstd takes the
 * stream). `rc` is released.
 */
static int put_coded_section(struct rs_buf *out, const struct rs_buf *raw, struct rs_buf *rc, int res,
			     unsigned codec, int *done)
{
	unsigned char h[SECTION_HEADER_SIZE];
	int err = res;

	*done = 0;
	if (err == 1 || (!err && rc->len >= raw->len)) {
		rs_buf_release(rc);
		return 0;
	}
	memset(h, 0, sizeof(h));
	put_le64(h, raw->len);
	put_le64(h + 8, rc->len);
	h[16] = (unsigned char)codec;
	if (!err)
		err = rs_buf_put(out, h, sizeof(h));
	if (!err)
		err = rs_buf_put(out, rc->ptr, rc->len);
	*done = !err;
	rs_buf_release(rc);
	return err;
}

/*
 * The stacks stream (version 7: the samples stream, or the base block's
 * second), range-coded with the stacks model (rc_stacks.h) after the
 * base's stacks `base` (NULL: none); *done 0 when the model declines it
 * or does not make it smaller (then zstd takes it).
 */
static int add_stacks_section(struct rs_buf *out, const struct rs_buf *raw, const struct rs_buf *base,
			      uint64_t max_levels, int *done)
{
	struct rs_buf rc = RS_BUF_INIT;
	int res = rs_stacks_pack(&rc, (const unsigned char *)raw->ptr, raw->len,
				 base && base->len ? (const unsigned char *)base->ptr : NULL, base ? base->len : 0,
				 max_levels);

	return put_coded_section(out, raw, &rc, res, SEC_CODEC_STACKS, done);
}

/*
 * A stream with a model (the times): its header and its bytes,
 * range-coded; *done 0 when the stream does not fit its model (then
 * zstd takes it).
 */
static int add_rc_section(struct rs_buf *out, int slot, const struct rs_buf *raw, int *done)
{
	struct rs_buf rc = RS_BUF_INIT;
	int res = rs_rc_pack(&rc, stream_model(RS_CODEC_VERSION, slot), RS_CODEC_VERSION,
			     (const unsigned char *)raw->ptr, raw->len);

	return put_coded_section(out, raw, &rc, res, SEC_CODEC_RC, done);
}

/*
 * A frame list front-coded (codec 3, unfront): the dictionaries are
 * sorted, so a frame shares most of its text with the one before (the
 * same function and file, another line); zstd then sees a quarter of the
 * bytes and stores 11% less (the real 78 MB run's base: 27.3 KB instead
 * of 30.7, in less time). Returns 1 when `raw` is not a frame list.
 */
static int front_code(struct rs_buf *fc, const struct rs_buf *raw)
{
	struct cursor c = { (const unsigned char *)raw->ptr, raw->len, 0 };
	const unsigned char *prev = NULL;
	uint64_t prev_len = 0, l;
	int err = 0;

	while (!err && c.pos < c.len) {
		uint64_t k = 0;

		if (get_varint(&c, &l) || l > c.len - c.pos)
			return 1;
		while (k < l && k < prev_len && prev[k] == c.p[c.pos + k])
			k++;
		err = put_varint(fc, k);
		if (!err)
			err = put_varint(fc, l - k);
		if (!err)
			err = rs_buf_put(fc, c.p + c.pos + k, (size_t)(l - k));
		prev = c.p + c.pos;
		prev_len = l;
		c.pos += (size_t)l;
	}
	return err;
}

/*
 * A frame list `raw` recoded as `coded` (front coding, columns), zstd-compressed
 * at `z` as a stream of codec `codec`.
 */
static int add_recoded_section(struct rs_buf *out, ZSTD_CCtx *cctx, const struct stream_zstd *z,
			       const struct rs_buf *raw, const struct rs_buf *coded, unsigned codec)
{
	unsigned char h[SECTION_HEADER_SIZE];
	size_t bound = ZSTD_compressBound(coded->len), n;
	int err = set_stream_zstd(cctx, z);

	if (!err)
		err = rs_buf_grow(out, SECTION_HEADER_SIZE + bound);
	if (err)
		return err;
	n = ZSTD_compress2(cctx, out->ptr + out->len + SECTION_HEADER_SIZE, bound, coded->ptr, coded->len);
	if (ZSTD_isError(n))
		return rs_error_set(RS_EGENERIC, "zstd: %s", ZSTD_getErrorName(n));
	memset(h, 0, sizeof(h));
	put_le64(h, raw->len);
	put_le64(h + 8, n);
	h[16] = (unsigned char)codec;
	memcpy(out->ptr + out->len, h, sizeof(h));
	out->len += SECTION_HEADER_SIZE + n;
	out->ptr[out->len] = '\0';
	return 0;
}

/* A frame list, front-coded and zstd-compressed (codec 3); *done 0 when that is not smaller than zstd alone would be. */
static int add_front_section(struct rs_buf *out, ZSTD_CCtx *cctx, int slot, const struct rs_buf *raw,
			     int *done)
{
	struct rs_buf fc = RS_BUF_INIT;
	int err;

	*done = 0;
	err = front_code(&fc, raw);
	if (err == 1 || (!err && fc.len >= raw->len)) {
		rs_buf_release(&fc);
		return 0;
	}
	if (!err)
		err = add_recoded_section(out, cctx, &stream_zstd[slot], raw, &fc, SEC_CODEC_FRONT);
	*done = !err;
	rs_buf_release(&fc);
	return err;
}

/*
 * Codec 5 (version 4): a frame list in split columns (the decoder's
 * uncolumn_any has the layout). Frames are `name\u0000file\u0000first
 * line` and `\u0001c<class>`, `\u0001l<line>` attributes: a function's
 * frames share its name, file and first line, and a list names ~130 files
 * for ~4,000 frames, so that each is kept once per list (a table
 * reference after that, mostly 1: the sorted list keeps a function's
 * frames together) and a line as its difference from the function's
 * first line, or, for another line of the frame before's function, the
 * line alone (COL_SAME) as its difference from the frame before's. Each
 * field has a column of its own, so that zstd sees numbers of one kind
 * together: the real 78 MB run's base takes 16.0 KB (with zstd's block
 * splitter, set_stream_zstd) instead of 20.9 (the same fields
 * interleaved, codec 4) and 26.6 (front coding, codec 3).
 */
#define COL_SLOTS 4096u /* per table; a list with more distinct parts keeps the rest as new texts */

struct col_writer {
	struct rs_buf col[COLF_N], b;  /* codec 5: a column per field (docs/codec.md) */
	const unsigned char *base;   /* the list's bytes: table entries point into them */
	struct col_entry {
		uint32_t off, len, idx; /* idx + 1; 0: empty */
	} slot[3][COL_SLOTS];
	uint32_t n[3];
	/* the previous frame's parts, for COL_SAME (has_prev 0: it may not follow) */
	int has_prev, prev_has_class;
	const unsigned char *prev_p[3];
	size_t prev_len[3];
	uint64_t prev_first, prev_line;
};

/* Where `p`/`n` is in `t`'s table, or 0 with *free_slot where it would go. */
static uint32_t col_find(struct col_writer *w, int t, const unsigned char *p, size_t n, uint32_t *free_slot)
{
	uint32_t h = hash_bytes(p, n) & (COL_SLOTS - 1), probe;

	for (probe = 0; probe < COL_SLOTS; probe++) {
		struct col_entry *s = &w->slot[t][(h + probe) & (COL_SLOTS - 1)];

		if (!s->idx) {
			*free_slot = (h + probe) & (COL_SLOTS - 1);
			return 0;
		}
		if (s->len == n && !memcmp(w->base + s->off, p, n))
			return s->idx;
	}
	*free_slot = UINT32_MAX;
	return 0;
}

/* A part: a reference to its table, or 0 and its text (which joins the table). */
static int col_put_part(struct col_writer *w, int t, const unsigned char *p, size_t n)
{
	static const int col_of_table[3] = { COLF_NAME, COLF_FILE, COLF_CLASS };
	struct rs_buf *col = &w->col[col_of_table[t]];
	uint32_t free_slot, idx = col_find(w, t, p, n, &free_slot);
	int err;

	if (idx)
		return put_varint(col, w->n[t] - (idx - 1));
	err = put_varint(col, 0);
	if (!err)
		err = rs_buf_put(&w->b, p, n);
	if (!err)
		err = rs_buf_put(&w->b, "\n", 1);
	/* a table past its slots keeps counting (the decoder's does), it just finds no more */
	if (!err && free_slot != UINT32_MAX && w->n[t] < COL_SLOTS * 3 / 4) {
		w->slot[t][free_slot].off = (uint32_t)(p - w->base);
		w->slot[t][free_slot].len = (uint32_t)n;
		w->slot[t][free_slot].idx = w->n[t] + 1;
	}
	w->n[t]++;
	return err;
}

/* A canonical decimal of at most 9 digits at p[0..n): its length, its value in *v; 0 if none. */
static size_t col_number(const unsigned char *p, size_t n, uint64_t *v)
{
	size_t k = 0;

	*v = 0;
	while (k < n && k < 9 && p[k] >= '0' && p[k] <= '9')
		*v = *v * 10 + (uint64_t)(p[k++] - '0');
	if (k == 0 || (k > 1 && p[0] == '0') || (k < n && p[k] >= '0' && p[k] <= '9'))
		return 0;
	return k;
}

/* The position of `mark` (`m` bytes) in p[0..n), or n. */
static size_t col_mark(const unsigned char *p, size_t n, const char *mark, size_t m)
{
	size_t k;

	for (k = 0; k + m <= n; k++)
		if (p[k] == '\\' && !memcmp(p + k, mark, m))
			return k;
	return n;
}

/* One frame's text into the columns. */
static int col_put_frame(struct col_writer *w, const unsigned char *p, size_t n)
{
	size_t name = col_mark(p, n, COL_SEP, COL_SEP_LEN), file, at, num, cls = 0, cls_len = 0;
	uint64_t first, line = 0;
	int kind, err, has_line = 0, has_class;

	file = name < n ? col_mark(p + name + COL_SEP_LEN, n - name - COL_SEP_LEN, COL_SEP, COL_SEP_LEN) : 0;
	if (name == n || name + COL_SEP_LEN + file == n)
		goto verbatim;
	at = name + COL_SEP_LEN + file + COL_SEP_LEN;
	num = col_number(p + at, n - at, &first);
	if (!num)
		goto verbatim;
	at += num;
	kind = COL_PLAIN;
	if (at < n && n - at >= COL_ATTR_LEN && !memcmp(p + at, COL_CLASS, COL_ATTR_LEN)) {
		cls = at + COL_ATTR_LEN;
		cls_len = col_mark(p + cls, n - cls, "\\u0001", 6);
		at = cls + cls_len;
		kind = COL_WITH_CLASS;
	}
	if (at < n && n - at > COL_ATTR_LEN && !memcmp(p + at, COL_LINE, COL_ATTR_LEN)) {
		size_t k = col_number(p + at + COL_ATTR_LEN, n - at - COL_ATTR_LEN, &line);

		if (k && at + COL_ATTR_LEN + k == n) {
			has_line = 1;
			at = n;
			kind = kind == COL_WITH_CLASS ? COL_CLASS_LINE : COL_WITH_LINE;
		}
	}
	if (at < n) {
		/* what follows is no class and line: the rest verbatim (after the first line) */
		at = name + COL_SEP_LEN + file + COL_SEP_LEN + num;
		kind = COL_REST;
	}
	has_class = kind == COL_WITH_CLASS || kind == COL_CLASS_LINE;
	if (has_line && w->has_prev && w->prev_first == first && w->prev_has_class == has_class &&
	    w->prev_len[0] == name && !memcmp(w->prev_p[0], p, name) &&
	    w->prev_len[1] == file && !memcmp(w->prev_p[1], p + name + COL_SEP_LEN, file) &&
	    (!has_class || (w->prev_len[2] == cls_len && !memcmp(w->prev_p[2], p + cls, cls_len)))) {
		/* another line of the previous frame's function (a sorted list keeps them together) */
		err = put_varint(&w->col[COLF_KIND], COL_SAME);
		if (!err)
			err = put_varint(&w->col[COLF_LINE], zigzag((int64_t)line - (int64_t)w->prev_line));
		w->prev_line = line;
		return err;
	}
	err = put_varint(&w->col[COLF_KIND], (uint64_t)kind);
	if (!err)
		err = col_put_part(w, 0, p, name);
	if (!err)
		err = col_put_part(w, 1, p + name + COL_SEP_LEN, file);
	if (!err)
		err = put_varint(&w->col[COLF_FIRST], first);
	if (!err && has_class)
		err = col_put_part(w, 2, p + cls, cls_len);
	if (!err && has_line)
		err = put_varint(&w->col[COLF_LINE], zigzag((int64_t)line - (int64_t)first));
	if (!err && kind == COL_REST) {
		err = rs_buf_put(&w->b, p + at, n - at);
		if (!err)
			err = rs_buf_put(&w->b, "\n", 1);
	}
	w->has_prev = kind != COL_REST;
	w->prev_p[0] = p;
	w->prev_len[0] = name;
	w->prev_p[1] = p + name + COL_SEP_LEN;
	w->prev_len[1] = file;
	w->prev_p[2] = p + cls;
	w->prev_len[2] = cls_len;
	w->prev_has_class = has_class;
	w->prev_first = first;
	w->prev_line = has_line ? line : first;
	return err;
verbatim:
	w->has_prev = 0;
	err = put_varint(&w->col[COLF_KIND], COL_VERBATIM);
	if (!err)
		err = rs_buf_put(&w->b, p, n);
	return err ? err : rs_buf_put(&w->b, "\n", 1);
}

/* The frame list `raw` in columns into `cols`; 1 when it cannot be (a raw newline in a text). */
static int column_code(struct rs_buf *cols, const struct rs_buf *raw)
{
	struct cursor c = { (const unsigned char *)raw->ptr, raw->len, 0 };
	struct col_writer *w = calloc(1, sizeof(*w));
	uint64_t l;
	int err = 0, i;

	if (!w)
		return rs_error_set(RS_EGENERIC, "out of memory");
	w->base = c.p;
	if (memchr(c.p, '\n', c.len))
		err = 1;
	while (!err && c.pos < c.len) {
		if (get_varint(&c, &l) || l > c.len - c.pos) {
			err = 1;
			break;
		}
		err = col_put_frame(w, c.p + c.pos, (size_t)l);
		c.pos += (size_t)l;
	}
	for (i = 0; !err && i < COLF_N; i++)
		err = put_varint(cols, w->col[i].len);
	for (i = 0; !err && i < COLF_N; i++)
		err = rs_buf_put(cols, w->col[i].ptr, w->col[i].len);
	if (!err)
		err = rs_buf_put(cols, w->b.ptr, w->b.len);
	for (i = 0; i < COLF_N; i++)
		rs_buf_release(&w->col[i]);
	rs_buf_release(&w->b);
	free(w);
	return err;
}

/* A frame list in columns, zstd-compressed (codec 4); *done 0 when the columns are not shorter than the list. */
static int add_columns_section(struct rs_buf *out, ZSTD_CCtx *cctx, const struct rs_buf *raw, int *done)
{
	static const struct stream_zstd z = { 19, 0, 0, 0, 0, 0, 1 };
	struct rs_buf cols = RS_BUF_INIT;
	int err;

	*done = 0;
	err = column_code(&cols, raw);
	if (err == 1 || (!err && cols.len >= raw->len)) {
		rs_buf_release(&cols);
		return 0;
	}
	if (!err)
		err = add_recoded_section(out, cctx, &z, raw, &cols, SEC_CODEC_SPLIT);
	*done = !err;
	rs_buf_release(&cols);
	return err;
}

/*
 * One stream: its header, then its bytes: with `cctx`, range-coded when
 * the stream has a model (a stacks stream's after `base`, the base's
 * stacks), else zstd-compressed when that is smaller; without, as they
 * are.
 */
static int add_section(struct rs_buf *out, ZSTD_CCtx *cctx, int slot, const struct rs_buf *raw,
		       const struct rs_buf *base, uint64_t max_levels)
{
	const struct stream_zstd *z = &stream_zstd[slot];
	unsigned char h[SECTION_HEADER_SIZE];
	size_t bound = ZSTD_compressBound(raw->len), n = 0;
	int err, done = 0;

	if (cctx && raw->len && is_stacks_stream(RS_CODEC_VERSION, slot)) {
		err = add_stacks_section(out, raw, base, max_levels, &done);
		if (err || done)
			return err;
	}
	if (cctx && raw->len && stream_model(RS_CODEC_VERSION, slot) != RC_KINDS) {
		err = add_rc_section(out, slot, raw, &done);
		if (err || done)
			return err;
	}
	if (cctx && raw->len > 64 && is_frame_list(slot)) {
		err = add_columns_section(out, cctx, raw, &done);
		if (err || done)
			return err;
		err = add_front_section(out, cctx, slot, raw, &done);
		if (err || done)
			return err;
	}
	memset(h, 0, sizeof(h));
	put_le64(h, raw->len);
	err = rs_buf_grow(out, SECTION_HEADER_SIZE + bound);
	if (err)
		return err;
	if (raw->len && cctx) {
		err = set_stream_zstd(cctx, z);
		if (err)
			return err;
		n = ZSTD_compress2(cctx, out->ptr + out->len + SECTION_HEADER_SIZE, bound, raw->ptr, raw->len);
		if (ZSTD_isError(n))
			return rs_error_set(RS_EGENERIC, "zstd: %s", ZSTD_getErrorName(n));
	}
	if (cctx && raw->len && n < raw->len) {
		put_le64(h + 8, n);
		h[16] = SEC_CODEC_ZSTD;
	} else {
		if (raw->len) /* an empty stream's buffer may be NULL */
			memcpy(out->ptr + out->len + SECTION_HEADER_SIZE, raw->ptr, raw->len);
		n = raw->len;
		put_le64(h + 8, n);
		h[16] = SEC_CODEC_RAW;
	}
	memcpy(out->ptr + out->len, h, SECTION_HEADER_SIZE);
	out->len += SECTION_HEADER_SIZE + n;
	out->ptr[out->len] = '\0';
	return 0;
}

/*
 * The container of the streams (docs/codec.md): compressed with `cctx`,
 * or, without one, every stream stored as is. *block_len (may be NULL)
 * gets the length of the first block.
 */
int codec_put_container(struct rs_buf *out, ZSTD_CCtx *cctx, const struct streams *st,
			 uint64_t size, uint64_t *block_len)
{
	unsigned char hdr[HEADER_SIZE], bhdr[BASE_HEADER_SIZE];
	uint64_t levels = stacks_level_budget(size); /* what the decoder allows the stacks model */
	int k, err;

	memcpy(bhdr, BASE_MAGIC, 8);
	put_le32(bhdr + 8, RS_CODEC_VERSION);
	put_le32(bhdr + 12, 0);
	memcpy(hdr, RS_CODEC_MAGIC, 8);
	put_le32(hdr + 8, RS_CODEC_VERSION);
	put_le32(hdr + 12, V2_COUNT);
	put_le64(hdr + 16, size);
	rs_buf_clear(out);
	err = rs_buf_put(out, bhdr, sizeof(bhdr));
	if (err)
		return err;
	err = add_section(out, cctx, SEC_BASE, &st->sec[SEC_BASE], NULL, levels);
	if (!err)
		err = add_section(out, cctx, SEC_BASE_TREE, &st->sec[SEC_BASE_TREE], NULL, levels);
	if (err)
		return err;
	if (block_len)
		*block_len = out->len;
	err = rs_buf_put(out, hdr, sizeof(hdr));
	for (k = 0; !err && k < V2_COUNT; k++)
		err = add_section(out, cctx, codec_v2_streams[k], &st->sec[codec_v2_streams[k]], &st->sec[SEC_BASE_TREE],
				  levels);
	return err;
}

/*
 * The file's hash, taken as it was read, must be the oid, over `size`
 * bytes; else the file is not the object: decline, and the generic path
 * reports it.
 */
int codec_input_is_the_object(struct enc *e, const struct rs_id *oid, uint64_t size)
{
	struct rs_id got;

	hasher_join(&e->hz, 0);
	rs_sha256_final(e->hz.h, &got);
	if (e->hz.hashed != size || rs_id_cmp(&got, oid))
		return codec_decline(e, "the file does not hash to the object's oid");
	return 0;
}

/* ---- the encoder's life ------------------------------------------------- */

void codec_enc_release(struct enc *e)
{
	hasher_join(&e->hz, 1); /* before the mapping goes: the thread reads it */
	rs_sha256_free(e->hz.h);
	if (e->fd >= 0)
		close(e->fd);
	if (e->mapped)
		munmap(e->buf, e->len);
	else
		free(e->buf);
	rs_buf_release(&e->prefix);
	rs_buf_release(&e->suffix);
	rs_buf_release(&e->arena);
	rs_buf_release(&e->esc_text);
	rs_buf_release(&e->base_stacks);
	free(e->frames);
	free(e->ftab);
	free(e->node_parent);
	free(e->node_frame);
	free(e->ntab);
	free(e->rec_node);
	free(e->rec_time);
	free(e->rec_verbatim);
	free(e->prev_frame);
	free(e->prev_node);
	free(e->prev_path);
	free(e->span_off);
	free(e->span_len);
	free(e->repr);
}

/*
 * A large file is mapped: the records are then tokenized on a thread of
 * their own (read_records_mapped) and hashed on another; a small one, or
 * one that cannot be mapped, is read in a sliding buffer.
 */
static void map_input(struct enc *e, uint64_t size)
{
	void *m;

	if ((uint64_t)e->opened.st_size != size || size < MAP_MIN || size > SIZE_MAX / 2)
		return;
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, e->fd, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, (size_t)size, MADV_SEQUENTIAL);
	e->buf = m;
	e->len = (size_t)size;
	e->eof = 1;
	e->mapped = 1;
}

/*
 * Open the file and set the encoder up (`dict` may be NULL). The caller
 * calls enc_release whatever this returns.
 */
int codec_enc_open(struct enc *e, const char *path, uint64_t size, struct rs_codec_dict *dict,
		    struct rs_codec_stats *stats)
{
	int err;

	memset(e, 0, sizeof(*e));
	e->stats = stats;
	e->size = size;
	e->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (e->fd < 0)
		return rs_error_errno(RS_ENOTFOUND, "cannot open '%s'", path);
	if (fstat(e->fd, &e->opened) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	posix_fadvise(e->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rs_buf_init(&e->prefix, MAX_AFFIX);
	rs_buf_init(&e->suffix, MAX_AFFIX);
	rs_buf_init(&e->arena, 256u * 1024 * 1024);
	rs_buf_init(&e->esc_text, RS_CODEC_MAX_STREAMS);
	rs_buf_init(&e->base_stacks, RS_CODEC_MAX_STREAMS);
	map_input(e, size);
	if (!e->mapped)
		e->buf = malloc(READ_BLOCK);
	e->anode_parent = e->anode_frame = 65536;
	e->node_parent = malloc(e->anode_parent * sizeof(*e->node_parent));
	e->node_frame = malloc(e->anode_frame * sizeof(*e->node_frame));
	e->prev_frame = malloc(MAX_DEPTH * sizeof(*e->prev_frame));
	e->prev_node = malloc(MAX_DEPTH * sizeof(*e->prev_node));
	e->prev_path = malloc(MAX_DEPTH * sizeof(*e->prev_path));
	e->span_off = malloc(MAX_DEPTH * sizeof(*e->span_off));
	e->span_len = malloc(MAX_DEPTH * sizeof(*e->span_len));
	e->repr = codec_repr_cache_new();
	e->hz.h = rs_sha256_new();
	if (!e->repr || !e->buf || !e->node_parent || !e->node_frame || !e->prev_frame ||
	    !e->prev_node || !e->prev_path || !e->span_off || !e->span_len || !e->hz.h)
		return rs_error_set(RS_EGENERIC, "out of memory");
	e->node_parent[0] = UINT32_MAX;
	e->node_frame[0] = UINT32_MAX;
	e->nnodes = 1;
	err = frame_table_grow(e);
	if (err)
		return err;
	err = node_table_grow(e);
	if (err)
		return err;
	if (dict && dict->base && dict->base_len)
		load_base(e, dict->base, dict->base_len);
	if (dict)
		e->next_base = &dict->next;
	if (e->mapped)
		hasher_start(&e->hz, e->buf, e->len);
	return 0;
}

/*
 * Parse the file: prefix, records, suffix. A mapped file's hash may still
 * be running: codec_build() checks it (codec_input_is_the_object) once the streams
 * are made, so that the two overlap.
 */
int codec_enc_parse(struct enc *e)
{
	int err;

	err = read_prefix(e);
	if (err)
		return err;
	err = read_records(e);
	if (err)
		return err;
	err = read_suffix(e);
	if (err)
		return err;
	hasher_parse_done(&e->hz);
	return 0;
}

int rs_codec_encode_file(struct rs_buf *out, int *applies, const char *path, uint64_t size,
			 const struct rs_id *oid, struct rs_codec_dict *dict, struct rs_codec_stats *stats)
{
	struct rs_codec_stats local;
	struct enc e;
	int err;

	if (!stats)
		stats = &local;
	memset(stats, 0, sizeof(*stats));
	*applies = 0;
	err = codec_enc_open(&e, path, size, dict, stats);
	if (err)
		goto out;
	err = codec_enc_parse(&e);
	if (err)
		goto out;
	/* codec_build() proves the container: what it rebuilds is the object, byte for byte. */
	err = codec_build(&e, out, size, oid);
	if (err)
		goto out;
	stats->records = e.nrecords;
	stats->frames = e.nframes;
	stats->nodes = e.nnodes;
	stats->container = out->len;
	stats->new_base = (uint64_t)e.rebase;
	if (dict)
		dict->block_len = e.block_len;
	*applies = 1;
out:
	if (err == DECLINE) {
		err = 0;
		rs_error_clear();
		rs_buf_clear(out);
	}
	codec_enc_release(&e);
	return err;
}

