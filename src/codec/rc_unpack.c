/*
 * The range coder's decoder (rc_model.h has the coder and the models;
 * rc_pack.c is the encoder). Its input comes from a remote: reads never
 * pass its end (bytes past it read as 0 and are counted), the output is
 * exactly the length the caller allocated, and a stream that codes less
 * or more than that, or does not end where its coded bytes end, is
 * refused.
 */
#include "codec/rc_model.h"
#include "codec/varint.h"

#include <stdlib.h>

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
static int rc_get_uint(struct rc_dec *d, struct rc_uint *u, uint64_t *out)
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

static int corrupt(void)
{
	return rs_error_set(RS_ECORRUPT, "the session container is damaged: "
			    "a range-coded stream does not decode to its length");
}

int rs_rc_unpack(unsigned char *raw, size_t raw_len, enum rc_kind kind, int version, const unsigned char *p, size_t n)
{
	return rs_rc_unpack_base(raw, raw_len, kind, version, NULL, p, n);
}

int rs_rc_unpack_base(unsigned char *raw, size_t raw_len, enum rc_kind kind, int version, const struct rc_base *base,
		      const unsigned char *p, size_t n)
{
	struct rc_dec d;
	struct rc_model m;
	size_t at = 0;
	int i, err;

	if (n < 5 || p[0] != 0)
		return corrupt();
	err = rc_model_init(&m, kind, version, base);
	if (err)
		return err;
	memset(&d, 0, sizeof(d));
	d.p = p;
	d.len = n;
	d.counted = rc_lengths_counted(kind, version);
	d.range = 0xffffffffu;
	for (i = 0; i < 5; i++)
		d.code = d.code << 8 | rc_next(&d);
	while (at < raw_len) {
		unsigned char tmp[10];
		uint64_t v;
		size_t vl;

		if (rc_get_uint(&d, rc_model_context(&m), &v) || d.overrun) {
			err = corrupt();
			goto out;
		}
		rc_model_saw(&m, v);
		/* the value as a varint, which must fit what is left of the output */
		vl = codec_varint_put(tmp, v);
		if (vl > raw_len - at) {
			err = corrupt();
			goto out;
		}
		memcpy(raw + at, tmp, vl);
		at += vl;
	}
	if (d.pos != d.len || d.overrun)
		err = corrupt();
out:
	rc_model_release(&m);
	return err;
}
