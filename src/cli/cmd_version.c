#include <stdio.h>

#include "cli/cli.h"
#include "results/repo.h"
#include "results_version.h"

int cmd_version(int argc, char **argv)
{
	int major, minor, rev;

	if (rs_cli_wants_help(argc, argv)) {
		printf("usage: results version\n\n"
		       "Print the version of results and of the libgit2 it uses.\n");
		return RS_EXIT_OK;
	}
	rs_repo_libgit2_version(&major, &minor, &rev);
	printf("results %s (libgit2 %d.%d.%d)\n", RS_VERSION, major, minor, rev);
	return RS_EXIT_OK;
}
