/*
 * `results add`: record one profiling run as one commit (src/repo/run.h
 * does the work; this file reads the command line and reports).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "repo/repo.h"
#include "repo/run.h"
#include "util/error.h"

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

enum { OPT_COMMIT = 256, OPT_BRANCH, OPT_TRIGGER, OPT_META, OPT_STATS, OPT_RAW };

static const struct option options[] = {
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "trigger", required_argument, NULL, OPT_TRIGGER },
	{ "meta", required_argument, NULL, OPT_META },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "message", required_argument, NULL, 'm' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *default_branch(void)
{
	const char *b = getenv("GITHUB_HEAD_REF"); /* set for pull requests */

	if (b && *b)
		return b;
	b = getenv("GITHUB_REF_NAME");
	if (b && *b)
		return b;
	return "main";
}

/* Input errors (a missing file, not a session) are the user's to fix. */
static int input_status(int err)
{
	if (err == RS_ENOTFOUND || err == RS_ECORRUPT || err == RS_EUSAGE)
		return RS_EXIT_USAGE;
	return rs_cli_exit_for(err);
}

int cmd_add(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_run run;
	const char *commit = NULL, *branch = NULL, *trigger = "manual";
	const char **metas = NULL, **stats = NULL;
	size_t nmeta = 0, nstats = 0;
	char head[41] = "";
	const char *at;
	int opt, err, status = RS_EXIT_OK, raw = 0;

	rs_run_init(&run);
	metas = calloc((size_t)argc, sizeof(*metas));
	stats = calloc((size_t)argc, sizeof(*stats));
	if (!metas || !stats) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hm:", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			goto out;
		case OPT_COMMIT: commit = optarg; break;
		case OPT_BRANCH: branch = optarg; break;
		case OPT_TRIGGER: trigger = optarg; break;
		case OPT_META: metas[nmeta++] = optarg; break;
		case OPT_STATS: stats[nstats++] = optarg; break;
		case 'm':
			free(run.message);
			run.message = strdup(optarg);
			if (!run.message) {
				status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
				goto out;
			}
			break;
		case OPT_RAW: raw = 1; break;
		case ':':
			status = rs_cli_fail(RS_EXIT_USAGE, "option '%s' needs a value",
					     argv[optind - 1]);
			goto out;
		default:
			status = rs_cli_fail(RS_EXIT_USAGE,
					     "unknown option '%s'; see 'results add --help'",
					     argv[optind - 1]);
			goto out;
		}
	}
	if (!commit) {
		status = rs_cli_fail(RS_EXIT_USAGE, "--commit <sha> is required "
				     "(the profiled commit); see 'results add --help'");
		goto out;
	}
	if (optind >= argc) {
		status = rs_cli_fail(RS_EXIT_USAGE, "give a session file or a run folder; "
				     "see 'results add --help'");
		goto out;
	}
	run.raw = raw;
	if ((err = rs_run_set_commit(&run, commit)) ||
	    (err = rs_run_set_trigger(&run, trigger)) ||
	    (branch && (err = rs_run_set_branch(&run, branch)))) {
		status = rs_cli_error(RS_EXIT_USAGE);
		goto out;
	}
	for (size_t i = 0; i < nmeta; i++)
		if ((err = rs_run_add_meta(&run, metas[i]))) {
			status = rs_cli_error(RS_EXIT_USAGE);
			goto out;
		}
	if (run.message && (strlen(run.message) > 64 * 1024 || !*run.message)) {
		status = rs_cli_fail(RS_EXIT_USAGE, "--message must have 1 to 65536 bytes");
		goto out;
	}
	at = getenv("RESULTS_RECORDED_AT");
	if (at && *at) {
		char *end;
		long long t = strtoll(at, &end, 10);

		if (*end || t < 0 || t > 253402300799LL) {
			status = rs_cli_fail(RS_EXIT_USAGE, "RESULTS_RECORDED_AT='%s' is not "
					     "Unix seconds", at);
			goto out;
		}
		rs_run_set_time(&run, (time_t)t);
	} else {
		rs_run_set_time(&run, time(NULL));
	}

	status = rs_cli_open_repo(&repo);
	if (status != RS_EXIT_OK)
		goto out;
	/* Before anything is written: a clone whose pushes would take the
	   session to the git host's own LFS server records nothing. */
	if (rs_repo_check_transfer(repo) != 0) {
		status = rs_cli_fail(RS_EXIT_OTHER, "%s; nothing was recorded", rs_error_message());
		goto out;
	}
	status = rs_cli_repair_repo(repo);
	if (status != RS_EXIT_OK)
		goto out;
	if (!branch) {
		/* The profiled checkout's branch when the session lies in it and
		   it is at --commit; else what CI says; else "main". */
		struct rs_buf b = RS_BUF_INIT;

		err = rs_run_profiled_branch(&b, &run, repo, argv[optind]);
		err = rs_run_set_branch(&run, err == 0 ? b.ptr : default_branch());
		rs_buf_release(&b);
		if (err) {
			status = rs_cli_error(RS_EXIT_USAGE);
			goto out;
		}
	}
	if ((err = rs_run_detect_machine(&run))) {
		status = rs_cli_report(err);
		goto out;
	}
	for (size_t i = 0; i < nstats; i++)
		if ((err = rs_run_add_stats_file(&run, stats[i]))) {
			status = rs_cli_error(input_status(err));
			goto out;
		}
	for (int i = optind; i < argc; i++)
		if ((err = rs_run_add_path(&run, repo, argv[i]))) {
			status = rs_cli_error(input_status(err));
			goto out;
		}
	err = rs_run_record(&run, repo, head);
	if (err == RS_ERETRY) {
		status = rs_cli_fail(RS_EXIT_OTHER, "%s; nothing was recorded, run the "
				     "command again", rs_error_message());
		goto out;
	}
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	printf("recorded run %s in %s (commit %.12s)\n", run.id, run.folder, head);
	if (run.main_session >= 0)
		printf("session %s (%llu bytes) is in the local LFS store; "
		       "'git push' uploads it\n", run.files[run.main_session].name,
		       (unsigned long long)run.files[run.main_session].size);
out:
	rs_run_release(&run);
	rs_repo_free(repo);
	free(metas);
	free(stats);
	return status;
}
