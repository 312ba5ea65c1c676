/*
 * The stacks model (src/codec/rc_stacks.c) on the real 4 MB run of
 * tests/data: it rebuilds its raw stream exactly, alone and after a base,
 * costs less than the codec's tree and samples streams do today, and
 * refuses damaged bytes and bases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "codec/rc_stacks.h"
#include "codec/varint.h"
#include "results/buf.h"
#include "results/error.h"

/* The version-6 container of real_small_pop1k: its base tree and samples streams, coded (CODEC_SECTIONS). */
#define V6_TREE_AND_SAMPLES (8114 + 2984)

static void put(struct rs_buf *b, uint64_t v)
{
	unsigned char tmp[10];

	assert_int_equal(rs_buf_put(b, tmp, codec_varint_put(tmp, v)), 0);
}

/* A frame as an object key: pyinstrument's frames hold NULs, which would cut a key short. */
static const char *key_of(json_t *v, char *buf, size_t n)
{
	size_t len = json_string_length(v), i;

	assert_true(len < n);
	memcpy(buf, json_string_value(v), len);
	for (i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = 0x1f;
	buf[len] = 0;
	return buf;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The session's raw stacks stream: frames in sorted order, those at depth 0 the threads after them. */
static void raw_of(struct rs_buf *raw, const char *name)
{
	char path[512], key[4096];
	json_t *doc, *recs, *ids, *threads;
	json_error_t jerr;
	size_t r, i, nrec, prev_len = 0;
	uint64_t *prev = calloc(65536, sizeof(*prev)), *cur = calloc(65536, sizeof(*cur)), a = 0;
	const char *dir = getenv("RS_TEST_DATA");

	assert_non_null(dir);
	assert_non_null(prev);
	assert_non_null(cur);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	doc = json_load_file(path, JSON_ALLOW_NUL, &jerr);
	assert_non_null(doc);
	recs = json_object_get(doc, "frame_records");
	nrec = json_array_size(recs);
	assert_true(nrec > 1000);
	ids = json_object();
	threads = json_object();
	for (r = 0; r < nrec; r++) {
		json_t *st = json_array_get(json_array_get(recs, r), 0);

		for (i = 0; i < json_array_size(st); i++) {
			const char *f = key_of(json_array_get(st, i), key, sizeof(key));

			if (i == 0 && !json_object_get(threads, f))
				json_object_set_new(threads, f, json_integer((json_int_t)json_object_size(threads)));
			if (i > 0 && !json_object_get(ids, f))
				json_object_set_new(ids, f, json_integer((json_int_t)a++));
		}
	}
	/* ranks in sorted order, as the codec's dictionary has them (a new frame is near its neighbours) */
	{
		const char **keys = malloc(a * sizeof(*keys));
		const char *k;
		json_t *v;
		size_t j = 0;

		assert_non_null(keys);
		json_object_foreach(ids, k, v)
			keys[j++] = k;
		qsort(keys, j, sizeof(*keys), cmp_str);
		for (j = 0; j < a; j++)
			json_integer_set(json_object_get(ids, keys[j]), (json_int_t)j);
		free(keys);
	}
	put(raw, a);
	put(raw, json_object_size(threads));
	for (r = 0; r < nrec; r++) {
		json_t *st = json_array_get(json_array_get(recs, r), 0);
		size_t n = json_array_size(st), k = 0;

		for (i = 0; i < n; i++) {
			const char *f = key_of(json_array_get(st, i), key, sizeof(key));

			cur[i] = i == 0 ? a + (uint64_t)json_integer_value(json_object_get(threads, f))
				       : (uint64_t)json_integer_value(json_object_get(ids, f));
		}
		while (k < n && k < prev_len && cur[k] == prev[k])
			k++;
		put(raw, k);
		put(raw, n - k);
		for (i = k; i < n; i++)
			put(raw, cur[i]);
		memcpy(prev, cur, n * sizeof(*cur));
		prev_len = n;
	}
	json_decref(ids);
	json_decref(threads);
	json_decref(doc);
	free(prev);
	free(cur);
}

static void round_trip(const struct rs_buf *raw, const struct rs_buf *base, struct rs_buf *coded)
{
	unsigned char *back = malloc(raw->len);
	const unsigned char *b = base ? (const unsigned char *)base->ptr : NULL;
	size_t bl = base ? base->len : 0;

	assert_non_null(back);
	assert_int_equal(rs_stacks_pack(coded, (const unsigned char *)raw->ptr, raw->len, b, bl), 0);
	assert_int_equal(rs_stacks_unpack(back, raw->len, b, bl, (const unsigned char *)coded->ptr, coded->len), 0);
	assert_memory_equal(back, raw->ptr, raw->len);
	free(back);
}

static void test_real_run_round_trips_smaller(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, coded = RS_BUF_INIT;

	(void)state;
	raw_of(&raw, "real_small_pop1k.pyisession");
	round_trip(&raw, NULL, &coded);
	printf("real 4 MB run: raw stacks %zu bytes, coded %zu (tree and samples in version 6: %d)\n", raw.len,
	       coded.len, V6_TREE_AND_SAMPLES);
	/* the model (bench/stream_model.py) says 8.7 KB: at least a fifth below version 6 */
	assert_true(coded.len * 5 < (size_t)V6_TREE_AND_SAMPLES * 4);
	rs_buf_release(&raw);
	rs_buf_release(&coded);
}

static void test_after_a_base(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, alone = RS_BUF_INIT, after = RS_BUF_INIT;
	unsigned char *back;
	int err;

	(void)state;
	raw_of(&raw, "real_small_pop1k.pyisession");
	round_trip(&raw, NULL, &alone);
	/* the same run again after itself as the base: nearly every stack was met */
	round_trip(&raw, &raw, &after);
	printf("after itself as the base: %zu bytes (alone %zu)\n", after.len, alone.len);
	assert_true(after.len * 2 < alone.len);
	/* without its base it does not decode to the stream */
	back = malloc(raw.len);
	assert_non_null(back);
	err = rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)after.ptr, after.len);
	assert_true(err != 0 || memcmp(back, raw.ptr, raw.len) != 0);
	free(back);
	rs_buf_release(&raw);
	rs_buf_release(&alone);
	rs_buf_release(&after);
}

static void test_damage_refused(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, coded = RS_BUF_INIT, bad = RS_BUF_INIT;
	unsigned char *back;
	size_t cut, i;

	(void)state;
	raw_of(&raw, "real_small_pop1k.pyisession");
	round_trip(&raw, NULL, &coded);
	back = malloc(raw.len + 64);
	assert_non_null(back);
	for (cut = 0; cut < coded.len; cut += 1 + coded.len / 50)
		assert_int_equal(rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, cut),
				 RS_ECORRUPT);
	/* more raw bytes than the stream codes, and fewer */
	assert_int_equal(rs_stacks_unpack(back, raw.len + 64, NULL, 0, (const unsigned char *)coded.ptr, coded.len),
			 RS_ECORRUPT);
	assert_int_equal(rs_stacks_unpack(back, raw.len - 1, NULL, 0, (const unsigned char *)coded.ptr, coded.len),
			 RS_ECORRUPT);
	/* flipped bytes: refused, or some other stack stream of the same length, never a crash */
	for (i = 1; i < coded.len; i += 1 + coded.len / 40) {
		int err;

		coded.ptr[i] ^= 0x5a;
		err = rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, coded.len);
		assert_true(err == 0 || err == RS_ECORRUPT);
		coded.ptr[i] ^= 0x5a;
	}
	/* a base that is not a stacks stream */
	assert_int_equal(rs_buf_put(&bad, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11), 0);
	assert_int_equal(rs_stacks_unpack(back, raw.len, (const unsigned char *)bad.ptr, bad.len,
					  (const unsigned char *)coded.ptr, coded.len),
			 RS_ECORRUPT);
	free(back);
	rs_buf_release(&raw);
	rs_buf_release(&coded);
	rs_buf_release(&bad);
}

/* A raw stream the decoder could not give back (k shorter than what two records share) is not coded. */
static void test_non_canonical_raw_not_coded(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, coded = RS_BUF_INIT;

	(void)state;
	put(&raw, 3);
	put(&raw, 0);
	/* [0, 1], then [0, 2] said as keeping nothing */
	put(&raw, 0);
	put(&raw, 2);
	put(&raw, 0);
	put(&raw, 1);
	put(&raw, 0);
	put(&raw, 2);
	put(&raw, 0);
	put(&raw, 2);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0), 1);
	/* a rank past the frames the header gives */
	rs_buf_clear(&raw);
	put(&raw, 3);
	put(&raw, 0);
	put(&raw, 0);
	put(&raw, 1);
	put(&raw, 3);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0), 1);
	/* a rank written longer than it needs (0xe0 0x00 for 96): the decoder writes every varint short */
	rs_buf_clear(&raw);
	put(&raw, 200);
	put(&raw, 0);
	put(&raw, 0);
	put(&raw, 1);
	assert_int_equal(rs_buf_put(&raw, "\xe0\x00", 2), 0);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0), 1);
	rs_buf_release(&raw);
	rs_buf_release(&coded);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_run_round_trips_smaller),
		cmocka_unit_test(test_after_a_base),
		cmocka_unit_test(test_damage_refused),
		cmocka_unit_test(test_non_canonical_raw_not_coded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
