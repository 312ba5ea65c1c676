/*
 * LEB128 varints (7 bits per byte, low first, at most 10 bytes), as every
 * stream of a session container writes its numbers. Internal to
 * src/codec/: the container's reader and writer and the range coder's
 * share them.
 */
#ifndef RS_CODEC_VARINT_H
#define RS_CODEC_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "results/error.h"

/* The varint at p[*pos] (of `len` bytes) into *out, *pos past it; -1 when it is cut short or too long. */
RS_MUST_CHECK
static inline int codec_varint_get(const unsigned char *p, size_t len, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	int shift;

	for (shift = 0; shift < 64; shift += 7) {
		unsigned char b;

		if (*pos >= len)
			return -1;
		b = p[(*pos)++];
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* `v` as a varint into tmp (10 bytes); its length. */
static inline size_t codec_varint_put(unsigned char *tmp, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (unsigned char)v;
	return n;
}

#endif
