/*
 * .git/index read and spliced without loading it (git/indexfile.h):
 * indexes written by libgit2 are edited here and read back by libgit2
 * (which checks the trailer's SHA-1 and the order), and damaged or
 * unsupported bytes are refused before anything is written.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "git/indexfile.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

struct fixture {
	char dir[64];
	char index[96];
	char lock[112];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/rs-indexfile.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->index, sizeof(fx->index), "%s/index", fx->dir);
	snprintf(fx->lock, sizeof(fx->lock), "%s/index.lock", fx->dir);
	git_libgit2_init();
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->index);
	unlink(fx->lock);
	rmdir(fx->dir);
	git_libgit2_shutdown();
	free(fx);
	return 0;
}

static void oid_of(git_oid *id, int n)
{
	unsigned char raw[20];

	memset(raw, 0, sizeof(raw));
	raw[0] = (unsigned char)n;
	raw[19] = 0x5a;
	git_oid_fromraw(id, raw);
}

static void add_entry(git_index *idx, const char *path, int n, int stage)
{
	git_index_entry e;

	memset(&e, 0, sizeof(e));
	e.mode = GIT_FILEMODE_BLOB;
	e.path = path;
	e.file_size = (uint32_t)n;
	e.mtime.seconds = 1700000000 + n;
	GIT_INDEX_ENTRY_STAGE_SET(&e, stage);
	oid_of(&e.id, n);
	assert_int_equal(git_index_add(idx, &e), 0);
}

static char long_path[4300];

/* An index of a few entries, one with a path longer than the flags hold. */
static void write_reference(struct fixture *fx, int skip_worktree)
{
	git_index *idx = NULL;
	const git_index_entry *e;

	memset(long_path, 'x', sizeof(long_path) - 1);
	memcpy(long_path, "long/", 5);
	long_path[sizeof(long_path) - 1] = '\0';
	assert_int_equal(git_index_open(&idx, fx->index), 0);
	add_entry(idx, "README.md", 1, 0);
	add_entry(idx, "index/2026-12.jsonl", 2, 0);
	add_entry(idx, long_path, 3, 0);
	add_entry(idx, "runs/2026/12/01/a/run.json", 4, 0);
	add_entry(idx, "runs/2026/12/01/c/run.json", 5, 0);
	if (skip_worktree) {
		git_index_entry copy;

		e = git_index_get_bypath(idx, "runs/2026/12/01/a/run.json", 0);
		assert_non_null(e);
		copy = *e;
		copy.flags_extended |= GIT_INDEX_ENTRY_SKIP_WORKTREE;
		assert_int_equal(git_index_add(idx, &copy), 0);
	}
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
}

static void edit(struct rs_index_edit *e, const char *path, int n, int remove)
{
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->remove = remove;
	e->mode = GIT_FILEMODE_BLOB_EXECUTABLE;
	e->st.st_size = n;
	e->st.st_mtim.tv_sec = 1800000000 + n;
	e->st.st_ino = 77;
	oid_of(&e->id, n);
}

/* libgit2 reads the spliced file: every entry where it belongs. */
static void test_splice_read_back(void **state)
{
	struct fixture *fx = *state;
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[5];
	git_index *idx = NULL;
	const git_index_entry *ie;
	git_oid id, want;
	uint32_t mode;

	write_reference(fx, 1);
	assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
	assert_int_equal(rs_index_file_count(f), 5);
	assert_false(rs_index_file_has_conflicts(f));
	assert_int_equal(rs_index_file_find(f, long_path, &id, &mode), 1);
	oid_of(&want, 3);
	assert_true(git_oid_equal(&id, &want));
	assert_int_equal(mode, GIT_FILEMODE_BLOB);
	assert_int_equal(rs_index_file_find(f, "runs/2026/12/01/b/run.json", &id, NULL), 0);
	assert_int_equal(rs_index_file_find(f, "runs", &id, NULL), 0);

	edit(&e[0], "runs/2026/12/01/b/run.json", 10, 0);  /* new, in the middle */
	edit(&e[1], "README.md", 11, 0);                   /* replaced, first */
	edit(&e[2], "index/2026-12.jsonl", 0, 1);          /* removed */
	edit(&e[3], "zzz/last", 12, 0);                    /* new, last */
	edit(&e[4], "absent/file", 0, 1);                  /* removed, not there */
	assert_int_equal(rs_index_file_commit(f, e, 5, NULL), 0);
	rs_index_file_free(f);
	assert_false(rs_fs_exists(fx->lock));

	assert_int_equal(git_index_open(&idx, fx->index), 0);
	assert_int_equal(git_index_entrycount(idx), 6);
	ie = git_index_get_bypath(idx, "README.md", 0);
	assert_non_null(ie);
	oid_of(&want, 11);
	assert_true(git_oid_equal(&ie->id, &want));
	assert_int_equal(ie->mode, GIT_FILEMODE_BLOB_EXECUTABLE);
	assert_int_equal(ie->mtime.seconds, 1800000011);
	assert_int_equal(ie->file_size, 11);
	assert_int_equal(ie->ino, 77);
	assert_null(git_index_get_bypath(idx, "index/2026-12.jsonl", 0));
	assert_non_null(git_index_get_bypath(idx, "runs/2026/12/01/b/run.json", 0));
	assert_non_null(git_index_get_bypath(idx, "zzz/last", 0));
	ie = git_index_get_bypath(idx, long_path, 0);
	assert_non_null(ie);
	oid_of(&want, 3);
	assert_true(git_oid_equal(&ie->id, &want));
	/* an untouched entry keeps its extended flags */
	ie = git_index_get_bypath(idx, "runs/2026/12/01/a/run.json", 0);
	assert_non_null(ie);
	assert_true(ie->flags_extended & GIT_INDEX_ENTRY_SKIP_WORKTREE);
	/* the order libgit2 expects (it would not find them otherwise) */
	assert_string_equal(git_index_get_byindex(idx, 0)->path, "README.md");
	assert_string_equal(git_index_get_byindex(idx, 5)->path, "zzz/last");
	git_index_free(idx);
}

/* No index yet: an empty one, written whole. */
static void test_splice_absent(void **state)
{
	struct fixture *fx = *state;
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[1];
	git_index *idx = NULL;

	assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
	assert_int_equal(rs_index_file_count(f), 0);
	edit(&e[0], "a", 1, 0);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), 0);
	rs_index_file_free(f);
	assert_int_equal(git_index_open(&idx, fx->index), 0);
	assert_int_equal(git_index_entrycount(idx), 1);
	git_index_free(idx);
}

/* Someone holds the lock: RS_ERETRY, and their lock is left alone. */
static void test_lock_held(void **state)
{
	struct fixture *fx = *state;
	struct rs_index_file *f = NULL;
	FILE *l;

	write_reference(fx, 0);
	l = fopen(fx->lock, "w");
	assert_non_null(l);
	fclose(l);
	assert_int_equal(rs_index_file_open(&f, fx->index, 1), RS_ERETRY);
	assert_non_null(strstr(rs_error_message(), "index.lock' exists"));
	assert_true(rs_fs_exists(fx->lock));
	/* reading needs no lock */
	assert_int_equal(rs_index_file_open(&f, fx->index, 0), 0);
	rs_index_file_free(f);
	assert_true(rs_fs_exists(fx->lock));
}

/* Unmerged entries: seen, kept, and a path with them is not spliced. */
static void test_conflicts(void **state)
{
	struct fixture *fx = *state;
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[1];
	git_index *idx = NULL;

	assert_int_equal(git_index_open(&idx, fx->index), 0);
	add_entry(idx, "a", 1, 0);
	add_entry(idx, "m", 2, 1);
	add_entry(idx, "m", 3, 2);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);

	assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
	assert_true(rs_index_file_has_conflicts(f));
	assert_int_equal(rs_index_file_find(f, "m", NULL, NULL), 0);
	edit(&e[0], "m", 4, 0);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), RS_EFORMAT);
	edit(&e[0], "b", 4, 0);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), 0);
	rs_index_file_free(f);
	assert_int_equal(git_index_open(&idx, fx->index), 0);
	assert_int_equal(git_index_entrycount(idx), 4);
	assert_true(git_index_has_conflicts(idx));
	git_index_free(idx);
}

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static void read_file(struct rs_buf *b, const char *path)
{
	rs_buf_clear(b);
	assert_int_equal(rs_fs_read_file(b, path, 1 << 20), 0);
}

static void set_be32(char *p, uint32_t v)
{
	p[0] = (char)(v >> 24);
	p[1] = (char)(v >> 16);
	p[2] = (char)(v >> 8);
	p[3] = (char)v;
}

/* `bytes` refused with `code`; the lock taken is given back. */
static void refused(struct fixture *fx, const struct rs_buf *bytes, int code)
{
	struct rs_index_file *f = NULL;

	put_file(fx->index, bytes->ptr, bytes->len);
	assert_int_equal(rs_index_file_open(&f, fx->index, 1), code);
	assert_null(f);
	assert_false(rs_fs_exists(fx->lock));
}

/* Damaged, hostile or unsupported bytes: refused before any write. */
static void test_bad_bytes(void **state)
{
	struct fixture *fx = *state;
	struct rs_buf good = RS_BUF_INIT, b = RS_BUF_INIT;
	size_t first_name = 12 + 62;

	write_reference(fx, 0);
	read_file(&good, fx->index);

	/* too short to be an index */
	assert_int_equal(rs_buf_put(&b, good.ptr, 20), 0);
	refused(fx, &b, RS_ECORRUPT);
	/* not "DIRC" */
	read_file(&b, fx->index);
	b.ptr[0] = 'X';
	refused(fx, &b, RS_ECORRUPT);
	/* version 4 and an unknown version: left to libgit2 */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len), 0);
	set_be32(b.ptr + 4, 4);
	refused(fx, &b, RS_EFORMAT);
	set_be32(b.ptr + 4, 9);
	refused(fx, &b, RS_EFORMAT);
	/* more entries than bytes */
	set_be32(b.ptr + 4, 2);
	set_be32(b.ptr + 8, 0x7fffffff);
	refused(fx, &b, RS_ECORRUPT);
	/* one entry more than there are: the extensions or trailer read as one */
	set_be32(b.ptr + 8, 6);
	refused(fx, &b, RS_ECORRUPT);
	/* a name whose length disagrees with the flags */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len), 0);
	b.ptr[12 + 61] = (char)(b.ptr[12 + 61] + 1);
	refused(fx, &b, RS_ECORRUPT);
	/* entries out of order: the first name made the largest */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len), 0);
	b.ptr[first_name] = '~';
	refused(fx, &b, RS_ECORRUPT);
	/* a mandatory extension (a split index's "link") and a too-long one */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len - 20), 0);
	assert_int_equal(rs_buf_put(&b, "link\0\0\0\0", 8), 0);
	assert_int_equal(rs_buf_put(&b, good.ptr + good.len - 20, 20), 0);
	refused(fx, &b, RS_EFORMAT);
	memcpy(b.ptr + good.len - 20, "ABCD", 4);
	set_be32(b.ptr + good.len - 16, 1000);
	refused(fx, &b, RS_ECORRUPT);
	/* an optional extension it does not know: read, and dropped on write */
	set_be32(b.ptr + good.len - 16, 0);
	put_file(fx->index, b.ptr, b.len);
	{
		struct rs_index_file *f = NULL;
		struct rs_index_edit e[1];
		git_index *idx = NULL;

		assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
		edit(&e[0], "new", 1, 0);
		assert_int_equal(rs_index_file_commit(f, e, 1, NULL), 0);
		rs_index_file_free(f);
		read_file(&b, fx->index);
		assert_null(memmem(b.ptr, b.len, "ABCD", 4));
		assert_int_equal(git_index_open(&idx, fx->index), 0);
		assert_int_equal(git_index_entrycount(idx), 6);
		git_index_free(idx);
	}
	rs_buf_release(&good);
	rs_buf_release(&b);
}

/* Read first, locked later: read again when the index changed meanwhile. */
static void test_lock_later(void **state)
{
	struct fixture *fx = *state;
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[1];
	git_index *idx = NULL;

	write_reference(fx, 0);
	assert_int_equal(rs_index_file_open(&f, fx->index, 0), 0);
	assert_int_equal(rs_index_file_count(f), 5);
	edit(&e[0], "x", 1, 0);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), RS_EUSAGE); /* not locked */
	/* unchanged: the same entries */
	assert_int_equal(rs_index_file_lock(f), 0);
	assert_int_equal(rs_index_file_count(f), 5);
	rs_index_file_free(f);
	assert_false(rs_fs_exists(fx->lock));

	assert_int_equal(rs_index_file_open(&f, fx->index, 0), 0);
	/* someone adds an entry before the lock is taken */
	assert_int_equal(git_index_open(&idx, fx->index), 0);
	add_entry(idx, "added/meanwhile", 9, 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	assert_int_equal(rs_index_file_lock(f), 0);
	assert_int_equal(rs_index_file_count(f), 6);
	assert_int_equal(rs_index_file_find(f, "added/meanwhile", NULL, NULL), 1);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), 0);
	rs_index_file_free(f);
	assert_int_equal(git_index_open(&idx, fx->index), 0);
	assert_int_equal(git_index_entrycount(idx), 7);
	assert_non_null(git_index_get_bypath(idx, "added/meanwhile", 0));
	git_index_free(idx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_splice_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_splice_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_bytes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
