/*
 * One commit of a set of files through libgit2, without touching anything
 * else the user has in the index or working tree.
 *
 * Outline (why each step is where it is):
 *  0. Take the journal (.git/results/commit-journal), which is also the
 *     lock among results processes; a dead process's journal is first
 *     finished or undone (rs_commit_recover).
 *  1. Validate paths and read HEAD (or note an unborn branch).
 *  2. Write blobs and build the new tree from HEAD's tree with
 *     git_tree_create_updated: the commit never picks up other staged
 *     changes, unlike a commit made from the index.
 *  3. Refuse if a touched path has local changes we would overwrite.
 *  4. Create the commit object (unreferenced: invisible) and write into
 *     the journal the branch, its old commit and the new one.
 *  5. Put the new files in the working tree (each written under
 *     .git/results/tmp, then renamed into place) and then their index
 *     entries, with stat data taken from the files we wrote so that
 *     `git status` sees them clean without re-hashing.
 *  6. Move the branch with a compare-and-swap against the HEAD read in
 *     step 1: this single ref update is the commit point, and it comes
 *     LAST. If it fails, step 5 is undone and the repository is as before.
 *  7. Remove the journal.
 *
 * Why the ref last: three files change (working tree, index, ref) and no
 * order makes every moment clean for `git status`. With the ref first, a
 * kill leaves HEAD ahead of the index: the run shows as deleted and the
 * user's next ordinary commit removes it. With the ref last, a kill leaves
 * the run's files staged or untracked, which no git command turns into a
 * loss; and the journal lets the next results command undo them (branch
 * not moved) or finish the checkout (branch moved).
 */
#include "git/commit.h"
#include "git/indexfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "results/error.h"
#include "util/array.h"
#include "util/fs.h"
#include "util/path.h"

#define PATH_LIMIT 4096

static int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return rs_error_set(code, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}


/* Author or committer: environment, then git config, then a fixed name. */
static int make_signature(git_signature **out, git_repository *repo,
			  const struct rs_commit_options *opts, const char *role)
{
	char kname[32], kmail[32];
	const char *name, *mail;
	git_signature *def = NULL;
	int gerr;

	snprintf(kname, sizeof(kname), "GIT_%s_NAME", role);
	snprintf(kmail, sizeof(kmail), "GIT_%s_EMAIL", role);
	name = opts->author_name ? opts->author_name : getenv(kname);
	mail = opts->author_email ? opts->author_email : getenv(kmail);
	if ((!name || !mail) && git_signature_default(&def, repo) == 0) {
		if (!name)
			name = def->name;
		if (!mail)
			mail = def->email;
	}
	gerr = git_signature_now(out, name && *name ? name : "results",
				 mail && *mail ? mail : "results@localhost");
	git_signature_free(def);
	if (gerr < 0)
		return git_fail(RS_EGENERIC, "cannot make a commit signature");
	return 0;
}

/*
 * The id of `path` in `tree` (NULL tree: absent). 1 when present. The
 * folders on the way are read within their caps: one past it reads as
 * absent here (HEAD's readers before the commit step refused it already).
 */
static int tree_id(git_oid *out, git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	int present = 0;

	if (!tree)
		return 0;
	if (rs_repo_tree_entry_bypath(&e, tree, path) != 0) {
		rs_error_clear();
		return 0;
	}
	if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		git_oid_cpy(out, git_tree_entry_id(e));
		present = 1;
	}
	git_tree_entry_free(e);
	return present;
}

/*
 * Step 3: a path may be overwritten when its index entry (`staged`, NULL
 * when it has none) and its working file are each either what HEAD has,
 * what we are about to write, or absent.
 */
static int check_local_changes(git_tree *base, const struct rs_commit_file *f,
			       const git_oid *staged, const git_oid *new_id, const char *full)
{
	git_oid head_id, wid;
	int in_head = tree_id(&head_id, base, f->path);
	struct stat st;

	if (staged && !(in_head && git_oid_equal(staged, &head_id)) &&
	    !(new_id && git_oid_equal(staged, new_id)))
		return rs_error_set(RS_EUSAGE,
				    "'%s' has staged changes that the commit would overwrite; "
				    "commit or unstage them first", f->path);
	if (lstat(full, &st) != 0)
		return 0;
	if (!S_ISREG(st.st_mode))
		return rs_error_set(RS_EUSAGE, "'%s' is in the way (not a regular file)", f->path);
	if (git_odb_hashfile(&wid, full, GIT_OBJECT_BLOB) < 0)
		return git_fail(RS_EGENERIC, "cannot hash a working-tree file");
	if ((in_head && git_oid_equal(&wid, &head_id)) || (new_id && git_oid_equal(&wid, new_id)))
		return 0;
	return rs_error_set(RS_EUSAGE,
			    "'%s' has local changes that the commit would overwrite; "
			    "commit, move or remove it first", f->path);
}

void rs_commit_entry_stat(git_index_entry *e, const struct stat *st)
{
	e->ctime.seconds = (int32_t)st->st_ctim.tv_sec;
	e->ctime.nanoseconds = (uint32_t)st->st_ctim.tv_nsec;
	e->mtime.seconds = (int32_t)st->st_mtim.tv_sec;
	e->mtime.nanoseconds = (uint32_t)st->st_mtim.tv_nsec;
	e->dev = (uint32_t)st->st_dev;
	e->ino = (uint32_t)st->st_ino;
	e->uid = (uint32_t)st->st_uid;
	e->gid = (uint32_t)st->st_gid;
	e->file_size = (uint32_t)st->st_size;
}

/* Step 6: the index entry of a file we just wrote, from its stat data. */
static int index_add_written(git_index *index, const char *path, const char *full,
			     const git_oid *id, int executable)
{
	git_index_entry e;
	struct stat st;

	if (stat(full, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", full);
	memset(&e, 0, sizeof(e));
	rs_commit_entry_stat(&e, &st);
	e.mode = executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	git_oid_cpy(&e.id, id);
	e.path = path;
	if (git_index_add(index, &e) < 0)
		return git_fail(RS_EGENERIC, "cannot update the index");
	return 0;
}



/* ---- the journal ------------------------------------------------------ */

#define JOURNAL_LEAF "commit-journal"
#define JOURNAL_MAX 4096

/*
 * .git/results/commit-journal: who is committing (pid, its start time,
 * host) and, from step 4 on, what (ref, old and new commit). It is made
 * with link(2) from a complete temporary file, so it never exists half
 * written, and it doubles as the lock that keeps two results processes
 * from committing at once. Whoever finds the journal of a dead process
 * finishes or undoes that commit (rs_commit_recover).
 */
struct journal {
	long pid;
	unsigned long long start;
	char host[256];
	char ref[1024];
	git_oid old_id, new_id;
	int unborn;   /* the branch had no commit */
	int intent;   /* ref, old and new are set */
	int damaged;  /* unreadable: its owner is taken for dead */
	time_t mtime;
};

/* Field 22 of /proc/<pid>/stat: the start time that tells a reused pid apart. */
static int proc_start(long pid, unsigned long long *out)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	for (int field = 3; field <= 22; field++) {
		while (*p == ' ')
			p++;
		if (field == 22) {
			*out = strtoull(p, NULL, 10);
			return 0;
		}
		p = strchr(p, ' ');
		if (!p)
			return -1;
	}
	return -1;
}

static void journal_self(struct journal *j)
{
	memset(j, 0, sizeof(*j));
	j->pid = (long)getpid();
	if (proc_start(j->pid, &j->start) != 0)
		j->start = 0;
	if (gethostname(j->host, sizeof(j->host) - 1) != 0 || !j->host[0])
		snprintf(j->host, sizeof(j->host), "?");
}

static int owner_alive(const struct journal *j)
{
	char host[256] = "";
	unsigned long long start;

	if (j->damaged)
		return 0;
	if (gethostname(host, sizeof(host) - 1) != 0 || strcmp(host, j->host) != 0)
		/* Another machine (a shared folder): trust it for a while. */
		return time(NULL) - j->mtime < RS_TMP_GRACE_DEFAULT;
	if (proc_start(j->pid, &start) == 0)
		return start == j->start;
	if (access("/proc/self/stat", R_OK) == 0)
		return 0; /* procfs answers, and not for that pid */
	return kill((pid_t)j->pid, 0) == 0 || errno == EPERM;
}

static int journal_format(struct rs_buf *out, const struct journal *j)
{
	char oldhex[GIT_OID_HEXSZ + 1], newhex[GIT_OID_HEXSZ + 1];
	int err;

	err = rs_buf_printf(out, "results commit journal 1\npid %ld\nstart %llu\nhost %s\n",
			    j->pid, j->start, j->host);
	if (err || !j->intent)
		return err;
	git_oid_tostr(oldhex, sizeof(oldhex), &j->old_id);
	git_oid_tostr(newhex, sizeof(newhex), &j->new_id);
	return rs_buf_printf(out, "ref %s\nold %s\nnew %s\n", j->ref,
			     j->unborn ? "unborn" : oldhex, newhex);
}

/* The value after "key " on a line of `text`, copied into `out` (capped). */
static int journal_field(const char *text, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		size_t n = strcspn(p, "\n");

		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			if (n - klen - 1 >= cap)
				return -1;
			memcpy(out, p + klen + 1, n - klen - 1);
			out[n - klen - 1] = '\0';
			return 0;
		}
		p = p[n] ? p + n + 1 : NULL;
	}
	return -1;
}

static int journal_parse(struct journal *j, const char *text)
{
	char v[1024];

	memset(j, 0, sizeof(*j));
	if (strncmp(text, "results commit journal 1\n", 25) != 0 ||
	    journal_field(text, "pid", v, sizeof(v)) != 0)
		return -1;
	j->pid = strtol(v, NULL, 10);
	if (journal_field(text, "start", v, sizeof(v)) != 0)
		return -1;
	j->start = strtoull(v, NULL, 10);
	if (journal_field(text, "host", j->host, sizeof(j->host)) != 0)
		return -1;
	if (journal_field(text, "ref", j->ref, sizeof(j->ref)) != 0)
		return 0; /* no intent yet */
	if (journal_field(text, "old", v, sizeof(v)) != 0)
		return -1;
	if (strcmp(v, "unborn") == 0)
		j->unborn = 1;
	else if (git_oid_fromstr(&j->old_id, v) != 0)
		return -1;
	if (journal_field(text, "new", v, sizeof(v)) != 0 || git_oid_fromstr(&j->new_id, v) != 0)
		return -1;
	j->intent = 1;
	return 0;
}

/* The journal's text, durable, under a temporary name (caller's `tmp`). */
static int journal_write_tmp(struct rs_repo *r, const struct journal *j, const char *jpath,
			     struct rs_buf *tmp)
{
	struct rs_buf text = RS_BUF_INIT;
	int fd = -1, err;

	err = journal_format(&text, j);
	if (err == 0)
		err = rs_repo_tmpfile_for(r, jpath, tmp, &fd);
	if (err == 0)
		err = rs_fs_write_all(fd, text.ptr, text.len);
	if (err == 0 && fsync(fd) != 0)
		err = rs_error_errno(RS_EGENERIC, "cannot fsync '%s'", tmp->ptr);
	if (fd >= 0 && close(fd) != 0 && err == 0)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", tmp->ptr);
	if (err && fd >= 0)
		unlink(tmp->ptr);
	rs_buf_release(&text);
	return err;
}

/* Step 4: record what is about to change (replaces our own journal). */
static int journal_set_intent(struct rs_repo *r, const struct journal *j, const char *jpath)
{
	struct rs_buf tmp = RS_BUF_INIT;
	int err;

	err = journal_write_tmp(r, j, jpath, &tmp);
	if (err == 0 && rename(tmp.ptr, jpath) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", jpath);
		unlink(tmp.ptr);
	}
	if (err == 0)
		err = rs_fs_fsync_parent(jpath);
	rs_buf_release(&tmp);
	return err;
}

static int journal_read(struct journal *j, const char *jpath)
{
	struct rs_buf text = RS_BUF_INIT;
	struct stat st;
	int err;

	err = rs_fs_read_file(&text, jpath, JOURNAL_MAX);
	if (err == 0 && journal_parse(j, text.ptr) != 0) {
		/* Written whole before it appears: damaged by a crash of the
		   machine. Treat it as a dead owner with nothing to finish. */
		memset(j, 0, sizeof(*j));
		j->pid = -1;
		j->damaged = 1;
	}
	if (err == 0 && stat(jpath, &st) == 0)
		j->mtime = st.st_mtime;
	rs_buf_release(&text);
	return err;
}

/* ---- putting a tree's version of some paths in place -------------------- */

#define APPLY_FORCE 1     /* overwrite local changes */
#define APPLY_NO_INDEX 2  /* the working tree only */

static void rmdir_parents(const char *full, const char *workdir)
{
	char dir[PATH_LIMIT * 2];
	size_t wlen = strlen(workdir);
	char *slash;

	if (strlen(full) >= sizeof(dir))
		return;
	strcpy(dir, full);
	for (;;) {
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < wlen)
			return;
		*slash = '\0';
		if (rmdir(dir) != 0)
			return;
	}
}

static int index_write_failed(git_repository *repo)
{
	char lock[PATH_LIMIT];

	snprintf(lock, sizeof(lock), "%sindex.lock", git_repository_path(repo));
	if (rs_fs_exists(lock))
		return rs_error_set(RS_ERETRY, "cannot write the index: '%s' exists (another git "
				    "command is running in this repository, or one was killed; "
				    "when none is running, remove that file)", lock);
	return git_fail(RS_EGENERIC, "cannot write the index");
}

/* The largest committed file written into the working tree (read whole first). */
#define CHECKOUT_BLOB_MAX (256u << 20)

/*
 * Write blob `id` to the working-tree file `path` (`full` with the work
 * tree in front; temporary name, rename). The path is checked as every
 * name from a repository is (util/path.h), and its folders are made
 * without following a symlink a hostile tree may have put in their place.
 */
static int write_blob_file(struct rs_repo *r, const git_oid *id, int executable,
			   const char *path, const char *full)
{
	git_blob *blob = NULL;
	struct rs_buf tmp = RS_BUF_INIT;
	int fd = -1, err;

	err = rs_path_check_relative(path, "a path to check out");
	if (err)
		return err;
	err = rs_repo_blob_capped(&blob, r->git, id, CHECKOUT_BLOB_MAX, full);
	if (err)
		return err;
	err = rs_path_mkdirs_under(r->workdir, path);
	if (err == 0)
		err = rs_repo_tmpfile_for(r, full, &tmp, &fd);
	if (err == 0)
		err = rs_fs_write_all(fd, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	if (err == 0 && fchmod(fd, executable ? 0755 : 0644) != 0)
		err = rs_error_errno(RS_EGENERIC, "cannot set the mode of '%s'", full);
	if (fd >= 0 && close(fd) != 0 && err == 0)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", full);
	if (err == 0 && rename(tmp.ptr, full) != 0)
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", full);
	if (err && fd >= 0)
		unlink(tmp.ptr);
	git_blob_free(blob);
	rs_buf_release(&tmp);
	return err;
}

/*
 * One path of the diff (`full`: its working-tree name) to `target`'s
 * version: written or removed, unless what is there now is neither
 * version (a local edit, or not a regular file) and APPLY_FORCE is not
 * given; then `*skip` is set and nothing is touched.
 */
static int apply_file(struct rs_repo *r, const git_diff_delta *d, const char *full, int flags,
		      unsigned char *skip)
{
	int want = d->status != GIT_DELTA_DELETED, had = d->status != GIT_DELTA_ADDED;
	struct stat st;
	git_oid wid;
	int ok = 1;

	if (lstat(full, &st) == 0) {
		if (!S_ISREG(st.st_mode)) {
			ok = 0;
		} else if (git_odb_hashfile(&wid, full, GIT_OBJECT_BLOB) < 0) {
			return git_fail(RS_EGENERIC, "cannot hash a working-tree file");
		} else if (want && git_oid_equal(&wid, &d->new_file.id) &&
			   !!(st.st_mode & 0100) ==
			   (d->new_file.mode == GIT_FILEMODE_BLOB_EXECUTABLE)) {
			return 0; /* already there */
		} else {
			ok = (had && git_oid_equal(&wid, &d->old_file.id)) ||
			     (want && git_oid_equal(&wid, &d->new_file.id));
		}
	}
	if (!ok && !(flags & APPLY_FORCE)) {
		*skip = 1;
		return 0;
	}
	if (want)
		return write_blob_file(r, &d->new_file.id,
				       d->new_file.mode == GIT_FILEMODE_BLOB_EXECUTABLE,
				       d->new_file.path, full);
	if (unlink(full) != 0 && errno != ENOENT)
		return rs_error_errno(RS_EGENERIC, "cannot remove '%s'", full);
	rmdir_parents(full, r->workdir);
	return 0;
}

/* .git/index of the repository (libgit2's own path for it). */
static int index_path(struct rs_buf *out, git_repository *repo)
{
	return rs_buf_printf(out, "%sindex", git_repository_path(repo));
}

/*
 * Whether apply_index touches delta `d` whose index entry is `staged`
 * (NULL: none): not when the index holds a version of the user's there
 * (neither side of the diff), unless APPLY_FORCE.
 */
static int index_takes(const git_diff_delta *d, const git_oid *staged, int flags)
{
	int want = d->status != GIT_DELTA_DELETED, had = d->status != GIT_DELTA_ADDED;

	return !staged || (flags & APPLY_FORCE) || (want && git_oid_equal(staged, &d->new_file.id)) ||
	       (had && git_oid_equal(staged, &d->old_file.id));
}

/*
 * apply_index through libgit2, which loads and writes the whole index:
 * for what git/indexfile.h cannot splice (a split index, an unknown
 * version). A sparse index is spliced: libgit2 refuses it.
 */
static int apply_index_libgit2(struct rs_repo *r, git_diff *diff, const unsigned char *skip,
			       int flags, size_t *skipped, int *index_failed)
{
	git_index *index = NULL;
	struct rs_buf full = RS_BUF_INIT;
	size_t n = git_diff_num_deltas(diff);
	int err = 0, dirty = 0;

	/* re-read only when the file changed since this process read it */
	if (git_repository_index(&index, r->git) < 0 || git_index_read(index, 0) < 0) {
		err = git_fail(RS_EGENERIC, "cannot read the index");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *path = d->new_file.path;
		const git_index_entry *ie = git_index_get_bypath(index, path, 0);

		if (skip[i])
			continue;
		if (!index_takes(d, ie ? &ie->id : NULL, flags)) {
			(*skipped)++;
			continue;
		}
		rs_buf_clear(&full);
		err = rs_buf_printf(&full, "%s%s", r->workdir, path);
		if (err)
			goto out;
		if (d->status != GIT_DELTA_DELETED) {
			err = index_add_written(index, path, full.ptr, &d->new_file.id,
						d->new_file.mode == GIT_FILEMODE_BLOB_EXECUTABLE);
			if (err)
				goto out;
			dirty = 1;
		} else if (ie) {
			if (git_index_remove(index, path, 0) < 0) {
				err = git_fail(RS_EGENERIC, "cannot update the index");
				goto out;
			}
			dirty = 1;
		}
	}
	if (dirty && git_index_write(index) < 0) {
		*index_failed = 1;
		err = index_write_failed(r->git);
		/* The repository's index object is shared: drop our changes. */
		git_index_read(index, 1);
	}
out:
	rs_buf_release(&full);
	git_index_free(index);
	return err;
}

/*
 * Whether apply_index sets the sparse folder entry of `dir` ("runs/",
 * `dlen` bytes; `staged`: its tree id in the index, zero when it has
 * none yet) to `target`'s tree: the folder-level index_takes, against
 * the folder's trees in `target` and `other`.
 */
static int index_takes_dir(git_tree *target, git_tree *other, const char *dir, size_t dlen,
			   const git_oid *staged, int flags)
{
	char name[PATH_LIMIT];
	git_tree_entry *e = NULL;
	int takes = 0;

	if (git_oid_is_zero(staged) || (flags & APPLY_FORCE) || dlen >= sizeof(name))
		return 1;
	memcpy(name, dir, dlen - 1);
	name[dlen - 1] = '\0';
	for (int side = 0; side < 2 && !takes; side++) {
		git_tree *t = side ? other : target;

		if (t && git_tree_entry_bypath(&e, t, name) == 0) {
			takes = git_oid_equal(git_tree_entry_id(e), staged);
			git_tree_entry_free(e);
			e = NULL;
		}
	}
	git_error_clear(); /* a folder one side lacks */
	return takes;
}

/*
 * The index entries of the paths apply_file wrote (not those in `skip`),
 * unless the index holds a version of the user's there (and not
 * APPLY_FORCE). `*skipped` counts those left alone.
 *
 * The index is spliced (git/indexfile.h): under git's index lock, the
 * few entries change and the rest of the file is copied, so the cost does
 * not grow with the entries the index holds (300,000 at 100,000 runs)
 * beyond a copy and a hash of the file. An index it cannot splice goes
 * through libgit2. `idx` (may be NULL): the index as apply_tree read it,
 * taken over and freed here, reused when the file did not change since.
 * In a sparse index, the paths of `sparse` (apply_file wrote none of
 * them) set their sparse folder's entry to `target`'s tree; if the lock
 * finds the index changed so that one of them has an entry of its own,
 * the commit stops (RS_ERETRY) and is undone.
 */
static int apply_index(struct rs_repo *r, git_diff *diff, const unsigned char *skip,
		       const unsigned char *sparse, int flags, git_tree *target,
		       git_tree *other, struct rs_index_file *idx, size_t *skipped,
		       int *index_failed)
{
	struct rs_index_edit *edits = NULL;
	struct rs_buf path = RS_BUF_INIT, full = RS_BUF_INIT;
	size_t n = git_diff_num_deltas(diff), nedits = 0;
	int err;

	if (idx) {
		err = rs_index_file_lock(idx); /* read again only if it changed */
	} else {
		err = index_path(&path, r->git);
		if (err)
			goto out;
		err = rs_index_file_open(&idx, path.ptr, 1);
	}
	if (err == RS_EFORMAT) {
		rs_error_clear(); /* a format to leave to libgit2 */
		err = apply_index_libgit2(r, diff, skip, flags, skipped, index_failed);
		goto out;
	}
	if (err) {
		*index_failed = 1; /* the index is untouched */
		goto out;
	}
	edits = calloc(n ? n : 1, sizeof(*edits));
	if (!edits) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		struct rs_index_edit *e = &edits[nedits];
		git_oid staged;
		size_t dlen;
		int has;

		if (skip[i])
			continue;
		err = rs_index_file_where(idx, d->new_file.path, &dlen, &staged);
		if (err)
			goto out;
		if (!!dlen != sparse[i]) {
			err = rs_error_set(RS_ERETRY, "the index changed while results wrote '%s' "
					   "(a sparse checkout set again?); try again",
					   d->new_file.path);
			goto out;
		}
		if (dlen) {
			if (!index_takes_dir(target, other, d->new_file.path, dlen, &staged, flags)) {
				(*skipped)++;
				continue;
			}
			e->path = d->new_file.path;
			e->remove = d->status == GIT_DELTA_DELETED;
			nedits++;
			continue;
		}
		has = rs_index_file_find(idx, d->new_file.path, &staged, NULL);
		if (!index_takes(d, has ? &staged : NULL, flags)) {
			(*skipped)++;
			continue;
		}
		e->path = d->new_file.path;
		e->remove = d->status == GIT_DELTA_DELETED;
		if (e->remove) {
			nedits += has;
			continue;
		}
		rs_buf_clear(&full);
		err = rs_buf_printf(&full, "%s%s", r->workdir, e->path);
		if (err)
			goto out;
		if (stat(full.ptr, &e->st) != 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot stat '%s'", full.ptr);
			goto out;
		}
		git_oid_cpy(&e->id, &d->new_file.id);
		e->mode = d->new_file.mode == GIT_FILEMODE_BLOB_EXECUTABLE
			  ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
		nedits++;
	}
	if (nedits == 0)
		goto out;
	err = rs_index_file_commit(idx, edits, nedits, target);
	if (err)
		*index_failed = 1;
out:
	rs_index_file_free(idx);
	free(edits);
	rs_buf_release(&path);
	rs_buf_release(&full);
	return err;
}

/* A list of paths (owned strings). */
struct rs_strvec {
	char **v;
	size_t n, alloc;
};
#define RS_STRVEC_INIT { NULL, 0, 0 }

static int rs_strvec_push(struct rs_strvec *l, const char *s)
{
	char *c;
	int err = rs_array_grow(&l->v, &l->alloc, l->n + 1, sizeof(*l->v), 16);

	if (err)
		return err;
	c = strdup(s);
	if (!c)
		return rs_error_set(RS_EGENERIC, "out of memory");
	l->v[l->n++] = c;
	return 0;
}

static void rs_strvec_release(struct rs_strvec *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = l->alloc = 0;
}

/*
 * The paths of the blobs that differ between trees `a` and `b` (either
 * may be NULL: empty) below `prefix`, appended to `paths`. Subtrees of the
 * same id are skipped: the cost is that of the folders on the changed
 * paths, not of the whole tree (libgit2's tree diff reads every subtree,
 * 100,000 run folders in a long-lived repository).
 */
static int changed_paths(struct rs_strvec *paths, git_repository *repo, git_tree *a, git_tree *b,
			 const char *prefix)
{
	size_t na = a ? git_tree_entrycount(a) : 0, nb = b ? git_tree_entrycount(b) : 0;
	size_t i = 0, j = 0;
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	while (!err && (i < na || j < nb)) {
		const git_tree_entry *ea = i < na ? git_tree_entry_byindex(a, i) : NULL;
		const git_tree_entry *eb = j < nb ? git_tree_entry_byindex(b, j) : NULL;
		int c = !ea ? 1 : !eb ? -1 : strcmp(git_tree_entry_name(ea), git_tree_entry_name(eb));
		const git_tree_entry *e = c <= 0 ? ea : eb;
		git_tree *sa = NULL, *sb = NULL;

		i += c <= 0;
		j += c >= 0;
		if (c == 0 && git_oid_equal(git_tree_entry_id(ea), git_tree_entry_id(eb)) &&
		    git_tree_entry_filemode(ea) == git_tree_entry_filemode(eb))
			continue;
		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s%s", prefix, git_tree_entry_name(e));
		if (err)
			break;
		if ((c > 0 || git_tree_entry_type(ea) != GIT_OBJECT_TREE) &&
		    (c < 0 || git_tree_entry_type(eb) != GIT_OBJECT_TREE)) {
			err = rs_strvec_push(paths, path.ptr); /* a blob on one side at least */
			continue;
		}
		/* a folder on one side at least: what differs below it (a blob on the other side is listed too) */
		if ((c <= 0 && git_tree_entry_type(ea) != GIT_OBJECT_TREE) ||
		    (c >= 0 && git_tree_entry_type(eb) != GIT_OBJECT_TREE))
			err = rs_strvec_push(paths, path.ptr);
		/* each folder read within RS_REPO_TREE_MAX (git/repo.h) */
		if (!err && c <= 0 && git_tree_entry_type(ea) == GIT_OBJECT_TREE)
			err = rs_repo_tree_capped(&sa, repo, git_tree_entry_id(ea), path.ptr);
		if (!err && c >= 0 && git_tree_entry_type(eb) == GIT_OBJECT_TREE)
			err = rs_repo_tree_capped(&sb, repo, git_tree_entry_id(eb), path.ptr);
		if (!err)
			err = rs_buf_putc(&path, '/');
		if (!err)
			err = changed_paths(paths, repo, sa, sb, path.ptr);
		git_tree_free(sa);
		git_tree_free(sb);
	}
	rs_buf_release(&path);
	return err;
}

/*
 * git_diff_tree_to_tree from `a` to `b`, limited to the paths that differ
 * (found without reading unchanged subtrees), so that its cost does not
 * grow with the repository.
 */
static int diff_trees(git_diff **out, git_repository *repo, git_tree *a, git_tree *b)
{
	struct rs_strvec paths = RS_STRVEC_INIT;
	git_diff_options opts;
	int err;

	*out = NULL;
	if (git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION) < 0)
		return git_fail(RS_EGENERIC, "cannot compare two trees");
	err = changed_paths(&paths, repo, a, b, "");
	if (err)
		goto out;
	if (paths.n == 0) {
		/* nothing differs: an empty diff (a pathspec of none would match every path) */
		if (git_diff_tree_to_tree(out, repo, NULL, NULL, NULL) < 0)
			err = git_fail(RS_EGENERIC, "cannot compare two trees");
		goto out;
	}
	opts.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH; /* the exact paths, as a path list */
	opts.pathspec.strings = paths.v;
	opts.pathspec.count = paths.n;
	if (git_diff_tree_to_tree(out, repo, a, b, &opts) < 0)
		err = git_fail(RS_EGENERIC, "cannot compare two trees");
out:
	rs_strvec_release(&paths);
	return err;
}

/*
 * Make the working tree (and, unless APPLY_NO_INDEX, the index) hold
 * `target`'s version of every path that differs between `other` and
 * `target`. A path is touched only when what is there now is one of the
 * two versions or absent, so an edit of the user's is never overwritten
 * (unless APPLY_FORCE); `*skipped` counts the paths left alone.
 * `*index_failed` is set when writing the index was what failed.
 */
static int apply_tree(struct rs_repo *r, git_tree *target, git_tree *other, int flags,
		      struct rs_index_file **held, size_t *skipped, int *index_failed)
{
	struct rs_index_file *idx = held ? *held : NULL;
	git_diff *diff = NULL;
	struct rs_buf full = RS_BUF_INIT;
	unsigned char *skip = NULL, *sparse = NULL;
	size_t n;
	int err = 0;

	*skipped = 0;
	*index_failed = 0;
	if (held)
		*held = NULL; /* ours now */
	if (!idx) {
		err = index_path(&full, r->git);
		if (err == 0)
			err = rs_index_file_open(&idx, full.ptr, 0);
		if (err) {
			/* libgit2's format (apply_index says so again), or read under the lock */
			rs_error_clear();
			err = 0;
		}
	}
	err = diff_trees(&diff, r->git, other, target);
	if (err)
		goto out;
	n = git_diff_num_deltas(diff);
	skip = calloc(n ? n : 1, 1);
	sparse = calloc(n ? n : 1, 1);
	if (!skip || !sparse) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		size_t dlen = 0;

		/* a path a sparse folder of the index holds stays out of the work tree */
		if (idx)
			err = rs_index_file_where(idx, d->new_file.path, &dlen, NULL);
		sparse[i] = dlen != 0;
		if (err || sparse[i])
			continue;
		rs_buf_clear(&full);
		err = rs_buf_printf(&full, "%s%s", r->workdir, d->new_file.path);
		if (!err)
			err = apply_file(r, d, full.ptr, flags, &skip[i]);
		*skipped += skip[i];
	}
	if (!err && !(flags & APPLY_NO_INDEX)) {
		err = apply_index(r, diff, skip, sparse, flags, target, other, idx, skipped,
				  index_failed);
		idx = NULL; /* apply_index's */
	}
out:
	rs_index_file_free(idx);
	free(skip);
	free(sparse);
	rs_buf_release(&full);
	git_diff_free(diff);
	return err;
}

/* ---- recovery ----------------------------------------------------------- */

/* A ref lock our dead process left: it holds exactly the new commit's id. */
static void drop_our_ref_lock(git_repository *repo, const struct journal *j)
{
	char lock[PATH_LIMIT * 2], hex[GIT_OID_HEXSZ + 1];
	struct rs_buf text = RS_BUF_INIT;

	snprintf(lock, sizeof(lock), "%s%s.lock",
		 strcmp(j->ref, "HEAD") == 0 ? git_repository_path(repo)
					     : git_repository_commondir(repo), j->ref);
	git_oid_tostr(hex, sizeof(hex), &j->new_id);
	if (rs_fs_read_file(&text, lock, 256) == 0 && text.len == GIT_OID_HEXSZ + 1 &&
	    memcmp(text.ptr, hex, GIT_OID_HEXSZ) == 0 && text.ptr[GIT_OID_HEXSZ] == '\n')
		unlink(lock);
	rs_error_clear(); /* best effort: no lock, or not ours */
	rs_buf_release(&text);
}

/*
 * An index lock our dead process left: a complete index whose entries for
 * every path of the commit are the new commit's. Another process's lock
 * would not hold exactly those entries, and an incomplete one (no valid
 * checksum) is left alone.
 */
static void drop_our_index_lock(git_repository *repo, git_tree *new_tree, git_tree *old_tree)
{
	char lock[PATH_LIMIT];
	struct rs_index_file *spliced = NULL;
	git_index *idx = NULL;
	git_diff *diff = NULL;
	size_t i, n;
	int ours = 1, err;

	snprintf(lock, sizeof(lock), "%sindex.lock", git_repository_path(repo));
	if (!rs_fs_exists(lock) ||
	    git_diff_tree_to_tree(&diff, repo, old_tree, new_tree, NULL) < 0)
		goto out;
	/* read as the splicer reads an index (a sparse one too), else by libgit2 */
	err = rs_index_file_open(&spliced, lock, 0);
	if (err == 0)
		err = rs_index_file_verify(spliced);
	if (err && (err != RS_EFORMAT || git_index_open(&idx, lock) < 0))
		goto out;
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && ours; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const git_index_entry *ie = idx ? git_index_get_bypath(idx, d->new_file.path, 0)
						: NULL;
		git_oid id, dir_id;
		size_t dlen = 0;
		int has = ie != NULL;

		if (ie)
			git_oid_cpy(&id, &ie->id);
		if (spliced && rs_index_file_where(spliced, d->new_file.path, &dlen, &dir_id) != 0)
			break; /* cannot tell: not ours */
		if (spliced && dlen) {
			/* a sparse folder: the new commit's tree of it */
			ours = index_takes_dir(new_tree, NULL, d->new_file.path, dlen, &dir_id, 0) &&
			       !git_oid_is_zero(&dir_id);
			continue;
		}
		if (spliced)
			has = rs_index_file_find(spliced, d->new_file.path, &id, NULL);
		if (d->status == GIT_DELTA_DELETED)
			ours = !has;
		else
			ours = has && git_oid_equal(&id, &d->new_file.id);
	}
	if (ours && i == n && n > 0)
		unlink(lock);
out:
	rs_error_clear(); /* best effort: the lock is left when not ours */
	git_error_clear();
	rs_index_file_free(spliced);
	git_diff_free(diff);
	git_index_free(idx);
}

/*
 * The working tree of a killed commit whose branch is at its new commit
 * (finished: checked out) or still at the old one (undone); else the
 * branch moved on since (the user committed or reset): their state wins,
 * there is nothing of ours to finish. `note` says what was done.
 */
static int finish_or_undo(struct rs_repo *r, const struct journal *j, git_reference *ref,
			  git_tree *new_tree, git_tree *old_tree, struct rs_buf *note)
{
	const git_oid *target = ref ? git_reference_target(ref) : NULL;
	char hex[GIT_OID_HEXSZ + 1];
	size_t skipped = 0;
	int err = 0, index_failed;

	git_oid_tostr(hex, sizeof(hex), &j->new_id);
	if (target && git_oid_equal(target, &j->new_id)) {
		err = apply_tree(r, new_tree, old_tree, 0, NULL, &skipped, &index_failed);
		if (err == 0 && note)
			err = rs_buf_printf(note, "finished an interrupted 'results add': commit %.12s "
					    "is recorded and now checked out", hex);
	} else if (j->unborn ? !ref : target && git_oid_equal(target, &j->old_id)) {
		err = apply_tree(r, old_tree, new_tree, 0, NULL, &skipped, &index_failed);
		if (err == 0 && note)
			err = rs_buf_printf(note, "undid an interrupted 'results add' (its commit "
					    "%.12s was never recorded); run that 'results add' again", hex);
	}
	if (err == 0 && skipped && note)
		err = rs_buf_printf(note, "; %zu path(s) with changes of yours were left as they are",
				    skipped);
	return err;
}

static int recover(struct rs_repo *r, const char *jpath, const struct journal *j,
		   struct rs_buf *note)
{
	git_repository *repo = r->git;
	git_commit *newc = NULL, *oldc = NULL;
	git_tree *new_tree = NULL, *old_tree = NULL;
	git_reference *ref = NULL;
	int err = 0, gerr;

	if (!j->intent)
		goto done; /* killed before anything visible changed */
	/* the commits and trees read within their caps (git/repo.h) */
	err = rs_repo_commit_capped(&newc, repo, &j->new_id, "the interrupted commit");
	if (!err)
		err = rs_repo_tree_capped(&new_tree, repo, git_commit_tree_id(newc),
					  "the interrupted commit's tree");
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
		goto done; /* the commit object is gone (gc): nothing refers to it */
	}
	if (err)
		goto out;
	if (!j->unborn) {
		err = rs_repo_commit_capped(&oldc, repo, &j->old_id,
					    "the commit an interrupted 'results add' started from");
		if (!err)
			err = rs_repo_tree_capped(&old_tree, repo, git_commit_tree_id(oldc),
						  "the tree an interrupted 'results add' started from");
		if (err)
			goto out;
	}
	drop_our_ref_lock(repo, j);
	drop_our_index_lock(repo, new_tree, old_tree);
	gerr = git_reference_lookup(&ref, repo, j->ref);
	if (gerr < 0 && gerr != GIT_ENOTFOUND) {
		err = git_fail(RS_EGENERIC, "cannot read the branch");
		goto out;
	}
	err = finish_or_undo(r, j, ref, new_tree, old_tree, note);
	if (err)
		goto out;
done:
	if (unlink(jpath) != 0 && errno != ENOENT)
		err = rs_error_errno(RS_EGENERIC, "cannot remove '%s'", jpath);
out:
	if (err)
		err = rs_error_wrap(err, "cannot repair the working tree after an interrupted "
				    "'results add'");
	git_reference_free(ref);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	git_commit_free(newc);
	git_commit_free(oldc);
	return err;
}

int rs_commit_recover(struct rs_repo *r, struct rs_buf *note)
{
	struct rs_buf jpath = RS_BUF_INIT;
	struct journal j;
	int err;

	err = rs_repo_state_path(&jpath, r, JOURNAL_LEAF);
	if (err)
		goto out;
	if (!rs_fs_exists(jpath.ptr))
		goto out;
	err = journal_read(&j, jpath.ptr);
	if (err == RS_ENOTFOUND) {
		err = 0; /* its owner just finished */
		goto out;
	}
	if (err || owner_alive(&j))
		goto out; /* a live one is its owner's business */
	err = recover(r, jpath.ptr, &j, note);
out:
	if (err == 0)
		rs_error_clear();
	rs_buf_release(&jpath);
	return err;
}

/* Step 0: take the journal, finishing a dead process's first. */
static int journal_acquire(struct rs_repo *r, const struct journal *self, const char *jpath)
{
	struct rs_buf tmp = RS_BUF_INIT;
	struct journal other;
	int err = 0;

	for (int attempt = 0; attempt < 3; attempt++) {
		int rc, link_errno;

		rs_buf_clear(&tmp);
		err = journal_write_tmp(r, self, jpath, &tmp);
		if (err)
			break;
		rc = link(tmp.ptr, jpath);
		if (rc != 0 && (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP)) {
			/* No hard links here: open(O_EXCL) is the lock instead. */
			int fd = open(jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

			rc = fd < 0 ? -1 : 0;
			if (fd >= 0) {
				close(fd);
				rc = rename(tmp.ptr, jpath);
			}
		}
		if (rc == 0) {
			unlink(tmp.ptr);
			err = rs_fs_fsync_parent(jpath);
			break;
		}
		link_errno = errno;
		err = rs_error_errno(RS_EGENERIC, "cannot create '%s'", jpath);
		unlink(tmp.ptr);
		if (link_errno != EEXIST)
			break;
		err = journal_read(&other, jpath);
		if (err == RS_ENOTFOUND) {
			err = 0;
			continue;
		}
		if (err)
			break;
		if (owner_alive(&other)) {
			err = rs_error_set(RS_ERETRY, "another results command (process %ld on '%s') "
					   "is recording a run in this repository; wait for it to "
					   "finish", other.pid, other.host);
			break;
		}
		err = recover(r, jpath, &other, NULL);
		if (err)
			break;
		err = rs_error_set(RS_ERETRY, "'%s' keeps coming back", jpath);
	}
	rs_buf_release(&tmp);
	return err;
}

/* ---- the commit --------------------------------------------------------- */

struct pending {
	char *full;     /* working-tree path */
	git_oid id;
};

/* What one rs_commit_files call holds between its steps; all owned. */
struct commit_state {
	struct rs_repo *r;
	git_repository *repo;
	git_reference *head, *sym, *newref;
	git_commit *parent;
	git_tree *base, *tree;
	git_treebuilder *tb;
	git_index *index;
	struct rs_index_file *idx;  /* the index as step 3 read it (not locked) */
	git_signature *author, *committer;
	git_tree_update *updates;
	struct pending *pend;
	size_t nfiles, nupdates;
	struct rs_buf jpath;
	struct journal j;
	git_oid old_id, tree_oid, commit_id;
	char *refname;
	int unborn, locked, keep_journal, index_failed;
};

static void commit_state_release(struct commit_state *s)
{
	if (s->locked && !s->keep_journal)
		unlink(s->jpath.ptr);
	for (size_t i = 0; s->pend && i < s->nfiles; i++)
		free(s->pend[i].full);
	rs_buf_release(&s->jpath);
	free(s->pend);
	free(s->updates);
	free(s->refname);
	git_signature_free(s->author);
	git_signature_free(s->committer);
	git_index_free(s->index);
	rs_index_file_free(s->idx);
	git_tree_free(s->tree);
	git_tree_free(s->base);
	git_treebuilder_free(s->tb);
	git_commit_free(s->parent);
	git_reference_free(s->newref);
	git_reference_free(s->sym);
	git_reference_free(s->head);
}

/* The arguments: a message, good paths, content for each, no path twice. */
static int check_request(const struct rs_commit_file *files, size_t nfiles,
			 const struct rs_commit_options *opts)
{
	if (!opts || !opts->message || !opts->message[0])
		return rs_error_set(RS_EUSAGE, "a commit needs a message");
	for (size_t i = 0; i < nfiles; i++) {
		if (strlen(files[i].path) >= PATH_LIMIT)
			return rs_error_set(RS_EUSAGE, "bad path '%.64s...' for a commit: too long",
					    files[i].path);
		/* the one checker of names that become paths (util/path.h) */
		if (rs_path_check_relative(files[i].path, "a path to commit"))
			return rs_error_wrap(RS_EUSAGE, "bad path for a commit");
		if (!files[i].remove && !files[i].data && files[i].size)
			return rs_error_set(RS_EUSAGE, "no content for '%s'", files[i].path);
		for (size_t k = 0; k < i; k++)
			if (strcmp(files[i].path, files[k].path) == 0)
				return rs_error_set(RS_EUSAGE, "'%s' given twice", files[i].path);
	}
	return 0;
}

/* Step 1: the branch to move, its commit and tree (an empty one if unborn). */
static int read_head(struct commit_state *s)
{
	git_repository *repo = s->repo;
	int gerr = git_repository_head(&s->head, repo), err;

	if (gerr == GIT_EUNBORNBRANCH) {
		s->unborn = 1;
		if (git_reference_lookup(&s->sym, repo, "HEAD") < 0 ||
		    git_reference_type(s->sym) != GIT_REFERENCE_SYMBOLIC)
			return git_fail(RS_EGENERIC, "cannot read HEAD");
		s->refname = strdup(git_reference_symbolic_target(s->sym));
	} else if (gerr < 0) {
		return git_fail(RS_EGENERIC, "cannot read HEAD");
	} else {
		s->refname = strdup(git_repository_head_detached(repo) ? "HEAD"
								       : git_reference_name(s->head));
		git_oid_cpy(&s->old_id, git_reference_target(s->head));
		/* each read within its cap: a hostile HEAD costs no memory (git/repo.h) */
		err = rs_repo_commit_capped(&s->parent, repo, &s->old_id, "the HEAD commit");
		if (err)
			return err;
		err = rs_repo_tree_capped(&s->base, repo, git_commit_tree_id(s->parent),
					  "the HEAD commit's tree");
		if (err)
			return err;
	}
	if (!s->refname)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (s->unborn) {
		git_oid empty;

		if (git_treebuilder_new(&s->tb, repo, NULL) < 0 ||
		    git_treebuilder_write(&empty, s->tb) < 0 ||
		    git_tree_lookup(&s->base, repo, &empty) < 0)
			return git_fail(RS_EGENERIC, "cannot make an empty tree");
	}
	return 0;
}

/* Step 2: a blob for each file, and the tree update that places it. */
static int write_blobs(struct commit_state *s, const struct rs_commit_file *files)
{
	const char *workdir = s->r->workdir;

	s->updates = calloc(s->nfiles ? s->nfiles : 1, sizeof(*s->updates));
	s->pend = calloc(s->nfiles ? s->nfiles : 1, sizeof(*s->pend));
	if (!s->updates || !s->pend)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < s->nfiles; i++) {
		const struct rs_commit_file *f = &files[i];
		git_tree_update *u = &s->updates[s->nupdates];
		git_oid cur;

		s->pend[i].full = malloc(strlen(workdir) + strlen(f->path) + 1);
		if (!s->pend[i].full)
			return rs_error_set(RS_EGENERIC, "out of memory");
		sprintf(s->pend[i].full, "%s%s", workdir, f->path);
		if (f->remove) {
			if (!tree_id(&cur, s->base, f->path))
				continue;
			u->action = GIT_TREE_UPDATE_REMOVE;
			u->path = f->path;
			s->nupdates++;
			continue;
		}
		if (git_blob_create_from_buffer(&s->pend[i].id, s->repo, f->data ? f->data : "",
						f->size) < 0)
			return git_fail(RS_EGENERIC, "cannot write a blob");
		u->action = GIT_TREE_UPDATE_UPSERT;
		git_oid_cpy(&u->id, &s->pend[i].id);
		u->filemode = f->executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
		u->path = f->path;
		s->nupdates++;
	}
	return 0;
}

/*
 * Step 2 on: the new tree. `*same` when it is HEAD's own tree (nothing to
 * commit); s->tree is then left unset.
 */
static int build_tree(struct commit_state *s, const struct rs_commit_file *files, int *same)
{
	int err = write_blobs(s, files);

	*same = 0;
	if (err)
		return err;
	if (git_tree_create_updated(&s->tree_oid, s->repo, s->base, s->nupdates, s->updates) < 0)
		return git_fail(RS_EUSAGE, "cannot build the new tree");
	if (!s->unborn && git_oid_equal(&s->tree_oid, git_tree_id(s->base))) {
		*same = 1;
		return 0;
	}
	if (git_tree_lookup(&s->tree, s->repo, &s->tree_oid) < 0)
		return git_fail(RS_EGENERIC, "cannot read the new tree");
	return 0;
}

/* Step 3 through libgit2, for an index git/indexfile.h does not read. */
static int check_worktree_libgit2(struct commit_state *s, const struct rs_commit_file *files,
				  const struct rs_commit_options *opts)
{
	int err;

	if (git_repository_index(&s->index, s->repo) < 0 || git_index_read(s->index, 0) < 0)
		return git_fail(RS_EGENERIC, "cannot read the index");
	if (git_index_has_conflicts(s->index))
		return rs_error_set(RS_EUSAGE,
				    "the index has unresolved conflicts; resolve them first");
	for (size_t i = 0; i < s->nfiles && !opts->force; i++) {
		const git_index_entry *ie = git_index_get_bypath(s->index, files[i].path, 0);

		err = check_local_changes(s->base, &files[i], ie ? &ie->id : NULL,
					  files[i].remove ? NULL : &s->pend[i].id,
					  s->pend[i].full);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Step 3: no conflicts in the index, no local change in the way. The
 * index is read without loading it (git/indexfile.h): a look-up of each
 * path in the mapped file.
 */
static int check_worktree(struct commit_state *s, const struct rs_commit_file *files,
			  const struct rs_commit_options *opts)
{
	struct rs_index_file *idx = NULL;
	struct rs_buf path = RS_BUF_INIT;
	int err;

	err = index_path(&path, s->repo);
	if (err == 0)
		err = rs_index_file_open(&idx, path.ptr, 0);
	rs_buf_release(&path);
	s->idx = idx; /* kept for step 5, which takes the lock */
	if (err == RS_EFORMAT) {
		rs_error_clear(); /* a format to leave to libgit2 */
		return check_worktree_libgit2(s, files, opts);
	}
	if (err)
		return err;
	if (rs_index_file_has_conflicts(idx))
		err = rs_error_set(RS_EUSAGE,
				   "the index has unresolved conflicts; resolve them first");
	for (size_t i = 0; i < s->nfiles && !opts->force && !err; i++) {
		git_oid staged;
		size_t dlen;
		int has;

		err = rs_index_file_where(idx, files[i].path, &dlen, &staged);
		if (err)
			break;
		if (dlen) {
			/* in a sparse folder: not in the work tree, its entry HEAD's or ours */
			if (!index_takes_dir(s->tree, s->base, files[i].path, dlen, &staged, 0))
				err = rs_error_set(RS_EUSAGE, "'%.*s' has staged changes that the "
						   "commit would overwrite; commit or unstage "
						   "them first", (int)dlen, files[i].path);
			continue;
		}
		has = rs_index_file_find(idx, files[i].path, &staged, NULL);
		err = check_local_changes(s->base, &files[i], has ? &staged : NULL,
					  files[i].remove ? NULL : &s->pend[i].id,
					  s->pend[i].full);
	}
	return err;
}

/* Step 4: the commit object, and the journal says what comes. */
static int create_commit(struct commit_state *s, const struct rs_commit_options *opts)
{
	const git_commit *parents[1];
	int err = make_signature(&s->author, s->repo, opts, "AUTHOR");

	if (err == 0)
		err = make_signature(&s->committer, s->repo, opts, "COMMITTER");
	if (err)
		return err;
	parents[0] = s->parent;
	if (git_commit_create(&s->commit_id, s->repo, NULL, s->author, s->committer, NULL,
			      opts->message, s->tree, s->parent ? 1 : 0, parents) < 0)
		return git_fail(RS_EGENERIC, "cannot create the commit");
	snprintf(s->j.ref, sizeof(s->j.ref), "%s", s->refname);
	if (!s->unborn)
		git_oid_cpy(&s->j.old_id, &s->old_id);
	git_oid_cpy(&s->j.new_id, &s->commit_id);
	s->j.unborn = s->unborn;
	s->j.intent = 1;
	return journal_set_intent(s->r, &s->j, s->jpath.ptr);
}

/* Step 6: the commit point, a compare-and-swap of the branch. */
static int move_branch(struct commit_state *s, const struct rs_commit_options *opts)
{
	char reflog[256];
	int gerr;

	snprintf(reflog, sizeof(reflog), "commit%s: %.*s", s->unborn ? " (initial)" : "",
		 (int)strcspn(opts->message, "\n"), opts->message);
	if (s->unborn)
		gerr = git_reference_create(&s->newref, s->repo, s->refname, &s->commit_id, 0,
					    reflog);
	else
		gerr = git_reference_create_matching(&s->newref, s->repo, s->refname,
						     &s->commit_id, 1, &s->old_id, reflog);
	if (gerr == GIT_EMODIFIED || gerr == GIT_EEXISTS)
		return rs_error_set(RS_ERETRY, "'%s' moved while committing; try again",
				    s->refname);
	if (gerr == GIT_ELOCKED)
		return git_fail(RS_ERETRY, "cannot update the branch (another git command holds "
				"its lock; when none is running, remove the '.lock' file named)");
	if (gerr < 0)
		return git_fail(RS_EGENERIC, "cannot update the branch");
	return 0;
}

/*
 * Before the commit point, `err` failed: put the working tree (and the
 * index, unless writing it is what failed) back as HEAD has it. Returns
 * `err` with its message, and says so when the undo failed too.
 */
static int undo_worktree(struct commit_state *s, int err)
{
	struct rs_error_saved saved;
	size_t skipped;
	int ifail;

	rs_error_save(&saved, err);
	if (apply_tree(s->r, s->base, s->tree, s->index_failed ? APPLY_NO_INDEX : 0, NULL,
		       &skipped, &ifail)) {
		s->keep_journal = 1; /* the next results command finishes the undo */
		return rs_error_set(err, "%s; the working tree could not be put back (%s): "
				    "run 'results add' again to repair it", saved.message, rs_error_message());
	}
	return rs_error_restore(&saved);
}

int rs_commit_files(struct rs_repo *r, const struct rs_commit_file *files,
		    size_t nfiles, const struct rs_commit_options *opts,
		    char *commit_hex_out, int *changed)
{
	struct commit_state s;
	size_t skipped;
	int err, same = 0;

	if (changed)
		*changed = 0;
	err = check_request(files, nfiles, opts);
	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	s.r = r;
	s.repo = r->git;
	s.nfiles = nfiles;
	rs_buf_init(&s.jpath, 0);

	/* 0. The journal, which is also the lock among results processes. */
	journal_self(&s.j);
	err = rs_repo_state_path(&s.jpath, r, JOURNAL_LEAF);
	if (err == 0)
		err = journal_acquire(r, &s.j, s.jpath.ptr);
	if (err)
		goto out;
	s.locked = 1;

	err = read_head(&s);
	if (err == 0)
		err = build_tree(&s, files, &same);
	if (err == 0 && same) {
		if (commit_hex_out)
			git_oid_tostr(commit_hex_out, GIT_OID_HEXSZ + 1, &s.old_id);
		goto out;
	}
	if (err == 0)
		err = check_worktree(&s, files, opts);
	if (err == 0)
		err = create_commit(&s, opts);
	if (err)
		goto out;

	/* 5. Working tree, then index; 6. the commit point, last. */
	err = apply_tree(r, s.tree, s.base, opts->force ? APPLY_FORCE : 0, &s.idx, &skipped,
			 &s.index_failed);
	if (err == 0)
		err = move_branch(&s, opts);
	if (err) {
		err = undo_worktree(&s, err);
		goto out;
	}
	if (commit_hex_out)
		git_oid_tostr(commit_hex_out, GIT_OID_HEXSZ + 1, &s.commit_id);
	if (changed)
		*changed = 1;
out:
	commit_state_release(&s);
	return err;
}
