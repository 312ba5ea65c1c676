/*
 * Session containers come from a remote: untrusted. The first input byte
 * picks the side:
 *   odd:  the second byte is the size the object may have, in 16 KiB
 *         units, the rest a container; decoding it must not crash, must stay
 *         within the size it is given, and must never write more.
 *   even: the rest is a file; if the encoder takes it, the container must
 *         decode to exactly the file (the encoder's own proof, checked
 *         again here from the outside).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/session_codec.h"
#include "results/buf.h"
#include "util/hash.h"

#define MAX_OUT (4u * 1024 * 1024)

static int collect(void *ctx, const void *p, size_t n)
{
	return rs_buf_put(ctx, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_buf out = RS_BUF_INIT, back = RS_BUF_INIT;

	if (size < 1)
		return 0;
	rs_buf_init(&back, MAX_OUT);
	if (data[0] & 1) {
		uint64_t max = size > 1 ? data[1] * 16384u : 0;

		if (size < 2)
			return 0;
		if (rs_codec_decode(data + 2, size - 2, max, collect, &back) == 0 && back.len > max)
			abort();
	} else {
		char path[] = "/tmp/rs-fuzz-codec-XXXXXX";
		int fd = mkstemp(path), applies = 0;
		struct rs_codec_dict dict;
		struct rs_buf next = RS_BUF_INIT;
		struct rs_id oid;

		if (fd < 0)
			abort();
		if (write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
			abort();
		close(fd);
		rs_sha256(&oid, data + 1, size - 1);
		memset(&dict, 0, sizeof(dict));
		if (rs_codec_encode_file(&out, &applies, path, size - 1, &oid, &dict, NULL) == 0 && applies) {
			if (rs_codec_decode((unsigned char *)out.ptr, out.len, size - 1, collect, &back) ||
			    back.len != size - 1 || memcmp(back.ptr, data + 1, size - 1))
				abort();
			/* again with the base it made: the base kept, the tree coded against its own (version 5) */
			next = dict.next;
			memset(&dict, 0, sizeof(dict));
			dict.base = (const unsigned char *)next.ptr;
			dict.base_len = next.len;
			rs_buf_clear(&back);
			if (rs_codec_encode_file(&out, &applies, path, size - 1, &oid, &dict, NULL) == 0 && applies &&
			    (rs_codec_decode((unsigned char *)out.ptr, out.len, size - 1, collect, &back) ||
			     back.len != size - 1 || memcmp(back.ptr, data + 1, size - 1)))
				abort();
		}
		rs_buf_release(&dict.next);
		rs_buf_release(&next);
		unlink(path);
	}
	rs_buf_release(&out);
	rs_buf_release(&back);
	return 0;
}
