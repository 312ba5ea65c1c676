/*
 * The session codec's proof, from the inside: through the codec's internal
 * header (src/codec/codec_internal.h) this test runs the encoder's steps
 * one by one -- open, parse, build --
 * and damage what the parse collected, or the file, in between. Each case
 * must make codec_build() decline, and each fails if the check it is about is
 * skipped: the proof's comparison of the decoded container with the file
 * (read in a sliding buffer, and mapped), the hash of the input taken by
 * the parse (in line, and on its thread), the file's change time, and the
 * formatted-time cache that the parse and the proof share.
 */
#define _GNU_SOURCE /* AT_FDCWD, utimensat */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/codec_internal.h"

#include "util/fs.h"
#include "util/hash.h"

/*
 * A session in pyinstrument 5.x's layout: `nrec` records of stacks 3 to
 * 10 frames deep, their times cycling through `ntimes` distinct clock
 * differences (multiples of 2^-40 s near 1 ms, written as repr() writes
 * them). Written to a new temporary file, whose name goes to `path`.
 */
static void write_session(char *path, size_t nrec, size_t ntimes)
{
	FILE *f;
	size_t r;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"start_time\": 1796029753.6230605, \"frame_records\": [", f);
	for (r = 0; r < nrec; r++) {
		size_t depth = 3 + (r * 7) % 8, i;
		double t = ldexp((double)(1099511628 + (int64_t)((r % ntimes) * 37)), -40);
		char num[48];

		fputs(r ? ", [[\"MainThread\\u0000<thread>\\u0000140683683439296\""
			: "[[\"MainThread\\u0000<thread>\\u0000140683683439296\"", f);
		for (i = 1; i < depth; i++)
			fprintf(f, ", \"fn%zu\\u0000/src/mod%zu.py\\u0000%zu\"", (r / 5 + i) % 40, i,
				10 + (r + i) % 3);
		codec_py_repr(t, num);
		fprintf(f, "], %s]", num);
	}
	fputs("], \"sample_count\": 0}", f);
	assert_int_equal(fclose(f), 0);
}

static void file_oid(const char *path, struct rs_id *oid, uint64_t *size)
{
	struct rs_buf b = RS_BUF_INIT;

	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	rs_sha256(oid, b.ptr, b.len);
	*size = b.len;
	rs_buf_release(&b);
}

/* Open and parse `path` with encoder `e`; the parse must take it. */
static void open_and_parse(struct enc *e, struct rs_codec_stats *st, const char *path, uint64_t size)
{
	memset(st, 0, sizeof(*st));
	assert_int_equal(codec_enc_open(e, path, size, NULL, st), 0);
	assert_int_equal(codec_enc_parse(e), 0);
}

/* codec_build() must decline with a reason containing `why`. */
static void expect_build_declines(struct enc *e, struct rs_codec_stats *st, uint64_t size,
				  const struct rs_id *oid, const char *why)
{
	struct rs_buf out = RS_BUF_INIT;
	int err = codec_build(e, &out, size, oid);

	if (err != DECLINE || !strstr(st->declined, why))
		fail_msg("build gave %d ('%s'), expected to decline with '%s'", err, st->declined, why);
	rs_buf_release(&out);
}

/*
 * A byte of what the parse collected is changed before codec_build(): the
 * streams and the container then say something else than the file, and
 * only the proof's comparison can tell. Once a frame string (in the middle
 * of the output), once the last byte of the text after the records (the
 * very end of it).
 */
static void wrong_byte_is_caught(size_t nrec, int mapped)
{
	char path[] = "/tmp/rs-test-codec-proof-XXXXXX";
	struct rs_codec_stats st;
	struct rs_buf out = RS_BUF_INIT;
	struct rs_id oid;
	uint64_t size;
	struct enc e;
	int where;

	write_session(path, nrec, 100);
	file_oid(path, &oid, &size);
	/* untouched, it is proven */
	open_and_parse(&e, &st, path, size);
	assert_int_equal(e.mapped, mapped);
	assert_int_equal(codec_build(&e, &out, size, &oid), 0);
	assert_true(out.len > 0);
	codec_enc_release(&e);
	for (where = 0; where < 2; where++) {
		open_and_parse(&e, &st, path, size);
		if (where == 0)
			e.arena.ptr[e.frames[e.nframes - 1].off + 2] ^= 1;
		else
			e.suffix.ptr[e.suffix.len - 1] ^= 1;
		expect_build_declines(&e, &st, size, &oid, "does not rebuild the object");
		codec_enc_release(&e);
	}
	rs_buf_release(&out);
	unlink(path);
}

static void test_proof_catches_a_wrong_byte_read(void **state)
{
	(void)state;
	wrong_byte_is_caught(2000, 0);
}

static void test_proof_catches_a_wrong_byte_mapped(void **state)
{
	(void)state;
	/* ~270 bytes a record: over MAP_MIN, so the file is mapped and hashed on a thread */
	wrong_byte_is_caught(80000, 1);
}

/* The hash the parse takes (in line, or on its thread) must be the oid's. */
static void test_parse_hash_must_be_the_oid(void **state)
{
	static const size_t nrec[] = { 2000, 80000 };
	struct rs_codec_stats st;
	struct rs_id oid;
	uint64_t size;
	struct enc e;
	int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		char path[] = "/tmp/rs-test-codec-proof-XXXXXX";

		write_session(path, nrec[k], 100);
		file_oid(path, &oid, &size);
		oid.id[31] ^= 0x80;
		open_and_parse(&e, &st, path, size);
		assert_int_equal(e.mapped, k);
		expect_build_declines(&e, &st, size, &oid, "does not hash to the object's oid");
		codec_enc_release(&e);
		unlink(path);
	}
}

/*
 * The same bytes written back between the parse and the proof: the
 * comparison finds nothing, but the file was written to while it was
 * encoded, and what the parse read cannot be told from what the hash
 * read. Its times are set in the past first, so that the rewrite changes
 * them whatever the clock's granularity.
 */
static void test_file_written_during_encoding_declines(void **state)
{
	char path[] = "/tmp/rs-test-codec-proof-XXXXXX";
	struct timespec past[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct rs_codec_stats st;
	struct rs_buf bytes = RS_BUF_INIT;
	struct rs_id oid;
	uint64_t size;
	struct enc e;
	FILE *f;

	(void)state;
	write_session(path, 2000, 100);
	file_oid(path, &oid, &size);
	assert_int_equal(utimensat(AT_FDCWD, path, past, 0), 0);
	assert_int_equal(rs_fs_read_file(&bytes, path, 1u << 30), 0);
	open_and_parse(&e, &st, path, size);
	f = fopen(path, "r+");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes.ptr, 1, bytes.len, f), bytes.len);
	assert_int_equal(fclose(f), 0);
	expect_build_declines(&e, &st, size, &oid, "the file changed while it was encoded");
	codec_enc_release(&e);
	rs_buf_release(&bytes);
	unlink(path);
}

/*
 * 30,000 records cycling through 12,000 distinct times: each is formatted
 * once, by the parse; the proof's decode finds them all in the cache.
 */
static void test_each_distinct_time_is_formatted_once(void **state)
{
	char path[] = "/tmp/rs-test-codec-proof-XXXXXX";
	struct rs_codec_stats st;
	struct rs_buf out = RS_BUF_INIT;
	struct rs_id oid;
	uint64_t size;
	struct enc e;

	(void)state;
	write_session(path, 30000, 12000);
	file_oid(path, &oid, &size);
	open_and_parse(&e, &st, path, size);
	assert_int_equal(codec_build(&e, &out, size, &oid), 0);
	assert_int_equal(e.nrecords, 30000);
	if (e.repr->misses > 12000 + 12000 / 20)
		fail_msg("%llu times formatted for 12000 distinct ones",
			 (unsigned long long)e.repr->misses);
	codec_enc_release(&e);
	rs_buf_release(&out);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proof_catches_a_wrong_byte_read),
		cmocka_unit_test(test_proof_catches_a_wrong_byte_mapped),
		cmocka_unit_test(test_parse_hash_must_be_the_oid),
		cmocka_unit_test(test_file_written_during_encoding_declines),
		cmocka_unit_test(test_each_distinct_time_is_formatted_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
