/*
 * `results open <run>`: one run's session as a self-contained interactive
 * HTML call tree (pyinstrument-style), or with --speedscope as speedscope
 * JSON plus a one-line hint. The session is fetched on demand, the same
 * way `export` and `compare --deep` get it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "results/error.h"
#include "results/output.h"
#include "results/report.h"
#include "results/runs.h"

static const char usage[] =
	"usage: results open <run-or-commit | session-file> [--speedscope] [-o FILE] [--force]\n"
	"\n"
	"Write one run's session as a self-contained HTML page to look at in a\n"
	"browser: the call tree in the manner of pyinstrument's own view, each\n"
	"frame with its total and own time, children sorted by total time,\n"
	"collapsible (click a line), the heaviest frames in red. With\n"
	"--speedscope write the session as speedscope JSON instead (as 'results\n"
	"export --format speedscope') and print how to look at it. The session\n"
	"is fetched on demand (see 'results fetch') unless the local LFS store\n"
	"has it; a path to a .pyisession file is read directly.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE  where to write; default <run-id>.html (with\n"
	"                     --speedscope <run-id>.speedscope.json) in the\n"
	"                     current folder\n"
	"  --speedscope       write speedscope JSON, not HTML\n"
	"  --force            overwrite FILE if it exists (refused otherwise)\n"
	"\n"
	"exit status: 0 ok, 2 bad usage or FILE exists, 3 not a results\n"
	"repository, 4 unknown run, 5 remote unreachable, 6 object missing on\n"
	"the remote, 7 corrupt session, 8 other.\n";

static const struct option options[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "speedscope", no_argument, NULL, 's' },
	{ "force", no_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int exists_error(const char *path)
{
	return rs_cli_fail(RS_EXIT_USAGE, "'%s' exists; give --force to overwrite it, "
			   "or -o another file", path);
}

/* What the command line asks for. */
struct open_args {
	const char *output, *name;
	int speedscope, force;
};

/* Parse the command line into `a`; `*done` when the command ends with the status returned. */
static int parse_args(struct open_args *a, int argc, char **argv, int *done)
{
	const struct rs_cli_bind bind[] = {
		{ 'o', NULL, &a->output }, { 's', &a->speedscope, NULL }, { 'F', &a->force, NULL },
		{ 0 },
	};
	struct rs_cli_opts opts = { .command = "open", .usage = usage, .shortopts = "o:",
				    .longopts = options, .bind = bind };

	*done = 1;
	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0)
		return opts.status;
	if (optind != argc - 1)
		return rs_cli_usage("open", "give one run");
	if (a->output && !*a->output)
		return rs_cli_fail(RS_EXIT_USAGE, "-o needs a file name");
	a->name = argv[optind];
	*done = 0;
	return RS_EXIT_OK;
}

/*
 * What `a->name` names: a session file (appended to `session`), or a run
 * (`*e`, resolved; a->name becomes its id). `deflt` gets the default
 * output name without its extension.
 */
static int pick_source(const struct rs_run_entry **e, struct rs_buf *session,
		       struct rs_buf *deflt, struct rs_runsel *sel, struct open_args *a)
{
	struct stat sb;
	int status;

	if (stat(a->name, &sb) == 0 && S_ISREG(sb.st_mode)) {
		const char *base = strrchr(a->name, '/') ? strrchr(a->name, '/') + 1 : a->name;
		size_t n = strlen(base);

		if (n > 11 && !strcmp(base + n - 11, ".pyisession"))
			n -= 11;
		if (rs_buf_puts(session, a->name) || rs_buf_put(deflt, base, n))
			return rs_cli_report(RS_EGENERIC);
		return RS_EXIT_OK;
	}
	/* one run: the shards the commit map names for it */
	status = rs_runsel_open_for(sel, &a->name, 1);
	if (!status)
		status = rs_runsel_resolve(e, sel, a->name);
	if (status)
		return status;
	a->name = rs_run_entry_id(*e);
	if (rs_buf_puts(deflt, a->name))
		return rs_cli_report(RS_EGENERIC);
	return RS_EXIT_OK;
}

/* Run `e`'s record in *doc and its session (fetched when needed), appended to `session`. */
static int run_session(struct rs_buf *session, struct rs_run_doc **doc,
		       const struct rs_runsel *sel, const struct rs_run_entry *e)
{
	int status = rs_runsel_load(doc, sel, e);

	if (!status)
		status = rs_runsel_session_path(session, sel, e, *doc);
	return status;
}

/* Write the page (or, with --speedscope, the export) to a new file `a->output`. */
static int write_output(const struct open_args *a, const char *session,
			const struct rs_buf *page)
{
	struct rs_output out = RS_OUTPUT_INIT;
	int err, status = RS_EXIT_OK;

	/* a temporary file renamed over FILE: a link at FILE is replaced, not followed */
	err = rs_output_open(&out, a->output);
	if (err) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}
	if (a->speedscope) {
		err = rs_export_session(out.f, session, RS_EXPORT_SPEEDSCOPE, a->name);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
	} else if (fwrite(page->ptr, 1, page->len, out.f) != page->len) {
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", a->output,
				     strerror(errno));
		goto out;
	}
	err = rs_output_commit(&out, a->force ? RS_OUTPUT_REPLACE : 0);
	if (err == RS_EEXISTS)
		status = exists_error(a->output);
	else if (err)
		status = rs_cli_error(RS_EXIT_OTHER);
out:
	rs_output_release(&out);
	return status;
}

int cmd_open(int argc, char **argv)
{
	struct rs_runsel sel = RS_RUNSEL_INIT;
	struct open_args a = { NULL, NULL, 0, 0 };
	const struct rs_run_entry *e = NULL;
	struct rs_run_doc *doc = NULL;
	struct rs_buf session = RS_BUF_INIT, page = RS_BUF_INIT, deflt = RS_BUF_INIT;
	struct stat sb;
	int err, status, done;

	status = parse_args(&a, argc, argv, &done);
	if (done)
		return status;
	status = pick_source(&e, &session, &deflt, &sel, &a);
	if (status)
		goto out;
	if (!a.output) {
		if (rs_buf_puts(&deflt, a.speedscope ? ".speedscope.json" : ".html")) {
			status = rs_cli_report(RS_EGENERIC);
			goto out;
		}
		a.output = deflt.ptr;
	}
	/* refuse before any download */
	if (!a.force && lstat(a.output, &sb) == 0) {
		status = exists_error(a.output);
		goto out;
	}
	if (e) {
		status = run_session(&session, &doc, &sel, e);
		if (status)
			goto out;
	}
	if (!a.speedscope) { /* render first: a failure leaves no file */
		err = rs_report_open_html(&page, session.ptr, a.name, sel.runs, doc);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
	}
	status = write_output(&a, session.ptr, &page);
	if (status)
		goto out;
	if (a.speedscope)
		printf("open https://www.speedscope.app and load %s\n", a.output);
	else
		printf("wrote %s: open it in a browser\n", a.output);
out:
	rs_buf_release(&session);
	rs_buf_release(&page);
	rs_buf_release(&deflt);
	rs_run_doc_free(doc);
	rs_runsel_close(&sel);
	return status;
}
