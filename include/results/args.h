/*
 * The command-line parser of both programs, `results` (every command and
 * the dispatcher) and `lfs-agent`: getopt_long's tables built once, -h and
 * --help added to every table, and one wording for what a user gets
 * wrong, whichever program it is:
 *
 *     unknown option '--x'          an option the table does not have
 *     option '--x' needs a value    the last word is an option that takes one
 *     option '--x' takes no value   a switch given "--x=..."
 *     option '--x' is ambiguous     a shortened name that fits several
 *     unexpected argument 'y'       an operand more than the program takes
 *
 * said in one shape (rs_args_usage_line, docs/cli.md "Options"):
 *
 *     <program>: <message> (see '<program> --help')
 *
 * The parser returns errors as every function of the library does
 * (RS_EUSAGE, the message in the per-thread slot) and never prints: the
 * program says the line and picks the exit status.
 *
 * getopt_long keeps its state in the process (optind, optarg, opterr):
 * only a program's main and what it calls use this layer, which is why it
 * is a layer of its own (src/args) that no other layer of the library may
 * include (src/layers.cmake).
 */
#ifndef RESULTS_ARGS_H
#define RESULTS_ARGS_H

#include <getopt.h>

#include "results/buf.h"
#include "results/error.h"

/* Long options of one program's table, at most (--help is added). */
#define RS_ARGS_MAX 40

/*
 * One scan of a command line. The caller fills the first two fields and
 * zeroes the rest ({ .shortopts = ..., .longopts = ... }); it owns the
 * struct, which holds no allocation (nothing to release).
 */
struct rs_args {
	const char *shortopts;          /* getopt's, without 'h' or ':' (added); a
	                                   leading '+' stops at the first operand;
	                                   NULL: no short option but -h */
	const struct option *longopts;  /* ends with { 0 }; NULL: none but --help */
	/* the parser's */
	int started;
	struct option all[RS_ARGS_MAX + 2];
	char shorts[64];
};

/*
 * The next option of argv: its code (> 0; 'h' for -h and --help), with
 * getopt's optarg set to its value; 0 at the end of the options (optind is
 * then the first operand; operands were moved after the options unless
 * shortopts starts with '+'); RS_EUSAGE with one of the messages above
 * (the option named as written) when the command line is wrong. The first
 * call starts a new scan, whatever scanned argv before.
 */
RS_MUST_CHECK
int rs_args_next(struct rs_args *a, int argc, char **argv);

/*
 * After the options: 0 when at most `max` operands follow (argv[optind]
 * on), else RS_EUSAGE "unexpected argument '<the first one too many>'".
 */
RS_MUST_CHECK
int rs_args_operands(int argc, char **argv, int max);

/*
 * An option's value as a whole number from `min` to `max`: 0 and *out
 * set, else RS_EUSAGE "<what> '<s>' is not a whole number from <min> to
 * <max>" (`what` names the option or the config key it came from). No
 * sign other than a leading '-', no blank, no trailing text, no
 * overflow: where atoi read "3x" as 3 and "fast" as 0, this refuses both.
 */
RS_MUST_CHECK
int rs_args_int(const char *s, const char *what, long min, long max, long *out);

/*
 * Append to `out` the one line a program prints on stderr for a usage
 * error: "<program>: <message> (see '<program> --help')", made safe for a
 * terminal (rs_escape_term: the message quotes what the user typed), with
 * no newline. `program` is "results <command>", "results" or "lfs-agent".
 * 0, or the error of rs_buf (out of memory).
 */
RS_MUST_CHECK
int rs_args_usage_line(struct rs_buf *out, const char *program, const char *message);

#endif
