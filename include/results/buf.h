/*
 * rs_buf: a growable byte buffer that is always NUL-terminated.
 *
 * Ownership: the struct is the caller's (rs_buf_init / rs_buf_release);
 * `ptr` belongs to the buffer until rs_buf_detach hands it over.
 * Every buffer has a cap (`max`): growing past it fails with RS_EUSAGE,
 * which is how a parser refuses oversized untrusted input.
 */
#ifndef RESULTS_BUF_H
#define RESULTS_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "results/error.h"

/* Every result below that is an error code must be checked (docs/hacking.md). */
#define RS_BUF_CHECK RS_MUST_CHECK

struct rs_buf {
	char *ptr;
	size_t len;
	size_t alloc;
	size_t max; /* 0: no cap beyond SIZE_MAX / 2 */
};

#define RS_BUF_INIT { NULL, 0, 0, 0 }

void rs_buf_init(struct rs_buf *b, size_t max);
void rs_buf_release(struct rs_buf *b);
void rs_buf_clear(struct rs_buf *b);

/* Make room for `extra` more bytes. RS_EUSAGE past the cap. */
RS_BUF_CHECK
int rs_buf_grow(struct rs_buf *b, size_t extra);
RS_BUF_CHECK
int rs_buf_put(struct rs_buf *b, const void *p, size_t n);
RS_BUF_CHECK
int rs_buf_puts(struct rs_buf *b, const char *s);
RS_BUF_CHECK
int rs_buf_putc(struct rs_buf *b, char c);
RS_BUF_CHECK
int rs_buf_printf(struct rs_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
RS_BUF_CHECK
int rs_buf_vprintf(struct rs_buf *b, const char *fmt, va_list ap);

/* Hand the bytes to the caller (free() them); the buffer is left empty. */
char *rs_buf_detach(struct rs_buf *b, size_t *len);

/* A C string that is never NULL (borrowed). */
const char *rs_buf_cstr(const struct rs_buf *b);

#endif
