/*
 * git credential helpers and environment credentials (see credential.h).
 *
 * `git credential <op>` is started with posix_spawnp (safe in a program
 * with threads, unlike a bare fork that then allocates), fed the
 * description on stdin and, for `fill`, read back from stdout with a size
 * cap. The protocol is git's (Documentation/git-credential.txt): one
 * "key=value" per line, an empty line ends the input; values never hold a
 * newline or NUL, so a value that does is refused rather than sent.
 */
#define _GNU_SOURCE /* pipe2 */
#include "util/secret.h"
#include "remote/credential.h"

#include "results/error.h"
#include "util/hex.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RS_CREDENTIAL_OUTPUT_MAX (64 * 1024)

extern char **environ;

void rs_credential_init(struct rs_credential *c)
{
	memset(c, 0, sizeof(*c));
}

void rs_credential_release(struct rs_credential *c)
{
	free(c->protocol);
	free(c->host);
	free(c->path);
	free(c->username);
	rs_secret_free(c->password);
	rs_secret_free(c->token);
	rs_credential_init(c);
}

/* Percent-decode p[0..n) into a new string in *field. */
static int set_decoded(char **field, const char *p, size_t n)
{
	struct rs_buf b = RS_BUF_INIT;
	size_t o;
	char *s;
	int err;

	/* Room for all of it first: a realloc would leave the secret behind. */
	err = rs_buf_grow(&b, n);
	if (!err)
		err = rs_percent_decode(&b, p, n, 0);
	if (err) {
		rs_buf_release(&b);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	s = rs_buf_detach(&b, &o);
	if (memchr(s, '\0', o) || memchr(s, '\n', o)) {
		rs_secret_free(s);
		return rs_error_set(RS_EUSAGE, "the remote URL's user part holds a "
				    "newline or NUL");
	}
	rs_secret_free(*field);
	*field = s;
	return 0;
}

int rs_credential_from_url(struct rs_credential *c, const char *url)
{
	const char *sep = strstr(url, "://");
	const char *auth, *auth_end, *at = NULL, *colon, *path, *q;
	int err;

	if (!sep || sep == url)
		return rs_error_set(RS_EUSAGE, "'%.40s...' is not a URL", url);
	err = rs_secret_set(&c->protocol, url, (size_t)(sep - url));
	if (err)
		return err;
	auth = sep + 3;
	auth_end = auth + strcspn(auth, "/?#");
	for (q = auth; q < auth_end; q++)
		if (*q == '@')
			at = q;
	if (at) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		err = set_decoded(&c->username, auth,
				  (size_t)((colon ? colon : at) - auth));
		if (!err && colon)
			err = set_decoded(&c->password, colon + 1,
					  (size_t)(at - colon - 1));
		if (err)
			return err;
		auth = at + 1;
	}
	if (auth == auth_end)
		return rs_error_set(RS_EUSAGE, "the remote URL has no host");
	err = rs_secret_set(&c->host, auth, (size_t)(auth_end - auth));
	if (err)
		return err;
	path = auth_end;
	while (*path == '/')
		path++;
	q = path + strcspn(path, "?#");
	if (q > path)
		return rs_secret_set(&c->path, path, (size_t)(q - path));
	return 0;
}

int rs_credential_from_env(struct rs_credential *c)
{
	const char *token = getenv("RESULTS_HTTP_TOKEN");
	const char *user = getenv("RESULTS_HTTP_USER");
	const char *pass = getenv("RESULTS_HTTP_PASSWORD");

	if (token && *token)
		return rs_secret_set(&c->token, token, strlen(token)) ? 0 : 1;
	if (user && *user && pass) {
		if (rs_secret_set(&c->username, user, strlen(user)) ||
		    rs_secret_set(&c->password, pass, strlen(pass)))
			return 0;
		return 1;
	}
	return 0;
}

static int put_line(struct rs_buf *out, const char *key, const char *value)
{
	if (!value)
		return 0;
	if (strchr(value, '\n'))
		return rs_error_set(RS_EUSAGE, "credential field '%s' holds a newline",
				    key);
	return rs_buf_printf(out, "%s=%s\n", key, value);
}

int rs_credential_describe(struct rs_buf *out, const struct rs_credential *c,
			   int with_secret)
{
	int err = put_line(out, "protocol", c->protocol);

	if (!err)
		err = put_line(out, "host", c->host);
	if (!err)
		err = put_line(out, "path", c->path);
	if (!err)
		err = put_line(out, "username", c->username);
	if (!err && with_secret)
		err = put_line(out, "password", c->password);
	if (!err)
		err = rs_buf_putc(out, '\n');
	return err;
}

int rs_credential_parse(struct rs_credential *c, const char *text, size_t n)
{
	const char *p = text, *end = text + n;
	int err = 0;

	while (p < end && !err) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = eol ? eol : end;
		const char *eq;

		if (line_end == p)
			break; /* empty line: end of the answer */
		if ((size_t)(line_end - p) > 8192)
			return rs_error_set(RS_ECORRUPT, "credential helper answered "
					    "an overlong line");
		eq = memchr(p, '=', (size_t)(line_end - p));
		if (!eq)
			return rs_error_set(RS_ECORRUPT, "credential helper answered "
					    "a line without '='");
		if (memchr(p, '\0', (size_t)(line_end - p)))
			return rs_error_set(RS_ECORRUPT, "credential helper answered "
					    "a NUL byte");
		if (eq - p == 8 && !memcmp(p, "username", 8))
			err = rs_secret_set(&c->username, eq + 1, (size_t)(line_end - eq - 1));
		else if (eq - p == 8 && !memcmp(p, "password", 8))
			err = rs_secret_set(&c->password, eq + 1, (size_t)(line_end - eq - 1));
		p = eol ? eol + 1 : end;
	}
	return err;
}

/*
 * Start `git credential <op>` with its stdin and stdout on the two pipes
 * and its stderr on /dev/null; the child's ends are closed here.
 */
static int spawn_git_credential(const char *op, int in[2], int outp[2], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = { "git", "credential", (char *)op, NULL };
	int rc;

	if (posix_spawn_file_actions_init(&fa))
		return rs_error_set(RS_EGENERIC, "out of memory");
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawnp(pid, "git", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		errno = rc;
		*pid = -1;
		return rs_error_errno(RS_EGENERIC, "cannot run 'git credential %s'", op);
	}
	close(in[0]);
	in[0] = -1;
	close(outp[1]);
	outp[1] = -1;
	return 0;
}

/*
 * Write all of `input` to the helper's stdin, and close it. A helper that
 * exits without reading would make our write raise SIGPIPE and kill the
 * whole program: block it for this thread and swallow a pending one
 * afterwards.
 */
static void write_input(int *fd, const struct rs_buf *input)
{
	sigset_t block, old;
	size_t written = 0;
	int masked = 0;

	sigemptyset(&block);
	sigaddset(&block, SIGPIPE);
	if (!pthread_sigmask(SIG_BLOCK, &block, &old))
		masked = 1;
	while (written < input->len) {
		ssize_t n = write(*fd, input->ptr + written, input->len - written);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		written += (size_t)n;
	}
	close(*fd);
	*fd = -1;
	if (masked) {
		struct timespec zero = { 0, 0 };
		sigset_t pending;

		sigpending(&pending);
		if (sigismember(&pending, SIGPIPE))
			sigtimedwait(&block, NULL, &zero);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

/* Read the helper's stdout to its end, into `output` (capped) if not NULL. */
static int read_output(int fd, struct rs_buf *output, const char *op)
{
	int err = 0;

	for (;;) {
		char chunk[4096];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!output || err)
			continue; /* read on to the end, so that git is not cut off */
		err = rs_buf_put(output, chunk, (size_t)n);
		if (err == RS_ETOOBIG)
			err = rs_error_set(RS_ECORRUPT, "'git credential %s' answered "
					   "more than %d bytes", op,
					   RS_CREDENTIAL_OUTPUT_MAX);
	}
	return err;
}

/*
 * Run `git credential <op>`, write `input` to its stdin and, when `output`
 * is not NULL, collect its stdout (capped). Returns git's exit status
 * (0 success) or a negative RS_E* code when it could not be run.
 */
static int run_git_credential(const char *op, const struct rs_buf *input,
			      struct rs_buf *output)
{
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 };
	pid_t pid = -1;
	int status = 0, err = 0, i;

	if (pipe2(in, O_CLOEXEC) || pipe2(outp, O_CLOEXEC)) {
		err = rs_error_errno(RS_EGENERIC, "cannot create a pipe");
		goto out;
	}
	err = spawn_git_credential(op, in, outp, &pid);
	if (err)
		goto out;
	write_input(&in[1], input);
	err = read_output(outp[0], output, op);
out:
	for (i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	if (pid > 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (!err)
			err = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
	}
	return err;
}

int rs_credential_fill(struct rs_credential *c)
{
	struct rs_buf in = RS_BUF_INIT, out = RS_BUF_INIT;
	int err, rc;

	rs_buf_init(&out, RS_CREDENTIAL_OUTPUT_MAX);
	err = rs_credential_describe(&in, c, 0);
	if (err)
		goto cleanup;
	rc = run_git_credential("fill", &in, &out);
	if (rc < 0) {
		err = rc;
		goto cleanup;
	}
	if (rc > 0) {
		err = rs_error_set(RS_EAUTH, "no credentials for %s://%s: git "
				   "credential fill found none (configure a "
				   "credential helper, or set RESULTS_HTTP_TOKEN or "
				   "RESULTS_HTTP_USER and RESULTS_HTTP_PASSWORD)",
				   c->protocol ? c->protocol : "?",
				   c->host ? c->host : "?");
		goto cleanup;
	}
	err = rs_credential_parse(c, out.ptr ? out.ptr : "", out.len);
	if (!err && (!c->username || !c->password))
		err = rs_error_set(RS_EAUTH, "git credential fill gave no username "
				   "and password for %s://%s",
				   c->protocol ? c->protocol : "?",
				   c->host ? c->host : "?");
cleanup:
	/* Both buffers may hold the password. */
	if (out.ptr)
		memset(out.ptr, 0, out.alloc);
	if (in.ptr)
		memset(in.ptr, 0, in.alloc);
	rs_buf_release(&in);
	rs_buf_release(&out);
	return err;
}

static void approve_or_reject(const struct rs_credential *c, const char *op)
{
	struct rs_buf in = RS_BUF_INIT;

	if (!c->username || !c->password)
		return;
	if (!rs_credential_describe(&in, c, 1))
		run_git_credential(op, &in, NULL);
	if (in.ptr)
		memset(in.ptr, 0, in.alloc);
	rs_buf_release(&in);
}

void rs_credential_approve(const struct rs_credential *c)
{
	approve_or_reject(c, "approve");
}

void rs_credential_reject(const struct rs_credential *c)
{
	approve_or_reject(c, "reject");
}

/* ---- the cross-process lock ---- */

/* 0 when `dir` is a real folder (no symlink) of ours, closed to others. */
static int private_dir(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return 1;
	return 0;
}

/* Make `dir` 0700 when missing, then check it. */
static int make_private_dir(const char *dir)
{
	int rc;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return rs_error_errno(RS_EUSAGE, "cannot make the folder '%s'", dir);
	rc = private_dir(dir);
	if (rc)
		return rs_error_set(RS_EUSAGE, "'%s' is not a private folder of this user (a "
				    "symlink, another owner, or open to others): fix or remove it",
				    dir);
	return 0;
}

int rs_credential_lock_path(struct rs_buf *out)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *home = getenv("HOME");
	int err;

	rs_buf_clear(out);
	if (xdg && *xdg == '/' && private_dir(xdg) == 0) {
		err = rs_buf_printf(out, "%s/results", xdg);
		if (err)
			return err;
	} else if (home && *home == '/') {
		/* ~/.cache may be shared with nothing, but check ours anyway. */
		err = rs_buf_printf(out, "%s/.cache", home);
		if (err)
			return err;
		if (mkdir(out->ptr, 0700) != 0 && errno != EEXIST)
			return rs_error_errno(RS_EUSAGE, "cannot make the folder '%s'", out->ptr);
		err = rs_buf_puts(out, "/results");
		if (err)
			return err;
	} else {
		return rs_error_set(RS_ENOTFOUND, "neither XDG_RUNTIME_DIR nor HOME is set: "
				    "no private folder for the credential lock");
	}
	err = make_private_dir(out->ptr);
	if (err)
		return err;
	return rs_buf_puts(out, "/credential.lock");
}

int rs_credential_lock_take(long timeout_ms)
{
	struct rs_buf path = RS_BUF_INIT;
	struct timespec pause = { 0, 20 * 1000000L };
	struct stat st;
	long waited = 0;
	int fd = -1, code = rs_error_last();
	struct rs_error_saved saved;

	/* Best effort: whatever happens here, the caller's error stays as it was. */
	rs_error_save(&saved, code);
	rs_buf_init(&path, 4096);
	if (rs_credential_lock_path(&path))
		goto fail;
	fd = open(path.ptr, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid())
		goto fail;
	/* Every wait has a deadline: a stuck holder must not hold us forever. */
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= timeout_ms)
			goto fail;
		nanosleep(&pause, NULL);
		waited += 20;
	}
	rs_buf_release(&path);
	return fd;
fail:
	/* The caller goes on without the lock. */
	if (code)
		rs_error_restore(&saved);
	else
		rs_error_clear();
	if (fd >= 0)
		close(fd);
	rs_buf_release(&path);
	return -1;
}

void rs_credential_lock_release(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}
