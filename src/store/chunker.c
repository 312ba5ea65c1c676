#include "store/chunker.h"
#include "results/error.h"

#include <pthread.h>

/*
 * The gear hash: fp = (fp << 1) + GEAR[byte]. Each step shifts the oldest
 * byte's contribution one bit further left, so after 64 bytes it is gone:
 * fp is a rolling hash over a 64-byte window at one shift and one add per
 * byte, which is what makes gear hashing several times faster than Rabin.
 *
 * A cut is declared where the masked bits of fp are all zero. The mask
 * bits are taken from the HIGH end of fp (FastCDC's "spread" masks in the
 * paper use scattered bits; high bits work as well because they mix the
 * whole window) since the low bits only depend on the last few bytes.
 *
 * Normalized chunking (FastCDC section 3.3): before avg_size we test a
 * mask with two more bits (cut probability 1/(4 avg)), after it a mask
 * with two fewer bits (4/avg). This squeezes the size distribution
 * towards avg_size, so chunks are rarely tiny (poor compression) or
 * near max_size (forced cuts, which do not resynchronise after an
 * insertion). No byte before min_size is hashed at all: those cuts would
 * be refused anyway, and skipping them makes chunking faster.
 *
 * The table is 256 fixed pseudo-random 64-bit values (splitmix64 from a
 * fixed seed). It is not part of the storage format: readers never chunk.
 * But every writer must use the same table and sizes for chunks of equal
 * content to get equal ids, so changing it costs deduplication against
 * everything stored before.
 */

static uint64_t gear[256];
static pthread_once_t gear_once = PTHREAD_ONCE_INIT;

static void gear_init(void)
{
	uint64_t x = 0x726573756c747321ull; /* "results!" */
	int i;

	for (i = 0; i < 256; i++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		gear[i] = z ^ (z >> 31);
	}
}

static uint64_t high_mask(unsigned bits)
{
	return bits == 0 ? 0 : ~0ull << (64 - bits);
}

int rs_chunker_init(struct rs_chunker *c, size_t min_size, size_t avg_size, size_t max_size)
{
	unsigned bits = 0;

	if (avg_size < 64 || (avg_size & (avg_size - 1)) || min_size > max_size ||
	    avg_size > max_size || min_size == 0)
		return rs_error_set(RS_EUSAGE, "bad chunk sizes %zu/%zu/%zu", min_size, avg_size, max_size);
	while (((size_t)1 << bits) < avg_size)
		bits++;
	pthread_once(&gear_once, gear_init);
	c->min_size = min_size;
	c->avg_size = avg_size;
	c->max_size = max_size;
	c->mask_small = high_mask(bits + 2);
	c->mask_large = high_mask(bits - 2);
	return 0;
}

size_t rs_chunker_next(const struct rs_chunker *c, const unsigned char *p, size_t n)
{
	size_t i, normal, end;
	uint64_t fp = 0;

	if (n <= c->min_size)
		return n;
	end = n < c->max_size ? n : c->max_size;
	normal = end < c->avg_size ? end : c->avg_size;
	/*
	 * Warm the hash over the 64 bytes before min_size so that a cut at
	 * min_size depends on content, not on where the chunk started.
	 */
	for (i = c->min_size - (c->min_size < 64 ? c->min_size : 64); i < c->min_size; i++)
		fp = (fp << 1) + gear[p[i]];
	for (; i < normal; i++) {
		fp = (fp << 1) + gear[p[i]];
		if (!(fp & c->mask_small))
			return i + 1;
	}
	for (; i < end; i++) {
		fp = (fp << 1) + gear[p[i]];
		if (!(fp & c->mask_large))
			return i + 1;
	}
	return end;
}
