/*
 * results: reports on recorded runs, for programs: comparing two runs,
 * the regression check, trends, locating a step change, the static site,
 * and a run's session as an HTML call tree or for flame-graph tools.
 * Conventions as in results/repo.h: 0 or a negative RS_E* code with a
 * message; the output is appended to the caller's `struct rs_buf *`;
 * verdicts come back as plain C values. Runs are named by the opaque
 * types of results/runs.h; settings the repository commits (the
 * project's own code, "own_code" in .results.json) are read inside.
 */
#ifndef RESULTS_REPORT_H
#define RESULTS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "results/error.h"
#include "results/format.h" /* enum rs_format, rs_export_session */

struct rs_buf;
struct rs_repo;
struct rs_runs;
struct rs_run_entry;
struct rs_run_doc;

/* ---- judging runs for the layers below --------------------------- */

/*
 * The one-line verdict of the run whose run.json is `runjson` (`len`
 * bytes, as rs_record_preview_json renders it; `folder` its folder,
 * rs_record_folder) against the earlier runs of its branch in HEAD's
 * index, with `results check`'s defaults and the committed own_code:
 * what `results add` passes to rs_record_set_verdict. `*verdict` is
 * the caller's (free), NULL when there is nothing to judge against or
 * the history cannot be read. Best effort: returns 0.
 */
RS_MUST_CHECK
int rs_report_add_verdict(char **verdict, struct rs_repo *repo, const char *runjson, size_t len,
			  const char *folder);

/*
 * gc's keep_flagged (an rs_gc_flagger_fn, results/store.h): `keep` is
 * called with the id of every run of HEAD's history that `results check`
 * flags as a regression and of each baseline it was judged against;
 * `*flagged` counts the flagged runs.
 */
RS_MUST_CHECK
int rs_report_flagged(struct rs_repo *repo, void (*keep)(const char *run_id, void *payload),
		      void *payload, size_t *flagged);

/* ---- results compare ---------------------------------------------- */

struct rs_report_compare_opts {
	enum rs_format format;
	size_t top;               /* function rows per section (0: 10) */
	const char *per;          /* workload key; NULL: detect */
	int no_workload;          /* 1: never normalise */
	/* --deep: the two raw sessions (local files; see
	   rs_report_session_path), NULL without --deep */
	const char *base_session;
	const char *head_session;
};

/*
 * What changed from run `base` to run `head` (records of `runs`),
 * appended to `out`; with the sessions (--deep) also the call paths, one
 * JSON document in JSON. `flame` (may be NULL; only with the sessions)
 * gets the differential flame graph page.
 */
RS_MUST_CHECK
int rs_report_compare(struct rs_buf *out, struct rs_buf *flame, const struct rs_runs *runs,
		      const struct rs_run_doc *base, const struct rs_run_doc *head,
		      const struct rs_report_compare_opts *opts);

/* ---- results check -------------------------------------------------- */

/* Earlier runs a check reads at most (--window's limit). */
#define RS_REPORT_CHECK_HISTORY_MAX 64
/* The earlier runs of the head's branch check reads without --window (or below it). */
#define RS_REPORT_CHECK_HISTORY_DEFAULT 24

struct rs_report_check_opts {
	enum rs_format format;
	/* the baseline: `baseline` when set (one run, the user's choice),
	   else the runs before `head` on `branch` (NULL: the head's branch) */
	const struct rs_run_doc *baseline;
	const char *branch;
	size_t window;            /* the N newest comparable runs of earlier commits
	                             (0: 5; at most RS_REPORT_CHECK_HISTORY_MAX) */
	double threshold;         /* relative; <= 0: 0.05 */
	const char *const *metrics; /* metrics to gate on; NULL: time metrics */
	size_t n_metrics;
	const char *per;          /* workload key; NULL: detect */
	int no_workload;
	int fail_on_functions;    /* 1: a function beyond its own noise fails the
	                             check even when the run did not regress */
};

struct rs_report_verdict {
	int regressed;            /* 1 when a gating metric regressed */
	size_t n_baseline;        /* comparable baseline runs (0: nothing to compare) */
};

/*
 * Check run `head` (`head_doc` its loaded record) of `runs` against its
 * baseline, append the report to `out` and fill `verdict`. RS_EUSAGE
 * when the chosen baseline ran on another machine.
 */
RS_MUST_CHECK
int rs_report_check(struct rs_buf *out, struct rs_report_verdict *verdict,
		    const struct rs_runs *runs, const struct rs_run_entry *head,
		    const struct rs_run_doc *head_doc, const struct rs_report_check_opts *opts);

/* ---- results trend -------------------------------------------------- */

struct rs_report_trend_opts {
	enum rs_format format;     /* text or JSON (ignored with `html`) */
	const char *branch;        /* NULL: every branch */
	size_t limit;              /* the newest runs taken */
	size_t summaries;          /* of those, the newest whose records are read */
	const char *const *metrics;
	size_t n_metrics;
	int all_metrics;
	const char *const *functions;
	size_t n_functions;
	int total;                 /* function series of total, not own, time */
	const char *per;
	int no_workload;
	int html;                  /* 1: one self-contained HTML page */
	const char *title;         /* the page's (NULL: a default) */
	const char *run_url;       /* link templates: "{id}", "{path}", "{commit}" */
	const char *commit_url;
};

/* The trend of `runs`; `*n_runs` and `*n_charts` (series) say how big. */
RS_MUST_CHECK
int rs_report_trend(struct rs_buf *out, size_t *n_runs, size_t *n_charts,
		    const struct rs_runs *runs, const struct rs_report_trend_opts *opts);

/* ---- results find --------------------------------------------------- */

struct rs_report_find_opts {
	enum rs_format format;     /* text or JSON */
	const char *metric;        /* NULL: "duration" */
	const char *branch;        /* NULL: the branch of the newer run */
	const char *per;
	int no_workload;
	const char *range;         /* the range as the user wrote it (messages) */
};

/*
 * The largest step of a metric over the runs from `from` to `to` (either
 * order; a commit named as the start stands for all of its runs).
 * RS_EUSAGE when fewer than two runs in the range have the metric.
 */
RS_MUST_CHECK
int rs_report_find(struct rs_buf *out, const struct rs_runs *runs,
		   const struct rs_run_entry *from, const struct rs_run_entry *to,
		   const struct rs_report_find_opts *opts);

/* ---- results site --------------------------------------------------- */

struct rs_report_site_opts {
	const char *branch;        /* NULL: every branch */
	size_t limit;              /* runs in the table */
	size_t summaries;          /* runs whose records feed the function trends */
	const char *title;
	const char *commit_url;    /* NULL: commits as text */
	int full;                  /* rewrite every run page, whatever is up to date */
};

/*
 * Write the static site into `dir` (created): index.html (each run with
 * the verdict `results check` gives it), trends.html and runs/<id>.html
 * (+ runs/<id>.diff.html, against the check's baseline run). Incremental:
 * a run whose folder, pages and older runs did not change since the last
 * build into `dir` (<dir>/.results-site.json: each run's folder tree and
 * verdict, with the version, options and committed configuration) keeps
 * its pages and verdict, and its record is not read unless the trends
 * need it. `*pages` counts the runs whose pages were written.
 */
RS_MUST_CHECK
int rs_report_site(const struct rs_runs *runs, const char *dir,
		   const struct rs_report_site_opts *opts, size_t *pages);

/* ---- a run's session: results open (results export: results/format.h) */

/*
 * The local LFS object of the main session of `doc` (a record of
 * `runs`), appended to `path`; `*present` says whether the local store
 * holds it (else the program fetches it first). RS_ENOTFOUND when the
 * run has no session (recorded with --raw).
 */
RS_MUST_CHECK
int rs_report_session_path(struct rs_buf *path, int *present, const struct rs_runs *runs,
			   const struct rs_run_doc *doc);

/*
 * The session at `session_path` as an interactive HTML call tree, titled
 * `title`; with the run's record `doc` (may be NULL: a session file
 * given directly), its timelines above the tree: the phases over the
 * run, the process tree's memory and CPU, the logged statistics.
 */
RS_MUST_CHECK
int rs_report_open_html(struct rs_buf *out, const char *session_path, const char *title,
			const struct rs_runs *runs, const struct rs_run_doc *doc);

#endif
