/*
 * The verdict of a run as `results add` records it (rs_report_add_verdict,
 * results/report.h): the same rs_check_run as `results check` with its
 * defaults, over the earlier runs of the run's branch read from HEAD's
 * tree. The caller passes the text to the recording (runs/), which never
 * judges a run by itself.
 */
#include "results/report.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/render.h"
#include "report/owncode_config.h"
#include "runs/runs.h"
#include "results/buf.h"
#include "results/error.h"

#define VERDICT_HISTORY 24   /* as `results check` without --window */

int rs_report_add_verdict(char **out, struct rs_repo *repo, const char *runjson, size_t len,
			  const char *folder)
{
	struct rs_runs *runs = NULL;
	struct rs_check_opts opts;
	struct rs_check_result *res = NULL;
	struct rs_buf v = RS_BUF_INIT;
	struct rs_own_code own;
	struct rs_run_doc *docs[VERDICT_HISTORY];
	const rs_runrec *hist[VERDICT_HISTORY];
	const char *branch, *recorded_at;
	rs_runrec *head = NULL;
	size_t n = 0, i;

	*out = NULL;
	memset(&opts, 0, sizeof(opts));
	rs_own_code_load(&own, repo);
	opts.own = &own.oc;
	/* the bytes `add` commits, read as every reader reads them */
	if (!folder || rs_runrec_decode(runjson, len, &head))
		goto out;
	branch = head->branch;
	recorded_at = head->recorded_at;
	if (rs_runs_open_recent(&runs, repo, NULL, VERDICT_HISTORY * 2))
		goto out;
	/* earlier runs of the branch, newest first; an unreadable one is left out */
	for (i = rs_runs_count(runs); i-- > 0 && n < VERDICT_HISTORY;) {
		const struct rs_run_entry *e = rs_runs_at(runs, i);

		if (!e->branch || strcmp(e->branch, branch) ||
		    strcmp(e->recorded_at, recorded_at) > 0)
			continue;
		if (rs_run_doc_load(&docs[n], runs, e) == 0) {
			hist[n] = rs_run_doc_record(docs[n]);
			n++;
		}
	}
	if (!rs_check_run(&res, head, hist, n, &opts) && !rs_render_verdict(&v, res))
		*out = rs_buf_detach(&v, NULL);
out:
	rs_error_clear();
	rs_check_free(res);
	for (i = 0; i < n; i++)
		rs_run_doc_free(docs[i]);
	rs_runrec_free(head);
	rs_runs_free(runs);
	rs_own_code_release(&own);
	rs_buf_release(&v);
	return 0;
}
