/*
 * HTTP credentials the way git finds them: from the environment, or from
 * git's credential helpers through `git credential fill`, with
 * `approve` after a credential worked and `reject` after it was refused,
 * so a helper stores good passwords and forgets bad ones.
 *
 * Environment (checked first, never stored anywhere):
 *   RESULTS_HTTP_TOKEN                         bearer token
 *   RESULTS_HTTP_USER + RESULTS_HTTP_PASSWORD  basic authentication
 *
 * `git credential fill` may prompt on the terminal when no helper has an
 * answer (git's own behaviour); GIT_TERMINAL_PROMPT=0 turns that off.
 * Its stderr goes to /dev/null: this is a library and never prints.
 *
 * Every string in the struct is owned by it; secrets are wiped on release.
 */
#ifndef RS_CREDENTIAL_H
#define RS_CREDENTIAL_H

#include "results/buf.h"
#include "results/error.h"

struct rs_credential {
	char *protocol; /* "https" */
	char *host;     /* "host" or "host:port" */
	char *path;     /* path without leading '/'; may be NULL */
	char *username; /* NULL when none */
	char *password; /* NULL when none */
	char *token;    /* bearer token (environment only); NULL when none */
};

/* An empty credential (all NULL). */
void rs_credential_init(struct rs_credential *c);

/* Free every field, wiping secrets first. */
void rs_credential_release(struct rs_credential *c);

/*
 * Fill protocol, host and path (and username, when the URL carries one)
 * from `url` ("https://user@host:port/path"). A password in the URL is
 * taken too, as git does, though it is discouraged.
 * RS_EUSAGE for a URL without "scheme://host".
 */
RS_MUST_CHECK
int rs_credential_from_url(struct rs_credential *c, const char *url);

/*
 * Take a token or a user/password pair from the environment variables
 * above. Returns 1 when it found one, 0 when not.
 */
RS_MUST_CHECK
int rs_credential_from_env(struct rs_credential *c);

/*
 * Run `git credential fill` with what `c` knows and store the username
 * and password it answers. RS_EAUTH when git has none (no helper, prompts
 * disabled or cancelled); RS_EGENERIC when git cannot be run.
 */
RS_MUST_CHECK
int rs_credential_fill(struct rs_credential *c);

/* `git credential approve` / `reject`: best effort, errors are ignored. */
void rs_credential_approve(const struct rs_credential *c);
void rs_credential_reject(const struct rs_credential *c);

/*
 * Parse the output of `git credential fill` ("key=value" lines) into `c`,
 * setting username and password. At most `n` bytes are read; lines that
 * are too long or malformed give RS_ECORRUPT. Exposed for tests.
 */
RS_MUST_CHECK
int rs_credential_parse(struct rs_credential *c, const char *text, size_t n);

/*
 * Write the "key=value\n" description git credential reads, ending with
 * an empty line. RS_EUSAGE when a field holds a newline or NUL.
 * `with_secret` adds the password (for approve / reject).
 */
RS_MUST_CHECK
int rs_credential_describe(struct rs_buf *out, const struct rs_credential *c,
			   int with_secret);

/*
 * The cross-process lock that makes the agents git-lfs runs side by side
 * ask for a password one at a time. It lives in a private per-user
 * folder: $XDG_RUNTIME_DIR/results when XDG_RUNTIME_DIR is a folder of
 * ours with mode 0700 (as systemd makes it), else ~/.cache/results. The
 * folder is made 0700 when missing and refused when it is a symlink, not
 * ours or open to others; the lock file is opened with O_NOFOLLOW and
 * must be a regular file of ours. So another user can neither hold it
 * nor plant a symlink; a world-writable /tmp is never used.
 *
 * rs_credential_lock_path: the lock file's path into `out` (the folder is
 * made and checked). RS_EUSAGE naming the folder when it is unsafe,
 * RS_ENOTFOUND when there is neither XDG_RUNTIME_DIR nor HOME.
 *
 * rs_credential_lock_take: take it, waiting at most `timeout_ms`. The
 * open descriptor, or -1 when the lock could not be had (unsafe folder,
 * timeout): the caller then goes on unordered, which is only less
 * convenient. rs_credential_lock_release(-1) is a no-op.
 */
RS_MUST_CHECK
int rs_credential_lock_path(struct rs_buf *out);
RS_MUST_CHECK
int rs_credential_lock_take(long timeout_ms);
void rs_credential_lock_release(int fd);

#endif
