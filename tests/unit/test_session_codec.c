/*
 * The session codec: byte-exact round trips of real pyinstrument files
 * (4.3, 4.6, 5.1 layouts), per-value fallback for times the model does
 * not cover, the escape traps, declining anything else, and a decoder
 * that refuses damaged or unknown containers instead of writing wrong
 * bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codec/codec_internal.h"
#include "codec/session_codec.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/hash.h"

static int collect(void *ctx, const void *p, size_t n)
{
	return rs_buf_put(ctx, p, n);
}

/* The first n bytes of container `c` decoded into `back`, at most `size`. */
static int decode(const struct rs_buf *c, size_t n, size_t size, struct rs_buf *back)
{
	return rs_codec_decode((unsigned char *)c->ptr, n, size, collect, back);
}

static void data_path(char *out, size_t n, const char *name)
{
	const char *dir = getenv("RS_TEST_DATA");

	assert_non_null(dir);
	snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

/* `text` in a new temporary file, named in `path` (a mkstemp template). */
static void write_temp(char *path, const char *text, size_t n)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_file(path, text, n);
}

/* Encode `path`; returns `applies`, fills `out` and `st`. */
static int encode(const char *path, struct rs_buf *out, struct rs_codec_stats *st)
{
	struct rs_buf b = RS_BUF_INIT;
	struct rs_id oid;
	int applies = -1;

	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	rs_sha256(&oid, b.ptr, b.len);
	assert_int_equal(rs_codec_encode_file(out, &applies, path, b.len, &oid, NULL, st), 0);
	rs_buf_release(&b);
	return applies;
}

/* Encode and decode `path`: the decoded bytes must be the file's. */
static void round_trip(const char *path, struct rs_codec_stats *st)
{
	struct rs_buf orig = RS_BUF_INIT, out = RS_BUF_INIT, back = RS_BUF_INIT;

	assert_int_equal(rs_fs_read_file(&orig, path, 1u << 30), 0);
	assert_int_equal(encode(path, &out, st), 1);
	assert_int_equal(decode(&out, out.len, orig.len, &back), 0);
	assert_int_equal(back.len, orig.len);
	assert_memory_equal(back.ptr, orig.ptr, orig.len);
	rs_buf_release(&orig);
	rs_buf_release(&out);
	rs_buf_release(&back);
}

static void test_real_sessions_round_trip(void **state)
{
	static const char *names[] = {
		"tiny_pyinstrument_4.3.0.pyisession", "tiny_pyinstrument_4.6.2.pyisession",
		"tiny_pyinstrument_5.1.2.pyisession", "real_small_pop1k.pyisession",
	};
	char path[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct rs_codec_stats st;

		data_path(path, sizeof(path), names[i]);
		round_trip(path, &st);
		/* Every real time is on the clock's grid: none kept as text. */
		assert_int_equal(st.times_verbatim, 0);
		assert_true(st.records > 50);
	}
	data_path(path, sizeof(path), "real_small_pop1k.pyisession");
	{
		struct rs_codec_stats st;
		struct rs_buf out = RS_BUF_INIT;

		assert_int_equal(encode(path, &out, &st), 1);
		assert_int_equal(st.records, 2373);
		/* 4,228,715 bytes: at least 90 times smaller */
		assert_true(out.len * 90 < 4228715);
		rs_buf_release(&out);
	}
}

/*
 * Times the formatter would write differently (trailing zero, exponent
 * form, an integer), a negative time, a time off any nanosecond clock:
 * each kept as its own text, the rest still modelled.
 */
static void test_times_off_the_model_are_kept_verbatim(void **state)
{
	static const char text[] =
		"{\"start_time\": 1.5, \"frame_records\": ["
		"[[\"MainThread\\u0000<thread>\\u00001\", \"f\\u0000/a.py\\u00001\"], 0.0010046170000350685], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"f\\u0000/a.py\\u00001\"], 0.0010034419999556121], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"f\\u0000/a.py\\u00001\"], 0.00100], "
		"[[\"MainThread\\u0000<thread>\\u00001\"], 1e-05], "
		"[[\"MainThread\\u0000<thread>\\u00001\"], 1E-5], "
		"[[\"MainThread\\u0000<thread>\\u00001\"], 0], "
		"[[\"MainThread\\u0000<thread>\\u00001\"], -0.5], "
		"[[], 0.1], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0010002689999737413], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.001000765000071624], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0010001790000160327], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0009994169998890357], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0010034419999556121], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0010002689999737413], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.001000765000071624], "
		"[[\"MainThread\\u0000<thread>\\u00001\", \"g\\u0000/a.py\\u00002\"], 0.0010046170000350685]"
		"], \"sample_count\": 16}";
	char path[] = "/tmp/rs-test-codec-XXXXXX";
	struct rs_codec_stats st;

	(void)state;
	write_temp(path, text, sizeof(text) - 1);
	round_trip(path, &st);
	assert_int_equal(st.records, 16);
	/*
	 * 0.00100, 1E-5 and 0 are not repr's text; 1e-05, -0.5 and 0.1 are
	 * not clock differences: six kept as text, the ten real ones modelled.
	 */
	if (st.times_verbatim != 6)
		fail_msg("%llu times kept as text", (unsigned long long)st.times_verbatim);
	unlink(path);
}

/*
 * A run whose clock passes 1 s and then 2 s of its machine's uptime (a CI
 * runner profiled soon after it booted passes 256, 512, 1024 s alike):
 * every reading is the double x / 1e9 of whole nanoseconds, so the times
 * after each power of two are on a grid twice coarser. Every time must
 * still be explained by the clock, with no residual: two grid changes
 * (container version 6), and the round trip byte for byte.
 */
static void test_clock_passing_powers_of_two(void **state)
{
	struct rs_buf text = RS_BUF_INIT;
	char path[] = "/tmp/rs-test-codec-XXXXXX";
	struct rs_codec_stats st;
	uint64_t lcg = 12345;
	int64_t x = INT64_C(976562500) + 4321; /* 0.977 s */
	int r;

	(void)state;
	assert_int_equal(rs_buf_puts(&text, "{\"start_time\": 1.5, \"frame_records\": ["), 0);
	for (r = 0; r < 1200; r++) {
		char num[48];
		int64_t n;

		lcg = lcg * 6364136223846793005u + 1442695040888963407u;
		n = 950000 + (int64_t)((lcg >> 33) % 200000);
		codec_py_repr((double)(x + n) / 1e9 - (double)x / 1e9, num);
		x += n;
		assert_int_equal(rs_buf_printf(&text, "%s[[\"MainThread\\u0000<thread>\\u00001\", "
						    "\"f%d\\u0000/a.py\\u00001\"], %s]",
					     r ? ", " : "", 1 + r % 3, num),
				 0);
	}
	assert_int_equal(rs_buf_puts(&text, "], \"sample_count\": 1200}"), 0);
	assert_true(x > INT64_C(2000000000)); /* past 2 s */
	write_temp(path, text.ptr, text.len);
	round_trip(path, &st);
	assert_int_equal(st.records, 1200);
	assert_int_equal(st.times_verbatim, 0);
	if (st.times_residual != 0 || st.grid_changes != 2)
		fail_msg("%llu times with a residual, %llu grid changes", (unsigned long long)st.times_residual,
			 (unsigned long long)st.grid_changes);
	unlink(path);
	rs_buf_release(&text);
}

/*
 * Escapes are kept as their JSON text: an escaped backslash before
 * `u0000`, quotes, surrogate pairs, raw UTF-8, short escapes.
 */
/*
 * Version 3 keeps the frame lists in columns (codec 4): name, file, first
 * line, class, line; version 4 a column per field (codec 5), and another
 * line of the frame before's function as that line alone (COL_SAME: a's
 * line 9 after its line 11, K's b at 301 after 300, h at 999999999 after
 * 0; not a after its class-K frame, nor a frame after one kept as text).
 * Every shape a frame may have must come back byte for byte, those the
 * columns model (with a class, a line, both, a line below the first) and
 * those kept as text (a first line with a leading zero or ten digits, an
 * attribute the model does not know, no separator at all, empty parts):
 * the proof would decline the session if one did not.
 */
static void test_frame_shapes_in_columns(void **state)
{
	static const char text[] =
		"{\"frame_records\": [[[\"MainThread\\u0000<thread>\\u0000140683683439296\", "
		"\"a\\u0000/x/a.py\\u000010\", \"a\\u0000/x/a.py\\u000010\\u0001cK\", "
		"\"a\\u0000/x/a.py\\u000010\\u0001l9\", \"b\\u0000/x/a.py\\u00003\\u0001cK\\u0001l300\", "
		"\"a\\u0000/x/a.py\\u000010\\u0001l11\", \"b\\u0000/x/a.py\\u00003\\u0001cK\\u0001l301\", "
		"\"just text\\u0001l5\", \"just text\\u0001l6\", "
		"\"c\\u0000/x/a.py\\u000007\\u0001l1\", \"c\\u0000/x/a.py\\u00007\\u0001l012\", "
		"\"d\\u0000/x/a.py\\u00001234567890\", \"just text\", \"e\\u0000/x/e.py\", "
		"\"f\\u0000/x/f.py\\u00001\\u0001xfoo\", \"\\u0000\\u00000\", "
		"\"g\\u0000/x/g.py\\u00001\\u0001cK\\u0001l2\\u0001cJ\", \"h\\u0000/x/h.py\\u00000\\u0001l0\", "
		"\"h\\u0000/x/h.py\\u00000\\u0001l999999999\", \"i\\u0000/x/i.py\\u000012\\u0001c\\u0001l\", "
		"\"j\\u0000/x/a.py\\u00005\\u0001c\"], 0.5]], \"sample_count\": 1}";
	char path[] = "/tmp/rs-test-codec-XXXXXX";
	struct rs_buf out = RS_BUF_INIT;
	struct rs_codec_stats st;

	(void)state;
	write_temp(path, text, sizeof(text) - 1);
	round_trip(path, &st);
	assert_int_equal(st.frames, 21);
	/* the base stream (after the 16-byte block header) is in columns: codec 5 */
	assert_int_equal(encode(path, &out, &st), 1);
	assert_int_equal((unsigned char)out.ptr[16 + 16], 5);
	rs_buf_release(&out);
	unlink(path);
}

static void test_escape_traps_round_trip(void **state)
{
	static const char text[] =
		"{\"frame_records\": ["
		"[[\"MainThread\\u0000<thread>\\u0000140683683439296\", "
		"\"f\\\\u0000\\\"q\\\"\\u0000/x/caf\\u00e9.py\\u00007\\u0001cK\\u00e9\", "
		"\"g\\ud83d\\ude00\\u0000/x/y.py\\u000012\\u0001l13\", \"h\\n\\t\\\\\\u0000caf\xc3\xa9.py\\u00000\"], 0.5], "
		"[[\"MainThread\\u0000<thread>\\u0000140683683439296\", "
		"\"f\\\\u0000\\\"q\\\"\\u0000/x/caf\\u00E9.py\\u00007\\u0001cK\\u00e9\"], 0.25]"
		"], \"start_time\": 1796029753.6230605, \"program\": \"x \\\"y\\\" ]\", \"sample_count\": 2}";
	char path[] = "/tmp/rs-test-codec-XXXXXX";
	struct rs_codec_stats st;

	(void)state;
	write_temp(path, text, sizeof(text) - 1);
	round_trip(path, &st);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.frames, 5);
	unlink(path);
}

static void expect_decline(const char *text, size_t n, const char *why)
{
	char path[] = "/tmp/rs-test-codec-XXXXXX";
	struct rs_codec_stats st;
	struct rs_buf out = RS_BUF_INIT;

	write_temp(path, text, n);
	assert_int_equal(encode(path, &out, &st), 0);
	assert_int_equal(out.len, 0);
	if (!strstr(st.declined, why))
		fail_msg("declined with '%s', expected '%s'", st.declined, why);
	rs_buf_release(&out);
	unlink(path);
}

static void test_other_inputs_decline(void **state)
{
	char path[512];
	struct rs_codec_stats st;
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	expect_decline("", 0, "no top-level frame_records");
	expect_decline("[1, 2]", 6, "not a JSON object");
	expect_decline("{\"a\": {\"frame_records\": []}}", 29, "no top-level frame_records");
	expect_decline("{\"a\": \"\\\"frame_records\\\": [\"}", 30, "no top-level frame_records");
	expect_decline("{\"frame_records\": [[[\"a\"],0.1]]}", 32, "a record's time is not after ', '");
	expect_decline("{\"frame_records\": [[[\"a\"], 0.1], [[\"a\"], 0.2]", 46, "ends inside frame_records");
	expect_decline("{\"frame_records\": [[[\"a\"], null]]}", 35, "not a plain number");
	/* pretty-printed JSON is a session, but not in json.dump's spelling */
	data_path(path, sizeof(path), "session_tiny_5.1.2_indented.pyisession");
	assert_int_equal(encode(path, &out, &st), 0);
	assert_non_null(strstr(st.declined, "not written as json.dump writes it"));
	rs_buf_release(&out);
}

/* A file that does not hash to the oid given is never encoded. */
static void test_wrong_oid_declines(void **state)
{
	char path[512];
	struct rs_buf out = RS_BUF_INIT, b = RS_BUF_INIT;
	struct rs_codec_stats st;
	struct rs_id oid;
	int applies = -1;

	(void)state;
	data_path(path, sizeof(path), "tiny_pyinstrument_5.1.2.pyisession");
	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	rs_sha256(&oid, b.ptr, b.len);
	oid.id[0] ^= 1;
	assert_int_equal(rs_codec_encode_file(&out, &applies, path, b.len, &oid, NULL, &st), 0);
	assert_int_equal(applies, 0);
	assert_non_null(strstr(st.declined, "does not hash to the object's oid"));
	rs_buf_release(&out);
	rs_buf_release(&b);
}

static void container_of(const char *name, struct rs_buf *out, size_t *size)
{
	char path[512];
	struct rs_buf b = RS_BUF_INIT;
	struct rs_codec_stats st;

	data_path(path, sizeof(path), name);
	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	*size = b.len;
	assert_int_equal(encode(path, out, &st), 1);
	rs_buf_release(&b);
}

/* Every cut of a container is refused; no cut decodes. */
static void test_truncated_container_refused(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;
	size_t size, cut;

	(void)state;
	container_of("tiny_pyinstrument_4.6.2.pyisession", &c, &size);
	for (cut = 0; cut < c.len; cut++) {
		rs_buf_clear(&back);
		assert_int_equal(decode(&c, cut, size, &back),
				 RS_ECORRUPT);
	}
	rs_buf_clear(&back);
	assert_int_equal(decode(&c, c.len, size, &back), 0);
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/* A flipped byte anywhere: refused, or (inside a verbatim stream) other bytes; never a crash. */
static void test_flipped_bytes_never_crash(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT, good = RS_BUF_INIT;
	size_t size, at;
	int refused = 0;

	(void)state;
	container_of("tiny_pyinstrument_5.1.2.pyisession", &c, &size);
	assert_int_equal(decode(&c, c.len, size, &good), 0);
	for (at = 0; at < c.len; at++) {
		int err;

		c.ptr[at] ^= 0x5a;
		rs_buf_clear(&back);
		err = decode(&c, c.len, size, &back);
		c.ptr[at] ^= 0x5a;
		if (err) {
			assert_true(err == RS_ECORRUPT || err == RS_ETOOBIG || err == RS_EFORMAT ||
				    err == RS_ENEWER);
			refused++;
		} else {
			assert_true(back.len <= size);
		}
	}
	assert_true(refused > (int)c.len / 2);
	rs_buf_release(&c);
	rs_buf_release(&back);
	rs_buf_release(&good);
}

static void test_unknown_version_refused(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;
	size_t size;

	(void)state;
	container_of("tiny_pyinstrument_4.3.0.pyisession", &c, &size);
	c.ptr[8] = RS_CODEC_VERSION + 1;
	assert_int_equal(decode(&c, c.len, size, &back), RS_ENEWER);
	{
		char want[64];

		snprintf(want, sizeof(want), "session codec version %d", RS_CODEC_VERSION + 1);
		assert_non_null(strstr(rs_error_message(), want));
	}
	assert_non_null(strstr(rs_error_message(), "upgrade results"));
	assert_int_equal(back.len, 0);
	/* Below the oldest version: no results wrote it, so it is damage. */
	c.ptr[8] = 0;
	assert_int_equal(decode(&c, c.len, size, &back), RS_ECORRUPT);
	assert_int_equal(back.len, 0);
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/*
 * The reserved bytes docs/codec.md names (the base block header's u32 0,
 * each stream header's 7, the base tree's among them) are refused when set, as store-format.md says
 * of every reserved field: in a real session's container.
 */
static void test_reserved_bytes_refused(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;
	size_t size, base_stream = 16, tree_stream, main_stream, at[6], i;
	const char *says[6];

	(void)state;
	container_of("real_small_pop1k.pyisession", &c, &size);
	/* version 5's base block: the dictionary's stream, then the base tree's */
	tree_stream = base_stream + 24 + (size_t)rs_get_le64((unsigned char *)c.ptr + base_stream + 8);
	main_stream = tree_stream + 24 + (size_t)rs_get_le64((unsigned char *)c.ptr + tree_stream + 8) + 24;
	assert_true(main_stream + 24 < c.len);
	assert_memory_equal(c.ptr + main_stream - 24, "RSPYSES\n", 8);
	at[0] = 12, says[0] = "its base block header has reserved bytes set";
	at[1] = 15, says[1] = "its base block header has reserved bytes set";
	at[2] = base_stream + 17, says[2] = "a stream header has reserved bytes set";
	at[3] = base_stream + 23, says[3] = "a stream header has reserved bytes set";
	at[4] = main_stream + 20, says[4] = "a stream header has reserved bytes set";
	at[5] = tree_stream + 19, says[5] = "a stream header has reserved bytes set";
	for (i = 0; i < 6; i++) {
		c.ptr[at[i]] = 1;
		rs_buf_clear(&back);
		assert_int_equal(decode(&c, c.len, size, &back), RS_ECORRUPT);
		if (!strstr(rs_error_message(), says[i]))
			fail_msg("byte %zu: '%s', not '%s'", at[i], rs_error_message(), says[i]);
		assert_int_equal(back.len, 0);
		c.ptr[at[i]] = 0;
	}
	rs_buf_clear(&back);
	assert_int_equal(decode(&c, c.len, size, &back), 0);
	assert_int_equal(back.len, size);
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/* The decoder never writes more than the caller's size. */
static void test_output_is_capped(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;
	size_t size;

	(void)state;
	container_of("tiny_pyinstrument_4.3.0.pyisession", &c, &size);
	assert_int_equal(decode(&c, c.len, size - 1, &back), RS_ECORRUPT);
	assert_true(back.len < size);
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/*
 * Encode `path` with the base `base`/`len` (NULL: none); *next gets the
 * base for the run after, *new_base (may be NULL) whether it starts one.
 */
static void encode_with_base2(const char *path, const struct rs_buf *base, struct rs_buf *out, struct rs_buf *next,
			      uint64_t *block_len, int *new_base)
{
	struct rs_buf b = RS_BUF_INIT, back = RS_BUF_INIT;
	struct rs_codec_stats stats;
	struct rs_codec_dict dict;
	struct rs_id oid;
	int applies = 0;

	memset(&dict, 0, sizeof(dict));
	if (base) {
		dict.base = (const unsigned char *)base->ptr;
		dict.base_len = base->len;
	}
	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	rs_sha256(&oid, b.ptr, b.len);
	memset(&stats, 0, sizeof(stats));
	assert_int_equal(rs_codec_encode_file(out, &applies, path, b.len, &oid, &dict, &stats), 0);
	assert_int_equal(applies, 1);
	if (new_base)
		*new_base = (int)stats.new_base;
	assert_int_equal(decode(out, out->len, b.len, &back), 0);
	assert_int_equal(back.len, b.len);
	assert_memory_equal(back.ptr, b.ptr, b.len);
	rs_buf_release(next);
	*next = dict.next;
	*block_len = dict.block_len;
	rs_buf_release(&b);
	rs_buf_release(&back);
}

static void encode_with_base(const char *path, const struct rs_buf *base, struct rs_buf *out, struct rs_buf *next,
			     uint64_t *block_len)
{
	encode_with_base2(path, base, out, next, block_len, NULL);
}

/*
 * `src` gets the real 4 MB session's path, `other` (a mkstemp template)
 * a copy of it with another thread id: the same frames and stacks, the
 * run after it as a rerun would be.
 */
static void other_thread_copy(char *src, size_t n, char *other)
{
	struct rs_buf orig = RS_BUF_INIT;
	char *at;

	data_path(src, n, "real_small_pop1k.pyisession");
	assert_int_equal(rs_fs_read_file(&orig, src, 1u << 26), 0);
	for (at = strstr(orig.ptr, "<thread>\\u0000"); at; at = strstr(at + 1, "<thread>\\u0000"))
		at[14] = at[14] == '9' ? '8' : '9';
	write_temp(other, orig.ptr, orig.len);
	rs_buf_release(&orig);
}

/*
 * The decoder lets the stacks model walk at most stacks_level_budget of
 * the object's size, the base's records it learns from included. A small
 * session after the base of a large one (the tiny 5.1.2 session after the
 * real 4 MB run's base: few of its frames are new to it, so the base
 * would be kept, but its 50,000 levels are past the 11,000 the tiny
 * session's 21 KB allow) starts a new base, and its container decodes.
 */
static void test_small_run_after_a_large_base_starts_one(void **state)
{
	struct rs_buf c1 = RS_BUF_INIT, c2 = RS_BUF_INIT, next1 = RS_BUF_INIT, next2 = RS_BUF_INIT;
	char big[512], tiny[512];
	uint64_t block1 = 0, block2 = 0;
	int new_base = -1;

	(void)state;
	data_path(big, sizeof(big), "real_small_pop1k.pyisession");
	data_path(tiny, sizeof(tiny), "tiny_pyinstrument_5.1.2.pyisession");
	encode_with_base2(big, NULL, &c1, &next1, &block1, &new_base);
	assert_int_equal(new_base, 1);
	encode_with_base2(tiny, &next1, &c2, &next2, &block2, &new_base);
	assert_int_equal(new_base, 1);
	assert_true(next2.len < next1.len);
	rs_buf_release(&c1);
	rs_buf_release(&c2);
	rs_buf_release(&next1);
	rs_buf_release(&next2);
}

/*
 * A run coded after a base holds the base's stacks as well as its own;
 * when the two would pass codec_stacks_budget (half the streams' cap: a
 * 1 GB session after another) it starts a new base instead, whose stacks
 * are its own, and the container decodes. Here the budget is set just
 * below what the next run would need: the real 4 MB session with another
 * thread id, after the base its first run made, keeps the base with the
 * budget at the sum and starts a new one a byte below it.
 */
static void test_stacks_past_budget_start_a_new_base(void **state)
{
	struct rs_buf c1 = RS_BUF_INIT, c2 = RS_BUF_INIT, next1 = RS_BUF_INIT, next2 = RS_BUF_INIT;
	char src[512], other[] = "/tmp/rs-codec-budget-XXXXXX";
	uint64_t block1 = 0, block2 = 0, saved = codec_stacks_budget, need;
	int new_base = -1;

	(void)state;
	other_thread_copy(src, sizeof(src), other);

	encode_with_base2(src, NULL, &c1, &next1, &block1, &new_base);
	assert_int_equal(new_base, 1);
	/* the base cache: magic, the dictionary's length, the dictionary, the stacks */
	need = 2 * (next1.len - 16 - rs_get_le64((unsigned char *)next1.ptr + 8));

	codec_stacks_budget = need;
	encode_with_base2(other, &next1, &c2, &next2, &block2, &new_base);
	assert_int_equal(new_base, 0);
	assert_true(c2.len > c1.len); /* its stacks coded after the base's, the block kept */
	assert_int_equal(block2, block1);

	codec_stacks_budget = need - 1;
	encode_with_base2(other, &next1, &c2, &next2, &block2, &new_base);
	codec_stacks_budget = saved;
	assert_int_equal(new_base, 1);
	/* a new base of the same frames and stacks: the same block, and the stacks only there */
	assert_int_equal(block2, block1);
	assert_int_equal(c2.len, c1.len);
	assert_int_equal(next2.len, next1.len);
	assert_memory_equal(next2.ptr, next1.ptr, next1.len);

	unlink(other);
	rs_buf_release(&c1);
	rs_buf_release(&c2);
	rs_buf_release(&next1);
	rs_buf_release(&next2);
}

/*
 * The base for the next run (docs/codec.md, "Shared dictionary:
 * successive runs"): the cache layout with the dictionary and the
 * stacks. The next run (the real 4 MB session with another thread id: the
 * same frames and stacks) keeps the block byte for byte, its stacks coded
 * after the block's. A version-4 cache (the dictionary's raw stream
 * alone), a version 5-6 one (its magic) or one whose stacks are damaged
 * is not taken: the container is then the one without a base, byte for
 * byte.
 */
static void test_base_kept_and_cache_layouts(void **state)
{
	struct rs_buf c1 = RS_BUF_INIT, c2 = RS_BUF_INIT, c3 = RS_BUF_INIT;
	struct rs_buf next1 = RS_BUF_INIT, next2 = RS_BUF_INIT, next3 = RS_BUF_INIT, old = RS_BUF_INIT;
	char src[512], other[] = "/tmp/rs-codec-next-XXXXXX";
	uint64_t block1 = 0, block2 = 0, block3 = 0, dict_len;

	(void)state;
	other_thread_copy(src, sizeof(src), other);

	encode_with_base(src, NULL, &c1, &next1, &block1);
	assert_true(next1.len > 16);
	assert_memory_equal(next1.ptr, "RSPYSTK\n", 8);
	dict_len = rs_get_le64((unsigned char *)next1.ptr + 8);
	assert_true(dict_len < next1.len - 16); /* the stacks follow the dictionary */

	encode_with_base(other, &next1, &c2, &next2, &block2);
	assert_int_equal(block2, block1);
	assert_memory_equal(c2.ptr, c1.ptr, block1);
	assert_int_equal(next2.len, next1.len);
	assert_memory_equal(next2.ptr, next1.ptr, next1.len);
	print_message("the first run: %zu bytes (block %llu); the next: %zu, %llu past the block\n", c1.len,
		      (unsigned long long)block1, c2.len, (unsigned long long)(c2.len - block2));

	/* a version-4 cache: the dictionary alone */
	assert_int_equal(rs_buf_put(&old, next1.ptr + 16, (size_t)dict_len), 0);
	encode_with_base(src, &old, &c3, &next3, &block3);
	assert_int_equal(c3.len, c1.len);
	assert_memory_equal(c3.ptr, c1.ptr, c1.len);
	/* a version 5-6 cache: the same bytes under the old magic */
	rs_buf_clear(&old);
	assert_int_equal(rs_buf_put(&old, next1.ptr, next1.len), 0);
	memcpy(old.ptr, "RSPYBAS\n", 8);
	encode_with_base(src, &old, &c3, &next3, &block3);
	assert_int_equal(c3.len, c1.len);
	assert_memory_equal(c3.ptr, c1.ptr, c1.len);
	/* damaged stacks: a last record whose frame is past every frame */
	rs_buf_clear(&old);
	assert_int_equal(rs_buf_put(&old, next1.ptr, next1.len), 0);
	assert_int_equal(rs_buf_put(&old, "\x00\x01\xff\xff\xff\x0f", 6), 0);
	encode_with_base(src, &old, &c3, &next3, &block3);
	assert_int_equal(c3.len, c1.len);
	assert_memory_equal(c3.ptr, c1.ptr, c1.len);
	/* damaged stacks: a thread slot count other than the dictionary's frames allow */
	rs_buf_clear(&old);
	assert_int_equal(rs_buf_put(&old, next1.ptr, 16 + (size_t)dict_len), 0);
	assert_int_equal(rs_buf_put(&old, "\x01\xff\xff\x7f", 4), 0);
	encode_with_base(src, &old, &c3, &next3, &block3);
	assert_int_equal(c3.len, c1.len);
	assert_memory_equal(c3.ptr, c1.ptr, c1.len);

	unlink(other);
	rs_buf_release(&c1);
	rs_buf_release(&c2);
	rs_buf_release(&c3);
	rs_buf_release(&next1);
	rs_buf_release(&next2);
	rs_buf_release(&next3);
	rs_buf_release(&old);
}

/*
 * codec_zalloc's tables come back zeroed and already written: every page
 * resident (mincore), so the codec's first probe of a slot does not map
 * the shared zero page that its first write must then replace (a TLB
 * flush on every core: docs/benchmarks.md, the eighth session). A plain
 * calloc of this size hands over pages no one has touched. Sizes whose
 * product overflows are refused.
 */
static void test_tables_come_written(void **state)
{
	size_t sizes[] = { 1, 4096, 200000, 8u << 20 }, page = (size_t)sysconf(_SC_PAGESIZE), k;

	(void)state;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], i, npages;
		unsigned char *p = codec_zalloc(n, 1), *vec;
		uintptr_t lo, hi;

		assert_non_null(p);
		/* before anything reads it (a read would map the zero page): every
		   page the block covers, from its first whole page to its last */
		lo = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
		hi = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
		npages = hi > lo ? (hi - lo) / page : 0;
		vec = malloc(npages ? npages : 1);
		assert_non_null(vec);
		if (npages) {
			assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
			for (i = 0; i < npages; i++)
				if (!(vec[i] & 1))
					fail_msg("page %zu of %zu of a %zu-byte table is not resident", i, npages, n);
		}
		free(vec);
		for (i = 0; i < n; i++)
			if (p[i])
				fail_msg("byte %zu of %zu is %u", i, n, p[i]);
		free(p);
	}
	assert_null(codec_zalloc(SIZE_MAX / 2, 4));
	assert_null(codec_zalloc(4, SIZE_MAX / 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables_come_written),
		cmocka_unit_test(test_real_sessions_round_trip),
		cmocka_unit_test(test_times_off_the_model_are_kept_verbatim),
		cmocka_unit_test(test_clock_passing_powers_of_two),
		cmocka_unit_test(test_escape_traps_round_trip),
		cmocka_unit_test(test_frame_shapes_in_columns),
		cmocka_unit_test(test_other_inputs_decline),
		cmocka_unit_test(test_wrong_oid_declines),
		cmocka_unit_test(test_truncated_container_refused),
		cmocka_unit_test(test_flipped_bytes_never_crash),
		cmocka_unit_test(test_unknown_version_refused),
		cmocka_unit_test(test_reserved_bytes_refused),
		cmocka_unit_test(test_output_is_capped),
		cmocka_unit_test(test_base_kept_and_cache_layouts),
		cmocka_unit_test(test_stacks_past_budget_start_a_new_base),
		cmocka_unit_test(test_small_run_after_a_large_base_starts_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
