/*
 * Manifests, pack indexes, pack headers and FORMAT files come from the
 * remote: untrusted. The first input byte picks the parser (its low two
 * bits) and whether the trailer checksum is recomputed (bit 2); the rest
 * is the file. With the checksum recomputed over the mutated bytes, the
 * fuzzer gets past it to the field checks behind it (lengths, reserved
 * bytes, codecs, offsets, order), which a random flip never reaches
 * otherwise. A parse that succeeds must re-encode to the same bytes (one
 * valid encoding per object): a reserved byte the parser let through
 * would show here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "results/buf.h"

static void fuzz_manifest(const unsigned char *p, size_t n)
{
	struct rs_buf again = RS_BUF_INIT;
	struct rs_manifest m;

	if (rs_manifest_parse(&m, NULL, p, n) == 0) {
		if (rs_manifest_encode(&again, &m) || again.len != n || memcmp(again.ptr, p, n))
			abort();
		rs_manifest_release(&m);
	}
	rs_buf_release(&again);
}

static void fuzz_idx(const unsigned char *p, size_t n)
{
	struct rs_buf again = RS_BUF_INIT;
	struct rs_chunk_ref *refs = NULL;
	size_t count = 0;

	if (rs_idx_parse(&refs, &count, NULL, p, n) == 0) {
		struct rs_id pack;

		memcpy(pack.id, p + 16, RS_ID_RAWSZ);
		if (rs_idx_encode(&again, &pack, refs, count) || again.len != n || memcmp(again.ptr, p, n))
			abort();
		free(refs);
	}
	rs_buf_release(&again);
}

static void fuzz_pack_header(const unsigned char *p, size_t n)
{
	unsigned char h[RS_PACK_HEADER_SIZE];

	if (rs_pack_header_check(p, n) == 0) {
		rs_pack_header(h);
		if (memcmp(h, p, sizeof(h)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy;
	size_t n;

	if (size < 1)
		return 0;
	n = size - 1;
	copy = malloc(n ? n : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + 1, n);
	if ((data[0] & 4) && n >= RS_ID_RAWSZ) {
		struct rs_id sum;

		rs_sha256(&sum, copy, n - RS_ID_RAWSZ);
		memcpy(copy + n - RS_ID_RAWSZ, sum.id, RS_ID_RAWSZ);
	}
	switch (data[0] & 3) {
	case 1:
		fuzz_manifest(copy, n);
		break;
	case 0:
		fuzz_idx(copy, n);
		break;
	case 2:
		fuzz_pack_header(copy, n);
		break;
	default:
		if (rs_format_text_check((const char *)copy, n) == 0 && n != strlen(RS_FORMAT_TEXT))
			abort();
		break;
	}
	free(copy);
	return 0;
}
