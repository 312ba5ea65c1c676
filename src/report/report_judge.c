/*
 * The check verdict of every run of a page (report_internal.h): what
 * `results check <run>` says with its defaults, from the same
 * rs_check_run over the same history (the runs recorded before it on its
 * branch, at most CHECK_HISTORY of them), so the site's index and the
 * trend's markers never disagree with the gate CI runs.
 *
 * Cost. The pages walk the runs newest first and the history of run i
 * overlaps that of run i + 1 but for one run, so the records read are
 * kept in a small cache keyed by their position in the index: each is
 * read once. A record recorded after the run being judged is no longer
 * needed by the walk and leaves the cache; so does the oldest one when
 * the cache is full (many branches at once). Only run records are read,
 * never a session.
 */
#include "report/report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/render.h"
#include "report/owncode_config.h"
#include "results/buf.h"

#define CHECK_HISTORY 24  /* as `results check` without --window (report.c) */
#define CACHE_MAX 256     /* records kept; several branches' windows */

struct cached {
	size_t pos;
	struct rs_run_doc *record;
	unsigned long used;   /* the judgement that last used it */
};

struct rs_report_judge {
	const struct rs_runs *runs;
	struct rs_own_code own;
	struct cached cache[CACHE_MAX];
	size_t n;
	unsigned long gen;    /* judgements made; a record the current one
	                         uses is never evicted under it */
};

int rs_report_judge_new(struct rs_report_judge **out, const struct rs_runs *runs)
{
	struct rs_report_judge *j = calloc(1, sizeof(*j));

	if (!j)
		return rs_error_set(RS_EGENERIC, "out of memory");
	j->runs = runs;
	rs_own_code_load(&j->own, runs->repo);
	*out = j;
	return 0;
}

void rs_report_judge_free(struct rs_report_judge *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		rs_run_doc_free(j->cache[i].record);
	rs_own_code_release(&j->own);
	free(j);
}

static void cache_drop(struct rs_report_judge *j, size_t k)
{
	rs_run_doc_free(j->cache[k].record);
	j->cache[k] = j->cache[--j->n];
}

/* The record at cache slot `k` out of the cache: the caller's. */
static struct rs_run_doc *cache_take(struct rs_report_judge *j, size_t k)
{
	struct rs_run_doc *doc = j->cache[k].record;

	j->cache[k] = j->cache[--j->n];
	return doc;
}

/* The record at index position `pos`, borrowed from the cache (read if needed). */
static int cache_get(const struct rs_run_doc **out, struct rs_report_judge *j, size_t pos)
{
	const struct rs_run_entry *e = rs_runs_at(j->runs, pos);
	struct rs_run_doc *rec = NULL;
	size_t k, oldest = 0;
	int err;

	for (k = 0; k < j->n; k++)
		if (j->cache[k].pos == pos) {
			j->cache[k].used = j->gen;
			*out = j->cache[k].record;
			return 0;
		}
	err = rs_run_doc_load(&rec, j->runs, e);
	if (err)
		return err;
	if (j->n == CACHE_MAX) {
		/* the oldest record the current judgement does not hold
		 * (CACHE_MAX > CHECK_HISTORY: there is one) */
		oldest = (size_t)-1;
		for (k = 0; k < j->n; k++)
			if (j->cache[k].used != j->gen &&
			    (oldest == (size_t)-1 || j->cache[k].pos < j->cache[oldest].pos))
				oldest = k;
		cache_drop(j, oldest);
	}
	j->cache[j->n].pos = pos;
	j->cache[j->n].used = j->gen;
	j->cache[j->n++].record = rec;
	*out = rec;
	return 0;
}

int rs_report_judge_record(struct rs_run_doc **out, struct rs_report_judge *j,
			   const struct rs_run_entry *e)
{
	size_t pos = rs_runs_pos(j->runs, e), k;
	const struct rs_run_doc *rec = NULL;
	int err;

	/* the walk is newest first: runs after `e` are never asked for again */
	for (k = j->n; k-- > 0;)
		if (j->cache[k].pos > pos)
			cache_drop(j, k);
	err = cache_get(&rec, j, pos);
	if (err)
		return err;
	/* the caller changes its record's JSON (links, verdict): it leaves
	 * the cache, which only serves as history of older runs */
	for (k = 0; k < j->n; k++)
		if (j->cache[k].pos == pos) {
			*out = cache_take(j, k);
			return 0;
		}
	return rs_error_set(RS_EGENERIC, "the judge lost run %s's record", e->id);
}

/* What the verdict is called on a page: its class, and how it reads. */
static void verdict_kind(const struct rs_check_result *r, const char **cls, const char **label)
{
	if (!r->n_baseline) {
		*cls = "not-comparable";
		*label = "not comparable";
	} else if (r->machine_slower) {
		*cls = "machine";
		*label = "machine slower";
	} else if (r->regressed) {
		*cls = "regression";
		*label = "regression";
	} else if (r->accepted_regression) {
		*cls = "accepted";
		*label = "slower, accepted";
	} else if (r->improved) {
		*cls = "improvement";
		*label = "improvement";
	} else {
		*cls = "no-change";
		*label = "no change";
	}
}

/* rec["check"]: the verdict's class, label, change, metric, text and baseline. */
static int set_check(json_t *rec, const struct rs_check_result *r)
{
	const struct rs_check_metric *m = rs_check_headline(r);
	struct rs_buf text = RS_BUF_INIT;
	const char *cls, *label, *why = NULL;
	json_t *o;
	int err;

	verdict_kind(r, &cls, &label);
	err = rs_render_verdict(&text, r);
	if (err)
		goto out;
	/* a first run is not left out of anything: it has no why */
	if (!r->n_baseline && r->n_other_config)
		why = r->other_config[0] ? r->other_config : text.ptr;
	else if (r->machine_slower)
		why = text.ptr;
	o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o}", "verdict", cls, "label", label,
		      "text", text.ptr ? text.ptr : "",
		      "change", m && !isnan(m->rel) ? json_real(m->rel) : json_null(),
		      "metric", m ? json_string(m->name) : json_null(),
		      "baseline", r->baseline_id ? json_string(r->baseline_id) : json_null(),
		      "why", why ? json_string(why) : json_null());
	if (!o || json_object_set_new(rec, "check", o) != 0)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	rs_buf_release(&text);
	return err;
}

static int not_judged(json_t *rec, const char *why)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:n, s:n, s:n, s:s}", "verdict", "not-comparable",
			      "label", "not judged", "text", why, "change", "metric", "baseline",
			      "why", why);

	if (!o || json_object_set_new(rec, "check", o) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

int rs_report_judge_run(struct rs_report_judge *j, const struct rs_run_entry *e,
			struct rs_run_doc *doc, const struct rs_run_doc **baseline)
{
	struct rs_check_opts opts;
	struct rs_check_result *res = NULL;
	const struct rs_run_doc *hist[CHECK_HISTORY];
	const rs_runrec *recs[CHECK_HISTORY];
	json_t *rec = doc->json;
	size_t n = 0, i;
	int err = 0;

	memset(&opts, 0, sizeof(opts));
	opts.own = &j->own.oc;
	*baseline = NULL;
	j->gen++;
	/* as report.c's load_history: the runs before `e` on its branch */
	for (i = rs_runs_pos(j->runs, e); i-- > 0 && n < CHECK_HISTORY;) {
		const struct rs_run_entry *h = rs_runs_at(j->runs, i);

		if (e->branch && (!h->branch || strcmp(h->branch, e->branch)))
			continue;
		err = cache_get(&hist[n], j, i);
		if (err)
			return err;
		recs[n] = rs_run_doc_record(hist[n]);
		n++;
	}
	err = rs_check_run(&res, rs_run_doc_record(doc), recs, n, &opts);
	if (err) {
		/* a run that cannot be judged (malformed numbers) still gets its
		 * pages; the index says why it has no verdict */
		err = not_judged(rec, rs_error_message());
		rs_error_clear();
		goto out;
	}
	err = set_check(rec, res);
	if (err)
		goto out;
	for (i = 0; res->baseline_id && i < n; i++)
		if (!strcmp(rs_run_doc_record(hist[i])->id, res->baseline_id))
			*baseline = hist[i];
out:
	rs_check_free(res);
	return err;
}
