/*
 * gc of a repository's remote (results/store.h): the committed retention
 * policy applied to the survey, then the store's mark / grace / sweep
 * collection (store/maint.h, docs/store-format.md).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "ops/census.h"
#include "report/owncode_config.h"
#include "runs/runindex.h"
#include "runs/runs.h"
#include "results/buf.h"
#include "results/runs.h"

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
};

/* Run k's record, loaded on first use; borrowed from `fl`. */
static int flagger_doc(const json_t **out, struct flagger *fl, size_t k)
{
	int err;

	if (!fl->docs[k]) {
		err = rs_run_doc_load(&fl->docs[k], fl->runs, rs_runs_at(fl->runs, k));
		if (err)
			return err;
	}
	*out = rs_run_doc_get(fl->docs[k]);
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
static int judge_run(struct flagger *fl, struct rs_retention_plan *plan, size_t i,
		     size_t *flagged)
{
	const struct rs_run_entry *e = rs_runs_at(fl->runs, i);
	const json_t *hist[FLAG_HISTORY], *head;
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
	rs_retention_plan_keep_run(plan, e->id);
	for (size_t k = 0; k < res->n_baseline; k++)
		rs_retention_plan_keep_run(plan, res->baseline_ids[k]);
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
static int keep_flagged(struct rs_survey *s, size_t *flagged)
{
	struct flagger fl;
	int err;

	memset(&fl, 0, sizeof(fl));
	rs_own_code_load(&fl.own, s->repo);
	fl.copts.own = &fl.own.oc;
	err = rs_runs_open(&fl.runs, s->repo, NULL);
	if (err)
		goto out;
	fl.docs = calloc(rs_runs_count(fl.runs) + 1, sizeof(*fl.docs));
	fl.later = calloc(rs_runs_count(fl.runs) + 1, 1);
	if (!fl.docs || !fl.later) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < rs_runs_count(fl.runs) && !err; i++)
		err = judge_run(&fl, &s->plan, i, flagged);
out:
	for (size_t k = 0; fl.docs && k < rs_runs_count(fl.runs); k++)
		rs_run_doc_free(fl.docs[k]);
	free(fl.docs);
	free(fl.later);
	rs_own_code_release(&fl.own);
	rs_runs_free(fl.runs);
	return err;
}

int rs_gc_keep_flagged(struct rs_survey *s, int *applied, size_t *flagged)
{
	struct rs_retention policy;
	int err;

	*applied = 0;
	*flagged = 0;
	err = rs_retention_load(s->repo, NULL, &policy);
	if (err || !policy.keep_flagged)
		return err;
	*applied = 1;
	return keep_flagged(s, flagged);
}

/*
 * The raw sessions to remove: those no ref's retention keeps that the
 * remote still holds, each once, announced as they are picked.
 */
static size_t pick_drops(struct rs_id *drop, uint64_t *drop_bytes, const struct rs_survey *s,
			 void (*picked)(const char *, const char *, void *), void *payload)
{
	const struct rs_retention_plan *plan = &s->plan;
	size_t ndrop = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct rs_plan_item *it = &plan->items[i];

		/* An oid once, at its first item; dropped when no item naming it is kept. */
		if (it->first_of_oid != i || it->oid_kept ||
		    !rs_store_census_has_object(&s->census, &it->oid))
			continue;
		drop[ndrop++] = it->oid;
		*drop_bytes += it->size;
		if (picked)
			picked(it->run_id, it->recorded_at, payload);
	}
	return ndrop;
}

/*
 * The policy's verdict on a manifest retention set aside, judged again
 * by every run: kept by a run of some ref (recorded again meanwhile, a
 * new pin), dropped by all that name it, or named by none that this
 * clone can see (kept: in doubt nothing is deleted).
 */
static enum rs_gc_verdict judge_oid(const struct rs_id *oid, void *payload)
{
	const struct rs_retention_plan *plan = payload;
	size_t first = rs_retention_plan_first(plan, oid);

	if (first == RS_PLAN_END)
		return RS_GC_UNKNOWN;
	return plan->items[first].oid_kept ? RS_GC_KEEP : RS_GC_DROP;
}

static void fill_totals(struct rs_gc_totals *t, const struct rs_survey *s,
			const struct rs_gc_stats *st)
{
	t->runs = s->plan.runs;
	t->refs = s->plan.refs;
	t->local_refs = s->plan.local_refs;
	t->manifests_removed = st->manifests_removed;
	t->manifests_touched = st->manifests_touched;
	t->manifests_restored = st->manifests_restored;
	t->manifests_confirmed = st->manifests_confirmed;
	t->manifests_pending = st->manifests_pending;
	t->bytes_pending = st->bytes_pending;
	t->packs_spared = st->packs_spared;
	t->packs = st->packs;
	t->packs_started = st->packs_started;
	t->packs_marked = st->packs_marked;
	t->packs_rescued = st->packs_rescued;
	t->packs_swept = st->packs_swept;
	t->packs_waiting = st->packs_waiting;
	t->packs_repacked = st->packs_repacked;
	t->bytes_swept = st->bytes_swept;
	t->bytes_unreferenced = st->bytes_unreferenced;
	t->bytes_repacked = st->bytes_repacked;
}

int rs_gc_run(struct rs_survey *s, const struct rs_gc_settings *settings,
	      void (*picked)(const char *run_id, const char *recorded_at, void *payload),
	      void *payload, struct rs_gc_totals *totals)
{
	struct rs_gc_options o = { .dry_run = settings->dry_run, .now = settings->now,
				   .grace = settings->grace, .repack = settings->repack,
				   .judge = judge_oid, .judge_payload = &s->plan };
	struct rs_gc_stats st = { 0 };
	struct rs_id *drop = calloc(s->plan.n ? s->plan.n : 1, sizeof(*drop));
	int err;

	memset(totals, 0, sizeof(*totals));
	if (!drop)
		return rs_error_set(RS_EGENERIC, "out of memory");
	/* What could not be read may keep anything: judge nothing, delete nothing. */
	if (s->plan.ndoubts) {
		free(drop);
		return rs_error_set(s->plan.doubt_code, "gc deletes nothing: %zu of the refs, files or remotes "
				    "that retention needs could not be read (said above, the first 20 at most)",
				    s->plan.ndoubts);
	}
	/* A newer writer's manifest stops gc before it writes anything. */
	err = rs_store_gc_check_newer(s->remote, &s->census);
	if (err)
		goto out;
	totals->dropped_runs = pick_drops(drop, &totals->dropped_bytes, s, picked, payload);
	/* Killed writers' leftovers (temporary files, S3 multipart uploads). */
	if (!o.dry_run && s->remote->tidy)
		s->remote->tidy(s->remote);
	err = rs_store_gc_drop(s->remote, &s->census, drop, totals->dropped_runs, &o, &st);
	if (err)
		goto out;
	err = rs_store_gc_collect(s->remote, &s->census, &o, &st);
	if (err)
		goto out;
	fill_totals(totals, s, &st);
out:
	free(drop);
	return err;
}
