/*
 * What the files behind results/report.h share (src/report/report*.c):
 * the runs' documents (runs/runs.h: the typed record the check and the
 * trend take, and the JSON the pages are still drawn from), the chart
 * files of a run page, and the judge of a page's runs.
 */
#ifndef RS_REPO_REPORT_INTERNAL_H
#define RS_REPO_REPORT_INTERNAL_H

#include "results/error.h"
#include <jansson.h>

#include "runs/runs.h"
#include "results/report.h"

/*
 * The CSV files of run `rec`'s folder (`folder`, from HEAD's tree, each
 * through a 4 MiB cap) that its page draws (analysis/html.h,
 * rs_html_run_charts): results run's timeline and the logged-stats
 * files, into run["chart_files"]. Best effort: a file that cannot be read
 * is left out and the page is still whole; RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_report_attach_chart_files(json_t *run, const rs_runrec *rec, const struct rs_runs *runs,
				 const char *folder);

/*
 * The verdicts of the runs of a page (report_judge.c), as `results check
 * <run>` gives them with its defaults: the same rs_check_run over the
 * runs recorded before each on its branch. The records read stay in the
 * judge's cache for the next, older run; the pages walk newest first.
 */
struct rs_report_judge;

RS_MUST_CHECK
int rs_report_judge_new(struct rs_report_judge **out, const struct rs_runs *runs);
void rs_report_judge_free(struct rs_report_judge *j);

/*
 * The record of `e` (the caller's: rs_run_doc_free), from the cache when
 * an earlier judgement read it. Runs recorded after `e` leave the cache:
 * ask for the runs newest first.
 */
RS_MUST_CHECK
int rs_report_judge_record(struct rs_run_doc **out, struct rs_report_judge *j,
			   const struct rs_run_entry *e);

/*
 * Judge run `e`, its record `doc` (its typed record is judged), and set
 * doc->json["check"]: {"verdict":
 * "regression" | "improvement" | "no-change" | "machine" | "accepted" |
 * "not-comparable", "label" (how it reads), "text" (the verdict line of
 * `results check`), "change" (relative, or null), "metric" (the one
 * quoted), "baseline" (the id of the baseline run the diff is against,
 * or null), "why" (for a machine-slower run or one of another
 * configuration: why it is left out of baselines, or null)}. `*baseline` gets that baseline run's document
 * (borrowed from the cache until the next call), NULL without one. A run
 * that cannot be judged gets "not-comparable" with the reason; only out
 * of memory and unreadable records fail.
 */
RS_MUST_CHECK
int rs_report_judge_run(struct rs_report_judge *j, const struct rs_run_entry *e,
			struct rs_run_doc *doc, const struct rs_run_doc **baseline);

/*
 * What the trend reads of run document `doc` (borrowed): its typed
 * record, its folder and the verdict doc->json["check"] holds (set by
 * rs_report_judge_run, or kept by the site's state).
 */
struct rs_trend_run;
void rs_report_trend_run(struct rs_trend_run *out, const struct rs_run_doc *doc);

#endif
