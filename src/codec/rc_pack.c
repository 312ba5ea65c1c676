/*
 * The range coder's encoder (rc_model.h has the coder and the models;
 * rc_unpack.c is the decoder). The output grows in an rs_buf, a block at
 * a time, so that one byte costs no call.
 */
#include "codec/rc_model.h"
#include "codec/varint.h"

#include <stdlib.h>

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

static void rc_reserve(struct rc_enc *e)
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
static void rc_shift_low(struct rc_enc *e)
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

static void rc_put_uint(struct rc_enc *e, struct rc_uint *u, uint64_t v)
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

int rs_rc_pack(struct rs_buf *out, enum rc_kind kind, int version, const unsigned char *raw, size_t len)
{
	return rs_rc_pack_base(out, kind, version, NULL, raw, len);
}

int rs_rc_pack_base(struct rs_buf *out, enum rc_kind kind, int version, const struct rc_base *base,
		    const unsigned char *raw, size_t len)
{
	struct rc_enc e;
	struct rc_model m;
	size_t pos = 0;
	int err, i;

	err = rc_model_init(&m, kind, version, base);
	if (err)
		return err;
	rs_buf_clear(out);
	memset(&e, 0, sizeof(e));
	e.out = out;
	e.counted = rc_lengths_counted(kind, version);
	e.range = 0xffffffffu;
	e.pending = 1;
	e.p = (unsigned char *)out->ptr;
	while (pos < len && !e.err) {
		uint64_t v;

		if (codec_varint_get(raw, len, &pos, &v)) {
			err = 1;
			goto out;
		}
		rc_put_uint(&e, rc_model_context(&m), v);
		rc_model_saw(&m, v);
	}
	for (i = 0; i < 5; i++)
		rc_shift_low(&e);
	err = e.err;
	if (!err) {
		out->len = (size_t)(e.p - (unsigned char *)out->ptr);
		err = rs_buf_grow(out, 1); /* room for the terminating NUL rs_buf keeps */
		if (!err)
			out->ptr[out->len] = '\0';
	}
out:
	if (err)
		rs_buf_clear(out);
	rc_model_release(&m);
	return err;
}
