/*
 * results/report.h: compare, check, and a run's session (open, export),
 * for programs. The analysis layer works on typed run records; this file
 * loads them through the run index (runs/runs.h, one decode per record)
 * and reads the settings the repository commits (.results.json).
 */
#include "report/report_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/culprit.h"
#include "analysis/deep.h"
#include "analysis/flame.h"
#include "analysis/diff.h"
#include "analysis/open.h"
#include "report/owncode_config.h"
#include "analysis/render.h"
#include "git/repo.h"
#include "results/buf.h"
#include "util/hash.h"

/* Earlier runs a check reads without --window: every run costs a run.json
 * read, so look back only as far as a commit's re-runs and a noise
 * estimate need. */

/* The summary diff, then (deep) the call paths; one document in JSON. */
static int render_compare(struct rs_buf *out, const struct rs_diff *d,
			  const struct rs_deep_diff *dd, enum rs_format fmt, size_t top)
{
	struct rs_buf a1 = RS_BUF_INIT, a2 = RS_BUF_INIT;
	int err;

	if (!dd || fmt != RS_FORMAT_JSON) {
		err = rs_render_diff(out, d, fmt, top);
		if (!err && dd)
			err = rs_render_deep(out, dd, fmt, top);
		return err;
	}
	/* one JSON document: {"summary": <diff>, "deep": <paths>} */
	err = rs_render_diff(&a1, d, fmt, top);
	if (err)
		goto out;
	err = rs_render_deep(&a2, dd, fmt, top);
	if (err)
		goto out;
	err = rs_buf_printf(out, "{\"summary\": %s, \"deep\": %s}\n", a1.ptr, a2.ptr);
out:
	rs_buf_release(&a1);
	rs_buf_release(&a2);
	return err;
}

/* The differential flame graph page of `dd`. */
static int render_flame(struct rs_buf *page, const struct rs_diff *d,
			const struct rs_deep_diff *dd)
{
	struct rs_buf title = RS_BUF_INIT;
	int err;

	err = rs_buf_printf(&title, "%s -> %s: differential flame graph", d->base_id, d->head_id);
	if (!err)
		err = rs_deep_flame_html(page, dd, title.ptr);
	rs_buf_release(&title);
	return err;
}

int rs_report_compare(struct rs_buf *out, struct rs_buf *flame, const struct rs_runs *runs,
		      const struct rs_run_doc *base, const struct rs_run_doc *head,
		      const struct rs_report_compare_opts *opts)
{
	struct rs_diff_opts dopts = { opts->per, opts->no_workload, NULL };
	int deep = opts->base_session && opts->head_session;
	struct rs_deep_diff *dd = NULL;
	struct rs_diff *d = NULL;
	struct rs_own_code own;
	int err;

	rs_own_code_load(&own, runs->repo);
	dopts.own = &own.oc;
	err = rs_diff_runs(&d, rs_run_doc_record(base), rs_run_doc_record(head), &dopts);
	if (err)
		goto out;
	if (deep) {
		err = rs_deep_diff_sessions_with(&dd, opts->base_session, opts->head_session, 0, d);
		if (err)
			goto out;
		/* the sessions' whole call trees name the culprits, by the
		 * same rule as the stored summaries' (analysis/culprit.h) */
		if (dd->culprits) {
			rs_culprits_free(d->culprits);
			d->culprits = dd->culprits;
			dd->culprits = NULL;
		}
	}
	err = render_compare(out, d, dd, opts->format, opts->top);
	if (err)
		goto out;
	if (deep && flame)
		err = render_flame(flame, d, dd);
out:
	rs_deep_diff_free(dd);
	rs_diff_free(d);
	rs_own_code_release(&own);
	return err;
}

/*
 * The runs before `head` on `branch` (NULL: the head's), newest first, at
 * most the window or RS_REPORT_CHECK_HISTORY_DEFAULT; `*n` counts those loaded,
 * also when one fails.
 */
static int load_history(struct rs_run_doc **hist, size_t *n, const struct rs_runs *runs,
			const struct rs_run_entry *head, const char *branch, size_t window)
{
	const char *hb = branch ? branch : head->branch;
	size_t want = window > RS_REPORT_CHECK_HISTORY_DEFAULT ? window : RS_REPORT_CHECK_HISTORY_DEFAULT;
	const struct rs_run_entry *picked[RS_REPORT_CHECK_HISTORY_MAX];
	size_t np = 0;
	int err;

	if (want > RS_REPORT_CHECK_HISTORY_MAX)
		return rs_error_set(RS_EUSAGE, "--window is at most %d runs",
				    RS_REPORT_CHECK_HISTORY_MAX);
	for (size_t i = rs_runs_pos(runs, head); i-- > 0 && np < want;) {
		const struct rs_run_entry *e = rs_runs_at(runs, i);

		if (hb && (!e->branch || strcmp(e->branch, hb)))
			continue;
		picked[np++] = e;
	}
	/* a partial clone brings the window's records in one fetch, not one each */
	err = rs_runs_prefetch(runs, picked, np, "run.json");
	if (err)
		return err;
	for (size_t k = 0; k < np; k++) {
		err = rs_run_doc_load(&hist[*n], runs, picked[k]);
		if (err)
			return err;
		(*n)++;
	}
	return 0;
}

int rs_report_check(struct rs_buf *out, struct rs_report_verdict *verdict,
		    const struct rs_runs *runs, const struct rs_run_entry *head,
		    const struct rs_run_doc *head_doc, const struct rs_report_check_opts *opts)
{
	struct rs_check_opts copts = {
		.threshold = opts->threshold, .window = opts->window, .per = opts->per,
		.no_workload = opts->no_workload, .metrics = opts->metrics,
		.n_metrics = opts->n_metrics, .fail_on_functions = opts->fail_on_functions,
	};
	struct rs_run_doc *hist[RS_REPORT_CHECK_HISTORY_MAX];
	const rs_runrec *recs[RS_REPORT_CHECK_HISTORY_MAX];
	struct rs_check_result *res = NULL;
	struct rs_own_code own;
	size_t n_hist = 0, n_recs = 0;
	int err;

	rs_own_code_load(&own, runs->repo);
	copts.own = &own.oc;
	if (opts->baseline) {
		recs[n_recs++] = rs_run_doc_record(opts->baseline);
		copts.explicit_baseline = 1;
	} else {
		err = load_history(hist, &n_hist, runs, head, opts->branch, opts->window);
		if (err)
			goto out;
		for (; n_recs < n_hist; n_recs++)
			recs[n_recs] = rs_run_doc_record(hist[n_recs]);
	}
	err = rs_check_run(&res, rs_run_doc_record(head_doc), recs, n_recs, &copts);
	if (err)
		goto out;
	err = rs_render_check(out, res, opts->format);
	if (err)
		goto out;
	verdict->regressed = res->regressed;
	verdict->n_baseline = res->n_baseline;
out:
	rs_check_free(res);
	for (size_t i = 0; i < n_hist; i++)
		rs_run_doc_free(hist[i]);
	rs_own_code_release(&own);
	return err;
}

int rs_report_session_path(struct rs_buf *path, int *present, const struct rs_runs *runs,
			   const struct rs_run_doc *doc)
{
	const rs_runrec *rec = rs_run_doc_record(doc);
	struct rs_id oid;
	int err;

	if (!rec->has_session ||
	    rs_id_from_hex(&oid, rec->session.oid, strlen(rec->session.oid)))
		return rs_error_set(RS_ENOTFOUND, "run %s has no session (recorded with --raw?)",
				    rec->id);
	err = rs_repo_lfs_object_path(path, runs->repo, &oid);
	if (err)
		return err;
	/* a look-up: "not there" is an answer, not an error */
	*present = !rs_repo_lfs_has(runs->repo, &oid, (uint64_t)rec->session.size);
	rs_error_clear();
	return 0;
}

#define CHART_FILE_MAX (4u << 20) /* bytes of one CSV drawn on a run's page */
#define CHART_FILES_MAX 8         /* CSV files drawn per run */

/* report_internal.h */
int rs_report_attach_chart_files(json_t *run, const rs_runrec *rec, const struct rs_runs *runs,
				 const char *folder)
{
	json_t *out = json_array();
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	int err = out ? 0 : rs_error_set(RS_EGENERIC, "out of memory");

	for (size_t i = 0; i < rec->nfiles; i++) {
		const char *name = rec->files[i].path, *role = rec->files[i].role;
		const char *kind = NULL;

		if (err || json_array_size(out) == CHART_FILES_MAX)
			break;
		if (!strcmp(name, "results-run.timeline.csv"))
			kind = "timeline";
		else if (!strcmp(role, "logged-stats"))
			kind = "logged-stats";
		if (!kind)
			continue;
		rs_buf_clear(&path);
		rs_buf_clear(&text);
		if (rs_buf_printf(&path, "%s/%s", folder, name)) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			break;
		}
		if (rs_repo_read_tree_file(runs->repo, NULL, path.ptr, CHART_FILE_MAX, &text) != 0) {
			rs_error_clear();
			continue;
		}
		if (json_array_append_new(out, json_pack("{s:s, s:s, s:s%}", "name", name,
							 "role", kind, "text", text.ptr ? text.ptr : "",
							 text.len)) != 0)
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	rs_buf_release(&path);
	rs_buf_release(&text);
	if (!err && json_object_set_new(run, "chart_files", out) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (err)
		json_decref(out);
	return err;
}

int rs_report_open_html(struct rs_buf *out, const char *session_path, const char *title,
			const struct rs_runs *runs, const struct rs_run_doc *doc)
{
	json_t *run = NULL;
	const char *folder = doc ? json_string_value(json_object_get(doc->json, "path")) : NULL;
	int err = 0;

	if (doc) {
		run = json_copy(doc->json);
		if (!run)
			return rs_error_set(RS_EGENERIC, "out of memory");
		if (folder)
			err = rs_report_attach_chart_files(run, rs_run_doc_record(doc), runs, folder);
	}
	if (!err)
		err = rs_open_html(out, session_path, title, 0, rs_run_doc_record(doc), run);
	json_decref(run);
	return err;
}
