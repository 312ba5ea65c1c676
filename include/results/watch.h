/*
 * results: running a profiling command and measuring it from outside
 * (`results run`), over its whole process tree, without any change to
 * the profiled program (conventions: results/repo.h).
 *
 *     struct rs_watch_report rep;
 *     rs_watch_report_init(&rep);
 *     rs_watch_run(&rep, argv, &opts);         runs argv, passes its output
 *     rs_watch_write_stats(&rep, "x.stats.json");
 *     rs_watch_write_timeline(&rep, "x.timeline.csv");
 *     rs_watch_report_release(&rep);
 *
 * What is measured, and how (docs/cli.md, `results run`):
 * - wall time (monotonic clock), user and system CPU time of every
 *   process of the tree that ended (getrusage of the reaped children:
 *   this process is made a child subreaper, so that orphaned
 *   grandchildren are reaped here and counted too);
 * - bytes read and written (storage and all reads/writes): the kernel
 *   adds a reaped child's I/O accounting to its parent's, so the
 *   difference of /proc/self/io before and after is the whole tree's;
 * - peak RSS of the tree (the sum over its live processes, sampled every
 *   `interval_ms`, and never below the largest single process's peak
 *   that the kernel reports), the number of processes seen and the peak
 *   number of threads, and a timeline of those samples whose memory is
 *   bounded (at most RS_WATCH_TIMELINE_MAX points: when full, every other
 *   point is dropped and the interval doubles);
 * - Python warnings on the command's standard error ("file:line:
 *   SomeWarning: message"), counted by category; standard error is
 *   passed through unchanged (through a pipe, so the command sees no
 *   terminal there), standard output and input are the command's own.
 */
#ifndef RESULTS_WATCH_H
#define RESULTS_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "results/error.h"

#define RS_WATCH_TIMELINE_MAX 4096
#define RS_WATCH_CATEGORIES_MAX 64  /* distinct warning categories kept; more count as "other" */
#define RS_WATCH_CATEGORY_LEN 64    /* bytes of a category name kept */

struct rs_watch_opts {
	unsigned interval_ms;  /* sampling interval; 0: 100 ms */
	unsigned linger_s;     /* after the command exits, how long its leftover
	                          descendants are waited for; 0: 10 s */
};

struct rs_watch_sample {
	double t_s;            /* since the start */
	uint64_t rss_bytes;    /* sum over the tree's live processes */
	double cpu_s;          /* user + system so far, whole tree */
	unsigned processes, threads;
};

struct rs_watch_category {
	char name[RS_WATCH_CATEGORY_LEN + 1];
	uint64_t count;
};

/* What rs_watch_run measured; the caller's (init/release). */
struct rs_watch_report {
	int exit_status;       /* the command's exit code, 128+N if killed by signal N,
	                          127 when it could not be started */
	int signal;            /* the signal that ended it, else 0 */
	double wall_s, user_s, sys_s;
	uint64_t peak_rss_bytes;
	uint64_t read_bytes, write_bytes;  /* from storage (read_bytes/write_bytes of /proc/PID/io) */
	uint64_t rchar, wchar;             /* every read and write, also of pipes and the page cache */
	int io_known;                      /* /proc/self/io could be read */
	unsigned processes_seen, peak_threads;
	unsigned leftover;     /* descendants still running when the linger ran out */
	uint64_t warnings;     /* every warning line */
	struct rs_watch_category *categories;
	size_t ncategories;
	uint64_t warnings_other; /* of categories past RS_WATCH_CATEGORIES_MAX */
	struct rs_watch_sample *timeline;
	size_t ntimeline;
	double timeline_interval_s; /* between points of the timeline as kept */
};

void rs_watch_report_init(struct rs_watch_report *rep);
void rs_watch_report_release(struct rs_watch_report *rep);

/*
 * Run argv[0] (looked up in PATH) with argv and measure it into `rep`
 * (initialised). Returns 0 once the command ran, whatever its exit
 * status (in rep->exit_status); RS_ENOTFOUND when it could not be
 * started (rep->exit_status 127; the message names it), RS_EGENERIC when
 * it could not be watched (no fork, no pipe). While it runs, SIGINT and
 * SIGQUIT are ignored here (the terminal sends them to the command too)
 * and SIGTERM and SIGHUP are passed on to it. Blocks until the command
 * and its descendants ended, or `linger_s` after the command itself did.
 */
RS_MUST_CHECK int rs_watch_run(struct rs_watch_report *rep, char *const argv[],
			       const struct rs_watch_opts *opts);

/*
 * Feed `len` bytes of a command's standard error to the warning counter
 * (what rs_watch_run does with each read); `line` carries a partial line
 * between calls (the caller's buffer of `cap` bytes; `*used` its fill).
 * Exposed for the tests; lines longer than `cap` are judged on their
 * first `cap` bytes.
 */
RS_MUST_CHECK int rs_watch_scan_stderr(struct rs_watch_report *rep, char *line, size_t cap,
				       size_t *used, const char *bytes, size_t len, int eof);

/*
 * The figures as a stats JSON object (results/record.h reads it as
 * `--stats`), written atomically to `path`:
 *   {"proc":{"wall_s","user_s","sys_s","cpu_s","peak_rss_mb","processes",
 *            "peak_threads","exit_status","leftover"},
 *    "io":{"read_mb","write_mb","rchar_mb","wchar_mb"},
 *    "warnings":{"count":N,"<Category>":N,...,"other":N},
 *    "out":{"files":N,"mb":M,"file":{"<relative path>":mb,...}}}
 * "io" only when it could be measured; "out" when `out_dir` is not NULL:
 * the regular files under it modified at or after `since` (the files the
 * command wrote; recursing at most 8 levels and 10,000 entries, never
 * into a symbolic link or a .git folder), with the 32 largest by name
 * (names cut to 200 bytes, bytes outside printable ASCII made '_').
 */
struct timespec;
RS_MUST_CHECK int rs_watch_write_stats(const struct rs_watch_report *rep, const char *path,
				       const char *out_dir, const struct timespec *since);

/* The timeline as CSV (t_s,rss_mb,cpu_s,processes,threads), atomically. */
RS_MUST_CHECK int rs_watch_write_timeline(const struct rs_watch_report *rep, const char *path);

#endif
