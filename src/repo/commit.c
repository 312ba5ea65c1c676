/*
 * One commit of a set of files through libgit2, without touching anything
 * else the user has in the index or working tree.
 *
 * Outline (why each step is where it is):
 *  1. Validate paths and read HEAD (or note an unborn branch).
 *  2. Write blobs and build the new tree from HEAD's tree with
 *     git_tree_create_updated: the commit never picks up other staged
 *     changes, unlike a commit made from the index.
 *  3. Refuse if a touched path has local changes we would overwrite.
 *  4. Create the commit object and write the new working-tree files under
 *     temporary names. Nothing is visible yet.
 *  5. Move the branch with a compare-and-swap against the HEAD read in
 *     step 1: this single ref update is the commit point. If it fails the
 *     temporary files are removed and the repository is as before.
 *  6. Rename the files into place and update just their index entries,
 *     with stat data taken from the files we wrote so that `git status`
 *     sees them clean without re-hashing.
 */
#include "repo/commit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

#define PATH_LIMIT 4096

static int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return rs_error_set(code, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

static int path_ok(const char *path)
{
	const char *p = path;
	size_t len = strlen(path);

	if (len == 0 || len >= PATH_LIMIT || path[0] == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && memcmp(p, "..", 2) == 0) ||
		    (n == 4 && strncasecmp(p, ".git", 4) == 0))
			return 0;
		p += n;
		if (*p == '/') {
			p++;
			if (!*p)
				return 0; /* trailing slash */
		}
	}
	return 1;
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

/* The id of `path` in `tree` (NULL tree: absent). 1 when present. */
static int tree_id(git_oid *out, git_tree *tree, const char *path)
{
	git_tree_entry *e = NULL;
	int present = 0;

	if (tree && git_tree_entry_bypath(&e, tree, path) == 0) {
		if (git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
			git_oid_cpy(out, git_tree_entry_id(e));
			present = 1;
		}
		git_tree_entry_free(e);
	}
	return present;
}

/*
 * Step 3: a path may be overwritten when its index entry and its working
 * file are each either what HEAD has, what we are about to write, or
 * absent.
 */
static int check_local_changes(struct rs_repo *r, git_index *index, git_tree *base,
			       const struct rs_commit_file *f, const git_oid *new_id,
			       const char *full)
{
	const git_index_entry *ie;
	git_oid head_id, wid;
	int in_head = tree_id(&head_id, base, f->path);
	struct stat st;

	ie = git_index_get_bypath(index, f->path, 0);
	if (ie && !(in_head && git_oid_equal(&ie->id, &head_id)) &&
	    !(new_id && git_oid_equal(&ie->id, new_id)))
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

/* Step 6: the index entry of a file we just wrote, from its stat data. */
static int index_add_written(git_index *index, const char *path, const char *full,
			     const git_oid *id, int executable)
{
	git_index_entry e;
	struct stat st;

	if (stat(full, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", full);
	memset(&e, 0, sizeof(e));
	e.ctime.seconds = (int32_t)st.st_ctim.tv_sec;
	e.ctime.nanoseconds = (uint32_t)st.st_ctim.tv_nsec;
	e.mtime.seconds = (int32_t)st.st_mtim.tv_sec;
	e.mtime.nanoseconds = (uint32_t)st.st_mtim.tv_nsec;
	e.dev = (uint32_t)st.st_dev;
	e.ino = (uint32_t)st.st_ino;
	e.mode = executable ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB;
	e.uid = (uint32_t)st.st_uid;
	e.gid = (uint32_t)st.st_gid;
	e.file_size = (uint32_t)st.st_size;
	git_oid_cpy(&e.id, id);
	e.path = path;
	if (git_index_add(index, &e) < 0)
		return git_fail(RS_EGENERIC, "cannot update the index");
	return 0;
}

/* Create the directories above `full` (a path inside the working tree). */
static int mkdir_parent(const char *full)
{
	char dir[PATH_LIMIT * 2];
	const char *slash = strrchr(full, '/');
	size_t n = slash ? (size_t)(slash - full) : 0;

	if (n == 0)
		return 0;
	if (n >= sizeof(dir))
		return rs_error_set(RS_EUSAGE, "path too long '%s'", full);
	memcpy(dir, full, n);
	dir[n] = '\0';
	return rs_fs_mkdir_p(dir, 0777);
}

struct pending {
	char *full;     /* working-tree path */
	char *tmp;      /* temporary name, NULL when nothing written */
	git_oid id;
};

int rs_commit_files(struct rs_repo *r, const struct rs_commit_file *files,
		    size_t nfiles, const struct rs_commit_options *opts,
		    char *commit_hex_out, int *changed)
{
	git_repository *repo = r->git;
	git_reference *head = NULL, *sym = NULL, *newref = NULL;
	git_commit *parent = NULL;
	git_tree *base = NULL, *tree = NULL;
	git_treebuilder *tb = NULL;
	git_index *index = NULL;
	git_signature *author = NULL, *committer = NULL;
	git_tree_update *updates = NULL;
	struct pending *pend = NULL;
	git_oid old_id, tree_oid, commit_id;
	const git_commit *parents[1];
	char *refname = NULL;
	char reflog[256];
	size_t i, j, nupdates = 0;
	int gerr, err = 0, unborn = 0, committed = 0;

	if (changed)
		*changed = 0;

	if (!opts || !opts->message || !opts->message[0])
		return rs_error_set(RS_EUSAGE, "a commit needs a message");
	for (i = 0; i < nfiles; i++) {
		if (!path_ok(files[i].path))
			return rs_error_set(RS_EUSAGE, "bad path '%s' for a commit", files[i].path);
		if (!files[i].remove && !files[i].data && files[i].size)
			return rs_error_set(RS_EUSAGE, "no content for '%s'", files[i].path);
		for (j = 0; j < i; j++)
			if (strcmp(files[i].path, files[j].path) == 0)
				return rs_error_set(RS_EUSAGE, "'%s' given twice", files[i].path);
	}

	/* 1. HEAD. */
	gerr = git_repository_head(&head, repo);
	if (gerr == GIT_EUNBORNBRANCH) {
		unborn = 1;
		if (git_reference_lookup(&sym, repo, "HEAD") < 0 ||
		    git_reference_type(sym) != GIT_REFERENCE_SYMBOLIC) {
			err = git_fail(RS_EGENERIC, "cannot read HEAD");
			goto out;
		}
		refname = strdup(git_reference_symbolic_target(sym));
	} else if (gerr < 0) {
		err = git_fail(RS_EGENERIC, "cannot read HEAD");
		goto out;
	} else {
		refname = strdup(git_repository_head_detached(repo) ? "HEAD"
								    : git_reference_name(head));
		git_oid_cpy(&old_id, git_reference_target(head));
		if (git_commit_lookup(&parent, repo, &old_id) < 0 ||
		    git_commit_tree(&base, parent) < 0) {
			err = git_fail(RS_EGENERIC, "cannot read the HEAD commit");
			goto out;
		}
	}
	if (!refname) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (unborn) {
		git_oid empty;

		if (git_treebuilder_new(&tb, repo, NULL) < 0 || git_treebuilder_write(&empty, tb) < 0 ||
		    git_tree_lookup(&base, repo, &empty) < 0) {
			err = git_fail(RS_EGENERIC, "cannot make an empty tree");
			goto out;
		}
	}

	/* 2. Blobs and the new tree. */
	updates = calloc(nfiles ? nfiles : 1, sizeof(*updates));
	pend = calloc(nfiles ? nfiles : 1, sizeof(*pend));
	if (!updates || !pend) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < nfiles; i++) {
		const struct rs_commit_file *f = &files[i];
		git_oid cur;

		pend[i].full = malloc(strlen(r->workdir) + strlen(f->path) + 1);
		if (!pend[i].full) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		sprintf(pend[i].full, "%s%s", r->workdir, f->path);
		if (f->remove) {
			if (!tree_id(&cur, base, f->path))
				continue;
			updates[nupdates].action = GIT_TREE_UPDATE_REMOVE;
			updates[nupdates].path = f->path;
			nupdates++;
			continue;
		}
		if (git_blob_create_from_buffer(&pend[i].id, repo, f->data ? f->data : "", f->size) < 0) {
			err = git_fail(RS_EGENERIC, "cannot write a blob");
			goto out;
		}
		updates[nupdates].action = GIT_TREE_UPDATE_UPSERT;
		git_oid_cpy(&updates[nupdates].id, &pend[i].id);
		updates[nupdates].filemode = f->executable ? GIT_FILEMODE_BLOB_EXECUTABLE
							   : GIT_FILEMODE_BLOB;
		updates[nupdates].path = f->path;
		nupdates++;
	}
	if (git_tree_create_updated(&tree_oid, repo, base, nupdates, updates) < 0) {
		err = git_fail(RS_EUSAGE, "cannot build the new tree");
		goto out;
	}
	if (!unborn && git_oid_equal(&tree_oid, git_tree_id(base))) {
		if (commit_hex_out)
			git_oid_tostr(commit_hex_out, GIT_OID_HEXSZ + 1, &old_id);
		if (changed)
			*changed = 0;
		goto out;
	}
	if (git_tree_lookup(&tree, repo, &tree_oid) < 0) {
		err = git_fail(RS_EGENERIC, "cannot read the new tree");
		goto out;
	}

	/* 3. Local changes in the way. */
	if (git_repository_index(&index, repo) < 0 || git_index_read(index, 0) < 0) {
		err = git_fail(RS_EGENERIC, "cannot read the index");
		goto out;
	}
	if (git_index_has_conflicts(index)) {
		err = rs_error_set(RS_EUSAGE, "the index has unresolved conflicts; resolve them first");
		goto out;
	}
	for (i = 0; i < nfiles && !opts->force; i++) {
		err = check_local_changes(r, index, base, &files[i],
					  files[i].remove ? NULL : &pend[i].id, pend[i].full);
		if (err)
			goto out;
	}

	/* 4. The commit object and the new files under temporary names. */
	err = make_signature(&author, repo, opts, "AUTHOR");
	if (err == 0)
		err = make_signature(&committer, repo, opts, "COMMITTER");
	if (err)
		goto out;
	parents[0] = parent;
	if (git_commit_create(&commit_id, repo, NULL, author, committer, NULL, opts->message,
			      tree, parent ? 1 : 0, parents) < 0) {
		err = git_fail(RS_EGENERIC, "cannot create the commit");
		goto out;
	}
	for (i = 0; i < nfiles; i++) {
		struct rs_buf tmp = RS_BUF_INIT;
		int fd = -1;

		if (files[i].remove)
			continue;
		err = mkdir_parent(pend[i].full);
		if (err == 0)
			err = rs_fs_tmpfile_near(&tmp, pend[i].full, &fd);
		if (err == 0) {
			pend[i].tmp = rs_buf_detach(&tmp, NULL);
			err = rs_fs_write_all(fd, files[i].data ? files[i].data : "", files[i].size);
			if (err == 0 && fchmod(fd, files[i].executable ? 0755 : 0644) != 0)
				err = rs_error_errno(RS_EGENERIC, "cannot set the mode of '%s'",
						     pend[i].full);
			if (close(fd) != 0 && err == 0)
				err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", pend[i].full);
		}
		rs_buf_release(&tmp);
		if (err)
			goto out;
	}

	/* 5. The commit point. */
	snprintf(reflog, sizeof(reflog), "commit%s: %.*s", unborn ? " (initial)" : "",
		 (int)strcspn(opts->message, "\n"), opts->message);
	if (unborn)
		gerr = git_reference_create(&newref, repo, refname, &commit_id, 0, reflog);
	else
		gerr = git_reference_create_matching(&newref, repo, refname, &commit_id, 1,
						     &old_id, reflog);
	if (gerr == GIT_EMODIFIED || gerr == GIT_EEXISTS || gerr == GIT_ELOCKED) {
		err = rs_error_set(RS_ERETRY, "'%s' moved while committing; try again", refname);
		goto out;
	}
	if (gerr < 0) {
		err = git_fail(RS_EGENERIC, "cannot update the branch");
		goto out;
	}
	committed = 1;
	if (commit_hex_out)
		git_oid_tostr(commit_hex_out, GIT_OID_HEXSZ + 1, &commit_id);
	if (changed)
		*changed = 1;

	/* 6. Working tree and index. */
	for (i = 0; i < nfiles; i++) {
		if (files[i].remove) {
			if (unlink(pend[i].full) != 0 && errno != ENOENT) {
				err = rs_error_errno(RS_EGENERIC, "cannot remove '%s'", pend[i].full);
				goto out;
			}
			if (git_index_get_bypath(index, files[i].path, 0) &&
			    git_index_remove(index, files[i].path, 0) < 0) {
				err = git_fail(RS_EGENERIC, "cannot update the index");
				goto out;
			}
			continue;
		}
		if (rename(pend[i].tmp, pend[i].full) != 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", pend[i].full);
			goto out;
		}
		free(pend[i].tmp);
		pend[i].tmp = NULL;
		err = index_add_written(index, files[i].path, pend[i].full, &pend[i].id,
					files[i].executable);
		if (err)
			goto out;
	}
	if (git_index_write(index) < 0) {
		err = git_fail(RS_EGENERIC, "cannot write the index");
		goto out;
	}
out:
	if (err && committed) {
		char hex[GIT_OID_HEXSZ + 1];

		git_oid_tostr(hex, sizeof(hex), &commit_id);
		err = rs_error_wrap(err, "commit %s was made but the working tree is behind "
				    "(run 'git reset --hard' to bring it up to date)", hex);
	}
	for (i = 0; pend && i < nfiles; i++) {
		if (pend[i].tmp) {
			unlink(pend[i].tmp);
			free(pend[i].tmp);
		}
		free(pend[i].full);
	}
	free(pend);
	free(updates);
	free(refname);
	git_signature_free(author);
	git_signature_free(committer);
	git_index_free(index);
	git_tree_free(tree);
	git_tree_free(base);
	git_treebuilder_free(tb);
	git_commit_free(parent);
	git_reference_free(newref);
	git_reference_free(sym);
	git_reference_free(head);
	return err;
}
