#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"

/* The overview of `results --help`, from the dispatch table. */
static int overview(struct rs_buf *out)
{
	int err = rs_buf_puts(out, "usage: results <command> [options]\n"
			      "       results --version\n\n"
			      "Record pyinstrument profiling runs in a git repository; sessions\n"
			      "travel through Git LFS and lfs-agent.\n\n"
			      "commands:\n");

	for (unsigned int i = 0; i < rs_ncommands && !err; i++)
		err = rs_buf_printf(out, "  %-10s %s\n", rs_commands[i].name, rs_commands[i].summary);
	if (!err)
		err = rs_buf_puts(out, "\n'results <command> --help' describes a command; exit statuses are\n"
				  "listed in docs/cli.md.\n");
	return err;
}

/*
 * `results help [COMMAND]`: the overview lists the dispatch table, so a
 * new command shows up here by its one line in main.c.
 */
int cmd_help(int argc, char **argv)
{
	struct rs_buf text = RS_BUF_INIT;
	struct rs_cli_opts opts = { .command = "help" };
	int status = RS_EXIT_OK;

	if (overview(&text)) {
		rs_buf_release(&text);
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	}
	opts.usage = text.ptr;
	if (rs_cli_opts_next(&opts, argc, argv) < 0) {
		status = opts.status;
		goto out;
	}
	if (rs_cli_opts_operands(&opts, argc, argv, 1) < 0) {
		status = opts.status;
		goto out;
	}
	if (optind < argc) {
		const struct rs_command *cmd = NULL;

		for (unsigned int i = 0; i < rs_ncommands && !cmd; i++)
			if (strcmp(rs_commands[i].name, argv[optind]) == 0)
				cmd = &rs_commands[i];
		if (cmd) {
			char *sub[] = { argv[optind], (char *)"--help", NULL };

			status = cmd->fn(2, sub);
		} else {
			status = rs_cli_usage(NULL, "unknown command '%s'", argv[optind]);
		}
		goto out;
	}
	fputs(text.ptr, stdout);
out:
	rs_buf_release(&text);
	return status;
}
