/*
 * `results clone`: the developer clone of a long results repository
 * (results/setup.h, rs_setup_clone; docs/user-guide.md, "A developer
 * clone of a long history").
 *
 * What makes it small: a results repository of 100,000 runs is 100,000
 * commits, each rewriting four or five trees, and 100 KB of run.json and
 * summary.md a run. No command of results walks the repository's history
 * (they read the files committed at HEAD, and the index shards say which
 * runs there are), so the clone holds one commit (`--depth 1`: its trees,
 * not the earlier commits'), the small files (`--filter=blob:limit=1k`:
 * the sessions' LFS pointers, which gc and verify read for every run,
 * pins.txt, .results.json), and the files of a sparse work tree without
 * runs/ and index/ (README.md and the set-up files). The index shards and
 * a run folder's larger files come when a command reads them: results
 * runs git for them (libgit2 cannot fetch), batched per command
 * (rs_git_fetch_promised_many). Checking the shards out at the clone
 * would make git fetch all of them at once (45 MB, two thirds of the
 * time of a clone of 100,000 runs) for commands that mostly read the
 * newest few. A full clone (`full`) is a plain clone of every commit and
 * file but the sessions.
 *
 * git does every step, so that the user's credentials, url.insteadOf and
 * protocol settings apply as to their own `git clone`; each step has a
 * deadline and its output a cap. Sessions are never downloaded here
 * (GIT_LFS_SKIP_SMUDGE=1): the clone is not set up for the store yet.
 *
 * `results init --sparse` (rs_setup_sparse) gives a clone made otherwise
 * (a full clone, CI's actions/checkout) the same work tree and index, by
 * the same steps, once it checked that nothing of the user's is lost.
 */
#define _GNU_SOURCE
#include "results/setup.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/gitremote.h"
#include "results/buf.h"
#include "util/fs.h"

#define CLONE_DEADLINE_S 3600    /* the clone itself: a slow link to a big repository */
#define STEP_DEADLINE_S 600      /* config, the checkout */
#define STEP_OUTPUT_MAX (1u << 20)
#define STATUS_OUTPUT_MAX (4u << 20) /* git status of a work tree to make sparse */

/*
 * What the sparse work tree holds: the files at the top (README.md, the
 * set-up files), no folder: neither runs/ nor the index shards (60 KB
 * each, 45 MB at 100,000 runs; results reads them from git objects and
 * fetches those it reads, in one call per load). In git's cone mode
 * (core.sparseCheckoutCone), which matches by folder instead of trying
 * every pattern on every path: the checkout of 300,000 entries takes 1.4 s
 * instead of 3.1 s in unpack_trees.
 */
static const char sparse_patterns[] = "/*\n!/*/\n";

static const char *const git_env[] = { "GIT_LFS_SKIP_SMUDGE=1", NULL };

/*
 * The URL git is given: a local folder as file://<absolute path>, since
 * git clones a plain path by copying its objects and then ignores
 * --depth and --filter; anything else as it is.
 */
static int clone_url(struct rs_buf *out, const char *url)
{
	char abs[PATH_MAX];
	struct stat st;

	if (!strstr(url, "://") && stat(url, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!realpath(url, abs))
			return rs_error_errno(RS_EUSAGE, "cannot resolve '%s'", url);
		return rs_buf_printf(out, "file://%s", abs);
	}
	return rs_buf_puts(out, url);
}

/*
 * The folder git would make for `url` when none is given: its last path
 * component without a trailing ".git" ("org/perf-results.git" ->
 * "perf-results"). RS_EUSAGE when that leaves no usable name.
 */
static int default_dir(struct rs_buf *out, const char *url)
{
	size_t end = strlen(url), start;

	while (end > 0 && url[end - 1] == '/')
		end--;
	if (end >= 4 && memcmp(url + end - 4, ".git", 4) == 0)
		end -= 4;
	while (end > 0 && url[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && url[start - 1] != '/' && url[start - 1] != ':')
		start--;
	if (start == end || (end - start == 1 && url[start] == '.') ||
	    (end - start == 2 && url[start] == '.' && url[start + 1] == '.'))
		return rs_error_set(RS_EUSAGE, "cannot tell a folder name from '%s': give one", url);
	return rs_buf_put(out, url + start, end - start);
}

/* `git -C <dir> config <key> <value>` */
static int set_config(const char *dir, const char *key, const char *value)
{
	const char *args[] = { "-C", dir, "config", key, value };
	struct rs_buf ignored = RS_BUF_INIT;
	int err;

	err = rs_git_run(NULL, git_env, args, 5, &ignored, STEP_OUTPUT_MAX, STEP_DEADLINE_S,
			 "config");
	rs_buf_release(&ignored);
	return err;
}

/*
 * A file of the git dir of the clone in `dir` ("info/sparse-checkout",
 * "index"), appended to `out`: git's own answer (`rev-parse --git-path`:
 * under .git/, or a linked work tree's git dir), relative to `dir` unless
 * absolute.
 */
static int git_path(struct rs_buf *out, const char *dir, const char *rel)
{
	const char *args[] = { "-C", dir, "rev-parse", "--git-path", rel };
	struct rs_buf said = RS_BUF_INIT;
	int err;

	err = rs_git_run(NULL, git_env, args, 5, &said, PATH_MAX, STEP_DEADLINE_S, "rev-parse");
	if (err)
		goto out;
	while (said.len && (said.ptr[said.len - 1] == '\n' || said.ptr[said.len - 1] == '\r'))
		said.ptr[--said.len] = '\0';
	if (!said.len || memchr(said.ptr, '\n', said.len)) {
		err = rs_error_set(RS_EGENERIC, "git rev-parse --git-path gave no path");
		goto out;
	}
	if (said.ptr[0] == '/')
		err = rs_buf_puts(out, said.ptr);
	else
		err = rs_buf_printf(out, "%s/%s", dir, said.ptr);
out:
	rs_buf_release(&said);
	return err;
}

/*
 * The sparse work tree of the clone in `dir`: core.sparseCheckout (cone
 * mode) and .git/info/sparse-checkout (git sparse-checkout is not used: it sets
 * extensions.worktreeConfig, which the libgit2 of Debian 12 refuses to
 * open). The run folders are left out of the work tree, and with git's
 * sparse index (index.sparse) out of .git/index too: "runs/" and
 * "index/" are one entry each (a sparse directory entry, the id of the
 * folder's tree) instead of three entries a run (40 MB at 100,000 runs,
 * the largest part of a clone with a full index). The read-tree that
 * checks the clone out (or, in a full clone, takes the folders out of
 * it) writes the index sparse. libgit2 refuses such an index (its "sdir"
 * extension); results reads and splices it itself (git/indexfile.h), and
 * `results add` keeps it sparse. `*changed` (may be NULL) is set when a
 * setting or the patterns were not so yet.
 */
static int make_sparse(const char *dir, int *changed)
{
	static const char *const keys[] = { "core.sparseCheckout", "core.sparseCheckoutCone",
					    "index.sparse" };
	struct rs_buf path = RS_BUF_INIT, value = RS_BUF_INIT, old = RS_BUF_INIT;
	const char *get[] = { "-C", dir, "config", "--get", NULL };
	int err = 0, differs = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		rs_buf_clear(&value);
		get[4] = keys[i];
		err = rs_git_run(NULL, git_env, get, 5, &value, STEP_OUTPUT_MAX, STEP_DEADLINE_S,
				 "config");
		if (err) {
			/* exit 1, unset (or unreadable): set below, which says why if it fails */
			rs_error_clear();
			rs_buf_clear(&value);
		}
		if (strcmp(rs_buf_cstr(&value), "true\n") == 0)
			continue;
		differs = 1;
		err = set_config(dir, keys[i], "true");
		if (err)
			goto out;
	}
	err = git_path(&path, dir, "info/sparse-checkout");
	if (err)
		goto out;
	err = rs_fs_read_file(&old, path.ptr, sizeof(sparse_patterns));
	if (!err && old.len == sizeof(sparse_patterns) - 1 &&
	    memcmp(old.ptr, sparse_patterns, old.len) == 0)
		goto out;
	/* missing, longer or other patterns: written below */
	rs_error_clear();
	differs = 1;
	err = rs_fs_mkdir_parent(path.ptr, 0777);
	if (err)
		goto out;
	err = rs_fs_write_file_atomic(path.ptr, sparse_patterns, sizeof(sparse_patterns) - 1);
out:
	if (!err && changed)
		*changed = differs;
	rs_buf_release(&path);
	rs_buf_release(&value);
	rs_buf_release(&old);
	return err;
}

/*
 * `git read-tree -m -u HEAD` in `dir`: the work tree and index as the
 * patterns say. That is all a clone made with --no-checkout needs (its
 * index is new). A work tree already checked out takes more:
 *  - the index's stat data is refreshed first: read-tree does not, and
 *    leaves every file whose stat data is stale (a copied or restored
 *    folder) in the work tree ("not uptodate") yet exits 0; so what it did
 *    is checked after: no runs/ or index/ left in the work tree;
 *  - git 2.39 collapses into sparse folders only part of an index that
 *    was full (the folders whose entries were all skip-worktree already),
 *    and never collapses one again that it wrote sparse: so the index is
 *    then written anew, `read-tree --reset -u HEAD` into a new file
 *    renamed over .git/index, which git writes wholly sparse (what is left
 *    in the work tree, the files at the top, is HEAD's: the check before
 *    refused any change).
 */
static int apply_sparse(const char *dir, int checked_out)
{
	const char *refresh[] = { "-C", dir, "update-index", "-q", "--refresh" };
	const char *args[] = { "-C", dir, "read-tree", "-m", "-u", "HEAD" };
	const char *anew[] = { "-C", dir, "read-tree", "--reset", "-u", "HEAD" };
	static const char *const folders[] = { "runs", "index" };
	const char *env[] = { "GIT_LFS_SKIP_SMUDGE=1", NULL, NULL };
	struct rs_buf ignored = RS_BUF_INIT, path = RS_BUF_INIT, index = RS_BUF_INIT;
	struct rs_buf fresh = RS_BUF_INIT, index_env = RS_BUF_INIT;
	struct stat st;
	int err = 0;

	if (checked_out) {
		/* exit 1 when a file differs: rs_setup_sparse_check refused that */
		err = rs_git_run(NULL, git_env, refresh, 5, &ignored, STEP_OUTPUT_MAX,
				 CLONE_DEADLINE_S, "update-index --refresh");
		if (err)
			goto out;
	}
	/* the checkout of what the patterns keep; git fetches its files in one batch */
	err = rs_git_run(NULL, git_env, args, 6, &ignored, STEP_OUTPUT_MAX, CLONE_DEADLINE_S,
			 "read-tree");
	if (err || !checked_out)
		goto out;
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++) {
		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s/%s", dir, folders[i]);
		if (err)
			goto out;
		if (lstat(path.ptr, &st) == 0) {
			err = rs_error_set(RS_EGENERIC, "git read-tree left '%s' in the work tree "
					   "of '%s' (files it found changed?): see 'git status'",
					   folders[i], dir);
			goto out;
		}
	}
	err = git_path(&index, dir, "index");
	if (err)
		goto out;
	err = rs_buf_printf(&fresh, "%s.results-sparse", index.ptr);
	if (err)
		goto out;
	err = rs_buf_printf(&index_env, "GIT_INDEX_FILE=%s", fresh.ptr);
	if (err)
		goto out;
	env[1] = index_env.ptr;
	if (unlink(fresh.ptr) != 0 && errno != ENOENT) {
		err = rs_error_errno(RS_EGENERIC, "cannot remove '%s'", fresh.ptr);
		goto out;
	}
	err = rs_git_run(NULL, env, anew, 6, &ignored, STEP_OUTPUT_MAX, CLONE_DEADLINE_S,
			 "read-tree --reset");
	if (!err && rename(fresh.ptr, index.ptr) != 0)
		err = rs_error_errno(RS_EGENERIC, "cannot rename '%s' to '%s'", fresh.ptr,
				     index.ptr);
	if (err)
		unlink(fresh.ptr); /* best effort: the error to report is the one above */
out:
	rs_buf_release(&ignored);
	rs_buf_release(&path);
	rs_buf_release(&index);
	rs_buf_release(&fresh);
	rs_buf_release(&index_env);
	return err;
}

#define SHOWN_CHANGES 3

/*
 * What the sparse checkout of a work tree in use would lose, from `git
 * status --porcelain -z` (`said`): any change to a tracked file (the
 * read-tree of HEAD resets the index, so a staged change would go, and
 * the run folders' files leave the work tree), and untracked files under
 * a folder the checkout removes. RS_EUSAGE naming the first few paths.
 */
static int refuse_changes(const char *dir, const struct rs_buf *said)
{
	struct rs_buf shown = RS_BUF_INIT;
	size_t pos = 0, count = 0;
	int err = 0;

	while (pos + 3 < said->len) {
		const char *entry = said->ptr + pos;
		const char *end = memchr(entry, '\0', said->len - pos);
		const char *path = entry + 3;
		int untracked = entry[0] == '?';

		if (!end)
			break;
		pos = (size_t)(end - said->ptr) + 1;
		if (entry[0] == 'R' || entry[0] == 'C' || entry[1] == 'R' || entry[1] == 'C') {
			/* a rename's source follows */
			const char *src_end = memchr(said->ptr + pos, '\0', said->len - pos);

			pos = src_end ? (size_t)(src_end - said->ptr) + 1 : said->len;
		}
		if (untracked && strncmp(path, "runs/", 5) != 0 && strncmp(path, "index/", 6) != 0)
			continue;
		if (count++ < SHOWN_CHANGES) {
			err = rs_buf_printf(&shown, "%s'%s' (%s)", count > 1 ? ", " : "", path,
					    untracked ? "untracked" : "changed");
			if (err)
				goto out;
		}
	}
	if (count)
		err = rs_error_set(RS_EUSAGE, "cannot make '%s' sparse: %zu uncommitted change%s "
				   "would be lost: %s%s; commit them, or move them out of runs/ "
				   "and index/, first", dir, count, count == 1 ? "" : "s", shown.ptr,
				   count > SHOWN_CHANGES ? ", ..." : "");
out:
	rs_buf_release(&shown);
	return err;
}

int rs_setup_sparse_check(const char *dir)
{
	const char *status[] = { "-C", dir, "status", "--porcelain", "-z",
				 "--untracked-files=all", "--ignore-submodules=none" };
	struct rs_buf said = RS_BUF_INIT;
	int err;

	err = rs_git_run(NULL, git_env, status, 7, &said, STATUS_OUTPUT_MAX, CLONE_DEADLINE_S,
			 "status");
	if (err == RS_ECORRUPT)
		err = rs_error_set(RS_EUSAGE, "cannot make '%s' sparse: its work tree has more "
				   "uncommitted changes than git status can list here (%u bytes); "
				   "commit them first", dir, (unsigned)STATUS_OUTPUT_MAX);
	if (!err)
		err = refuse_changes(dir, &said);
	rs_buf_release(&said);
	return err;
}

int rs_setup_sparse(const char *dir, int checked, int *changed)
{
	int err, differs = 0;

	if (!checked) {
		err = rs_setup_sparse_check(dir);
		if (err)
			return err;
	}
	err = make_sparse(dir, &differs);
	if (err)
		return err;
	err = apply_sparse(dir, 1);
	if (!err && changed)
		*changed = differs;
	return err;
}

int rs_setup_clone(const struct rs_setup_clone_options *o, struct rs_buf *dir_out)
{
	struct rs_buf url = RS_BUF_INIT, depth = RS_BUF_INIT, branch = RS_BUF_INIT;
	struct rs_buf ignored = RS_BUF_INIT;
	const char *args[16];
	size_t nargs = 0;
	int err;

	if (!o->url || !*o->url || o->url[0] == '-')
		return rs_error_set(RS_EUSAGE, "'%s' is not a git URL", o->url ? o->url : "");
	if (o->dir && (!*o->dir || o->dir[0] == '-'))
		return rs_error_set(RS_EUSAGE, "'%s' is not a folder name for the clone", o->dir);
	if (o->branch && (!*o->branch || o->branch[0] == '-'))
		return rs_error_set(RS_EUSAGE, "'%s' is not a branch name", o->branch);
	err = clone_url(&url, o->url);
	if (err)
		goto out;
	if (o->dir)
		err = rs_buf_puts(dir_out, o->dir);
	else
		err = default_dir(dir_out, o->url);
	if (err)
		goto out;
	args[nargs++] = "clone";
	args[nargs++] = "--quiet";
	if (o->depth) {
		err = rs_buf_printf(&depth, "--depth=%u", o->depth);
		if (err)
			goto out;
		args[nargs++] = depth.ptr;
	}
	if (o->branch) {
		err = rs_buf_printf(&branch, "--branch=%s", o->branch);
		if (err)
			goto out;
		args[nargs++] = branch.ptr;
	}
	if (!o->full) {
		/* blob:limit, not blob:none: the LFS pointers stay local (gc, verify) */
		args[nargs++] = "--filter=blob:limit=1k";
		args[nargs++] = "--no-checkout";
	}
	args[nargs++] = "--";
	args[nargs++] = url.ptr;
	args[nargs++] = dir_out->ptr;
	err = rs_git_run(NULL, git_env, args, nargs, &ignored, STEP_OUTPUT_MAX, CLONE_DEADLINE_S,
			 "clone");
	if (err || o->full)
		goto out;
	err = make_sparse(dir_out->ptr, NULL);
	if (err)
		goto out;
	err = apply_sparse(dir_out->ptr, 0);
out:
	rs_buf_release(&url);
	rs_buf_release(&depth);
	rs_buf_release(&branch);
	rs_buf_release(&ignored);
	return err;
}
