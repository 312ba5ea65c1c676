/*
 * results prune (results/unpushed.h, rs_prune_local): free the local
 * copies of LFS objects that the store is proven to hold.
 *
 * The proof is a full rebuild from the store (rs_store_get_file: every
 * chunk against its id, the object against its oid, whatever the
 * transform), not the presence of a manifest: a manifest whose packs are
 * gone or damaged is exactly the case where the local copy is the last
 * one. The rebuilt bytes go to a temporary file that is removed at once.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/note.h"
#include "git/repo.h"
#include "git/unpushed.h"
#include "results/buf.h"
#include "results/error.h"
#include "store/store.h"
#include "util/array.h"

/* One local object: where its copies are and what they take on disk. */
struct copy {
	struct rs_id oid;
	uint64_t size;
	int in_lfs, held;
	uint64_t disk; /* bytes of the distinct inodes */
};

struct prune {
	struct rs_repo *repo;
	struct copy *c;
	size_t n, alloc;
	struct rs_notes notes;
};

static struct copy *find(struct prune *p, const struct rs_id *oid)
{
	for (size_t i = 0; i < p->n; i++)
		if (rs_id_cmp(&p->c[i].oid, oid) == 0)
			return &p->c[i];
	return NULL;
}

static int add(struct prune *p, const struct rs_id *oid, uint64_t size, struct copy **out)
{
	struct copy *c = find(p, oid);

	if (!c) {
		if (rs_array_grow((void **)&p->c, &p->alloc, p->n + 1, sizeof(*p->c), 64))
			return rs_error_set(RS_EGENERIC, "out of memory");
		c = &p->c[p->n++];
		c->oid = *oid;
		c->size = size;
	}
	*out = c;
	return 0;
}

static int add_held(const struct rs_id *oid, uint64_t size, void *payload)
{
	struct copy *c;
	int err = add(payload, oid, size, &c);

	if (err == 0)
		c->held = 1;
	return err;
}

/* `name` is `len` lower-case hex digits. */
static int hex_name(const char *name, size_t len)
{
	return strlen(name) == len && strspn(name, "0123456789abcdef") == len;
}

static int add_lfs(const struct rs_id *oid, uint64_t size, void *payload)
{
	struct copy *c;
	int err = add(payload, oid, size, &c);

	if (err == 0)
		c->in_lfs = 1;
	return err;
}

/* .git/lfs/objects/<xx>/<yy>/ for every <yy> of `mid` (.git/lfs/objects/<xx>). */
static int scan_mid(struct prune *p, const char *mid, const char *xx)
{
	struct rs_buf leaf = RS_BUF_INIT;
	struct dirent *de;
	char prefix[5];
	DIR *d = opendir(mid);
	int err = 0;

	if (!d)
		return 0;
	while (err == 0) {
		de = readdir(d);
		if (!de)
			break;
		if (!hex_name(de->d_name, 2))
			continue;
		memcpy(prefix, xx, 2);
		memcpy(prefix + 2, de->d_name, 2);
		prefix[4] = '\0';
		rs_buf_clear(&leaf);
		err = rs_buf_printf(&leaf, "%s/%s", mid, de->d_name);
		if (err == 0)
			err = rs_oid_dir_each(leaf.ptr, prefix, add_lfs, p);
	}
	closedir(d);
	rs_buf_release(&leaf);
	return err;
}

/* Every object of the local LFS store, as git-lfs lays them out. */
static int scan_lfs(struct prune *p)
{
	struct rs_buf top = RS_BUF_INIT, mid = RS_BUF_INIT;
	struct dirent *de;
	DIR *d = NULL;
	int err;

	err = rs_buf_printf(&top, "%s/objects", p->repo->lfs_dir);
	if (err)
		goto out;
	d = opendir(top.ptr);
	while (d && err == 0) { /* no folder: no objects yet */
		de = readdir(d);
		if (!de)
			break;
		if (!hex_name(de->d_name, 2))
			continue;
		rs_buf_clear(&mid);
		err = rs_buf_printf(&mid, "%s/%s", top.ptr, de->d_name);
		if (err == 0)
			err = scan_mid(p, mid.ptr, de->d_name);
	}
out:
	if (d)
		closedir(d);
	rs_buf_release(&top);
	rs_buf_release(&mid);
	return err;
}

/* What the copies of `c` take on disk: a hard-linked pair counts once. */
static int disk_use(struct prune *p, struct copy *c, struct rs_buf *obj, struct rs_buf *hold)
{
	struct stat a, b;
	int have_a, have_b, err;

	rs_buf_clear(obj);
	rs_buf_clear(hold);
	err = rs_repo_lfs_object_path(obj, p->repo, &c->oid);
	if (err == 0)
		err = rs_unpushed_path(hold, p->repo, &c->oid);
	if (err)
		return err;
	have_a = c->in_lfs && lstat(obj->ptr, &a) == 0;
	have_b = c->held && lstat(hold->ptr, &b) == 0;
	c->disk = 0;
	if (have_a)
		c->disk += (uint64_t)a.st_size;
	if (have_b && !(have_a && a.st_ino == b.st_ino && a.st_dev == b.st_dev))
		c->disk += (uint64_t)b.st_size;
	return 0;
}

/*
 * Rebuild `c` from the store into a temporary file, then remove it. No
 * store (NULL: the remote holds none yet) holds nothing.
 */
static int prove(struct prune *p, struct rs_store *store, const struct copy *c)
{
	struct rs_buf tmp = RS_BUF_INIT;
	int err;

	if (!store)
		return rs_error_set(RS_ENOTFOUND, "no store on the remote yet");
	err = rs_repo_lfs_tmp_path(&tmp, p->repo);
	if (err == 0)
		err = rs_store_get_file(store, &c->oid, c->size, tmp.ptr, NULL, NULL);
	if (tmp.len)
		unlink(tmp.ptr);
	rs_buf_release(&tmp);
	return err;
}

/* Delete the copies of `c` (the held one last: it is the one git-lfs cannot take). */
static int drop(const struct copy *c, const struct rs_buf *obj, const struct rs_buf *hold)
{
	if (c->in_lfs && unlink(obj->ptr) != 0 && errno != ENOENT)
		return rs_error_errno(RS_EGENERIC, "cannot remove '%s'", obj->ptr);
	if (c->held && unlink(hold->ptr) != 0 && errno != ENOENT)
		return rs_error_errno(RS_EGENERIC, "cannot remove '%s'", hold->ptr);
	return 0;
}

/*
 * The store on this clone's remote, its FORMAT read; `*store` NULL when
 * the remote holds no store yet (nothing was ever pushed there: it holds
 * nothing, said through `p`).
 */
static int open_store(struct prune *p, struct rs_remote **remote, struct rs_store **store)
{
	struct rs_store_options opts = { 0 };
	int err;

	err = rs_repo_tmp_grace(p->repo, &opts.tmp_grace);
	if (err == 0)
		err = rs_repo_open_remote(p->repo, remote, NULL);
	if (err == 0)
		err = rs_store_open(store, *remote, &opts);
	if (err)
		return err;
	err = rs_store_check_format(*store);
	if (err == RS_ENOTFOUND) {
		rs_note(&p->notes, "%s", rs_error_message());
		rs_error_clear();
		rs_store_free(*store);
		*store = NULL;
		err = 0;
	}
	return err;
}

/* Judge one object: freed (or would be), or kept with the reason said. */
static int judge(struct prune *p, struct rs_store *store, struct copy *c, int dry_run,
		 struct rs_prune_report *rep)
{
	struct rs_buf obj = RS_BUF_INIT, hold = RS_BUF_INIT;
	char hex[RS_ID_HEXSZ + 1];
	int err;

	rs_id_to_hex(hex, &c->oid);
	err = disk_use(p, c, &obj, &hold);
	if (err)
		goto out;
	err = prove(p, store, c);
	if (err) {
		rs_note(&p->notes, "kept %.12s (%llu bytes): %s", hex, (unsigned long long)c->disk,
		    err == RS_ENOTFOUND ? "not in the store (push it: git push, or 'results verify "
					  "--repair')" : rs_error_message());
		rs_error_clear();
		err = 0;
		rep->kept++;
		rep->bytes_kept += c->disk;
		goto out;
	}
	if (!dry_run)
		err = drop(c, &obj, &hold);
	if (err == 0) {
		rep->freed++;
		rep->bytes_freed += c->disk;
	}
out:
	rs_buf_release(&obj);
	rs_buf_release(&hold);
	return err;
}

int rs_prune_local(struct rs_repo *r, int dry_run, void (*fn)(const char *line, void *payload),
		   void *payload, struct rs_prune_report *report)
{
	struct prune p = { r, NULL, 0, 0, { fn, payload } };
	struct rs_remote *remote = NULL;
	struct rs_store *store = NULL;
	int err;

	memset(report, 0, sizeof(*report));
	err = scan_lfs(&p);
	if (err == 0)
		err = rs_unpushed_each(r, add_held, &p);
	if (err)
		goto out;
	report->objects = p.n;
	if (p.n == 0)
		goto out;
	err = open_store(&p, &remote, &store);
	for (size_t i = 0; err == 0 && i < p.n; i++)
		err = judge(&p, store, &p.c[i], dry_run, report);
out:
	rs_store_free(store);
	rs_remote_free(remote);
	free(p.c);
	return err;
}
