/*
 * Open-addressing hash tables used to intern frame strings (bytes -> id)
 * and call-tree edges (u64 -> id) in src/session, and by the retention
 * plan (src/repo/retention.c) to find a run's or an oid's items.
 *
 * Keys are borrowed: the caller keeps the bytes alive and at the same
 * address for the table's lifetime (the parser stores them in allocations
 * it never moves). Tables grow at 1/2 load, so a probe is short; the
 * stored 64-bit hash makes most mismatches cost no memcmp.
 */
#ifndef RS_SESSION_INTERN_H
#define RS_SESSION_INTERN_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RS_INTERN_NONE UINT32_MAX

struct rs_intern_slot {
	uint64_t hash;
	const char *key;   /* NULL: empty slot */
	uint32_t len;
	uint32_t value;
};

struct rs_intern {
	struct rs_intern_slot *slots;
	size_t mask;       /* capacity - 1; capacity is a power of two */
	size_t count;
};

#define RS_INTERN_INIT { NULL, 0, 0 }

struct rs_intern_u64_slot {
	uint64_t key;      /* stored as key + 1; 0: empty */
	uint32_t value;
};

struct rs_intern_u64 {
	struct rs_intern_u64_slot *slots;
	size_t mask;
	size_t count;
};

/*
 * A fast keyed hash over 8-byte words. Not cryptographic; the per-parser
 * random seed keeps crafted input from forcing every key into one chain.
 */
static inline uint64_t rs_intern_hash(const void *p, size_t n, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull);
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		s += 8;
		n -= 8;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

static inline uint64_t rs_intern_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

void rs_intern_release(struct rs_intern *t);
/*
 * The value stored for the key, or RS_INTERN_NONE. When found and
 * `stored` is not NULL, *stored is the table's own (stable) copy of the key.
 */
uint32_t rs_intern_find(const struct rs_intern *t, const void *key, size_t len, uint64_t hash);
uint32_t rs_intern_lookup(const struct rs_intern *t, const void *key, size_t len, uint64_t hash,
			  const char **stored);
/* Add a key known to be absent. RS_EGENERIC when out of memory. */
RS_MUST_CHECK
int rs_intern_insert(struct rs_intern *t, const void *key, size_t len, uint64_t hash,
		     uint32_t value);

void rs_intern_u64_release(struct rs_intern_u64 *t);
uint32_t rs_intern_u64_find(const struct rs_intern_u64 *t, uint64_t key);
RS_MUST_CHECK
int rs_intern_u64_insert(struct rs_intern_u64 *t, uint64_t key, uint32_t value);

#endif
