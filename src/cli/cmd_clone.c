/*
 * `results clone URL [DIR]`: the developer clone of a results repository
 * in one command (rs_setup_clone: shallow, partial, a sparse work tree
 * without runs/), then in it what `results init` does (rs_cli_init_here).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/setup.h"

#define DEFAULT_DEPTH 1
#define MAX_DEPTH 1000000000u

static const char usage[] =
	"usage: results clone [--depth N] [--branch NAME] [--full] [--remote URL] [--agent PATH]\n"
	"                     GIT-URL [DIR]\n"
	"\n"
	"Clone a results repository for a developer and set it up as 'results\n"
	"init' does: the newest commit only (--depth 1), without the run folders'\n"
	"larger files (--filter=blob:limit=1k: run.json, summary.md stay on the\n"
	"git remote; the sessions' LFS pointers come) and with a work tree of\n"
	"the files at the top only (README.md, .results.json: no runs/, no\n"
	"index/; results reads them from git). Every command works in it:\n"
	"what one reads and the clone lacks is fetched from the git remote by\n"
	"git, in one call per command (offline: exit 5, naming the file). A\n"
	"100,000-run repository makes a clone of tens of MB in seconds\n"
	"(docs/benchmarks.md). The git host must allow filters (GitHub, GitLab;\n"
	"uploadpack.allowFilter for git daemon and file://). Sessions are never\n"
	"downloaded ('results fetch' does).\n"
	"\n"
	"  --depth N      commits of history to fetch (default 1; 0: all of them)\n"
	"  --branch NAME  the branch to check out (default: the remote's HEAD)\n"
	"  --full         a full clone instead: every file but the sessions and a\n"
	"                 whole work tree (--depth 0 unless given)\n"
	"  --remote URL, --agent PATH\n"
	"                 as for 'results init' (default: the committed remote)\n"
	"  DIR            the clone's folder (default: the URL's last part,\n"
	"                 without .git); it must not exist or be empty\n"
	"\n"
	"exit status: 0 cloned and set up, 2 bad usage, 5 git could not clone\n"
	"or check out (an unreachable URL, an existing folder, a host without\n"
	"filters); otherwise as 'results init' (the clone is then left as it\n"
	"is: run 'results init' in it once the cause is fixed).\n";

struct clone_args {
	struct rs_setup_clone_options clone;
	int depth_given;
};

static int take_option(void *ctx, struct rs_cli_opts *o, int opt)
{
	struct clone_args *a = ctx;
	unsigned long n;
	char *end;

	(void)o;
	if (opt != 'd')
		return RS_EXIT_OK;
	errno = 0;
	n = strtoul(optarg, &end, 10);
	if (errno || end == optarg || *end || optarg[0] == '-' || n > MAX_DEPTH)
		return rs_cli_fail(RS_EXIT_USAGE, "clone: --depth '%s' is not a count of commits",
				   optarg);
	a->clone.depth = (unsigned)n;
	a->depth_given = 1;
	return RS_EXIT_OK;
}

int cmd_clone(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "depth", required_argument, NULL, 'd' },
		{ "branch", required_argument, NULL, 'b' },
		{ "full", no_argument, NULL, 'F' },
		{ "remote", required_argument, NULL, 'r' },
		{ "agent", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct clone_args a = { { NULL, NULL, NULL, DEFAULT_DEPTH, 0 }, 0 };
	const char *remote = NULL, *agent = NULL;
	const struct rs_cli_bind bind[] = {
		{ 'b', NULL, &a.clone.branch }, { 'F', &a.clone.full, NULL },
		{ 'r', NULL, &remote }, { 'a', NULL, &agent }, { 0 },
	};
	struct rs_cli_opts opts = { .command = "clone", .usage = usage, .longopts = longopts,
				    .bind = bind };
	struct rs_setup_choice how = { NULL, 0, 0 };
	struct rs_buf dir = RS_BUF_INIT;
	int err, status;

	if (rs_cli_opts_parse(&opts, argc, argv, take_option, &a) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 2) < 0)
		return opts.status;
	if (optind >= argc)
		return rs_cli_usage("clone", "a git URL is needed");
	if (remote && !*remote)
		return rs_cli_fail(RS_EXIT_USAGE, "clone: --remote needs a URL");
	if (a.clone.full && !a.depth_given)
		a.clone.depth = 0;
	a.clone.url = argv[optind];
	a.clone.dir = argc - optind == 2 ? argv[optind + 1] : NULL;
	err = rs_setup_clone(&a.clone, &dir);
	if (err) {
		/* git's failures: an unreachable URL, an existing folder, no filters */
		status = rs_cli_fail(err == RS_EUSAGE ? RS_EXIT_USAGE : RS_EXIT_REMOTE,
				     "cannot clone '%s': %s", a.clone.url, rs_error_message());
		goto out;
	}
	printf("cloned:     %s (%s)\n", dir.ptr,
	       a.clone.full ? "full" : "developer clone: no run folders in the work tree, their "
	       "larger files fetched on demand");
	/* a program may change its own folder: what init does is done in the clone */
	if (chdir(dir.ptr) != 0) {
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot enter the clone '%s': %s", dir.ptr,
				     strerror(errno));
		goto out;
	}
	how.remote_arg = remote;
	status = rs_cli_init_here(&how, agent, 0);
out:
	rs_buf_release(&dir);
	return status;
}
