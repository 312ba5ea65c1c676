/*
 * Clone and machine set-up for results: see setup.h.
 */
#include "results/setup.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>
#include <jansson.h>

#include "git/commit.h"
#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/json.h"
#include "util/fs.h"
#include "util/hash.h"

#define LFSCONFIG_DEFAULT "[lfs]\n\t# Sessions are large: fetch them on demand with 'results fetch'\n" \
			  "\t# or 'git lfs pull --include=<path>'.\n\tfetchexclude = *.pyisession\n"
#define HOOK_MAX (256 * 1024)
#define TEMPLATE_MAX (1 << 20)

const char *const rs_setup_hook_names[RS_SETUP_HOOKS] = { "pre-push", "post-checkout",
							  "post-commit", "post-merge" };

/* Set `key` in `cfg` unless it already holds `value`; counts real changes. */
static int config_ensure(git_config *cfg, const char *key, const char *value, int *changes)
{
	git_buf cur = { 0 };
	int same, gerr;

	same = git_config_get_string_buf(&cur, cfg, key) == 0 && strcmp(cur.ptr, value) == 0;
	git_buf_dispose(&cur);
	if (same)
		return 0;
	gerr = git_config_set_string(cfg, key, value);
	if (gerr < 0) {
		const git_error *e = git_error_last();

		return rs_error_set(RS_EGENERIC, "cannot set '%s' in the git config: %s", key,
				    e ? e->message : "?");
	}
	(*changes)++;
	return 0;
}

/* git-lfs's filters, as `git lfs install` writes them, unless some level has them. */
static int ensure_lfs_filters(git_config *all, git_config *target, int *changes)
{
	static const char *const kv[][2] = {
		{ "filter.lfs.clean", "git-lfs clean -- %f" },
		{ "filter.lfs.smudge", "git-lfs smudge -- %f" },
		{ "filter.lfs.process", "git-lfs filter-process" },
		{ "filter.lfs.required", "true" },
	};
	git_buf cur = { 0 };
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(kv) / sizeof(kv[0]) && err == 0; i++) {
		if (git_config_get_string_buf(&cur, all, kv[i][0]) == 0) {
			git_buf_dispose(&cur);
			continue;
		}
		err = config_ensure(target, kv[i][0], kv[i][1], changes);
	}
	return err;
}

/*
 * Does the committed tree or the working tree already hold `path`? Either
 * way set-up leaves the file to the user.
 */
static int repo_has_file(struct rs_repo *r, const char *path, int *present)
{
	struct rs_buf tmp = RS_BUF_INIT;
	int err = 0;

	*present = rs_repo_read_tree_file(r, NULL, path, 1 << 20, &tmp) != RS_ENOTFOUND;
	rs_buf_clear(&tmp);
	if (!*present) {
		err = rs_buf_printf(&tmp, "%s%s", r->workdir, path);
		if (!err)
			*present = rs_fs_exists(tmp.ptr);
	}
	rs_buf_release(&tmp);
	if (!err)
		rs_error_clear();
	return err;
}

/*
 * .gitattributes (the template's bytes, read into `tmpl`) and .lfsconfig
 * appended to `files`, each only when the repository has none.
 */
static int default_files(struct rs_repo *r, const struct rs_setup_options *opts,
			 struct rs_buf *tmpl, struct rs_commit_file *files, size_t *nfiles)
{
	struct rs_buf tmpl_path = RS_BUF_INIT;
	int present, err;

	err = repo_has_file(r, ".gitattributes", &present);
	if (err)
		goto out;
	if (!present) {
		err = opts->find_resource(&tmpl_path, ".gitattributes.template", opts->payload);
		if (err)
			goto out;
		err = rs_fs_read_file(tmpl, tmpl_path.ptr, TEMPLATE_MAX);
		if (err)
			goto out;
		files[(*nfiles)++] = (struct rs_commit_file){ ".gitattributes", tmpl->ptr, tmpl->len,
							      0, 0 };
	}
	err = repo_has_file(r, ".lfsconfig", &present);
	if (err)
		goto out;
	if (!present)
		files[(*nfiles)++] = (struct rs_commit_file){ ".lfsconfig", LFSCONFIG_DEFAULT,
							      strlen(LFSCONFIG_DEFAULT), 0, 0 };
out:
	rs_buf_release(&tmpl_path);
	return err;
}

/* The marker's bytes for `url` (credentials stripped), deterministic. */
static int marker_bytes(struct rs_buf *out, const char *url)
{
	struct rs_buf clean = RS_BUF_INIT;
	json_t *root = NULL;
	int err;

	err = rs_url_strip_credentials(&clean, url);
	if (err)
		goto out;
	root = json_pack("{s:i, s:s, s:s}", "format", 1, "remote", clean.ptr, "about",
			 "results repository: run 'results init' in a clone to set it up");
	err = rs_json_dump(out, root, JSON_INDENT(2) | JSON_SORT_KEYS); /* NULL: out of memory */
	if (err)
		goto out;
	err = rs_buf_putc(out, '\n');
out:
	json_decref(root);
	rs_buf_release(&clean);
	return err;
}

int rs_repo_hooks_dir(struct rs_buf *out, struct rs_repo *r)
{
	struct rs_buf cfg = RS_BUF_INIT;
	int err;

	if (rs_repo_config_get(r, "core.hooksPath", &cfg) == 0 && cfg.len) {
		err = cfg.ptr[0] == '/' ? rs_buf_puts(out, cfg.ptr)
					: rs_buf_printf(out, "%s%s", r->workdir, cfg.ptr);
	} else {
		rs_error_clear(); /* unset: the default below */
		err = rs_buf_printf(out, "%shooks", r->gitdir);
	}
	rs_buf_release(&cfg);
	return err;
}

/* Install hook `name` into `dir` (see install_hooks). */
static int install_hook(const char *dir, const char *name, const struct rs_setup_options *opts,
			int *installed, int *kept)
{
	struct rs_buf src = RS_BUF_INIT, dst = RS_BUF_INIT, rel = RS_BUF_INIT;
	struct rs_buf want = RS_BUF_INIT, have = RS_BUF_INIT;
	struct stat st;
	int e, err;

	err = rs_buf_printf(&rel, "hooks/%s", name);
	if (err)
		goto out;
	err = opts->find_resource(&src, rel.ptr, opts->payload);
	if (err)
		goto out;
	err = rs_fs_read_file(&want, src.ptr, HOOK_MAX);
	if (err)
		goto out;
	err = rs_buf_printf(&dst, "%s/%s", dir, name);
	if (err)
		goto out;
	e = rs_fs_read_file(&have, dst.ptr, HOOK_MAX);
	if (e == 0 && have.len == want.len && memcmp(have.ptr, want.ptr, want.len) == 0) {
		if (stat(dst.ptr, &st) == 0 && (st.st_mode & 0111))
			goto out;
	} else if (e == 0 && !strstr(have.ptr, "results hook") && !strstr(have.ptr, "git lfs")) {
		if (opts->hook_kept)
			opts->hook_kept(dst.ptr, src.ptr, opts->payload);
		(*kept)++;
		goto out;
	} else if (e != 0 && e != RS_ENOTFOUND) {
		err = rs_error_wrap(e, "cannot read the hook '%s'", dst.ptr);
		goto out;
	}
	rs_error_clear(); /* no hook there yet: not an error */
	err = rs_fs_write_file_atomic(dst.ptr, want.ptr, want.len);
	if (err)
		goto out;
	if (chmod(dst.ptr, 0755) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot make '%s' executable", dst.ptr);
		goto out;
	}
	(*installed)++;
out:
	/* The message of a failure stays for the caller. */
	rs_buf_release(&src);
	rs_buf_release(&dst);
	rs_buf_release(&rel);
	rs_buf_release(&want);
	rs_buf_release(&have);
	return err;
}

/*
 * Copy our hooks in. A hook that is already ours or git-lfs's own (which
 * ours run anyway) is replaced; any other is the user's and is left alone
 * (opts->hook_kept says so): chaining to it is theirs to decide.
 */
static int install_hooks(struct rs_repo *r, const struct rs_setup_options *opts,
			 int *installed, int *kept)
{
	struct rs_buf dir = RS_BUF_INIT;
	size_t i;
	int err;

	err = rs_repo_hooks_dir(&dir, r);
	if (err)
		goto out;
	err = rs_fs_mkdir_p(dir.ptr, 0755);
	for (i = 0; err == 0 && i < RS_SETUP_HOOKS; i++)
		err = install_hook(dir.ptr, rs_setup_hook_names[i], opts, installed, kept);
out:
	rs_buf_release(&dir);
	return err;
}

/* The clone's local git config for lfs-agent and `url`. */
static int setup_config(struct rs_repo *r, const struct rs_setup_options *opts,
			const char *followed, int *changes)
{
	git_config *cfg = NULL, *local = NULL;
	int err;

	if (git_repository_config(&cfg, r->git) < 0 ||
	    git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot open the local git config");
		goto out;
	}
	err = config_ensure(local, "lfs.standalonetransferagent", RS_SETUP_AGENT, changes);
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." RS_SETUP_AGENT ".path",
				    opts->agent_path, changes);
	/* Empty args on purpose: the agent reads results.remote from the clone,
	   and an explicit empty value overrides a machine-wide --remote. */
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." RS_SETUP_AGENT ".args", "", changes);
	/* One agent process: it already spreads one object over every core
	   and fetches chunks in parallel, and git-lfs starts concurrent
	   agents one after another, which costs a push more than it gains
	   for the few large objects a run has (docs/lfs-agent.md). */
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." RS_SETUP_AGENT ".concurrent", "false",
				    changes);
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." RS_SETUP_AGENT ".direction", "both",
				    changes);
	if (err == 0)
		err = config_ensure(local, RS_REPO_REMOTE_KEY, opts->url, changes);
	/* What the marker names once the set-up commit is made. */
	if (err == 0)
		err = config_ensure(local, RS_REPO_FOLLOWED_KEY, followed, changes);
	if (err == 0)
		err = ensure_lfs_filters(cfg, local, changes);
out:
	git_config_free(local);
	git_config_free(cfg);
	return err;
}

int rs_repo_setup_clone(struct rs_repo *r, const struct rs_setup_options *opts,
			struct rs_setup_report *report)
{
	struct rs_buf tmpl = RS_BUF_INIT, marker = RS_BUF_INIT;
	struct rs_buf old_marker = RS_BUF_INIT, followed = RS_BUF_INIT;
	struct rs_commit_file files[3];
	struct rs_commit_options copts = { "results init: LFS settings and the remote of this "
					   "results repository", NULL, NULL, 0 };
	size_t nfiles = 0, i;
	int err;

	memset(report, 0, sizeof(*report));
	report->failed = RS_SETUP_STEP_PREPARE;
	/* Committed files. */
	err = default_files(r, opts, &tmpl, files, &nfiles);
	if (err)
		goto out;
	err = marker_bytes(&marker, opts->url);
	if (err)
		goto out;
	/* Keep a committed marker unless the set-up moves it. */
	if (rs_repo_read_tree_file(r, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &old_marker) != 0 ||
	    opts->move_marker) {
		files[nfiles++] = (struct rs_commit_file){ RS_REPO_MARKER, marker.ptr, marker.len, 0, 0 };
		err = rs_url_strip_credentials(&followed, opts->url);
	} else {
		err = rs_repo_committed_remote(r, &followed);
	}
	if (err)
		goto out;
	/* Local git config. */
	err = setup_config(r, opts, followed.ptr, &report->config_changes);
	if (err)
		goto out;

	rs_error_clear();
	report->failed = RS_SETUP_STEP_COMMIT;
	err = rs_commit_files(r, files, nfiles, &copts, report->commit_hex, &report->committed);
	if (err)
		goto out;
	for (i = 0; i < nfiles; i++)
		report->files[i] = files[i].path;
	report->nfiles = nfiles;

	report->failed = RS_SETUP_STEP_HOOKS;
	err = install_hooks(r, opts, &report->hooks_installed, &report->hooks_kept);
out:
	rs_buf_release(&tmpl);
	rs_buf_release(&marker);
	rs_buf_release(&old_marker);
	rs_buf_release(&followed);
	return err;
}

/* `s` quoted for the shell (git-lfs runs "<path> <args>" through sh -c). */
static int shell_quote(struct rs_buf *out, const char *s)
{
	int err = rs_buf_putc(out, '\'');

	for (; err == 0 && *s; s++)
		err = *s == '\'' ? rs_buf_puts(out, "'\\''") : rs_buf_putc(out, *s);
	if (err == 0)
		err = rs_buf_putc(out, '\'');
	return err;
}

/*
 * The global config file to write: GIT_CONFIG_GLOBAL as git honours it
 * (libgit2 1.5 does not), else ~/.gitconfig.
 */
static int global_config_path(struct rs_buf *out)
{
	const char *env = getenv("GIT_CONFIG_GLOBAL");
	const char *home = getenv("HOME");
	git_buf found = { 0 };
	int err;

	if (env && *env)
		return rs_buf_puts(out, env);
	if (git_config_find_global(&found) == 0) {
		err = rs_buf_puts(out, found.ptr);
		git_buf_dispose(&found);
		return err;
	}
	if (!home || !*home)
		return rs_error_set(RS_EUSAGE, "HOME is not set: cannot find the global git config");
	return rs_buf_printf(out, "%s/.gitconfig", home);
}

int rs_setup_global(const char *endpoint, const char *url, const char *agent_path,
		    struct rs_buf *name_out, struct rs_buf *path_out, int *changes)
{
	struct rs_buf path = RS_BUF_INIT, key = RS_BUF_INIT, args = RS_BUF_INIT, name = RS_BUF_INIT;
	git_config *cfg = NULL;
	struct rs_id h;
	char hex[RS_ID_HEXSZ + 1];
	static const char *const suffixes[] = { "path", "args", "concurrent", "direction" };
	const char *values[4];
	size_t i;
	int err;

	rs_sha256(&h, endpoint, strlen(endpoint));
	rs_id_to_hex(hex, &h);
	err = rs_buf_printf(&name, RS_SETUP_AGENT "-%.8s", hex);
	if (err == 0)
		err = rs_buf_printf(&args, "--remote ");
	if (err == 0)
		err = shell_quote(&args, url);
	if (err == 0)
		err = global_config_path(&path);
	if (err)
		goto out;
	if (!rs_fs_exists(path.ptr)) {
		err = rs_fs_write_file_atomic(path.ptr, "", 0);
		if (err)
			goto out;
	}
	if (git_config_open_ondisk(&cfg, path.ptr) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot open the global git config '%s'", path.ptr);
		goto out;
	}
	values[0] = agent_path;
	values[1] = args.ptr;
	values[2] = "false"; /* one agent process, as for one clone (setup_config) */
	values[3] = "both";
	for (i = 0; err == 0 && i < 4; i++) {
		rs_buf_clear(&key);
		err = rs_buf_printf(&key, "lfs.customtransfer.%s.%s", name.ptr, suffixes[i]);
		if (err == 0)
			err = config_ensure(cfg, key.ptr, values[i], changes);
	}
	rs_buf_clear(&key);
	if (err == 0)
		err = rs_buf_printf(&key, "lfs.%s.standalonetransferagent", endpoint);
	if (err == 0)
		err = config_ensure(cfg, key.ptr, name.ptr, changes);
	if (err == 0)
		err = ensure_lfs_filters(cfg, cfg, changes);
	if (err == 0)
		err = rs_buf_puts(name_out, name.ptr);
	if (err == 0)
		err = rs_buf_puts(path_out, path.ptr);
out:
	git_config_free(cfg);
	rs_buf_release(&path);
	rs_buf_release(&key);
	rs_buf_release(&args);
	rs_buf_release(&name);
	return err;
}
