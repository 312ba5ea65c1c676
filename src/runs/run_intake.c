/*
 * Taking in a run's files: the arguments of `results add` (a session, a
 * companion file or a run folder), checked, read once through one
 * descriptor, sorted into roles, and kept in memory or (sessions) copied
 * into .git/lfs/tmp by run_copy.c.
 */
#include "runs/run.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runs/run_internal.h"
#include "runs/stats.h"
#include "session/phases.h"
#include "session/summary.h"
#include "results/error.h"
#include "util/array.h"
#include "util/fs.h"
#include "util/path.h"

int rs_run_add_stats_file(struct rs_run *run, const char *path)
{
	return rs_stats_read_json_file(run->stats, NULL, path);
}

/* ---- files ---------------------------------------------------------- */

static int check_name(const struct rs_run *run, const char *name)
{
	/* What fetch will accept back (util/path.h), and no longer than 200. */
	if (strlen(name) > 200 ||
	    rs_path_check(name, strlen(name), RS_PATH_NO_DOTFILES, "file name") != 0)
		return rs_error_set(RS_EUSAGE, "cannot store a file named '%s' in a run", name);
	if (strcmp(name, "run.json") == 0 || strcmp(name, "summary.md") == 0)
		return rs_error_set(RS_EUSAGE,
				    "'%s' is written by results itself; rename that file", name);
	for (size_t i = 0; i < run->nfiles; i++)
		if (strcmp(run->files[i].name, name) == 0)
			return rs_error_set(RS_EUSAGE,
					    "two files named '%s' in one run", name);
	if (run->nfiles >= RS_RUN_MAX_FILES)
		return rs_error_set(RS_EUSAGE, "more than %d files in one run",
				    RS_RUN_MAX_FILES);
	return 0;
}

static struct rs_run_file *new_file(struct rs_run *run, const char *name,
				    const char *role)
{
	struct rs_run_file *n, *f;

	n = realloc(run->files, (run->nfiles + 1) * sizeof(*n));
	if (!n) {
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	run->files = n;
	f = &run->files[run->nfiles];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name) {
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	f->role = role;
	rs_buf_init(&f->blob, 0);
	run->nfiles++;
	return f;
}

/* Drop the last file again (after a failure while filling it). */
static void drop_last_file(struct rs_run *run)
{
	rs_run_file_release(&run->files[--run->nfiles]);
}

/*
 * The committed "phases" of .results.json (session/phases.h), or NULL in
 * *out when there are none; RS_ECORRUPT when the file is not a JSON
 * object (rs_phases_new judges the setting itself).
 */
static int phases_config(struct rs_repo *repo, json_t **out)
{
	json_t *config = NULL, *phases;
	int err = rs_repo_read_marker(repo, NULL, &config);

	*out = NULL;
	phases = json_object_get(config, "phases");
	if (!err && phases)
		*out = json_incref(phases);
	json_decref(config);
	return err;
}

static int add_session(struct rs_run *run, struct rs_repo *repo, struct rs_run_file *f,
		       int fd, const char *path)
{
	struct rs_summary *sum = NULL;
	struct rs_phases *ph = NULL;
	struct rs_session_callbacks chain;
	struct rs_summary_options opts;
	json_t *summary = NULL, *phases_cfg = NULL;
	struct rs_buf md = RS_BUF_INIT;
	int err;

	/* the main session's phases ride on the same single pass */
	memset(&opts, 0, sizeof(opts));
	if (run->main_session < 0) {
		err = phases_config(repo, &phases_cfg);
		if (!err)
			err = rs_phases_new(&ph, phases_cfg);
		if (err)
			goto out;
		rs_phases_callbacks(ph, &chain);
		opts.chain = &chain;
	}
	err = rs_summary_new(&sum, &opts);
	if (err)
		goto out;
	/* Every session is parsed (a broken one is refused); only the main
	   one's summary is kept. */
	err = rs_run_copy_to_lfs(repo, f, fd, path, sum);
	if (err)
		goto out;
	if (run->main_session >= 0)
		goto out;
	err = rs_summary_json(sum, &summary);
	if (err)
		goto out;
	err = rs_phases_json(ph, rs_summary_parser(sum), &run->phases);
	if (err)
		goto out;
	err = rs_summary_markdown(summary, &md);
	if (err)
		goto out;
	run->summary = summary;
	summary = NULL;
	run->session_md = rs_buf_detach(&md, NULL);
	run->main_session = (int)(f - run->files);
out:
	json_decref(summary);
	json_decref(phases_cfg);
	rs_buf_release(&md);
	rs_summary_free(sum);
	rs_phases_free(ph);
	return err;
}

/* Stats-like files: read their values, then store the bytes. */
static int read_known(struct rs_run *run, const struct rs_run_file *f, int fd, const char *path,
		      const struct rs_buf *text)
{
	char stem[256];
	FILE *csv;
	int err, copy;

	if (strcmp(f->role, "stats") == 0)
		return rs_stats_flatten_json(run->stats, NULL, text->ptr, text->len, path);
	if (strcmp(f->role, "args") == 0)
		return rs_stats_flatten_json(run->args, NULL, text->ptr, text->len, path);
	if (strcmp(f->role, "logged-stats") == 0) {
		err = rs_stats_file_stem(stem, sizeof(stem), f->name);
		if (err)
			return err;
		/* Read again from the descriptor already checked, not by name. */
		if (lseek(fd, 0, SEEK_SET) < 0)
			return rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
		copy = dup(fd);
		csv = copy < 0 ? NULL : fdopen(copy, "r");
		if (!csv) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
			if (copy >= 0)
				close(copy);
			return err;
		}
		err = rs_stats_read_csv_stream(run->stats, stem, csv, path);
		fclose(csv);
		return err;
	}
	return 0;
}

/*
 * One file of the run. `direct`: named on the command line, so a symlink
 * is followed (the user chose it, as cp does); a file found in a run
 * folder is opened without following one (a link there could point at
 * anything, say a credentials file, and its bytes would be committed).
 * The file is opened once and every read goes through that descriptor.
 */
static int add_file(struct rs_run *run, struct rs_repo *repo, const char *path,
		    const char *name, int direct)
{
	const char *role = rs_stats_file_role(name);
	struct rs_run_file *f;
	struct stat st;
	int err, is_session, fd = -1;

	err = check_name(run, name);
	if (err)
		return err;
	err = rs_fs_open_regular(path, !direct, &fd);
	if (err)
		return err;
	if (fstat(fd, &st) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
		close(fd);
		return err;
	}
	/* A file named on the command line is a session unless its name says
	   it is one of the known companions. */
	if (direct && strcmp(role, "other") == 0)
		role = run->raw ? "other" : "session";
	is_session = strcmp(role, "session") == 0;
	f = new_file(run, name, role);
	if (!f) {
		close(fd);
		return rs_error_last();
	}
	if (is_session && !run->raw) {
		err = add_session(run, repo, f, fd, path);
	} else if (is_session) {
		err = rs_run_copy_to_lfs(repo, f, fd, path, NULL);
	} else if (!run->raw && (uint64_t)st.st_size > RS_RUN_SMALL_FILE &&
		   (strcmp(role, "stats") == 0 || strcmp(role, "args") == 0)) {
		err = rs_error_set(RS_EUSAGE, "'%s' is larger than %u bytes: too "
				   "large for a stats file", path, RS_RUN_SMALL_FILE);
	} else if ((uint64_t)st.st_size > RS_RUN_BLOB_MAX) {
		err = rs_error_set(RS_EUSAGE, "'%s' is larger than %u MiB: too large to keep in "
				   "git (only sessions go to Git LFS); compress it or leave it out "
				   "of the run", path, RS_RUN_BLOB_MAX >> 20);
	} else {
		/* Any size up to the cap, as it is (RS_RUN_BLOB_MAX). */
		err = rs_fs_read_fd(&f->blob, fd, path, RS_RUN_BLOB_MAX);
		f->size = f->blob.len;
		if (!err && !run->raw)
			err = read_known(run, f, fd, path, &f->blob);
	}
	close(fd);
	if (err)
		drop_last_file(run);
	return err;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Append a copy of `name` to the growing array `*names`. */
static int push_name(char ***names, size_t *n, size_t *alloc, const char *name)
{
	int err = rs_array_grow(names, alloc, *n + 1, sizeof(**names), 16);

	if (err)
		return err;
	(*names)[*n] = strdup(name);
	if (!(*names)[*n])
		return rs_error_set(RS_EGENERIC, "out of memory");
	(*n)++;
	return 0;
}

/*
 * The names of the regular files in `dir` (not recursing, no dot files),
 * sorted; a symbolic link there is refused, never read through. The
 * caller frees *names_out (free_names) on success.
 */
static int list_folder(char ***names_out, size_t *n_out, DIR *d, const char *dir)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	for (;;) {
		struct stat st;

		de = readdir(d);
		if (!de)
			break;
		if (de->d_name[0] == '.')
			continue;
		rs_buf_clear(&path);
		err = rs_fs_join(&path, dir, de->d_name);
		if (err)
			goto out;
		/* lstat: a link in the folder is refused, never read through. */
		if (lstat(path.ptr, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			err = rs_error_set(RS_EUSAGE, "'%s' is a symbolic link; links in a run "
					   "folder are not followed (copy the file itself into "
					   "the folder, or remove the link)", path.ptr);
			goto out;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (n >= RS_RUN_MAX_FILES) {
			err = rs_error_set(RS_EUSAGE, "'%s' holds more than %d files: is it "
					   "a run folder?", dir, RS_RUN_MAX_FILES);
			goto out;
		}
		err = push_name(&names, &n, &alloc, de->d_name);
		if (err)
			goto out;
	}
	if (n == 0) {
		err = rs_error_set(RS_EUSAGE, "'%s' holds no files", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), rs_run_cmp_str);
out:
	rs_buf_release(&path);
	if (err) {
		free_names(names, n);
		return err;
	}
	*names_out = names;
	*n_out = n;
	return 0;
}

/* The regular files of `dir` (not recursing), in name order. */
static int add_folder(struct rs_run *run, struct rs_repo *repo, const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL;
	size_t n = 0;
	struct rs_buf path = RS_BUF_INIT;
	int err;

	if (!d)
		return rs_error_errno(RS_EGENERIC, "cannot list '%s'", dir);
	err = list_folder(&names, &n, d, dir);
	for (size_t i = 0; i < n && !err; i++) {
		rs_buf_clear(&path);
		err = rs_fs_join(&path, dir, names[i]);
		if (!err)
			err = add_file(run, repo, path.ptr, names[i], 0);
	}
	free_names(names, n);
	rs_buf_release(&path);
	closedir(d);
	return err;
}

int rs_run_add_path(struct rs_run *run, struct rs_repo *repo, const char *path)
{
	struct stat st;
	const char *base;
	size_t len = strlen(path);
	char *copy;
	int err;

	/* A path named on the command line may be a symlink: the user chose it. */
	if (stat(path, &st) != 0) {
		if (errno == ELOOP)
			return rs_error_set(RS_EUSAGE, "'%s' is a symbolic link loop", path);
		return rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				      "cannot read '%s'", path);
	}
	if (S_ISDIR(st.st_mode))
		return add_folder(run, repo, path);
	copy = strdup(path);
	if (!copy)
		return rs_error_set(RS_EGENERIC, "out of memory");
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	err = add_file(run, repo, path, base, 1);
	free(copy);
	return err;
}
