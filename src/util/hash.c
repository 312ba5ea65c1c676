#include "util/hash.h"
#include "results/error.h"
#include "util/hex.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

struct rs_sha256 {
	EVP_MD_CTX *ctx;
};

struct rs_sha256 *rs_sha256_new(void)
{
	struct rs_sha256 *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(h->ctx);
		free(h);
		return NULL;
	}
	return h;
}

/*
 * Input longer than HASH_DIRECT is hashed through a small buffer, a
 * slice at a time: on this project's VMs SHA-256 straight from memory
 * (a mapped 224 MB session) took 284-325 ms, and copied 16 KB at a time
 * into a buffer it reads from the cache, 166-182 ms (docs/benchmarks.md).
 */
#define HASH_DIRECT (256u * 1024)
#define HASH_SLICE (16u * 1024)

static int update(EVP_MD_CTX *ctx, const void *p, size_t n)
{
	const unsigned char *at = p;
	unsigned char buf[HASH_SLICE];
	int ok = 1;

	if (n <= HASH_DIRECT)
		return EVP_DigestUpdate(ctx, p, n);
	while (n && ok == 1) {
		size_t k = n < HASH_SLICE ? n : HASH_SLICE;

		memcpy(buf, at, k);
		ok = EVP_DigestUpdate(ctx, buf, k);
		at += k;
		n -= k;
	}
	return ok;
}

void rs_sha256_update(struct rs_sha256 *h, const void *p, size_t n)
{
	int ok = update(h->ctx, p, n);

	assert(ok == 1);
	(void)ok;
}

void rs_sha256_final(struct rs_sha256 *h, struct rs_id *out)
{
	unsigned int len = 0;
	int ok = EVP_DigestFinal_ex(h->ctx, out->id, &len);

	assert(ok == 1 && len == RS_ID_RAWSZ);
	ok = EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL);
	assert(ok == 1);
	(void)ok;
}

void rs_sha256_free(struct rs_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

void rs_sha256(struct rs_id *out, const void *p, size_t n)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
		 update(ctx, p, n) == 1 && EVP_DigestFinal_ex(ctx, out->id, &len) == 1;

	assert(ok && len == RS_ID_RAWSZ);
	(void)ok;
	EVP_MD_CTX_free(ctx);
}

void rs_id_to_hex(char *out, const struct rs_id *id)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < RS_ID_RAWSZ; i++) {
		out[2 * i] = digits[id->id[i] >> 4];
		out[2 * i + 1] = digits[id->id[i] & 15];
	}
	out[RS_ID_HEXSZ] = '\0';
}

int rs_id_from_hex(struct rs_id *out, const char *hex, size_t len)
{
	struct rs_id id;
	size_t i;

	if (len != RS_ID_HEXSZ)
		return rs_error_set(RS_EUSAGE, "an id is 64 hex digits, got %zu characters", len);
	for (i = 0; i < RS_ID_RAWSZ; i++) {
		int hi = rs_hex_val_lower(hex[2 * i]), lo = rs_hex_val_lower(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return rs_error_set(RS_EUSAGE, "an id is lower-case hex, got '%.64s'", hex);
		id.id[i] = (unsigned char)(hi << 4 | lo);
	}
	*out = id;
	return 0;
}

int rs_id_cmp(const struct rs_id *a, const struct rs_id *b)
{
	return memcmp(a->id, b->id, RS_ID_RAWSZ);
}

int rs_id_is_zero(const struct rs_id *id)
{
	static const struct rs_id zero;

	return memcmp(id, &zero, sizeof(zero)) == 0;
}

int rs_digest_file(const char *md, const char *path, uint64_t off, uint64_t len,
		   unsigned char *out, unsigned int *outlen)
{
	const EVP_MD *type = EVP_get_digestbyname(md);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char *chunk = malloc(1 << 20);
	uint64_t done = 0;
	int fd = -1, err = 0;

	if (!type || !ctx || !chunk || EVP_DigestInit_ex(ctx, type, NULL) != 1) {
		err = rs_error_set(RS_EGENERIC, "cannot start a %s digest", md);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);
		goto out;
	}
	while (done < len) {
		uint64_t left = len - done;
		ssize_t n = pread(fd, chunk, left < (1 << 20) ? (size_t)left : (1 << 20),
				  (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
			goto out;
		}
		if (n == 0) {
			err = rs_error_set(RS_ECORRUPT, "'%s' is shorter than expected", path);
			goto out;
		}
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
		done += (uint64_t)n;
	}
	if (EVP_DigestFinal_ex(ctx, out, outlen) != 1)
		err = rs_error_set(RS_EGENERIC, "cannot finish a %s digest", md);
out:
	if (fd >= 0)
		close(fd);
	free(chunk);
	EVP_MD_CTX_free(ctx);
	return err;
}
