/*
 * The verdict of a run as it is recorded (see verdict.h): the same
 * rs_check_run as `results check` with its defaults, over the earlier
 * runs of the run's branch read from HEAD's tree.
 */
#include "repo/verdict.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/owncode.h"
#include "analysis/render.h"
#include "repo/runindex.h"
#include "results/error.h"

#define VERDICT_HISTORY 24   /* as `results check` without --window */
#define VERDICT_OWN_SPECS 64

int rs_md_inline(struct rs_buf *out, const char *s)
{
	int err = 0;

	for (; *s && !err; s++) {
		if (strchr("\\*_`[]<>|", *s))
			err = rs_buf_printf(out, "\\%c", *s);
		else if (*s == '\n' || *s == '\r')
			err = rs_buf_putc(out, ' ');
		else
			err = rs_buf_putc(out, *s);
	}
	return err;
}

/* The run.json of `e` from HEAD's tree, or NULL (unreadable: left out). */
static json_t *load_run(struct rs_repo *repo, const struct rs_run_entry *e)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	json_t *doc = NULL;

	if (!rs_buf_printf(&path, "%s/run.json", e->path) &&
	    !rs_repo_read_tree_file(repo, NULL, path.ptr, RS_RUN_MAX_RUN_JSON, &text))
		doc = json_loadb(text.ptr, text.len, 0, NULL);
	if (doc && !json_is_object(doc)) {
		json_decref(doc);
		doc = NULL;
	}
	if (doc) {
		json_object_set_new(doc, "path", json_string(e->path));
		if (!json_is_string(json_object_get(doc, "id")))
			json_object_set_new(doc, "id", json_string(e->id));
		if (!json_is_string(json_object_get(doc, "commit")))
			json_object_set_new(doc, "commit", json_string(e->commit));
	}
	rs_error_clear();
	rs_buf_release(&path);
	rs_buf_release(&text);
	return doc;
}

/* The verdict text, or NULL when the history cannot be judged. */
static char *judge(struct rs_run *run, struct rs_repo *repo, const struct rs_buf *runjson)
{
	struct rs_runindex idx;
	struct rs_check_opts opts;
	struct rs_check_result *res = NULL;
	struct rs_buf text = RS_BUF_INIT, v = RS_BUF_INIT;
	const char *specs[VERDICT_OWN_SPECS];
	struct rs_owncode own = { specs, 0 };
	json_t *head = NULL, *config = NULL, *hist[VERDICT_HISTORY];
	size_t n = 0, i;
	char *out = NULL;

	rs_runindex_init(&idx);
	memset(&opts, 0, sizeof(opts));
	head = json_loadb(runjson->ptr, runjson->len, 0, NULL);
	if (!json_is_object(head) || rs_runindex_load(&idx, repo, NULL, VERDICT_HISTORY * 2))
		goto out;
	json_object_set_new(head, "path", json_string(run->folder));
	if (!rs_repo_read_tree_file(repo, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &text))
		config = json_loadb(text.ptr, text.len, 0, NULL);
	own.n_specs = rs_owncode_from_config(json_is_object(config) ? config : NULL, specs,
					     VERDICT_OWN_SPECS);
	opts.own = &own;
	/* earlier runs of the branch, newest first */
	for (i = idx.count; i-- > 0 && n < VERDICT_HISTORY;) {
		const struct rs_run_entry *e = &idx.runs[i];

		if (!e->branch || strcmp(e->branch, run->branch) ||
		    strcmp(e->recorded_at, run->recorded_at) > 0)
			continue;
		hist[n] = load_run(repo, e);
		if (hist[n])
			n++;
	}
	if (!rs_check_run(&res, head, (const json_t *const *)hist, n, &opts) &&
	    !rs_render_verdict(&v, res))
		out = rs_buf_detach(&v, NULL);
out:
	rs_error_clear();
	rs_check_free(res);
	for (i = 0; i < n; i++)
		json_decref(hist[i]);
	json_decref(head);
	json_decref(config);
	rs_runindex_release(&idx);
	rs_buf_release(&text);
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
	err = rs_buf_puts(&line, "**Verdict** (against the previous comparable run): ");
	if (!err)
		err = rs_md_inline(&line, run->verdict);
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
