/*
 * Content-defined chunking with a gear rolling hash (FastCDC, Xia et al.,
 * USENIX ATC 2016). A cut depends only on the bytes just before it, so an
 * insertion or deletion moves only the cuts near it and every chunk
 * further on keeps its id.
 */
#ifndef RS_CHUNKER_H
#define RS_CHUNKER_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

struct rs_chunker {
	size_t min_size;
	size_t avg_size; /* a power of two; it sets the masks (may be < min_size) */
	size_t max_size;
	uint64_t mask_small; /* used before avg_size: harder to match */
	uint64_t mask_large; /* used after avg_size: easier to match */
};

/*
 * Defaults chosen by measurement (docs/chunking.md). Session JSON repeats
 * the same frame strings over and over, so few 64-byte windows are new and
 * the mask matches about 20 times less often than on random bytes: a mask
 * tuned for 2 MiB chunks gave mostly forced 8 MiB cuts. Instead chunks are
 * at least 3 MiB (each compresses about as well as the whole file: zstd
 * needs that much context to reach 1/40) and then cut at the first match
 * of a mask set for 64 KiB, which on session data comes within ~100 KiB.
 */
#define RS_CHUNK_MIN (3u * 1024 * 1024)
#define RS_CHUNK_AVG (64u * 1024)
#define RS_CHUNK_MAX (8u * 1024 * 1024)

/*
 * Set up a chunker. avg_size must be a power of two, and
 * min_size, avg_size <= max_size. With avg_size < min_size every cut is
 * the first mask match after min_size. Returns RS_EUSAGE otherwise.
 */
RS_MUST_CHECK
int rs_chunker_init(struct rs_chunker *c, size_t min_size, size_t avg_size, size_t max_size);

/*
 * Length of the next chunk at the start of `p[0..n)`. The caller passes
 * max_size bytes, or all that is left at the end of the input; the result
 * is in [1, n] (n itself when no cut point is found before the maximum or
 * the end). Never reads beyond p[n - 1].
 *
 * A cut depends only on the bytes before it, so a shorter prefix gives
 * the same answer or less: rs_chunker_next(c, p, k) is the smaller of k
 * and rs_chunker_next(c, p, n) for any k <= n. A caller holding fewer
 * than max_size bytes may keep a result below k and needs more bytes
 * only when the result is k.
 */
size_t rs_chunker_next(const struct rs_chunker *c, const unsigned char *p, size_t n);

#endif
