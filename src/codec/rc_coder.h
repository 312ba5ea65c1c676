/*
 * The binary range coder itself, LZMA's kind (docs/codec.md, "Range-coded
 * streams"): the encoder's and the decoder's state and their one-bit
 * steps, shared by the value streams (rc_pack.c, rc_unpack.c) and the
 * stacks stream (rc_stacks.c), which code different things with the same
 * coder. Internal to src/codec/.
 */
#ifndef RS_CODEC_RC_CODER_H
#define RS_CODEC_RC_CODER_H

#include "codec/rc_model.h"

struct rc_enc {
	struct rs_buf *out;
	unsigned char *p;     /* out->ptr + out->len: room for RC_SLACK more bytes */
	size_t room;
	uint64_t low;
	uint32_t range;
	unsigned char cache;
	uint64_t pending;     /* bytes waiting for a carry: the cache, then 0xff ones */
	unsigned counted;     /* version 4: how far the lengths' probabilities count their uses (rc_update) */
	int err;
};

#define RC_SLACK 4096

static inline void rc_reserve(struct rc_enc *e)
{
	size_t used;

	if (e->room >= 16 || e->err)
		return;
	used = (size_t)(e->p - (unsigned char *)e->out->ptr);
	e->out->len = used;
	e->err = rs_buf_grow(e->out, RC_SLACK);
	e->p = (unsigned char *)e->out->ptr + used;
	e->room = e->err ? 0 : RC_SLACK;
}

static inline void rc_byte(struct rc_enc *e, unsigned char b)
{
	if (!e->room)
		rc_reserve(e);
	if (!e->room)
		return; /* e->err says why */
	*e->p++ = b;
	e->room--;
}

/* The top byte of `low` leaves, unless a carry may still reach it (then it waits). */
static inline void rc_shift_low(struct rc_enc *e)
{
	if ((uint32_t)e->low < 0xff000000u || (e->low >> 32) != 0) {
		unsigned char carry = (unsigned char)(e->low >> 32), b = e->cache;

		do {
			rc_byte(e, (unsigned char)(b + carry));
			b = 0xff;
		} while (--e->pending);
		e->cache = (unsigned char)(e->low >> 24);
	}
	e->pending++;
	e->low = (e->low & 0x00ffffffu) << 8;
}

static inline void rc_bit(struct rc_enc *e, rc_prob *p, unsigned bit, unsigned counted)
{
	uint32_t bound = (e->range >> RC_PROB_BITS) * rc_p(*p);

	if (!bit) {
		e->range = bound;
	} else {
		e->low += bound;
		e->range -= bound;
	}
	rc_update(p, bit, counted);
	while (e->range < RC_TOP) {
		e->range <<= 8;
		rc_shift_low(e);
	}
}

/* An encoder writing into `out` (cleared). */
static inline void rc_enc_start(struct rc_enc *e, struct rs_buf *out, unsigned counted)
{
	rs_buf_clear(out);
	memset(e, 0, sizeof(*e));
	e->out = out;
	e->counted = counted;
	e->range = 0xffffffffu;
	e->pending = 1;
	e->p = (unsigned char *)out->ptr;
}

/* Flush the encoder: 0 with `out` holding the stream, or an rs_buf error. */
RS_MUST_CHECK
static inline int rc_enc_finish(struct rc_enc *e)
{
	int i, err;

	for (i = 0; i < 5; i++)
		rc_shift_low(e);
	err = e->err;
	if (!err) {
		e->out->len = (size_t)(e->p - (unsigned char *)e->out->ptr);
		err = rs_buf_grow(e->out, 1); /* room for the terminating NUL rs_buf keeps */
		if (!err)
			e->out->ptr[e->out->len] = '\0';
	}
	return err;
}

/* A value with the probabilities of `u`: its bit length, then the bits below the top one. */
static inline void rc_put_uint(struct rc_enc *e, struct rc_uint *u, uint64_t v)
{
	int len = rc_bit_length(v), i, node = 1;

	for (i = 6; i >= 0; i--) {
		unsigned b = (unsigned)(len >> i) & 1;

		rc_bit(e, &u->len[node], b, e->counted);
		node = node << 1 | (int)b;
	}
	if (len < 2)
		return;
	node = 1;
	for (i = len - 2; i >= 0 && i >= len - 3; i--) {
		unsigned b = (unsigned)(v >> i) & 1;

		rc_bit(e, &u->high[len][node], b, 0);
		node = node << 1 | (int)b;
	}
	for (i = len - 4; i >= 0; i--)
		rc_bit(e, &u->low[len][i], (unsigned)(v >> i) & 1, 0);
}

/*
 * The decoder. Its input comes from a remote: reads never pass its end
 * (bytes past it read as 0 and are counted in `overrun`).
 */
struct rc_dec {
	const unsigned char *p;
	size_t len, pos;
	size_t overrun;       /* bytes read past the end */
	uint32_t range, code;
	unsigned counted;     /* version 4: how far the lengths' probabilities count their uses (rc_update) */
};

static inline unsigned char rc_next(struct rc_dec *d)
{
	if (d->pos < d->len)
		return d->p[d->pos++];
	d->overrun++;
	return 0;
}

/* A decoder over `n` bytes at `p`, which must be at least 5 and start with 0 (the caller checks). */
static inline void rc_dec_start(struct rc_dec *d, const unsigned char *p, size_t n, unsigned counted)
{
	int i;

	memset(d, 0, sizeof(*d));
	d->p = p;
	d->len = n;
	d->counted = counted;
	d->range = 0xffffffffu;
	for (i = 0; i < 5; i++)
		d->code = d->code << 8 | rc_next(d);
}

static inline unsigned rc_get_bit(struct rc_dec *d, rc_prob *p, unsigned counted)
{
	uint32_t bound = (d->range >> RC_PROB_BITS) * rc_p(*p);
	unsigned bit;

	if (d->code < bound) {
		d->range = bound;
		bit = 0;
	} else {
		d->code -= bound;
		d->range -= bound;
		bit = 1;
	}
	rc_update(p, bit, counted);
	while (d->range < RC_TOP) {
		d->range <<= 8;
		d->code = d->code << 8 | rc_next(d);
	}
	return bit;
}

/* The length (a 7-level tree: may say up to 127, refused above 64), then the bits below the top one. */
static inline int rc_get_uint(struct rc_dec *d, struct rc_uint *u, uint64_t *out)
{
	int len, i, node = 1;
	uint64_t v;

	for (i = 0; i < 7; i++)
		node = node << 1 | (int)rc_get_bit(d, &u->len[node], d->counted);
	len = node - 128;
	if (len > 64)
		return -1;
	if (len < 2) {
		*out = (uint64_t)len;
		return 0;
	}
	v = 1;
	node = 1;
	for (i = len - 2; i >= 0 && i >= len - 3; i--) {
		unsigned b = rc_get_bit(d, &u->high[len][node], 0);

		node = node << 1 | (int)b;
		v = v << 1 | b;
	}
	for (i = len - 4; i >= 0; i--)
		v = v << 1 | rc_get_bit(d, &u->low[len][i], 0);
	*out = v;
	return 0;
}

#endif
