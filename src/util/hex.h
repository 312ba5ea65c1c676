/*
 * Hex digits and percent-encoding (RFC 3986), written once for the tree.
 *
 * rs_hex_val reads one digit of either case; ids, which are written in
 * lower case only, use rs_hex_val_lower. rs_percent_encode keeps the
 * unreserved characters (ALPHA DIGIT - . _ ~) and writes every other byte
 * as %XX with upper-case digits, which is what SigV4 and Azure Shared Key
 * sign; `slash` says whether '/' stays (a path) or is encoded (a query
 * value, a single path segment).
 */
#ifndef RS_HEX_H
#define RS_HEX_H

#include <stddef.h>

#include "results/buf.h"

/* The value of hex digit `c` (0-9, a-f, A-F), or -1. */
int rs_hex_val(int c);
/* The same for lower-case digits only (0-9, a-f), or -1. */
int rs_hex_val_lower(int c);
/* Whether `s` is one or more hex digits of either case, and nothing else. */
int rs_hex_is(const char *s);

enum rs_slash {
	RS_SLASH_KEEP,   /* '/' is written as is: a path */
	RS_SLASH_ENCODE, /* '/' becomes %2F: a query value, one segment */
};

/* Append s[0..n) percent-encoded to `out`. */
RS_MUST_CHECK
int rs_percent_encode(struct rs_buf *out, const char *s, size_t n, enum rs_slash slash);
/* The same for a C string. */
RS_MUST_CHECK
int rs_percent_encode_str(struct rs_buf *out, const char *s, enum rs_slash slash);

/*
 * Append p[0..n) to `out` with every valid %XX decoded; a '%' not
 * followed by two hex digits stays as it is. With `plus_is_space`, '+'
 * becomes ' ' (application/x-www-form-urlencoded).
 */
RS_MUST_CHECK
int rs_percent_decode(struct rs_buf *out, const char *p, size_t n, int plus_is_space);

#endif
