/*
 * The store with the session codec (transform 1) on a folder remote: a
 * session is stored transformed and comes back byte for byte, other
 * objects and generic_only stores keep transform 0, unknown transforms
 * and damaged containers are refused without leaving a file.
 */
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

#include "remote/remote.h"
#include "store/format.h"
#include "store/store.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/hash.h"

#include "store_fixture.h"

static int setup(void **state)
{
	return store_fixture_setup(state, "store-codec", 0);
}

static int teardown(void **state)
{
	return store_fixture_teardown(state);
}

static struct rs_store *open_store(struct store_fixture *f, int generic_only)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;

	o.cache_dir = f->cache_dir;
	o.threads = 2;
	o.generic_only = generic_only;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	return s;
}

static void data_path(char *out, size_t n, const char *name)
{
	const char *dir = getenv("RS_TEST_DATA");

	assert_non_null(dir);
	snprintf(out, n, "%s/%s", dir, name);
}

static void manifest_path(char *out, size_t n, const struct store_fixture *f, const struct rs_id *oid)
{
	char hex[RS_ID_HEXSZ + 1];

	rs_id_to_hex(hex, oid);
	snprintf(out, n, "%s/objects/%s", f->remote_dir, hex);
}

static void read_manifest(const struct store_fixture *f, const struct rs_id *oid, struct rs_manifest *m)
{
	char path[512];
	struct rs_buf b = RS_BUF_INIT;

	manifest_path(path, sizeof(path), f, oid);
	assert_int_equal(rs_fs_read_file(&b, path, 1u << 26), 0);
	assert_int_equal(rs_manifest_parse(m, oid, (unsigned char *)b.ptr, b.len), 0);
	rs_buf_release(&b);
}

static void write_manifest(const struct store_fixture *f, const struct rs_manifest *m)
{
	char path[512];
	struct rs_buf b = RS_BUF_INIT;

	manifest_path(path, sizeof(path), f, &m->oid);
	assert_int_equal(rs_manifest_encode(&b, m), 0);
	assert_int_equal(rs_fs_write_file_atomic(path, b.ptr, b.len), 0);
	rs_buf_release(&b);
}

/* The path (in `src`, n bytes), id and size of the data file `name`. */
static void data_file(char *src, size_t n, const char *name, struct rs_id *oid, uint64_t *size)
{
	data_path(src, n, name);
	test_file_id(src, oid, size);
}

/* Puts the data file `name` (its path in `src`, n bytes), which must work. */
static void put_data(struct rs_store *s, const char *name, char *src, size_t n, struct rs_id *oid,
		     uint64_t *size)
{
	data_file(src, n, name, oid, size);
	assert_int_equal(rs_store_put_file(s, oid, *size, src, NULL, NULL, NULL), 0);
}

/* Puts the data file `name`: its manifest says `transform`, and it comes
 * back byte for byte. */
static void assert_round_trip(struct store_fixture *f, struct rs_store *s, const char *name, int transform)
{
	struct rs_manifest m;
	char src[512], dst[512];
	struct rs_id oid;
	uint64_t size;

	snprintf(dst, sizeof(dst), "%s/out", f->dir);
	unlink(dst);
	put_data(s, name, src, sizeof(src), &oid, &size);
	read_manifest(f, &oid, &m);
	assert_int_equal(m.transform, transform);
	rs_manifest_release(&m);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
}

/* A stored session whose manifest is then made to say `transform`: its get
 * fails with `err` and `msg`, and leaves no file. */
static void assert_get_refused(struct store_fixture *f, int generic_only, int transform, int err,
			       const char *msg)
{
	struct rs_store *s = open_store(f, generic_only);
	struct rs_manifest m;
	char src[512], dst[512];
	struct rs_id oid;
	uint64_t size;

	snprintf(dst, sizeof(dst), "%s/out", f->dir);
	put_data(s, "tiny_pyinstrument_5.1.2.pyisession", src, sizeof(src), &oid, &size);
	read_manifest(f, &oid, &m);
	m.transform = transform;
	write_manifest(f, &m);
	rs_manifest_release(&m);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), err);
	assert_non_null(strstr(rs_error_message(), msg));
	assert_int_equal(access(dst, F_OK), -1);
	rs_store_free(s);
}

static void test_session_is_stored_transformed(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f, 0);
	struct rs_store_put_stats st;
	struct rs_manifest m;
	char src[512], dst[512];
	struct rs_id oid;
	uint64_t size;

	snprintf(dst, sizeof(dst), "%s/out.pyisession", f->dir);
	data_file(src, sizeof(src), "real_small_pop1k.pyisession", &oid, &size);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), 0);
	read_manifest(f, &oid, &m);
	assert_int_equal(m.transform, RS_TRANSFORM_SESSION);
	assert_int_equal(m.size, size);
	assert_true(m.transformed_size < size / 60);
	/* the generic path keeps about 1/39 of this file */
	print_message("stored %llu of %llu bytes\n", (unsigned long long)st.bytes_stored,
		      (unsigned long long)size);
	assert_true(st.bytes_stored * 80 < size);
	rs_manifest_release(&m);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
	rs_store_free(s);
}

static void test_generic_only_and_other_objects_keep_identity(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f, 1);

	assert_round_trip(f, s, "tiny_pyinstrument_4.6.2.pyisession", RS_TRANSFORM_IDENTITY);
	rs_store_free(s);

	/* a file that is not a session in json.dump's spelling: identity */
	s = open_store(f, 0);
	assert_round_trip(f, s, "session_tiny_5.1.2_indented.pyisession", RS_TRANSFORM_IDENTITY);
	rs_store_free(s);
}

static void test_unknown_transform_refused(void **state)
{
	assert_get_refused(*state, 0, 9, RS_ENEWER, "uses transform 9, which this build cannot undo");
}

/* Identity chunks that a manifest claims are a container: refused, no file left. */
static void test_damaged_container_refused(void **state)
{
	assert_get_refused(*state, 1, RS_TRANSFORM_SESSION, RS_ECORRUPT, "session container is damaged");
}

/*
 * A manifest whose chunks are whole and valid but rebuild another object
 * (of the same size): only the whole object's hash can tell. A get
 * refuses it and leaves no file; a get for a caller that hashes the file
 * itself (RS_GET_CALLER_HASHES: lfs-agent, for git-lfs) hands the other
 * object's bytes over, for that caller's hash to refuse.
 */
static void assert_wrong_object_refused(struct store_fixture *f, int generic_only, int transform)
{
	struct rs_store *s = open_store(f, generic_only);
	struct rs_manifest m;
	char src[512], other[512], dst[512];
	struct rs_id oid, other_oid;
	uint64_t size, other_size;
	struct rs_buf bytes = RS_BUF_INIT;

	snprintf(dst, sizeof(dst), "%s/out", f->dir);
	snprintf(other, sizeof(other), "%s/other.pyisession", f->dir);
	put_data(s, "tiny_pyinstrument_5.1.2.pyisession", src, sizeof(src), &oid, &size);
	/* the other object: the same bytes but one, never stored */
	assert_int_equal(rs_fs_read_file(&bytes, src, 1u << 26), 0);
	bytes.ptr[bytes.len / 2] ^= 1;
	assert_int_equal(rs_fs_write_file_atomic(other, bytes.ptr, bytes.len), 0);
	test_file_id(other, &other_oid, &other_size);
	assert_int_equal(other_size, size);
	read_manifest(f, &oid, &m);
	assert_int_equal(m.transform, transform);
	m.oid = other_oid;
	write_manifest(f, &m);
	rs_manifest_release(&m);

	assert_int_equal(rs_store_get_file(s, &other_oid, size, dst, NULL, NULL), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "does not match its oid"));
	assert_int_equal(access(dst, F_OK), -1);
	assert_int_equal(rs_store_get_file_flags(s, &other_oid, size, dst, RS_GET_CALLER_HASHES, NULL, NULL),
			 0);
	assert_true(test_files_equal(src, dst));
	assert_false(test_files_equal(other, dst));
	/* the size is still checked: a pointer that says another size gets nothing */
	unlink(dst);
	assert_int_equal(rs_store_get_file_flags(s, &other_oid, size + 1, dst, RS_GET_CALLER_HASHES, NULL,
						 NULL),
			 RS_ECORRUPT);
	assert_int_equal(access(dst, F_OK), -1);
	rs_buf_release(&bytes);
	rs_store_free(s);
}

static void test_wrong_object_refused_session(void **state)
{
	assert_wrong_object_refused(*state, 0, RS_TRANSFORM_SESSION);
}

static void test_wrong_object_refused_identity(void **state)
{
	assert_wrong_object_refused(*state, 1, RS_TRANSFORM_IDENTITY);
}

/* A session that changed since git-lfs hashed it is refused, as on the generic path. */
static void test_changed_session_stores_nothing(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f, 0);
	char src[512];
	struct rs_id oid;
	uint64_t size;

	data_file(src, sizeof(src), "tiny_pyinstrument_4.3.0.pyisession", &oid, &size);
	oid.id[3] ^= 0x10;
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "the file changed since git-lfs hashed it"));
	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND);
	rs_store_free(s);
}

/*
 * The remote is looked at (FORMAT, the chunk index) while the session is
 * encoded, on a thread of its own: a store of a newer results still
 * refuses the put with its own message, also when the encode fails too
 * (a changed session), and nothing is written to it.
 */
static void test_newer_store_refuses_while_encoding(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s;
	char src[512], path[512];
	struct rs_id oid;
	uint64_t size;
	int pass;

	assert_int_equal(mkdir(f->remote_dir, 0700) == 0 || access(f->remote_dir, F_OK) == 0, 1);
	snprintf(path, sizeof(path), "%s/FORMAT", f->remote_dir);
	assert_int_equal(rs_fs_write_file_atomic(path, "results-store 2\n", 16), 0);
	for (pass = 0; pass < 2; pass++) {
		s = open_store(f, 0);
		data_file(src, sizeof(src), "tiny_pyinstrument_5.1.2.pyisession", &oid, &size);
		if (pass)
			oid.id[3] ^= 0x10; /* the encode declines, the generic path refuses */
		assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), RS_ENEWER);
		assert_non_null(strstr(rs_error_message(), "'results-store 2'"));
		rs_store_free(s);
		manifest_path(path, sizeof(path), f, &oid);
		assert_int_equal(access(path, F_OK), -1);
		snprintf(path, sizeof(path), "%s/packs", f->remote_dir);
		assert_int_equal(access(path, F_OK), -1);
	}
}

/*
 * The next run of the same program: its dictionary's and tree's block is
 * the one the first run stored, a chunk the remote already has. Here the "next
 * run" is the real session with another thread id, which the codec keeps
 * out of the shared block.
 */
static void test_next_run_shares_the_dictionary(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f, 0);
	struct rs_store_put_stats first, second;
	struct rs_buf b = RS_BUF_INIT;
	char src[512], next[512], dst[512];
	struct rs_id oid, oid2;
	uint64_t size, size2;
	char *at;
	FILE *fp;

	data_path(src, sizeof(src), "real_small_pop1k.pyisession");
	snprintf(next, sizeof(next), "%s/next.pyisession", f->dir);
	snprintf(dst, sizeof(dst), "%s/out.pyisession", f->dir);
	assert_int_equal(rs_fs_read_file(&b, src, 1u << 26), 0);
	for (at = strstr(b.ptr, "<thread>\\u0000"); at; at = strstr(at + 1, "<thread>\\u0000"))
		at[14] = at[14] == '9' ? '8' : '9';
	fp = fopen(next, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(b.ptr, 1, b.len, fp), b.len);
	assert_int_equal(fclose(fp), 0);
	rs_buf_release(&b);
	test_file_id(src, &oid, &size);
	test_file_id(next, &oid2, &size2);
	assert_true(rs_id_cmp(&oid, &oid2) != 0);

	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &first), 0);
	assert_int_equal(first.chunks, 2); /* the shared block, the rest */
	assert_int_equal(first.chunks_new, 2);
	rs_store_free(s);
	s = open_store(f, 0); /* another process: the base comes from the cache folder */
	assert_int_equal(rs_store_put_file(s, &oid2, size2, next, NULL, NULL, &second), 0);
	assert_int_equal(second.chunks, 2);
	assert_int_equal(second.chunks_new, 1);
	print_message("first run stored %llu bytes, the next %llu\n", (unsigned long long)first.bytes_stored,
		      (unsigned long long)second.bytes_stored);
	/*
	 * the shared block is about half of this 4 MB run's container (version 3);
	 * from version 5 it holds the call tree too, which the next run, the same
	 * tree, codes against it almost for free: under a third
	 */
	assert_true(second.bytes_stored * 3 < first.bytes_stored);
	assert_int_equal(rs_store_get_file(s, &oid2, size2, dst, NULL, NULL), 0);
	assert_true(test_files_equal(next, dst));
	rs_store_free(s);
}

struct progress_seen {
	uint64_t last, total;
	int calls;
};

static int note_progress(uint64_t done, uint64_t total, void *payload)
{
	struct progress_seen *p = payload;

	assert_true(done <= total);
	p->last = done;
	p->total = total;
	p->calls++;
	return 0;
}

/* Progress counts object bytes, up to the object's size, both ways. */
static void test_progress_in_object_bytes(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f, 0);
	struct progress_seen put = { 0, 0, 0 }, get = { 0, 0, 0 };
	char src[512], dst[512];
	struct rs_id oid;
	uint64_t size;

	snprintf(dst, sizeof(dst), "%s/out.pyisession", f->dir);
	data_file(src, sizeof(src), "real_small_pop1k.pyisession", &oid, &size);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, note_progress, &put, NULL), 0);
	assert_true(put.calls > 0);
	assert_int_equal(put.last, size);
	assert_int_equal(put.total, size);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, note_progress, &get), 0);
	assert_true(get.calls > 0);
	assert_int_equal(get.last, size);
	assert_int_equal(get.total, size);
	rs_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session_is_stored_transformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generic_only_and_other_objects_keep_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_transform_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_container_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_object_refused_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_object_refused_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_session_stores_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_store_refuses_while_encoding, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_run_shares_the_dictionary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_in_object_bytes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
