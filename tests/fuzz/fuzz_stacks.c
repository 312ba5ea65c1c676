/*
 * Fuzz the stacks model (src/codec/rc_stacks.c), whose decoder reads
 * containers from a remote. Input: a byte of mode, two of a length L,
 * then the rest. Mode 0: the rest is a coded stream said to decode to L
 * raw bytes; mode 1: the same after a base (the first L bytes of the
 * rest, the coded stream after them, decoding to as many bytes as the
 * base has); mode 2: the rest is a raw stream to code. Properties
 * checked besides memory safety: whatever decodes is a raw stream the
 * coder takes and gives back exactly, and whatever codes decodes to the
 * raw stream it came from. The levels' budget is the one the decoder
 * gives an object of 256 bytes per raw byte: small enough that a deep
 * record reaches it, as a hostile one would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/rc_stacks.h"

static uint64_t budget(size_t len, size_t base_len)
{
	return ((uint64_t)len + base_len) * 128 + 64;
}

static void round_trip(const unsigned char *raw, size_t len, const unsigned char *base, size_t base_len, int must)
{
	struct rs_buf coded = RS_BUF_INIT;
	unsigned char *back;
	int err = rs_stacks_pack(&coded, raw, len, base, base_len, budget(len, base_len));

	if (err) {
		if (must)
			abort();
		rs_buf_release(&coded);
		return;
	}
	back = malloc(len ? len : 1);
	if (!back)
		abort();
	if (rs_stacks_unpack(back, len, base, base_len, (const unsigned char *)coded.ptr, coded.len,
			     budget(len, base_len)) ||
	    memcmp(back, raw, len))
		abort();
	free(back);
	rs_buf_release(&coded);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *base = NULL, *p;
	size_t n, len, base_len = 0;
	unsigned char *raw;

	if (size < 3)
		return 0;
	len = (size_t)data[1] | (size_t)data[2] << 8;
	p = data + 3;
	n = size - 3;
	if (data[0] % 3 == 2) {
		round_trip(p, n, NULL, 0, 0);
		return 0;
	}
	if (data[0] % 3 == 1) {
		if (len > n)
			return 0;
		base = p;
		base_len = len;
		p += len;
		n -= len;
		len = base_len;
	}
	raw = malloc(len ? len : 1);
	if (!raw)
		abort();
	if (rs_stacks_unpack(raw, len, base, base_len, p, n, budget(len, base_len)) == 0)
		round_trip(raw, len, base, base_len, 1);
	free(raw);
	return 0;
}
