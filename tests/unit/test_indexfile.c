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
	char spare[128];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/rs-indexfile.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->index, sizeof(fx->index), "%s/index", fx->dir);
	snprintf(fx->lock, sizeof(fx->lock), "%s/index.lock", fx->dir);
	snprintf(fx->spare, sizeof(fx->spare), "%s/index.results-spare", fx->dir);
	git_libgit2_init();
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->index);
	unlink(fx->lock);
	unlink(fx->spare);
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

static void read_file(struct rs_buf *b, const char *path);

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

/*
 * libgit2 reads the spliced file: every entry where it belongs (in
 * version 4 each path is written against the one before it, so the
 * entries after a changed one are written again).
 */
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

/*
 * Version 4 (prefix-compressed paths) spliced and read back by libgit2
 * and by git: the entries after a changed one are written against their
 * new predecessor. (No path over 4,095 bytes here: libgit2 1.5 cannot
 * read those back in version 4, though it writes them.)
 */
static void test_splice_v4(void **state)
{
	struct fixture *fx = *state;
	static const char *const paths[] = { "README.md", "index/2026-12.jsonl",
					     "runs/2026/12/01/a/run.json",
					     "runs/2026/12/01/a/summary.md",
					     "runs/2026/12/01/c/run.json" };
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[5];
	struct rs_buf b = RS_BUF_INIT, out = RS_BUF_INIT;
	git_index *idx = NULL;
	const git_index_entry *ie;
	git_oid want;
	char cmd[1024];
	FILE *p;
	size_t n;

	assert_int_equal(git_index_open(&idx, fx->index), 0);
	for (int i = 0; i < 5; i++)
		add_entry(idx, paths[i], i + 1, 0);
	assert_int_equal(git_index_set_version(idx, 4), 0);
	assert_int_equal(git_index_write(idx), 0);
	git_index_free(idx);
	idx = NULL;

	assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
	assert_int_equal(rs_index_file_count(f), 5);
	assert_int_equal(rs_index_file_find(f, "runs/2026/12/01/a/summary.md", &want, NULL), 1);
	edit(&e[0], "runs/2026/12/01/b/run.json", 10, 0);  /* new, in the middle */
	edit(&e[1], "README.md", 11, 0);                   /* replaced, first */
	edit(&e[2], "runs/2026/12/01/a/run.json", 0, 1);   /* removed: its successor is rewritten */
	edit(&e[3], "zzz/last", 12, 0);                    /* new, last */
	edit(&e[4], "index/2026-12.jsonl", 13, 0);         /* replaced */
	assert_int_equal(rs_index_file_commit(f, e, 5, NULL), 0);
	rs_index_file_free(f);
	read_file(&b, fx->index);
	assert_int_equal((unsigned char)b.ptr[7], 4);

	assert_int_equal(git_index_open(&idx, fx->index), 0);
	assert_int_equal(git_index_version(idx), 4);
	assert_int_equal(git_index_entrycount(idx), 6);
	assert_null(git_index_get_bypath(idx, "runs/2026/12/01/a/run.json", 0));
	ie = git_index_get_bypath(idx, "runs/2026/12/01/a/summary.md", 0);
	assert_non_null(ie);
	oid_of(&want, 4);
	assert_true(git_oid_equal(&ie->id, &want));
	ie = git_index_get_bypath(idx, "index/2026-12.jsonl", 0);
	assert_non_null(ie);
	oid_of(&want, 13);
	assert_true(git_oid_equal(&ie->id, &want));
	assert_non_null(git_index_get_bypath(idx, "runs/2026/12/01/b/run.json", 0));
	assert_non_null(git_index_get_bypath(idx, "runs/2026/12/01/c/run.json", 0));
	assert_string_equal(git_index_get_byindex(idx, 5)->path, "zzz/last");
	git_index_free(idx);
	/* git reads it the same */
	snprintf(cmd, sizeof(cmd), "git init -q --bare %s/g.git && GIT_INDEX_FILE=%s git "
		 "--git-dir=%s/g.git --work-tree=%s ls-files 2>&1", fx->dir, fx->index, fx->dir,
		 fx->dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	rs_buf_clear(&out);
	while ((n = fread(cmd, 1, sizeof(cmd), p)) > 0)
		assert_int_equal(rs_buf_put(&out, cmd, n), 0);
	assert_int_equal(pclose(p), 0);
	assert_non_null(out.ptr);
	assert_string_equal(out.ptr, "README.md\nindex/2026-12.jsonl\nruns/2026/12/01/a/summary.md\n"
			    "runs/2026/12/01/b/run.json\nruns/2026/12/01/c/run.json\nzzz/last\n");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/g.git", fx->dir);
	assert_int_equal(system(cmd), 0);
	rs_buf_release(&b);
	rs_buf_release(&out);
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

static ino_t ino_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_ino;
}

/* libgit2 reads `path` whole (it checks the trailer) with `n` entries. */
static void reads_back(const char *path, size_t n)
{
	git_index *idx = NULL;

	assert_int_equal(git_index_open(&idx, path), 0);
	assert_int_equal(git_index_entrycount(idx), n);
	git_index_free(idx);
}

/* One edit of `path` (n, remove) committed, under a lock taken by open. */
static int commit_one(struct fixture *fx, const char *path, int n, int remove)
{
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[1];
	int err = rs_index_file_open(&f, fx->index, 1);

	if (err)
		return err;
	edit(&e[0], path, n, remove);
	err = rs_index_file_commit(f, e, 1, NULL);
	rs_index_file_free(f);
	return err;
}

static void put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * The spare made a hard link (`symbolic` 0) or a symlink to another
 * file: a commit (of a new entry `n`, leaving `entries`) makes a lock of
 * its own and leaves that file as it was.
 */
static void spare_not_written(struct fixture *fx, int symbolic, int n, size_t entries)
{
	char other[128], path[64];
	struct rs_buf b = RS_BUF_INIT;

	snprintf(other, sizeof(other), "%s/other", fx->dir);
	unlink(fx->spare);
	put_text(other, "keep me\n");
	assert_int_equal(symbolic ? symlink(other, fx->spare) : link(other, fx->spare), 0);
	snprintf(path, sizeof(path), "runs/2026/12/01/%d/run.json", n);
	assert_int_equal(commit_one(fx, path, n, 0), 0);
	read_file(&b, other);
	assert_string_equal(b.ptr, "keep me\n");
	assert_true(ino_of(fx->index) != ino_of(other));
	reads_back(fx->index, entries);
	assert_int_equal(unlink(other), 0);
	rs_buf_release(&b);
}

/*
 * The index replaced is kept as the spare, and the next commit writes
 * into it in place (its inode becomes the index), cut to the new length
 * when it was longer. A spare with another name (a hard link), a
 * symlink, or one held by a lock is never written through.
 */
static void test_spare(void **state)
{
	struct fixture *fx = *state;
	struct rs_buf b = RS_BUF_INIT;
	ino_t first, second;

	write_reference(fx, 0);
	first = ino_of(fx->index);
	assert_false(rs_fs_exists(fx->spare));
	assert_int_equal(commit_one(fx, "runs/2026/12/01/b/run.json", 6, 0), 0);
	assert_int_equal(ino_of(fx->spare), first); /* the old index, kept */
	second = ino_of(fx->index);
	reads_back(fx->index, 6);
	assert_int_equal(commit_one(fx, "runs/2026/12/01/d/run.json", 7, 0), 0);
	assert_int_equal(ino_of(fx->index), first); /* written in place */
	assert_int_equal(ino_of(fx->spare), second);
	reads_back(fx->index, 7);
	/* shorter than the spare it is written into: cut to its length */
	assert_int_equal(commit_one(fx, long_path, 0, 1), 0);
	assert_int_equal(ino_of(fx->index), second);
	reads_back(fx->index, 6);
	read_file(&b, fx->index);
	{
		struct rs_index_file *f = NULL;

		assert_int_equal(rs_index_file_open(&f, fx->index, 0), 0);
		assert_int_equal(rs_index_file_verify(f), 0);
		rs_index_file_free(f);
	}
	assert_false(rs_fs_exists(fx->lock));

	/* a spare with a second name elsewhere, or a symlink: that file is left alone */
	spare_not_written(fx, 0, 8, 7);
	spare_not_written(fx, 1, 9, 8);

	/* the lock held: refused as without a spare, the spare kept */
	assert_true(rs_fs_exists(fx->spare));
	put_text(fx->lock, "");
	assert_int_equal(commit_one(fx, "runs/2026/12/01/g/run.json", 10, 0), RS_ERETRY);
	assert_non_null(strstr(rs_error_message(), "index.lock' exists"));
	assert_true(rs_fs_exists(fx->spare));
	assert_int_equal(unlink(fx->lock), 0);
	reads_back(fx->index, 8);
	rs_buf_release(&b);
	rs_error_clear();
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

/* One new entry `path` spliced into the index, the file read back into `b`. */
static void splice_one(struct fixture *fx, const char *path, int n, struct rs_buf *b)
{
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[1];

	assert_int_equal(rs_index_file_open(&f, fx->index, 1), 0);
	edit(&e[0], path, n, 0);
	assert_int_equal(rs_index_file_commit(f, e, 1, NULL), 0);
	rs_index_file_free(f);
	read_file(b, fx->index);
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
	/* an unknown version: left to libgit2 */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len), 0);
	set_be32(b.ptr + 4, 5);
	refused(fx, &b, RS_EFORMAT);
	set_be32(b.ptr + 4, 9);
	refused(fx, &b, RS_EFORMAT);
	/* version 2 bytes read as version 4: its first path drops bytes of none */
	set_be32(b.ptr + 4, 4);
	b.ptr[first_name] = 5;
	refused(fx, &b, RS_ECORRUPT);
	memcpy(b.ptr, good.ptr, good.len);
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
	b.ptr[12 + 61] = (char)(b.ptr[12 + 61] - 2); /* one short of the path */
	refused(fx, &b, RS_ECORRUPT);
	b.ptr[12 + 61] = (char)(b.ptr[12 + 61] + 5); /* into the padding, past its first NUL */
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
		git_index *idx = NULL;

		splice_one(fx, "new", 1, &b);
		assert_null(memmem(b.ptr, b.len, "ABCD", 4));
		assert_int_equal(git_index_open(&idx, fx->index), 0);
		assert_int_equal(git_index_entrycount(idx), 6);
		git_index_free(idx);
	}
	/*
	 * A TREE that is no cache tree: dropped on write, all else kept, also
	 * when the bytes written just before it are a new entry's (what was
	 * put of the tree is taken back, the entry's bytes are not).
	 */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len - 20), 0);
	/* the root (invalid, one subtree), then a subtree cut short */
	assert_int_equal(rs_buf_put(&b, "TREE\0\0\0\x0b\0" "-1 1\nsub\0x", 19), 0);
	assert_int_equal(rs_buf_put(&b, good.ptr + good.len - 20, 20), 0);
	put_file(fx->index, b.ptr, b.len);
	{
		git_index *idx = NULL;
		const git_index_entry *ie;

		splice_one(fx, "zzz/last", 9, &b);
		assert_null(memmem(b.ptr, b.len, "TREE", 4));
		assert_null(memmem(b.ptr, b.len, "-1 1\n", 5));
		/* libgit2 checks the trailer's SHA-1 */
		assert_int_equal(git_index_open(&idx, fx->index), 0);
		assert_int_equal(git_index_entrycount(idx), 6);
		ie = git_index_get_bypath(idx, "zzz/last", 0);
		assert_non_null(ie);
		assert_int_equal(ie->file_size, 9);
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


/* ---- git's sparse index: spliced as git writes it ------------------------ */

static void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

/* The output of the command line. */
static void capture(struct rs_buf *out, const char *fmt, ...)
{
	char cmd[8192], chunk[4096];
	va_list ap;
	FILE *p;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rs_buf_clear(out);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		assert_int_equal(rs_buf_put(out, chunk, n), 0);
	assert_int_equal(pclose(p), 0);
}

/* Entry `name` of index bytes `b` (versions 2, 3): where it starts, and its name. */
static size_t find_entry(const struct rs_buf *b, const char *name, size_t *name_off)
{
	const unsigned char *u = (const unsigned char *)b->ptr;
	uint32_t count = (uint32_t)u[8] << 24 | (uint32_t)u[9] << 16 | (uint32_t)u[10] << 8 | u[11];
	size_t off = 12;

	for (uint32_t i = 0; i < count; i++) {
		unsigned flags = (unsigned)u[off + 60] << 8 | u[off + 61];
		size_t no = off + 62 + (flags & 0x4000 ? 2 : 0), len = strlen(b->ptr + no);

		if (strcmp(b->ptr + no, name) == 0) {
			*name_off = no;
			return off;
		}
		off += (no - off + len + 8) & ~(size_t)7;
	}
	fail_msg("no entry '%s'", name);
	return 0;
}

/*
 * Two commits; a sparse clone (cone: top-level files) at the first; the
 * index spliced to the second against git's own `read-tree -m -u` of it:
 * the same entries (`git ls-files --sparse -s`), runs/ and index/ one
 * sparse folder entry each, a folder new in the second commit one too;
 * then damaged sparse entries refused.
 */
static void test_sparse_like_git(void **state)
{
	struct fixture *fx = *state;
	struct rs_buf ours = RS_BUF_INIT, ref = RS_BUF_INIT, good = RS_BUF_INIT, b = RS_BUF_INIT;
	struct rs_buf ipath = RS_BUF_INIT;
	char d[64];
	struct rs_index_file *f = NULL;
	struct rs_index_edit e[5];
	git_repository *repo = NULL;
	git_object *tree = NULL;
	git_oid id;
	size_t dlen, runs, runs_name, top, top_name;
	const char *git = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main";

	(void)fx;
	snprintf(d, sizeof(d), "/tmp/rs-sparseidx.XXXXXX");
	assert_non_null(mkdtemp(d));
	sh("cd %s && %s init -q src && cd src && mkdir -p runs/a index && echo 1 >runs/a/run.json && "
	   "echo s >index/s && echo r >README.md && echo t >top.txt && %s add . && "
	   "%s commit -qm one && mkdir -p runs/b newdir && echo 2 >runs/b/run.json && "
	   "echo s2 >>index/s && echo r2 >README.md && echo n >newdir/x && %s add . && "
	   "%s commit -qm two", d, git, git, git, git, git);
	for (int i = 0; i < 2; i++)
		sh("cd %s && git clone -q --no-checkout src %s && cd %s && "
		   "git config core.sparseCheckout true && git config core.sparseCheckoutCone true && "
		   "git config index.sparse true && printf '/*\\n!/*/\\n' >.git/info/sparse-checkout && "
		   "git read-tree -m -u HEAD~1", d, i ? "ref" : "ours", i ? "ref" : "ours");
	capture(&ours, "cd %s/ours && git ls-files --sparse -s", d);
	assert_non_null(strstr(ours.ptr, "040000 "));
	assert_non_null(strstr(ours.ptr, "\trun" "s/\n"));
	/* git's: from the first commit's index to the second's */
	sh("cd %s/ref && git read-tree -m -u HEAD~1 HEAD", d);
	capture(&ref, "cd %s/ref && git ls-files --sparse -s", d);
	assert_non_null(strstr(ref.ptr, "\tnewdir/\n"));

	/* ours: the splice of the paths the second commit changes */
	assert_int_equal(rs_buf_printf(&ipath, "%s/ours/.git/index", d), 0);
	read_file(&good, ipath.ptr);
	assert_int_equal(rs_index_file_open(&f, ipath.ptr, 1), 0);
	assert_true(rs_index_file_is_sparse(f));
	assert_int_equal(rs_index_file_count(f), 4);
	assert_int_equal(rs_index_file_where(f, "runs/b/run.json", &dlen, &id), 0);
	assert_int_equal(dlen, 5);
	assert_false(git_oid_is_zero(&id));
	assert_int_equal(rs_index_file_where(f, "newdir/x", &dlen, &id), 0);
	assert_int_equal(dlen, 7);
	assert_true(git_oid_is_zero(&id));
	assert_int_equal(rs_index_file_where(f, "README.md", &dlen, NULL), 0);
	assert_int_equal(dlen, 0);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_printf(&b, "%s/ours", d), 0);
	assert_int_equal(git_repository_open(&repo, b.ptr), 0);
	assert_int_equal(git_revparse_single(&tree, repo, "HEAD^{tree}"), 0);
	edit(&e[0], "runs/b/run.json", 1, 0);
	edit(&e[1], "index/s", 2, 0);
	edit(&e[2], "newdir/x", 3, 0);
	edit(&e[3], "README.md", 4, 0);
	sh("cd %s/ours && git cat-file blob HEAD:README.md >README.md", d);
	assert_int_equal(rs_buf_puts(&b, "/README.md"), 0);
	assert_int_equal(stat(b.ptr, &e[3].st), 0);
	capture(&ref, "cd %s/ours && git rev-parse HEAD:README.md", d);
	ref.ptr[GIT_OID_HEXSZ] = '\0';
	assert_int_equal(git_oid_fromstr(&e[3].id, ref.ptr), 0);
	e[3].mode = GIT_FILEMODE_BLOB;
	assert_int_equal(rs_index_file_commit(f, e, 4, (git_tree *)tree), 0);
	rs_index_file_free(f);
	f = NULL;
	capture(&ours, "cd %s/ours && git ls-files --sparse -s", d);
	capture(&ref, "cd %s/ref && git ls-files --sparse -s", d);
	assert_string_equal(ours.ptr, ref.ptr);
	capture(&ours, "cd %s/ours && git write-tree", d);
	capture(&ref, "cd %s/ours && git rev-parse 'HEAD^{tree}'", d);
	assert_string_equal(ours.ptr, ref.ptr);
	capture(&ours, "cd %s/ours && git diff --cached --name-only", d);
	assert_int_equal(ours.len, 0);
	/* still sparse: index/, newdir/, runs/ */
	capture(&ours, "cd %s/ours && git ls-files --sparse | grep -c /$", d);
	assert_string_equal(ours.ptr, "3\n");
	capture(&ours, "cd %s/ours && git status --porcelain", d);
	assert_int_equal(ours.len, 0);

	/* the cone of other patterns, for paths in no entry: git's ancestors are parents */
	sh("cd %s/ours && printf '/*\\n!/*/\\n/newtop/x/\\n' >.git/info/sparse-checkout", d);
	assert_int_equal(rs_index_file_open(&f, ipath.ptr, 0), 0);
	assert_int_equal(rs_index_file_where(f, "newtop/x/deep/f", &dlen, NULL), 0);
	assert_int_equal(dlen, 0);
	assert_int_equal(rs_index_file_where(f, "newtop/f", &dlen, NULL), 0);
	assert_int_equal(dlen, 0);
	assert_int_equal(rs_index_file_where(f, "newtop/y/f", &dlen, NULL), 0);
	assert_int_equal(dlen, strlen("newtop/y/"));
	assert_int_equal(rs_index_file_where(f, "other/f", &dlen, NULL), 0);
	assert_int_equal(dlen, strlen("other/"));
	assert_int_equal(rs_index_file_where(f, "runs/z/f", &dlen, NULL), 0);
	assert_int_equal(dlen, strlen("runs/")); /* the sparse folder entry holds it */
	rs_index_file_free(f);
	/* patterns that are not cone mode: a path in no entry cannot be placed */
	sh("cd %s/ours && printf '*.txt\\n' >.git/info/sparse-checkout", d);
	assert_int_equal(rs_index_file_open(&f, ipath.ptr, 0), 0);
	assert_int_equal(rs_index_file_where(f, "other/f", &dlen, NULL), RS_EFORMAT);
	assert_non_null(strstr(rs_error_message(), "not git's cone mode"));
	assert_int_equal(rs_index_file_where(f, "runs/z/f", &dlen, NULL), 0);
	assert_int_equal(dlen, strlen("runs/"));
	rs_index_file_free(f);
	f = NULL;

	/* damaged sparse entries (git's bytes of the first commit, changed) */
	runs = find_entry(&good, "runs/", &runs_name);
	top = find_entry(&good, "top.txt", &top_name);
	/* folder entries but no "sdir" extension (the 8 bytes before the trailer) */
	assert_memory_equal(good.ptr + good.len - 28, "sdir\0\0\0\0", 8);
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len - 28), 0);
	assert_int_equal(rs_buf_put(&b, good.ptr + good.len - 20, 20), 0);
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "no sparse-index extension"));
	/* a folder entry of a file's mode */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_put(&b, good.ptr, good.len), 0);
	set_be32(b.ptr + runs + 24, 0100644);
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "not 040000"));
	/* a folder entry not skip-worktree */
	memcpy(b.ptr, good.ptr, good.len);
	b.ptr[runs + 62] = 0;
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "skip-worktree"));
	/* the mode of a folder on a file */
	memcpy(b.ptr, good.ptr, good.len);
	set_be32(b.ptr + top + 24, 040000);
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "not ending in '/'"));
	/* a file inside a sparse folder ("top.txt" renamed "runs/xx") */
	memcpy(b.ptr, good.ptr, good.len);
	memcpy(b.ptr + top_name, "runs/xx", 7);
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "inside the folder"));
	/* out of order ("runs/" renamed "aaaa/", before "index/") */
	memcpy(b.ptr, good.ptr, good.len);
	memcpy(b.ptr + runs_name, "aaaa/", 5);
	refused(fx, &b, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "out of order"));
	/* git's own bytes are read */
	put_file(fx->index, good.ptr, good.len);
	assert_int_equal(rs_index_file_open(&f, fx->index, 0), 0);
	rs_index_file_free(f);

	git_object_free(tree);
	git_repository_free(repo);
	sh("rm -rf %s", d);
	rs_buf_release(&ours);
	rs_buf_release(&ref);
	rs_buf_release(&good);
	rs_buf_release(&b);
	rs_buf_release(&ipath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_splice_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_splice_v4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_splice_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spare, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_later, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sparse_like_git, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
