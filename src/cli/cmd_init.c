/*
 * results init: make a clone (or, with --global, this machine) ready for
 * results. The options, where the installation's files are and the
 * messages are here; the choice of the remote (--remote against the
 * committed one) and what is written where are results/setup.h's
 * (rs_setup_choose_remote, rs_repo_setup_clone, rs_setup_global_target,
 * rs_setup_global).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/setup.h"

static const char usage[] =
	"usage: results init [--remote URL [--change-remote] | --follow-remote] [--sparse]\n"
	"                    [--agent PATH]\n"
	"       results init --global [--repo GIT-URL --remote URL] [--agent PATH]\n"
	"\n"
	"Set up this clone of a results repository: local git config for\n"
	"lfs-agent (lfs.standalonetransferagent, lfs.customtransfer.results.*,\n"
	"results.remote), the git hooks, and one commit with .gitattributes (if\n"
	"none), .lfsconfig (if none; keeps sessions out of clones and pulls) and\n"
	".results.json naming the remote (never its credentials). In a fresh\n"
	"clone a bare 'results init' takes the remote from .results.json and\n"
	"names the commit and author that set it there. A clone already set up\n"
	"keeps its remote: when a pulled commit changed the one in .results.json,\n"
	"init (like every command that talks to the store, the pre-push hook and\n"
	"lfs-agent) refuses, naming both remotes and that commit and its author.\n"
	"Running it again changes nothing.\n"
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
	"  --follow-remote  take the remote a pulled commit put in .results.json\n"
	"                 (check that commit first: anyone who can push here can\n"
	"                 commit a store of their own); prints the old and the new\n"
	"                 remote and the commit and author of the change\n"
	"  --sparse       first give this clone the work tree and index 'results\n"
	"                 clone' makes: a sparse checkout of the files at the top\n"
	"                 (cone mode, no runs/, no index/) and git's sparse index,\n"
	"                 so that 'results add' does not rewrite an index entry for\n"
	"                 every file of every run (at 100,000 runs: 40 MB, twice the\n"
	"                 time of the first add). Refused, naming them, when the\n"
	"                 work tree has uncommitted changes to tracked files or\n"
	"                 untracked files under runs/ or index/ (nothing is lost).\n"
	"                 For a clone that records (CI); deleting the run folders'\n"
	"                 files costs what writing them did, once. To undo it, see\n"
	"                 docs/user-guide.md (\"A full clone made sparse\")\n"
	"  --agent PATH   the lfs-agent program (default: next to results)\n"
	"  --global       configure this machine instead (global git config,\n"
	"                 GIT_CONFIG_GLOBAL if set): a plain 'git clone' of the\n"
	"                 repository --repo (default: this clone's origin) then\n"
	"                 downloads through lfs-agent from --remote (default:\n"
	"                 this clone's remote). A --repo ending in '/' is a\n"
	"                 prefix: it covers every repository below it\n"
	"\n"
	"exit status: 0 set up, 2 bad usage or URL (or --remote differs from the\n"
	"committed remote without --change-remote, or the committed remote changed\n"
	"without --follow-remote, or --sparse would lose uncommitted changes), 3 not\n"
	"in a git clone, 8 other\n";

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
	int i, err = 0;

	if (given) {
		cand[0] = given;
	} else if (dir) {
		err = rs_buf_printf(&c1, "%s/lfs-agent", dir);
		if (!err)
			err = rs_buf_printf(&c2, "%s/../lfs-agent/lfs-agent", dir);
		if (err)
			goto out;
		cand[0] = c1.ptr;
		cand[1] = c2.ptr;
	}
	err = RS_ENOTFOUND;
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
out:
	rs_buf_release(&c1);
	rs_buf_release(&c2);
	return err;
}

/*
 * After the look-up of the remote (`err`, printed if set), the agent's
 * absolute path into `agent`: RS_EXIT_OK or the printed error's status.
 */
static int remote_then_agent(int err, struct rs_buf *agent, const char *agent_arg)
{
	if (err)
		return rs_cli_report(err);
	if (find_agent(agent, agent_arg) != 0)
		return rs_cli_error(RS_EXIT_OTHER);
	return RS_EXIT_OK;
}

/* `<dir>/<rel>` appended to `out` when it exists; RS_ENOTFOUND when it does not. */
static int existing(struct rs_buf *out, const char *dir, const char *rel)
{
	struct rs_buf p = RS_BUF_INIT;
	struct stat st;
	int err = rs_buf_printf(&p, "%s/%s", dir, rel);

	if (!err && stat(p.ptr, &st) != 0)
		err = RS_ENOTFOUND;
	if (!err)
		err = rs_buf_puts(out, p.ptr);
	rs_buf_release(&p);
	return err;
}

/* An installed resource (<prefix>/share/results/<rel>) or the source tree's. */
static int find_resource(struct rs_buf *out, const char *rel)
{
	const char *dir = rs_cli_exe_dir();
	struct rs_buf share = RS_BUF_INIT;
	int err = RS_ENOTFOUND;

	if (dir) {
		err = rs_buf_printf(&share, "%s/../share/results", dir);
		if (!err)
			err = existing(out, share.ptr, rel);
	}
#ifdef RS_SOURCE_DIR
	if (err == RS_ENOTFOUND)
		err = existing(out, RS_SOURCE_DIR, rel);
#endif
	if (err == RS_ENOTFOUND)
		rs_error_set(RS_ENOTFOUND, "cannot find '%s' of the results installation", rel);
	rs_buf_release(&share);
	return err;
}

/* setup.h's rs_setup_options.hook_kept: the user's own hook stays. */
static void warn_hook_kept(const char *hook, const char *ours, void *payload)
{
	(void)payload;
	fprintf(stderr, "results: warning: %s is not a results or git-lfs hook; left "
		"as it is (make it run %s too)\n", hook, ours);
}

static int find_resource_cb(struct rs_buf *out, const char *rel, void *payload)
{
	(void)payload;
	return find_resource(out, rel);
}

/* rs_repo_setup_clone's error, by the step that failed: RS_EXIT_*. */
static int setup_failed(int err, const struct rs_setup_report *rep)
{
	if (rep->failed == RS_SETUP_STEP_COMMIT)
		return rs_cli_fail(rs_cli_exit_for(err), "cannot commit the set-up files: %s",
				   rs_error_message());
	if (rep->failed == RS_SETUP_STEP_HOOKS) {
		rs_error_wrap(err, "cannot install the git hooks (the rest is set up)");
		return rs_cli_fail(RS_EXIT_OTHER, "%s; fix it (core.hooksPath, permissions), then "
				   "run 'results init' again", rs_error_message());
	}
	return rs_cli_report(err);
}

/* The remote line: what it is, what it replaced, and which commit set it. */
static void print_remote(const char *shown, const char *old, const char *set_by, int follow)
{
	printf("remote:     %s", shown);
	if (*old && *set_by)
		printf(" (changed from %s: %s .results.json of %s)", old,
		       follow ? "followed" : "back to", set_by);
	else if (*old)
		printf(" (changed from %s)", old);
	else if (*set_by)
		printf(" (from .results.json, set by %s)", set_by);
	printf("\n");
}

/* What init did to the clone. */
static void print_local(const struct rs_setup_report *rep, const char *url, const char *shown,
			const char *agent)
{
	if (strcmp(shown, url) != 0)
		printf("credentials: the URL's user, password or query are kept in this clone's "
		       "git config (%s) only, never committed\n", RS_REPO_REMOTE_KEY);
	printf("lfs-agent:  %s\n", agent);
	printf("git config: %s\n", rep->config_changes ? "updated (local)" : "already set");
	if (rep->committed) {
		printf("committed:  %.12s", rep->commit_hex);
		for (size_t i = 0; i < rep->nfiles; i++)
			printf(" %s", rep->files[i]);
		printf("\n            (push it: git push)\n");
	} else {
		printf("committed:  nothing (already set up)\n");
	}
	printf("hooks:      %s\n", rep->hooks_installed ? "installed"
			       : rep->hooks_kept ? "some left as they were" : "already installed");
}

/*
 * `results init --sparse`: the work tree and index of a developer clone
 * (rs_setup_sparse), checked before the set-up writes anything (a refusal,
 * changes the sparse checkout would lose, leaves the clone as it was) and
 * made after it (its commit is the first HEAD of an empty repository).
 */
static int sparse_check(struct rs_repo *r)
{
	const char *dir = rs_repo_workdir(r);
	int err;

	if (!dir)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --sparse needs a work tree (this is a "
				   "bare repository)");
	err = rs_setup_sparse_check(dir);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}

static int make_sparse(struct rs_repo *r)
{
	int err, changed = 0;

	err = rs_setup_sparse(rs_repo_workdir(r), 1, &changed);
	if (err)
		return rs_cli_report(err);
	printf("sparse:     %s\n", changed ? "made (runs/ and index/ left out of the work tree "
	       "and, as git's sparse index, of .git/index)" : "already (runs/ and index/ left out)");
	return RS_EXIT_OK;
}

int rs_cli_init_here(const struct rs_setup_choice *how, const char *agent_arg, int sparse)
{
	struct rs_repo *r = NULL;
	struct rs_buf url = RS_BUF_INIT, agent = RS_BUF_INIT, shown = RS_BUF_INIT;
	struct rs_buf old_remote = RS_BUF_INIT, set_by = RS_BUF_INIT;
	struct rs_setup_options opts = { 0 };
	struct rs_setup_report rep;
	int err, status;

	err = rs_repo_open(&r, NULL);
	if (err) {
		status = err == RS_ENOTFOUND ? rs_cli_error(RS_EXIT_NOT_REPO) : rs_cli_report(err);
		goto out;
	}
	err = rs_setup_choose_remote(r, how, &url, &shown, &old_remote, &set_by);
	status = remote_then_agent(err, &agent, agent_arg);
	if (status)
		goto out;
	if (sparse) {
		status = sparse_check(r);
		if (status)
			goto out;
	}
	opts.url = url.ptr;
	opts.agent_path = agent.ptr;
	opts.move_marker = how->remote_arg && old_remote.len;
	opts.find_resource = find_resource_cb;
	opts.hook_kept = warn_hook_kept;
	err = rs_repo_setup_clone(r, &opts, &rep);
	if (err) {
		status = setup_failed(err, &rep);
		goto out;
	}
	print_remote(shown.ptr, rs_buf_cstr(&old_remote), rs_buf_cstr(&set_by), how->follow);
	print_local(&rep, url.ptr, shown.ptr, agent.ptr);
	if (sparse)
		status = make_sparse(r);
out:
	rs_buf_release(&set_by);
	rs_buf_release(&url);
	rs_buf_release(&agent);
	rs_buf_release(&shown);
	rs_buf_release(&old_remote);
	rs_repo_free(r);
	return status;
}

/* Machine-wide set-up (rs_setup_global) for one repository URL or prefix. */
static int init_global(const char *repo_arg, const char *remote_arg, const char *agent_arg)
{
	struct rs_repo *r = NULL;
	struct rs_buf url = RS_BUF_INIT, agent = RS_BUF_INIT, endpoint = RS_BUF_INIT;
	struct rs_buf path = RS_BUF_INIT, name = RS_BUF_INIT, shown = RS_BUF_INIT;
	int err, status, changes = 0;

	if ((!repo_arg || !remote_arg) && rs_repo_open(&r, NULL) != 0) {
		status = rs_cli_fail(RS_EXIT_USAGE, "--global outside a clone needs --repo "
				     "GIT-URL and --remote URL");
		goto out;
	}
	err = rs_setup_global_target(r, repo_arg, remote_arg, &endpoint, &url, &shown);
	status = remote_then_agent(err, &agent, agent_arg);
	if (status)
		goto out;
	err = rs_setup_global(endpoint.ptr, url.ptr, agent.ptr, &name, &path, &changes);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	printf("repository: %s\n", endpoint.ptr);
	printf("remote:     %s\n", shown.ptr);
	printf("lfs-agent:  %s (as '%s')\n", agent.ptr, name.ptr);
	printf("git config: %s (%s)\n", changes ? "updated" : "already set", path.ptr);
out:
	rs_buf_release(&url);
	rs_buf_release(&agent);
	rs_buf_release(&endpoint);
	rs_buf_release(&path);
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
		{ "follow-remote", no_argument, NULL, 'f' },
		{ "sparse", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *remote = NULL, *agent = NULL, *repo = NULL;
	struct rs_setup_choice how = { NULL, 0, 0 };
	int global = 0, change = 0, follow = 0, sparse = 0;
	const struct rs_cli_bind bind[] = {
		{ 'r', NULL, &remote }, { 'a', NULL, &agent }, { 'R', NULL, &repo },
		{ 'g', &global, NULL }, { 'c', &change, NULL }, { 'f', &follow, NULL },
		{ 's', &sparse, NULL }, { 0 },
	};
	struct rs_cli_opts opts = { .command = "init", .usage = usage, .longopts = longopts,
				    .bind = bind };

	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	if (remote && !*remote)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --remote needs a URL");
	if (repo && !global)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --repo goes with --global");
	if (change && (global || !remote))
		return rs_cli_fail(RS_EXIT_USAGE, "init: --change-remote goes with --remote URL, "
				   "without --global");
	if (follow && (global || remote))
		return rs_cli_fail(RS_EXIT_USAGE, "init: --follow-remote takes the committed remote: "
				   "it goes without --remote and --global");
	if (sparse && global)
		return rs_cli_fail(RS_EXIT_USAGE, "init: --sparse sets up this clone: it goes "
				   "without --global");
	how.remote_arg = remote;
	how.change = change;
	how.follow = follow;
	return global ? init_global(repo, remote, agent) : rs_cli_init_here(&how, agent, sparse);
}
