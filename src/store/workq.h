/*
 * An ordered work queue: jobs are submitted with increasing sequence
 * numbers, run on a fixed set of threads in any order, and collected in
 * submission order. The store uses it to hash and compress (or fetch,
 * decompress and verify) chunks on every core while one thread keeps the
 * object's byte order for the whole-file hash, the pack and the output.
 *
 * Memory is bounded by the number of slots: submit blocks while the
 * oldest uncollected job still holds the slot it needs.
 */
#ifndef RS_WORKQ_H
#define RS_WORKQ_H

#include "results/error.h"

/* Runs on a worker thread; returns 0 or an RS_E* code with the message set. */
typedef int (*rs_workq_fn)(void *job, void *ctx) RS_MUST_CHECK;

struct rs_workq;

/*
 * `threads` workers, `slots` jobs in flight at most (slots >= threads).
 * With one thread, jobs run one at a time in submission order.
 */
RS_MUST_CHECK
int rs_workq_new(struct rs_workq **out, int threads, int slots, rs_workq_fn fn, void *ctx);

/* Queue `job` (borrowed until collected) in slot `seq % slots`. */
void rs_workq_submit(struct rs_workq *q, void *job);

/*
 * Wait for the oldest uncollected job; returns it in `*job_out` and its
 * result. On failure the worker's error message is restored on this thread.
 */
RS_MUST_CHECK
int rs_workq_collect(struct rs_workq *q, void **job_out);

/* Number of jobs submitted but not collected. */
int rs_workq_pending(struct rs_workq *q);

/* Waits for running jobs to end and frees everything (uncollected jobs are dropped). */
void rs_workq_free(struct rs_workq *q);

#endif
