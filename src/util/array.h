/*
 * Growing an array of fixed-size elements: the one way the tree does it
 * (git's ALLOC_GROW, without the macro), for the store's id lists, the
 * parser's tables, the summary's and the retention plan.
 */
#ifndef RS_UTIL_ARRAY_H
#define RS_UTIL_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/error.h"
#include "util/hash.h"

/*
 * Make room for `need` elements of `elem` bytes in the array whose
 * pointer is at `arrp` (a `T **`, passed as void * so that no caller
 * casts it to void **: the pointer is read and written with memcpy) and
 * whose capacity, in elements, is `*alloc`. The capacity doubles from
 * `first`; the new elements are zeroed. RS_EGENERIC "out of memory"
 * (also past SIZE_MAX), the array left as it was: a caller that knows
 * what it was growing may say so instead. Inline, as the parser calls it
 * per stack frame and the room is nearly always there.
 */
RS_MUST_CHECK
static inline int rs_array_grow(void *arrp, size_t *alloc, size_t need, size_t elem,
				size_t first)
{
	size_t n = *alloc ? *alloc : (first ? first : 1);
	void *q;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return rs_error_set(RS_EGENERIC, "out of memory");
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memcpy(&q, arrp, sizeof(q));
	q = realloc(q, n * elem);
	if (!q)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memset((char *)q + *alloc * elem, 0, (n - *alloc) * elem);
	memcpy(arrp, &q, sizeof(q));
	*alloc = n;
	return 0;
}

/* Append `id` to the array `*arr` of `*n` ids (capacity `*alloc`). */
RS_MUST_CHECK
static inline int rs_array_push_id(struct rs_id **arr, size_t *n, size_t *alloc, const struct rs_id *id)
{
	int err = rs_array_grow(arr, alloc, *n + 1, sizeof(**arr), 64);

	if (err)
		return err;
	(*arr)[(*n)++] = *id;
	return 0;
}

#endif
