/*
 * `results export <run> --format speedscope|collapsed`: convert a run's
 * session for flame-graph tools. The session is read from the local LFS
 * store; when it is not there, `results fetch` (the same program, as a
 * child process, so there is one download path) brings it first.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/report.h"
#include "results/runs.h"

static const char usage[] =
	"usage: results export <run-or-commit | session-file> --format speedscope|collapsed\n"
	"                      [-o FILE]\n"
	"\n"
	"Convert a run's session to speedscope JSON (open it at speedscope.app or\n"
	"in the speedscope desktop app) or to collapsed stacks\n"
	"(\"frame;frame;frame weight\" lines, weight in microseconds) for\n"
	"flamegraph.pl, inferno and other flame-graph tools. The session is\n"
	"fetched on demand (see 'results fetch') unless the local LFS store has\n"
	"it. A path to a .pyisession file is converted directly.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository, 4 unknown\n"
	"run, 5 remote unreachable, 6 object missing on the remote, 7 corrupt\n"
	"session, 8 other.\n";

static const struct option options[] = {
	RS_CLI_OPTION_FORMAT,
	RS_CLI_OPTION_OUTPUT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/*
 * The session of run `name` (a run or commit) appended to `session`, and
 * the run's id in `*id` (borrowed from `sel`).
 */
static int run_session(struct rs_buf *session, const char **id, struct rs_runsel *sel,
		       const char *name)
{
	const struct rs_run_entry *e = NULL;
	struct rs_run_doc *doc = NULL;
	int status;

	/* one run: the shards the commit map names for it */
	status = rs_runsel_open_for(sel, &name, 1);
	if (status)
		return status;
	status = rs_runsel_resolve(&e, sel, name);
	if (status)
		return status;
	status = rs_runsel_load(&doc, sel, e);
	if (status)
		return status;
	status = rs_runsel_session_path(session, sel, e, doc);
	rs_run_doc_free(doc);
	*id = rs_run_entry_id(e);
	return status;
}

int cmd_export(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	enum rs_export_format fmt = RS_EXPORT_COLLAPSED;
	const char *output = NULL, *name;
	struct rs_buf session = RS_BUF_INIT;
	struct stat sb;
	FILE *out = stdout;
	struct rs_cli_opts opts = {
		.command = "export", .usage = usage, .shortopts = "ho:", .longopts = options,
		.take = RS_CLI_OPT_OUTPUT,
	};
	int opt, err, status = RS_EXIT_OK, have_fmt = 0;

	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		if (opt == 'f') {
			if (rs_export_format_parse(&fmt, optarg))
				return rs_cli_error(RS_EXIT_USAGE);
			have_fmt = 1;
		}
	}
	if (opt < 0)
		return opts.status;
	output = opts.output;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (optind != argc - 1 || !have_fmt)
		return rs_cli_usage("export", "give one run and --format speedscope|collapsed");
	name = argv[optind];
	if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode)) {
		if (rs_buf_puts(&session, name))
			return rs_cli_report(RS_EGENERIC);
	} else {
		status = run_session(&session, &name, &sel, name);
		if (status)
			goto out;
	}
	if (output && strcmp(output, "-")) {
		out = fopen(output, "wb");
		if (!out) {
			status = rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", output, strerror(errno));
			out = stdout;
			goto out;
		}
	}
	err = rs_export_session(out, session.ptr, fmt, name);
	if (err) {
		status = rs_cli_report(err);
		if (out != stdout)
			remove(output); /* no half-written export */
	}
out:
	if (out != stdout && fclose(out) && !status)
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s'", output);
	rs_buf_release(&session);
	rs_runsel_close(&sel);
	return status;
}
