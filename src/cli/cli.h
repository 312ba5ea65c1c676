/*
 * Shared by the `results` commands: the command signature, the exit
 * statuses (docs/cli.md) and how an error becomes `results: <message>`.
 *
 * Each command lives in cmd_<name>.c as `int cmd_<name>(int argc, char
 * **argv)` (argv[0] is the command name) and has one line in the table of
 * main.c. It returns one of the RS_EXIT_* statuses.
 */
#ifndef RS_CLI_H
#define RS_CLI_H

#include "results/error.h"
#include <stdio.h>

#include "results/buf.h"

enum rs_exit {
	RS_EXIT_OK = 0,
	RS_EXIT_REGRESSION = 1, /* results check found a regression */
	RS_EXIT_USAGE = 2,      /* usage / bad input */
	RS_EXIT_NOT_REPO = 3,   /* not a results repository */
	RS_EXIT_UNKNOWN = 4,    /* unknown or ambiguous run / commit */
	RS_EXIT_REMOTE = 5,     /* remote unreachable / auth */
	RS_EXIT_MISSING = 6,    /* object missing on the remote */
	RS_EXIT_CORRUPT = 7,    /* corrupt data */
	RS_EXIT_OTHER = 8,      /* anything else */
	RS_EXIT_NEWER = 9,      /* written by a newer results: upgrade */
};

/* One line of the dispatch table in main.c. */
struct rs_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for `results --help` */
};

extern const struct rs_command rs_commands[];
extern const unsigned int rs_ncommands;

/* Every command (declared here so that main.c's table needs one line). */
int cmd_add(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_find(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_open(int argc, char **argv);
int cmd_pin(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_site(int argc, char **argv);
int cmd_trend(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* True when argv[1..] holds -h or --help (every command answers it). */
int rs_cli_wants_help(int argc, char **argv);

/* Of what an error is said, for the exit table of main.c. */
enum rs_cli_where {
	RS_CLI_ANY,    /* the repository, a store, the program itself */
	RS_CLI_INPUT,  /* files the user named (`results add`): theirs to fix, 2 */
	RS_CLI_REMOTE, /* opening the remote: what is not a usage, size or
			  format error is a remote problem, 5 */
	RS_CLI_WHERE_COUNT
};

/*
 * An RS_E* code's exit status, from the one table in main.c (documented
 * in docs/cli.md): RS_EUSAGE 2; RS_ECORRUPT, RS_ETOOBIG and RS_EFORMAT 7;
 * RS_EAUTH, RS_ERETRY and RS_EREMOTE 5; else 8. Commands that know more
 * (not found = unknown run, or = object missing) say so themselves.
 */
int rs_cli_exit_in(int err, enum rs_cli_where where);
int rs_cli_exit_for(int err); /* rs_cli_exit_in(err, RS_CLI_ANY) */

/*
 * Text from a repository, a session or a server on its way to a terminal
 * (results/escape.h: ESC, BEL and every other control shown, not sent).
 * rs_cli_term: `s` as one line in `b` (cleared first), for a printf %s;
 * "?" when out of memory. rs_cli_print: the `n` bytes of `p` (lines kept,
 * NUL bytes shown too) to `f`; 0, or -1 with errno when writing fails.
 */
const char *rs_cli_term(struct rs_buf *b, const char *s);
RS_MUST_CHECK
int rs_cli_print(FILE *f, const char *p, size_t n);

/* Print "results: <fmt...>" on stderr (the message made safe for a
   terminal, as rs_cli_term does) and return `status`. */
int rs_cli_fail(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A usage error of `command`, the one shape every command prints (docs/cli.md,
 * results/args.h's rs_args_usage_line, which lfs-agent prints too):
 * "results <command>: <fmt...> (see 'results <command> --help')" on
 * stderr, made safe for a terminal; returns RS_EXIT_USAGE. A NULL command
 * is the dispatcher's: "results: <fmt...> (see 'results --help')".
 */
int rs_cli_usage(const char *command, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "results: <rs_error_message()>" and return `status`. */
int rs_cli_error(int status);

/* Print "results: <rs_error_message()>" and return rs_cli_exit_for(err). */
int rs_cli_report(int err);

/*
 * Open the results repository around the current directory, or print the
 * error and return RS_EXIT_NOT_REPO. `*out` is the caller's (rs_repo_free).
 * Declared with an incomplete type so that commands that do not use the
 * repository need not include git/repo.h.
 */
struct rs_repo;
RS_MUST_CHECK
int rs_cli_open_repo(struct rs_repo **out);

/*
 * Before writing to the repository: finish or undo what a killed results
 * process left half done (a note on stderr says which) and remove stale
 * temporary files. RS_EXIT_OK, or the printed error's status.
 */
RS_MUST_CHECK
int rs_cli_repair_repo(struct rs_repo *repo);

/* Directory holding the running `results` binary (from /proc/self/exe),
   without trailing '/'. Borrowed static storage; NULL if unknown. */
const char *rs_cli_exe_dir(void);

/*
 * What `results init` does in the clone of the current folder (cmd_init.c):
 * the remote `how` chooses, lfs-agent (`agent_arg`, NULL: found next to
 * results), the git config and hooks, with its messages; `results clone`
 * runs it in the clone it made. With `sparse` (`results init --sparse`),
 * first the work tree and index `results clone` makes (rs_setup_sparse).
 * Returns an RS_EXIT_* status (printed).
 */
struct rs_setup_choice;
int rs_cli_init_here(const struct rs_setup_choice *how, const char *agent_arg, int sparse);

#endif
