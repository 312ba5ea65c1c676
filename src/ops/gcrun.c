/*
 * gc of a repository's remote (results/store.h): the committed retention
 * policy applied to the survey, then the store's mark / grace / sweep
 * collection (store/maint.h, docs/store-format.md).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ops/census.h"
#include "runs/runindex.h"
#include "runs/runs.h"
#include "results/buf.h"
#include "results/runs.h"

/* rs_gc_flagger_fn's keep: the run keeps its raw sessions. */
static void keep_run(const char *run_id, void *payload)
{
	rs_retention_plan_keep_run(payload, run_id);
}

int rs_gc_keep_flagged(struct rs_survey *s, rs_gc_flagger_fn *flagger, int *applied,
		       size_t *flagged)
{
	struct rs_retention policy;
	int err;

	*applied = 0;
	*flagged = 0;
	err = rs_retention_load(s->repo, NULL, &policy);
	if (err || !policy.keep_flagged)
		return err;
	*applied = 1;
	return flagger(s->repo, keep_run, &s->plan, flagged);
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
