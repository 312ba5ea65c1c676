#include "util/fs.h"
#include "results/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rs_fs_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);
	size_t i;

	if (len == 0 || len >= sizeof(tmp))
		return rs_error_set(RS_EUSAGE, "bad directory name '%s'", path);
	memcpy(tmp, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return rs_error_errno(RS_EGENERIC, "cannot create directory '%s'", tmp);
		tmp[i] = path[i];
	}
	return 0;
}

int rs_fs_mkdir_parent(const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (n == 0)
		return 0;
	if (n >= sizeof(dir))
		return rs_error_set(RS_EUSAGE, "bad directory name '%s'", path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	return rs_fs_mkdir_p(dir, mode);
}

int rs_fs_fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;
	int fd, rc = 0;

	if (!slash) {
		strcpy(dir, ".");
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(dir))
			return rs_error_set(RS_EUSAGE, "path too long '%s'", path);
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot open directory '%s'", dir);
	/* Some filesystems (network mounts) refuse fsync on directories. */
	if (fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP)
		rc = rs_error_errno(RS_EGENERIC, "cannot fsync directory '%s'", dir);
	close(fd);
	return rc;
}

/* Six [A-Za-z0-9] for a temporary name: unpredictable, not secret. */
static void tmp_suffix(char *out)
{
	static const char alnum[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	static _Atomic uint64_t counter;
	unsigned char r[6];
	size_t i;

	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
		     ((uint64_t)getpid() << 16)) + counter++ * 0x9E3779B97F4A7C15ull;
		for (i = 0; i < sizeof(r); i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	for (i = 0; i < sizeof(r); i++)
		out[i] = alnum[r[i] % (sizeof(alnum) - 1)];
}

/*
 * Not mkstemp: it makes files 0600, and a store in a shared folder must be
 * readable by the team, a fetched session by its user's tools. open(2)
 * with 0666 gives the mode any new file gets (0666 less the umask) without
 * reading the umask, which only umask(2) can do by changing it: process
 * state a library must leave alone (another thread may be creating files).
 */
int rs_fs_tmpfile_near(struct rs_buf *tmp_out, const char *final_path, int *fd_out)
{
	int err, fd = -1, tries;

	rs_buf_clear(tmp_out);
	err = rs_buf_printf(tmp_out, "%s.tmp-XXXXXX", final_path);
	if (err)
		return err;
	for (tries = 0; tries < 100; tries++) {
		tmp_suffix(tmp_out->ptr + tmp_out->len - 6);
		fd = open(tmp_out->ptr, O_RDWR | O_CREAT | O_EXCL, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot create a file next to '%s'", final_path);
	rs_fs_mark_live(fd);
	*fd_out = fd;
	return 0;
}

void rs_fs_mark_live(int fd)
{
	/* A shared lock: held until the descriptor closes; an error changes nothing. */
	(void)flock(fd, LOCK_SH | LOCK_NB);
}

int rs_fs_is_tmp_name(const char *name)
{
	const char *t = strstr(name, ".tmp-");
	size_t i;

	if (!t)
		return 0;
	for (t += 5, i = 0; t[i]; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
		      (t[i] >= '0' && t[i] <= '9')))
			return 0;
	return i == 6;
}

int rs_fs_parse_grace(const char *value, long *out)
{
	char *end;
	long v;

	*out = RS_TMP_GRACE_DEFAULT;
	if (!value)
		return 0;
	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || *end || end == value || v < RS_TMP_GRACE_MIN)
		return rs_error_set(RS_EUSAGE, "git config %s = '%s' is not a number of seconds (%d or more); "
				    "fix it with 'git config %s %d'", RS_TMP_GRACE_KEY, value, RS_TMP_GRACE_MIN,
				    RS_TMP_GRACE_KEY, RS_TMP_GRACE_DEFAULT);
	*out = v;
	return 0;
}

unsigned rs_fs_remove_stale_with(const char *dir, int (*match)(const char *name, const void *arg),
				const void *arg, long grace)
{
	DIR *d = opendir(dir);
	unsigned removed = 0;
	time_t now = time(NULL);
	uid_t me = geteuid();

	if (!d)
		return 0;
	for (;;) {
		struct dirent *e = readdir(d);
		struct stat st;
		int fd;

		if (!e)
			break;
		if (e->d_name[0] == '.' || !match(e->d_name, arg))
			continue;
		/*
		 * Opened, not merely stat'ed, to take the lock: O_NONBLOCK
		 * so that a FIFO under a matching name cannot block us,
		 * O_NOFOLLOW so that no symlink is followed.
		 */
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me &&
		    st.st_mtime < now - grace && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    unlinkat(dirfd(d), e->d_name, 0) == 0)
			removed++;
		close(fd);
	}
	closedir(d);
	return removed;
}

static int match_plain(const char *name, const void *arg)
{
	int (*const *match)(const char *) = arg;

	return (*match)(name);
}

unsigned rs_fs_remove_stale(const char *dir, int (*match)(const char *name), long grace)
{
	return rs_fs_remove_stale_with(dir, match_plain, &match, grace);
}

int rs_fs_commit_tmp(int fd, const char *tmp, const char *final_path)
{
	int err;

	if (fsync(fd) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot fsync '%s'", tmp);

		rs_fs_drop_tmp(fd, tmp);
		return err;
	}
	err = rs_fs_publish_tmp(fd, tmp, final_path);
	if (err)
		return err;
	return rs_fs_fsync_parent(final_path);
}

int rs_fs_publish_tmp(int fd, const char *tmp, const char *final_path)
{
	if (close(fd) != 0) {
		unlink(tmp);
		return rs_error_errno(RS_EGENERIC, "cannot close '%s'", tmp);
	}
	if (rename(tmp, final_path) != 0) {
		int err = rs_error_errno(RS_EGENERIC, "cannot rename '%s' to '%s'", tmp, final_path);

		unlink(tmp);
		return err;
	}
	return 0;
}

int rs_fs_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			/* Callers name the file: "cannot write '<path>': write failed: ..." */
			return rs_error_errno(RS_EGENERIC, "write failed");
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int rs_fs_pread_all(int fd, void *p, size_t n, uint64_t off)
{
	char *c = p;

	while (n > 0) {
		ssize_t r = pread(fd, c, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return rs_error_errno(RS_EGENERIC, "read failed");
		}
		if (r == 0)
			return rs_error_set(RS_ECORRUPT, "file ends %zu bytes early", n);
		c += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int write_file_replace(const char *path, const void *p, size_t n, int durable)
{
	struct rs_buf tmp = RS_BUF_INIT;
	int fd = -1, err;

	err = rs_fs_tmpfile_near(&tmp, path, &fd);
	if (err)
		goto out;
	err = rs_fs_write_all(fd, p, n);
	if (err) {
		close(fd);
		unlink(tmp.ptr);
		err = rs_error_wrap(err, "cannot write '%s'", path);
		goto out;
	}
	err = durable ? rs_fs_commit_tmp(fd, tmp.ptr, path) : rs_fs_publish_tmp(fd, tmp.ptr, path);
out:
	rs_buf_release(&tmp);
	return err;
}

int rs_fs_write_file_atomic(const char *path, const void *p, size_t n)
{
	return write_file_replace(path, p, n, 1);
}

int rs_fs_write_file_cache(const char *path, const void *p, size_t n)
{
	return write_file_replace(path, p, n, 0);
}

int rs_fs_read_file(struct rs_buf *out, const char *path, size_t max)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return rs_error_set(RS_ENOTFOUND, "'%s' does not exist", path);
		return rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);
	}
	err = rs_fs_read_fd(out, fd, path, max);
	close(fd);
	return err;
}

int rs_fs_read_fd(struct rs_buf *out, int fd, const char *path, size_t max)
{
	struct stat st;
	int err;

	if (fstat(fd, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	if ((uint64_t)st.st_size > max)
		return rs_error_set(RS_ETOOBIG, "'%s' is %lld bytes, more than the %zu allowed",
				    path, (long long)st.st_size, max);
	rs_buf_clear(out);
	err = rs_buf_grow(out, (size_t)st.st_size);
	if (err)
		return err;
	err = rs_fs_pread_all(fd, out->ptr, (size_t)st.st_size, 0);
	if (err)
		return err;
	out->len = (size_t)st.st_size;
	out->ptr[out->len] = '\0';
	return 0;
}

/*
 * Why O_NONBLOCK: open(2) of a FIFO without a writer waits forever; with
 * it the open returns at once, fstat says it is not a regular file, and
 * for a regular file the flag is cleared again (it means nothing there).
 */
int rs_fs_open_regular(const char *path, int nofollow, int *fd_out)
{
	struct stat st;
	int fd, flags;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0 && errno == ENOENT)
		return rs_error_set(RS_ENOTFOUND, "'%s' does not exist", path);
	if (fd < 0 && errno == ELOOP)
		return rs_error_set(RS_EUSAGE, nofollow ? "'%s' is a symbolic link; it is not "
				    "followed (copy the file itself, or remove the link)"
				    : "'%s' is a symbolic link loop", path);
	if (fd < 0)
		return rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);
	if (fstat(fd, &st) != 0) {
		int err = rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return rs_error_set(RS_EUSAGE, "'%s' is not a regular file", path);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int err = rs_error_errno(RS_EGENERIC, "cannot open '%s'", path);

		close(fd);
		return err;
	}
	*fd_out = fd;
	return 0;
}

int rs_fs_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int rs_fs_join(struct rs_buf *out, const char *a, const char *b)
{
	size_t la = strlen(a);
	int err;

	rs_buf_clear(out);
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	err = rs_buf_put(out, a, la);
	if (err)
		return err;
	err = rs_buf_putc(out, '/');
	if (err)
		return err;
	return rs_buf_puts(out, b);
}

void rs_fs_drop_tmp(int fd, const char *tmp)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(tmp);
}
