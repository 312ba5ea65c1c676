/*
 * `results add`: record one profiling run as one commit (results/record.h
 * does the work; this file reads the command line and reports).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Input errors (a missing file, not a session, over a cap) are the user's to fix. */
static int input_status(int err)
{
	return rs_cli_exit_in(err, RS_CLI_INPUT);
}

/* The arguments of one `results add`, as given. */
struct add_args {
	const char *commit, *branch, *trigger, *message;
	const char **metas, **stats;  /* argc slots each */
	size_t nmeta, nstats;
	int raw;
};

/* The options into `a`; -1 with *status to return. */
static int parse_args(struct add_args *a, int argc, char **argv, int *status)
{
	struct rs_cli_opts opts = {
		.command = "add", .usage = usage, .shortopts = ":hm:", .longopts = options,
	};
	int opt;

	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		switch (opt) {
		case OPT_COMMIT: a->commit = optarg; break;
		case OPT_BRANCH: a->branch = optarg; break;
		case OPT_TRIGGER: a->trigger = optarg; break;
		case OPT_META: a->metas[a->nmeta++] = optarg; break;
		case OPT_STATS: a->stats[a->nstats++] = optarg; break;
		case 'm': a->message = optarg; break;
		case OPT_RAW: a->raw = 1; break;
		}
	}
	*status = opts.status;
	return opt;
}

/* RESULTS_RECORDED_AT, else now: RS_EXIT_*. */
static int set_time(struct rs_record *rec)
{
	const char *at = getenv("RESULTS_RECORDED_AT");
	char *end;
	long long t;

	if (!at || !*at) {
		rs_record_set_time(rec, time(NULL));
		return RS_EXIT_OK;
	}
	t = strtoll(at, &end, 10);
	if (*end || t < 0 || t > 253402300799LL)
		return rs_cli_fail(RS_EXIT_USAGE, "RESULTS_RECORDED_AT='%s' is not "
				   "Unix seconds", at);
	rs_record_set_time(rec, (time_t)t);
	return RS_EXIT_OK;
}

/* Who, what and when, before the repository is opened: RS_EXIT_*. */
static int describe_run(struct rs_record *rec, const struct add_args *a)
{
	rs_record_set_raw(rec, a->raw);
	if (rs_record_set_commit(rec, a->commit) || rs_record_set_trigger(rec, a->trigger) ||
	    (a->branch && rs_record_set_branch(rec, a->branch)))
		return rs_cli_error(RS_EXIT_USAGE);
	for (size_t i = 0; i < a->nmeta; i++)
		if (rs_record_add_meta(rec, a->metas[i]))
			return rs_cli_error(RS_EXIT_USAGE);
	if (a->message && (strlen(a->message) > 64 * 1024 || !*a->message))
		return rs_cli_fail(RS_EXIT_USAGE, "--message must have 1 to 65536 bytes");
	if (a->message && rs_record_set_message(rec, a->message))
		return rs_cli_error(RS_EXIT_OTHER);
	return set_time(rec);
}

/*
 * The profiled checkout's branch when the session (`path`) lies in it and
 * it is at --commit; else what CI says; else "main".
 */
static int guess_branch(struct rs_record *rec, struct rs_repo *repo, const char *path)
{
	struct rs_buf b = RS_BUF_INIT;
	int err = rs_record_profiled_branch(&b, rec, repo, path);

	err = rs_record_set_branch(rec, err == 0 ? b.ptr : default_branch());
	rs_buf_release(&b);
	return err ? rs_cli_error(RS_EXIT_USAGE) : RS_EXIT_OK;
}

/* The machine, the --stats files and the files named: RS_EXIT_*. */
static int gather(struct rs_record *rec, struct rs_repo *repo, const struct add_args *a,
		  char **paths, int npaths)
{
	int err = rs_record_detect_machine(rec);

	if (err)
		return rs_cli_report(err);
	for (size_t i = 0; i < a->nstats; i++) {
		err = rs_record_add_stats_file(rec, a->stats[i]);
		if (err)
			return rs_cli_error(input_status(err));
	}
	for (int i = 0; i < npaths; i++) {
		err = rs_record_add_path(rec, repo, paths[i]);
		if (err)
			return rs_cli_error(input_status(err));
	}
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

/* The command line checked before anything is read: RS_EXIT_*. */
static int check_args(const struct add_args *a, int argc)
{
	if (!a->commit)
		return rs_cli_fail(RS_EXIT_USAGE, "--commit <sha> is required "
				   "(the profiled commit); see 'results add --help'");
	if (optind >= argc)
		return rs_cli_fail(RS_EXIT_USAGE, "give a session file or a run folder; "
				   "see 'results add --help'");
	return RS_EXIT_OK;
}

/* Commit the run and say what was recorded: RS_EXIT_*. */
static int record(struct rs_record *rec, struct rs_repo *repo)
{
	char head[41] = "";
	const char *session;
	unsigned long long size;
	int err = rs_record_commit(rec, repo, head);

	if (err == RS_ERETRY)
		return rs_cli_fail(RS_EXIT_OTHER, "%s; nothing was recorded, run the "
				   "command again", rs_error_message());
	if (err)
		return rs_cli_report(err);
	printf("recorded run %s in %s (commit %.12s)\n", rs_record_id(rec),
	       rs_record_folder(rec), head);
	if (rs_record_session(rec, &session, &size) == 0)
		printf("session %s (%llu bytes) is in the local LFS store; "
		       "'git push' uploads it\n", session, size);
	else
		rs_error_clear(); /* a raw run has no session to mention */
	return RS_EXIT_OK;
}

int cmd_add(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_record *rec = NULL;
	struct add_args a = { NULL, NULL, "manual", NULL, NULL, NULL, 0, 0, 0 };
	int status = RS_EXIT_OK;

	a.metas = calloc((size_t)argc, sizeof(*a.metas));
	a.stats = calloc((size_t)argc, sizeof(*a.stats));
	if (!a.metas || !a.stats || rs_record_new(&rec)) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (parse_args(&a, argc, argv, &status) < 0)
		goto out;
	status = check_args(&a, argc);
	if (status)
		goto out;
	status = describe_run(rec, &a);
	if (status)
		goto out;
	status = open_for_add(&repo);
	if (status)
		goto out;
	if (!a.branch) {
		status = guess_branch(rec, repo, argv[optind]);
		if (status)
			goto out;
	}
	status = gather(rec, repo, &a, argv + optind, argc - optind);
	if (status)
		goto out;
	status = record(rec, repo);
out:
	rs_record_free(rec);
	rs_repo_free(repo);
	free(a.metas);
	free(a.stats);
	return status;
}
