/*
 * git/config.h and the repository facts lfs-agent takes from src/repo:
 * one config snapshot for the CLI and the agent, lfs.storage as git-lfs
 * reads it, bare repositories for the agent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <git2.h>

#include "git/config.h"
#include "git/repo.h"
#include "results/error.h"
#include "util/fs.h"

static void rm_rf(const char *dir)
{
	struct rs_buf cmd = RS_BUF_INIT;

	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
}

static void set_config(const char *dir, const char *key, const char *value)
{
	git_repository *g = NULL;
	git_config *cfg = NULL;

	assert_int_equal(git_repository_open(&g, dir), 0);
	assert_int_equal(git_repository_config(&cfg, g), 0);
	assert_int_equal(git_config_set_string(cfg, key, value), 0);
	git_config_free(cfg);
	git_repository_free(g);
}

static void test_snapshot(void **state)
{
	char dir[] = "/tmp/test_repo_config-XXXXXX";
	git_repository *g = NULL;
	struct rs_repo *r = NULL;
	struct rs_config *c = NULL;
	struct rs_remote_options opts = { NULL, NULL };
	const char *v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 0), 0);
	git_repository_free(g);
	set_config(dir, "results.remote", "file:///srv/store");
	set_config(dir, "results.s3region", "eu-west-3");

	assert_int_equal(rs_repo_open(&r, dir), 0);
	c = rs_repo_config(r);
	assert_non_null(c);
	assert_ptr_equal(rs_repo_config(r), c); /* read once */
	assert_string_equal(rs_config_get(c, "results.remote"), "file:///srv/store");
	assert_null(rs_config_get(c, "results.nosuchkey"));
	/* A snapshot: a later change is not seen, and a borrowed value stays. */
	v = rs_config_get(c, "results.s3region");
	set_config(dir, "results.s3region", "us-east-1");
	assert_string_equal(rs_config_get(c, "results.s3region"), "eu-west-3");
	assert_string_equal(v, "eu-west-3");
	/* What backends see through rs_remote_options. */
	rs_config_remote_options(&opts, c);
	assert_non_null(opts.config_get);
	assert_string_equal(opts.config_get("results.s3region", opts.config_payload), "eu-west-3");
	assert_null(opts.config_get("results.nosuchkey", opts.config_payload));
	/* NULL config (lfs-agent when none can be read): every key unset. */
	assert_null(rs_config_get(NULL, "results.remote"));
	rs_repo_free(r);

	/* Outside a repository: the user's config. */
	assert_int_equal(rs_config_open_default(&c), 0);
	assert_null(rs_config_get(c, "results.nosuchkey"));
	rs_config_free(c);
	rs_config_free(NULL);

	rm_rf(dir);
	git_libgit2_shutdown();
}

static void check_tmp_dir(const char *dir, const char *want_suffix)
{
	struct rs_repo *r = NULL;
	struct rs_buf tmp = RS_BUF_INIT;
	struct stat st;

	assert_int_equal(rs_repo_open(&r, dir), 0);
	assert_int_equal(rs_buf_puts(&tmp, "prefix:"), 0);
	assert_int_equal(rs_repo_lfs_tmp_dir(&tmp, r), 0);
	assert_int_equal(strncmp(tmp.ptr, "prefix:", 7), 0);
	assert_true(tmp.len > strlen(want_suffix));
	assert_string_equal(tmp.ptr + tmp.len - strlen(want_suffix), want_suffix);
	assert_int_equal(stat(tmp.ptr + 7, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	rs_buf_release(&tmp);
	rs_repo_free(r);
}

static void test_lfs_storage(void **state)
{
	char dir[] = "/tmp/test_repo_config-XXXXXX";
	struct rs_buf abs = RS_BUF_INIT;
	git_repository *g = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 0), 0);
	git_repository_free(g);
	check_tmp_dir(dir, "/.git/lfs/tmp");
	/* Relative lfs.storage: below the git dir, as git-lfs reads it. */
	set_config(dir, "lfs.storage", "big-lfs");
	check_tmp_dir(dir, "/.git/big-lfs/tmp");
	/* Absolute: as it is. */
	assert_int_equal(rs_buf_printf(&abs, "%s/elsewhere/", dir), 0);
	set_config(dir, "lfs.storage", abs.ptr);
	check_tmp_dir(dir, "/elsewhere/tmp");
	rs_buf_release(&abs);
	rm_rf(dir);
	git_libgit2_shutdown();
}

static void test_open_bare(void **state)
{
	char dir[] = "/tmp/test_repo_config-XXXXXX";
	git_repository *g = NULL;
	struct rs_repo *r = NULL;
	struct rs_buf tmp = RS_BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 1), 0);
	git_repository_free(g);
	/* The CLI needs a working tree ... */
	assert_int_equal(rs_repo_open(&r, dir), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "is bare"));
	/* ... lfs-agent does not. */
	assert_int_equal(rs_repo_open_ext(&r, dir, RS_REPO_OPEN_BARE), 0);
	assert_null(r->workdir);
	assert_null(rs_repo_workdir(r));
	assert_int_equal(rs_repo_lfs_tmp_dir(&tmp, r), 0);
	assert_string_equal(tmp.ptr + tmp.len - 8, "/lfs/tmp");
	rs_buf_release(&tmp);
	rs_repo_free(r);
	rm_rf(dir);
	git_libgit2_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_lfs_storage),
		cmocka_unit_test(test_open_bare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
