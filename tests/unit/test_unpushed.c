/*
 * git/unpushed.h: the copies `results add` holds of recorded LFS objects
 * until the store has them (in .git/results/unpushed/<oid>), outside the
 * reach of `git lfs prune`: a hard link to the object, put back when
 * git-lfs deleted it, served, listed and released; and what a hostile
 * folder may hold there (other names, symlinks, a copy whose bytes do
 * not match its name) is never taken for a held copy.
 */
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

#include "git/repo.h"
#include "git/unpushed.h"
#include "results/error.h"
#include "util/fs.h"

#define SIZE 3000

struct fixture {
	char dir[64];
	struct rs_repo *r;
	struct rs_id oid;
	char hex[RS_ID_HEXSZ + 1];
	struct rs_buf obj, held;
};

static int setup(void **state)
{
	static char content[SIZE];
	struct fixture *f = calloc(1, sizeof(*f));
	git_repository *g = NULL;
	struct rs_buf src = RS_BUF_INIT;

	memset(content, 'q', sizeof(content));
	strcpy(f->dir, "/tmp/test_unpushed-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, f->dir, 0), 0);
	git_repository_free(g);
	assert_int_equal(rs_repo_open(&f->r, f->dir), 0);
	assert_int_equal(rs_buf_printf(&src, "%s/src", f->dir), 0);
	assert_int_equal(rs_fs_write_file_atomic(src.ptr, content, sizeof(content)), 0);
	assert_int_equal(rs_repo_lfs_store_file(f->r, src.ptr, NULL, &f->oid, NULL), 0);
	rs_id_to_hex(f->hex, &f->oid);
	assert_int_equal(rs_repo_lfs_object_path(&f->obj, f->r, &f->oid), 0);
	assert_int_equal(rs_unpushed_path(&f->held, f->r, &f->oid), 0);
	rs_buf_release(&src);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct rs_buf cmd = RS_BUF_INIT;

	rs_repo_free(f->r);
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", f->dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	rs_buf_release(&f->obj);
	rs_buf_release(&f->held);
	free(f);
	git_libgit2_shutdown();
	return 0;
}

static int count(const struct rs_id *oid, uint64_t size, void *payload)
{
	(void)oid;
	assert_int_equal(size, SIZE);
	(*(int *)payload)++;
	return 0;
}

/* Held, lost by git-lfs, put back, served, released. */
static void test_hold_restore_release(void **state)
{
	struct fixture *f = *state;
	struct rs_buf out = RS_BUF_INIT;
	struct stat a, b;
	int n = 0;

	assert_int_equal(rs_unpushed_any(f->r), 0);
	assert_int_equal(rs_unpushed_hold(f->r, &f->oid), 0);
	assert_int_equal(rs_unpushed_hold(f->r, &f->oid), 0); /* twice: no change */
	assert_int_equal(stat(f->obj.ptr, &a), 0);
	assert_int_equal(stat(f->held.ptr, &b), 0);
	assert_true(a.st_ino == b.st_ino); /* a hard link: no space taken */
	assert_int_equal(rs_unpushed_any(f->r), 1);
	assert_int_equal(rs_unpushed_each(f->r, count, &n), 0);
	assert_int_equal(n, 1);

	/* git lfs prune deletes the object: it comes back from the held copy. */
	assert_int_equal(unlink(f->obj.ptr), 0);
	assert_int_equal(rs_repo_lfs_has(f->r, &f->oid, SIZE), RS_ENOTFOUND);
	assert_int_equal(rs_unpushed_restore(f->r, &f->oid, SIZE), 0);
	assert_int_equal(rs_repo_lfs_has(f->r, &f->oid, SIZE), 0);
	/* Another size is not this object. */
	assert_int_equal(unlink(f->obj.ptr), 0);
	assert_int_equal(rs_unpushed_restore(f->r, &f->oid, SIZE + 1), RS_ENOTFOUND);
	assert_int_equal(rs_unpushed_restore(f->r, &f->oid, SIZE), 0);

	/* Served to a download (lfs-agent), hashed on the way. */
	assert_int_equal(rs_buf_printf(&out, "%s/served", f->dir), 0);
	assert_int_equal(rs_unpushed_copy(f->r, f->hex, SIZE, out.ptr), 0);
	assert_int_equal(stat(out.ptr, &a), 0);
	assert_int_equal(a.st_size, SIZE);
	unlink(out.ptr);
	assert_int_equal(rs_unpushed_copy(f->r, f->hex, SIZE - 1, out.ptr), RS_ENOTFOUND);
	assert_int_equal(rs_unpushed_copy(f->r, "../../etc/passwd", SIZE, out.ptr), RS_EUSAGE);

	/* The store has it: released; releasing again is no error. */
	assert_int_equal(rs_unpushed_release(f->r, f->hex), 0);
	assert_false(rs_fs_exists(f->held.ptr));
	assert_int_equal(rs_unpushed_release(f->r, f->hex), 0);
	assert_int_equal(rs_unpushed_release(NULL, f->hex), 0);
	assert_int_equal(rs_unpushed_release(f->r, "ABC"), RS_EUSAGE);
	assert_int_equal(rs_unpushed_any(f->r), 0);
	/* Nothing held: nothing to put back. */
	assert_int_equal(unlink(f->obj.ptr), 0);
	assert_int_equal(rs_unpushed_restore(f->r, &f->oid, SIZE), RS_ENOTFOUND);
	rs_buf_release(&out);
}

/* What else the folder may hold is never a held copy. */
static void test_hostile_folder(void **state)
{
	struct fixture *f = *state;
	struct rs_buf p = RS_BUF_INIT, out = RS_BUF_INIT, upper = RS_BUF_INIT;
	static char wrong[SIZE];
	int n = 0;

	assert_int_equal(rs_unpushed_hold(f->r, &f->oid), 0);
	assert_int_equal(unlink(f->held.ptr), 0);
	/* A symlink under the oid's name (to the object itself): not followed. */
	assert_int_equal(symlink(f->obj.ptr, f->held.ptr), 0);
	assert_int_equal(rs_unpushed_each(f->r, count, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rs_buf_printf(&out, "%s/served", f->dir), 0);
	assert_int_equal(rs_unpushed_copy(f->r, f->hex, SIZE, out.ptr), RS_ENOTFOUND);
	assert_int_equal(unlink(f->obj.ptr), 0);
	assert_int_equal(rs_unpushed_restore(f->r, &f->oid, SIZE), RS_ENOTFOUND);
	assert_int_equal(unlink(f->held.ptr), 0);
	/* Names that are not an oid (upper case, a temporary file, a dot file). */
	assert_int_equal(rs_buf_printf(&p, "%.*s", (int)(strrchr(f->held.ptr, '/') - f->held.ptr),
				       f->held.ptr), 0);
	for (size_t i = 0; f->hex[i]; i++)
		assert_int_equal(rs_buf_putc(&upper, f->hex[i] >= 'a' ? (char)(f->hex[i] - 32)
								    : f->hex[i]), 0);
	rs_buf_clear(&out);
	assert_int_equal(rs_buf_printf(&out, "%s/%s", p.ptr, upper.ptr), 0);
	assert_int_equal(rs_fs_write_file_atomic(out.ptr, "x", 1), 0);
	rs_buf_clear(&out);
	assert_int_equal(rs_buf_printf(&out, "%s/%s.tmp-abcdef", p.ptr, f->hex), 0);
	assert_int_equal(rs_fs_write_file_atomic(out.ptr, "x", 1), 0);
	rs_buf_clear(&out);
	assert_int_equal(rs_buf_printf(&out, "%s/.hidden", p.ptr), 0);
	assert_int_equal(rs_fs_write_file_atomic(out.ptr, "x", 1), 0);
	assert_int_equal(rs_unpushed_each(f->r, count, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(rs_unpushed_any(f->r), 0);
	/* A held copy whose bytes are not its oid's: never served. */
	memset(wrong, 'z', sizeof(wrong));
	assert_int_equal(rs_fs_write_file_atomic(f->held.ptr, wrong, sizeof(wrong)), 0);
	rs_buf_clear(&out);
	assert_int_equal(rs_buf_printf(&out, "%s/served2", f->dir), 0);
	assert_int_equal(rs_unpushed_copy(f->r, f->hex, SIZE, out.ptr), RS_ECORRUPT);
	assert_false(rs_fs_exists(out.ptr));
	rs_buf_release(&p);
	rs_buf_release(&out);
	rs_buf_release(&upper);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hold_restore_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_folder, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
