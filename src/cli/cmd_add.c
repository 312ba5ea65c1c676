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
#include "cli/opts.h"
#include "repo/repo.h"
#include "repo/run.h"
#include "results/error.h"

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

/* The arguments of one `results add`, as given. */
struct add_args {
	const char *commit, *branch, *trigger;
	const char **metas, **stats;  /* argc slots each */
	size_t nmeta, nstats;
	int raw;
};

/* The options into `a` (and -m into run->message); -1 with *status to return. */
static int parse_args(struct add_args *a, struct rs_run *run, int argc, char **argv,
		      int *status)
{
	struct rs_cli_opts opts = {
		.command = "add", .usage = usage, .shortopts = ":hm:", .longopts = options,
	};
	int opt;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		switch (opt) {
		case OPT_COMMIT: a->commit = optarg; break;
		case OPT_BRANCH: a->branch = optarg; break;
		case OPT_TRIGGER: a->trigger = optarg; break;
		case OPT_META: a->metas[a->nmeta++] = optarg; break;
		case OPT_STATS: a->stats[a->nstats++] = optarg; break;
		case 'm':
			free(run->message);
			run->message = strdup(optarg);
			if (!run->message) {
				*status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
				return -1;
			}
			break;
		case OPT_RAW: a->raw = 1; break;
		}
	}
	*status = opts.status;
	return opt;
}

/* Who, what and when, before the repository is opened: RS_EXIT_*. */
static int describe_run(struct rs_run *run, const struct add_args *a)
{
	const char *at;

	run->raw = a->raw;
	if (rs_run_set_commit(run, a->commit) || rs_run_set_trigger(run, a->trigger) ||
	    (a->branch && rs_run_set_branch(run, a->branch)))
		return rs_cli_error(RS_EXIT_USAGE);
	for (size_t i = 0; i < a->nmeta; i++)
		if (rs_run_add_meta(run, a->metas[i]))
			return rs_cli_error(RS_EXIT_USAGE);
	if (run->message && (strlen(run->message) > 64 * 1024 || !*run->message))
		return rs_cli_fail(RS_EXIT_USAGE, "--message must have 1 to 65536 bytes");
	at = getenv("RESULTS_RECORDED_AT");
	if (at && *at) {
		char *end;
		long long t = strtoll(at, &end, 10);

		if (*end || t < 0 || t > 253402300799LL)
			return rs_cli_fail(RS_EXIT_USAGE, "RESULTS_RECORDED_AT='%s' is not "
					   "Unix seconds", at);
		rs_run_set_time(run, (time_t)t);
	} else {
		rs_run_set_time(run, time(NULL));
	}
	return RS_EXIT_OK;
}

/*
 * The profiled checkout's branch when the session (`path`) lies in it and
 * it is at --commit; else what CI says; else "main".
 */
static int guess_branch(struct rs_run *run, struct rs_repo *repo, const char *path)
{
	struct rs_buf b = RS_BUF_INIT;
	int err = rs_run_profiled_branch(&b, run, repo, path);

	err = rs_run_set_branch(run, err == 0 ? b.ptr : default_branch());
	rs_buf_release(&b);
	return err ? rs_cli_error(RS_EXIT_USAGE) : RS_EXIT_OK;
}

/* The machine, the --stats files and the files named: RS_EXIT_*. */
static int gather(struct rs_run *run, struct rs_repo *repo, const struct add_args *a,
		  char **paths, int npaths)
{
	int err = rs_run_detect_machine(run);

	if (err)
		return rs_cli_report(err);
	for (size_t i = 0; i < a->nstats; i++)
		if ((err = rs_run_add_stats_file(run, a->stats[i])))
			return rs_cli_error(input_status(err));
	for (int i = 0; i < npaths; i++)
		if ((err = rs_run_add_path(run, repo, paths[i])))
			return rs_cli_error(input_status(err));
	return RS_EXIT_OK;
}

/* Open the repository and make it ready to take a run: RS_EXIT_*. */
static int open_for_add(struct rs_repo **repo)
{
	int status = rs_cli_open_repo(repo);

	if (status != RS_EXIT_OK)
		return status;
	/* Before anything is written: a clone whose pushes would take the
	   session to the git host's own LFS server records nothing. */
	if (rs_repo_check_transfer(*repo) != 0)
		return rs_cli_fail(RS_EXIT_OTHER, "%s; nothing was recorded", rs_error_message());
	return rs_cli_repair_repo(*repo);
}

int cmd_add(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_run run;
	struct add_args a = { NULL, NULL, "manual", NULL, NULL, 0, 0, 0 };
	char head[41] = "";
	int err, status = RS_EXIT_OK;

	rs_run_init(&run);
	a.metas = calloc((size_t)argc, sizeof(*a.metas));
	a.stats = calloc((size_t)argc, sizeof(*a.stats));
	if (!a.metas || !a.stats) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (parse_args(&a, &run, argc, argv, &status) < 0)
		goto out;
	if (!a.commit) {
		status = rs_cli_fail(RS_EXIT_USAGE, "--commit <sha> is required "
				     "(the profiled commit); see 'results add --help'");
		goto out;
	}
	if (optind >= argc) {
		status = rs_cli_fail(RS_EXIT_USAGE, "give a session file or a run folder; "
				     "see 'results add --help'");
		goto out;
	}
	status = describe_run(&run, &a);
	if (!status)
		status = open_for_add(&repo);
	if (!status && !a.branch)
		status = guess_branch(&run, repo, argv[optind]);
	if (!status)
		status = gather(&run, repo, &a, argv + optind, argc - optind);
	if (status)
		goto out;
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
	free(a.metas);
	free(a.stats);
	return status;
}
