/*
 * results: record pyinstrument profiling runs in a git repository whose
 * sessions travel through Git LFS and lfs-agent. main() only dispatches:
 * each command is one file, cmd_<name>.c, and one line of the table below.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "results/args.h"
#include "results/error.h"
#include "results/escape.h"
#include "results/repo.h"

/* Keep in the order `results --help` should show them. */
const struct rs_command rs_commands[] = {
	{ "init", cmd_init, "configure this clone (or, with --global, this machine) for results" },
	{ "clone", cmd_clone, "make the small developer clone of a results repository, set up" },
	{ "doctor", cmd_doctor, "check the set-up and the remote, say what to fix" },
	{ "add", cmd_add, "record one profiling run as one commit" },
	{ "run", cmd_run, "run a profiling command, measure it from outside, record the run" },
	{ "list", cmd_list, "list recorded runs, newest first" },
	{ "show", cmd_show, "show one run's summary or run.json" },
	{ "fetch", cmd_fetch, "download the raw sessions of runs" },
	{ "compare", cmd_compare, "compare two runs: metrics, functions, renames" },
	{ "check", cmd_check, "fail (exit 1) when a run is slower than its baseline, beyond noise" },
	{ "trend", cmd_trend, "metric and function series across runs; --html for charts" },
	{ "find", cmd_find, "locate the largest step change of a metric over a range of runs" },
	{ "site", cmd_site, "write a static HTML site of the runs and their trends" },
	{ "verify", cmd_verify, "check that every run's raw session is on the remote and intact; --repair" },
	{ "gc", cmd_gc, "delete raw sessions the retention policy no longer keeps, free unused packs" },
	{ "prune", cmd_prune, "delete local copies of sessions the store is proven to hold" },
	{ "pin", cmd_pin, "keep runs' raw sessions whatever the retention policy says" },
	{ "open", cmd_open, "write one run's call tree as interactive HTML (or speedscope JSON)" },
	{ "export", cmd_export, "convert a run's session to speedscope JSON or collapsed stacks" },
	{ "help", cmd_help, "show help for results or a command" },
	{ "version", cmd_version, "print the version" },
};
const unsigned int rs_ncommands = sizeof(rs_commands) / sizeof(rs_commands[0]);

int rs_cli_wants_help(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

/*
 * The one table from error codes to exit statuses (docs/cli.md, "Exit
 * statuses"). A code says what went wrong; the column says of what: the
 * same "corrupt" is the user's to fix in a file given to `results add`
 * (2) and damage in a store (7). What a command knows beyond that (not
 * found = unknown run, or = object missing) it says itself.
 */
static const struct {
	int code;
	unsigned char status[RS_CLI_WHERE_COUNT];
} exit_table[] = {
	/* code            any              input            remote */
	{ RS_OK,        { RS_EXIT_OK,      RS_EXIT_OK,      RS_EXIT_OK } },
	{ RS_EUSAGE,    { RS_EXIT_USAGE,   RS_EXIT_USAGE,   RS_EXIT_USAGE } },
	{ RS_ENOTFOUND, { RS_EXIT_OTHER,   RS_EXIT_USAGE,   RS_EXIT_REMOTE } },
	{ RS_ECORRUPT,  { RS_EXIT_CORRUPT, RS_EXIT_USAGE,   RS_EXIT_CORRUPT } },
	{ RS_ETOOBIG,   { RS_EXIT_CORRUPT, RS_EXIT_USAGE,   RS_EXIT_CORRUPT } },
	{ RS_EFORMAT,   { RS_EXIT_CORRUPT, RS_EXIT_USAGE,   RS_EXIT_CORRUPT } },
	/* a newer writer's format or version: upgrade, wherever it was met */
	{ RS_ENEWER,    { RS_EXIT_NEWER,   RS_EXIT_NEWER,   RS_EXIT_NEWER } },
	{ RS_EAUTH,     { RS_EXIT_REMOTE,  RS_EXIT_REMOTE,  RS_EXIT_REMOTE } },
	{ RS_ERETRY,    { RS_EXIT_REMOTE,  RS_EXIT_REMOTE,  RS_EXIT_REMOTE } },
	{ RS_EREMOTE,   { RS_EXIT_REMOTE,  RS_EXIT_REMOTE,  RS_EXIT_REMOTE } },
	{ RS_EEXISTS,   { RS_EXIT_OTHER,   RS_EXIT_OTHER,   RS_EXIT_OTHER } },
	{ RS_EGENERIC,  { RS_EXIT_OTHER,   RS_EXIT_OTHER,   RS_EXIT_REMOTE } },
};

int rs_cli_exit_in(int err, enum rs_cli_where where)
{
	for (size_t i = 0; i < sizeof(exit_table) / sizeof(exit_table[0]); i++)
		if (exit_table[i].code == err)
			return exit_table[i].status[where];
	return RS_EXIT_OTHER;
}

int rs_cli_exit_for(int err)
{
	return rs_cli_exit_in(err, RS_CLI_ANY);
}

const char *rs_cli_term(struct rs_buf *b, const char *s)
{
	rs_buf_clear(b);
	if (rs_escape_term(b, s, 0)) {
		rs_error_clear(); /* display only: a placeholder, not a failure */
		return "?";
	}
	return b->ptr ? b->ptr : "";
}

int rs_cli_print(FILE *f, const char *p, size_t n)
{
	struct rs_buf piece = RS_BUF_INIT, safe = RS_BUF_INIT;
	size_t at = 0, len;
	int ret = 0;

	/* piece by piece between NUL bytes, which the escapers cannot see */
	while (at < n && !ret) {
		len = strnlen(p + at, n - at);
		rs_buf_clear(&piece);
		rs_buf_clear(&safe);
		if (rs_buf_put(&piece, p + at, len) ||
		    rs_escape_term(&safe, piece.ptr, RS_ESCAPE_KEEP_LINES)) {
			rs_error_clear();
			errno = ENOMEM;
			ret = -1;
		} else if (safe.len && fwrite(safe.ptr, 1, safe.len, f) != safe.len) {
			ret = -1;
		}
		at += len;
		if (at < n && !ret) {
			if (fputs("\\x00", f) == EOF)
				ret = -1;
			at++;
		}
	}
	rs_buf_release(&piece);
	rs_buf_release(&safe);
	return ret;
}

/* "results<prefix>: <message>" on stderr, made safe for a terminal. */
static int vfail(int status, const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	struct rs_buf msg = RS_BUF_INIT, safe = RS_BUF_INIT;
	int err;

	err = rs_buf_vprintf(&msg, fmt, ap);
	if (!err && suffix)
		err = rs_buf_puts(&msg, suffix);
	fprintf(stderr, "results%s: ", prefix);
	/* a message quotes names from outside: a terminal gets no control byte */
	if (!err)
		err = rs_escape_term(&safe, msg.ptr ? msg.ptr : "", 0);
	fputs(err ? "(out of memory while reporting an error)" : safe.ptr ? safe.ptr : "", stderr);
	fputc('\n', stderr);
	rs_buf_release(&msg);
	rs_buf_release(&safe);
	return status;
}

int rs_cli_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	status = vfail(status, "", NULL, fmt, ap);
	va_end(ap);
	return status;
}

int rs_cli_usage(const char *command, const char *fmt, ...)
{
	struct rs_buf program = RS_BUF_INIT, msg = RS_BUF_INIT, line = RS_BUF_INIT;
	va_list ap;
	int err;

	/* a command name is one of rs_commands' (ours), never from outside */
	err = command ? rs_buf_printf(&program, "results %s", command)
		      : rs_buf_puts(&program, "results");
	if (err)
		goto out;
	va_start(ap, fmt);
	err = rs_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err)
		goto out;
	/* the one shape of both programs' usage errors (results/args.h) */
	err = rs_args_usage_line(&line, program.ptr, msg.ptr ? msg.ptr : "");
out:
	if (err)
		fputs("results: (out of memory while reporting an error)\n", stderr);
	else
		fprintf(stderr, "%s\n", line.ptr);
	rs_buf_release(&program);
	rs_buf_release(&msg);
	rs_buf_release(&line);
	return RS_EXIT_USAGE;
}

int rs_cli_error(int status)
{
	return rs_cli_fail(status, "%s", rs_error_message());
}

int rs_cli_report(int err)
{
	return rs_cli_error(rs_cli_exit_for(err));
}

int rs_cli_open_repo(struct rs_repo **out)
{
	struct rs_repo *r = NULL;
	int err;

	err = rs_repo_open(&r, NULL);
	if (err == RS_ENOTFOUND)
		return rs_cli_error(RS_EXIT_NOT_REPO);
	if (err < 0)
		return rs_cli_report(err);
	err = rs_repo_check_results(r);
	if (err < 0) {
		rs_repo_free(r);
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO
							: rs_cli_exit_for(err));
	}
	*out = r;
	return RS_EXIT_OK;
}

const char *rs_cli_exe_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		dir[0] = '\0';
		return NULL;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash) {
		dir[0] = '\0';
		return NULL;
	}
	*slash = '\0';
	if (!dir[0])
		strcpy(dir, "/");
	return dir;
}

static const struct rs_command *find_command(const char *name)
{
	unsigned int i;

	for (i = 0; i < rs_ncommands; i++)
		if (strcmp(rs_commands[i].name, name) == 0)
			return &rs_commands[i];
	return NULL;
}

/*
 * The dispatcher's own options, before the command: -h/--help and
 * --version; any other is refused as a command's would be (results/args.h),
 * "results: unknown option '--x' (see 'results --help')". The scan stops
 * at the command's name ('+'): what follows it is the command's.
 */
int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_args args = { .shortopts = "+", .longopts = options };
	const struct rs_command *cmd;
	int status, opt;

	if (argc < 2) {
		cmd_help(1, argv);
		return RS_EXIT_USAGE;
	}
	opt = rs_args_next(&args, argc, argv);
	if (opt < 0)
		return rs_cli_usage(NULL, "%s", rs_error_message());
	if (opt == 'h')
		return cmd_help(argc - 1, argv + 1);
	if (opt == 'V')
		return cmd_version(argc - 1, argv + 1);
	if (optind >= argc)
		return rs_cli_usage(NULL, "give a command");
	cmd = find_command(argv[optind]);
	if (!cmd)
		return rs_cli_usage(NULL, "unknown command '%s'", argv[optind]);
	rs_repo_global_init();
	status = cmd->fn(argc - optind, argv + optind);
	rs_repo_global_shutdown();
	return status;
}
