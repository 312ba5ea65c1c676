/*
 * The folder backend: the store's files under a local or shared directory.
 *
 * Atomicity comes from POSIX rename: a put writes `<key>.tmp-XXXXXX` in
 * the key's own directory, fsyncs it, renames it over the final name and
 * fsyncs the directory, so a reader sees the old state or the whole new
 * file, and a crash leaves at worst a temporary file (ignored by list).
 * Reads use pread on a descriptor opened per call, so any number of
 * threads may read at once. A key is read only when it is a regular file:
 * it is opened with O_NONBLOCK (a FIFO would block open() until a writer
 * comes) and O_NOFOLLOW, and refused unless fstat says S_IFREG.
 *
 * Opening never creates the folder: a read from a mistyped path must not
 * leave a folder behind. The first put creates it (one level: its parent
 * must exist).
 */
#include "remote/remote.h"
#include "results/error.h"
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
	long grace;  /* results.tmpGracePeriod */
	int cleaned; /* stale temporary files removed (first put) */
};

/*
 * The leftovers of killed writers: `<key>.tmp-XXXXXX` files in the
 * store's folders (list ignores them, nothing else removes them). Once
 * per remote, at the first put, only stale ones (rs_fs_remove_stale: our
 * uid, older than the grace period, not locked by a live writer).
 */
static void remove_stale_tmp(struct folder_remote *f)
{
	/* Every folder a put writes into (docs/store-format.md, "Layout on the remote"). */
	static const char *const dirs[] = { "", "packs", "objects", "trash", "removed", "gc/seen",
					    "gc/marked", "gc/touched", "gc/sweeping" };
	struct rs_buf dir = RS_BUF_INIT;
	size_t i;

	if (__atomic_exchange_n(&f->cleaned, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		if (!rs_fs_join(&dir, f->root, dirs[i]))
			rs_fs_remove_stale(dir.ptr, rs_fs_is_tmp_name, f->grace);
	rs_buf_release(&dir);
	rs_error_clear();
}

static void folder_tidy(struct rs_remote *r)
{
	remove_stale_tmp((struct folder_remote *)r);
}

/* Keys are relative and made of a safe alphabet: no "..", no leading '/'. */
static int key_path(struct folder_remote *f, const char *key, struct rs_buf *out)
{
	int err = rs_remote_check_key(key);

	return err ? err : rs_fs_join(out, f->root, key);
}

/* A key that is no file the store wrote (a FIFO would block a read). */
static int not_regular(const struct folder_remote *f, const char *key, mode_t mode)
{
	return rs_error_set(RS_ECORRUPT, "'%s' in the store at '%s' is not a regular file (%s), "
			    "not a file the store wrote: remove it", key, f->root,
			    S_ISFIFO(mode) ? "a FIFO" : S_ISDIR(mode) ? "a folder" :
			    S_ISLNK(mode) ? "a symbolic link" : S_ISSOCK(mode) ? "a socket" : "a device");
}

/* Open the file of `key` for reading, refusing what the store did not write. */
static int open_object(const struct folder_remote *f, const char *key, const char *path,
		       int *fd, struct stat *st)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (*fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'", key,
					    f->root);
		if (errno == ELOOP)
			return rs_error_set(RS_ECORRUPT, "'%s' in the store at '%s' is a symbolic "
					    "link, not a file the store wrote: remove it", key, f->root);
		return rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);
	}
	if (fstat(*fd, st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	if (!S_ISREG(st->st_mode))
		return not_regular(f, key, st->st_mode);
	return 0;
}

/*
 * Check [off, off + *len) against the file's size (*len UINT64_MAX: to
 * its end, set here) and against what `out` takes.
 */
static int check_range(const struct folder_remote *f, const char *key, const struct stat *st,
		       uint64_t off, uint64_t *len, const struct rs_buf *out)
{
	uint64_t size = (uint64_t)st->st_size;

	if (*len == UINT64_MAX) {
		if (off > size)
			return rs_error_set(RS_ECORRUPT, "'%s' is shorter than offset %llu", key,
					    (unsigned long long)off);
		*len = size - off;
	}
	if (off > size || *len > size - off)
		return rs_error_set(RS_ECORRUPT, "'%s' is %lld bytes, shorter than the %llu asked "
				    "at %llu", key, (long long)st->st_size,
				    (unsigned long long)*len, (unsigned long long)off);
	if (*len > SIZE_MAX / 2)
		return rs_error_set(RS_EUSAGE, "read of %llu bytes is too large",
				    (unsigned long long)*len);
	/* Never more than the caller's buffer takes: its cap says what it expects. */
	if (out->max && (out->len > out->max || *len > out->max - out->len))
		return rs_error_set(RS_ETOOBIG, "'%s' in the store at '%s' is %llu bytes from offset "
				    "%llu, more than the %zu expected", key, f->root,
				    (unsigned long long)*len, (unsigned long long)off,
				    out->max - (out->len < out->max ? out->len : out->max));
	return 0;
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
	err = open_object(f, key, path.ptr, &fd, &st);
	if (err)
		goto out;
	err = check_range(f, key, &st, off, &len, out);
	if (err)
		goto out;
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

static int ensure_parent(struct folder_remote *f, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	/* The store's own folder first, one level only: its parent exists. */
	if (mkdir(f->root, 0777) != 0 && errno != EEXIST)
		return rs_error_errno(RS_EGENERIC, "cannot create the remote folder '%s'", f->root);
	if (!slash || n == 0 || n >= sizeof(dir))
		return 0;
	memcpy(dir, path, n);
	dir[n] = '\0';
	return rs_fs_mkdir_p(dir, 0777);
}

/* Copy the rest of src_fd into fd. */
static int copy_fd(int fd, int src_fd, const char *key)
{
	enum { COPY = 1 << 20 };
	char *copy = malloc(COPY);
	int err = 0;

	if (!copy)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (;;) {
		ssize_t r = read(src_fd, copy, COPY);

		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = rs_error_errno(RS_EGENERIC, "cannot read the file for '%s'", key);
			break;
		}
		err = rs_fs_write_all(fd, copy, (size_t)r);
		if (err)
			break;
	}
	free(copy);
	return err;
}

static int put_from_fd(struct folder_remote *f, const char *key, int src_fd,
		       const void *p, size_t n)
{
	struct rs_buf path = RS_BUF_INIT, tmp = RS_BUF_INIT;
	int fd = -1, err;

	err = key_path(f, key, &path);
	if (err)
		goto out;
	remove_stale_tmp(f);
	err = ensure_parent(f, path.ptr);
	if (err)
		goto out;
	err = rs_fs_tmpfile_near(&tmp, path.ptr, &fd);
	if (err)
		goto out;
	if (src_fd >= 0)
		err = copy_fd(fd, src_fd, key);
	else
		err = rs_fs_write_all(fd, p, n);
	if (err)
		goto fail;
	err = rs_fs_commit_tmp(fd, tmp.ptr, path.ptr);
	fd = -1;
	goto out;
fail:
	close(fd);
	unlink(tmp.ptr);
	err = rs_error_wrap(err, "cannot write '%s'", tmp.ptr);
out:
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

	if (!err && lstat(path.ptr, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at '%s'", key, f->root);
		else
			err = rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path.ptr);
	}
	if (!err && !S_ISREG(st.st_mode))
		err = not_regular(f, key, st.st_mode);
	if (!err && size_out)
		*size_out = (uint64_t)st.st_size;
	rs_buf_release(&path);
	return err;
}

static int walk(struct folder_remote *f, const char *dir, const char *rel,
		const char *prefix, rs_remote_list_cb cb, void *payload);

/* One entry `name` of `dir`: a file to report, a folder to descend into, or neither. */
static int visit(struct folder_remote *f, const char *dir, const char *rel, const char *name,
		 const char *prefix, rs_remote_list_cb cb, void *payload)
{
	struct rs_buf child = RS_BUF_INIT, key = RS_BUF_INIT;
	struct stat st;
	size_t plen = strlen(prefix);
	int err;

	err = rs_fs_join(&child, dir, name);
	if (err)
		goto out;
	err = *rel ? rs_fs_join(&key, rel, name) : rs_buf_puts(&key, name);
	if (err)
		goto out;
	if (stat(child.ptr, &st) != 0)
		goto out; /* removed while we listed: not an error */
	if (S_ISDIR(st.st_mode)) {
		/* Descend only where the prefix can still match. */
		size_t n = key.len < plen ? key.len : plen;

		if (!strncmp(key.ptr, prefix, n))
			err = walk(f, child.ptr, key.ptr, prefix, cb, payload);
	} else if (S_ISREG(st.st_mode) && !strncmp(key.ptr, prefix, plen)) {
		err = cb(key.ptr, (uint64_t)st.st_size, payload);
	}
out:
	rs_buf_release(&child);
	rs_buf_release(&key);
	return err;
}

/* Walk `dir` (whose key prefix is `rel`) calling cb for files matching prefix. */
static int walk(struct folder_remote *f, const char *dir, const char *rel,
		const char *prefix, rs_remote_list_cb cb, void *payload)
{
	DIR *d = opendir(dir);
	int err = 0;

	if (!d) {
		if (errno == ENOENT)
			return 0;
		return rs_error_errno(RS_EGENERIC, "cannot list '%s'", dir);
	}
	while (!err) {
		struct dirent *e = readdir(d);

		if (!e)
			break;
		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp-"))
			continue;
		err = visit(f, dir, rel, e->d_name, prefix, cb, payload);
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

/*
 * The absolute name `path` will have once created: its parent must exist
 * (RS_EUSAGE otherwise). NULL with the error set; else the caller's.
 */
static char *missing_root(const char *path)
{
	struct rs_buf parent = RS_BUF_INIT, abs = RS_BUF_INIT;
	const char *slash, *base;
	char *real = NULL, *out = NULL;
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (rs_buf_put(&abs, path, n))
		goto out; /* NULL with rs_buf_put's error */
	slash = strrchr(abs.ptr, '/');
	base = slash ? slash + 1 : abs.ptr;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		rs_error_set(RS_EUSAGE, "the remote folder '%s' cannot be used", path);
		goto out;
	}
	if (rs_buf_put(&parent, abs.ptr, slash ? (size_t)(slash - abs.ptr) : 0))
		goto out;
	if (!parent.len && rs_buf_puts(&parent, slash ? "/" : "."))
		goto out;
	real = realpath(parent.ptr, NULL);
	if (!real) {
		if (errno == ENOENT || errno == ENOTDIR)
			rs_error_set(RS_EUSAGE, "the remote folder '%s' does not exist, nor does its parent", path);
		else
			rs_error_errno(RS_EUSAGE, "the remote folder '%s' cannot be used", path);
		goto out;
	}
	if (!rs_fs_join(&parent, real, base))
		out = rs_buf_detach(&parent, NULL);
out:
	free(real);
	rs_buf_release(&parent);
	rs_buf_release(&abs);
	return out;
}

/*
 * The remote's folder, `path` made absolute (the caller's to free): an
 * existing folder it may read, or one that does not exist yet under an
 * existing parent.
 */
static int folder_root(char **root_out, const char *path)
{
	struct stat st;
	char *root;
	int err;

	root = realpath(path, NULL);
	if (!root && errno == ENOENT) {
		/*
		 * A new store, or a mistyped path: nothing is created here
		 * (reads then find no FORMAT and say so); the first put
		 * creates the folder, one level deep, so a mistyped parent
		 * is an error rather than a new tree of folders.
		 */
		root = missing_root(path);
		if (!root)
			return rs_error_last();
		*root_out = root;
		return 0;
	}
	if (!root)
		return rs_error_errno(RS_EUSAGE, "the remote folder '%s' cannot be used", path);
	if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(root);
		return rs_error_set(RS_EUSAGE, "the remote '%s' is not a folder", path);
	}
	if (access(root, R_OK | X_OK) != 0) {
		err = rs_error_errno(RS_EUSAGE, "the remote folder '%s' cannot be read", root);

		free(root);
		return err;
	}
	*root_out = root;
	return 0;
}

int rs_remote_folder_open(struct rs_remote **out, const char *path,
			  const struct rs_remote_options *opts)
{
	struct folder_remote *f;
	char *root = NULL;
	long grace;
	int err;

	if (!path || !*path)
		return rs_error_set(RS_EUSAGE, "empty folder path for the remote");
	err = rs_fs_parse_grace(opts && opts->config_get ?
				opts->config_get(RS_TMP_GRACE_KEY, opts->config_payload) : NULL, &grace);
	if (err)
		return err;
	err = folder_root(&root, path);
	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f) {
		free(root);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	f->root = root;
	f->grace = grace;
	f->parent.version = RS_REMOTE_VERSION;
	f->parent.get = folder_get;
	f->parent.put_file = folder_put_file;
	f->parent.put_buf = folder_put_buf;
	f->parent.stat = folder_stat;
	f->parent.list = folder_list;
	f->parent.del = folder_del;
	f->parent.tidy = folder_tidy;
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
