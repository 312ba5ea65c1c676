#include "util/hash.h"
#include "util/error.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

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

void rs_sha256_update(struct rs_sha256 *h, const void *p, size_t n)
{
	int ok = EVP_DigestUpdate(h->ctx, p, n);

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
	unsigned int len = 0;
	int ok = EVP_Digest(p, n, out->id, &len, EVP_sha256(), NULL);

	assert(ok == 1 && len == RS_ID_RAWSZ);
	(void)ok;
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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int rs_id_from_hex(struct rs_id *out, const char *hex, size_t len)
{
	struct rs_id id;
	size_t i;

	if (len != RS_ID_HEXSZ)
		return rs_error_set(RS_EUSAGE, "an id is 64 hex digits, got %zu characters", len);
	for (i = 0; i < RS_ID_RAWSZ; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

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
