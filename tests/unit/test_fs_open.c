/* util/fs.h: opening only regular files, with and without following links. */
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
#include "util/fs.h"

static char base[] = "/tmp/rs-test-fsopen-XXXXXX";

/* base/name; two calls may be arguments of one call (rotating buffers). */
static const char *at(const char *name)
{
	static char p[2][256];
	static int next;
	char *out = p[next++ & 1];

	snprintf(out, sizeof(p[0]), "%s/%s", base, name);
	return out;
}

static int setup(void **state)
{
	FILE *f;

	(void)state;
	if (!mkdtemp(base))
		return -1;
	f = fopen(at("file"), "w");
	if (!f)
		return -1;
	fputs("contents\n", f);
	fclose(f);
	if (symlink(at("file"), at("link")) || symlink("loop2", at("loop1")) ||
	    symlink("loop1", at("loop2")) || mkfifo(at("fifo"), 0600) || mkdir(at("dir"), 0700))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_open_regular(void **state)
{
	struct rs_buf text = RS_BUF_INIT;
	int fd = -1;

	(void)state;
	assert_int_equal(rs_fs_open_regular(at("file"), 1, &fd), 0);
	assert_int_equal(rs_fs_read_fd(&text, fd, "file", 100), 0);
	assert_string_equal(text.ptr, "contents\n");
	assert_int_equal(rs_fs_read_fd(&text, fd, "file", 4), RS_ETOOBIG);
	close(fd);

	/* Without nofollow a link is the user's choice; with it, refused. */
	assert_int_equal(rs_fs_open_regular(at("link"), 0, &fd), 0);
	close(fd);
	assert_int_equal(rs_fs_open_regular(at("link"), 1, &fd), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "is a symbolic link"));
	assert_int_equal(rs_fs_open_regular(at("loop1"), 0, &fd), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "symbolic link loop"));
	assert_int_equal(rs_fs_open_regular(at("missing"), 1, &fd), RS_ENOTFOUND);

	/* A FIFO without a writer does not block the open; a folder is refused. */
	alarm(10);
	assert_int_equal(rs_fs_open_regular(at("fifo"), 1, &fd), RS_EUSAGE);
	alarm(0);
	assert_non_null(strstr(rs_error_message(), "not a regular file"));
	assert_int_equal(rs_fs_open_regular(at("dir"), 1, &fd), RS_EUSAGE);
	rs_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_regular, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
