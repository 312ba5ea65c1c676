/*
 * results doctor: say what is configured, whether the remote answers, and
 * what to fix. Each check prints one line, "ok", "warn" or "FAIL", and a
 * FAIL line says what to run. The exit status is that of the first
 * failure's kind: 3 (not a results repository), 5 (remote does not
 * answer), 8 (set-up incomplete); 0 when nothing failed.
 *
 * Everything is read, nothing is changed: doctor is safe to run anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/store.h"

static const char usage[] =
	"usage: results doctor\n"
	"\n"
	"Check this clone's set-up for results: the lfs-agent program and the\n"
	"git config that names it, git-lfs and its filters, the hooks, the\n"
	".gitattributes and .lfsconfig of the repository, and whether the\n"
	"remote answers. Prints one line per check and what to fix: also when\n"
	"the committed remote (.results.json) is not the one this clone uses, or\n"
	"when git-lfs would send sessions anywhere but through lfs-agent.\n"
	"\n"
	"exit status: 0 all good, 3 not a results repository, 5 the remote does\n"
	"not answer, 6 a newest run's session is not on the remote, 8 something\n"
	"else needs fixing\n";

/* What the findings add up to. */
struct doctor {
	int status; /* of the first failure */
	int fails, warns, lines;
};

/* The exit status a failed check of `kind` gives (docs/cli.md). */
static int status_for(enum rs_doctor_kind kind)
{
	switch (kind) {
	case RS_DOCTOR_NOT_REPO: return RS_EXIT_NOT_REPO;
	case RS_DOCTOR_REMOTE: return RS_EXIT_REMOTE;
	case RS_DOCTOR_MISSING: return RS_EXIT_MISSING;
	case RS_DOCTOR_NEWER: return RS_EXIT_NEWER;
	default: return RS_EXIT_OTHER;
	}
}

/* One finding: one line. */
static void say(enum rs_doctor_level level, enum rs_doctor_kind kind, const char *line,
		void *payload)
{
	static const char *const tag[] = { "ok  ", "warn", "FAIL" };
	struct doctor *d = payload;
	struct rs_buf safe = RS_BUF_INIT;

	printf("%s  %s\n", tag[level], rs_cli_term(&safe, line));
	rs_buf_release(&safe);
	d->lines++;
	if (level == RS_DOCTOR_WARN)
		d->warns++;
	if (level == RS_DOCTOR_FAIL) {
		d->fails++;
		if (d->status == RS_EXIT_OK)
			d->status = status_for(kind);
	}
}

/* Run `prog arg` with no output; 0 when it exits 0. */
static int runs_ok(const char *prog, const char *arg, void *payload)
{
	pid_t pid = fork();
	int wstatus;

	(void)payload;
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? 0 : -1;
}

/* Is `name` an executable on PATH? */
static int on_path(const char *name, void *payload)
{
	const char *path = getenv("PATH");
	struct rs_buf p = RS_BUF_INIT;
	int found = 0;

	(void)payload;
	while (path && *path && !found) {
		size_t n = strcspn(path, ":");

		rs_buf_clear(&p);
		found = rs_buf_printf(&p, "%.*s/%s", (int)n, path, name) == 0 &&
			access(p.ptr, X_OK) == 0;
		path += n + (path[n] == ':');
	}
	rs_buf_release(&p);
	return found;
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { RS_EXIT_OK, 0, 0, 0 };
	struct rs_doctor_options o = { say, runs_ok, on_path, &d };
	struct rs_cli_opts opts = { .command = "doctor", .usage = usage };

	if (rs_cli_opts_next(&opts, argc, argv) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	rs_doctor_run(NULL, &o);
	/* No git repository here: the one line says so, no summary. */
	if (d.status == RS_EXIT_NOT_REPO && d.lines == 1)
		return d.status;
	if (d.fails)
		printf("\n%d problem%s to fix (see FAIL above)\n", d.fails, d.fails == 1 ? "" : "s");
	else
		printf("\nall good%s\n", d.warns ? " (see the warnings above)" : "");
	return d.status;
}
