/*
 * The folder backend: the store's files under a local or shared directory.
 *
 * Atomicity comes from POSIX rename: a put writes `<key>.tmp-XXXXXX` in
 * the key's own directory, fsyncs it, renames it over the final name and
 * fsyncs the directory, so a reader sees the old state or the whole new
 * file, and a crash leaves at worst a temporary file (ignored by list).
 * Reads use pread on a descriptor opened per call, so any number of
 * threads may read at once.
 */
#include "remote/remote.h"
#include "util/error.h"
#include "util/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct folder_remote {
	struct rs_remote parent;
	char *root;
};

/* Keys are relative and made of a safe alphabet: no "..", no leading '/'. */
static int key_path(struct folder_remote *f, const char *key, struct rs_buf *out)
{
	int err = rs_remote_check_key(key);

	return err ? err : rs_fs_join(out, f->root, key);
}

static int folder_get(struct rs_remote *r, const char *key, uint64_t off,
		      uint64_t len, struct rs_buf *out)
{
	struct folder_remote *f = (struct folder_remote *)r;
	struct rs_buf path = RS_BUF_INIT;
	struct stat st;
	int fd = -1, err;
	size_t start = out->len;

	err = key_path(f, key, &path);
	if (err)
		goto out;
	fd = open(path.ptr, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'", key, f->root);
		else
			err = rs_error_errno(RS_EGENERIC, "cannot open '%s'", path.ptr);
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path.ptr);
		goto out;
	}
	if (len == UINT64_MAX) {
		if (off > (uint64_t)st.st_size) {
			err = rs_error_set(RS_ECORRUPT, "'%s' is shorter than offset %llu", key,
					   (unsigned long long)off);
			goto out;
		}
		len = (uint64_t)st.st_size - off;
	}
	if (off > (uint64_t)st.st_size || len > (uint64_t)st.st_size - off) {
		err = rs_error_set(RS_ECORRUPT, "'%s' is %lld bytes, shorter than the %llu asked at %llu",
				   key, (long long)st.st_size, (unsigned long long)len,
				   (unsigned long long)off);
		goto out;
	}
	if (len > SIZE_MAX / 2) {
		err = rs_error_set(RS_EUSAGE, "read of %llu bytes is too large", (unsigned long long)len);
		goto out;
	}
	err = rs_buf_grow(out, (size_t)len);
	if (err)
		goto out;
	err = rs_fs_pread_all(fd, out->ptr + out->len, (size_t)len, off);
	if (err) {
		err = rs_error_wrap(err, "reading '%s'", key);
		goto out;
	}
	out->len += (size_t)len;
	out->ptr[out->len] = '\0';
out:
	if (err && out->ptr) {
		out->len = start;
		out->ptr[start] = '\0';
	}
	if (fd >= 0)
		close(fd);
	rs_buf_release(&path);
	return err;
}

static int ensure_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash || n == 0 || n >= sizeof(dir))
		return 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return rs_fs_mkdir_p(dir, 0777);
}

static int put_from_fd(struct folder_remote *f, const char *key, int src_fd,
		       const void *p, size_t n)
{
	struct rs_buf path = RS_BUF_INIT, tmp = RS_BUF_INIT;
	char *copy = NULL;
	int fd = -1, err;

	err = key_path(f, key, &path);
	if (err)
		goto out;
	err = ensure_parent(path.ptr);
	if (err)
		goto out;
	err = rs_fs_tmpfile_near(&tmp, path.ptr, &fd);
	if (err)
		goto out;
	if (src_fd >= 0) {
		enum { COPY = 1 << 20 };
		ssize_t r;

		copy = malloc(COPY);
		if (!copy) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto fail;
		}
		while ((r = read(src_fd, copy, COPY)) != 0) {
			if (r < 0) {
				if (errno == EINTR)
					continue;
				err = rs_error_errno(RS_EGENERIC, "cannot read the file for '%s'", key);
				goto fail;
			}
			err = rs_fs_write_all(fd, copy, (size_t)r);
			if (err)
				goto fail;
		}
	} else {
		err = rs_fs_write_all(fd, p, n);
		if (err)
			goto fail;
	}
	err = rs_fs_commit_tmp(fd, tmp.ptr, path.ptr);
	fd = -1;
	goto out;
fail:
	close(fd);
	unlink(tmp.ptr);
	err = rs_error_wrap(err, "cannot store '%s' in '%s'", key, f->root);
out:
	free(copy);
	rs_buf_release(&tmp);
	rs_buf_release(&path);
	return err;
}

static int folder_put_file(struct rs_remote *r, const char *key, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);
	err = put_from_fd((struct folder_remote *)r, key, fd, NULL, 0);
	close(fd);
	return err;
}

static int folder_put_buf(struct rs_remote *r, const char *key, const void *p, size_t n)
{
	return put_from_fd((struct folder_remote *)r, key, -1, p, n);
}

static int folder_stat(struct rs_remote *r, const char *key, uint64_t *size_out)
{
	struct folder_remote *f = (struct folder_remote *)r;
	struct rs_buf path = RS_BUF_INIT;
	struct stat st;
	int err = key_path(f, key, &path);

	if (!err && stat(path.ptr, &st) != 0) {
		if (errno == ENOENT)
			err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'", key, f->root);
		else
			err = rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path.ptr);
	}
	if (!err && size_out)
		*size_out = (uint64_t)st.st_size;
	rs_buf_release(&path);
	return err;
}

/* Walk `dir` (whose key prefix is `rel`) calling cb for files matching prefix. */
static int walk(struct folder_remote *f, const char *dir, const char *rel,
		const char *prefix, rs_remote_list_cb cb, void *payload)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int err = 0;

	if (!d) {
		if (errno == ENOENT)
			return 0;
		return rs_error_errno(RS_EGENERIC, "cannot list '%s'", dir);
	}
	while (!err && (e = readdir(d))) {
		struct rs_buf child = RS_BUF_INIT, key = RS_BUF_INIT;
		struct stat st;
		size_t plen = strlen(prefix);

		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp-"))
			continue;
		if (rs_fs_join(&child, dir, e->d_name) ||
		    (*rel ? rs_fs_join(&key, rel, e->d_name) : rs_buf_puts(&key, e->d_name))) {
			err = rs_error_last();
		} else if (stat(child.ptr, &st) != 0) {
			/* Removed while we listed: not an error. */
		} else if (S_ISDIR(st.st_mode)) {
			/* Descend only where the prefix can still match. */
			size_t n = key.len < plen ? key.len : plen;

			if (!strncmp(key.ptr, prefix, n))
				err = walk(f, child.ptr, key.ptr, prefix, cb, payload);
		} else if (S_ISREG(st.st_mode) && !strncmp(key.ptr, prefix, plen)) {
			err = cb(key.ptr, (uint64_t)st.st_size, payload);
		}
		rs_buf_release(&child);
		rs_buf_release(&key);
	}
	closedir(d);
	return err;
}

static int folder_list(struct rs_remote *r, const char *prefix,
		       rs_remote_list_cb cb, void *payload)
{
	struct folder_remote *f = (struct folder_remote *)r;

	return walk(f, f->root, "", prefix, cb, payload);
}

static int folder_del(struct rs_remote *r, const char *key)
{
	struct folder_remote *f = (struct folder_remote *)r;
	struct rs_buf path = RS_BUF_INIT;
	int err = key_path(f, key, &path);

	if (!err && unlink(path.ptr) != 0) {
		if (errno == ENOENT)
			err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'", key, f->root);
		else
			err = rs_error_errno(RS_EGENERIC, "cannot remove '%s'", path.ptr);
	}
	if (!err)
		err = rs_fs_fsync_parent(path.ptr);
	rs_buf_release(&path);
	return err;
}

static void folder_free(struct rs_remote *r)
{
	struct folder_remote *f = (struct folder_remote *)r;

	free(f->root);
	free(f->parent.display_url);
	free(f);
}

int rs_remote_folder_open(struct rs_remote **out, const char *path)
{
	struct folder_remote *f;
	struct stat st;
	char *root;

	if (!path || !*path)
		return rs_error_set(RS_EUSAGE, "empty folder path for the remote");
	root = realpath(path, NULL);
	if (!root && errno == ENOENT) {
		/*
		 * A new store: create its folder, as git init --bare would, but
		 * only one level deep, so that a mistyped path is an error
		 * rather than a new tree of folders.
		 */
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			if (errno == ENOENT)
				return rs_error_set(RS_EUSAGE, "the remote folder '%s' does not exist, nor does its parent", path);
			return rs_error_errno(RS_EUSAGE, "cannot create the remote folder '%s'", path);
		}
		root = realpath(path, NULL);
	}
	if (!root)
		return rs_error_errno(RS_EUSAGE, "the remote folder '%s' cannot be used", path);
	if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(root);
		return rs_error_set(RS_EUSAGE, "the remote '%s' is not a folder", path);
	}
	if (access(root, R_OK | X_OK) != 0) {
		int err = rs_error_errno(RS_EUSAGE, "the remote folder '%s' cannot be read", root);

		free(root);
		return err;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		free(root);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	f->root = root;
	f->parent.version = RS_REMOTE_VERSION;
	f->parent.get = folder_get;
	f->parent.put_file = folder_put_file;
	f->parent.put_buf = folder_put_buf;
	f->parent.stat = folder_stat;
	f->parent.list = folder_list;
	f->parent.del = folder_del;
	f->parent.free = folder_free;
	f->parent.display_url = malloc(strlen(root) + 8);
	if (!f->parent.display_url) {
		folder_free(&f->parent);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	strcpy(f->parent.display_url, "file://");
	strcat(f->parent.display_url, root);
	*out = &f->parent;
	return 0;
}
