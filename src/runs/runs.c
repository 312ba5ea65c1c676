/* The runs of a repository for programs (results/runs.h). */
#include "runs/runs.h"

#include <stdlib.h>
#include <string.h>

#include "git/gitremote.h"
#include "git/repo.h"
#include "runs/run.h"
#include "results/buf.h"
#include "results/json.h"

int rs_runs_open(struct rs_runs **out, struct rs_repo *repo, const char *rev)
{
	return rs_runs_open_recent(out, repo, rev, 0);
}

int rs_runs_open_recent(struct rs_runs **out, struct rs_repo *repo, const char *rev,
			size_t want_recent)
{
	return rs_runs_open_window(out, repo, rev, want_recent, NULL, 0);
}

int rs_runs_open_window(struct rs_runs **out, struct rs_repo *repo, const char *rev,
			size_t want, const char *branch, int newest_branch)
{
	struct rs_runindex_window w = { want, branch, newest_branch };
	struct rs_runs *runs = calloc(1, sizeof(*runs));
	int err;

	if (!runs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	runs->repo = repo;
	rs_runindex_init(&runs->idx);
	err = rs_runindex_load_window(&runs->idx, repo, rev, &w);
	if (err) {
		rs_runs_free(runs);
		return err;
	}
	*out = runs;
	return 0;
}

int rs_runs_open_for(struct rs_runs **out, struct rs_repo *repo, const char *rev,
		     const char *const *queries, size_t n)
{
	struct rs_runs *runs = calloc(1, sizeof(*runs));
	int err;

	if (!runs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	runs->repo = repo;
	rs_runindex_init(&runs->idx);
	err = rs_runindex_load_queries(&runs->idx, repo, rev, queries, n);
	if (err) {
		rs_runs_free(runs);
		return err;
	}
	*out = runs;
	return 0;
}

int rs_runs_first_profiled(size_t *at, int *found, struct rs_repo *repo, const char *rev,
			   const char *const *commits, size_t n)
{
	return rs_runindex_first_profiled(at, found, repo, rev, commits, n);
}

void rs_runs_free(struct rs_runs *runs)
{
	if (!runs)
		return;
	rs_runindex_release(&runs->idx);
	free(runs);
}

size_t rs_runs_count(const struct rs_runs *runs)
{
	return runs->idx.count;
}

const struct rs_run_entry *rs_runs_at(const struct rs_runs *runs, size_t i)
{
	return i < runs->idx.count ? &runs->idx.runs[i] : NULL;
}

size_t rs_runs_pos(const struct rs_runs *runs, const struct rs_run_entry *e)
{
	return (size_t)(e - runs->idx.runs);
}

int rs_runs_resolve(const struct rs_run_entry **out, const struct rs_runs *runs,
		    const char *query)
{
	return rs_runindex_resolve(out, &runs->idx, query);
}

int rs_runs_newest(const struct rs_run_entry ***out, size_t *n, const struct rs_runs *runs,
		   const char *branch, size_t limit)
{
	const struct rs_run_entry **picked = calloc(limit ? limit : 1, sizeof(*picked));
	size_t got = 0;

	if (!picked)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = runs->idx.count; i-- > 0 && got < limit;) {
		const struct rs_run_entry *e = &runs->idx.runs[i];

		if (branch && (!e->branch || strcmp(e->branch, branch)))
			continue;
		picked[got++] = e;
	}
	*out = picked;
	*n = got;
	return 0;
}

const char *rs_run_entry_id(const struct rs_run_entry *e)
{
	return e->id;
}

const char *rs_run_entry_commit(const struct rs_run_entry *e)
{
	return e->commit;
}

const char *rs_run_entry_branch(const struct rs_run_entry *e)
{
	return e->branch;
}

const char *rs_run_entry_trigger(const struct rs_run_entry *e)
{
	return e->trigger;
}

const char *rs_run_entry_recorded_at(const struct rs_run_entry *e)
{
	return e->recorded_at;
}

const char *rs_run_entry_path(const struct rs_run_entry *e)
{
	return e->path;
}

int rs_run_entry_metric(const struct rs_run_entry *e, const char *name, double *out)
{
	const json_t *v = json_object_get(e->metrics, name);

	if (!json_is_number(v))
		return rs_error_set(RS_ENOTFOUND, "run %s has no metric '%s'", e->id, name);
	*out = json_number_value(v);
	return 0;
}

/*
 * Set `key` to a new string `value` (skipped when NULL: the index says
 * nothing); 1 when that failed (out of memory), which would leave the
 * document without the key.
 */
static int set_string(json_t *o, const char *key, const char *value)
{
	return value && json_object_set_new(o, key, json_string(value)) != 0;
}

json_t *rs_run_entry_object(const struct rs_run_entry *e)
{
	json_t *o = json_object();

	if (!o) {
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	if (set_string(o, "id", e->id) || set_string(o, "commit", e->commit) ||
	    set_string(o, "branch", e->branch) || set_string(o, "trigger", e->trigger) ||
	    set_string(o, "recorded_at", e->recorded_at) || set_string(o, "path", e->path) ||
	    (e->metrics && json_object_set(o, "metrics", e->metrics) != 0)) {
		json_decref(o);
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	return o;
}

/* The index entry's id, commit, branch, trigger and date into `rec` (NULL stays NULL). */
static int entry_identity(rs_runrec *rec, const struct rs_run_entry *e)
{
	char **to[] = { &rec->id, &rec->commit, &rec->branch, &rec->trigger, &rec->recorded_at };
	const char *from[] = { e->id, e->commit, e->branch, e->trigger, e->recorded_at };

	for (size_t i = 0; i < sizeof(to) / sizeof(to[0]); i++) {
		*to[i] = from[i] ? strdup(from[i]) : NULL;
		if (from[i] && !*to[i])
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

int rs_run_entry_record(rs_runrec **out, const struct rs_run_entry *e)
{
	rs_runrec *rec = calloc(1, sizeof(*rec));
	int err;

	if (!rec)
		return rs_error_set(RS_EGENERIC, "out of memory");
	rec->format = RS_RUNREC_FORMAT;
	err = entry_identity(rec, e);
	if (err)
		goto out;
	err = rs_runrec_metrics_from_json(&rec->metrics, e->metrics, "metrics");
	if (err) {
		err = rs_error_wrap(err, "run %s in the index", e->id);
		goto out;
	}
	*out = rec;
	rec = NULL;
out:
	rs_runrec_free(rec);
	return err;
}

/* Wrap `json` (the reference is taken over, also on failure) as a record. */
int rs_run_record_read(rs_runrec **out, json_t **json, struct rs_repo *repo, const char *rev,
			const struct rs_run_entry *e)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	json_error_t jerr;
	json_t *doc = NULL;
	rs_runrec *rec = NULL;
	int err;

	err = rs_buf_printf(&path, "%s/run.json", e->path);
	if (err)
		goto out;
	err = rs_repo_read_tree_file(repo, rev, path.ptr, RS_RUN_MAX_RUN_JSON, &text);
	if (err) {
		/* rs_error_set must not format from the slot it writes: save first */
		struct rs_error_saved saved;

		rs_error_save(&saved, err);
		err = rs_error_set(err == RS_ENOTFOUND ? RS_ECORRUPT : err,
				   "run %s is in the index but %s cannot be read: %s", e->id,
				   path.ptr, saved.message);
		goto out;
	}
	/* One parse: the typed record checks it, the JSON serves readers not
	 * yet converted to the record. */
	doc = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		err = rs_error_set(RS_ECORRUPT, "run %s: '%s' is not valid JSON: %s (line %d)",
				   e->id, path.ptr, jerr.text, jerr.line);
		goto out;
	}
	err = rs_runrec_from_json(doc, &rec);
	if (err) {
		err = rs_error_wrap(err, "run %s: '%s'", e->id, path.ptr);
		goto out;
	}
	*out = rec;
	rec = NULL;
	if (json) {
		*json = doc;
		doc = NULL;
	}
out:
	rs_runrec_free(rec);
	json_decref(doc);
	rs_buf_release(&path);
	rs_buf_release(&text);
	return err;
}

int rs_run_doc_load(struct rs_run_doc **out, const struct rs_runs *runs,
		    const struct rs_run_entry *e)
{
	json_t *doc = NULL;
	rs_runrec *rec = NULL;
	struct rs_run_doc *d = NULL;
	int err;

	err = rs_run_record_read(&rec, &doc, runs->repo, NULL, e);
	if (err)
		goto out;
	/* The index is the authority on where the run lives. */
	if (json_object_set_new(doc, "path", json_string(e->path)) != 0) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	d->json = doc;
	d->rec = rec;
	*out = d;
	doc = NULL;
	rec = NULL;
out:
	json_decref(doc);
	rs_runrec_free(rec);
	return err;
}

int rs_run_doc_from_entry(struct rs_run_doc **out, const struct rs_run_entry *e)
{
	struct rs_run_doc *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_run_entry_record(&d->rec, e);
	if (err)
		goto out;
	d->json = rs_run_entry_object(e);
	if (!d->json) {
		err = RS_EGENERIC; /* the message is set */
		goto out;
	}
	*out = d;
	d = NULL;
out:
	rs_run_doc_free(d);
	return err;
}

void rs_run_doc_free(struct rs_run_doc *doc)
{
	if (!doc)
		return;
	json_decref(doc->json);
	rs_runrec_free(doc->rec);
	free(doc);
}

const char *rs_run_doc_id(const struct rs_run_doc *doc)
{
	return doc->rec->id;
}

int rs_run_entries_json(struct rs_buf *out, const struct rs_run_entry *const *runs, size_t n)
{
	json_t *arr = json_array();
	int err;

	if (!arr) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *o = rs_run_entry_object(runs[i]);

		if (!o || json_array_append_new(arr, o) < 0) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	err = rs_json_dump(out, arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
out:
	json_decref(arr);
	return err;
}

int rs_runs_prefetch(const struct rs_runs *runs, const struct rs_run_entry *const *entries,
		     size_t n, const char *leaf)
{
	git_tree *tree = NULL;
	git_oid *ids = NULL;
	char **names = NULL;
	size_t k = 0;
	int err;

	if (n == 0)
		return 0;
	/* what the readers read: the file at HEAD (rs_run_record_read with rev NULL) */
	err = rs_repo_rev_tree(&tree, runs->repo->git, NULL);
	if (err == RS_ENOTFOUND) {
		/* no HEAD: nothing committed to fetch, and the readers say so */
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	ids = calloc(n, sizeof(*ids));
	names = calloc(n, sizeof(*names));
	if (!ids || !names) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct rs_buf path = RS_BUF_INIT;

		err = rs_buf_printf(&path, "%s/%s", entries[i]->path, leaf);
		if (err)
			goto out;
		/* a run without the file is the reader's to report, with its own message */
		if (rs_repo_tree_file_id(&ids[k], tree, path.ptr, "HEAD") == 0) {
			names[k++] = rs_buf_detach(&path, NULL);
		} else {
			rs_error_clear();
			rs_buf_release(&path);
		}
	}
	err = rs_git_fetch_promised_many(runs->repo->git, ids, (const char *const *)names, k, NULL);
out:
	for (size_t i = 0; names && i < k; i++)
		free(names[i]);
	free(names);
	free(ids);
	git_tree_free(tree);
	return err;
}
