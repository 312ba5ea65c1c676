/*
 * results/setup.h: what `results init` writes, as a library call; run twice
 * it changes nothing, and a user's own hook is left alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "git/repo.h"
#include "results/setup.h"
#include "results/error.h"
#include "util/fs.h"

struct ctx {
	char src[4096]; /* the source tree: hooks/ and .gitattributes.template */
	int kept_calls;
	char kept_hook[4096];
};

static int find_resource(struct rs_buf *out, const char *rel, void *payload)
{
	struct ctx *c = payload;
	struct rs_buf p = RS_BUF_INIT;
	int err;

	assert_int_equal(rs_buf_printf(&p, "%s/%s", c->src, rel), 0);
	err = rs_fs_exists(p.ptr) ? rs_buf_puts(out, p.ptr)
				  : rs_error_set(RS_ENOTFOUND, "no '%s'", rel);
	rs_buf_release(&p);
	return err;
}

static void hook_kept(const char *hook, const char *ours, void *payload)
{
	struct ctx *c = payload;

	(void)ours;
	c->kept_calls++;
	snprintf(c->kept_hook, sizeof(c->kept_hook), "%s", hook);
}

static void assert_config(struct rs_repo *r, const char *key, const char *want)
{
	struct rs_buf v = RS_BUF_INIT;

	assert_int_equal(rs_repo_config_get(r, key, &v), 0);
	assert_string_equal(v.ptr, want);
	rs_buf_release(&v);
}

static void test_setup_clone(void **state)
{
	char dir[] = "/tmp/test_repo_setup-XXXXXX";
	struct ctx c;
	struct rs_buf home = RS_BUF_INIT, path = RS_BUF_INIT, text = RS_BUF_INIT, cmd = RS_BUF_INIT;
	git_repository *g = NULL;
	struct rs_repo *r = NULL;
	struct rs_setup_options opts = { 0 };
	struct rs_setup_report rep;
	struct stat st;
	const char *data = getenv("RS_TEST_DATA");
	size_t i;

	(void)state;
	assert_non_null(data);
	memset(&c, 0, sizeof(c));
	snprintf(c.src, sizeof(c.src), "%s/../..", data);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rs_buf_printf(&home, "%s/home", dir), 0);
	assert_int_equal(rs_fs_mkdir_p(home.ptr, 0755), 0);
	setenv("HOME", home.ptr, 1);
	setenv("XDG_CONFIG_HOME", home.ptr, 1);
	unsetenv("GIT_CONFIG_GLOBAL");
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, home.ptr);
	assert_int_equal(rs_buf_printf(&path, "%s/clone", dir), 0);
	assert_int_equal(git_repository_init(&g, path.ptr, 0), 0);
	git_repository_free(g);
	assert_int_equal(rs_repo_open(&r, path.ptr), 0);

	opts.url = "https://user:secret@dav.example/store";
	opts.agent_path = "/opt/results/bin/lfs-agent";
	opts.find_resource = find_resource;
	opts.hook_kept = hook_kept;
	opts.payload = &c;
	assert_int_equal(rs_repo_setup_clone(r, &opts, &rep), 0);
	assert_true(rep.config_changes >= 7); /* 7 keys, + the 4 filters unless set */
	assert_int_equal(rep.committed, 1);
	assert_int_equal(rep.nfiles, 3);
	assert_string_equal(rep.files[0], ".gitattributes");
	assert_string_equal(rep.files[1], ".lfsconfig");
	assert_string_equal(rep.files[2], RS_REPO_MARKER);
	assert_int_equal(rep.hooks_installed, RS_SETUP_HOOKS);
	assert_config(r, "lfs.standalonetransferagent", RS_SETUP_AGENT);
	assert_config(r, "lfs.customtransfer.results.path", "/opt/results/bin/lfs-agent");
	assert_config(r, "lfs.customtransfer.results.concurrent", "false");
	assert_config(r, RS_REPO_REMOTE_KEY, "https://user:secret@dav.example/store");
	assert_config(r, RS_REPO_FOLLOWED_KEY, "https://dav.example/store");
	assert_config(r, "filter.lfs.process", "git-lfs filter-process");
	/* The committed marker never holds the credentials. */
	assert_int_equal(rs_repo_read_tree_file(r, NULL, RS_REPO_MARKER, 4096, &text), 0);
	assert_non_null(strstr(text.ptr, "\"remote\": \"https://dav.example/store\""));
	assert_null(strstr(text.ptr, "secret"));
	for (i = 0; i < RS_SETUP_HOOKS; i++) {
		rs_buf_clear(&text);
		assert_int_equal(rs_buf_printf(&text, "%s/.git/hooks/%s", path.ptr, rs_setup_hook_names[i]), 0);
		assert_int_equal(stat(text.ptr, &st), 0);
		assert_true(st.st_mode & 0100);
	}

	/* Again: nothing changes. */
	assert_int_equal(rs_repo_setup_clone(r, &opts, &rep), 0);
	assert_int_equal(rep.config_changes, 0);
	assert_int_equal(rep.committed, 0);
	assert_int_equal(rep.nfiles, 0);
	assert_int_equal(rep.hooks_installed, 0);
	assert_int_equal(rep.hooks_kept, 0);

	/* A user's own hook stays, and the caller hears of it. */
	rs_buf_clear(&text);
	assert_int_equal(rs_buf_printf(&text, "%s/.git/hooks/post-merge", path.ptr), 0);
	assert_int_equal(rs_fs_write_file_atomic(text.ptr, "#!/bin/sh\necho mine\n", 20), 0);
	assert_int_equal(rs_repo_setup_clone(r, &opts, &rep), 0);
	assert_int_equal(rep.hooks_kept, 1);
	assert_int_equal(c.kept_calls, 1);
	assert_string_equal(c.kept_hook, text.ptr);

	/* A missing resource fails before anything is committed. */
	rs_repo_free(r);
	rs_buf_clear(&text);
	assert_int_equal(rs_buf_printf(&text, "%s/clone2", dir), 0);
	assert_int_equal(git_repository_init(&g, text.ptr, 0), 0);
	git_repository_free(g);
	assert_int_equal(rs_repo_open(&r, text.ptr), 0);
	snprintf(c.src, sizeof(c.src), "%s/nowhere", dir);
	assert_int_equal(rs_repo_setup_clone(r, &opts, &rep), RS_ENOTFOUND);
	assert_int_equal(rep.failed, RS_SETUP_STEP_PREPARE);
	assert_int_equal(rep.committed, 0);

	rs_repo_free(r);
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	rs_buf_release(&home);
	rs_buf_release(&path);
	rs_buf_release(&text);
	git_libgit2_shutdown();
}

static void test_setup_global(void **state)
{
	char dir[] = "/tmp/test_repo_setup-XXXXXX";
	struct rs_buf cfgpath = RS_BUF_INIT, name = RS_BUF_INIT, path = RS_BUF_INIT;
	struct rs_buf text = RS_BUF_INIT, cmd = RS_BUF_INIT;
	int changes = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(rs_buf_printf(&cfgpath, "%s/gitconfig", dir), 0);
	setenv("GIT_CONFIG_GLOBAL", cfgpath.ptr, 1);
	git_libgit2_init();
	assert_int_equal(rs_setup_global("https://git.example/org/r.git/info/lfs",
					 "s3://bucket/it's", "/bin/lfs-agent", &name, &path,
					 &changes), 0);
	assert_string_equal(path.ptr, cfgpath.ptr);
	assert_int_equal(strncmp(name.ptr, "results-", 8), 0);
	assert_int_equal(strlen(name.ptr), 16);
	assert_int_equal(changes, 9);
	assert_int_equal(rs_fs_read_file(&text, cfgpath.ptr, 65536), 0);
	assert_non_null(strstr(text.ptr, "--remote 's3://bucket/it'\\\\''s'"));
	assert_non_null(strstr(text.ptr, "[lfs \"https://git.example/org/r.git/info/lfs\"]"));
	changes = 0;
	rs_buf_clear(&name);
	rs_buf_clear(&path);
	assert_int_equal(rs_setup_global("https://git.example/org/r.git/info/lfs",
					 "s3://bucket/it's", "/bin/lfs-agent", &name, &path,
					 &changes), 0);
	assert_int_equal(changes, 0);
	unsetenv("GIT_CONFIG_GLOBAL");
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	rs_buf_release(&cfgpath);
	rs_buf_release(&name);
	rs_buf_release(&path);
	rs_buf_release(&text);
	git_libgit2_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setup_clone),
		cmocka_unit_test(test_setup_global),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
