/*
 * The session codec's decoder against containers a hostile remote could
 * serve, and against the old container version a store already holds:
 *
 * - a 19 KB container whose dictionary stream claims a 400 MiB frame
 *   string, and one whose tree claims 32M nodes (both zstd-compressed, as
 *   the ones that made `results fetch` peak at 1.17 GB): refused before
 *   anything that size is allocated, the decoding child's peak RSS under
 *   64 MB (fork + wait4's ru_maxrss);
 * - a container at every cap at once (the most frames, frame bytes and
 *   tree nodes it may hold): refused, still under 64 MB;
 * - containers of versions 1, 2 and 3 written by earlier builds
 *   (tests/data/real_small_pop1k.codec-v1, -v2, -v3) decode to the real
 *   session;
 * - a version-4 frame list (codec 5) whose first frame repeats a previous
 *   one is refused;
 * - version 4's tree model, which follows the tree's shape on a stack of
 *   its own, codes and decodes alike a tree deeper than that stack and
 *   values past the tree's end;
 * - version 5's base tree: one at the caps (524,288 nodes, with the most
 *   base frames) stays under 64 MB, taken as the tree or coded against;
 *   one claiming 32M nodes is refused small; a hand-built container
 *   decodes, its tree the base tree or coded against it, exactly as
 *   docs/codec.md says, and each damage to the new fields (a match past
 *   the base node's children, a thread slot the run lacks, a child count
 *   below 0, a base frame past the base, an empty tree without a base
 *   tree or of another node count) is refused, naming it, and a matched
 *   frame joins its parent frame's successor list; the tree model against a base codes and
 *   decodes alike any values, those a damaged stream holds too;
 * - version 7's stacks (the call tree and samples replaced by one stacks
 *   stream, coded with the stacks model, codec 6): the container this
 *   build writes for the real session (tests/data/real_small_pop1k.codec-v7)
 *   decodes to it, and v1-v6 still do; hand-built containers decode as a
 *   first run's (stacks in the base block) and as a later run's (coded
 *   after the base's), and each damage is refused, naming it: a call tree
 *   (stream or node count), a stacks header whose A is not nbase +
 *   nframes or whose T is not nthreads, a k past the depth, an m past
 *   MAX_DEPTH - k, a rank at A + T or beyond, records left over or
 *   missing, a coded stream cut short or claiming more, a base with
 *   frames the run lacks; codec 6 on any other stream, or in any
 *   container of versions 1 to 6, is refused; the base block's stacks
 *   (400 MiB zstd, or one byte past MAX_STACKS_BYTES) and a later run's
 *   past what the base's leave are refused before anything is allocated;
 *   stacks at the caps (STACKS_MAX_NODES nodes, every frame, records of
 *   MAX_DEPTH frames, MAX_STACKS_BYTES, beside a base dictionary taking
 *   the rest of the streams' cap), coded with the model or zstd, decode
 *   under 64 MB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zstd.h>

#include "codec/rc_model.h"
#include "codec/rc_stacks.h"
#include "codec/session_codec.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

#if defined(__SANITIZE_ADDRESS__)
#define PEAK_LIMIT_KB (320 * 1024) /* ASan's shadow and quarantine; the unbounded decoder took 1.17 GB */
#define V7_GROWTH_LIMIT_KB PEAK_LIMIT_KB
#else
#define PEAK_LIMIT_KB (64 * 1024)
#define V7_GROWTH_LIMIT_KB (48 * 1024) /* PEAK_LIMIT_KB less a process's own 16 MB */
#endif

static int collect(void *ctx, const void *p, size_t n)
{
	return rs_buf_put(ctx, p, n);
}

static int discard(void *ctx, const void *p, size_t n)
{
	(void)ctx;
	(void)p;
	(void)n;
	return 0;
}

static void data_path(char *out, size_t n, const char *name)
{
	const char *dir = getenv("RS_TEST_DATA");

	assert_non_null(dir);
	snprintf(out, n, "%s/%s", dir, name);
}

static void put_le(struct rs_buf *b, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		assert_int_equal(rs_buf_putc(b, (char)(v >> (8 * i))), 0);
}

static void put_varint(struct rs_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		assert_int_equal(rs_buf_putc(b, (char)(v | 0x80)), 0);
		v >>= 7;
	}
	assert_int_equal(rs_buf_putc(b, (char)v), 0);
}

/* A stream kept as is: header (raw, stored, codec 0) and bytes. */
static void put_stream(struct rs_buf *c, const struct rs_buf *raw)
{
	put_le(c, raw->len, 8);
	put_le(c, raw->len, 8);
	put_le(c, 0, 8);
	assert_int_equal(rs_buf_put(c, raw->ptr, raw->len), 0);
}

/*
 * A stream of `raw_len` bytes, zstd-compressed in one frame that states
 * its size, the bytes made a block at a time by fill(block, n, offset):
 * a 400 MiB stream costs the test one block of memory.
 */
typedef void (*fill_fn)(unsigned char *p, size_t n, uint64_t off, void *arg);

static void put_zstd_stream(struct rs_buf *c, uint64_t raw_len, fill_fn fill, void *arg)
{
	ZSTD_CCtx *z = ZSTD_createCCtx();
	size_t block = 1u << 20, hdr = c->len;
	unsigned char *in = malloc(block), *zout = malloc(ZSTD_CStreamOutSize());
	uint64_t off = 0;

	assert_non_null(z);
	assert_non_null(in);
	assert_non_null(zout);
	assert_false(ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1)));
	assert_false(ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(z, raw_len)));
	put_le(c, raw_len, 8);
	put_le(c, 0, 8); /* the stored length, set below */
	put_le(c, 1, 8);
	do {
		size_t n = raw_len - off < block ? (size_t)(raw_len - off) : block;
		ZSTD_inBuffer ib = { in, n, 0 };
		int last = off + n == raw_len;
		size_t left;

		fill(in, n, off, arg);
		do {
			ZSTD_outBuffer ob = { zout, ZSTD_CStreamOutSize(), 0 };

			left = ZSTD_compressStream2(z, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
			assert_false(ZSTD_isError(left));
			assert_int_equal(rs_buf_put(c, zout, ob.pos), 0);
		} while (last ? left != 0 : ib.pos < ib.size);
		off += n;
	} while (off < raw_len);
	{
		uint64_t stored = c->len - hdr - 24;
		int i;

		for (i = 0; i < 8; i++)
			c->ptr[hdr + 8 + i] = (char)(stored >> (8 * i));
	}
	ZSTD_freeCCtx(z);
	free(in);
	free(zout);
}

/* The 400 MiB frame string: its length varint, then 'a's. */
static void fill_big_frame(unsigned char *p, size_t n, uint64_t off, void *arg)
{
	struct rs_buf *head = arg; /* the varint, at the stream's start */
	size_t i;

	memset(p, 'a', n);
	for (i = 0; off + i < head->len && i < n; i++)
		p[i] = (unsigned char)head->ptr[off + i];
}

/* A tree of `*nodes` nodes: the root has them all as children, each `1` (its frame's first place) with no child. */
static void fill_star(unsigned char *p, size_t n, uint64_t off, void *arg)
{
	struct rs_buf *head = arg;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t at = off + i;

		p[i] = at < head->len ? (unsigned char)head->ptr[at] : ((at - head->len) & 1) ? 0 : 1;
	}
}

/* Frame strings of 30 bytes each: a varint 30, then text. */
static void fill_frames(unsigned char *p, size_t n, uint64_t off, void *arg)
{
	size_t i;

	(void)arg;
	for (i = 0; i < n; i++)
		p[i] = (off + i) % 31 == 0 ? 30 : 'f';
}

/* The header of the base block and the main header of a container of `version` claiming `size` bytes. */
static void put_base_header(struct rs_buf *c, unsigned version)
{
	assert_int_equal(rs_buf_put(c, "RSPYDIC\n", 8), 0);
	put_le(c, version, 4);
	put_le(c, 0, 4);
}

static void put_main_header(struct rs_buf *c, unsigned version, uint64_t size)
{
	assert_int_equal(rs_buf_put(c, "RSPYSES\n", 8), 0);
	put_le(c, version, 4);
	put_le(c, version == 1 ? 12 : 9, 4);
	put_le(c, size, 8);
}

/* The params stream: base frames, grid, ref, new frames, threads, nodes, records (and no phase from version 2). */
static void params(struct rs_buf *b, unsigned version, uint64_t nbase, uint64_t nframes, uint64_t nnodes,
		   uint64_t nrecords)
{
	rs_buf_clear(b);
	put_varint(b, nbase);
	put_varint(b, 30);
	put_varint(b, 0);
	put_varint(b, nframes);
	put_varint(b, 0);
	put_varint(b, nnodes);
	put_varint(b, nrecords);
	if (version >= 2)
		put_varint(b, 0);
}

/* `n` empty streams. */
static void put_empty(struct rs_buf *c, int n)
{
	struct rs_buf e = RS_BUF_INIT;

	while (n--)
		put_stream(c, &e);
}

struct peak {
	int err;        /* the child's decode result (RS_* code) */
	long maxrss_kb;
	long start_kb;  /* this process's RSS when the child was forked: the child's to start with */
};

/* This process's resident set, in KB (0 if /proc cannot say). */
static long rss_kb(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/*
 * Decode `c` (claiming at most `max_size`) in a child; its result and
 * peak RSS. The child starts with this process's resident pages, so the
 * heap the tests before left is handed back first (malloc_trim).
 */
static struct peak decode_in_child(const struct rs_buf *c, uint64_t max_size)
{
	struct peak r = { 0, 0, 0 };
	struct rusage ru;
	int status = 0;
	pid_t pid;

	malloc_trim(0);
	r.start_kb = rss_kb();
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int err = rs_codec_decode((const unsigned char *)c->ptr, c->len, max_size, discard, NULL);

		if (err)
			fprintf(stderr, "decode: %s\n", rs_error_message());
		_exit(err == RS_ECORRUPT ? 1 : err == 0 ? 0 : 2);
	}
	assert_int_equal(wait4(pid, &status, 0, &ru), pid);
	assert_true(WIFEXITED(status));
	r.err = WEXITSTATUS(status) == 1 ? RS_ECORRUPT : WEXITSTATUS(status) == 0 ? 0 : RS_EGENERIC;
	r.maxrss_kb = ru.ru_maxrss;
	return r;
}

/* A version-`version` container whose dictionary stream holds one frame string of 400 MiB. */
static void big_frame_container(struct rs_buf *c, unsigned version)
{
	struct rs_buf raw = RS_BUF_INIT, head = RS_BUF_INIT;
	uint64_t len = 400ull << 20;

	rs_buf_clear(c);
	put_base_header(c, version);
	put_empty(c, version >= 5 ? 2 : 1); /* an empty base (and, version 5, no base tree) */
	put_main_header(c, version, 1ull << 30);
	params(&raw, version, 0, 1, 1, 0);
	put_stream(c, &raw);
	put_empty(c, 2); /* prefix, suffix */
	put_varint(&head, len);
	put_zstd_stream(c, head.len + len, fill_big_frame, &head);
	put_empty(c, version == 1 ? 8 : 5);
	rs_buf_release(&raw);
	rs_buf_release(&head);
}

/*
 * `nbase` frames of 30 bytes (`nnnnnnnnnnnnnn\u0000f\u0000100`) as a
 * frame list in columns (codec 4, version 3): 4 bytes of column A each,
 * 17 bytes of texts in all, zstd-compressed to a few KB: the most a list
 * in columns can make a decoder rebuild from the least. Version 4 (codec
 * 5): frames of 30 bytes too (`nnnn\u0000f\u0000100\u0001l100`), each
 * after the first a COL_SAME of line difference 0, two bytes of columns.
 */
static void put_columns_base(struct rs_buf *c, unsigned version, uint64_t nbase)
{
	struct rs_buf a = RS_BUF_INIT, cols = RS_BUF_INIT, col[6];
	const char *texts = version >= 4 ? "nnnn\nf\n" : "nnnnnnnnnnnnnn\nf\n";
	size_t bound, n;
	uint64_t i;
	char *z;
	int k;

	for (k = 0; k < 6; k++)
		col[k] = (struct rs_buf)RS_BUF_INIT;
	for (i = 0; i < nbase && version < 4; i++) {
		put_varint(&a, 1);      /* a plain frame: name, file, first line */
		put_varint(&a, i != 0); /* 0: new (the next text), 1: the last one */
		put_varint(&a, i != 0);
		put_varint(&a, 100);
	}
	for (i = 0; i < nbase && version >= 4; i++) {
		put_varint(&col[0], i ? 6 : 3); /* a frame with a line, then the same function's */
		if (!i) {
			put_varint(&col[1], 0);
			put_varint(&col[2], 0);
			put_varint(&col[3], 100);
		}
		put_varint(&col[5], 0);
	}
	if (version < 4)
		put_varint(&cols, a.len);
	for (k = 0; k < 6 && version >= 4; k++)
		put_varint(&cols, col[k].len);
	assert_int_equal(rs_buf_put(&cols, a.ptr, a.len), 0);
	for (k = 0; k < 6; k++)
		assert_int_equal(rs_buf_put(&cols, col[k].ptr, col[k].len), 0);
	assert_int_equal(rs_buf_put(&cols, texts, strlen(texts)), 0);
	bound = ZSTD_compressBound(cols.len);
	z = malloc(bound);
	assert_non_null(z);
	n = ZSTD_compress(z, bound, cols.ptr, cols.len, 3);
	assert_false(ZSTD_isError(n));
	put_le(c, nbase * 31, 8);
	put_le(c, n, 8);
	put_le(c, version >= 4 ? 5 : 4, 8);
	assert_int_equal(rs_buf_put(c, z, n), 0);
	free(z);
	rs_buf_release(&a);
	rs_buf_release(&cols);
	for (k = 0; k < 6; k++)
		rs_buf_release(&col[k]);
}

/*
 * A container claiming `size` bytes whose tree stream, zstd-compressed,
 * holds `nodes` nodes (the root's children), with `nbase` base frames
 * (in columns from version 3).
 */
static void big_tree_container(struct rs_buf *c, unsigned version, uint64_t nodes, uint64_t nbase,
			       uint64_t size)
{
	struct rs_buf raw = RS_BUF_INIT, head = RS_BUF_INIT;

	rs_buf_clear(c);
	put_base_header(c, version);
	if (nbase && version >= 3)
		put_columns_base(c, version, nbase);
	else if (nbase)
		put_zstd_stream(c, nbase * 31, fill_frames, NULL);
	else
		put_empty(c, 1);
	if (version >= 5)
		put_empty(c, 1); /* no base tree */
	put_main_header(c, version, size);
	params(&raw, version, nbase, 0, nodes, 0);
	put_stream(c, &raw);
	put_empty(c, 4); /* prefix, suffix, dict, threads */
	/* root: nodes - 1 children; the first child's frame is new (0, rank 0), the rest place 1 */
	put_varint(&head, nodes - 1);
	assert_int_equal(rs_buf_put(&head, "\0\0\0", 3), 0);
	put_zstd_stream(c, head.len + 2 * (nodes - 2), fill_star, &head);
	put_empty(c, version == 1 ? 6 : 3);
	rs_buf_release(&raw);
	rs_buf_release(&head);
}

/* With RS_CODEC_HOSTILE_DUMP=DIR, each container also goes to DIR as a fuzz corpus entry (fuzz_codec.c's two leading bytes). */
static void dump(const struct rs_buf *c, const char *name)
{
	const char *dir = getenv("RS_CODEC_HOSTILE_DUMP");
	char path[512];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	fputc(1, f);
	fputc(255, f);
	assert_int_equal(fwrite(c->ptr, 1, c->len, f), c->len);
	assert_int_equal(fclose(f), 0);
}

static void check_refused_small(const struct rs_buf *c, const char *what)
{
	struct peak p;

	print_message("%s: %zu bytes of container\n", what, c->len);
	assert_true(c->len < 64 * 1024);
	p = decode_in_child(c, 1ull << 30);
	print_message("%s: refused %d, peak RSS %ld KB\n", what, p.err == RS_ECORRUPT, p.maxrss_kb);
	assert_int_equal(p.err, RS_ECORRUPT);
	assert_true(p.maxrss_kb < PEAK_LIMIT_KB);
}

static void test_huge_frame_string_refused_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT;
	unsigned v;

	(void)state;
	for (v = 1; v <= 5; v++) {
		char name[64];

		big_frame_container(&c, v);
		snprintf(name, sizeof(name), "hostile_frame_400MiB_v%u", v);
		dump(&c, name);
		check_refused_small(&c, name);
	}
	rs_buf_release(&c);
}

static void test_huge_tree_refused_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT;
	unsigned v;

	(void)state;
	for (v = 1; v <= 5; v++) {
		char name[64];

		big_tree_container(&c, v, 32u << 20, 1, 1ull << 30);
		snprintf(name, sizeof(name), "hostile_tree_32M_v%u", v);
		dump(&c, name);
		check_refused_small(&c, name);
	}
	rs_buf_release(&c);
}

/*
 * Everything at its cap at once: the most base frames (8 MiB of them) and
 * the most tree nodes a container may have. The decode reads them all,
 * then finds no record where the object needs some: refused, and the
 * memory it took on the way stays under the limit.
 */
static void test_every_cap_at_once_stays_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT;
	struct peak p;
	unsigned v;

	(void)state;
	for (v = 2; v <= 5; v++) {
		char name[64];

		big_tree_container(&c, v, 1u << 19, 1u << 18, 1ull << 30);
		snprintf(name, sizeof(name), "hostile_every_cap_v%u", v);
		dump(&c, name);
		p = decode_in_child(&c, 1ull << 30);
		print_message("at the caps, version %u: %zu bytes of container, refused %d, peak RSS %ld KB\n",
			      v, c.len, p.err == RS_ECORRUPT, p.maxrss_kb);
		assert_int_equal(p.err, RS_ECORRUPT);
		assert_true(p.maxrss_kb < PEAK_LIMIT_KB);
	}
	rs_buf_release(&c);
}

/* A stream claiming more than the object's size is refused even under the caps. */
static void test_stream_larger_than_object_refused(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;

	(void)state;
	big_tree_container(&c, 2, 1000, 1, 1000);
	assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1000, collect, &back), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "more than the object allows"));
	assert_int_equal(back.len, 0);
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/*
 * A container written by an earlier build (`version` 1 or 2, the file
 * `name` in tests/data) decodes to the real session byte for byte: every
 * version a results build ever wrote stays readable.
 */
static void old_container_decodes(const char *name, unsigned version)
{
	struct rs_buf c = RS_BUF_INIT, orig = RS_BUF_INIT, back = RS_BUF_INIT;
	unsigned char want[4] = { (unsigned char)version, 0, 0, 0 };
	char path[512];

	data_path(path, sizeof(path), name);
	assert_int_equal(rs_fs_read_file(&c, path, 1u << 26), 0);
	assert_int_equal(memcmp(c.ptr + 8, want, 4), 0);
	data_path(path, sizeof(path), "real_small_pop1k.pyisession");
	assert_int_equal(rs_fs_read_file(&orig, path, 1u << 26), 0);
	assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, orig.len, collect, &back), 0);
	assert_int_equal(back.len, orig.len);
	assert_memory_equal(back.ptr, orig.ptr, orig.len);
	rs_buf_release(&c);
	rs_buf_release(&orig);
	rs_buf_release(&back);
}

static void test_version_1_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v1", 1);
}

static void test_version_2_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v2", 2);
}

static void test_version_3_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v3", 3);
}

static void test_version_4_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v4", 4);
}

static void test_version_5_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v5", 5);
}

static void test_version_6_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v6", 6);
}

/* A later run's version-6 container: its tree coded against the base tree of its first block. */
static void test_version_6_rerun_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v6-rerun", 6);
}

/*
 * Codec 5's COL_SAME repeats the previous frame's parts: as a list's
 * first frame, or after a frame kept as text, there is none to repeat,
 * and the list is refused (nothing is read from a part never given).
 */
static void test_repeat_without_previous_refused(void **state)
{
	static const unsigned char first[] = { 6 }, after_text[] = { 0, 6 };
	const unsigned char *kinds[2] = { first, after_text };
	static const size_t nkinds[2] = { 1, 2 };
	static const char *texts[2] = { "", "x\n" };
	int t;

	(void)state;
	for (t = 0; t < 2; t++) {
		struct rs_buf c = RS_BUF_INIT, cols = RS_BUF_INIT, back = RS_BUF_INIT;
		size_t bound, n;
		char *z;

		/* kinds, no names, files, first lines or classes, one line difference (0), the text "x" */
		put_varint(&cols, nkinds[t]);
		put_varint(&cols, 0);
		put_varint(&cols, 0);
		put_varint(&cols, 0);
		put_varint(&cols, 0);
		put_varint(&cols, 1);
		assert_int_equal(rs_buf_put(&cols, kinds[t], nkinds[t]), 0);
		put_varint(&cols, 0); /* the line column */
		assert_int_equal(rs_buf_put(&cols, texts[t], strlen(texts[t])), 0);
		bound = ZSTD_compressBound(cols.len);
		z = malloc(bound);
		assert_non_null(z);
		n = ZSTD_compress(z, bound, cols.ptr, cols.len, 3);
		assert_false(ZSTD_isError(n));
		put_base_header(&c, 4);
		put_le(&c, 64, 8);
		put_le(&c, n, 8);
		put_le(&c, 5, 8);
		assert_int_equal(rs_buf_put(&c, z, n), 0);
		free(z);
		put_main_header(&c, 4, 1000);
		assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1000, collect, &back), RS_ECORRUPT);
		assert_non_null(strstr(rs_error_message(), "repeats a frame it does not have"));
		assert_int_equal(back.len, 0);
		rs_buf_release(&c);
		rs_buf_release(&cols);
		rs_buf_release(&back);
	}
}

/*
 * Version 4's tree model keeps at most RC_TREE4_DEPTH open nodes; a
 * deeper chain (70,000 nodes, each the only child of the one before),
 * then values after the last node (no node is open), must still come
 * back exactly: both sides take the same contexts past the stack.
 */
static void test_tree_model_past_its_stack(void **state)
{
	struct rs_buf raw = RS_BUF_INIT, packed = RS_BUF_INIT;
	unsigned char *back;
	uint64_t i;

	(void)state;
	put_varint(&raw, 1); /* the root's one child */
	for (i = 0; i < 70000; i++) {
		put_varint(&raw, i % 3 ? 1 : 0); /* place 1, or new (0) and a rank */
		if (i % 3 == 0)
			put_varint(&raw, i);
		put_varint(&raw, i + 1 < 70000); /* one child, the last none */
	}
	for (i = 0; i < 1000; i++)
		put_varint(&raw, i * 7919); /* past the tree */
	assert_true(RC_TREE4_DEPTH < 70000);
	assert_int_equal(rs_rc_pack(&packed, RC_TREE, 4, (unsigned char *)raw.ptr, raw.len), 0);
	back = malloc(raw.len);
	assert_non_null(back);
	assert_int_equal(rs_rc_unpack(back, raw.len, RC_TREE, 4, (unsigned char *)packed.ptr, packed.len), 0);
	assert_memory_equal(back, raw.ptr, raw.len);
	/* and read as version 3's model, it is not the same stream */
	assert_true(rs_rc_unpack(back, raw.len, RC_TREE, 3, (unsigned char *)packed.ptr, packed.len) != 0 ||
		    memcmp(back, raw.ptr, raw.len) != 0);
	rs_error_clear();
	free(back);
	rs_buf_release(&raw);
	rs_buf_release(&packed);
}

/*
 * Version 5: a container whose base block holds `nbase` base frames (in
 * split columns; 1: one frame in a stored stream) and a base tree of
 * `nodes` nodes, a star (the root's children, the first's frame new, the
 * rest place 1), zstd-compressed, or, with `claimed` above `nodes`, one
 * that says it has `claimed` nodes. The main tree is empty (the tree is
 * the base tree) or, `against`, each node a match of the base root's
 * next child with its count: two bytes a node. No records: a decode
 * reads it all, then finds the object missing.
 */
static void base_tree_container(struct rs_buf *c, uint64_t nodes, uint64_t claimed, uint64_t nbase, int against)
{
	struct rs_buf raw = RS_BUF_INIT, head = RS_BUF_INIT, one = RS_BUF_INIT;

	rs_buf_clear(c);
	put_base_header(c, 5);
	if (nbase > 1) {
		put_columns_base(c, 5, nbase);
	} else {
		put_varint(&one, 1);
		assert_int_equal(rs_buf_putc(&one, 'f'), 0);
		put_stream(c, &one);
	}
	put_varint(&head, 0);       /* no thread slots */
	put_varint(&head, claimed); /* nodes */
	put_varint(&head, nodes - 1);
	assert_int_equal(rs_buf_put(&head, "\0\0\0", 3), 0);
	put_zstd_stream(c, head.len + 2 * (nodes - 2), fill_star, &head);
	put_main_header(c, 5, 1ull << 30);
	params(&raw, 5, nbase, 0, claimed, 0);
	put_stream(c, &raw);
	put_empty(c, 4); /* prefix, suffix, dict, threads */
	if (against) {
		rs_buf_clear(&head);
		put_varint(&head, nodes - 1); /* then per node 1 (the next base child), 0 (its count) */
		put_zstd_stream(c, head.len + 2 * (nodes - 1), fill_star, &head);
	} else {
		put_empty(c, 1);
	}
	put_empty(c, 3);
	rs_buf_release(&raw);
	rs_buf_release(&head);
	rs_buf_release(&one);
}

static void test_base_tree_at_the_caps_stays_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT;
	struct peak p;
	int against;

	(void)state;
	for (against = 0; against <= 1; against++) {
		const char *name = against ? "hostile_base_tree_cap_against_v5" : "hostile_base_tree_cap_v5";

		base_tree_container(&c, 1u << 19, 1u << 19, 1u << 18, against);
		dump(&c, name);
		p = decode_in_child(&c, 1ull << 30);
		print_message("%s: %zu bytes of container, refused %d, peak RSS %ld KB\n", name, c.len,
			      p.err == RS_ECORRUPT, p.maxrss_kb);
		assert_int_equal(p.err, RS_ECORRUPT);
		assert_true(p.maxrss_kb < PEAK_LIMIT_KB);
	}
	rs_buf_release(&c);
}

static void test_base_tree_claiming_32M_nodes_refused_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT, back = RS_BUF_INIT;

	(void)state;
	base_tree_container(&c, 1000, 32u << 20, 1, 0);
	dump(&c, "hostile_base_tree_32M_v5");
	check_refused_small(&c, "hostile_base_tree_32M_v5");
	assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1ull << 30, collect, &back), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "base tree's counts do not fit"));
	rs_buf_release(&c);
	rs_buf_release(&back);
}

/*
 * A small container of `version` (5 or 6) for `out`: dictionary `"a"`,
 * base tree `btree` (one thread slot, 3 nodes: root -> slot 0 -> frame 0
 * in the tests'), one thread frame `"T"`, `threads` of them in the run (0
 * or 1); `nodes` nodes; the main tree stream `tree`/`tree_len` as is;
 * params up to the record count (one record, ending at node 2) with the
 * grid `grid`, then `tail` (the phase, and version 6's grid changes);
 * the times stream `times` and the tesc stream's one text, "0.5".
 */
struct small {
	unsigned version;
	const unsigned char *btree, *tree, *tail, *times;
	size_t btree_len, tree_len, tail_len, times_len;
	int threads, nodes;
	uint64_t grid;
};

static void small_container(struct rs_buf *c, const struct small *sm, const char *out)
{
	static const char prefix[] = "{\"frame_records\": [", suffix[] = "}";
	struct rs_buf b = RS_BUF_INIT;

	rs_buf_clear(c);
	put_base_header(c, sm->version);
	put_varint(&b, 1);
	assert_int_equal(rs_buf_putc(&b, 'a'), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, sm->btree, sm->btree_len), 0);
	put_stream(c, &b);
	put_main_header(c, sm->version, strlen(out));
	rs_buf_clear(&b);
	put_varint(&b, 1);                    /* base frames */
	put_varint(&b, sm->grid);             /* grid */
	put_varint(&b, 0);                    /* ref */
	put_varint(&b, 0);                    /* new frames */
	put_varint(&b, (uint64_t)sm->threads); /* thread frames */
	put_varint(&b, (uint64_t)sm->nodes);
	put_varint(&b, 1); /* records */
	assert_int_equal(rs_buf_put(&b, sm->tail, sm->tail_len), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, prefix, strlen(prefix)), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, suffix, strlen(suffix)), 0);
	put_stream(c, &b);
	put_empty(c, 1); /* dict */
	rs_buf_clear(&b);
	if (sm->threads) {
		put_varint(&b, 1);
		assert_int_equal(rs_buf_putc(&b, 'T'), 0);
	}
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, sm->tree, sm->tree_len), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	put_varint(&b, 4); /* the record ends at node 2: zigzag(2 - 0) */
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, sm->times, sm->times_len), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	put_varint(&b, 3);
	assert_int_equal(rs_buf_put(&b, "0.5", 3), 0);
	put_stream(c, &b);
	rs_buf_release(&b);
}

/* Case `i`: `c` decodes to `out` (`says` NULL), or is refused as damaged with a message containing `says`. */
static void decodes_or_says(const struct rs_buf *c, const char *out, const char *says, size_t i)
{
	struct rs_buf back = RS_BUF_INIT;
	int err = rs_codec_decode((unsigned char *)c->ptr, c->len, strlen(out), collect, &back);

	if (!says) {
		if (err)
			fail_msg("case %zu: %s", i, rs_error_message());
		assert_int_equal(back.len, strlen(out));
		assert_memory_equal(back.ptr, out, strlen(out));
	} else {
		assert_int_equal(err, RS_ECORRUPT);
		if (!strstr(rs_error_message(), says))
			fail_msg("case %zu: '%s', not '%s'", i, rs_error_message(), says);
		assert_int_equal(back.len, 0);
	}
	rs_buf_release(&back);
}



static void test_version_6_grid_changes_refused(void **state)
{
	static const char out[] = "{\"frame_records\": [[[\"T\", \"a\"], 0.5]]}";
	static const unsigned char text[] = { 0 };         /* the time is text */
	static const unsigned char modelled[] = { 1, 0 }; /* residual 0, n = ref: a time of 0, refused later */
	/* residual 0, n = 2^50 (zigzag: 2^51): on the grid 2^-62 its reading's steps pass 64 bits */
	static const unsigned char far[] = { 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x04 };
	/* phase, change count, gaps */
	static const unsigned char none[] = { 0, 0 }, phase_only[] = { 7, 0 }, no_phase[] = { 0, 1, 0 },
				   on_text[] = { 7, 1, 0 }, past[] = { 7, 1, 1 }, too_many[] = { 7, 33 },
				   cut[] = { 7, 2, 0 },
				   /* two gaps whose sum wraps 2^64: the second change at record 0, before the first */
				   wrap[] = { 7, 2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20,
					      0xff, 0xff, 0xff, 0xff, 0xff, 0xdf, 0xff, 0xff, 0xff, 0x01 },
				   for_grid[] = { 7, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
								      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	struct {
		const unsigned char *tail, *times;
		size_t tail_len, times_len;
		const char *says; /* NULL: decodes to `out` */
		uint64_t grid;    /* 0: 30 */
	} cases[] = {
		{ none, text, sizeof(none), sizeof(text), NULL, 0 },
		{ phase_only, far, sizeof(phase_only), sizeof(far), "a time is out of range", 62 },
		{ on_text, far, sizeof(on_text), sizeof(far), "a time is out of range", 62 },
		{ phase_only, text, sizeof(phase_only), sizeof(text), NULL, 0 },
		{ no_phase, text, sizeof(no_phase), sizeof(text), "grid changes are out of range", 0 },
		{ past, text, sizeof(past), sizeof(text), "grid changes are out of range", 0 },
		{ for_grid, text, sizeof(for_grid), sizeof(text), "grid changes are out of range", 0 },
		{ too_many, text, sizeof(too_many), sizeof(text), "parameters are unreadable", 0 },
		{ cut, text, sizeof(cut), sizeof(text), "parameters are unreadable", 0 },
		{ wrap, text, sizeof(wrap), sizeof(text), "parameters are unreadable", 0 },
		{ on_text, text, sizeof(on_text), sizeof(text), "changes grid at a time kept as text", 0 },
		{ on_text, modelled, sizeof(on_text), sizeof(modelled), "a time is out of range", 0 },
	};
	/* as test_version_5_base_tree_fields: one thread slot, 3 nodes */
	static const unsigned char btree[] = { 1, 3, 1, 0, 1, 1, 0, 0, 0 };
	struct rs_buf c = RS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct small sm = { 6, btree, NULL, cases[i].tail, cases[i].times, sizeof(btree), 0,
				    cases[i].tail_len, cases[i].times_len, 1, 3, cases[i].grid ? cases[i].grid : 30 };

		small_container(&c, &sm, out);
		if (i == 3)
			dump(&c, "container_v6_phase");
		decodes_or_says(&c, out, cases[i].says, i);
	}
	rs_buf_release(&c);
}

static void test_version_5_base_tree_fields(void **state)
{
	static const char out[] = "{\"frame_records\": [[[\"T\", \"a\"], 0.5]]}";
	/* T = 1, N = 3; root: 1 child; slot 0 (rank 1: new, the rank itself), 1 child; frame 0 (new), no child */
	static const unsigned char btree[] = { 1, 3, 1, 0, 1, 1, 0, 0, 0 };
	static const unsigned char bad_frame[] = { 1, 3, 1, 0, 2, 1, 0, 0, 0 }; /* rank 2: past base and slots */
	/* against the base: the root's child matches base child 0 (1), count + 0; its child likewise */
	static const unsigned char against[] = { 1, 1, 0, 1, 0 };
	static const unsigned char past[] = { 1, 3, 0, 1, 0 };   /* zigzag(1) + 1: base child 1 of 1 */
	static const unsigned char below[] = { 1, 1, 3, 1, 0 };  /* count 1 + unzigzag(3) = -1 */
	/* unmatched under a matched parent: 0, then version 4's code (0, rank 1) and count; its child as version 4 */
	static const unsigned char unmatched[] = { 1, 0, 0, 1, 1, 0, 0, 0 };
	/*
	 * 4 nodes: the root's child matched, 2 children (1 + unzigzag(2)); the first matched
	 * (frame 0, which joins frame T's list), the second unmatched: place 1 of that list
	 */
	static const unsigned char touched[] = { 1, 1, 2, 1, 0, 0, 1, 0 };
	struct {
		const unsigned char *btree, *tree;
		size_t btree_len, tree_len;
		int threads, nodes;
		const char *says; /* NULL: decodes to `out` */
	} cases[] = {
		{ btree, NULL, sizeof(btree), 0, 1, 3, NULL },
		{ btree, against, sizeof(btree), sizeof(against), 1, 3, NULL },
		{ btree, unmatched, sizeof(btree), sizeof(unmatched), 1, 3, NULL },
		{ btree, touched, sizeof(btree), sizeof(touched), 1, 4, NULL },
		{ btree, past, sizeof(btree), sizeof(past), 1, 3, "names a base node it does not have" },
		{ btree, below, sizeof(btree), sizeof(below), 1, 3, "the call tree is inconsistent" },
		{ btree, NULL, sizeof(btree), 0, 0, 3, "names a thread it does not have" },
		{ btree, against, sizeof(btree), sizeof(against), 0, 3, "names a thread it does not have" },
		{ bad_frame, NULL, sizeof(bad_frame), 0, 1, 3, "the call tree names a frame it does not have" },
		{ NULL, NULL, 0, 0, 1, 3, "its call tree is not its base tree" },
		{ btree, NULL, sizeof(btree), 0, 1, 4, "its call tree is not its base tree" },
	};
	static const unsigned char no_phase[] = { 0 }, text[] = { 0 };
	struct rs_buf c = RS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct small sm = { 5, cases[i].btree, cases[i].tree, no_phase, text, cases[i].btree_len,
				    cases[i].tree_len, sizeof(no_phase), sizeof(text), cases[i].threads,
				    cases[i].nodes, 30 };

		small_container(&c, &sm, out);
		if (i == 1) /* the fuzz corpus: a tree coded against its base */
			dump(&c, "container_v5_against_base");
		decodes_or_says(&c, out, cases[i].says, i);
	}
	rs_buf_release(&c);
}

/*
 * Version 5's tree model against a base tree follows the matches it
 * reads (the base children left, the matched node's count): any values,
 * those of a damaged stream too (a match past the base node's children,
 * a count below 0 or past 2^32), come back exactly, and read without the
 * base they are another stream.
 */
static void test_tree_model_against_a_base(void **state)
{
	/* the base: root 0 -> 1, 2, 3; node 1 -> 4, 5; the rest leaves */
	static const uint32_t kids[6] = { 3, 2, 0, 0, 0, 0 }, first[6] = { 0, 3, 5, 5, 5, 5 },
			      child[5] = { 1, 2, 3, 4, 5 };
	struct rc_base base = { 6, kids, first, child };
	struct rs_buf raw = RS_BUF_INIT, packed = RS_BUF_INIT;
	unsigned char *back;
	uint64_t i, x = 12345;

	(void)state;
	put_varint(&raw, 3);
	for (i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		/* mostly small values (matches, counts), now and then anything */
		put_varint(&raw, (x >> 60) == 15 ? x : (x >> 61));
	}
	assert_int_equal(rs_rc_pack_base(&packed, RC_TREE, 5, &base, (unsigned char *)raw.ptr, raw.len), 0);
	back = malloc(raw.len);
	assert_non_null(back);
	assert_int_equal(rs_rc_unpack_base(back, raw.len, RC_TREE, 5, &base, (unsigned char *)packed.ptr, packed.len),
			 0);
	assert_memory_equal(back, raw.ptr, raw.len);
	assert_true(rs_rc_unpack(back, raw.len, RC_TREE, 5, (unsigned char *)packed.ptr, packed.len) != 0 ||
		    memcmp(back, raw.ptr, raw.len) != 0);
	rs_error_clear();
	free(back);
	rs_buf_release(&raw);
	rs_buf_release(&packed);
}

/* ---- version 7: the stacks ------------------------------------------- */

/* The caps the decoder applies (codec_internal.h, which this file cannot include beside its own put_varint). */
#define V7_MAX_DEPTH (64u * 1024)
#define V7_MAX_FRAMES (1u << 18)
#define V7_MAX_NODES (5u << 16) /* STACKS_MAX_NODES */
#define V7_MAX_STACKS (12u << 20) /* MAX_STACKS_BYTES: the base's raw stacks and the run's together */
#define CODEC_ZSTD 1
#define CODEC_RC 2
#define CODEC_STACKS 6 /* SEC_CODEC_STACKS */

/* A stream of `raw`/`len` as `codec`: stored, zstd, or the stacks model after `base`/`base_len`. */
static void put_stream_as(struct rs_buf *c, const void *raw, size_t len, unsigned codec, const void *base,
			  size_t base_len)
{
	struct rs_buf coded = RS_BUF_INIT;

	if (codec == CODEC_STACKS) {
		assert_int_equal(rs_stacks_pack(&coded, raw, len, base_len ? base : NULL, base_len, UINT64_MAX), 0);
	} else if (codec == CODEC_ZSTD) {
		size_t bound = ZSTD_compressBound(len), n;

		assert_int_equal(rs_buf_grow(&coded, bound), 0);
		n = ZSTD_compress(coded.ptr, bound, len ? raw : "", len, 1);
		assert_false(ZSTD_isError(n));
		coded.len = n;
	} else if (len) {
		assert_int_equal(rs_buf_put(&coded, raw, len), 0);
	}
	put_le(c, len, 8);
	put_le(c, coded.len, 8);
	put_le(c, codec, 8);
	assert_int_equal(rs_buf_put(c, coded.ptr, coded.len), 0);
	rs_buf_release(&coded);
}

/*
 * A small version-7 container: the base dictionary `"a"` (rank 0), the
 * base block's stacks `bst` as `bcodec`, params (1 base frame, grid 30,
 * no new frames, `threads` thread frames `"T"` (rank 1), `nodes` tree
 * nodes, `records` records, no phase, no grid change), the tree stream
 * `tree`, the samples stream `st` as `scodec` (the stacks model: coded
 * after `bst`), `records` times kept as text, "0.5" each (`times`
 * instead, when given). `size`: the object's, 0 for strlen(out).
 */
struct small7 {
	const unsigned char *bst, *st, *tree, *times;
	size_t bst_len, st_len, tree_len, times_len;
	unsigned bcodec, scodec;
	uint64_t threads, nodes, records;
	const unsigned char *pbst; /* the base the samples are coded after, when not bst (a damaged base) */
	size_t pbst_len;
};

static void small7_container(struct rs_buf *c, const struct small7 *sm, const char *out)
{
	static const char prefix[] = "{\"frame_records\": [", suffix[] = "}";
	struct rs_buf b = RS_BUF_INIT;
	uint64_t r;

	rs_buf_clear(c);
	put_base_header(c, 7);
	put_varint(&b, 1);
	assert_int_equal(rs_buf_putc(&b, 'a'), 0);
	put_stream(c, &b);
	put_stream_as(c, sm->bst, sm->bst_len, sm->bcodec, NULL, 0);
	put_main_header(c, 7, strlen(out));
	rs_buf_clear(&b);
	put_varint(&b, 1);           /* base frames */
	put_varint(&b, 30);          /* grid */
	put_varint(&b, 0);           /* ref */
	put_varint(&b, 0);           /* new frames */
	put_varint(&b, sm->threads); /* thread frames */
	put_varint(&b, sm->nodes);
	put_varint(&b, sm->records);
	put_varint(&b, 0); /* no phase */
	put_varint(&b, 0); /* no grid change */
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, prefix, strlen(prefix)), 0);
	put_stream(c, &b);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, suffix, strlen(suffix)), 0);
	put_stream(c, &b);
	put_empty(c, 1); /* dict */
	rs_buf_clear(&b);
	if (sm->threads) {
		put_varint(&b, 1);
		assert_int_equal(rs_buf_putc(&b, 'T'), 0);
	}
	put_stream(c, &b);
	put_stream_as(c, sm->tree, sm->tree_len, 0, NULL, 0);
	put_stream_as(c, sm->st, sm->st_len, sm->scodec, sm->pbst ? sm->pbst : sm->bst,
		      sm->pbst ? sm->pbst_len : sm->bst_len);
	rs_buf_clear(&b);
	if (sm->times)
		assert_int_equal(rs_buf_put(&b, sm->times, sm->times_len), 0);
	for (r = 0; !sm->times && r < sm->records; r++)
		put_varint(&b, 0); /* the time is text */
	put_stream(c, &b);
	rs_buf_clear(&b);
	for (r = 0; r < sm->records; r++) {
		put_varint(&b, 3);
		assert_int_equal(rs_buf_put(&b, "0.5", 3), 0);
	}
	put_stream(c, &b);
	rs_buf_release(&b);
}

/*
 * Version 7's stacks, hand-built: three records, [T, a], [T] (k 1, m 0)
 * and [T, a] (k 1, one frame), as a first run's (the base block's
 * stacks, the samples empty) or a later run's (its own after a base's),
 * stored or coded with the stacks model; then each damage the decoder
 * checks: a call tree (a stream or a node count), a header whose A is
 * not nbase + nframes or whose T is not nthreads, a k past the depth, an
 * m past MAX_DEPTH - k, a rank at A + T or beyond, a record more than
 * the times have, one fewer, a coded stream cut short or claiming more,
 * a base whose frames the run does not have.
 */
static void test_version_7_stacks_fields(void **state)
{
	static const char out[] = "{\"frame_records\": [[[\"T\", \"a\"], 0.5], [[\"T\"], 0.5], [[\"T\", \"a\"], 0.5]]}";
	/* A 1, T 1; [T, a]: k 0, m 2, ranks 1 and 0; [T]: k 1, m 0; [T, a]: k 1, m 1, rank 0 */
	static const unsigned char good[] = { 1, 1, 0, 2, 1, 0, 1, 0, 1, 1, 0 };
	/* a base: one record [T], and one with a thread slot this run lacks (T 2: a frame of the base's own) */
	static const unsigned char base[] = { 1, 1, 0, 1, 1 }, base_slots[] = { 1, 2, 0, 2, 2, 0, 1, 1, 1 };
	static const unsigned char base_wider[] = { 2, 1, 0, 1, 2 }; /* A 2: more frames than this run's */
	static const unsigned char bad_a[] = { 2, 1, 0, 2, 1, 0, 1, 0, 1, 1, 0 };
	static const unsigned char a_zero[] = { 0, 2, 0, 2, 1, 0, 1, 0, 1, 1, 0 }; /* A + T right, A wrong */
	static const unsigned char bad_t[] = { 1, 2, 0, 2, 1, 0, 1, 0, 1, 1, 0 };
	static const unsigned char t_zero[] = { 1, 0, 0, 2, 1, 0, 1, 0, 1, 1, 0 };
	static const unsigned char header_only[] = { 1 };
	static const unsigned char k_first[] = { 1, 1, 1, 2, 1, 0, 1, 0, 1, 1, 0 };  /* k 1 before any stack */
	static const unsigned char k_past[] = { 1, 1, 0, 2, 1, 0, 1, 0, 2, 0, 0, 0 }; /* k 2 at depth 1 */
	/* m 65537 with k 0; m 65536 with k 1 (one past MAX_DEPTH) */
	static const unsigned char m_past[] = { 1, 1, 0, 0x81, 0x80, 0x04, 1, 0, 1, 0, 1, 1, 0 };
	static const unsigned char km_past[] = { 1, 1, 0, 2, 1, 0, 1, 0x80, 0x80, 0x04, 0, 0, 0 };
	static const unsigned char rank_at[] = { 1, 1, 0, 2, 1, 2, 1, 0, 1, 1, 0 };  /* rank A + T */
	static const unsigned char rank_far[] = { 1, 1, 0, 2, 1, 0, 1, 0, 1, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
	static const unsigned char extra[] = { 1, 1, 0, 2, 1, 0, 1, 0, 1, 1, 0, 1, 0 }; /* a fourth record */
	static const unsigned char fewer[] = { 1, 1, 0, 2, 1, 0, 1, 0 };                /* two records */
	static const unsigned char node[] = { 0 };
	/*
	 * [T, a x 59] three times: 183 levels of the stacks model for an
	 * object of 80 bytes, whose levels' budget (stacks_level_budget) is
	 * 104: coded with the model, refused before its levels are walked
	 */
	unsigned char deep[1 + 1 + 2 + 60 + 2 * 2];
	struct {
		const unsigned char *bst, *st, *tree;
		size_t bst_len, st_len, tree_len;
		unsigned bcodec, scodec;
		uint64_t nodes, records;
		const char *says; /* NULL: decodes to `out` */
	} cases[] = {
		/* 0-5: what a writer writes */
		{ good, NULL, NULL, sizeof(good), 0, 0, 0, 0, 0, 3, NULL },
		{ good, NULL, NULL, sizeof(good), 0, 0, CODEC_STACKS, 0, 0, 3, NULL },
		{ base, good, NULL, sizeof(base), sizeof(good), 0, 0, 0, 0, 3, NULL },
		{ base, good, NULL, sizeof(base), sizeof(good), 0, CODEC_STACKS, CODEC_STACKS, 0, 3, NULL },
		{ base_slots, good, NULL, sizeof(base_slots), sizeof(good), 0, CODEC_ZSTD, CODEC_STACKS, 0, 3, NULL },
		{ good, NULL, NULL, sizeof(good), 0, 0, CODEC_ZSTD, 0, 0, 3, NULL },
		/* 6-7: a call tree */
		{ good, NULL, node, sizeof(good), 0, sizeof(node), 0, 0, 0, 3, "it has a call tree, which its version does not" },
		{ good, NULL, NULL, sizeof(good), 0, 0, 0, 0, 1, 3, "it has a call tree, which its version does not" },
		/* 8-14: the header */
		{ bad_a, NULL, NULL, sizeof(bad_a), 0, 0, 0, 0, 0, 3, "its stacks do not name its frames" },
		{ a_zero, NULL, NULL, sizeof(a_zero), 0, 0, 0, 0, 0, 3, "its stacks do not name its frames" },
		{ bad_t, NULL, NULL, sizeof(bad_t), 0, 0, 0, 0, 0, 3, "its stacks do not name its frames" },
		{ t_zero, NULL, NULL, sizeof(t_zero), 0, 0, 0, 0, 0, 3, "its stacks do not name its frames" },
		{ header_only, NULL, NULL, sizeof(header_only), 0, 0, 0, 0, 0, 0, "its stacks do not name its frames" },
		{ NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, 0, "its stacks do not name its frames" },
		{ base, bad_a, NULL, sizeof(base), sizeof(bad_a), 0, 0, CODEC_STACKS, 0, 3, "its stacks do not name its frames" },
		/* 15-18: k and m */
		{ k_first, NULL, NULL, sizeof(k_first), 0, 0, 0, 0, 0, 3, "a record's stack is unreadable" },
		{ k_past, NULL, NULL, sizeof(k_past), 0, 0, 0, 0, 0, 3, "a record's stack is unreadable" },
		{ m_past, NULL, NULL, sizeof(m_past), 0, 0, 0, 0, 0, 3, "a record's stack is unreadable" },
		{ base, km_past, NULL, sizeof(base), sizeof(km_past), 0, 0, 0, 0, 3, "a record's stack is unreadable" },
		/* 19-20: ranks */
		{ rank_at, NULL, NULL, sizeof(rank_at), 0, 0, 0, 0, 0, 3, "a record's stack names no frame" },
		{ base, rank_far, NULL, sizeof(base), sizeof(rank_far), 0, 0, 0, 0, 3, "a record's stack names no frame" },
		/* 21-25: records and times that do not agree */
		{ extra, NULL, NULL, sizeof(extra), 0, 0, 0, 0, 0, 3, "a stream has bytes no record uses" },
		{ extra, NULL, NULL, sizeof(extra), 0, 0, CODEC_STACKS, 0, 0, 3, "a stream has bytes no record uses" },
		{ base, extra, NULL, sizeof(base), sizeof(extra), 0, 0, CODEC_STACKS, 0, 3, "a stream has bytes no record uses" },
		{ fewer, NULL, NULL, sizeof(fewer), 0, 0, 0, 0, 0, 3, "a record's stack is unreadable" },
		{ base, good, NULL, sizeof(base), sizeof(good), 0, 0, 0, 0, 6, "its counts do not fit its streams" },
		/* 26: a base whose frames are not this run's */
		{ base_wider, good, NULL, sizeof(base_wider), sizeof(good), 0, 0, CODEC_STACKS, 0, 3,
		  "its stacks stream does not decode to its length" },
		/* 27: more levels than the object's size allows the model */
		{ deep, NULL, NULL, sizeof(deep), 0, 0, CODEC_STACKS, 0, 0, 3,
		  "its stacks stream does not decode to its length" },
	};
	struct rs_buf c = RS_BUF_INIT;
	size_t i;

	(void)state;
	deep[0] = 1; /* A 1, T 1 */
	deep[1] = 1;
	deep[2] = 0; /* k 0, m 60: T, then a 59 times */
	deep[3] = 60;
	deep[4] = 1;
	memset(deep + 5, 0, 59);
	for (i = 0; i < 2; i++) { /* k 60, m 0 */
		deep[64 + 2 * i] = 60;
		deep[65 + 2 * i] = 0;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct small7 sm = { cases[i].bst, cases[i].st, cases[i].tree, NULL, cases[i].bst_len, cases[i].st_len,
				     cases[i].tree_len, 0, cases[i].bcodec, cases[i].scodec, 1, cases[i].nodes,
				     cases[i].records, NULL, 0 };

		if (cases[i].bst == base_wider) { /* coded after the base it should have had */
			sm.pbst = base;
			sm.pbst_len = sizeof(base);
		}
		small7_container(&c, &sm, out);
		if (i == 1)
			dump(&c, "container_v7_stacks");
		if (i == 3)
			dump(&c, "container_v7_after_base");
		decodes_or_says(&c, out, cases[i].says, i);
	}
	rs_buf_release(&c);
}

/*
 * A coded stacks stream cut short, or claiming more raw bytes than it
 * codes, is refused by the stacks model (rs_stacks_unpack), in the base
 * block and in the samples.
 */
static void test_version_7_coded_stacks_damaged(void **state)
{
	static const char out[] = "{\"frame_records\": [[[\"T\", \"a\"], 0.5], [[\"T\"], 0.5], [[\"T\", \"a\"], 0.5]]}";
	static const unsigned char good[] = { 1, 1, 0, 2, 1, 0, 1, 0, 1, 1, 0 }, base[] = { 1, 1, 0, 1, 1 };
	struct rs_buf c = RS_BUF_INIT;
	int later, damage;

	(void)state;
	for (later = 0; later <= 1; later++)
		for (damage = 0; damage < 3; damage++) {
			struct small7 sm = { later ? base : good, later ? good : NULL, NULL, NULL,
					     later ? sizeof(base) : sizeof(good), later ? sizeof(good) : 0, 0, 0,
					     later ? 0 : CODEC_STACKS, later ? CODEC_STACKS : 0, 1, 0, 3, NULL, 0 };
			/* the coded stream's header: after the base block's header and dictionary, or the samples' */
			size_t at, stored;

			small7_container(&c, &sm, out);
			if (!later) {
				at = 16 + 24 + 2;
			} else {
				size_t pos = 16;
				int k;

				for (k = 0; k < 2 + 1 + 6; k++) /* base, base stacks, (main header), params .. tree */
					if (k == 2)
						pos += 24;
					else
						pos += 24 + (size_t)rs_get_le64((unsigned char *)c.ptr + pos + 8);
				at = pos;
			}
			stored = (size_t)rs_get_le64((unsigned char *)c.ptr + at + 8);
			assert_int_equal((unsigned char)c.ptr[at + 16], CODEC_STACKS);
			assert_true(stored > 5);
			decodes_or_says(&c, out, NULL, (size_t)(later * 3 + damage)); /* undamaged, it decodes */
			if (damage == 0) { /* one byte more raw than it codes */
				c.ptr[at] = (char)(c.ptr[at] + 1);
			} else if (damage == 1) { /* its last byte gone: the stored length one less, the rest moved up */
				c.ptr[at + 8] = (char)(c.ptr[at + 8] - 1);
				memmove(c.ptr + at + 24 + stored - 1, c.ptr + at + 24 + stored, c.len - (at + 24 + stored));
				c.len--;
			} else { /* its first byte, always 0, set */
				c.ptr[at + 24] = 1;
			}
			decodes_or_says(&c, out, "its stacks stream does not decode to its length",
					(size_t)(later * 3 + damage));
		}
	rs_buf_release(&c);
}

/* The stream headers of container `c`: their offsets into `at` (at most `max`); how many. */
static int stream_headers(const struct rs_buf *c, size_t *at, int max)
{
	const unsigned char *p = (const unsigned char *)c->ptr;
	unsigned version = (unsigned)rs_get_le32(p + 8);
	int nbase = version >= 5 ? 2 : 1, count = version == 1 ? 12 : 9, n = 0, k;
	size_t pos = 16;

	for (k = 0; k < nbase + count; k++) {
		if (k == nbase)
			pos += 24; /* the main header */
		assert_true(pos + 24 <= c->len && n < max);
		at[n++] = pos;
		pos += 24 + (size_t)rs_get_le64(p + pos + 8);
	}
	assert_int_equal(pos, c->len);
	return n;
}

/* `c` with stream `k`'s codec set to `codec` is refused: "a stream has an unknown codec". */
static void codec_refused(const struct rs_buf *c, const size_t *at, int k, unsigned codec, const char *name)
{
	struct rs_buf bad = RS_BUF_INIT, back = RS_BUF_INIT;
	int err;

	assert_int_equal(rs_buf_put(&bad, c->ptr, c->len), 0);
	bad.ptr[at[k] + 16] = (char)codec;
	err = rs_codec_decode((unsigned char *)bad.ptr, bad.len, 1ull << 30, collect, &back);
	if (err != RS_ECORRUPT || !strstr(rs_error_message(), "a stream has an unknown codec"))
		fail_msg("%s, stream %d as codec %u: %d '%s'", name, k, codec, err, rs_error_message());
	assert_int_equal(back.len, 0);
	rs_buf_release(&bad);
	rs_buf_release(&back);
}

/*
 * Codec 6 (the stacks model) is version 7's, for its two stacks streams
 * only: on any stream of a container of versions 1 to 6 (the fixtures),
 * and on any other stream of a version-7 container (params, prefix,
 * suffix, dictionaries, threads, the empty tree, times, tesc), it is
 * refused before anything is decoded; so is codec 2 on version 7's
 * stacks and tree, which have no value model any more.
 */
static void test_stacks_codec_only_on_stacks_streams(void **state)
{
	static const char *names[] = { "real_small_pop1k.codec-v1", "real_small_pop1k.codec-v2",
				       "real_small_pop1k.codec-v3", "real_small_pop1k.codec-v4",
				       "real_small_pop1k.codec-v5", "real_small_pop1k.codec-v6",
				       "real_small_pop1k.codec-v6-rerun", "real_small_pop1k.codec-v7" };
	struct rs_buf c = RS_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[512];
		size_t at[16];
		int n, k, v7;

		data_path(path, sizeof(path), names[i]);
		rs_buf_clear(&c);
		assert_int_equal(rs_fs_read_file(&c, path, 1u << 26), 0);
		v7 = rs_get_le32((unsigned char *)c.ptr + 8) == 7;
		n = stream_headers(&c, at, 16);
		for (k = 0; k < n; k++) {
			/* version 7: stream 1 the base's stacks, 2 + 5 the tree, 2 + 6 the samples */
			int stacks = v7 && (k == 1 || k == 2 + 6);

			if (!stacks)
				codec_refused(&c, at, k, CODEC_STACKS, names[i]);
			if (v7 && (stacks || k == 2 + 5))
				codec_refused(&c, at, k, CODEC_RC, names[i]);
		}
	}
	rs_buf_release(&c);
}

/*
 * The base block's stacks are another run's, so the object's size does
 * not bound them; MAX_STACKS_BYTES (12 MiB) does: a zstd stream of 400
 * MiB of stacks (records of k 0, m 0), and a header claiming one byte
 * past the cap, are refused before anything is allocated for them; one
 * at the cap is read (and refused later, for what it holds). A later
 * run's samples stream is bounded by the object's size, and by what the
 * base's stacks leave of MAX_STACKS_BYTES.
 */
static void fill_zero(unsigned char *p, size_t n, uint64_t off, void *arg)
{
	(void)off;
	(void)arg;
	memset(p, 0, n);
}

static void test_version_7_base_stacks_capped(void **state)
{
	struct rs_buf c = RS_BUF_INIT, raw = RS_BUF_INIT, back = RS_BUF_INIT;
	uint64_t claims[3] = { 400ull << 20, V7_MAX_STACKS + 1ull, V7_MAX_STACKS };
	static const char *says[3] = { "a stream would decode to more than the object allows",
				       "a stream would decode to more than the object allows", NULL };
	int k;

	(void)state;
	for (k = 0; k < 3; k++) {
		rs_buf_clear(&c);
		put_base_header(&c, 7);
		put_varint(&raw, 1);
		assert_int_equal(rs_buf_putc(&raw, 'a'), 0);
		put_stream(&c, &raw);
		rs_buf_clear(&raw);
		if (k != 1) {
			put_zstd_stream(&c, claims[k], fill_zero, NULL);
		} else {
			put_le(&c, claims[k], 8); /* a header alone: what it claims is refused first */
			put_le(&c, 0, 8);
			put_le(&c, CODEC_ZSTD, 8);
		}
		put_main_header(&c, 7, 1ull << 30);
		put_empty(&c, 9);
		if (k == 0) {
			dump(&c, "hostile_base_stacks_400MiB_v7");
			check_refused_small(&c, "hostile_base_stacks_400MiB_v7");
		}
		assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1ull << 30, collect, &back), RS_ECORRUPT);
		if (says[k] ? !strstr(rs_error_message(), says[k])
			    : !!strstr(rs_error_message(), "would decode to more than the object allows"))
			fail_msg("claim %llu: '%s'", (unsigned long long)claims[k], rs_error_message());
		assert_int_equal(back.len, 0);
	}
	/* a later run's samples: at most what the base's 8 MiB of stacks leave */
	rs_buf_clear(&c);
	put_base_header(&c, 7);
	put_empty(&c, 1);
	put_zstd_stream(&c, 8u << 20, fill_zero, NULL);
	put_main_header(&c, 7, 1ull << 30);
	put_empty(&c, 6);
	put_le(&c, V7_MAX_STACKS - (8u << 20) + 1, 8);
	put_le(&c, 0, 8);
	put_le(&c, CODEC_STACKS, 8);
	put_empty(&c, 2);
	assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1ull << 30, collect, &back), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "more than the object allows"));
	/* a later run's samples: at most the object's size (1000 bytes here) */
	rs_buf_clear(&c);
	put_base_header(&c, 7);
	put_empty(&c, 2);
	put_main_header(&c, 7, 1000);
	put_empty(&c, 6);
	put_le(&c, 1001, 8);
	put_le(&c, 0, 8);
	put_le(&c, CODEC_STACKS, 8);
	put_empty(&c, 2);
	assert_int_equal(rs_codec_decode((unsigned char *)c.ptr, c.len, 1000, collect, &back), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "more than the object allows"));
	rs_buf_release(&c);
	rs_buf_release(&raw);
	rs_buf_release(&back);
}

/* Raw stacks as a writer writes them: each record's k the frames it shares with the one before. */
struct stacks_writer {
	struct rs_buf *b;
	uint32_t *prev;
	size_t plen;
};

static void stacks_record(struct stacks_writer *w, const uint32_t *s, size_t n)
{
	size_t k = 0, i;

	while (k < n && k < w->plen && w->prev[k] == s[k])
		k++;
	put_varint(w->b, k);
	put_varint(w->b, n - k);
	for (i = k; i < n; i++)
		put_varint(w->b, s[i]);
	memmove(w->prev, s, n * sizeof(*s)); /* s may be w->prev (stacks_pad) */
	w->plen = n;
}

/* The last record again (k all of it, m 0) until the stream holds `len` bytes (give or take one record). */
static void stacks_pad(struct stacks_writer *w, size_t len)
{
	while (w->b->len + 4 <= len)
		stacks_record(w, w->prev, w->plen);
}

/*
 * Stacks at the caps, for the peak test. `deep`: a first run's, A
 * 2^18 - 1 and T 1 (every frame there may be), one record of
 * MAX_DEPTH frames (a chain), repeated, then records of one and two
 * frames until the model holds STACKS_MAX_NODES nodes, then the last record
 * again up to `len` bytes. Otherwise a later run's after a base of the
 * same frames (A 2^18 - 1, T 1), each a record of one frame, padded to
 * len / 2, then this run's records of two frames, [f, f + 1], until the
 * model holds STACKS_MAX_NODES nodes (its tables at their largest), len
 * bytes in all.
 */
static void caps_stacks(struct rs_buf *base, struct rs_buf *own, int deep, size_t len)
{
	struct stacks_writer w = { NULL, malloc((V7_MAX_DEPTH + 1) * sizeof(uint32_t)), 0 };
	uint32_t *s = malloc((V7_MAX_DEPTH + 1) * sizeof(uint32_t)), a = V7_MAX_FRAMES - 1, f;
	uint64_t nodes = 1;
	int r;

	assert_non_null(w.prev);
	assert_non_null(s);
	rs_buf_clear(base);
	rs_buf_clear(own);
	if (deep) {
		w.b = base;
		put_varint(base, a);
		put_varint(base, 1);
		for (f = 0; f < V7_MAX_DEPTH; f++)
			s[f] = f;
		for (r = 0; r < 8; r++) /* the chain, then again with another last frame */
		{
			s[V7_MAX_DEPTH - 1] = V7_MAX_DEPTH - 1 + (uint32_t)r;
			stacks_record(&w, s, V7_MAX_DEPTH);
			nodes += r ? 1 : V7_MAX_DEPTH;
		}
		for (f = 1; f < a && nodes < V7_MAX_NODES; f++) { /* [f]: a node under the root */
			s[0] = f;
			stacks_record(&w, s, 1);
			nodes++;
		}
		for (f = 1; f < a && nodes < V7_MAX_NODES; f++) { /* [f, f + 1]: a node under f's */
			s[0] = f;
			s[1] = f + 1;
			stacks_record(&w, s, 2);
			nodes++;
		}
		assert_int_equal(nodes, V7_MAX_NODES);
		stacks_pad(&w, len);
	} else {
		w.b = base;
		put_varint(base, a);
		put_varint(base, 1);
		for (f = 0; f < a; f++) {
			s[0] = f;
			stacks_record(&w, s, 1);
		}
		stacks_pad(&w, len / 2);
		w.b = own;
		w.plen = 0;
		put_varint(own, a);
		put_varint(own, 1);
		nodes = 1 + a; /* the root and the base's [f] */
		for (f = 0; f + 1 < a && nodes < V7_MAX_NODES; f++) {
			s[0] = f;
			s[1] = f + 1;
			stacks_record(&w, s, 2);
			nodes++;
		}
		assert_int_equal(nodes, V7_MAX_NODES);
		stacks_pad(&w, len - base->len);
	}
	free(w.prev);
	free(s);
}

/*
 * The most a version-7 container can make the decoder hold while the
 * stacks model runs: a first run's stacks at the caps (STACKS_MAX_NODES nodes,
 * every frame, records of MAX_DEPTH frames, MAX_STACKS_BYTES of them)
 * coded with the model in its base block, and a later run's coded after
 * a base, the two MAX_STACKS_BYTES together; and a first run's stacks
 * zstd-compressed at that cap (no model: the raw stream only); each
 * beside a base dictionary that takes the rest of the streams' cap
 * (RS_CODEC_MAX_STREAMS), decoded (and held) before the stacks. Each
 * decode (refused: the frames and times are not the stacks') adds less
 * than 48 MB to the process it runs in, the model's tables (node table,
 * children, frame lists) and the raw streams included: `results fetch`
 * and lfs-agent start at about 15 MB (tests/e2e/test_codec_hostile_fetch.sh),
 * so that they stay under 64 MB.
 */
static void test_version_7_stacks_at_the_caps_stay_small(void **state)
{
	struct rs_buf c = RS_BUF_INIT, base = RS_BUF_INIT, own = RS_BUF_INIT;
	size_t len = V7_MAX_STACKS;
	struct peak p[3];
	int k;

	(void)state;
	for (k = 0; k < 3; k++) {
		static const char *names[3] = { "hostile_stacks_cap_v7", "hostile_stacks_cap_after_base_v7",
						"hostile_stacks_cap_zstd_v7" };
		struct rs_buf params = RS_BUF_INIT;

		caps_stacks(&base, &own, k != 1, len);
		rs_buf_clear(&c);
		put_base_header(&c, 7);
		put_zstd_stream(&c, RS_CODEC_MAX_STREAMS - V7_MAX_STACKS - 64, fill_frames, NULL);
		put_stream_as(&c, base.ptr, base.len, k == 0 ? CODEC_STACKS : CODEC_ZSTD, NULL, 0);
		/*
		 * an object of 64 MiB: its levels' budget (32M) is reached in the
		 * padding, long after the tables are at their largest, so that
		 * the refusal comes in a second (under ASan too)
		 */
		put_main_header(&c, 7, 64ull << 20);
		rs_buf_clear(&params);
		put_varint(&params, 1); /* one base frame, none new nor threads, no records */
		put_varint(&params, 30);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_varint(&params, 0);
		put_stream(&c, &params);
		put_empty(&c, 5); /* prefix, suffix, dict, threads, tree */
		if (k == 1)
			put_stream_as(&c, own.ptr, own.len, CODEC_STACKS, base.ptr, base.len);
		else
			put_empty(&c, 1);
		put_empty(&c, 2);
		print_message("%s: stacks %zu + %zu raw bytes\n", names[k], base.len, own.len);
		rs_buf_release(&base);
		rs_buf_release(&own);
		rs_buf_release(&params);
		dump(&c, names[k]);
		p[k] = decode_in_child(&c, 64ull << 20);
		print_message("%s: %zu bytes of container, refused %d, peak RSS %ld KB (%ld KB at the fork)\n",
			      names[k], c.len, p[k].err == RS_ECORRUPT, p[k].maxrss_kb, p[k].start_kb);
	}
	rs_buf_release(&c);
	/*
	 * All three measured, then checked: what the decode adds to the
	 * process it runs in (the child starts with this one's pages: the
	 * tests before, the container, the raw stacks this test built; under
	 * ASan, its quarantine too). On 2026-12-08, after the model's tables
	 * were made smaller: 41.8 MB (coded), 37.1 MB (after a base), 15.1 MB
	 * (zstd).
	 */
	for (k = 0; k < 3; k++) {
		assert_int_equal(p[k].err, RS_ECORRUPT);
		assert_true(p[k].maxrss_kb - p[k].start_kb < V7_GROWTH_LIMIT_KB);
	}
}

/* The container this build writes for the real session (no base): it must stay readable. */
static void test_version_7_container_decodes(void **state)
{
	(void)state;
	old_container_decodes("real_small_pop1k.codec-v7", 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_frame_string_refused_small),
		cmocka_unit_test(test_huge_tree_refused_small),
		cmocka_unit_test(test_every_cap_at_once_stays_small),
		cmocka_unit_test(test_stream_larger_than_object_refused),
		cmocka_unit_test(test_version_1_container_decodes),
		cmocka_unit_test(test_version_2_container_decodes),
		cmocka_unit_test(test_version_3_container_decodes),
		cmocka_unit_test(test_version_4_container_decodes),
		cmocka_unit_test(test_version_5_container_decodes),
		cmocka_unit_test(test_version_6_container_decodes),
		cmocka_unit_test(test_version_6_rerun_decodes),
		cmocka_unit_test(test_repeat_without_previous_refused),
		cmocka_unit_test(test_tree_model_past_its_stack),
		cmocka_unit_test(test_base_tree_at_the_caps_stays_small),
		cmocka_unit_test(test_base_tree_claiming_32M_nodes_refused_small),
		cmocka_unit_test(test_version_5_base_tree_fields),
		cmocka_unit_test(test_version_6_grid_changes_refused),
		cmocka_unit_test(test_tree_model_against_a_base),
		cmocka_unit_test(test_version_7_container_decodes),
		cmocka_unit_test(test_version_7_stacks_fields),
		cmocka_unit_test(test_version_7_coded_stacks_damaged),
		cmocka_unit_test(test_stacks_codec_only_on_stacks_streams),
		cmocka_unit_test(test_version_7_base_stacks_capped),
		cmocka_unit_test(test_version_7_stacks_at_the_caps_stay_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
