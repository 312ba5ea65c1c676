/*
 * Errors: every library function returns 0 or a negative RS_E* code and
 * leaves a human message in a per-thread slot. Only the programs
 * (results, lfs-agent) print messages.
 */
#ifndef RESULTS_ERROR_H
#define RESULTS_ERROR_H

/*
 * RS_MUST_CHECK marks a function whose result carries an error the caller
 * must handle (see docs/hacking.md): ignoring it is a -Werror build failure.
 * Cast to (void) only where a comment says why the error cannot matter.
 */
#if defined(__GNUC__) || defined(__clang__)
#define RS_MUST_CHECK __attribute__((warn_unused_result))
#else
#define RS_MUST_CHECK
#endif

enum rs_error_code {
	RS_OK = 0,
	RS_EGENERIC = -1,   /* anything else: I/O, library failures */
	RS_ENOTFOUND = -2,  /* the named thing does not exist */
	RS_ECORRUPT = -3,   /* bytes do not match their id or format */
	RS_ERETRY = -4,     /* transient: trying again may succeed */
	RS_EUSAGE = -5,     /* bad input from the user or caller */
	RS_EAUTH = -6,      /* credentials refused */
	RS_EEXISTS = -7,    /* already there */
	RS_ETOOBIG = -8,    /* larger than its cap: a buffer, a file, a session */
	RS_EFORMAT = -9,    /* a format this build does not read, not simply newer */
	RS_EREMOTE = -10,   /* the remote cannot serve as addressed (no such bucket) */
	RS_ENEWER = -11,    /* written by a newer results (another store, pack,
	                       manifest or codec version): upgrade; never damage */
};

/*
 * Record `code` with a printf-style message for this thread and return
 * `code`, so that `return rs_error_set(RS_ECORRUPT, "...")` reads naturally.
 */
int rs_error_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Like rs_error_set, appending ": strerror(errno)". */
int rs_error_errno(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Put `prefix: ` in front of the current message, keeping its code.
 * Returns the code passed in, for `return rs_error_wrap(err, "...")`.
 */
int rs_error_wrap(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The current thread's message (borrowed; valid until the next set). */
const char *rs_error_message(void);

/* The code of the last rs_error_set on this thread. */
int rs_error_last(void);

void rs_error_clear(void);

#define RS_ERROR_MESSAGE_MAX 1024 /* a message is cut to this, its NUL included */

/*
 * A thread's error, kept. Error slots are per thread: a worker saves its
 * failure for the thread that joins it, and a caller keeps a message
 * across calls that set their own. The one way to do either.
 */
struct rs_error_saved {
	int code;
	char message[RS_ERROR_MESSAGE_MAX];
};

/* `code` and this thread's current message into `s`. */
void rs_error_save(struct rs_error_saved *s, int code);

/* Make `s` this thread's error again; returns its code. */
int rs_error_restore(const struct rs_error_saved *s);

/* A short stable name for a code ("not found", "corrupt", ...). */
const char *rs_error_name(int code);

#endif
