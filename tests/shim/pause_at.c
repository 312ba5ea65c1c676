/*
 * An LD_PRELOAD shim that stops a process at one exact point of its work
 * until the test lets it go: the race tests (tests/e2e/test_gc_race.sh)
 * use it to run a gc between two steps of a push, or a push between two
 * steps of a gc, without guessing delays.
 *
 *   RS_PAUSE_DIR   a folder of the test's
 *   RS_PAUSE_CALL  rename or unlink: the call to stop at
 *   RS_PAUSE_AT    a string its path (rename's new name, unlink's path) contains
 *   RS_PAUSE_END   optional: and the path ends with this
 *   RS_PAUSE_WHEN  before (default) or after the call
 *
 * The first matching call of any process sharing RS_PAUSE_DIR creates
 * RS_PAUSE_DIR/paused (O_EXCL: only one ever does), then waits until
 * RS_PAUSE_DIR/go exists; after 600 s without it the process aborts, so a
 * broken test fails instead of hanging. Every other call goes through
 * untouched. A test tool: no part of results links it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int matches(const char *call, const char *text, size_t n)
{
	const char *want = getenv("RS_PAUSE_CALL"), *at = getenv("RS_PAUSE_AT");
	const char *end = getenv("RS_PAUSE_END");
	size_t atn, endn;

	if (!want || !at || !getenv("RS_PAUSE_DIR") || strcmp(want, call) || !text)
		return 0;
	atn = strlen(at);
	if (!atn || !memmem(text, n, at, atn))
		return 0;
	if (!end)
		return 1;
	endn = strlen(end);
	return n >= endn && !memcmp(text + n - endn, end, endn);
}

static int is_after(void)
{
	const char *when = getenv("RS_PAUSE_WHEN");

	return when && !strcmp(when, "after");
}

/* The one pause: announce it, then wait for the test's go. */
static void pause_here(void)
{
	char path[4096];
	int fd, saved = errno;
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	long waited;

	snprintf(path, sizeof(path), "%s/paused", getenv("RS_PAUSE_DIR"));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		errno = saved;
		return; /* another call paused already */
	}
	dprintf(fd, "%ld\n", (long)getpid());
	close(fd);
	snprintf(path, sizeof(path), "%s/go", getenv("RS_PAUSE_DIR"));
	for (waited = 0; access(path, F_OK) != 0; waited++) {
		if (waited > 60000) {
			fprintf(stderr, "pause_at: no '%s' after 600 s\n", path);
			abort();
		}
		nanosleep(&tick, NULL);
	}
	errno = saved;
}

int rename(const char *old, const char *new)
{
	static int (*real)(const char *, const char *);
	int hit = matches("rename", new, strlen(new)), r;

	if (!real)
		real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
	if (hit && !is_after())
		pause_here();
	r = real(old, new);
	if (hit && is_after())
		pause_here();
	return r;
}

int unlink(const char *path)
{
	static int (*real)(const char *);
	int hit = matches("unlink", path, strlen(path)), r;

	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
	if (hit && !is_after())
		pause_here();
	r = real(path);
	if (hit && is_after())
		pause_here();
	return r;
}
