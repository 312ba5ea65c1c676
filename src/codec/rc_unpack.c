/*
 * The range coder's decoder (rc_model.h has the coder and the models;
 * rc_pack.c is the encoder). Its input comes from a remote: reads never
 * pass its end (bytes past it read as 0 and are counted), the output is
 * exactly the length the caller allocated, and a stream that codes less
 * or more than that, or does not end where its coded bytes end, is
 * refused.
 */
#include "codec/rc_coder.h"
#include "codec/varint.h"

#include <stdlib.h>

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
	int err;

	if (n < 5 || p[0] != 0)
		return corrupt();
	err = rc_model_init(&m, kind, version, base);
	if (err)
		return err;
	rc_dec_start(&d, p, n, rc_lengths_counted(kind, version));
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
