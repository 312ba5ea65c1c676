/*
 * Verified copies and working-tree checkout of LFS objects: see
 * checkout.h.
 */
#define _GNU_SOURCE /* copy_file_range */
#include "results/checkout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "git/commit.h"
#include "git/pointer.h"
#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/hash.h"
#include "util/fs.h"

#define COPY_BLOCK (1u << 20)

/*
 * Let the kernel copy `in` to `fd` (copy_file_range). `*copied` 1 when all
 * of it was; 0 when this file system cannot, and the caller copies the
 * rest itself.
 */
static int kernel_copy(int in, int fd, const char *src, int *copied)
{
	*copied = 0;
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, fd, NULL, 1u << 30, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP ||
			      errno == EINVAL))
			return 0;
		if (n < 0)
			return rs_error_errno(RS_EGENERIC, "cannot copy '%s'", src);
		if (n == 0) {
			*copied = 1;
			return 0;
		}
	}
}

/* Copy the rest of `in` to `fd` by blocks, hashing into `h` (may be NULL). */
static int block_copy(int in, int fd, const char *src, struct rs_sha256 *h)
{
	unsigned char *block = malloc(COPY_BLOCK);
	int err = 0;

	if (!block)
		return rs_error_set(RS_EGENERIC, "out of memory");
	while (err == 0) {
		ssize_t n = read(in, block, COPY_BLOCK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", src);
		if (n <= 0)
			break;
		if (h)
			rs_sha256_update(h, block, (size_t)n);
		err = rs_fs_write_all(fd, block, (size_t)n);
	}
	free(block);
	return err;
}

int rs_repo_copy_object(struct rs_repo *r, const char *src, const char *dest,
			const struct rs_id *oid)
{
	struct rs_buf tmp = RS_BUF_INIT;
	struct rs_sha256 *h = NULL;
	struct rs_id got;
	int in = -1, fd = -1, copied = 0, err;

	if (oid) {
		h = rs_sha256_new();
		if (!h) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot open '%s'", src);
		goto out;
	}
	err = r ? rs_repo_tmpfile_for(r, dest, &tmp, &fd) : rs_fs_tmpfile_near(&tmp, dest, &fd);
	if (err)
		goto out;
	/* Just downloaded and checked by the store: let the kernel copy. */
	if (!oid) {
		err = kernel_copy(in, fd, src, &copied);
		if (err)
			goto out;
	}
	if (!copied) {
		err = block_copy(in, fd, src, h);
		if (err)
			goto out;
	}
	if (oid)
		rs_sha256_final(h, &got);
	if (oid && rs_id_cmp(&got, oid) != 0) {
		err = rs_error_set(RS_ECORRUPT, "the local LFS object '%s' is damaged; delete it "
				   "and fetch again", src);
		goto out;
	}
	err = rs_fs_commit_tmp(fd, tmp.ptr, dest);
	fd = -1;
out:
	rs_fs_drop_tmp(fd, tmp.ptr);
	if (in >= 0)
		close(in);
	rs_sha256_free(h);
	rs_buf_release(&tmp);
	return err;
}

static int mkdir_parent(const char *path)
{
	char *dir = strdup(path), *slash;
	int err = 0;

	if (!dir)
		return rs_error_set(RS_EGENERIC, "out of memory");
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		err = rs_fs_mkdir_p(dir, 0755);
	}
	free(dir);
	return err;
}

/*
 * Record the stat data of the checked-out content in the index entry of
 * `rel`, keeping its blob (the pointer). Best effort: skipped when the
 * entry does not hold `blob_text`'s pointer, and in git's sparse index
 * (which libgit2 cannot read: the load below fails and nothing is
 * written): there the file is in a collapsed folder and has no entry of
 * its own; git gives it one when it next reads the index (it expands
 * the folders on the way to a file present outside the sparse checkout)
 * and takes its stat data then.
 */
static void refresh_index_entry(struct rs_repo *r, const char *rel, const char *full,
				const struct rs_buf *blob_text)
{
	git_index *index = NULL;
	const git_index_entry *cur;
	git_index_entry e;
	git_oid blob;
	struct stat st;

	if (git_odb_hash(&blob, blob_text->ptr, blob_text->len, GIT_OBJECT_BLOB) < 0 ||
	    git_repository_index(&index, r->git) < 0 || git_index_read(index, 0) < 0)
		goto out;
	cur = git_index_get_bypath(index, rel, 0);
	if (!cur || !git_oid_equal(&cur->id, &blob) || stat(full, &st) != 0)
		goto out;
	e = *cur;
	rs_commit_entry_stat(&e, &st);
	if (git_index_add(index, &e) == 0)
		git_index_write(index);
out:
	git_error_clear();
	git_index_free(index);
}

int rs_repo_checkout_object(struct rs_repo *r, const char *rel, const char *object_path,
			    const struct rs_pointer *p, const struct rs_buf *pointer_text,
			    int verified, int *placed)
{
	struct rs_buf full = RS_BUF_INIT, head = RS_BUF_INIT;
	struct rs_pointer cur = RS_POINTER_INIT;
	struct stat st;
	int err = 0;

	*placed = 0;
	err = rs_buf_printf(&full, "%s%s", r->workdir, rel);
	if (err)
		goto out;
	if (lstat(full.ptr, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			goto out;
		if ((uint64_t)st.st_size == p->size && st.st_size >= RS_POINTER_MAX) {
			*placed = 1; /* already checked out */
			goto out;
		}
		if (rs_fs_read_file(&head, full.ptr, RS_POINTER_MAX) != 0 ||
		    rs_pointer_parse(&cur, head.ptr, head.len) != 0 ||
		    rs_id_cmp(&cur.oid, &p->oid) != 0) {
			rs_error_clear(); /* the user's file: left alone */
			goto out;
		}
	}
	err = mkdir_parent(full.ptr);
	if (err == 0)
		err = rs_repo_copy_object(r, object_path, full.ptr, verified ? NULL : &p->oid);
	if (err)
		goto out;
	*placed = 1;
	refresh_index_entry(r, rel, full.ptr, pointer_text);
out:
	rs_pointer_release(&cur);
	rs_buf_release(&full);
	rs_buf_release(&head);
	return err;
}
