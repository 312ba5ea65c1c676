/*
 * results init: make a clone (or, with --global, this machine) ready for
 * results.
 *
 * Per clone, what git-lfs cannot take from committed files (.lfsconfig may
 * never name a program) goes in the local git config: the standalone
 * transfer agent "results" = the lfs-agent installed next to this binary,
 * and results.remote, which the agent reads itself. What every clone should
 * share is committed in one commit of its own: .gitattributes (from the
 * template, only if the repository has none), .lfsconfig (fetchexclude of
 * sessions, only if none) and RS_REPO_MARKER naming the remote without
 * credentials, so that in a later clone a bare `results init` suffices.
 * Hooks are copied from the installed hooks/ folder.
 *
 * Every step compares before it writes, so a second run changes nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <jansson.h>

#include "cli/cli.h"
#include "remote/remote.h"
#include "repo/commit.h"
#include "repo/repo.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/hash.h"

#define AGENT_NAME "results"
#define LFSCONFIG_DEFAULT "[lfs]\n\t# Sessions are large: fetch them on demand with 'results fetch'\n" \
			  "\t# or 'git lfs pull --include=<path>'.\n\tfetchexclude = *.pyisession\n"
#define HOOK_MAX (256 * 1024)

static const char *const hook_names[] = { "pre-push", "post-checkout", "post-commit",
					  "post-merge" };

static const char usage[] =
	"usage: results init [--remote URL [--change-remote]] [--agent PATH]\n"
	"       results init --global [--repo GIT-URL --remote URL] [--agent PATH]\n"
	"\n"
	"Set up this clone of a results repository: local git config for\n"
	"lfs-agent (lfs.standalonetransferagent, lfs.customtransfer.results.*,\n"
	"results.remote), the git hooks, and one commit with .gitattributes (if\n"
	"none), .lfsconfig (if none; keeps sessions out of clones and pulls) and\n"
	".results.json naming the remote (never its credentials). In a later clone\n"
	"a bare 'results init' reads the remote from .results.json (and follows\n"
	"it when this clone's git config names another). Running it again\n"
	"changes nothing.\n"
	"\n"
	"  --remote URL   where the store lives: file:///abs/path or a folder\n"
	"                 path, s3://bucket/prefix, azure://account/container/prefix,\n"
	"                 https://host/path or http://host/path (WebDAV; Azure at\n"
	"                 https://account.blob.core.windows.net/container). A user\n"
	"                 or password in the URL, or a ?query (SAS token), stays in\n"
	"                 this clone's git config and is never committed\n"
	"  --change-remote  with --remote: move a set-up repository to another\n"
	"                 remote (without it, a --remote other than the committed\n"
	"                 one is refused); prints the old and the new remote\n"
	"  --agent PATH   the lfs-agent program (default: next to results)\n"
	"  --global       configure this machine instead (global git config,\n"
	"                 GIT_CONFIG_GLOBAL if set): a plain 'git clone' of the\n"
	"                 repository --repo (default: this clone's origin) then\n"
	"                 downloads through lfs-agent from --remote (default:\n"
	"                 this clone's remote). A --repo ending in '/' is a\n"
	"                 prefix: it covers every repository below it\n"
	"\n"
	"exit status: 0 set up, 2 bad usage or URL (or --remote differs from the\n"
	"committed remote without --change-remote), 3 not in a git clone, 8 other\n";

/*
 * The lfs-agent to configure: --agent, else next to this binary (installed
 * prefix: <prefix>/bin/lfs-agent), else a build tree's lfs-agent/lfs-agent.
 */
static int find_agent(struct rs_buf *out, const char *given)
{
	const char *dir = rs_cli_exe_dir();
	char abs[4096];
	const char *cand[3] = { NULL, NULL, NULL };
	struct rs_buf c1 = RS_BUF_INIT, c2 = RS_BUF_INIT;
	int i, err = RS_ENOTFOUND;

	if (given) {
		cand[0] = given;
	} else if (dir) {
		rs_buf_printf(&c1, "%s/lfs-agent", dir);
		rs_buf_printf(&c2, "%s/../lfs-agent/lfs-agent", dir);
		cand[0] = c1.ptr;
		cand[1] = c2.ptr;
	}
	for (i = 0; i < 3 && cand[i]; i++) {
		if (realpath(cand[i], abs) && access(abs, X_OK) == 0) {
			err = rs_buf_puts(out, abs);
			break;
		}
	}
	if (err == RS_ENOTFOUND)
		rs_error_set(RS_ENOTFOUND, "cannot find lfs-agent %s%s; install results with "
			     "'cmake --install' or give --agent PATH",
			     given ? "at " : "next to results in ", given ? given : (dir ? dir : "?"));
	rs_buf_release(&c1);
	rs_buf_release(&c2);
	return err;
}

/* An installed resource (<prefix>/share/results/<rel>) or the source tree's. */
static int find_resource(struct rs_buf *out, const char *rel)
{
	const char *dir = rs_cli_exe_dir();
	struct rs_buf p = RS_BUF_INIT;
	int err = RS_ENOTFOUND;

	if (dir) {
		rs_buf_printf(&p, "%s/../share/results/%s", dir, rel);
		if (rs_fs_exists(p.ptr))
			err = rs_buf_puts(out, p.ptr);
	}
#ifdef RS_SOURCE_DIR
	if (err == RS_ENOTFOUND) {
		rs_buf_clear(&p);
		rs_buf_printf(&p, "%s/%s", RS_SOURCE_DIR, rel);
		if (rs_fs_exists(p.ptr))
			err = rs_buf_puts(out, p.ptr);
	}
#endif
	if (err == RS_ENOTFOUND)
		rs_error_set(RS_ENOTFOUND, "cannot find '%s' of the results installation", rel);
	rs_buf_release(&p);
	return err;
}

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
 * way init leaves the file to the user.
 */
static int repo_has_file(struct rs_repo *r, const char *path)
{
	struct rs_buf tmp = RS_BUF_INIT;
	int present;

	present = rs_repo_read_tree_file(r, NULL, path, 1 << 20, &tmp) != RS_ENOTFOUND;
	rs_buf_clear(&tmp);
	if (!present) {
		rs_buf_printf(&tmp, "%s%s", r->workdir, path);
		present = rs_fs_exists(tmp.ptr);
	}
	rs_buf_release(&tmp);
	rs_error_clear();
	return present;
}

/* The marker's bytes for `url` (credentials stripped), deterministic. */
static int marker_bytes(struct rs_buf *out, const char *url)
{
	struct rs_buf clean = RS_BUF_INIT;
	json_t *root = NULL;
	char *text = NULL;
	int err;

	err = rs_url_strip_credentials(&clean, url);
	if (err)
		goto out;
	root = json_pack("{s:i, s:s, s:s}", "format", 1, "remote", clean.ptr, "about",
			 "results repository: run 'results init' in a clone to set it up");
	text = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (!text) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_buf_printf(out, "%s\n", text);
out:
	free(text);
	json_decref(root);
	rs_buf_release(&clean);
	return err;
}

/* Where git runs hooks from: core.hooksPath, else <gitdir>/hooks. */
static int hooks_dir(struct rs_buf *out, struct rs_repo *r)
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

/*
 * Copy our hooks in. A hook that is already ours or git-lfs's own (which
 * ours run anyway) is replaced; any other is the user's and is left alone
 * with a warning: chaining to it is theirs to decide.
 */
static int install_hooks(struct rs_repo *r, int *installed, int *kept)
{
	struct rs_buf dir = RS_BUF_INIT, src = RS_BUF_INIT, dst = RS_BUF_INIT;
	struct rs_buf want = RS_BUF_INIT, have = RS_BUF_INIT, rel = RS_BUF_INIT;
	size_t i;
	int err;

	err = hooks_dir(&dir, r);
	if (err == 0)
		err = rs_fs_mkdir_p(dir.ptr, 0755);
	for (i = 0; err == 0 && i < sizeof(hook_names) / sizeof(hook_names[0]); i++) {
		int e;

		rs_buf_clear(&src);
		rs_buf_clear(&dst);
		rs_buf_clear(&want);
		rs_buf_clear(&have);
		rs_buf_clear(&rel);
		rs_buf_printf(&rel, "hooks/%s", hook_names[i]);
		err = find_resource(&src, rel.ptr);
		if (err == 0)
			err = rs_fs_read_file(&want, src.ptr, HOOK_MAX);
		if (err)
			break;
		rs_buf_printf(&dst, "%s/%s", dir.ptr, hook_names[i]);
		e = rs_fs_read_file(&have, dst.ptr, HOOK_MAX);
		if (e == 0 && have.len == want.len && memcmp(have.ptr, want.ptr, want.len) == 0) {
			struct stat st;

			if (stat(dst.ptr, &st) == 0 && (st.st_mode & 0111))
				continue;
		} else if (e == 0 && !strstr(have.ptr, "results hook") &&
			   !strstr(have.ptr, "git lfs")) {
			fprintf(stderr, "results: warning: %s is not a results or git-lfs hook; left "
				"as it is (make it run %s too)\n", dst.ptr, src.ptr);
			(*kept)++;
			continue;
		} else if (e != 0 && e != RS_ENOTFOUND) {
			err = rs_error_wrap(e, "cannot read the hook '%s'", dst.ptr);
			break;
		}
		rs_error_clear(); /* no hook there yet: not an error */
		err = rs_fs_write_file_atomic(dst.ptr, want.ptr, want.len);
		if (err == 0 && chmod(dst.ptr, 0755) != 0)
			err = rs_error_errno(RS_EGENERIC, "cannot make '%s' executable", dst.ptr);
		if (err == 0)
			(*installed)++;
	}
	/* The message of a failure stays for the caller to print. */
	rs_buf_release(&dir);
	rs_buf_release(&src);
	rs_buf_release(&dst);
	rs_buf_release(&want);
	rs_buf_release(&have);
	rs_buf_release(&rel);
	return err;
}

/* Refuse a URL no backend understands; anything else is doctor's business. */
static int check_remote_url(const char *url)
{
	struct rs_remote *rem = NULL;
	int err = rs_remote_open(&rem, url, NULL);

	rs_remote_free(rem);
	if (err == RS_EUSAGE)
		return err;
	rs_error_clear();
	return 0;
}

/*
 * Which remote this clone is set up for, and whether that changes it:
 * --remote must agree with the committed one (and, without a marker, with
 * this clone's results.remote) unless --change-remote says the move is
 * meant; a bare init follows the committed marker, keeping this clone's
 * URL only when it names the same store (it may carry credentials).
 * `old` receives the remote replaced (empty when none).
 */
static int choose_remote(struct rs_repo *r, const char *remote_arg, int change,
			 struct rs_buf *url, struct rs_buf *old)
{
	struct rs_buf committed = RS_BUF_INIT, local = RS_BUF_INIT;
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT;
	const char *current;
	int err, status = RS_EXIT_OK;

	err = rs_repo_committed_remote(r, &committed);
	if (err && err != RS_ENOTFOUND) {
		status = rs_cli_report(err);
		goto out;
	}
	if (rs_repo_config_get(r, RS_REPO_REMOTE_KEY, &local) != 0)
		rs_buf_clear(&local);
	rs_error_clear();
	current = committed.len ? committed.ptr : local.len ? local.ptr : NULL;
	if (remote_arg) {
		if (current && !rs_url_same_remote(current, remote_arg)) {
			rs_url_strip_credentials(&a, current);
			rs_url_strip_credentials(&b, remote_arg);
			if (!change) {
				status = rs_cli_fail(RS_EXIT_USAGE, "this repository's remote is '%s' (%s), "
						     "--remote names '%s': to move it, run 'results init "
						     "--change-remote --remote %s'; to keep it, run 'results "
						     "init' without --remote", a.ptr,
						     committed.len ? "committed in " RS_REPO_MARKER
								   : "results.remote of this clone",
						     b.ptr, b.ptr);
				goto out;
			}
			rs_buf_puts(old, a.ptr);
		}
		err = rs_buf_puts(url, remote_arg);
	} else if (committed.len) {
		if (local.len && !rs_url_same_remote(local.ptr, committed.ptr)) {
			rs_url_strip_credentials(&a, local.ptr);
			rs_buf_puts(old, a.ptr);
		}
		err = rs_buf_puts(url, local.len && !old->len ? local.ptr : committed.ptr);
	} else if (local.len) {
		err = rs_buf_puts(url, local.ptr);
	} else {
		status = rs_cli_fail(RS_EXIT_USAGE, "no remote known for this repository: run "
				     "'results init --remote URL' (for example file:///srv/results-store)");
		goto out;
	}
	if (err)
		status = rs_cli_report(err);
out:
	rs_buf_release(&committed);
	rs_buf_release(&local);
	rs_buf_release(&a);
	rs_buf_release(&b);
	return status;
}

static int init_local(const char *remote_arg, const char *agent_arg, int change)
{
	struct rs_repo *r = NULL;
	struct rs_buf url = RS_BUF_INIT, agent = RS_BUF_INIT, shown = RS_BUF_INIT;
	struct rs_buf tmpl_path = RS_BUF_INIT, tmpl = RS_BUF_INIT, marker = RS_BUF_INIT;
	struct rs_buf old_marker = RS_BUF_INIT, old_remote = RS_BUF_INIT, followed = RS_BUF_INIT;
	struct rs_commit_file files[3];
	struct rs_commit_options copts = { "results init: LFS settings and the remote of this "
					   "results repository", NULL, NULL, 0 };
	git_config *cfg = NULL, *local = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	size_t nfiles = 0, i;
	int err, status = RS_EXIT_OTHER, changes = 0, changed = 0, installed = 0, kept = 0;

	err = rs_repo_open(&r, NULL);
	if (err) {
		status = err == RS_ENOTFOUND ? rs_cli_error(RS_EXIT_NOT_REPO) : rs_cli_report(err);
		goto out;
	}
	status = choose_remote(r, remote_arg, change, &url, &old_remote);
	if (status != RS_EXIT_OK)
		goto out;
	status = RS_EXIT_OTHER;
	err = check_remote_url(url.ptr);
	if (err == 0)
		err = rs_url_strip_credentials(&shown, url.ptr);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = find_agent(&agent, agent_arg);
	if (err) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}

	/* Committed files. */
	if (!repo_has_file(r, ".gitattributes")) {
		err = find_resource(&tmpl_path, ".gitattributes.template");
		if (err == 0)
			err = rs_fs_read_file(&tmpl, tmpl_path.ptr, 1 << 20);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
		files[nfiles++] = (struct rs_commit_file){ ".gitattributes", tmpl.ptr, tmpl.len, 0, 0 };
	}
	if (!repo_has_file(r, ".lfsconfig"))
		files[nfiles++] = (struct rs_commit_file){ ".lfsconfig", LFSCONFIG_DEFAULT,
							   strlen(LFSCONFIG_DEFAULT), 0, 0 };
	err = marker_bytes(&marker, url.ptr);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	/* Keep a committed marker unless --change-remote moves it. */
	if (rs_repo_read_tree_file(r, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &old_marker) != 0 ||
	    (remote_arg && old_remote.len)) {
		files[nfiles++] = (struct rs_commit_file){ RS_REPO_MARKER, marker.ptr, marker.len, 0, 0 };
		err = rs_buf_puts(&followed, shown.ptr);
	} else {
		err = rs_repo_committed_remote(r, &followed);
	}
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	/* Local git config. */
	if (git_repository_config(&cfg, r->git) < 0 ||
	    git_config_open_level(&local, cfg, GIT_CONFIG_LEVEL_LOCAL) < 0) {
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot open the local git config");
		goto out;
	}
	err = config_ensure(local, "lfs.standalonetransferagent", AGENT_NAME, &changes);
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." AGENT_NAME ".path", agent.ptr, &changes);
	/* Empty args on purpose: the agent reads results.remote from the clone,
	   and an explicit empty value overrides a machine-wide --remote. */
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." AGENT_NAME ".args", "", &changes);
	/* One agent process: it already spreads one object over every core
	   and fetches chunks in parallel, and git-lfs starts concurrent
	   agents one after another, which costs a push more than it gains
	   for the few large objects a run has (docs/lfs-agent.md). */
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." AGENT_NAME ".concurrent", "false", &changes);
	if (err == 0)
		err = config_ensure(local, "lfs.customtransfer." AGENT_NAME ".direction", "both", &changes);
	if (err == 0)
		err = config_ensure(local, RS_REPO_REMOTE_KEY, url.ptr, &changes);
	/* What the marker names once the commit below is made. */
	if (err == 0)
		err = config_ensure(local, RS_REPO_FOLLOWED_KEY, followed.ptr, &changes);
	if (err == 0)
		err = ensure_lfs_filters(cfg, local, &changes);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}

	rs_error_clear();
	err = rs_commit_files(r, files, nfiles, &copts, hex, &changed);
	if (err) {
		status = rs_cli_fail(err == RS_EUSAGE ? RS_EXIT_USAGE : rs_cli_exit_for(err),
				     "cannot commit the set-up files: %s", rs_error_message());
		goto out;
	}

	err = install_hooks(r, &installed, &kept);
	if (err) {
		rs_error_wrap(err, "cannot install the git hooks (the rest is set up)");
		status = rs_cli_fail(RS_EXIT_OTHER, "%s; fix it (core.hooksPath, permissions), then run "
				     "'results init' again", rs_error_message());
		goto out;
	}

	if (old_remote.len)
		printf("remote:     %s (changed from %s%s)\n", shown.ptr, old_remote.ptr,
		       remote_arg ? "" : ": followed the committed " RS_REPO_MARKER);
	else
		printf("remote:     %s\n", shown.ptr);
	if (strcmp(shown.ptr, url.ptr) != 0)
		printf("credentials: the URL's user, password or query are kept in this clone's "
		       "git config (%s) only, never committed\n", RS_REPO_REMOTE_KEY);
	printf("lfs-agent:  %s\n", agent.ptr);
	printf("git config: %s\n", changes ? "updated (local)" : "already set");
	if (changed) {
		printf("committed:  %.12s", hex);
		for (i = 0; i < nfiles; i++)
			printf(" %s", files[i].path);
		printf("\n            (push it: git push)\n");
	} else {
		printf("committed:  nothing (already set up)\n");
	}
	printf("hooks:      %s\n", installed ? "installed" : kept ? "some left as they were"
								: "already installed");
	status = RS_EXIT_OK;
out:
	git_config_free(local);
	git_config_free(cfg);
	rs_buf_release(&url);
	rs_buf_release(&agent);
	rs_buf_release(&shown);
	rs_buf_release(&tmpl_path);
	rs_buf_release(&tmpl);
	rs_buf_release(&marker);
	rs_buf_release(&old_marker);
	rs_buf_release(&old_remote);
	rs_buf_release(&followed);
	rs_repo_free(r);
	return status;
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

/*
 * Machine-wide: git-lfs looks up lfs.<endpoint>.standalonetransferagent
 * for the endpoint of the repository being cloned, so each repository gets
 * its own agent name (results-<hash of the endpoint>) whose args carry
 * --remote: a plain clone has no results.remote of its own yet.
 */
static int init_global(const char *repo_arg, const char *remote_arg, const char *agent_arg)
{
	struct rs_repo *r = NULL;
	struct rs_buf repo_url = RS_BUF_INIT, url = RS_BUF_INIT, agent = RS_BUF_INIT;
	struct rs_buf endpoint = RS_BUF_INIT, path = RS_BUF_INIT, key = RS_BUF_INIT;
	struct rs_buf args = RS_BUF_INIT, name = RS_BUF_INIT, shown = RS_BUF_INIT;
	git_config *cfg = NULL;
	struct rs_id h;
	char hex[RS_ID_HEXSZ + 1];
	int err = 0, status = RS_EXIT_OTHER, changes = 0;

	if (!repo_arg || !remote_arg) {
		if (rs_repo_open(&r, NULL) != 0) {
			status = rs_cli_fail(RS_EXIT_USAGE, "--global outside a clone needs --repo "
					     "GIT-URL and --remote URL");
			goto out;
		}
	}
	if (repo_arg) {
		err = rs_buf_puts(&repo_url, repo_arg);
	} else if (rs_repo_config_get(r, "remote.origin.url", &repo_url) == 0) {
		/* Not git_remote_lookup: it leaks pcre2 match data (libgit2 1.5). */
		err = 0;
	} else {
		status = rs_cli_fail(RS_EXIT_USAGE, "this clone has no 'origin': give --repo GIT-URL");
		goto out;
	}
	if (err == 0)
		err = remote_arg ? rs_buf_puts(&url, remote_arg) : rs_repo_remote_url(r, &url, NULL);
	if (err == RS_ENOTFOUND) {
		status = rs_cli_fail(RS_EXIT_USAGE, "no remote known: give --remote URL");
		goto out;
	}
	if (err == 0)
		err = check_remote_url(url.ptr);
	/* "https://host/org/": a prefix, which git-lfs matches the way git
	   matches http.<url>.* keys, covering every repository below it. */
	if (err == 0 && repo_url.len && repo_url.ptr[repo_url.len - 1] == '/')
		err = rs_url_strip_credentials(&endpoint, repo_url.ptr);
	else if (err == 0)
		err = rs_lfs_endpoint(&endpoint, repo_url.ptr);
	if (err == 0)
		err = rs_url_strip_credentials(&shown, url.ptr);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = find_agent(&agent, agent_arg);
	if (err) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}
	rs_sha256(&h, endpoint.ptr, endpoint.len);
	rs_id_to_hex(hex, &h);
	rs_buf_printf(&name, AGENT_NAME "-%.8s", hex);
	err = rs_buf_printf(&args, "--remote ");
	if (err == 0)
		err = shell_quote(&args, url.ptr);
	if (err == 0)
		err = global_config_path(&path);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (!rs_fs_exists(path.ptr) && rs_fs_write_file_atomic(path.ptr, "", 0) != 0) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}
	if (git_config_open_ondisk(&cfg, path.ptr) < 0) {
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot open the global git config '%s'", path.ptr);
		goto out;
	}
#define SET(suffix, value)                                                        \
	do {                                                                      \
		rs_buf_clear(&key);                                               \
		rs_buf_printf(&key, "lfs.customtransfer.%s." suffix, name.ptr);  \
		if (err == 0)                                                     \
			err = config_ensure(cfg, key.ptr, value, &changes);       \
	} while (0)
	SET("path", agent.ptr);
	SET("args", args.ptr);
	SET("concurrent", "false"); /* as for one clone, above */
	SET("direction", "both");
#undef SET
	rs_buf_clear(&key);
	rs_buf_printf(&key, "lfs.%s.standalonetransferagent", endpoint.ptr);
	if (err == 0)
		err = config_ensure(cfg, key.ptr, name.ptr, &changes);
	if (err == 0)
		err = ensure_lfs_filters(cfg, cfg, &changes);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	printf("repository: %s\n", endpoint.ptr);
	printf("remote:     %s\n", shown.ptr);
	printf("lfs-agent:  %s (as '%s')\n", agent.ptr, name.ptr);
	printf("git config: %s (%s)\n", changes ? "updated" : "already set", path.ptr);
	status = RS_EXIT_OK;
out:
	git_config_free(cfg);
	rs_buf_release(&repo_url);
	rs_buf_release(&url);
	rs_buf_release(&agent);
	rs_buf_release(&endpoint);
	rs_buf_release(&path);
	rs_buf_release(&key);
	rs_buf_release(&args);
	rs_buf_release(&name);
	rs_buf_release(&shown);
	rs_repo_free(r);
	return status;
}

int cmd_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "remote", required_argument, NULL, 'r' },
		{ "agent", required_argument, NULL, 'a' },
		{ "repo", required_argument, NULL, 'R' },
		{ "global", no_argument, NULL, 'g' },
		{ "change-remote", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *remote = NULL, *agent = NULL, *repo = NULL;
	int c, global = 0, change = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': remote = optarg; break;
		case 'a': agent = optarg; break;
		case 'R': repo = optarg; break;
		case 'g': global = 1; break;
		case 'c': change = 1; break;
		case 'h': fputs(usage, stdout); return RS_EXIT_OK;
		default:
			return rs_cli_fail(RS_EXIT_USAGE, "init: unknown option '%s'; see 'results init --help'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rs_cli_fail(RS_EXIT_USAGE, "init: unexpected argument '%s'", argv[optind]);
	if (remote && !*remote)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --remote needs a URL");
	if (repo && !global)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --repo goes with --global");
	if (change && (global || !remote))
		return rs_cli_fail(RS_EXIT_USAGE, "init: --change-remote goes with --remote URL, "
				   "without --global");
	return global ? init_global(repo, remote, agent) : init_local(remote, agent, change);
}
