/*
 * results: pinned runs (`results pin`), whose raw sessions `results gc`
 * keeps whatever the retention policy says. Pins are committed in
 * pins.txt, one run id per line, so that every clone's gc honours them
 * (docs/run-format.md). Conventions: results/repo.h.
 *
 *     rs_pins_open(&pins, repo);
 *     rs_pins_change(pins, "abc1234", 1, &id, &was);   for each run
 *     rs_pins_commit(pins, &changed);
 *     rs_pins_free(pins);
 */
#ifndef RESULTS_PINS_H
#define RESULTS_PINS_H

#include "results/error.h"

struct rs_repo;

/* The pins of HEAD being edited, with the run index to resolve runs; opaque. */
struct rs_pins;

/*
 * Load the run index and pins.txt of HEAD (no pins.txt: none, and a
 * commented header for the file to be written). `repo` is borrowed and
 * must outlive the result. RS_ECORRUPT for a malformed index or a
 * pins.txt over 1 MiB.
 */
RS_MUST_CHECK int rs_pins_open(struct rs_pins **out, struct rs_repo *repo);
void rs_pins_free(struct rs_pins *pins);

/*
 * Pin (`pin` 1) or unpin (0) the run named by `query` (a run id or a
 * profiled commit, as rs_runs_resolve takes them), in memory. `*run_id`
 * (borrowed from `pins`) names the run, `*was_pinned` says whether it
 * was pinned before. RS_ENOTFOUND, with a message saying what to do,
 * when `query` names no run or more than one commit.
 */
RS_MUST_CHECK int rs_pins_change(struct rs_pins *pins, const char *query, int pin,
				 const char **run_id, int *was_pinned);

/*
 * Commit pins.txt as changed, in a commit whose message names the runs
 * ("results: pin <id>..."). `*changed` is 0 when the file was already
 * so (no commit). rs_commit errors: RS_EUSAGE for local changes to
 * pins.txt in the way, RS_ERETRY when HEAD moved meanwhile.
 */
RS_MUST_CHECK int rs_pins_commit(struct rs_pins *pins, int *changed);

#endif
