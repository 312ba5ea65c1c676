/* The store's file formats: round trips, and every kind of damage refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "util/hash.h"
#include "results/error.h"

static void fill_ref(struct rs_chunk_ref *r, unsigned seed)
{
	memset(r, 0, sizeof(*r));
	rs_sha256(&r->chunk, &seed, sizeof(seed));
	memset(r->pack.id, 0x40 + (int)seed, RS_ID_RAWSZ);
	r->offset = RS_PACK_HEADER_SIZE + 1000ull * seed;
	r->raw_len = 3000000 + seed;
	r->stored_len = 70000 + seed;
	r->codec = RS_CODEC_ZSTD;
}

static void make_manifest(struct rs_manifest *m, uint32_t n)
{
	uint32_t i;

	memset(m, 0, sizeof(*m));
	rs_sha256(&m->oid, "object", 6);
	m->nchunks = n;
	m->chunks = calloc(n ? n : 1, sizeof(*m->chunks));
	for (i = 0; i < n; i++) {
		fill_ref(&m->chunks[i], i);
		m->transformed_size += m->chunks[i].raw_len;
	}
	m->size = m->transformed_size;
}

/*
 * SHA-256 of inputs long enough to go through the hash's slices (over
 * 256 KB in one call): FIPS 180-2's million 'a', in one call, and in
 * updates that end inside a slice and on the 256 KB boundary.
 */
static void test_sha256_long_inputs(void **state)
{
	static const char want[] =
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	static const size_t splits[][3] = {
		{ 1000000, 0, 0 }, { 300001, 699999, 0 }, { 262144, 262145, 475711 },
		{ 16383, 983617, 0 },
	};
	char *a = malloc(1000000), hex[RS_ID_HEXSZ + 1];
	struct rs_id id;

	(void)state;
	assert_non_null(a);
	memset(a, 'a', 1000000);
	rs_sha256(&id, a, 1000000);
	rs_id_to_hex(hex, &id);
	assert_string_equal(hex, want);
	for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		struct rs_sha256 *h = rs_sha256_new();
		size_t at = 0;

		assert_non_null(h);
		for (int k = 0; k < 3; k++) {
			rs_sha256_update(h, a + at, splits[i][k]);
			at += splits[i][k];
		}
		assert_int_equal(at, 1000000);
		rs_sha256_final(h, &id);
		rs_id_to_hex(hex, &id);
		assert_string_equal(hex, want);
		rs_sha256_free(h);
	}
	free(a);
}

static void test_manifest_round_trip(void **state)
{
	struct rs_manifest m, back;
	struct rs_buf b = RS_BUF_INIT, again = RS_BUF_INIT;

	(void)state;
	make_manifest(&m, 5);
	assert_int_equal(rs_manifest_encode(&b, &m), 0);
	assert_int_equal(b.len, RS_MANIFEST_HEADER_SIZE + 5 * RS_MANIFEST_ENTRY_SIZE + RS_ID_RAWSZ);
	assert_int_equal(rs_manifest_parse(&back, &m.oid, (unsigned char *)b.ptr, b.len), 0);
	assert_int_equal(back.nchunks, 5);
	assert_int_equal(back.size, m.size);
	assert_memory_equal(back.chunks, m.chunks, 5 * sizeof(*m.chunks));
	assert_int_equal(rs_manifest_encode(&again, &back), 0);
	assert_int_equal(again.len, b.len);
	assert_memory_equal(again.ptr, b.ptr, b.len);
	rs_manifest_release(&m);
	rs_manifest_release(&back);
	rs_buf_release(&b);
	rs_buf_release(&again);
}

static void test_empty_object_manifest(void **state)
{
	struct rs_manifest m, back;
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	make_manifest(&m, 0);
	assert_int_equal(rs_manifest_encode(&b, &m), 0);
	assert_int_equal(rs_manifest_parse(&back, NULL, (unsigned char *)b.ptr, b.len), 0);
	assert_int_equal(back.nchunks, 0);
	assert_int_equal(back.size, 0);
	rs_manifest_release(&m);
	rs_manifest_release(&back);
	rs_buf_release(&b);
}

static void test_manifest_damage_refused(void **state)
{
	struct rs_manifest m, back;
	struct rs_buf b = RS_BUF_INIT;
	struct rs_id other;
	size_t i;

	(void)state;
	make_manifest(&m, 3);
	assert_int_equal(rs_manifest_encode(&b, &m), 0);
	/* Any flipped byte, anywhere, is caught. */
	for (i = 0; i < b.len; i++) {
		b.ptr[i] ^= 0x01;
		assert_int_equal(rs_manifest_parse(&back, NULL, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
		b.ptr[i] ^= 0x01;
	}
	/* Truncation at every length. */
	for (i = 0; i < b.len; i++)
		assert_int_equal(rs_manifest_parse(&back, NULL, (unsigned char *)b.ptr, i), RS_ECORRUPT);
	/* A valid manifest of another object. */
	rs_sha256(&other, "other", 5);
	assert_int_equal(rs_manifest_parse(&back, &other, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "another object"));
	rs_manifest_release(&m);
	rs_buf_release(&b);
}

static void test_manifest_sizes_must_add_up(void **state)
{
	struct rs_manifest m, back;
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	make_manifest(&m, 2);
	m.size += 1; /* identity transform: sizes must agree */
	assert_int_equal(rs_manifest_encode(&b, &m), 0);
	assert_int_equal(rs_manifest_parse(&back, NULL, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	rs_manifest_release(&m);
	rs_buf_release(&b);
}

static void test_idx_round_trip_sorted(void **state)
{
	struct rs_chunk_ref refs[4], *back = NULL;
	struct rs_id pack;
	struct rs_buf b = RS_BUF_INIT;
	size_t n = 0, i;

	(void)state;
	memset(pack.id, 0x41, RS_ID_RAWSZ);
	for (i = 0; i < 4; i++) {
		fill_ref(&refs[i], (unsigned)(10 - i));
		refs[i].pack = pack;
	}
	assert_int_equal(rs_idx_encode(&b, &pack, refs, 4), 0);
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), 0);
	assert_int_equal(n, 4);
	for (i = 1; i < n; i++)
		assert_true(rs_id_cmp(&back[i - 1].chunk, &back[i].chunk) < 0);
	for (i = 0; i < n; i++)
		assert_memory_equal(&back[i], &refs[i], sizeof(refs[i])); /* encode sorted refs in place */
	free(back);
	/* Damage anywhere is refused; an index of another pack too. */
	b.ptr[b.len / 2] ^= 0x10;
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	b.ptr[b.len / 2] ^= 0x10;
	pack.id[0] ^= 1;
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	rs_buf_release(&b);
}


/* Recompute the trailer after a change: what a hostile writer would do. */
static void reseal(struct rs_buf *b)
{
	struct rs_id sum;

	rs_sha256(&sum, b->ptr, b->len - RS_ID_RAWSZ);
	memcpy(b->ptr + b->len - RS_ID_RAWSZ, sum.id, RS_ID_RAWSZ);
}

static int parse_expect(struct rs_buf *b, int code, const char *needle)
{
	struct rs_manifest back;
	int err;

	reseal(b);
	err = rs_manifest_parse(&back, NULL, (unsigned char *)b->ptr, b->len);
	if (!err)
		rs_manifest_release(&back);
	if (err != code) {
		fprintf(stderr, "parse gave %d (%s), expected %d\n", err, rs_error_message(), code);
		return 0;
	}
	if (needle && !strstr(rs_error_message(), needle)) {
		fprintf(stderr, "message '%s' lacks '%s'\n", rs_error_message(), needle);
		return 0;
	}
	return 1;
}

/* Hostile manifests with a valid checksum: every field check holds. */
static void test_manifest_hostile_fields(void **state)
{
	struct rs_manifest m;
	struct rs_buf b = RS_BUF_INIT;
	size_t e0 = RS_MANIFEST_HEADER_SIZE, i;

	(void)state;
	make_manifest(&m, 3);
	assert_int_equal(rs_manifest_encode(&b, &m), 0);
	/* Reserved bytes, in the header and in every entry. */
	for (i = 68; i < 72; i++) {
		b.ptr[i] = 1;
		assert_true(parse_expect(&b, RS_ECORRUPT, "reserved"));
		b.ptr[i] = 0;
	}
	for (i = 81; i < 88; i++) {
		b.ptr[e0 + 2 * RS_MANIFEST_ENTRY_SIZE + i] = (char)0x80;
		assert_true(parse_expect(&b, RS_ECORRUPT, "reserved"));
		b.ptr[e0 + 2 * RS_MANIFEST_ENTRY_SIZE + i] = 0;
	}
	/* An offset inside the pack header, and one whose entry would wrap around. */
	rs_put_le64((unsigned char *)b.ptr + e0 + 64, 3);
	assert_true(parse_expect(&b, RS_ECORRUPT, "pack header"));
	rs_put_le64((unsigned char *)b.ptr + e0 + 64, UINT64_MAX - 60);
	assert_true(parse_expect(&b, RS_ECORRUPT, "past any possible pack"));
	rs_put_le64((unsigned char *)b.ptr + e0 + 64, m.chunks[0].offset);
	/* The object size must be what the chunks add up to. */
	rs_put_le64((unsigned char *)b.ptr + 48, m.size * 2);
	assert_true(parse_expect(&b, RS_ECORRUPT, "add up to"));
	rs_put_le64((unsigned char *)b.ptr + 48, m.size);
	/* Another version, an unknown transform: upgrade, not "damaged". */
	rs_put_le32((unsigned char *)b.ptr + 8, 2);
	assert_true(parse_expect(&b, RS_ENEWER, "upgrade results"));
	/* below the first version any results wrote: damage, not a newer writer */
	rs_put_le32((unsigned char *)b.ptr + 8, 0);
	assert_true(parse_expect(&b, RS_ECORRUPT, "manifest version 0 is older than any"));
	rs_put_le32((unsigned char *)b.ptr + 8, RS_FORMAT_VERSION);
	rs_put_le32((unsigned char *)b.ptr + 12, 9);
	assert_true(parse_expect(&b, RS_ENEWER, "transform 9"));
	rs_put_le32((unsigned char *)b.ptr + 12, 0);
	/* An unknown codec. */
	b.ptr[e0 + 80] = 7;
	assert_true(parse_expect(&b, RS_ECORRUPT, "codec 7"));
	b.ptr[e0 + 80] = RS_CODEC_ZSTD;
	assert_true(parse_expect(&b, 0, NULL));
	rs_manifest_release(&m);
	rs_buf_release(&b);
}

static void test_idx_hostile_fields(void **state)
{
	struct rs_chunk_ref refs[2], *back = NULL;
	struct rs_id pack;
	struct rs_buf b = RS_BUF_INIT;
	size_t n = 0, i;

	(void)state;
	memset(pack.id, 0x41, RS_ID_RAWSZ);
	fill_ref(&refs[0], 1);
	fill_ref(&refs[1], 2);
	assert_int_equal(rs_idx_encode(&b, &pack, refs, 2), 0);
	for (i = 49; i < 56; i++) {
		b.ptr[RS_IDX_HEADER_SIZE + RS_IDX_ENTRY_SIZE + i] = 1;
		reseal(&b);
		assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
		assert_non_null(strstr(rs_error_message(), "reserved"));
		b.ptr[RS_IDX_HEADER_SIZE + RS_IDX_ENTRY_SIZE + i] = 0;
	}
	rs_put_le64((unsigned char *)b.ptr + RS_IDX_HEADER_SIZE + 32, UINT64_MAX - 10);
	reseal(&b);
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	rs_put_le32((unsigned char *)b.ptr + 8, 3);
	reseal(&b);
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ENEWER);
	assert_non_null(strstr(rs_error_message(), "upgrade results"));
	rs_put_le32((unsigned char *)b.ptr + 8, 0);
	reseal(&b);
	assert_int_equal(rs_idx_parse(&back, &n, &pack, (unsigned char *)b.ptr, b.len), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "pack index version 0 is older than any"));
	rs_buf_release(&b);
}

static void test_pack_header_and_format_text(void **state)
{
	unsigned char h[RS_PACK_HEADER_SIZE];

	(void)state;
	rs_pack_header(h);
	assert_int_equal(rs_pack_header_check(h, sizeof(h)), 0);
	assert_int_equal(rs_pack_header_check(h, sizeof(h) - 1), RS_ECORRUPT);
	h[14] = 1;
	assert_int_equal(rs_pack_header_check(h, sizeof(h)), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "reserved"));
	h[14] = 0;
	rs_put_le32(h + 8, 2);
	assert_int_equal(rs_pack_header_check(h, sizeof(h)), RS_ENEWER);
	rs_put_le32(h + 8, 0);
	assert_int_equal(rs_pack_header_check(h, sizeof(h)), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "pack version 0 is older than any"));
	assert_int_equal(rs_format_text_check(RS_FORMAT_TEXT, strlen(RS_FORMAT_TEXT)), 0);
	assert_int_equal(rs_format_text_check("results-store 2\n", 16), RS_ENEWER);
	assert_non_null(strstr(rs_error_message(), "'results-store 2'"));
	assert_int_equal(rs_format_text_check(RS_FORMAT_TEXT "x", strlen(RS_FORMAT_TEXT) + 1), RS_EFORMAT);
	assert_int_equal(rs_format_text_check("garbage\n", 8), RS_EFORMAT);
	assert_int_equal(rs_format_text_check("results-store 0\n", 16), RS_EFORMAT);
}

/* The one length rule of every chunk description (docs/store-format.md). */
static void test_chunk_lengths(void **state)
{
	(void)state;
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_ZSTD, 1, 9), 0);
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_ZSTD, RS_CHUNK_LIMIT, RS_STORED_LIMIT), 0);
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_STORED, 7, 7), 0);
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_ZSTD, 0, 9), RS_ECORRUPT); /* empty */
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_ZSTD, RS_CHUNK_LIMIT + 1, 9), RS_ECORRUPT);
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_ZSTD, 9, RS_STORED_LIMIT + 1), RS_ECORRUPT);
	assert_int_equal(rs_chunk_lengths_check(RS_CODEC_STORED, 7, 8), RS_ECORRUPT);
	assert_int_equal(rs_chunk_lengths_check(2, 7, 7), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "unknown chunk codec 2"));
}

static void test_pack_entry_check(void **state)
{
	struct rs_chunk_ref r, other;
	unsigned char buf[RS_PACK_ENTRY_HEADER_SIZE + 16];

	(void)state;
	fill_ref(&r, 1);
	r.stored_len = 16;
	r.raw_len = 16;
	r.codec = RS_CODEC_STORED;
	rs_pack_entry_header(buf, &r);
	memset(buf + RS_PACK_ENTRY_HEADER_SIZE, 'x', 16);
	assert_int_equal(rs_pack_entry_check(buf, sizeof(buf), &r), 0);
	assert_int_equal(rs_pack_entry_check(buf, sizeof(buf) - 1, &r), RS_ECORRUPT); /* short */
	other = r;
	other.chunk.id[5] ^= 1;
	assert_int_equal(rs_pack_entry_check(buf, sizeof(buf), &other), RS_ECORRUPT);
	other = r;
	other.raw_len = 17;
	assert_int_equal(rs_pack_entry_check(buf, sizeof(buf), &other), RS_ECORRUPT);
	buf[45] = 1; /* a reserved byte */
	assert_int_equal(rs_pack_entry_check(buf, sizeof(buf), &r), RS_ECORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_long_inputs),
		cmocka_unit_test(test_manifest_round_trip),
		cmocka_unit_test(test_empty_object_manifest),
		cmocka_unit_test(test_manifest_damage_refused),
		cmocka_unit_test(test_manifest_sizes_must_add_up),
		cmocka_unit_test(test_idx_round_trip_sorted),
		cmocka_unit_test(test_chunk_lengths),
		cmocka_unit_test(test_pack_entry_check),
		cmocka_unit_test(test_manifest_hostile_fields),
		cmocka_unit_test(test_idx_hostile_fields),
		cmocka_unit_test(test_pack_header_and_format_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
