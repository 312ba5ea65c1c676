/*
 * results/checkout.h: verified copies of LFS objects and the checkout that
 * replaces a pointer in the working tree (results fetch).
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

#include "git/pointer.h"
#include "git/repo.h"
#include "results/checkout.h"
#include "results/error.h"
#include "util/fs.h"

#define CONTENT_SIZE 5000 /* more than a pointer: checkout tells them apart by size */

static void test_checkout(void **state)
{
	char dir[] = "/tmp/test_repo_checkout-XXXXXX";
	static char content[CONTENT_SIZE];
	struct rs_buf src = RS_BUF_INIT, obj = RS_BUF_INIT, ptext = RS_BUF_INIT;
	struct rs_buf full = RS_BUF_INIT, got = RS_BUF_INIT, out = RS_BUF_INIT, cmd = RS_BUF_INIT;
	git_repository *g = NULL;
	git_index *index = NULL;
	const git_index_entry *ie;
	git_oid blob;
	struct rs_repo *r = NULL;
	struct rs_pointer p;
	struct rs_id oid, other;
	struct stat st;
	int placed = -1;

	(void)state;
	memset(content, 'x', sizeof(content));
	assert_non_null(mkdtemp(dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 0), 0);
	assert_int_equal(rs_repo_open(&r, dir), 0);

	/* An object in the local LFS store, its pointer in the tree and index. */
	assert_int_equal(rs_buf_printf(&src, "%s/../session-src", dir), 0);
	assert_int_equal(rs_fs_write_file_atomic(src.ptr, content, sizeof(content)), 0);
	assert_int_equal(rs_repo_lfs_store_file(r, src.ptr, NULL, &oid, NULL), 0);
	assert_int_equal(rs_repo_lfs_object_path(&obj, r, &oid), 0);
	rs_pointer_init(&p, &oid, sizeof(content));
	assert_int_equal(rs_pointer_format(&ptext, &p), 0);
	assert_int_equal(rs_buf_printf(&full, "%s/runs/a", dir), 0);
	assert_int_equal(rs_fs_mkdir_p(full.ptr, 0755), 0);
	assert_int_equal(rs_buf_puts(&full, "/s.pyisession"), 0);
	assert_int_equal(rs_fs_write_file_atomic(full.ptr, ptext.ptr, ptext.len), 0);
	assert_int_equal(git_repository_index(&index, g), 0);
	assert_int_equal(git_index_add_bypath(index, "runs/a/s.pyisession"), 0);
	assert_int_equal(git_index_write(index), 0);
	git_index_free(index);
	index = NULL;

	/* A copy with a wrong oid is refused and leaves nothing. */
	assert_int_equal(rs_buf_printf(&out, "%s/../copy-out", dir), 0);
	memset(&other, 7, sizeof(other));
	assert_int_equal(rs_repo_copy_object(NULL, obj.ptr, out.ptr, &other), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "is damaged"));
	assert_false(rs_fs_exists(out.ptr));
	assert_int_equal(rs_repo_copy_object(NULL, obj.ptr, out.ptr, &oid), 0);
	assert_int_equal(rs_fs_read_file(&got, out.ptr, 1 << 20), 0);
	assert_int_equal(got.len, sizeof(content));
	unlink(out.ptr);

	/* The pointer is replaced by the content; the index keeps the pointer's blob. */
	assert_int_equal(rs_repo_checkout_object(r, "runs/a/s.pyisession", obj.ptr, &p, &ptext, 0,
						 &placed), 0);
	assert_int_equal(placed, 1);
	rs_buf_clear(&got);
	assert_int_equal(rs_fs_read_file(&got, full.ptr, 1 << 20), 0);
	assert_int_equal(got.len, sizeof(content));
	assert_memory_equal(got.ptr, content, sizeof(content));
	assert_int_equal(git_odb_hash(&blob, ptext.ptr, ptext.len, GIT_OBJECT_BLOB), 0);
	assert_int_equal(git_repository_index(&index, g), 0);
	assert_int_equal(git_index_read(index, 1), 0);
	ie = git_index_get_bypath(index, "runs/a/s.pyisession", 0);
	assert_non_null(ie);
	assert_true(git_oid_equal(&ie->id, &blob));
	assert_int_equal(stat(full.ptr, &st), 0);
	assert_int_equal(ie->file_size, (uint32_t)st.st_size);
	git_index_free(index);
	/* Already there: placed, nothing to do. */
	assert_int_equal(rs_repo_checkout_object(r, "runs/a/s.pyisession", obj.ptr, &p, &ptext, 1,
						 &placed), 0);
	assert_int_equal(placed, 1);

	/* A file of the user's at that path is left alone. */
	assert_int_equal(rs_fs_write_file_atomic(full.ptr, "mine\n", 5), 0);
	assert_int_equal(rs_repo_checkout_object(r, "runs/a/s.pyisession", obj.ptr, &p, &ptext, 1,
						 &placed), 0);
	assert_int_equal(placed, 0);
	rs_buf_clear(&got);
	assert_int_equal(rs_fs_read_file(&got, full.ptr, 100), 0);
	assert_string_equal(got.ptr, "mine\n");

	rs_pointer_release(&p);
	rs_repo_free(r);
	git_repository_free(g);
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s' '%s'", dir, src.ptr), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	rs_buf_release(&src);
	rs_buf_release(&obj);
	rs_buf_release(&ptext);
	rs_buf_release(&full);
	rs_buf_release(&got);
	rs_buf_release(&out);
	git_libgit2_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
