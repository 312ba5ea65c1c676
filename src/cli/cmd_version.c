#include <stdio.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/repo.h"
#include "results_version.h"

int cmd_version(int argc, char **argv)
{
	static const char usage[] = "usage: results version\n\n"
				    "Print the version of results and of the libgit2 it uses.\n";
	struct rs_cli_opts opts = { .command = "version", .usage = usage };
	int major, minor, rev;

	if (rs_cli_opts_next(&opts, argc, argv) < 0)
		return opts.status;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	rs_repo_libgit2_version(&major, &minor, &rev);
	printf("results %s (libgit2 %d.%d.%d)\n", RS_VERSION, major, minor, rev);
	return RS_EXIT_OK;
}
