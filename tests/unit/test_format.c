/* The store's file formats: round trips, and every kind of damage refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "store/format.h"
#include "util/error.h"

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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_round_trip),
		cmocka_unit_test(test_empty_object_manifest),
		cmocka_unit_test(test_manifest_damage_refused),
		cmocka_unit_test(test_manifest_sizes_must_add_up),
		cmocka_unit_test(test_idx_round_trip_sorted),
		cmocka_unit_test(test_pack_entry_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
