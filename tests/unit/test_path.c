/* Names from outside that become paths (util/path.h), hostile ones first. */
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

#include "results/error.h"
#include "util/path.h"

static const char *const hostile_components[] = {
	"", ".", "..", "../x", "a/b", "/etc", "a\\b", "..\\..\\x",
	".git", ".GIT", ".Git", ".git.", ".git ", ".git. .", ".git::$INDEX_ALLOCATION",
	".git:stream", "git~1", "GIT~1", "git~1.",
	".g\xe2\x80\x8cit",         /* U+200C ZERO WIDTH NON-JOINER */
	"\xef\xbb\xbf.git",         /* U+FEFF at the start */
	".gi\xe2\x81\xaft",         /* U+206F */
	"a\nb", "tab\there", "bell\a", "del\x7f", "\x1b[31mred",
};

static void test_hostile_components_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hostile_components) / sizeof(*hostile_components); i++) {
		const char *n = hostile_components[i];

		if (rs_path_check_component(n, "run id") != RS_ECORRUPT)
			fail_msg("accepted hostile component #%zu '%s'", i, n);
		assert_non_null(strstr(rs_error_message(), "run id '"));
		assert_non_null(strstr(rs_error_message(), "refusing to use it as a path"));
	}
}

static void test_plain_names_accepted(void **state)
{
	static const char *const ok[] = {
		"20261130-093012-ci-abc1234", "session.pyisession", "a", "...", ".bashrc",
		"git", ".gitx", "x.git", "git~2", "gi t", "caf\xc3\xa9", "a..b", "-rf",
		"notes.html", ".github",
	};
	char longest[RS_PATH_MAX_COMPONENT + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++)
		if (rs_path_check_component(ok[i], "name") != 0)
			fail_msg("refused '%s': %s", ok[i], rs_error_message());
	memset(longest, 'x', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	assert_int_equal(rs_path_check_component(longest, "name"), 0);
}

static void test_bounds_and_nul(void **state)
{
	char name[RS_PATH_MAX_COMPONENT + 2];
	char *path = malloc(RS_PATH_MAX_RELATIVE + 2);

	(void)state;
	assert_non_null(path);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(rs_path_check_component(name, "file name"), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "longer than 255 bytes"));
	/* The message quotes a bounded prefix only. */
	assert_non_null(strstr(rs_error_message(), "...'"));
	assert_true(strlen(rs_error_message()) < 250);

	/* 4096 bytes of "x/x/...x" pass, one more byte does not. */
	for (size_t i = 0; i < RS_PATH_MAX_RELATIVE; i++)
		path[i] = (i % 2) ? '/' : 'x';
	path[RS_PATH_MAX_RELATIVE - 1] = 'x';
	path[RS_PATH_MAX_RELATIVE] = '\0';
	assert_int_equal(rs_path_check_relative(path, "path"), 0);
	path[RS_PATH_MAX_RELATIVE] = 'x';
	path[RS_PATH_MAX_RELATIVE + 1] = '\0';
	assert_int_equal(rs_path_check_relative(path, "path"), RS_ECORRUPT);
	free(path);

	/* A NUL inside the given length is refused and shown escaped. */
	assert_int_equal(rs_path_check("ab\0cd", 5, 0, "file name"), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'ab\\x00cd'"));
	assert_non_null(strstr(rs_error_message(), "NUL"));
	assert_int_equal(rs_path_check("a\nb", 3, 0, "file name"), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'a\\x0ab'"));
}

static void test_relative_paths(void **state)
{
	static const char *const bad[] = {
		"", "/", "/abs", "a/", "a//b", "./a", "a/./b", "a/../b", "../a", "a/..",
		".git/info", "runs/.git/x", "runs/.GIT./x", "a/git~1/b", "a\\..\\b",
		"runs/x\n", "runs/\x01",
	};
	static const char *const good[] = {
		"runs/2026/11/30/093012-ci-abc1234", "a", "a/b/c", "runs/x.y/z",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (rs_path_check_relative(bad[i], "run path") != RS_ECORRUPT)
			fail_msg("accepted hostile path '%s'", bad[i]);
	assert_int_equal(rs_path_check_relative("../../escape", "run path"), RS_ECORRUPT);
	assert_string_equal(rs_error_message(),
			    "run path '../../escape' is not a safe relative path ('.' and '..' "
			    "name no file); refusing to use it as a path (results never writes "
			    "such names: check who committed it)");
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		if (rs_path_check_relative(good[i], "run path") != 0)
			fail_msg("refused '%s': %s", good[i], rs_error_message());
}

static void test_no_dotfiles(void **state)
{
	(void)state;
	assert_int_equal(rs_path_check(".bashrc", 7, RS_PATH_NO_DOTFILES, "file name"),
			 RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "starts with '.'"));
	assert_int_equal(rs_path_check("runs/.github/x", 14, RS_PATH_RELATIVE | RS_PATH_NO_DOTFILES,
				       "run path"), RS_ECORRUPT);
	assert_int_equal(rs_path_check("runs/a.b/x", 10, RS_PATH_RELATIVE | RS_PATH_NO_DOTFILES,
				       "run path"), 0);
}

static void test_join(void **state)
{
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_path_join(&out, "DIR/", "id/s.pyisession", 0, "file"), 0);
	assert_string_equal(out.ptr, "DIR/id/s.pyisession");
	rs_buf_clear(&out);
	assert_int_equal(rs_path_join(&out, "/", "x", 0, "file"), 0);
	assert_string_equal(out.ptr, "/x");
	rs_buf_clear(&out);
	assert_int_equal(rs_path_join(&out, "DIR", "../../home/you/.bashrc", 0, "file"),
			 RS_ECORRUPT);
	assert_int_equal(out.len, 0);
	assert_int_equal(rs_path_join(&out, "DIR", ".git/info/attributes", 0, "file"),
			 RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'.git'"));
	assert_int_equal(out.len, 0);
	rs_buf_release(&out);
}

static void test_mkdirs_under_refuses_symlinks(void **state)
{
	char base[] = "/tmp/rs-test-path-XXXXXX";
	char p[256], victim[256];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(victim, sizeof(victim), "%s/victim", base);
	assert_int_equal(mkdir(victim, 0700), 0);

	/* Missing folders are created, the last component is left alone. */
	assert_int_equal(rs_path_mkdirs_under(base, "out/a/b/file"), 0);
	snprintf(p, sizeof(p), "%s/out/a/b", base);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	snprintf(p, sizeof(p), "%s/out/a/b/file", base);
	assert_int_not_equal(lstat(p, &st), 0);

	/* A symlink where a folder should be is refused, nothing made behind it. */
	snprintf(p, sizeof(p), "%s/out/link", base);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(rs_path_mkdirs_under(base, "out/link/sub/file"), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "is a symbolic link"));
	snprintf(p, sizeof(p), "%s/victim/sub", base);
	assert_int_not_equal(lstat(p, &st), 0);

	/* A file in the way. */
	snprintf(p, sizeof(p), "%s/out/plain", base);
	fclose(fopen(p, "w"));
	assert_int_equal(rs_path_mkdirs_under(base, "out/plain/file"), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "in the way"));

	/* The base itself may be a symlink: it is the caller's. */
	snprintf(p, sizeof(p), "%s/out/link", base);
	assert_int_equal(rs_path_mkdirs_under(p, "sub/file"), 0);
	snprintf(p, sizeof(p), "%s/victim/sub", base);
	assert_int_equal(stat(p, &st), 0);

	snprintf(p, sizeof(p), "rm -rf '%s'", base);
	assert_int_equal(system(p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_components_refused),
		cmocka_unit_test(test_plain_names_accepted),
		cmocka_unit_test(test_bounds_and_nul),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_no_dotfiles),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_mkdirs_under_refuses_symlinks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
