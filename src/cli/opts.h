/*
 * The option parser of every command: results/args.h (the parser both
 * programs share: -h/--help added to every command's table, one wording
 * for an unknown option, a missing value, a value given to a switch, an
 * ambiguous prefix and an operand too many) printed in the shape of
 * rs_cli_usage ("results <cmd>: unknown option '--x' (see 'results <cmd>
 * --help')", exit status 2, docs/cli.md), and the options several
 * commands take (--format, --branch, --per, --no-workload, -o/--output),
 * each parsed and checked in one place.
 *
 * A command keeps its own `struct option` table (what it accepts) and
 * says which shared options the helper handles for it; every other
 * option comes back to the command:
 *
 *     struct rs_cli_opts opts = { .command = "trend", .usage = usage,
 *             .shortopts = "ho:", .longopts = options,
 *             .take = RS_CLI_OPT_BRANCH | RS_CLI_OPT_OUTPUT };
 *     if (rs_cli_opts_parse(&opts, argc, argv, take_option, &args) < 0)
 *             return opts.status;
 *     if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
 *             return opts.status;
 *
 * where take_option(ctx, o, opt) handles the command's own options
 * (switch (opt) { case 'l': ... }) and returns RS_EXIT_OK to go on.
 *
 * The shared options use these codes in the tables: 'f' --format,
 * 'B' --branch, 'p' --per, 'W' --no-workload, 'o' --output, 'h' --help;
 * the RS_CLI_OPTION_* lines below spell them.
 */
#ifndef RS_CLI_OPTS_H
#define RS_CLI_OPTS_H

#include "results/error.h"
#include <getopt.h>

#include "results/args.h"

#include "results/report.h"

#define RS_CLI_OPTION_FORMAT { "format", required_argument, NULL, 'f' }
#define RS_CLI_OPTION_BRANCH { "branch", required_argument, NULL, 'B' }
#define RS_CLI_OPTION_PER { "per", required_argument, NULL, 'p' }
#define RS_CLI_OPTION_NO_WORKLOAD { "no-workload", no_argument, NULL, 'W' }
#define RS_CLI_OPTION_OUTPUT { "output", required_argument, NULL, 'o' }
#define RS_CLI_OPTION_HELP { "help", no_argument, NULL, 'h' }

enum {
	RS_CLI_OPT_FORMAT = 1 << 0,    /* --format text|json|markdown */
	RS_CLI_OPT_TEXT_JSON = 1 << 1, /* --format text|json: "<cmd> formats are ..." */
	RS_CLI_OPT_BRANCH = 1 << 2,    /* --branch NAME */
	RS_CLI_OPT_WORKLOAD = 1 << 3,  /* --per KEY, --no-workload */
	RS_CLI_OPT_OUTPUT = 1 << 4,    /* -o/--output FILE */
};

/*
 * An option stored without code of the command's: a switch sets *flag to
 * 1, an option with a value sets *value to it (the last one given wins).
 * A command's table of them ends with { 0 }.
 */
struct rs_cli_bind {
	int code;                      /* the option's getopt code */
	int *flag;
	const char **value;
};

struct rs_cli_opts {
	/* the command's */
	const char *command;           /* its name, for the messages */
	const char *usage;             /* printed by -h/--help */
	const char *shortopts;         /* getopt's (results/args.h: "h" and ':' are
	                                  added; a leading '+' stops at the first
	                                  operand); NULL: none */
	const struct option *longopts; /* at most RS_ARGS_MAX */
	unsigned take;                 /* RS_CLI_OPT_*: what the helper handles */
	const struct rs_cli_bind *bind; /* options the helper stores; NULL: none */
	/* the helper's (zero: not given; fmt: RS_FORMAT_TEXT) */
	enum rs_format fmt;
	const char *branch;
	const char *per;
	int no_workload;
	const char *output;
	int status;                    /* RS_EXIT_* once rs_cli_opts_next returned -1 */
	struct rs_args args;           /* the scan (results/args.h) */
};

/*
 * The next option the command handles itself (its getopt code, > 0); 0
 * at the end of the options (optind is then the first operand); -1 when
 * the command should return o->status: --help was printed (RS_EXIT_OK),
 * or a usage error was (RS_EXIT_USAGE). The first call starts the scan.
 */
int rs_cli_opts_next(struct rs_cli_opts *o, int argc, char **argv);

/* A command's own options, one at a time: RS_EXIT_OK to go on, else the status to end with. */
typedef int (*rs_cli_take_fn)(void *ctx, struct rs_cli_opts *o, int opt);

/*
 * The whole loop of rs_cli_opts_next, handing each of the command's own
 * options to `take(ctx, o, opt)`: 0 when every option was taken (optind
 * is then the first operand), -1 when the command should return
 * o->status (--help, a usage error, or what `take` returned). `take`
 * may be NULL when every option of the table is shared or bound.
 */
RS_MUST_CHECK
int rs_cli_opts_parse(struct rs_cli_opts *o, int argc, char **argv, rs_cli_take_fn take,
		      void *ctx);

/*
 * After the options: RS_EXIT_OK when at most `max` operands follow, else
 * -1 with the usage error "unexpected argument '<the first one too many>'"
 * printed and o->status set. Fewer operands than a command needs are its
 * own to say (rs_cli_usage: what it needs).
 */
RS_MUST_CHECK
int rs_cli_opts_operands(struct rs_cli_opts *o, int argc, char **argv, int max);

#endif
