/*
 * results fetch: download the raw sessions of chosen runs straight from
 * the store (no git-lfs in the way), verify them, and put them in place
 * (rs_fetch_run, results/store.h, does the work).
 *
 * A query is a run id, or a profiled commit (full sha or unique prefix),
 * resolved against the committed run index. Without -o the object goes
 * into .git/lfs/objects and the pointer file in the working tree is
 * replaced by the content, as `git lfs checkout` would do; with -o DIR the
 * session is written to DIR/<run id>/<file> and the repository is left
 * alone.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/runs.h"
#include "results/store.h"

static const char usage[] =
	"usage: results fetch <commit-or-run>... [-o DIR]\n"
	"\n"
	"Download the raw sessions of the given runs from the store, verify them\n"
	"and print their paths. A run is named by its id (see 'results list') or\n"
	"by the profiled commit: a full sha or a unique prefix (the most recent\n"
	"run of that commit). Only the requested sessions are downloaded.\n"
	"\n"
	"  -o, --output DIR  write DIR/<run id>/<file> and leave the repository\n"
	"                    alone; without it the session goes into the local\n"
	"                    LFS store and replaces its pointer in the working tree\n"
	"                    (one line on stderr says so, and how to free the space)\n"
	"\n"
	"exit status: 0 ok, 2 usage, 3 not a results repository, 4 unknown or\n"
	"ambiguous run, 5 remote unreachable, 6 object missing on the remote,\n"
	"7 corrupt data, 8 other error (also: the committed remote is not the\n"
	"one this clone uses; run 'results init')\n";

/* What a failed rs_fetch_run means for the exit status (docs/cli.md). */
static int fetch_failed(const struct rs_fetch *f, int err)
{
	switch (rs_fetch_stage(f)) {
	case RS_FETCH_RUN:
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_UNKNOWN : rs_cli_exit_for(err));
	case RS_FETCH_FOLLOW:
		/* A pulled change of remote this clone has not followed: a set-up
		   problem (8), not an unreachable remote. */
		return rs_cli_error(RS_EXIT_OTHER);
	case RS_FETCH_OPEN:
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO : RS_EXIT_REMOTE);
	case RS_FETCH_REMOTE:
		return rs_cli_error(rs_cli_exit_in(err, RS_CLI_REMOTE));
	case RS_FETCH_DOWNLOAD:
		return rs_cli_error(err == RS_ENOTFOUND ? RS_EXIT_MISSING : rs_cli_exit_for(err));
	default:
		return rs_cli_report(err);
	}
}

/* Say where a fetched session is. */
static void print_placed(const struct rs_fetched *file, void *payload)
{
	(void)payload;
	if (file->checkout_error)
		fprintf(stderr, "results: cannot check out '%s' (%s); the session is in the "
			"local LFS store\n", file->worktree_rel, file->checkout_error);
	printf("%s\n", file->path);
	if (!file->checked_out)
		return;
	/* Sessions are large and the work tree is where nobody looks. */
	fprintf(stderr, "results: %s (%.1f MB) is checked out in the work tree and kept "
		"in .git/lfs/objects; to free the space: rm '%s' '%s' && GIT_LFS_SKIP_SMUDGE=1 "
		"git checkout -- '%s'\n",
		file->worktree_rel, (double)file->size / 1e6, file->object_path,
		file->worktree_rel, file->worktree_rel);
}

/* Resolve every query before moving any byte (a typo fails fast), then fetch. */
static int fetch_all(struct rs_repo *repo, const char *outdir, char **queries, int n)
{
	const struct rs_run_entry **picked = NULL;
	struct rs_runs *runs = NULL;
	struct rs_fetch *f = NULL;
	int i, status = RS_EXIT_OK, err;

	/* the runs named: the shards the commit map names for them (rs_runs_open_for) */
	err = rs_runs_open_for(&runs, repo, NULL, (const char *const *)queries, (size_t)n);
	if (err) {
		status = rs_cli_fail(rs_cli_exit_for(err), "cannot read the run index: %s",
				     rs_error_message());
		goto out;
	}
	picked = calloc((size_t)n, sizeof(*picked));
	err = picked ? rs_fetch_new(&f, repo, outdir) : RS_EGENERIC;
	if (err) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		err = rs_runs_resolve(&picked[i], runs, queries[i]);
		if (err) {
			status = rs_cli_error(err == RS_ENOTFOUND || err == RS_EUSAGE ? RS_EXIT_UNKNOWN
										  : rs_cli_exit_for(err));
			goto out;
		}
	}
	for (i = 0; i < n && status == RS_EXIT_OK; i++) {
		int j, dup = 0;

		for (j = 0; j < i; j++)
			dup |= picked[j] == picked[i];
		if (!dup && rs_fetch_run(f, runs, picked[i], print_placed, NULL) != 0)
			status = fetch_failed(f, rs_error_last());
	}
out:
	rs_fetch_free(f);
	free(picked);
	rs_runs_free(runs);
	return status;
}

int cmd_fetch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *outdir = NULL;
	const struct rs_cli_bind bind[] = { { 'o', NULL, &outdir }, { 0 } };
	struct rs_cli_opts opts = { .command = "fetch", .usage = usage, .shortopts = "o:",
				    .longopts = longopts, .bind = bind };
	struct rs_repo *repo = NULL;
	int status;

	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	if (optind >= argc)
		return rs_cli_usage("fetch", "name at least one run or commit");
	if (outdir && !*outdir)
		return rs_cli_fail(RS_EXIT_USAGE, "fetch: -o needs a directory");
	status = rs_cli_open_repo(&repo);
	if (status != RS_EXIT_OK)
		return status;
	/* With -o the repository is left alone, repairs included. */
	status = outdir ? RS_EXIT_OK : rs_cli_repair_repo(repo);
	if (status == RS_EXIT_OK)
		status = fetch_all(repo, outdir, argv + optind, argc - optind);
	rs_repo_free(repo);
	return status;
}
