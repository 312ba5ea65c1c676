#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/*
 * `results help [COMMAND]`: the overview lists the dispatch table, so a
 * new command shows up here by its one line in main.c.
 */
int cmd_help(int argc, char **argv)
{
	unsigned int i;

	if (argc >= 2 && strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0) {
		for (i = 0; i < rs_ncommands; i++) {
			if (strcmp(rs_commands[i].name, argv[1]) == 0) {
				char *sub[] = { argv[1], (char *)"--help", NULL };

				return rs_commands[i].fn(2, sub);
			}
		}
		return rs_cli_fail(RS_EXIT_USAGE, "no command '%s'; see 'results --help'",
				   argv[1]);
	}
	printf("usage: results <command> [options]\n"
	       "       results --version\n\n"
	       "Record pyinstrument profiling runs in a git repository; sessions\n"
	       "travel through Git LFS and lfs-agent.\n\n"
	       "commands:\n");
	for (i = 0; i < rs_ncommands; i++)
		printf("  %-10s %s\n", rs_commands[i].name, rs_commands[i].summary);
	printf("\n'results <command> --help' describes a command; exit statuses are\n"
	       "listed in docs/cli.md.\n");
	return RS_EXIT_OK;
}
