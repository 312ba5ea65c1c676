/*
 * The one-line verdict of a run against the earlier comparable runs
 * ("+13% vs c1d2e3f: new call do_incidence -> trace_contacts (4.13 s)"), as `results check`
 * words it (rs_render_verdict), written into summary.md and the index
 * line (and so the README table) when the run is recorded.
 */
#ifndef RS_REPO_VERDICT_H
#define RS_REPO_VERDICT_H

#include "runs/run.h"
#include "results/buf.h"

/*
 * Judge `run` (run.json rendered in `runjson`) against the earlier runs
 * of its branch in HEAD's index, with `results check`'s defaults and the
 * committed own_code; put the verdict in run->verdict and a line
 * "**Verdict:** ..." after the title of `md` (summary.md). Best effort:
 * a history that cannot be read gives no verdict, never an error; only
 * out of memory fails (RS_EGENERIC).
 */
RS_MUST_CHECK
int rs_run_verdict(struct rs_run *run, struct rs_repo *repo, const struct rs_buf *runjson,
		   struct rs_buf *md);


#endif
