/*
 * util/fs: removing the temporary files killed processes left behind,
 * and only those (rs_fs_remove_stale).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

static char dir[64];

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void make(const char *name, long age)
{
	char p[200];
	struct timespec t[2] = { { 0, 0 }, { 0, 0 } };
	FILE *fp;

	path_of(p, sizeof(p), name);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs("x", fp);
	fclose(fp);
	t[0].tv_sec = t[1].tv_sec = time(NULL) - age;
	assert_int_equal(utimensat(AT_FDCWD, p, t, AT_SYMLINK_NOFOLLOW), 0);
}

static int there(const char *name)
{
	char p[200];
	struct stat st;

	path_of(p, sizeof(p), name);
	return lstat(p, &st) == 0;
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(1); /* blocked on a FIFO */
}

static void test_tmp_names(void **state)
{
	(void)state;
	assert_true(rs_fs_is_tmp_name("x.pack.tmp-AbC123"));
	assert_true(rs_fs_is_tmp_name("FORMAT.tmp-000000"));
	assert_false(rs_fs_is_tmp_name("x.pack"));
	assert_false(rs_fs_is_tmp_name("x.tmp-12345"));
	assert_false(rs_fs_is_tmp_name("x.tmp-1234567"));
	assert_false(rs_fs_is_tmp_name("x.tmp-12345/"));
}

/* Stale: ours, old, unlocked. Fresh, other names, symlinks, FIFOs, live files: kept. */
static void test_remove_stale(void **state)
{
	struct rs_buf live = RS_BUF_INIT;
	char p[200], target[200];
	int fd;

	(void)state;
	signal(SIGALRM, on_alarm);
	alarm(20);
	strcpy(dir, "/tmp/rs-test-fs-XXXXXX");
	assert_non_null(mkdtemp(dir));
	make("a.tmp-Stale1", 7200);
	make("b.tmp-Fresh1", 600);
	make("c.pack", 7200);            /* not a temporary name */
	make("target", 7200);
	path_of(target, sizeof(target), "target");
	path_of(p, sizeof(p), "d.tmp-Link01");
	assert_int_equal(symlink(target, p), 0);
	path_of(p, sizeof(p), "e.tmp-Fifo01");
	assert_int_equal(mkfifo(p, 0600), 0);
	/* A live writer's file, made old: its lock keeps it. */
	path_of(p, sizeof(p), "f");
	assert_int_equal(rs_fs_tmpfile_near(&live, p, &fd), 0);
	{
		struct timespec t[2] = { { 0, 0 }, { 0, 0 } };

		t[0].tv_sec = t[1].tv_sec = time(NULL) - 7200;
		assert_int_equal(futimens(fd, t), 0);
	}
	assert_int_equal(rs_fs_remove_stale(dir, rs_fs_is_tmp_name, 3600), 1);
	assert_false(there("a.tmp-Stale1"));
	assert_true(there("b.tmp-Fresh1"));
	assert_true(there("c.pack"));
	assert_true(there("d.tmp-Link01"));
	assert_true(there("target"));
	assert_true(there("e.tmp-Fifo01"));
	assert_true(rs_fs_exists(live.ptr));
	/* Once its writer is gone, it is a leftover like any other. */
	close(fd);
	assert_int_equal(rs_fs_remove_stale(dir, rs_fs_is_tmp_name, 3600), 1);
	assert_false(rs_fs_exists(live.ptr));
	/* The grace period is the caller's: 0 takes the fresh one too. */
	assert_int_equal(rs_fs_remove_stale(dir, rs_fs_is_tmp_name, 0), 1);
	assert_false(there("b.tmp-Fresh1"));
	/* A folder that does not exist is nothing to clean. */
	assert_int_equal(rs_fs_remove_stale("/nonexistent/rs-test", rs_fs_is_tmp_name, 0), 0);
	alarm(0);
	rs_buf_release(&live);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	assert_int_equal(system(p), 0);
}

/*
 * The library must not change process state. umask(2) is the only way to
 * read the umask and it does so by changing it, racing with any thread
 * that creates a file meanwhile: this definition takes the place of libc's
 * for the library linked into this test, and counts the calls.
 */
static int umask_calls;

mode_t umask(mode_t mask)
{
	umask_calls++;
	return (mode_t)syscall(SYS_umask, mask);
}

static mode_t tmpfile_mode(const char *folder)
{
	struct rs_buf tmp = RS_BUF_INIT;
	struct stat st;
	char p[200];
	int fd = -1;

	snprintf(p, sizeof(p), "%s/f", folder);
	assert_int_equal(rs_fs_tmpfile_near(&tmp, p, &fd), 0);
	assert_true(rs_fs_is_tmp_name(strrchr(tmp.ptr, '/') + 1));
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_int_equal(unlink(tmp.ptr), 0);
	rs_buf_release(&tmp);
	return st.st_mode & 0777;
}

/* First in the group: nothing may have created a temporary file before. */
static void test_tmpfile_mode_leaves_umask_alone(void **state)
{
	char folder[] = "/tmp/rs-fs-mode-XXXXXX";
	mode_t old;

	(void)state;
	assert_non_null(mkdtemp(folder));
	old = (mode_t)syscall(SYS_umask, 027);
	assert_int_equal(tmpfile_mode(folder), 0640);
	syscall(SYS_umask, 002);
	assert_int_equal(tmpfile_mode(folder), 0664);
	syscall(SYS_umask, old);
	assert_int_equal(umask_calls, 0);
	assert_int_equal(rmdir(folder), 0);
}

/* results.tmpGracePeriod: one parser for every reader; the environment plays no part. */
static void test_grace_setting(void **state)
{
	long g = 0;

	(void)state;
	setenv("RESULTS_TMP_GRACE", "5", 1); /* the old variable: ignored now */
	assert_int_equal(rs_fs_parse_grace(NULL, &g), 0);
	assert_int_equal(g, RS_TMP_GRACE_DEFAULT);
	assert_int_equal(rs_fs_parse_grace("60", &g), 0);
	assert_int_equal(g, 60);
	assert_int_equal(rs_fs_parse_grace("86400", &g), 0);
	assert_int_equal(g, 86400);
	assert_int_equal(rs_fs_parse_grace("59", &g), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "results.tmpGracePeriod = '59'"));
	assert_int_equal(g, RS_TMP_GRACE_DEFAULT);
	assert_int_equal(rs_fs_parse_grace("1h", &g), RS_EUSAGE);
	assert_int_equal(rs_fs_parse_grace("", &g), RS_EUSAGE);
	assert_int_equal(rs_fs_parse_grace("-5", &g), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "git config results.tmpGracePeriod 3600"));
	unsetenv("RESULTS_TMP_GRACE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tmpfile_mode_leaves_umask_alone),
		cmocka_unit_test(test_tmp_names),
		cmocka_unit_test(test_remove_stale),
		cmocka_unit_test(test_grace_setting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
