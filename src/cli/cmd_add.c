/*
 * `results add`: record one profiling run as one commit (results/record.h
 * does the work; this file reads the command line and reports).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/add_flow.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/record.h"
#include "results/repo.h"

static const char usage[] =
	"usage: results add <session-or-run-folder>... --commit <sha> [options]\n"
	"\n"
	"Record one profiling run in the results repository around the current\n"
	"directory, as ONE commit: the session as a Git LFS pointer (its content\n"
	"goes to .git/lfs/objects; the next 'git push' uploads it), run.json,\n"
	"summary.md, the index and the README table. Push afterwards.\n"
	"\n"
	"Arguments are session files (*.pyisession) or run folders as profiling\n"
	"scripts write them (*.pyisession, *.stats.json, *.args.json,\n"
	"*.logged-stats.csv, *.html): sessions become LFS pointers, every other\n"
	"file is committed as it is (at most 50 MiB); stats files are read into\n"
	"run.json.\n"
	"The first session is the run's main session, summarised in summary.md.\n"
	"\n"
	"options:\n"
	"  --commit SHA        the profiled commit, full id (required)\n"
	"  --branch NAME       profiled branch (default: the branch of the git\n"
	"                      checkout holding the first argument when it is\n"
	"                      at --commit, else $GITHUB_HEAD_REF, then\n"
	"                      $GITHUB_REF_NAME, else 'main')\n"
	"  --trigger NAME      what started the run: ci, nightly, manual...\n"
	"                      (letters, digits, '_', '.'; default 'manual')\n"
	"  --meta KEY=VALUE    free metadata, repeatable\n"
	"  --stats FILE.json   more stats (a JSON object, nested keys joined by '.')\n"
	"  -m, --message MSG   a note kept in run.json, summary.md and the commit\n"
	"  --raw               store files without parsing them (no summary)\n"
	"\n"
	"A file that is not a pyinstrument session is refused unless --raw; on\n"
	"any error nothing is committed.\n"
	"Environment: RESULTS_RECORDED_AT (Unix seconds) overrides the recording\n"
	"time, for back-filling old runs; RUNNER_NAME names the CI runner.\n"
	"\n"
	"The clone must push sessions through lfs-agent ('results init' sets it\n"
	"up); otherwise nothing is recorded (exit 8): a push would send them to\n"
	"the git host's own LFS server.\n"
	"\n"
	"exit status: 0 recorded, 2 bad usage or input, 3 not a results\n"
	"repository, 8 not set up for lfs-agent or other error.\n";

static const struct option options[] = {
	RS_ADD_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_add(int argc, char **argv)
{
	struct rs_cli_opts opts = {
		.command = "add", .usage = usage, .shortopts = ":hm:", .longopts = options,
	};
	struct rs_add_args a;
	int status = rs_add_args_init(&a, argc), opt;

	if (status)
		return status;
	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		rs_add_args_take(&a, opt, optarg);
	}
	if (opt < 0) {
		status = opts.status;
		goto out;
	}
	status = rs_add_args_check(&a, "add");
	if (status)
		goto out;
	if (optind >= argc) {
		status = rs_cli_usage("add", "give a session file or a run folder");
		goto out;
	}
	status = rs_add_record(&a, argv + optind, argc - optind);
out:
	rs_add_args_release(&a);
	return status;
}
