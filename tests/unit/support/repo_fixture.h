/*
 * The set-up the repository-level tests share (test_commit,
 * test_run_record): a new git repository in a temporary folder, opened
 * as an rs_repo, that never reads the user's own git configuration.
 * A header only: rs_testsupport does not link the repo layer.
 */
#ifndef RS_TEST_REPO_FIXTURE_H
#define RS_TEST_REPO_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "git/repo.h"

/* libgit2's global, XDG and system configuration searched in `dir` too. */
#define REPO_FIXTURE_SEARCH_PATH 1

/*
 * `dir` (a mkdtemp template) made a folder holding a new git repository,
 * HOME set to it and the system configuration off; `*repo` opens it.
 * -1 when something fails (a cmocka setup's failure), else 0.
 */
static inline int repo_fixture_new(char *dir, int flags, struct rs_repo **repo)
{
	git_repository *g = NULL;

	if (!mkdtemp(dir))
		return -1;
	setenv("HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	git_libgit2_init();
	if (flags & REPO_FIXTURE_SEARCH_PATH) {
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, dir);
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, dir);
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, dir);
	}
	if (git_repository_init(&g, dir, 0) < 0)
		return -1;
	git_repository_free(g);
	if (rs_repo_open(repo, dir) < 0)
		return -1;
	return 0;
}

/* The repository closed and its folder removed; -1 when rm fails. */
static inline int repo_fixture_free(const char *dir, struct rs_repo *repo)
{
	char cmd[128];

	rs_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return -1;
	git_libgit2_shutdown();
	return 0;
}

#endif
