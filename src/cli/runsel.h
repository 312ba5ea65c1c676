/*
 * Run selection for the report commands (compare, check, trend, find,
 * site, open, export) through the library's public run interface
 * (results/runs.h, results/report.h): open the results repository and
 * its run index, resolve a run or commit, load a run's record, find a
 * run's session (fetching it first when the local store lacks it).
 *
 * Every function that returns an int returns an RS_EXIT_* status and has
 * already printed "results: ..." when it is not RS_EXIT_OK, so commands
 * can simply pass it on.
 */
#ifndef RS_CLI_RUNSEL_H
#define RS_CLI_RUNSEL_H

#include "results/error.h"
#include "results/buf.h"
#include "results/repo.h"
#include "results/runs.h"

struct rs_runsel {
	struct rs_repo *repo;     /* owned */
	struct rs_runs *runs;     /* owned: every run (or a window's), oldest first */
};

#define RS_RUNSEL_INIT { NULL, NULL }

RS_MUST_CHECK
int rs_runsel_open(struct rs_runsel *s);
/*
 * Only the newest runs: at least `want` of `branch` (NULL: any; with
 * `newest_branch`, of the newest run's branch), read newest shard first
 * (rs_runs_open_window). 0: all, as rs_runsel_open.
 */
int rs_runsel_open_window(struct rs_runsel *s, size_t want, const char *branch,
			  int newest_branch);
/*
 * Only the runs needed to resolve `queries[0..n)` (run ids or profiled
 * commits) with rs_runsel_resolve, through the commit map
 * (rs_runs_open_for): for a command that resolves those and walks no
 * history.
 */
RS_MUST_CHECK
int rs_runsel_open_for(struct rs_runsel *s, const char *const *queries, size_t n);
void rs_runsel_close(struct rs_runsel *s);

/* A run id or a profiled commit (prefix); *out is borrowed from s. */
RS_MUST_CHECK
int rs_runsel_resolve(const struct rs_run_entry **out, const struct rs_runsel *s,
		      const char *query);

/* The record of `e` (the caller's: rs_run_doc_free). */
RS_MUST_CHECK
int rs_runsel_load(struct rs_run_doc **out, const struct rs_runsel *s,
		   const struct rs_run_entry *e);

/*
 * The local LFS object holding the main session of run `e` (`doc` its
 * record), appended to `path`; when the local store lacks it, `results
 * fetch` (this program, as a child process: one download path) brings
 * it first.
 */
RS_MUST_CHECK
int rs_runsel_session_path(struct rs_buf *path, const struct rs_runsel *s,
			      const struct rs_run_entry *e, const struct rs_run_doc *doc);

/* Write `b` to `path` ("-" or NULL: stdout). */
RS_MUST_CHECK
int rs_runsel_write(const char *path, const struct rs_buf *b);

/* "5", "5%", "0.5" -> 0.05, 0.05, 0.005 (a percentage). */
RS_MUST_CHECK
int rs_runsel_parse_pct(const char *s, double *out);

/* A positive decimal count. */
RS_MUST_CHECK
int rs_runsel_parse_count(const char *s, size_t *out);

#endif
