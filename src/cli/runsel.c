#include "cli/runsel.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "results/error.h"
#include "results/output.h"
#include "results/report.h"

int rs_runsel_open(struct rs_runsel *s)
{
	return rs_runsel_open_window(s, 0, NULL, 0);
}

int rs_runsel_open_window(struct rs_runsel *s, size_t want, const char *branch, int newest_branch)
{
	int status, err;

	s->repo = NULL;
	s->runs = NULL;
	status = rs_cli_open_repo(&s->repo);
	if (status != RS_EXIT_OK)
		return status;
	err = rs_runs_open_window(&s->runs, s->repo, NULL, want, branch, newest_branch);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}

int rs_runsel_open_for(struct rs_runsel *s, const char *const *queries, size_t n)
{
	int status, err;

	s->repo = NULL;
	s->runs = NULL;
	status = rs_cli_open_repo(&s->repo);
	if (status != RS_EXIT_OK)
		return status;
	err = rs_runs_open_for(&s->runs, s->repo, NULL, queries, n);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}

void rs_runsel_close(struct rs_runsel *s)
{
	rs_runs_free(s->runs);
	s->runs = NULL;
	rs_repo_free(s->repo);
	s->repo = NULL;
}

int rs_runsel_resolve(const struct rs_run_entry **out, const struct rs_runsel *s,
			 const char *query)
{
	if (rs_runs_resolve(out, s->runs, query))
		return rs_cli_error(RS_EXIT_UNKNOWN);
	return RS_EXIT_OK;
}

int rs_runsel_load(struct rs_run_doc **out, const struct rs_runsel *s,
		      const struct rs_run_entry *e)
{
	int err;

	err = rs_run_doc_load(out, s->runs, e);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}

/* Run `results fetch <id>` and return its exit status. */
static int fetch_with_child(const char *id)
{
	const char *dir = rs_cli_exe_dir();
	char exe[4096];
	pid_t pid;
	int st;

	if (!dir || snprintf(exe, sizeof(exe), "%s/results", dir) >= (int)sizeof(exe))
		return rs_cli_fail(RS_EXIT_OTHER, "cannot find the results program to fetch with");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return rs_cli_fail(RS_EXIT_OTHER, "cannot start 'results fetch': %s", strerror(errno));
	if (pid == 0) {
		/* the fetched path is not this command's output */
		if (!freopen("/dev/null", "w", stdout))
			_exit(RS_EXIT_OTHER);
		/* "--": an id from the repository is never taken for an option. */
		execl(exe, "results", "fetch", "--", id, (char *)NULL);
		_exit(RS_EXIT_OTHER);
	}
	if (waitpid(pid, &st, 0) < 0)
		return rs_cli_fail(RS_EXIT_OTHER, "waiting for 'results fetch': %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : RS_EXIT_OTHER;
}

int rs_runsel_session_path(struct rs_buf *path, const struct rs_runsel *s,
			      const struct rs_run_entry *e, const struct rs_run_doc *doc)
{
	int err, present = 0;

	err = rs_report_session_path(path, &present, s->runs, doc);
	if (err == RS_ENOTFOUND)
		return rs_cli_fail(RS_EXIT_UNKNOWN, "run %s has no session "
				   "(recorded with --raw?)", rs_run_entry_id(e));
	if (err)
		return rs_cli_report(err);
	if (!present)
		return fetch_with_child(rs_run_entry_id(e)); /* fetch printed why */
	return RS_EXIT_OK;
}

int rs_runsel_write(const char *path, const struct rs_buf *b)
{
	if (!path || !strcmp(path, "-")) {
		/* no control byte from a run or a session reaches a terminal */
		if (rs_cli_print(stdout, b->ptr ? b->ptr : "", b->len) || fflush(stdout))
			return rs_cli_fail(RS_EXIT_OTHER, "cannot write the output");
		return RS_EXIT_OK;
	}
	/* beside it and renamed over it: a link at `path` is replaced, not followed */
	if (rs_output_write_file(path, b->ptr ? b->ptr : "", b->len, RS_OUTPUT_REPLACE))
		return rs_cli_error(RS_EXIT_OTHER);
	return RS_EXIT_OK;
}

int rs_runsel_parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || (*end && strcmp(end, "%")) || !isfinite(v) || v <= 0 ||
	    v >= 1000)
		return rs_cli_fail(RS_EXIT_USAGE, "'%s' is not a percentage (for example 5 or 5%%)", s);
	*out = v / 100;
	return RS_EXIT_OK;
}

int rs_runsel_parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end || errno || v == 0 || v > 1000000 || *s == '-')
		return rs_cli_fail(RS_EXIT_USAGE, "'%s' is not a positive count", s);
	*out = (size_t)v;
	return RS_EXIT_OK;
}
