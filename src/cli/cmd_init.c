/*
 * results init: make a clone (or, with --global, this machine) ready for
 * results. The options, the choice of the remote (--remote against the
 * committed one) and the messages are here; what is written where is
 * src/repo/setup.c (rs_repo_setup_clone, rs_setup_global).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "remote/remote.h"
#include "repo/repo.h"
#include "results/setup.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

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

static int init_local(const char *remote_arg, const char *agent_arg, int change)
{
	struct rs_repo *r = NULL;
	struct rs_buf url = RS_BUF_INIT, agent = RS_BUF_INIT, shown = RS_BUF_INIT;
	struct rs_buf old_remote = RS_BUF_INIT;
	struct rs_setup_options opts = { 0 };
	struct rs_setup_report rep;
	size_t i;
	int err, status = RS_EXIT_OTHER;

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

	opts.url = url.ptr;
	opts.agent_path = agent.ptr;
	opts.move_marker = remote_arg && old_remote.len;
	opts.find_resource = find_resource_cb;
	opts.hook_kept = warn_hook_kept;
	err = rs_repo_setup_clone(r, &opts, &rep);
	if (err && rep.failed == RS_SETUP_STEP_COMMIT) {
		status = rs_cli_fail(rs_cli_exit_for(err), "cannot commit the set-up files: %s",
				     rs_error_message());
		goto out;
	}
	if (err && rep.failed == RS_SETUP_STEP_HOOKS) {
		rs_error_wrap(err, "cannot install the git hooks (the rest is set up)");
		status = rs_cli_fail(RS_EXIT_OTHER, "%s; fix it (core.hooksPath, permissions), then run "
				     "'results init' again", rs_error_message());
		goto out;
	}
	if (err) {
		status = rs_cli_report(err);
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
	printf("git config: %s\n", rep.config_changes ? "updated (local)" : "already set");
	if (rep.committed) {
		printf("committed:  %.12s", rep.commit_hex);
		for (i = 0; i < rep.nfiles; i++)
			printf(" %s", rep.files[i]);
		printf("\n            (push it: git push)\n");
	} else {
		printf("committed:  nothing (already set up)\n");
	}
	printf("hooks:      %s\n", rep.hooks_installed ? "installed"
			       : rep.hooks_kept ? "some left as they were" : "already installed");
	status = RS_EXIT_OK;
out:
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
	struct rs_buf repo_url = RS_BUF_INIT, url = RS_BUF_INIT, agent = RS_BUF_INIT;
	struct rs_buf endpoint = RS_BUF_INIT, path = RS_BUF_INIT, name = RS_BUF_INIT;
	struct rs_buf shown = RS_BUF_INIT;
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
	err = rs_setup_global(endpoint.ptr, url.ptr, agent.ptr, &name, &path, &changes);
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
	rs_buf_release(&repo_url);
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
