/*
 * The runs `results check` flags, for gc's keep_flagged policy
 * (rs_report_flagged, results/report.h; rs_gc_keep_flagged in
 * results/store.h takes it): judging is a report's business, so the store
 * operations below never include the check and a change of check's
 * defaults reaches gc only through this caller-chosen function.
 */
#include "results/report.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "report/owncode_config.h"
#include "runs/runs.h"
#include "results/error.h"

/* Runs of one branch `check` compares a run with, at most. */
#define FLAG_HISTORY 12

/*
 * One keep_flagged pass: the runs, and what every check is judged with.
 * Each run's record is loaded once: `docs[k]` holds run k's from its first
 * use until the FLAG_HISTORY-th later run of its branch has been judged
 * (`later[k]` counts them), after which no run can need it again. So a
 * pass loads every record at most once and holds at most FLAG_HISTORY + 1
 * per branch, whatever the length of the history.
 */
struct flagger {
	struct rs_runs *runs;
	struct rs_check_opts copts;
	struct rs_own_code own;
	struct rs_run_doc **docs;  /* [rs_runs_count], loaded on first use */
	unsigned char *later;      /* [rs_runs_count] */
	void (*keep)(const char *run_id, void *payload);
	void *payload;
};

/* Run k's record, loaded on first use; borrowed from `fl`. */
static int flagger_doc(const rs_runrec **out, struct flagger *fl, size_t k)
{
	int err;

	if (!fl->docs[k]) {
		err = rs_run_doc_load(&fl->docs[k], fl->runs, rs_runs_at(fl->runs, k));
		if (err)
			return err;
	}
	*out = rs_run_doc_record(fl->docs[k]);
	return 0;
}

/* The run at `k` was history for one more run: drop it after the last. */
static void flagger_used(struct flagger *fl, size_t k)
{
	if (++fl->later[k] < FLAG_HISTORY)
		return;
	rs_run_doc_free(fl->docs[k]);
	fl->docs[k] = NULL;
}

/* Judge run `i` as `check` does; a regression keeps it and its baselines. */
static int judge_run(struct flagger *fl, size_t i, size_t *flagged)
{
	const struct rs_run_entry *e = rs_runs_at(fl->runs, i);
	const rs_runrec *hist[FLAG_HISTORY], *head;
	size_t used[FLAG_HISTORY];
	struct rs_check_result *res = NULL;
	size_t n = 0;
	int err = 0;

	for (size_t k = i; k-- > 0 && n < FLAG_HISTORY;) {
		const struct rs_run_entry *b = rs_runs_at(fl->runs, k);

		if (!e->branch || !b->branch || strcmp(e->branch, b->branch))
			continue;
		err = flagger_doc(&hist[n], fl, k);
		if (err)
			goto out;
		used[n++] = k;
	}
	if (!n)
		goto out;
	err = flagger_doc(&head, fl, i);
	if (err)
		goto out;
	err = rs_check_run(&res, head, hist, n, &fl->copts);
	if (err || !res->regressed)
		goto out;
	(*flagged)++;
	fl->keep(e->id, fl->payload);
	for (size_t k = 0; k < res->n_baseline; k++)
		fl->keep(res->baseline_ids[k], fl->payload);
out:
	rs_check_free(res);
	for (size_t k = 0; k < n; k++)
		flagger_used(fl, used[k]);
	if (!e->branch) { /* never history for a later run */
		rs_run_doc_free(fl->docs[i]);
		fl->docs[i] = NULL;
	}
	return err;
}

/*
 * keep_flagged: every run of this checkout's history that `results check`
 * flags as a regression, and the baseline runs it was judged against,
 * keep their raw sessions (to find out why, later). Judged as `check`
 * judges (same branch, comparable runs, noise band), from the committed
 * summaries only.
 */
int rs_report_flagged(struct rs_repo *repo, void (*keep)(const char *run_id, void *payload),
		      void *payload, size_t *flagged)
{
	struct flagger fl;
	int err;

	*flagged = 0;
	memset(&fl, 0, sizeof(fl));
	fl.keep = keep;
	fl.payload = payload;
	rs_own_code_load(&fl.own, repo);
	fl.copts.own = &fl.own.oc;
	err = rs_runs_open(&fl.runs, repo, NULL);
	if (err)
		goto out;
	fl.docs = calloc(rs_runs_count(fl.runs) + 1, sizeof(*fl.docs));
	fl.later = calloc(rs_runs_count(fl.runs) + 1, 1);
	if (!fl.docs || !fl.later) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rs_runs_count(fl.runs) && !err; i++)
		err = judge_run(&fl, i, flagged);
out:
	for (size_t k = 0; fl.docs && k < rs_runs_count(fl.runs); k++)
		rs_run_doc_free(fl.docs[k]);
	free(fl.docs);
	free(fl.later);
	rs_own_code_release(&fl.own);
	rs_runs_free(fl.runs);
	return err;
}
