/*
 * Manifests and pack indexes come from the remote: untrusted. The first
 * input byte picks the parser; the rest is the file. A parse that succeeds
 * must re-encode to the same bytes (one valid encoding per object).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_buf again = RS_BUF_INIT;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		struct rs_manifest m;

		if (rs_manifest_parse(&m, NULL, data + 1, size - 1) == 0) {
			if (rs_manifest_encode(&again, &m) || again.len != size - 1 ||
			    memcmp(again.ptr, data + 1, size - 1))
				abort();
			rs_manifest_release(&m);
		}
	} else {
		struct rs_chunk_ref *refs = NULL;
		size_t n = 0;

		if (rs_idx_parse(&refs, &n, NULL, data + 1, size - 1) == 0) {
			struct rs_id pack;

			memcpy(pack.id, data + 1 + 16, RS_ID_RAWSZ);
			if (rs_idx_encode(&again, &pack, refs, n) || again.len != size - 1 ||
			    memcmp(again.ptr, data + 1, size - 1))
				abort();
			free(refs);
		}
	}
	rs_buf_release(&again);
	return 0;
}
