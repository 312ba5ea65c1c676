/*
 * Recording one run (see run.h for the flow and the guarantees): the
 * run's lifecycle and setters, and rs_run_record, which chooses the id,
 * renders every file (run_json.c, run_markdown.c, the index and README),
 * places the LFS objects and makes the one commit. Reading the inputs is
 * in run_intake.c (with the single-pass copy in run_copy.c), describing
 * the machine in machine.c.
 */
#include "runs/run.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2/sys/repository.h>

#include "git/commit.h"
#include "runs/branchmap.h"
#include "runs/run_internal.h"
#include "git/unpushed.h"
#include "results/error.h"

void rs_run_init(struct rs_run *run)
{
	memset(run, 0, sizeof(*run));
	run->main_session = -1;
	run->meta = json_object();
	run->stats = json_object();
	run->args = json_object();
	run->machine = json_object();
}

void rs_run_file_release(struct rs_run_file *f)
{
	free(f->name);
	rs_buf_release(&f->blob);
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
}

void rs_run_release(struct rs_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nfiles; i++)
		rs_run_file_release(&run->files[i]);
	free(run->files);
	free(run->commit);
	free(run->branch);
	free(run->trigger);
	free(run->message);
	free(run->id);
	free(run->folder);
	free(run->session_md);
	free(run->verdict);
	json_decref(run->machine);
	json_decref(run->meta);
	json_decref(run->stats);
	json_decref(run->args);
	json_decref(run->summary);
	json_decref(run->phases);
	memset(run, 0, sizeof(*run));
	run->main_session = -1;
}

static int replace_str(char **slot, const char *s)
{
	char *c = strdup(s);

	if (!c)
		return rs_error_set(RS_EGENERIC, "out of memory");
	free(*slot);
	*slot = c;
	return 0;
}

int rs_run_set_commit(struct rs_run *run, const char *sha)
{
	size_t n = strlen(sha);
	char low[65];

	if (n != 40 && n != 64)
		return rs_error_set(RS_EUSAGE,
				    "--commit '%s' is not a full commit id (40 or 64 hex digits; "
				    "'git rev-parse HEAD' in the profiled repository prints it)", sha);
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)sha[i]))
			return rs_error_set(RS_EUSAGE, "--commit '%s' is not hexadecimal", sha);
		low[i] = (char)tolower((unsigned char)sha[i]);
	}
	low[n] = '\0';
	return replace_str(&run->commit, low);
}

int rs_run_set_trigger(struct rs_run *run, const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > RS_RUN_MAX_TRIGGER)
		return rs_error_set(RS_EUSAGE, "--trigger must have 1 to %d characters",
				    RS_RUN_MAX_TRIGGER);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && t[i] != '_' && t[i] != '.')
			return rs_error_set(RS_EUSAGE,
					    "--trigger '%s' may hold only letters, digits, '_' "
					    "and '.' (it is part of the run's folder name)", t);
	return replace_str(&run->trigger, t);
}

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int rs_run_set_branch(struct rs_run *run, const char *b)
{
	if (!*b || strlen(b) > 255 || has_control(b))
		return rs_error_set(RS_EUSAGE, "bad branch name '%s'", b);
	return replace_str(&run->branch, b);
}

int rs_run_profiled_branch(struct rs_buf *out, const struct rs_run *run,
			   const struct rs_repo *repo, const char *path)
{
	git_repository *g = NULL;
	git_reference *head = NULL;
	const git_oid *target;
	char hex[GIT_OID_HEXSZ + 1];
	int err = RS_ENOTFOUND;

	if (!run->commit)
		return rs_error_set(RS_EUSAGE, "no profiled commit set");
	if (git_repository_open_ext(&g, path, 0, NULL) < 0)
		goto out;
	/* Recording from inside the results repository says nothing. */
	if (strcmp(git_repository_commondir(g), repo->gitdir) == 0 ||
	    git_repository_head(&head, g) < 0 || !git_reference_is_branch(head))
		goto out;
	target = git_reference_target(head);
	if (!target)
		goto out;
	git_oid_tostr(hex, sizeof(hex), target);
	if (strcmp(hex, run->commit) != 0)
		goto out;
	err = rs_buf_puts(out, git_reference_shorthand(head));
out:
	git_reference_free(head);
	git_repository_free(g);
	if (err == RS_ENOTFOUND)
		rs_error_set(RS_ENOTFOUND, "no checkout of %.12s around '%s'", run->commit, path);
	return err;
}

int rs_run_add_meta(struct rs_run *run, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen;
	char key[65];

	if (!eq || eq == kv)
		return rs_error_set(RS_EUSAGE, "--meta '%s' is not KEY=VALUE", kv);
	klen = (size_t)(eq - kv);
	if (klen > 64)
		return rs_error_set(RS_EUSAGE, "--meta key longer than 64 characters");
	for (size_t i = 0; i < klen; i++)
		if (!isalnum((unsigned char)kv[i]) && kv[i] != '_' && kv[i] != '.' &&
		    kv[i] != '-')
			return rs_error_set(RS_EUSAGE,
					    "--meta key '%.*s' may hold only letters, digits, "
					    "'_', '.' and '-'", (int)klen, kv);
	if (strlen(eq + 1) > 4096)
		return rs_error_set(RS_EUSAGE, "--meta value longer than 4096 bytes");
	memcpy(key, kv, klen);
	key[klen] = '\0';
	if (json_object_set_new(run->meta, key, json_string(eq + 1)) < 0)
		return rs_error_set(RS_EUSAGE, "--meta value of '%s' is not UTF-8", key);
	return 0;
}

void rs_run_set_time(struct rs_run *run, time_t t)
{
	struct tm tm;

	run->recorded = t;
	gmtime_r(&t, &tm);
	strftime(run->recorded_at, sizeof(run->recorded_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int rs_run_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rs_run_index_entry(struct rs_run_entry *out, const struct rs_run *run)
{
	struct rs_run_entry e;
	int err;

	e.id = run->id;
	e.commit = run->commit;
	e.branch = run->branch;
	e.trigger = run->trigger;
	e.recorded_at = (char *)run->recorded_at;
	e.path = run->folder;
	e.verdict = run->verdict;
	e.metrics = rs_run_metrics(run);
	if (!e.metrics)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_run_entry_copy(out, &e);
	json_decref(e.metrics);
	return err;
}

/* ---- recording ------------------------------------------------------ */

/* Does `path` exist in HEAD's tree? (An unborn HEAD holds nothing.) */
static int tree_has(struct rs_repo *repo, const char *path, int *has)
{
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	int err;

	*has = 0;
	/* HEAD's commit and tree each read within its cap (git/repo.h) */
	err = rs_repo_rev_tree(&tree, repo->git, NULL);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		return 0;
	}
	if (err)
		return err;
	/* the folders on the way read within their caps (git/repo.h) */
	err = rs_repo_tree_entry_bypath(&te, tree, path);
	if (err == 0)
		*has = 1;
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
	}
	git_tree_entry_free(te);
	git_tree_free(tree);
	return err;
}

/* Choose id and folder; a suffix keeps them unique in HEAD's tree. */
static int choose_id(struct rs_run *run, struct rs_repo *repo)
{
	struct rs_buf id = RS_BUF_INIT, folder = RS_BUF_INIT;
	struct tm tm;
	char day[16], hms[8], ymd[9];
	int err = 0, has = 1;

	gmtime_r(&run->recorded, &tm);
	strftime(day, sizeof(day), "%Y/%m/%d", &tm);
	strftime(hms, sizeof(hms), "%H%M%S", &tm);
	strftime(ymd, sizeof(ymd), "%Y%m%d", &tm);
	for (int n = 1; has && n < 1000 && !err; n++) {
		char suffix[16] = "";

		if (n > 1)
			snprintf(suffix, sizeof(suffix), "-%d", n);
		rs_buf_clear(&id);
		rs_buf_clear(&folder);
		err = rs_buf_printf(&id, "%s-%s-%s-%.7s%s", ymd, hms, run->trigger,
				    run->commit, suffix);
		if (err)
			break;
		err = rs_buf_printf(&folder, "runs/%s/%s-%s-%.7s%s", day, hms,
				    run->trigger, run->commit, suffix);
		if (err)
			break;
		err = tree_has(repo, folder.ptr, &has);
	}
	if (!err && has)
		err = rs_error_set(RS_EEXISTS, "too many runs of %.7s in one second", run->commit);
	if (!err) {
		free(run->id);
		free(run->folder);
		run->id = rs_buf_detach(&id, NULL);
		run->folder = rs_buf_detach(&folder, NULL);
	}
	rs_buf_release(&id);
	rs_buf_release(&folder);
	return err;
}

/*
 * Index shard with this run appended, the files of the branch map and of
 * the commit map (maps[RS_MAP_BRANCHES], maps[RS_MAP_COMMITS]), and the
 * README around it.
 */
static int render_index(struct rs_run *run, struct rs_repo *repo, struct rs_buf *shard_path,
			struct rs_buf *shard, struct rs_map_files maps[2], struct rs_buf *readme)
{
	struct rs_runindex idx;
	struct rs_run_entry e;
	int err;

	rs_runindex_init(&idx);
	memset(&e, 0, sizeof(e));
	rs_buf_init(shard, RS_RUNINDEX_MAX_SHARD);
	err = rs_runindex_append_shard(shard_path, shard, repo, run->recorded_at);
	if (err)
		goto out;
	if (shard->len && shard->ptr[shard->len - 1] != '\n') {
		err = rs_buf_putc(shard, '\n');
		if (err)
			goto out;
	}
	err = rs_run_index_entry(&e, run);
	if (err)
		goto out;
	err = rs_run_entry_to_line(shard, &e);
	if (err)
		goto out;
	/*
	 * Best effort, each map on its own: when one cannot be brought up to
	 * date (a shard missing from a partial clone offline), it is left as
	 * it is, still true of the runs it covers, and readers read what came
	 * after those in full (runs/branchmap.h). The run is recorded all the
	 * same.
	 */
	if (rs_map_record(&maps[RS_MAP_BRANCHES], repo, &e, shard_path->ptr, RS_MAP_BRANCHES) != 0)
		rs_error_clear();
	if (rs_map_record(&maps[RS_MAP_COMMITS], repo, &e, shard_path->ptr, RS_MAP_COMMITS) != 0)
		rs_error_clear();
	/* The README needs only the latest runs: a bounded load. */
	err = rs_runindex_load(&idx, repo, NULL, RS_RUN_README_ROWS);
	if (err)
		goto out;
	err = rs_runindex_add(&idx, &e);
	if (err)
		goto out;
	err = rs_runindex_readme(readme, &idx, RS_RUN_README_ROWS);
out:
	rs_run_entry_release(&e);
	rs_runindex_release(&idx);
	return err;
}

/*
 * Move the LFS copies into the object store. Objects are never taken out
 * again: they are content-addressed and complete, another commit (or a
 * concurrent add of the same session) may refer to the same one, and an
 * unreferenced object costs only disk (`results prune` frees what the
 * store holds). Each is also held outside git-lfs's reach until the store
 * has it (results/unpushed.h): `git lfs prune` would otherwise delete
 * the only copy of a session whose commit went out without it.
 */
static int place_objects(struct rs_run *run, struct rs_repo *repo)
{
	int err = 0;

	for (size_t i = 0; i < run->nfiles && !err; i++) {
		struct rs_run_file *f = &run->files[i];

		if (!f->tmp)
			continue;
		if (rs_repo_lfs_has(repo, &f->oid, f->size) == 0) {
			unlink(f->tmp);
		} else {
			rs_error_clear(); /* "not in the local store" is no error here */
			err = rs_repo_lfs_adopt(repo, f->tmp, &f->oid);
			f->placed = !err;
		}
		if (err == 0)
			err = rs_unpushed_hold(repo, &f->oid);
		free(f->tmp);
		f->tmp = NULL;
	}
	return err;
}

/* Do the committed attributes (HEAD's) send `path` through Git LFS? */
static int attr_is_lfs(struct rs_repo *repo, const char *path)
{
	const char *v = NULL;

	if (git_attr_get(&v, repo->git, GIT_ATTR_CHECK_INDEX_ONLY | GIT_ATTR_CHECK_NO_SYSTEM |
			 GIT_ATTR_CHECK_INCLUDE_HEAD, path, "filter") < 0) {
		git_error_clear();
		return 0;
	}
	return git_attr_value(v) == GIT_ATTR_VALUE_STRING && strcmp(v, "lfs") == 0;
}

/*
 * The run folder's own .gitattributes: a line for every file of the run
 * stored as an LFS pointer that the repository's attributes do not send
 * through Git LFS (a session not named *.pyisession, or a repository
 * whose .gitattributes lacks the line). Without it git would see a plain
 * file holding pointer text: `git lfs ls-files` would not list it and a
 * clone would check the pointer out instead of the content. Patterns are
 * C-quoted with glob characters escaped, so that any name check_name
 * allows matches itself only. Empty when no file needs a line.
 */
static int render_attributes(struct rs_buf *out, const struct rs_run *run,
			     struct rs_repo *repo)
{
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	for (size_t i = 0; i < run->nfiles && err == 0; i++) {
		const char *name = run->files[i].name;

		if (!run->files[i].lfs)
			continue;
		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s/%s", run->folder, name);
		if (err || attr_is_lfs(repo, path.ptr))
			continue;
		if (out->len == 0)
			err = rs_buf_puts(out, "# written by 'results add': the files of this run "
					  "kept in Git LFS\n");
		if (err == 0)
			err = rs_buf_putc(out, '"');
		for (const char *p = name; err == 0 && *p; p++) {
			if (*p == '\\')
				err = rs_buf_puts(out, "\\\\\\\\"); /* \\ quoted twice */
			else if (strchr("*?[", *p))
				err = rs_buf_printf(out, "\\\\%c", *p); /* \* C-quoted */
			else if (*p == '"')
				err = rs_buf_puts(out, "\\\"");
			else
				err = rs_buf_putc(out, *p);
		}
		if (err == 0)
			err = rs_buf_puts(out, "\" filter=lfs diff=lfs merge=lfs -text\n");
	}
	rs_buf_release(&path);
	return err;
}

/*
 * render_attributes with the attributes read from HEAD's tree alone:
 * libgit2 reads .gitattributes from the index only after loading the
 * whole index (300,000 entries at 100,000 runs, more than the rest of an
 * add), so the repository is given an empty in-memory index for the
 * look-ups and its own back (loaded again when next needed) after them.
 */
static int render_attributes_committed(struct rs_buf *out, const struct rs_run *run,
				       struct rs_repo *repo)
{
	git_index *empty = NULL;
	int err;

	if (git_index_new(&empty) < 0 || git_repository_set_index(repo->git, empty) < 0) {
		git_index_free(empty);
		return rs_error_set(RS_EGENERIC, "cannot make an empty index");
	}
	err = render_attributes(out, run, repo);
	/* cannot fail with NULL (nothing to take a reference to) */
	(void)git_repository_set_index(repo->git, NULL);
	git_index_free(empty);
	return err;
}

/* "<folder>/<leaf>" for each file of the run, then run.json and summary.md. */
static int folder_paths(char **names, const struct rs_run *run)
{
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	for (size_t i = 0; i < run->nfiles + 2 && !err; i++) {
		const char *leaf = i < run->nfiles ? run->files[i].name
			: i == run->nfiles ? "run.json" : "summary.md";

		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s/%s", run->folder, leaf);
		if (!err)
			names[i] = rs_buf_detach(&path, NULL);
	}
	rs_buf_release(&path);
	return err;
}

static int render_message(struct rs_buf *msg, const struct rs_run *run)
{
	int err = rs_buf_printf(msg, "Record run %s\n\nProfiled commit %s on %s (%s).\n",
				run->id, run->commit, run->branch, run->trigger);

	if (!err && run->message)
		err = rs_buf_printf(msg, "\n%s\n", run->message);
	return err;
}

static void set_file(struct rs_commit_file *cf, const char *path, const struct rs_buf *b)
{
	cf->path = path;
	cf->data = b->ptr ? b->ptr : "";
	cf->size = b->len;
}

/* What rs_run_record commits besides the run's own files. */
struct rendered {
	struct rs_buf runjson, md, shard_path, shard, readme, msg, attrs, attrs_path;
	struct rs_map_files maps[2]; /* by enum rs_map */
};

static void rendered_release(struct rendered *r)
{
	rs_buf_release(&r->runjson);
	rs_buf_release(&r->md);
	rs_buf_release(&r->shard_path);
	rs_buf_release(&r->shard);
	rs_buf_release(&r->readme);
	rs_buf_release(&r->msg);
	rs_buf_release(&r->attrs);
	rs_buf_release(&r->attrs_path);
	rs_map_files_release(&r->maps[RS_MAP_BRANCHES]);
	rs_map_files_release(&r->maps[RS_MAP_COMMITS]);
}

/* Choose the id and render every committed file that is not the run's own. */
static int render_all(struct rs_run *run, struct rs_repo *repo, struct rendered *r)
{
	int err;

	err = choose_id(run, repo);
	if (err)
		return err;
	err = rs_run_render_json(&r->runjson, run);
	if (err)
		return err;
	err = rs_run_render_markdown(&r->md, run);
	if (err)
		return err;
	err = render_index(run, repo, &r->shard_path, &r->shard, r->maps, &r->readme);
	if (err)
		return err;
	err = render_attributes_committed(&r->attrs, run, repo);
	if (err)
		return err;
	if (r->attrs.len) {
		err = rs_buf_printf(&r->attrs_path, "%s/.gitattributes", run->folder);
		if (err)
			return err;
	}
	return render_message(&r->msg, run);
}

int rs_run_preview_json(struct rs_buf *out, struct rs_run *run, struct rs_repo *repo)
{
	int err = choose_id(run, repo);

	if (err)
		return err;
	return rs_run_render_json(out, run);
}

int rs_run_set_verdict(struct rs_run *run, const char *verdict)
{
	char *copy = NULL;

	if (verdict) {
		copy = strndup(verdict, RS_RUN_MAX_VERDICT);
		if (!copy)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	free(run->verdict);
	run->verdict = copy;
	return 0;
}

int rs_run_record(struct rs_run *run, struct rs_repo *repo, char *commit_hex_out)
{
	struct rendered r;
	struct rs_commit_file *cf = NULL;
	struct rs_commit_options opts;
	char **names = NULL;
	size_t n = 0;
	int err = 0, changed = 0;

	if (!run->commit || !run->branch || !run->trigger || !run->recorded_at[0])
		return rs_error_set(RS_EUSAGE, "a run needs a commit, branch, trigger and time");
	if (run->nfiles == 0)
		return rs_error_set(RS_EUSAGE, "a run needs at least one file");
	memset(&r, 0, sizeof(r));
	err = render_all(run, repo, &r);
	if (err)
		goto out;
	cf = calloc(run->nfiles + 5 + r.maps[0].count + r.maps[1].count, sizeof(*cf));
	names = calloc(run->nfiles + 2, sizeof(*names));
	if (!cf || !names) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = folder_paths(names, run);
	if (err)
		goto out;
	for (size_t i = 0; i < run->nfiles; i++)
		set_file(&cf[n++], names[i], &run->files[i].blob);
	set_file(&cf[n++], names[run->nfiles], &r.runjson);
	set_file(&cf[n++], names[run->nfiles + 1], &r.md);
	set_file(&cf[n++], r.shard_path.ptr, &r.shard);
	set_file(&cf[n++], "README.md", &r.readme);
	for (int m = 0; m < 2; m++)
		for (size_t i = 0; i < r.maps[m].count; i++)
			set_file(&cf[n++], r.maps[m].files[i].path.ptr, &r.maps[m].files[i].text);
	if (r.attrs.len)
		set_file(&cf[n++], r.attrs_path.ptr, &r.attrs);
	memset(&opts, 0, sizeof(opts));
	opts.message = r.msg.ptr;

	/* Objects first: a commit must never point at an object we lack. */
	err = place_objects(run, repo);
	if (err)
		goto out;
	err = rs_commit_files(repo, cf, n, &opts, commit_hex_out, &changed);
out:
	if (names)
		for (size_t i = 0; i < run->nfiles + 2; i++)
			free(names[i]);
	free(names);
	free(cf);
	rendered_release(&r);
	return err;
}
