/*
 * Git LFS pointer files (git-lfs docs/spec.md):
 *
 *     version https://git-lfs.github.com/spec/v1
 *     oid sha256:<64 lower-case hex>
 *     size <decimal bytes>
 *
 * "version" first, the other keys sorted bytewise, each line "key value\n",
 * the whole file under 1024 bytes. Keys are [a-z0-9.-]; values hold no
 * '\r' or '\n'. There is one valid encoding per pointer: the parser
 * accepts only what rs_pointer_format writes back byte for byte, keeping
 * keys it does not know (extensions such as "ext-0-foo") in order.
 */
#ifndef RS_POINTER_H
#define RS_POINTER_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "util/hash.h"

#define RS_POINTER_VERSION "https://git-lfs.github.com/spec/v1"
/* A pointer file is strictly smaller than this. */
#define RS_POINTER_MAX 1024
/* Unknown keys kept at most (more cannot fit in 1024 bytes anyway). */
#define RS_POINTER_MAX_EXTRA 64

struct rs_pointer_kv {
	char *key;   /* owned by the pointer */
	char *value;
};

struct rs_pointer {
	struct rs_id oid;
	uint64_t size;
	size_t nextra;               /* unknown keys, sorted */
	struct rs_pointer_kv *extra; /* owned; NULL when nextra == 0 */
};

#define RS_POINTER_INIT { { { 0 } }, 0, 0, NULL }

/* A pointer with just oid and size (no unknown keys). */
void rs_pointer_init(struct rs_pointer *p, const struct rs_id *oid, uint64_t size);

/* Free the unknown keys; the struct is the caller's. */
void rs_pointer_release(struct rs_pointer *p);

/*
 * Parse `n` bytes. RS_ECORRUPT for anything that is not a valid pointer
 * (including too large input); `out` is written only on success and must
 * then be released with rs_pointer_release.
 */
RS_MUST_CHECK
int rs_pointer_parse(struct rs_pointer *out, const void *data, size_t n);

/* Cheap test: does `data` start like a pointer file (and is it small)? */
int rs_pointer_looks_like(const void *data, size_t n);

/*
 * Append the canonical encoding to `out`. RS_EUSAGE when an unknown key
 * is malformed, out of order, or the result would reach 1024 bytes.
 */
RS_MUST_CHECK
int rs_pointer_format(struct rs_buf *out, const struct rs_pointer *p);

#endif
