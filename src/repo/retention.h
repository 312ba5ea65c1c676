/*
 * Retention: which raw sessions a results repository still needs. The
 * policy is committed in .results.json ("retention"), pins in pins.txt;
 * both are read from every branch, tag and remote-tracking ref, so that
 * what one branch still needs is never collected because of another.
 * docs/run-format.md describes the keys; docs/store-format.md what gc
 * then does with the plan.
 *
 * Ownership: a plan is the caller's (RS_RETENTION_PLAN_INIT, release with
 * rs_retention_plan_release); its strings belong to it.
 */
#ifndef RS_RETENTION_H
#define RS_RETENTION_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "repo/repo.h"
#include "util/hash.h"

/* The committed file of pinned run ids, one per line ('#' starts a comment). */
#define RS_PINS_FILE "pins.txt"

struct rs_retention {
	int configured;       /* .results.json has a "retention" object */
	unsigned keep_last;   /* raw sessions of the newest N runs of each branch */
	unsigned keep_days;   /* ... and of runs younger than D days */
	int keep_flagged;     /* ... and of runs `check` flags, with their baselines */
};

/* One LFS object of one run. */
struct rs_plan_item {
	char *run_id;
	char *branch;        /* the profiled branch ("" when unknown) */
	char *recorded_at;
	struct rs_id oid;
	uint64_t size;
	int keep;            /* some ref's policy keeps it */
	int pinned;
};

struct rs_retention_plan {
	struct rs_plan_item *items;
	size_t n, alloc;
	size_t refs;         /* refs read */
	size_t runs;         /* distinct runs seen */
};

#define RS_RETENTION_PLAN_INIT { NULL, 0, 0, 0, 0 }

/*
 * The policy committed at `rev` (NULL: HEAD). A missing file or key is
 * "keep everything" (configured = 0); a malformed one RS_ECORRUPT.
 */
RS_MUST_CHECK
int rs_retention_load(struct rs_repo *r, const char *rev, struct rs_retention *out);

/*
 * Read every run of every ref (branches, tags, remote-tracking branches),
 * apply each ref's own policy and pins at time `now`, and fill `plan` with
 * one item per (run, object). An object is kept when any item naming it
 * is kept. `only_head` reads HEAD alone (verify of this checkout).
 */
RS_MUST_CHECK
int rs_retention_plan_make(struct rs_repo *r, time_t now, int only_head,
			   struct rs_retention_plan *plan);
void rs_retention_plan_release(struct rs_retention_plan *plan);

/* Keep every item of run `run_id` (a run `check` flagged, or its baseline). */
void rs_retention_plan_keep_run(struct rs_retention_plan *plan, const char *run_id);

/* Whether `oid` is kept by some item of `plan`. */
int rs_retention_plan_keeps(const struct rs_retention_plan *plan, const struct rs_id *oid);

#endif
