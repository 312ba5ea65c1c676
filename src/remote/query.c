/* A query string as sorted pairs (see query.h). */
#include "remote/query.h"

#include "results/error.h"
#include "util/array.h"
#include "util/hex.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* p[0..n) decoded (and lower-cased, re-encoded) as a new string. */
static char *part(const char *p, size_t n, unsigned int flags, int is_name)
{
	struct rs_buf raw = RS_BUF_INIT, enc = RS_BUF_INIT;
	size_t i;

	if (rs_percent_decode(&raw, p, n, flags & RS_QUERY_PLUS_IS_SPACE))
		goto fail;
	if (is_name && (flags & RS_QUERY_LOWER_NAMES))
		for (i = 0; i < raw.len; i++)
			raw.ptr[i] = (char)tolower((unsigned char)raw.ptr[i]);
	if (!(flags & RS_QUERY_ENCODE))
		return rs_buf_detach(&raw, NULL);
	if (rs_percent_encode(&enc, rs_buf_cstr(&raw), raw.len, RS_SLASH_ENCODE))
		goto fail;
	rs_buf_release(&raw);
	return rs_buf_detach(&enc, NULL);
fail:
	rs_buf_release(&raw);
	rs_buf_release(&enc);
	return NULL;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct rs_query_pair *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

int rs_query_parse(struct rs_query *out, const char *query, unsigned int flags, size_t max)
{
	const char *q = query ? query : "";
	size_t alloc = 0;
	int err;

	while (*q && *q != '#') {
		const char *end = q + strcspn(q, "&#");
		const char *eq = memchr(q, '=', (size_t)(end - q));
		struct rs_query_pair *p;

		if (end == q) { /* "a=1&&b=2": an empty pair carries nothing */
			q++;
			continue;
		}
		if (out->n == max)
			return rs_error_set(RS_EUSAGE, "the query has more than %zu parameters", max);
		err = rs_array_grow(&out->pairs, &alloc, out->n + 1, sizeof(*out->pairs), 8);
		if (err)
			return err;
		p = &out->pairs[out->n];
		p->name = part(q, (size_t)((eq ? eq : end) - q), flags, 1);
		p->value = eq ? part(eq + 1, (size_t)(end - eq - 1), flags, 0) : calloc(1, 1);
		out->n++;
		if (!p->name || !p->value)
			return rs_error_set(RS_EGENERIC, "out of memory");
		q = *end == '&' ? end + 1 : end;
	}
	if (out->n)
		qsort(out->pairs, out->n, sizeof(*out->pairs), pair_cmp);
	return 0;
}

void rs_query_release(struct rs_query *q)
{
	size_t i;

	for (i = 0; i < q->n; i++) {
		free(q->pairs[i].name);
		free(q->pairs[i].value);
	}
	free(q->pairs);
	q->pairs = NULL;
	q->n = 0;
}
