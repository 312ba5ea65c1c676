/*
 * Growing an array of fixed-size elements: one doubling policy for the
 * parser's tables and the summary's, instead of one copy each.
 */
#ifndef RS_UTIL_ARRAY_H
#define RS_UTIL_ARRAY_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/error.h"

/*
 * Make room in *arr, of *alloc elements of `elem` bytes, for `need`:
 * doubling from `first`, the new elements zeroed. RS_EGENERIC, without a
 * message and *arr untouched, when out of memory (or past SIZE_MAX): the
 * caller says what it was growing. Inline, as the parser calls it per
 * stack frame and the room is nearly always there.
 */
RS_MUST_CHECK
static inline int rs_array_grow(void **arr, size_t *alloc, size_t need, size_t elem,
				size_t first)
{
	size_t n = *alloc ? *alloc : first;
	void *q;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return RS_EGENERIC;
		n *= 2;
	}
	if (n > SIZE_MAX / elem)
		return RS_EGENERIC;
	q = realloc(*arr, n * elem);
	if (!q)
		return RS_EGENERIC;
	memset((char *)q + *alloc * elem, 0, (n - *alloc) * elem);
	*arr = q;
	*alloc = n;
	return 0;
}

#endif
