/*
 * Output files by temporary file and rename (see results/output.h).
 * rename(2) replaces a symbolic link itself; RENAME_NOREPLACE refuses any
 * existing name atomically, which an lstat before the rename could not
 * (a link could appear in between). File systems without it (EINVAL) get
 * link(2) + unlink(2), which refuses an existing name just as atomically.
 */
#define _GNU_SOURCE /* renameat2 */
#include "results/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fs.h"

int rs_output_open(struct rs_output *o, const char *path)
{
	int fd = -1, err;

	o->path = strdup(path);
	if (!o->path)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_fs_tmpfile_near(&o->tmp, path, &fd);
	if (err)
		return rs_error_wrap(err, "cannot write '%s'", path);
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", path);
		close(fd);
		unlink(o->tmp.ptr);
		rs_buf_clear(&o->tmp);
		return err;
	}
	return 0;
}

/* Rename without replacing: RS_EEXISTS when `path` is there, even as a link. */
static int rename_new(const char *tmp, const char *path)
{
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == EINVAL || errno == ENOSYS) {
		if (link(tmp, path) == 0) {
			unlink(tmp);
			return 0;
		}
	}
	if (errno == EEXIST)
		return rs_error_set(RS_EEXISTS, "'%s' exists", path);
	return rs_error_errno(RS_EGENERIC, "cannot write '%s'", path);
}

int rs_output_commit(struct rs_output *o, unsigned flags)
{
	int err = 0, failed;

	failed = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
	if (failed)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", o->path);
	if (fclose(o->f) != 0 && !err)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", o->path);
	o->f = NULL;
	if (!err && (flags & RS_OUTPUT_REPLACE) && rename(o->tmp.ptr, o->path) != 0)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", o->path);
	else if (!err && !(flags & RS_OUTPUT_REPLACE))
		err = rename_new(o->tmp.ptr, o->path);
	if (err) {
		unlink(o->tmp.ptr);
		return err;
	}
	rs_buf_clear(&o->tmp);
	/* the new name's directory entry on disk, as the store does */
	return rs_fs_fsync_parent(o->path);
}

void rs_output_release(struct rs_output *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
	}
	if (o->tmp.len)
		unlink(o->tmp.ptr);
	rs_buf_release(&o->tmp);
	free(o->path);
	o->path = NULL;
}

int rs_output_write_file(const char *path, const void *p, size_t n, unsigned flags)
{
	struct rs_output o = RS_OUTPUT_INIT;
	int err;

	err = rs_output_open(&o, path);
	if (err)
		goto out;
	if (n && fwrite(p, 1, n, o.f) != n) {
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", path);
		goto out;
	}
	err = rs_output_commit(&o, flags);
out:
	rs_output_release(&o);
	return err;
}
