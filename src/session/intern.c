/*
 * Open-addressing hash tables with linear probing (see intern.h).
 */
#include "session/intern.h"

#include <stdlib.h>

#include "results/error.h"

void rs_intern_release(struct rs_intern *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->count = 0;
}

uint32_t rs_intern_find(const struct rs_intern *t, const void *key, size_t len, uint64_t hash)
{
	return rs_intern_lookup(t, key, len, hash, NULL);
}

uint32_t rs_intern_lookup(const struct rs_intern *t, const void *key, size_t len, uint64_t hash,
			  const char **stored)
{
	size_t i;

	if (!t->slots)
		return RS_INTERN_NONE;
	for (i = hash & t->mask;; i = (i + 1) & t->mask) {
		const struct rs_intern_slot *s = &t->slots[i];

		if (!s->key)
			return RS_INTERN_NONE;
		if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0) {
			if (stored)
				*stored = s->key;
			return s->value;
		}
	}
}

static void place(struct rs_intern_slot *slots, size_t mask, const struct rs_intern_slot *in)
{
	size_t i;

	for (i = in->hash & mask; slots[i].key; i = (i + 1) & mask)
		;
	slots[i] = *in;
}

int rs_intern_insert(struct rs_intern *t, const void *key, size_t len, uint64_t hash,
		     uint32_t value)
{
	struct rs_intern_slot in = { hash, key, (uint32_t)len, value };

	if ((t->count + 1) * 2 > t->mask + 1 || !t->slots) {
		size_t cap = t->slots ? (t->mask + 1) * 2 : 64, i;
		struct rs_intern_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return rs_error_set(RS_EGENERIC, "out of memory growing a frame table");
		for (i = 0; t->slots && i <= t->mask; i++)
			if (t->slots[i].key)
				place(n, cap - 1, &t->slots[i]);
		free(t->slots);
		t->slots = n;
		t->mask = cap - 1;
	}
	place(t->slots, t->mask, &in);
	t->count++;
	return 0;
}

void rs_intern_u64_release(struct rs_intern_u64 *t)
{
	free(t->slots);
	t->slots = NULL;
	t->mask = 0;
	t->count = 0;
}

uint32_t rs_intern_u64_find(const struct rs_intern_u64 *t, uint64_t key)
{
	size_t i;

	if (!t->slots)
		return RS_INTERN_NONE;
	for (i = rs_intern_mix64(key) & t->mask;; i = (i + 1) & t->mask) {
		if (t->slots[i].key == 0)
			return RS_INTERN_NONE;
		if (t->slots[i].key == key + 1)
			return t->slots[i].value;
	}
}

static void place_u64(struct rs_intern_u64_slot *slots, size_t mask, uint64_t stored,
		      uint32_t value)
{
	size_t i;

	for (i = rs_intern_mix64(stored - 1) & mask; slots[i].key; i = (i + 1) & mask)
		;
	slots[i].key = stored;
	slots[i].value = value;
}

int rs_intern_u64_insert(struct rs_intern_u64 *t, uint64_t key, uint32_t value)
{
	if (key == UINT64_MAX)
		return rs_error_set(RS_EUSAGE, "hash key out of range");
	if ((t->count + 1) * 2 > t->mask + 1 || !t->slots) {
		size_t cap = t->slots ? (t->mask + 1) * 2 : 256, i;
		struct rs_intern_u64_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return rs_error_set(RS_EGENERIC, "out of memory growing a call tree");
		for (i = 0; t->slots && i <= t->mask; i++)
			if (t->slots[i].key)
				place_u64(n, cap - 1, t->slots[i].key, t->slots[i].value);
		free(t->slots);
		t->slots = n;
		t->mask = cap - 1;
	}
	place_u64(t->slots, t->mask, key + 1, value);
	t->count++;
	return 0;
}
