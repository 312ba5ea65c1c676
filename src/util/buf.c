#include "results/buf.h"
#include "results/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_buf_init(struct rs_buf *b, size_t max)
{
	b->ptr = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
}

void rs_buf_release(struct rs_buf *b)
{
	free(b->ptr);
	rs_buf_init(b, b->max);
}

void rs_buf_clear(struct rs_buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

int rs_buf_grow(struct rs_buf *b, size_t extra)
{
	size_t limit = b->max ? b->max : (size_t)-1 / 2;
	size_t want, alloc;
	char *p;

	if (extra > limit || b->len > limit - extra)
		return rs_error_set(RS_ETOOBIG,
				    "input larger than the limit of %zu bytes", limit);
	want = b->len + extra + 1;
	if (want <= b->alloc)
		return 0;
	alloc = b->alloc ? b->alloc : 64;
	while (alloc < want)
		alloc = alloc < (size_t)-1 / 4 ? alloc * 2 : want;
	p = realloc(b->ptr, alloc);
	if (!p)
		return rs_error_set(RS_EGENERIC, "out of memory (%zu bytes)", alloc);
	b->ptr = p;
	b->alloc = alloc;
	return 0;
}

int rs_buf_put(struct rs_buf *b, const void *p, size_t n)
{
	int err = rs_buf_grow(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = '\0';
	return 0;
}

int rs_buf_puts(struct rs_buf *b, const char *s)
{
	return rs_buf_put(b, s, strlen(s));
}

int rs_buf_putc(struct rs_buf *b, char c)
{
	return rs_buf_put(b, &c, 1);
}

int rs_buf_vprintf(struct rs_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, err;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return rs_error_set(RS_EGENERIC, "bad format string");
	err = rs_buf_grow(b, (size_t)n);
	if (err)
		return err;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int rs_buf_printf(struct rs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = rs_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return err;
}

char *rs_buf_detach(struct rs_buf *b, size_t *len)
{
	char *p = b->ptr;

	if (!p)
		p = calloc(1, 1);
	if (len)
		*len = b->len;
	rs_buf_init(b, b->max);
	return p;
}

const char *rs_buf_cstr(const struct rs_buf *b)
{
	return b->ptr ? b->ptr : "";
}
