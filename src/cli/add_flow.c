/*
 * Recording one run from add's options (cli/add_flow.h): what `results
 * add` and `results run` share. results/record.h does the work.
 */
#include "cli/add_flow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/record.h"
#include "results/repo.h"
#include "results/report.h"

int rs_add_args_init(struct rs_add_args *a, int argc)
{
	memset(a, 0, sizeof(*a));
	a->trigger = "manual";
	a->metas = calloc((size_t)argc + 1, sizeof(*a->metas));
	a->stats = calloc((size_t)argc + 1, sizeof(*a->stats));
	if (!a->metas || !a->stats) {
		rs_add_args_release(a);
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	}
	return RS_EXIT_OK;
}

void rs_add_args_release(struct rs_add_args *a)
{
	free(a->metas);
	free(a->stats);
	a->metas = NULL;
	a->stats = NULL;
}

int rs_add_args_take(struct rs_add_args *a, int opt, const char *arg)
{
	switch (opt) {
	case RS_ADD_OPT_COMMIT: a->commit = arg; return 1;
	case RS_ADD_OPT_BRANCH: a->branch = arg; return 1;
	case RS_ADD_OPT_TRIGGER: a->trigger = arg; return 1;
	case RS_ADD_OPT_META: a->metas[a->nmeta++] = arg; return 1;
	case RS_ADD_OPT_STATS: a->stats[a->nstats++] = arg; return 1;
	case 'm': a->message = arg; return 1;
	case RS_ADD_OPT_RAW: a->raw = 1; return 1;
	}
	return 0;
}

int rs_add_args_check(const struct rs_add_args *a, const char *command)
{
	if (!a->commit)
		return rs_cli_fail(RS_EXIT_USAGE, "--commit <sha> is required "
				   "(the profiled commit); see 'results %s --help'", command);
	return RS_EXIT_OK;
}

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
static int describe_run(struct rs_record *rec, const struct rs_add_args *a)
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
static int gather(struct rs_record *rec, struct rs_repo *repo, const struct rs_add_args *a,
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

/*
 * The run's verdict against the earlier comparable runs, judged here (by
 * the report layer, as `results check` judges) and handed to the record:
 * recording itself never runs the check. Only out of memory fails.
 */
static int judge(struct rs_record *rec, struct rs_repo *repo)
{
	struct rs_buf json = RS_BUF_INIT;
	char *verdict = NULL;
	int err = rs_record_preview_json(&json, rec, repo);

	if (!err)
		err = rs_report_add_verdict(&verdict, repo, json.ptr, json.len,
					    rs_record_folder(rec));
	if (!err)
		err = rs_record_set_verdict(rec, verdict);
	free(verdict);
	rs_buf_release(&json);
	return err;
}

/* Judge the run, commit it and say what was recorded: RS_EXIT_*. */
static int record(struct rs_record *rec, struct rs_repo *repo)
{
	char head[41] = "";
	const char *session;
	unsigned long long size;
	int err = judge(rec, repo);

	if (!err)
		err = rs_record_commit(rec, repo, head);

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

int rs_add_record(const struct rs_add_args *a, char **paths, int npaths)
{
	struct rs_repo *repo = NULL;
	struct rs_record *rec = NULL;
	int status;

	if (rs_record_new(&rec))
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	status = describe_run(rec, a);
	if (status)
		goto out;
	status = open_for_add(&repo);
	if (status)
		goto out;
	if (!a->branch) {
		status = guess_branch(rec, repo, paths[0]);
		if (status)
			goto out;
	}
	status = gather(rec, repo, a, paths, npaths);
	if (status)
		goto out;
	status = record(rec, repo);
out:
	rs_record_free(rec);
	rs_repo_free(repo);
	return status;
}
