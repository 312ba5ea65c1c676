/*
 * Growing an array: the one way the store does it (git's ALLOC_GROW,
 * without the macro).
 */
#ifndef RS_STORE_ARRAY_H
#define RS_STORE_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/error.h"
#include "util/hash.h"

/*
 * Make room for `need` elements of `size` bytes in the array whose
 * pointer is at `arrp` (a `T **`, passed as void *) and whose capacity,
 * in elements, is `*alloc`. The capacity doubles, from 64. The array is
 * left as it was on failure (RS_EGENERIC, out of memory).
 */
RS_MUST_CHECK
static inline int rs_array_reserve(void *arrp, size_t *alloc, size_t need, size_t size)
{
	size_t want = *alloc ? *alloc : 64;
	void *p;

	if (need <= *alloc)
		return 0;
	while (want < need && want <= SIZE_MAX / 2)
		want *= 2;
	if (want < need || want > SIZE_MAX / size)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memcpy(&p, arrp, sizeof(p));
	p = realloc(p, want * size);
	if (!p)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memcpy(arrp, &p, sizeof(p));
	*alloc = want;
	return 0;
}

/* Append `id` to the array `*arr` of `*n` ids (capacity `*alloc`). */
RS_MUST_CHECK
static inline int rs_array_push_id(struct rs_id **arr, size_t *n, size_t *alloc, const struct rs_id *id)
{
	int err = rs_array_reserve(arr, alloc, *n + 1, sizeof(**arr));

	if (err)
		return err;
	(*arr)[(*n)++] = *id;
	return 0;
}

#endif
