/*
 * Held copies of recorded LFS objects (results/unpushed.h, why they
 * exist). A held copy is a second directory entry for the object's inode
 * wherever link(2) can make one, so holding costs no space; across file
 * systems (lfs.storage elsewhere) it is a copy, hashed on the way.
 */
#include "git/unpushed.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/repo.h"
#include "results/buf.h"
#include "results/checkout.h"
#include "results/error.h"
#include "util/fs.h"

#define HOLD_DIR "results/unpushed"

/* The folder (created when `create`), appended to `out`. */
static int hold_dir(struct rs_buf *out, const struct rs_repo *r, int create)
{
	size_t start = out->len;
	int err = rs_buf_printf(out, "%s" HOLD_DIR, r->gitdir);

	if (err == 0 && create)
		err = rs_fs_mkdir_p(out->ptr + start, 0755);
	return err;
}

int rs_unpushed_path(struct rs_buf *out, const struct rs_repo *r, const struct rs_id *oid)
{
	char hex[RS_ID_HEXSZ + 1];
	int err;

	rs_id_to_hex(hex, oid);
	err = hold_dir(out, r, 0);
	if (err == 0)
		err = rs_buf_printf(out, "/%s", hex);
	return err;
}

/* One of our names: 64 lower-case hex digits. */
static int oid_name(const char *name, struct rs_id *oid)
{
	return strlen(name) == RS_ID_HEXSZ && strspn(name, "0123456789abcdef") == RS_ID_HEXSZ &&
	       rs_id_from_hex(oid, name, RS_ID_HEXSZ) == 0;
}

/* The held copy of `oid` when it is a regular file of `size` bytes (UINT64_MAX: any). */
static int held(struct rs_buf *path, const struct rs_repo *r, const struct rs_id *oid,
		uint64_t size)
{
	struct stat st;
	int err = rs_unpushed_path(path, r, oid);

	if (err)
		return err;
	if (lstat(path->ptr, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (size != UINT64_MAX && (uint64_t)st.st_size != size))
		return rs_error_set(RS_ENOTFOUND, "this clone holds no copy of the object");
	return 0;
}

/* link(2), then EEXIST taken as done; 1 in `*linked` when a name exists at `to`. */
static int link_or_exists(const char *from, const char *to, int *linked)
{
	*linked = 0;
	if (link(from, to) == 0 || errno == EEXIST) {
		*linked = 1;
		return rs_fs_fsync_parent(to);
	}
	if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP)
		return 0; /* the caller copies */
	return rs_error_errno(RS_EGENERIC, "cannot link '%s' to '%s'", to, from);
}

int rs_unpushed_hold(struct rs_repo *r, const struct rs_id *oid)
{
	struct rs_buf dir = RS_BUF_INIT, obj = RS_BUF_INIT, path = RS_BUF_INIT;
	long grace;
	int err, linked;

	err = hold_dir(&dir, r, 1);
	if (err == 0)
		err = rs_repo_tmp_grace(r, &grace);
	if (err)
		goto out;
	/* What a killed copy (across file systems) left: "<oid>.tmp-XXXXXX". */
	rs_fs_remove_stale(dir.ptr, rs_fs_is_tmp_name, grace);
	err = rs_repo_lfs_object_path(&obj, r, oid);
	if (err == 0)
		err = rs_unpushed_path(&path, r, oid);
	if (err)
		goto out;
	err = link_or_exists(obj.ptr, path.ptr, &linked);
	if (err == 0 && !linked)
		err = rs_repo_copy_object(NULL, obj.ptr, path.ptr, oid);
	if (err)
		err = rs_error_wrap(err, "cannot keep a copy of a recorded session until it is pushed");
out:
	rs_buf_release(&dir);
	rs_buf_release(&obj);
	rs_buf_release(&path);
	return err;
}

int rs_unpushed_restore(struct rs_repo *r, const struct rs_id *oid, uint64_t size)
{
	struct rs_buf path = RS_BUF_INIT, obj = RS_BUF_INIT;
	int err, linked;

	if (rs_repo_lfs_has(r, oid, size) == 0)
		return 0;
	err = held(&path, r, oid, size);
	if (err)
		goto out;
	err = rs_repo_lfs_object_path(&obj, r, oid);
	if (err == 0)
		err = rs_fs_mkdir_parent(obj.ptr, 0755);
	if (err == 0)
		err = link_or_exists(path.ptr, obj.ptr, &linked);
	/* Across file systems: a copy, hashed against the oid on the way in. */
	if (err == 0 && !linked)
		err = rs_repo_lfs_store_file(r, path.ptr, oid, NULL, NULL);
out:
	rs_buf_release(&path);
	rs_buf_release(&obj);
	return err;
}

int rs_unpushed_release(struct rs_repo *r, const char *oid_hex)
{
	struct rs_buf path = RS_BUF_INIT;
	struct rs_id oid;
	int err;

	if (!r)
		return 0;
	if (!oid_name(oid_hex, &oid))
		return rs_error_set(RS_EUSAGE, "bad oid '%.70s'", oid_hex);
	err = rs_unpushed_path(&path, r, &oid);
	if (err == 0 && unlink(path.ptr) != 0 && errno != ENOENT)
		err = rs_error_errno(RS_EGENERIC, "cannot remove '%s'", path.ptr);
	rs_buf_release(&path);
	return err;
}

int rs_unpushed_copy(struct rs_repo *r, const char *oid_hex, uint64_t size, const char *dest)
{
	struct rs_buf path = RS_BUF_INIT;
	struct rs_id oid;
	int err;

	if (!r)
		return rs_error_set(RS_ENOTFOUND, "no repository: no held copies");
	if (!oid_name(oid_hex, &oid))
		return rs_error_set(RS_EUSAGE, "bad oid '%.70s'", oid_hex);
	err = held(&path, r, &oid, size);
	if (err)
		goto out;
	/* Always through a hashing copy: the held file is outside git-lfs's
	   checks, so it is trusted no more than a download. */
	err = rs_repo_copy_object(NULL, path.ptr, dest, &oid);
out:
	rs_buf_release(&path);
	return err;
}

int rs_oid_dir_each(const char *dir, const char *prefix,
		    int (*fn)(const struct rs_id *oid, uint64_t size, void *payload), void *payload)
{
	struct rs_buf path = RS_BUF_INIT;
	struct dirent *de;
	struct stat st;
	struct rs_id oid;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0
			: rs_error_errno(RS_EGENERIC, "cannot read '%s'", dir);
	while (err == 0) {
		de = readdir(d);
		if (!de)
			break;
		if (!oid_name(de->d_name, &oid) || (prefix && strncmp(de->d_name, prefix, strlen(prefix))))
			continue;
		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s/%s", dir, de->d_name);
		if (err)
			break;
		if (lstat(path.ptr, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		err = fn(&oid, (uint64_t)st.st_size, payload);
	}
	closedir(d);
	rs_buf_release(&path);
	return err;
}

int rs_unpushed_each(struct rs_repo *r,
		     int (*fn)(const struct rs_id *oid, uint64_t size, void *payload), void *payload)
{
	struct rs_buf dir = RS_BUF_INIT;
	int err;

	err = hold_dir(&dir, r, 0);
	if (err == 0)
		err = rs_oid_dir_each(dir.ptr, NULL, fn, payload);
	rs_buf_release(&dir);
	return err;
}

static int stop_at_first(const struct rs_id *oid, uint64_t size, void *payload)
{
	(void)oid;
	(void)size;
	(void)payload;
	return 1;
}

int rs_unpushed_any(struct rs_repo *r)
{
	int found = r && rs_unpushed_each(r, stop_at_first, NULL) == 1;

	rs_error_clear();
	return found;
}
