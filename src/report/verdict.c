/*
 * The verdict of a run as it is recorded (see verdict.h): the same
 * rs_check_run as `results check` with its defaults, over the earlier
 * runs of the run's branch read from HEAD's tree.
 */
#include "report/verdict.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/render.h"
#include "report/owncode_config.h"
#include "runs/runs.h"
#include "results/error.h"
#include "results/escape.h"

#define VERDICT_HISTORY 24   /* as `results check` without --window */

/* The verdict text, or NULL when the history cannot be judged. */
static char *judge(struct rs_run *run, struct rs_repo *repo, const struct rs_buf *runjson)
{
	struct rs_runs *runs = NULL;
	struct rs_check_opts opts;
	struct rs_check_result *res = NULL;
	struct rs_buf v = RS_BUF_INIT;
	struct rs_own_code own;
	struct rs_run_doc *docs[VERDICT_HISTORY];
	const json_t *hist[VERDICT_HISTORY];
	json_t *head = NULL;
	size_t n = 0, i;
	char *out = NULL;

	memset(&opts, 0, sizeof(opts));
	rs_own_code_load(&own, repo);
	opts.own = &own.oc;
	head = json_loadb(runjson->ptr, runjson->len, 0, NULL);
	if (!json_is_object(head) || rs_runs_open_recent(&runs, repo, NULL, VERDICT_HISTORY * 2))
		goto out;
	json_object_set_new(head, "path", json_string(run->folder));
	/* earlier runs of the branch, newest first; an unreadable one is left out */
	for (i = rs_runs_count(runs); i-- > 0 && n < VERDICT_HISTORY;) {
		const struct rs_run_entry *e = rs_runs_at(runs, i);

		if (!e->branch || strcmp(e->branch, run->branch) ||
		    strcmp(e->recorded_at, run->recorded_at) > 0)
			continue;
		if (rs_run_doc_load(&docs[n], runs, e) == 0) {
			hist[n] = rs_run_doc_get(docs[n]);
			n++;
		}
	}
	if (!rs_check_run(&res, head, hist, n, &opts) && !rs_render_verdict(&v, res))
		out = rs_buf_detach(&v, NULL);
out:
	rs_error_clear();
	rs_check_free(res);
	for (i = 0; i < n; i++)
		rs_run_doc_free(docs[i]);
	json_decref(head);
	rs_runs_free(runs);
	rs_own_code_release(&own);
	rs_buf_release(&v);
	return out;
}

int rs_run_verdict(struct rs_run *run, struct rs_repo *repo, const struct rs_buf *runjson,
		   struct rs_buf *md)
{
	struct rs_buf line = RS_BUF_INIT, doc = RS_BUF_INIT;
	const char *cut;
	int err = 0;

	free(run->verdict);
	run->verdict = judge(run, repo, runjson);
	if (!run->verdict)
		return 0;
	/* after the title: "# Profiling run <id>\n\n" */
	cut = md->len ? strstr(md->ptr, "\n\n") : NULL;
	if (!cut)
		return 0;
	cut += 2;
	err = rs_buf_puts(&line, "**Verdict** (against the earlier comparable runs): ");
	if (!err)
		err = rs_escape_md_text(&line, run->verdict);
	if (!err)
		err = rs_buf_puts(&line, "\n\n");
	if (!err)
		err = rs_buf_put(&doc, md->ptr, (size_t)(cut - md->ptr));
	if (!err)
		err = rs_buf_put(&doc, line.ptr, line.len);
	if (!err)
		err = rs_buf_put(&doc, cut, md->len - (size_t)(cut - md->ptr));
	if (!err) {
		rs_buf_clear(md);
		err = rs_buf_put(md, doc.ptr, doc.len);
	}
	rs_buf_release(&line);
	rs_buf_release(&doc);
	return err;
}
