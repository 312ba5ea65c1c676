/*
 * The range coder's encoder (rc_model.h has the coder and the models;
 * rc_unpack.c is the decoder). The output grows in an rs_buf, a block at
 * a time, so that one byte costs no call.
 */
#include "codec/rc_coder.h"
#include "codec/varint.h"

#include <stdlib.h>

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
	int err;

	err = rc_model_init(&m, kind, version, base);
	if (err)
		return err;
	rc_enc_start(&e, out, rc_lengths_counted(kind, version));
	while (pos < len && !e.err) {
		uint64_t v;

		if (codec_varint_get(raw, len, &pos, &v)) {
			err = 1;
			goto out;
		}
		rc_put_uint(&e, rc_model_context(&m), v);
		rc_model_saw(&m, v);
	}
	err = rc_enc_finish(&e);
out:
	if (err)
		rs_buf_clear(out);
	rc_model_release(&m);
	return err;
}
