/*
 * LFS pointer files, parsed strictly: a file is accepted only when
 * rs_pointer_format would write the same bytes back. That is what git-lfs's
 * spec asks ("one valid encoding per object") and what lets the pre-push
 * check and `results fetch` trust a pointer read from a tree. Input is
 * untrusted (any blob of a clone) and is capped at RS_POINTER_MAX bytes
 * before anything is allocated.
 */
#include "git/pointer.h"

#include <stdlib.h>
#include <string.h>

#include "results/error.h"

#define VERSION_LINE "version " RS_POINTER_VERSION "\n"
#define OID_PREFIX "sha256:"

void rs_pointer_init(struct rs_pointer *p, const struct rs_id *oid, uint64_t size)
{
	memset(p, 0, sizeof(*p));
	p->oid = *oid;
	p->size = size;
}

static void free_kvs(struct rs_pointer_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void rs_pointer_release(struct rs_pointer *p)
{
	if (!p)
		return;
	free_kvs(p->extra, p->nextra);
	p->extra = NULL;
	p->nextra = 0;
}

int rs_pointer_looks_like(const void *data, size_t n)
{
	return n < RS_POINTER_MAX && n >= sizeof(VERSION_LINE) - 1 &&
	       memcmp(data, VERSION_LINE, sizeof(VERSION_LINE) - 1) == 0;
}

static int key_ok(const char *k, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		char c = k[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/* Printable, no control bytes: they could not survive a round trip as C strings. */
static int value_ok(const char *v, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c < 0x20 || c == 0x7f)
			return 0;
	}
	return 1;
}

/* Bytewise comparison of two keys of known length, like strcmp. */
static int key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c)
		return c;
	return an < bn ? -1 : an > bn;
}

/* Canonical decimal: no sign, no leading zero, at most INT64_MAX (git-lfs
   stores sizes as int64). */
static int parse_size(uint64_t *out, const char *s, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

/* What rs_pointer_parse has read so far. */
struct pointer_parse {
	struct rs_id oid;
	uint64_t size;
	int have_oid, have_size;
	struct rs_pointer_kv *extra;
	size_t nextra;
};

/* A key other than version, oid and size: kept as it is, within the cap. */
static int take_extra(struct pointer_parse *pp, const char *key, size_t klen, const char *val,
		      size_t vlen)
{
	struct rs_pointer_kv *grown;

	if (pp->nextra == RS_POINTER_MAX_EXTRA)
		return rs_error_set(RS_ECORRUPT, "LFS pointer has too many keys");
	grown = realloc(pp->extra, (pp->nextra + 1) * sizeof(*grown));
	if (!grown)
		return rs_error_set(RS_EGENERIC, "out of memory");
	pp->extra = grown;
	grown[pp->nextra].key = strndup(key, klen);
	grown[pp->nextra].value = strndup(val, vlen);
	pp->nextra++;
	if (!grown[pp->nextra - 1].key || !grown[pp->nextra - 1].value)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

/* One "key value" line after the version line, its syntax checked. */
static int take_line(struct pointer_parse *pp, const char *key, size_t klen, const char *val,
		     size_t vlen)
{
	size_t pl = sizeof(OID_PREFIX) - 1;

	if (klen == 7 && memcmp(key, "version", 7) == 0)
		return rs_error_set(RS_ECORRUPT, "LFS pointer repeats its version");
	if (klen == 3 && memcmp(key, "oid", 3) == 0) {
		if (vlen != pl + RS_ID_HEXSZ || memcmp(val, OID_PREFIX, pl) != 0 ||
		    rs_id_from_hex(&pp->oid, val + pl, RS_ID_HEXSZ) < 0)
			return rs_error_set(RS_ECORRUPT, "LFS pointer oid is not sha256:<64 hex>");
		pp->have_oid = 1;
		return 0;
	}
	if (klen == 4 && memcmp(key, "size", 4) == 0) {
		if (parse_size(&pp->size, val, vlen) < 0)
			return rs_error_set(RS_ECORRUPT, "LFS pointer size is not a canonical number");
		pp->have_size = 1;
		return 0;
	}
	return take_extra(pp, key, klen, val, vlen);
}

int rs_pointer_parse(struct rs_pointer *out, const void *data, size_t n)
{
	const char *s = data, *end = s + n, *line;
	const char *prev_key = NULL;
	size_t prev_len = 0;
	struct pointer_parse pp;
	int err;

	if (n >= RS_POINTER_MAX)
		return rs_error_set(RS_ECORRUPT, "not an LFS pointer: %zu bytes (a pointer is under %d)",
				    n, RS_POINTER_MAX);
	if (!rs_pointer_looks_like(data, n))
		return rs_error_set(RS_ECORRUPT, "not an LFS pointer: no version line");
	if (s[n - 1] != '\n')
		return rs_error_set(RS_ECORRUPT, "LFS pointer does not end with a newline");

	memset(&pp, 0, sizeof(pp));
	for (line = s + sizeof(VERSION_LINE) - 1; line < end;) {
		/* nl cannot be NULL: the last byte is '\n'. */
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *sp = memchr(line, ' ', (size_t)(nl - line));
		size_t klen = sp ? (size_t)(sp - line) : 0;
		size_t vlen = sp ? (size_t)(nl - sp - 1) : 0;

		if (!sp)
			err = rs_error_set(RS_ECORRUPT, "LFS pointer line without a value");
		else if (!key_ok(line, klen) || !value_ok(sp + 1, vlen))
			err = rs_error_set(RS_ECORRUPT, "malformed LFS pointer line");
		else if (prev_key && key_cmp(prev_key, prev_len, line, klen) >= 0)
			err = rs_error_set(RS_ECORRUPT, "LFS pointer keys not sorted or repeated");
		else
			err = take_line(&pp, line, klen, sp + 1, vlen);
		if (err)
			goto out;
		prev_key = line;
		prev_len = klen;
		line = nl + 1;
	}
	if (!pp.have_oid || !pp.have_size) {
		err = rs_error_set(RS_ECORRUPT, "LFS pointer lacks its %s",
				   pp.have_oid ? "size" : "oid");
		goto out;
	}
	out->oid = pp.oid;
	out->size = pp.size;
	out->nextra = pp.nextra;
	out->extra = pp.extra;
	return 0;
out:
	free_kvs(pp.extra, pp.nextra);
	return err;
}

int rs_pointer_format(struct rs_buf *out, const struct rs_pointer *p)
{
	char hex[RS_ID_HEXSZ + 1];
	size_t start = out->len, i = 0;
	int err, wrote_oid = 0, wrote_size = 0;
	const char *prev = NULL;

	for (i = 0; i < p->nextra; i++) {
		const char *k = p->extra[i].key, *v = p->extra[i].value;

		if (!key_ok(k, strlen(k)) || !value_ok(v, strlen(v)) ||
		    strcmp(k, "version") == 0 || strcmp(k, "oid") == 0 ||
		    strcmp(k, "size") == 0 || (prev && strcmp(prev, k) >= 0))
			return rs_error_set(RS_EUSAGE, "LFS pointer key '%s' is malformed or out of order", k);
		prev = k;
	}
	rs_id_to_hex(hex, &p->oid);
	err = rs_buf_puts(out, VERSION_LINE);
	/* Merge "oid" and "size" into the sorted unknown keys. */
	for (i = 0; err == 0 && i <= p->nextra; i++) {
		const char *k = i < p->nextra ? p->extra[i].key : NULL;

		if (!wrote_oid && (!k || strcmp("oid", k) < 0)) {
			err = rs_buf_printf(out, "oid " OID_PREFIX "%s\n", hex);
			wrote_oid = 1;
		}
		if (err == 0 && !wrote_size && (!k || strcmp("size", k) < 0)) {
			err = rs_buf_printf(out, "size %llu\n", (unsigned long long)p->size);
			wrote_size = 1;
		}
		if (err == 0 && k)
			err = rs_buf_printf(out, "%s %s\n", k, p->extra[i].value);
	}
	if (err == 0 && (p->size > (uint64_t)INT64_MAX || out->len - start >= RS_POINTER_MAX))
		err = rs_error_set(RS_EUSAGE, "LFS pointer would be invalid (size or length)");
	if (err < 0) {
		out->len = start;
		if (out->ptr)
			out->ptr[start] = '\0';
	}
	return err;
}
