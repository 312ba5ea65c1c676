/*
 * 32-byte ids. Chunk ids and LFS oids are SHA-256 digests of the bytes
 * they name; pack ids have the same size but are random (store/format.h).
 * Hashing goes through OpenSSL's EVP interface (SHA-NI where the CPU has it).
 */
#ifndef RS_HASH_H
#define RS_HASH_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

#define RS_ID_RAWSZ 32
#define RS_ID_HEXSZ 64

struct rs_id {
	unsigned char id[RS_ID_RAWSZ];
};

/* Streaming hasher. Caller owns it: rs_sha256_new / rs_sha256_free. */
struct rs_sha256;

struct rs_sha256 *rs_sha256_new(void);
void rs_sha256_update(struct rs_sha256 *h, const void *p, size_t n);
/* Writes the digest to `out` and resets the hasher for reuse. */
void rs_sha256_final(struct rs_sha256 *h, struct rs_id *out);
void rs_sha256_free(struct rs_sha256 *h);

/* One-shot digest of a buffer. */
void rs_sha256(struct rs_id *out, const void *p, size_t n);

/*
 * Digest `len` bytes of the file at `path` from `off` with the OpenSSL
 * digest named `md` ("SHA256", "MD5"), reading 1 MiB at a time. `out`
 * needs room for 64 bytes; *outlen gets the digest's length. RS_ECORRUPT
 * when the file is shorter, RS_EGENERIC when it cannot be read.
 */
RS_MUST_CHECK
int rs_digest_file(const char *md, const char *path, uint64_t off, uint64_t len,
		   unsigned char *out, unsigned int *outlen);

/* `out` must hold RS_ID_HEXSZ + 1 bytes; lower-case hex, NUL-terminated. */
void rs_id_to_hex(char *out, const struct rs_id *id);

/*
 * Parse exactly 64 lower-case hex digits (git-lfs's oid form).
 * RS_EUSAGE on anything else; `out` is written only on success.
 */
RS_MUST_CHECK
int rs_id_from_hex(struct rs_id *out, const char *hex, size_t len);

int rs_id_cmp(const struct rs_id *a, const struct rs_id *b);
int rs_id_is_zero(const struct rs_id *id);

/* Little-endian fixed-width integers for the on-disk formats. */
static inline void rs_put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}
static inline void rs_put_le64(unsigned char *p, uint64_t v)
{
	rs_put_le32(p, (uint32_t)v);
	rs_put_le32(p + 4, (uint32_t)(v >> 32));
}
static inline uint32_t rs_get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t rs_get_le64(const unsigned char *p)
{
	return (uint64_t)rs_get_le32(p) | (uint64_t)rs_get_le32(p + 4) << 32;
}

/* Whether the `n` bytes at `p` (a format's reserved field) are all zero. */
static inline int rs_all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

#endif
