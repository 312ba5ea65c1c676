/*
 * What `results add` and `results run` share: add's options, and the
 * recording of one run from them (describe, open the repository, gather
 * the files, commit, report).
 */
#ifndef RS_CLI_ADD_FLOW_H
#define RS_CLI_ADD_FLOW_H

#include "results/error.h"
#include <getopt.h>
#include <stddef.h>

enum {
	RS_ADD_OPT_COMMIT = 256, RS_ADD_OPT_BRANCH, RS_ADD_OPT_TRIGGER, RS_ADD_OPT_META,
	RS_ADD_OPT_STATS, RS_ADD_OPT_RAW, RS_ADD_OPT_LAST
};

/* add's lines of a `struct option` table ('m' is -m/--message). */
#define RS_ADD_OPTIONS                                                   \
	{ "commit", required_argument, NULL, RS_ADD_OPT_COMMIT },        \
	{ "branch", required_argument, NULL, RS_ADD_OPT_BRANCH },        \
	{ "trigger", required_argument, NULL, RS_ADD_OPT_TRIGGER },      \
	{ "meta", required_argument, NULL, RS_ADD_OPT_META },            \
	{ "stats", required_argument, NULL, RS_ADD_OPT_STATS },          \
	{ "message", required_argument, NULL, 'm' },                     \
	{ "raw", no_argument, NULL, RS_ADD_OPT_RAW }

/* The options of one run to record, as given (strings borrowed from argv). */
struct rs_add_args {
	const char *commit, *branch, *trigger, *message;
	const char **metas, **stats;  /* room for argc + 1 each */
	size_t nmeta, nstats;
	int raw;
};

/* Room for argc options of each kind; RS_EXIT_OTHER when out of memory. */
RS_MUST_CHECK
int rs_add_args_init(struct rs_add_args *a, int argc);
void rs_add_args_release(struct rs_add_args *a);

/* Take one of add's options (its getopt code, optarg): 1 if it was one, else 0. */
int rs_add_args_take(struct rs_add_args *a, int opt, const char *arg);

/* --commit given: RS_EXIT_OK, else the printed error's status. */
RS_MUST_CHECK
int rs_add_args_check(const struct rs_add_args *a, const char *command);

/*
 * Record the run of `a` from `paths` (session files or run folders) as
 * one commit and print what was recorded: RS_EXIT_*. Nothing is
 * committed on error.
 */
RS_MUST_CHECK
int rs_add_record(const struct rs_add_args *a, char **paths, int npaths);

#endif
