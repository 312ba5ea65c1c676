/*
 * `results open <run>`: one run's session as a self-contained interactive
 * HTML call tree (pyinstrument-style), or with --speedscope as speedscope
 * JSON plus a one-line hint. The session is fetched on demand, the same
 * way `export` and `compare --deep` get it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/export.h"
#include "analysis/open.h"
#include "cli/cli.h"
#include "cli/runsel.h"
#include "results/error.h"

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

/* Open `path` for writing: a new file, or with `force` any file. */
static int create_output(FILE **out, const char *path, int force)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);

	if (fd < 0 && errno == EEXIST)
		return rs_cli_fail(RS_EXIT_USAGE, "'%s' exists; give --force to overwrite it, "
				   "or -o another file", path);
	if (fd < 0)
		return rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", path, strerror(errno));
	*out = fdopen(fd, "wb");
	if (!*out) {
		close(fd);
		return rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", path, strerror(errno));
	}
	return RS_EXIT_OK;
}

int cmd_open(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	const struct rs_run_entry *e = NULL;
	struct rs_buf session = RS_BUF_INIT, page = RS_BUF_INIT, deflt = RS_BUF_INIT;
	const char *output = NULL, *name;
	struct stat sb;
	FILE *out = NULL;
	int opt, err, status = RS_EXIT_OK, opened = 0, speedscope = 0, force = 0, written = 0;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			return RS_EXIT_OK;
		case 'o': output = optarg; break;
		case 's': speedscope = 1; break;
		case 'F': force = 1; break;
		default:
			return rs_cli_fail(RS_EXIT_USAGE, "unknown option '%s'; see 'results open --help'",
					   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return rs_cli_fail(RS_EXIT_USAGE, "give one run; see 'results open --help'");
	if (output && !*output)
		return rs_cli_fail(RS_EXIT_USAGE, "-o needs a file name");
	name = argv[optind];
	if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode)) {
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		size_t n = strlen(base);

		if (n > 11 && !strcmp(base + n - 11, ".pyisession"))
			n -= 11;
		if (rs_buf_puts(&session, name) || rs_buf_put(&deflt, base, n))
			return rs_cli_report(RS_EGENERIC);
	} else {
		status = rs_runsel_open(&sel);
		opened = 1;
		if (!status)
			status = rs_runsel_resolve(&e, &sel, name);
		if (status)
			goto out;
		name = e->id;
		if (rs_buf_puts(&deflt, e->id)) {
			status = rs_cli_report(RS_EGENERIC);
			goto out;
		}
	}
	if (!output) {
		if (rs_buf_puts(&deflt, speedscope ? ".speedscope.json" : ".html")) {
			status = rs_cli_report(RS_EGENERIC);
			goto out;
		}
		output = deflt.ptr;
	}
	/* refuse before any download */
	if (!force && lstat(output, &sb) == 0) {
		status = rs_cli_fail(RS_EXIT_USAGE, "'%s' exists; give --force to overwrite it, "
				     "or -o another file", output);
		goto out;
	}
	if (e && (status = rs_runsel_session_path(&session, &sel, e)))
		goto out;
	if (!speedscope) { /* render first: a failure leaves no file */
		err = rs_open_html(&page, session.ptr, name, 0);
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
	}
	status = create_output(&out, output, force);
	if (status)
		goto out;
	written = 1;
	if (speedscope) {
		err = rs_export_session(out, session.ptr, RS_EXPORT_SPEEDSCOPE, name);
		if (err)
			status = rs_cli_report(err);
	} else if (fwrite(page.ptr, 1, page.len, out) != page.len) {
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", output, strerror(errno));
	}
	if (fclose(out) && !status)
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", output, strerror(errno));
	out = NULL;
	if (status)
		goto out;
	if (speedscope)
		printf("open https://www.speedscope.app and load %s\n", output);
	else
		printf("wrote %s: open it in a browser\n", output);
out:
	if (status && written)
		remove(output); /* no half-written file */
	rs_buf_release(&session);
	rs_buf_release(&page);
	rs_buf_release(&deflt);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}
