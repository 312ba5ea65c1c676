/*
 * The stacks model (src/codec/rc_stacks.c) on the real 4 MB run of
 * tests/data: it rebuilds its raw stream exactly, alone and after a base,
 * costs less than the codec's tree and samples streams do today, and
 * refuses damaged bytes and bases; walks no more levels than it is
 * allowed; and takes a base whose thread slots this stream lacks.
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

/* No budget on the levels walked (test_levels_bounded has one). */
#define ANY_LEVELS UINT64_MAX

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
	assert_int_equal(rs_stacks_pack(coded, (const unsigned char *)raw->ptr, raw->len, b, bl, ANY_LEVELS), 0);
	assert_int_equal(rs_stacks_unpack(back, raw->len, b, bl, (const unsigned char *)coded->ptr, coded->len, ANY_LEVELS), 0);
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
	err = rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)after.ptr, after.len, ANY_LEVELS);
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
		assert_int_equal(rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, cut, ANY_LEVELS),
				 RS_ECORRUPT);
	/* more raw bytes than the stream codes, and fewer */
	assert_int_equal(rs_stacks_unpack(back, raw.len + 64, NULL, 0, (const unsigned char *)coded.ptr, coded.len, ANY_LEVELS),
			 RS_ECORRUPT);
	assert_int_equal(rs_stacks_unpack(back, raw.len - 1, NULL, 0, (const unsigned char *)coded.ptr, coded.len, ANY_LEVELS),
			 RS_ECORRUPT);
	/* flipped bytes: refused, or some other stack stream of the same length, never a crash */
	for (i = 1; i < coded.len; i += 1 + coded.len / 40) {
		int err;

		coded.ptr[i] ^= 0x5a;
		err = rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, coded.len, ANY_LEVELS);
		assert_true(err == 0 || err == RS_ECORRUPT);
		coded.ptr[i] ^= 0x5a;
	}
	/* a base that is not a stacks stream */
	assert_int_equal(rs_buf_put(&bad, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11), 0);
	assert_int_equal(rs_stacks_unpack(back, raw.len, (const unsigned char *)bad.ptr, bad.len,
					  (const unsigned char *)coded.ptr, coded.len, ANY_LEVELS),
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
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0, ANY_LEVELS), 1);
	/* a rank past the frames the header gives */
	rs_buf_clear(&raw);
	put(&raw, 3);
	put(&raw, 0);
	put(&raw, 0);
	put(&raw, 1);
	put(&raw, 3);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0, ANY_LEVELS), 1);
	/* a rank written longer than it needs (0xe0 0x00 for 96): the decoder writes every varint short */
	rs_buf_clear(&raw);
	put(&raw, 200);
	put(&raw, 0);
	put(&raw, 0);
	put(&raw, 1);
	assert_int_equal(rs_buf_put(&raw, "\xe0\x00", 2), 0);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0, ANY_LEVELS), 1);
	rs_buf_release(&raw);
	rs_buf_release(&coded);
}

/*
 * A record 60,000 frames deep, then 200 records that keep all of it and
 * add one frame: a few bytes each, 60,000 levels of work each. With a
 * budget of the levels they hold the stream codes and decodes; one level
 * fewer and the coder stores it another way and the decoder refuses it,
 * before it has walked them all.
 */
static void test_levels_bounded(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, coded = RS_BUF_INIT;
	uint64_t levels = 0, a, t, n, checked;
	unsigned char *back;
	int r, i;

	(void)state;
	put(&raw, 4);
	put(&raw, 1);
	put(&raw, 0);
	put(&raw, 60000);
	put(&raw, 4);
	for (i = 1; i < 60000; i++)
		put(&raw, (uint64_t)i % 4);
	levels += 60001;
	for (r = 0; r < 200; r++) {
		put(&raw, 59999);
		put(&raw, 1);
		put(&raw, (uint64_t)r % 2); /* 0, 1, 0, ...: never the frame the record before had there (3, then the other) */
		levels += 60001;
	}
	assert_int_equal(rs_stacks_check((const unsigned char *)raw.ptr, raw.len, &a, &t, &n, &checked), 0);
	assert_int_equal(n, 201);
	assert_int_equal(checked, levels);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0, levels - 1), 1);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, NULL, 0, levels), 0);
	print_message("%zu raw bytes, %zu coded, for %llu levels\n", raw.len, coded.len, (unsigned long long)levels);
	back = malloc(raw.len);
	assert_non_null(back);
	assert_int_equal(rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, coded.len, levels), 0);
	assert_memory_equal(back, raw.ptr, raw.len);
	assert_int_equal(rs_stacks_unpack(back, raw.len, NULL, 0, (const unsigned char *)coded.ptr, coded.len,
					  levels - 1),
			 RS_ECORRUPT);
	/* after a base, the base's levels count too */
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, (const unsigned char *)raw.ptr,
					raw.len, 2 * levels - 1),
			 1);
	assert_int_equal(rs_stacks_pack(&coded, (const unsigned char *)raw.ptr, raw.len, (const unsigned char *)raw.ptr,
					raw.len, 2 * levels),
			 0);
	assert_int_equal(rs_stacks_unpack(back, raw.len, (const unsigned char *)raw.ptr, raw.len,
					  (const unsigned char *)coded.ptr, coded.len, 2 * levels - 1),
			 RS_ECORRUPT);
	free(back);
	rs_buf_release(&raw);
	rs_buf_release(&coded);
}

/*
 * A base of three thread slots, a stream of one: slots 1 and 2 of the
 * base are one symbol of the model, and two records of the base that
 * start at them one after the other (each keeping nothing, as the raw
 * syntax says) still prime it, alike on both sides.
 */
static void test_base_threads_past_the_stream(void **state)
{
	struct rs_buf base = RS_BUF_INIT, raw = RS_BUF_INIT, coded = RS_BUF_INIT;

	(void)state;
	put(&base, 2); /* A: frames 0 and 1, then thread slots 2, 3, 4 */
	put(&base, 3);
	put(&base, 0); /* [slot 1, 0] */
	put(&base, 2);
	put(&base, 3);
	put(&base, 0);
	put(&base, 0); /* [slot 2, 1] */
	put(&base, 2);
	put(&base, 4);
	put(&base, 1);
	put(&base, 0); /* [slot 0, 0, 1] */
	put(&base, 3);
	put(&base, 2);
	put(&base, 0);
	put(&base, 1);
	put(&raw, 2);
	put(&raw, 1);
	put(&raw, 0); /* [thread 0, 0, 1], then [thread 0, 1] */
	put(&raw, 3);
	put(&raw, 2);
	put(&raw, 0);
	put(&raw, 1);
	put(&raw, 1);
	put(&raw, 1);
	put(&raw, 1);
	round_trip(&raw, &base, &coded);
	rs_buf_release(&base);
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
		cmocka_unit_test(test_levels_bounded),
		cmocka_unit_test(test_base_threads_past_the_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
