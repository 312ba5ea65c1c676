/*
 * Retention: which raw sessions a results repository still needs. The
 * policy is committed in .results.json ("retention"), pins in pins.txt;
 * both are read from every branch and tag of the git remote (listed by
 * git/gitremote.h, whatever this clone fetched) and every ref of this
 * clone, so that what one branch still needs is never collected because
 * of another. What cannot be read is a doubt, and keeps.
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

#include "git/gitremote.h"
#include "git/repo.h"
#include "runs/runindex.h"
#include "session/intern.h"
#include "util/hash.h"

/* The committed file of pinned run ids, one per line ('#' starts a comment). */
#define RS_PINS_FILE "pins.txt"
#define RS_PINS_MAX (1u * 1024 * 1024)

/* Triggers a policy's keep_last may name one by one. */
#define RS_RETENTION_TRIGGERS 16

struct rs_retention {
	int configured;       /* .results.json has a "retention" object */
	unsigned keep_last;   /* raw sessions of the newest N runs of each branch;
	                         per trigger: of each trigger not named ("*") */
	int per_trigger;      /* keep_last is an object: counted per (branch, trigger) */
	int keep_last_rest;   /* ... and it has "*": triggers not named are counted too */
	size_t ntriggers;
	struct {
		char name[RS_RUN_MAX_TRIGGER + 1];
		unsigned keep;
	} triggers[RS_RETENTION_TRIGGERS];
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
	/* Links kept by the plan, so that no question costs a walk of every item: */
	size_t first_of_oid; /* the first item naming `oid` (this one's index when it is) */
	size_t next_of_run;  /* the next item of the same run, or RS_PLAN_END */
	int oid_kept;        /* on the first item of an oid: some item naming it is kept */
};

#define RS_PLAN_END SIZE_MAX

struct rs_retention_plan {
	struct rs_plan_item *items;
	size_t n, alloc;
	size_t refs;         /* refs of the git remote read */
	size_t local_refs;   /* refs of this clone read, whose commit no remote ref has */
	size_t runs;         /* distinct runs seen */
	/*
	 * Why gc may delete nothing: one line per ref or file that could not
	 * be read, or the git remote that could not be asked (empty: none).
	 * `doubt_code` is the first one's error code; past 20, doubts are
	 * counted (`ndoubts`) but not said. Verify still verifies
	 * what could be read, and says these.
	 */
	struct rs_buf doubts;
	size_t ndoubts;
	int doubt_code;
	size_t unread;       /* doubts that hide runs (an index, a run.json): verify cannot check them */
	/* What the policies keep by default (a branch without policy, an unknown age): one line each. */
	struct rs_buf notes;
	/*
	 * Hash tables (session/intern.h) from a run id to its first item and
	 * from an oid to its first item (keys: the items' own strings and
	 * `oid_keys`, which never move), so that planning, keeping and
	 * judging cost O(1) per item at 100,000 runs instead of O(items).
	 */
	struct rs_intern by_run, by_oid;
	struct rs_id **oid_keys;
	size_t noid_keys, oid_keys_alloc;
	uint64_t seed;
};

#define RS_RETENTION_PLAN_INIT { NULL, 0, 0, 0, 0, 0, RS_BUF_INIT, 0, 0, 0, RS_BUF_INIT, \
				 RS_INTERN_INIT, RS_INTERN_INIT, NULL, 0, 0, 0 }

/*
 * The policy committed at `rev` (NULL: HEAD). A missing file or key is
 * "keep everything" (configured = 0); a malformed one RS_ECORRUPT.
 */
RS_MUST_CHECK
int rs_retention_load(struct rs_repo *r, const char *rev, struct rs_retention *out);

/*
 * Read every run of every ref, apply each ref's own policy and pins at
 * time `now`, and fill `plan` with one item per (run, object). An object
 * is kept when any item naming it is kept. The refs read: the tips of
 * `remote` (the git remote's branches and tags, rs_git_refs_sync; NULL:
 * not asked), then this clone's branches, tags and remote-tracking
 * branches, each commit once. `only_head` reads HEAD alone (verify of this
 * checkout). A ref or run that cannot be read is a doubt (plan->doubts),
 * not an error: its runs are kept, the others still planned. Errors: out
 * of memory, or the refs cannot be listed.
 *
 * A run's objects are those of the LFS pointers in its folder (a few
 * hundred bytes each). The runs `judged` names (`judged->fn` true for one
 * of their objects: the store holds it, so gc could delete it and verify
 * checks it; every run when `fn` is NULL) are judged as their run.json
 * lists, read whole and parsed, a run.json that does not parse being a
 * doubt; `judged` NULL reads no run.json (a quick look, doctor's). So the
 * cost grows with the runs whose sessions the store still holds, not with
 * the history.
 */
struct rs_retention_judged {
	/* Whether the store holds `oid` (or has it set aside); NULL: judge every run. */
	int (*fn)(const struct rs_id *oid, void *payload);
	void *payload;
};

RS_MUST_CHECK
int rs_retention_plan_make(struct rs_repo *r, time_t now, int only_head,
			   const struct rs_git_refs *remote, const struct rs_retention_judged *judged,
			   struct rs_retention_plan *plan);
void rs_retention_plan_release(struct rs_retention_plan *plan);

/* Record a doubt: `code` (an RS_E*) and a line saying what and how to proceed. */
int rs_retention_plan_doubt(struct rs_retention_plan *plan, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Keep every item of run `run_id` (a run `check` flagged, or its baseline). */
void rs_retention_plan_keep_run(struct rs_retention_plan *plan, const char *run_id);

/* Whether `oid` is kept by some item of `plan`. */
int rs_retention_plan_keeps(const struct rs_retention_plan *plan, const struct rs_id *oid);

/* The index of the first item naming `oid`, or RS_PLAN_END when none does. */
size_t rs_retention_plan_first(const struct rs_retention_plan *plan, const struct rs_id *oid);

/*
 * pins.txt, one parser for gc and `results pin`: a line names a run when,
 * trimmed of surrounding blanks and a CR (a file edited on Windows), it is
 * the run id; blank lines and lines starting with '#' name none.
 * rs_pins_text_names: whether `text` names `id`. rs_pins_text_drop:
 * `text` without the lines naming `id` appended to `out` (the other lines
 * as they were), `*found` 1 when there was one.
 */
int rs_pins_text_names(const struct rs_buf *text, const char *id);
RS_MUST_CHECK int rs_pins_text_drop(struct rs_buf *out, const struct rs_buf *text, const char *id,
				    int *found);

#endif
