/*
 * Retention plan: every (run, LFS object) of every ref, with the verdict
 * of that ref's committed policy. Everything read here is committed data
 * (untrusted): files are read with caps, and ids are parsed, never used
 * as paths.
 */
#define _GNU_SOURCE
#include "repo/retention.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "repo/runindex.h"
#include "util/array.h"
#include "results/error.h"

#define RUN_JSON_MAX (64u * 1024 * 1024)
#define PINS_MAX (1u * 1024 * 1024)

/* The "retention" object `ret` of the marker file into `out`. */
static int parse_policy(struct rs_retention *out, json_t *ret)
{
	json_t *v;

	out->configured = 1;
	v = json_object_get(ret, "keep_last");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000)
			return rs_error_set(RS_ECORRUPT, "'retention.keep_last' in '%s' must be a count", RS_REPO_MARKER);
		out->keep_last = (unsigned)json_integer_value(v);
	}
	v = json_object_get(ret, "keep_days");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000)
			return rs_error_set(RS_ECORRUPT, "'retention.keep_days' in '%s' must be a number of days",
					    RS_REPO_MARKER);
		out->keep_days = (unsigned)json_integer_value(v);
	}
	v = json_object_get(ret, "keep_flagged");
	if (v) {
		if (!json_is_boolean(v))
			return rs_error_set(RS_ECORRUPT, "'retention.keep_flagged' in '%s' must be true or false",
					    RS_REPO_MARKER);
		out->keep_flagged = json_is_true(v);
	}
	if (!out->keep_last && !out->keep_days)
		return rs_error_set(RS_EUSAGE, "'retention' in '%s' keeps nothing: set keep_last or keep_days",
				    RS_REPO_MARKER);
	return 0;
}

int rs_retention_load(struct rs_repo *r, const char *rev, struct rs_retention *out)
{
	struct rs_buf text = RS_BUF_INIT;
	json_t *root = NULL, *ret;
	json_error_t jerr;
	int err;

	memset(out, 0, sizeof(*out));
	err = rs_repo_read_tree_file(r, rev, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &text);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		err = rs_error_set(RS_ECORRUPT, "'%s' is not a JSON object: %s", RS_REPO_MARKER, jerr.text);
		goto out;
	}
	ret = json_object_get(root, "retention");
	if (!ret)
		goto out;
	if (!json_is_object(ret)) {
		err = rs_error_set(RS_ECORRUPT, "'retention' in '%s' must be an object", RS_REPO_MARKER);
		goto out;
	}
	err = parse_policy(out, ret);
out:
	json_decref(root);
	rs_buf_release(&text);
	return err;
}

void rs_retention_plan_release(struct rs_retention_plan *plan)
{
	size_t i;

	for (i = 0; i < plan->n; i++) {
		free(plan->items[i].run_id);
		free(plan->items[i].branch);
		free(plan->items[i].recorded_at);
	}
	free(plan->items);
	memset(plan, 0, sizeof(*plan));
}

void rs_retention_plan_keep_run(struct rs_retention_plan *plan, const char *run_id)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (!strcmp(plan->items[i].run_id, run_id))
			plan->items[i].keep = 1;
}

int rs_retention_plan_keeps(const struct rs_retention_plan *plan, const struct rs_id *oid)
{
	size_t i;

	for (i = 0; i < plan->n; i++)
		if (plan->items[i].keep && !rs_id_cmp(&plan->items[i].oid, oid))
			return 1;
	return 0;
}

/* Whether `pins` (the text of pins.txt) names `id` on a line of its own. */
static int pinned(const struct rs_buf *pins, const char *id)
{
	const char *p = pins->ptr, *end = pins->ptr + pins->len;
	size_t n = strlen(id);

	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		while (len && (p[len - 1] == '\r' || p[len - 1] == ' '))
			len--;
		if (len == n && !memcmp(p, id, n))
			return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static time_t parse_utc(const char *iso)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!iso || !strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return timegm(&tm);
}

static int add_item(struct rs_retention_plan *plan, const struct rs_run_entry *run,
		    const struct rs_id *oid, uint64_t size, int keep, int pin)
{
	struct rs_plan_item *it;
	size_t i;

	for (i = 0; i < plan->n; i++) {
		it = &plan->items[i];
		if (!rs_id_cmp(&it->oid, oid) && !strcmp(it->run_id, run->id)) {
			it->keep |= keep;
			it->pinned |= pin;
			return 0;
		}
	}
	if (rs_array_grow(&plan->items, &plan->alloc, plan->n + 1, sizeof(*it), 64))
		return rs_error_set(RS_EGENERIC, "out of memory");
	it = &plan->items[plan->n];
	memset(it, 0, sizeof(*it));
	it->run_id = strdup(run->id);
	it->branch = strdup(run->branch ? run->branch : "");
	it->recorded_at = strdup(run->recorded_at ? run->recorded_at : "");
	if (!it->run_id || !it->branch || !it->recorded_at) {
		free(it->run_id);
		free(it->branch);
		free(it->recorded_at);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	it->oid = *oid;
	it->size = size;
	it->keep = keep;
	it->pinned = pin;
	plan->n++;
	return 0;
}

/* The LFS objects of one run (from its run.json at `rev`). */
static int run_objects(struct rs_repo *r, const char *rev, const struct rs_run_entry *run,
		       struct rs_retention_plan *plan, int keep, int pin)
{
	struct rs_buf rel = RS_BUF_INIT, text = RS_BUF_INIT;
	json_t *root = NULL, *item;
	json_error_t jerr;
	size_t i;
	int err = rs_buf_printf(&rel, "%s/run.json", run->path);

	if (!err)
		err = rs_repo_read_tree_file(r, rev, rel.ptr, RUN_JSON_MAX, &text);
	if (err)
		goto out;
	root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		err = rs_error_set(RS_ECORRUPT, "run %s: '%s' is not valid JSON: %s", run->id, rel.ptr, jerr.text);
		goto out;
	}
	json_array_foreach(json_object_get(root, "files"), i, item) {
		const char *hex = json_string_value(json_object_get(item, "oid"));
		json_t *size = json_object_get(item, "size");
		struct rs_id oid;

		if (!json_is_true(json_object_get(item, "lfs")))
			continue;
		if (!hex || strlen(hex) != RS_ID_HEXSZ || rs_id_from_hex(&oid, hex, RS_ID_HEXSZ) ||
		    !json_is_integer(size) || json_integer_value(size) < 0) {
			err = rs_error_set(RS_ECORRUPT, "run %s: '%s' names an LFS file without a valid oid and size",
					   run->id, rel.ptr);
			goto out;
		}
		err = add_item(plan, run, &oid, (uint64_t)json_integer_value(size), keep, pin);
		if (err)
			goto out;
	}
out:
	json_decref(root);
	rs_buf_release(&rel);
	rs_buf_release(&text);
	return err;
}

/* Apply the policy committed at `rev` to the runs indexed at `rev`. */
static int plan_rev(struct rs_repo *r, const char *rev, time_t now, struct rs_retention_plan *plan)
{
	struct rs_retention pol;
	struct rs_runindex idx;
	struct rs_buf pins = RS_BUF_INIT;
	size_t i, j;
	int err;

	rs_runindex_init(&idx);
	err = rs_retention_load(r, rev, &pol);
	if (!err) {
		err = rs_repo_read_tree_file(r, rev, RS_PINS_FILE, PINS_MAX, &pins);
		if (err == RS_ENOTFOUND) {
			rs_error_clear();
			err = 0;
		}
	}
	if (!err)
		err = rs_runindex_load(&idx, r, rev, 0);
	/* Newest first, counting each branch's runs. */
	for (i = idx.count; !err && i-- > 0;) {
		const struct rs_run_entry *run = &idx.runs[i];
		const char *branch = run->branch ? run->branch : "";
		unsigned newer = 0;
		int keep, pin = pinned(&pins, run->id);

		for (j = i + 1; j < idx.count; j++)
			if (!strcmp(idx.runs[j].branch ? idx.runs[j].branch : "", branch))
				newer++;
		keep = !pol.configured || pin ||
		       (pol.keep_last && newer < pol.keep_last) ||
		       (pol.keep_days && now - parse_utc(run->recorded_at) < (time_t)pol.keep_days * 86400);
		err = run_objects(r, rev, run, plan, keep, pin);
	}
	rs_runindex_release(&idx);
	rs_buf_release(&pins);
	return err;
}

/* Whether the runs of ref `name` are kept: a branch, a tag or a remote-tracking branch. */
static int is_kept_ref(const char *name)
{
	return !strncmp(name, "refs/heads/", 11) || !strncmp(name, "refs/tags/", 10) ||
	       !strncmp(name, "refs/remotes/", 13);
}

/*
 * Plan the commit `ref` points to, unless it is one of the `*ntrees`
 * commits of `*trees` planned already (it is then added to them).
 */
static int plan_ref(struct rs_repo *r, git_reference *ref, time_t now, git_oid **trees,
		    size_t *ntrees, struct rs_retention_plan *plan)
{
	const char *name = git_reference_name(ref);
	git_object *commit = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid *t;
	size_t i;
	int err = 0;

	if (!is_kept_ref(name) || git_reference_peel(&commit, ref, GIT_OBJECT_COMMIT) < 0) {
		git_error_clear();
		return 0;
	}
	for (i = 0; i < *ntrees; i++)
		if (git_oid_equal(&(*trees)[i], git_object_id(commit)))
			goto out;
	t = realloc(*trees, (*ntrees + 1) * sizeof(*t));
	if (!t) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	*trees = t;
	git_oid_cpy(&t[(*ntrees)++], git_object_id(commit));
	git_oid_tostr(hex, sizeof(hex), git_object_id(commit));
	err = plan_rev(r, hex, now, plan);
	if (err)
		err = rs_error_wrap(err, "in %s", name);
	plan->refs++;
out:
	git_object_free(commit);
	return err;
}

/* Plan the commit of every kept ref, each commit once. */
static int plan_refs(struct rs_repo *r, time_t now, struct rs_retention_plan *plan)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	git_oid *trees = NULL;
	size_t ntrees = 0;
	int err = 0;

	if (git_reference_iterator_new(&it, r->git) < 0)
		return rs_error_set(RS_EGENERIC, "cannot list the refs: %s", git_error_last()->message);
	while (!err && git_reference_next(&ref, it) == 0) {
		err = plan_ref(r, ref, now, &trees, &ntrees, plan);
		git_reference_free(ref);
	}
	git_reference_iterator_free(it);
	free(trees);
	return err;
}

/* The distinct runs of the plan's items. */
static size_t distinct_runs(const struct rs_retention_plan *plan)
{
	size_t i, j, n = 0;
	int dup;

	for (i = 0; i < plan->n; i++) {
		dup = 0;
		for (j = 0; j < i && !dup; j++)
			dup = !strcmp(plan->items[j].run_id, plan->items[i].run_id);
		n += !dup;
	}
	return n;
}

int rs_retention_plan_make(struct rs_repo *r, time_t now, int only_head,
			   struct rs_retention_plan *plan)
{
	int err;

	rs_retention_plan_release(plan);
	if (only_head) {
		err = plan_rev(r, NULL, now, plan);
		plan->refs = 1;
	} else {
		err = plan_refs(r, now, plan);
	}
	if (!err)
		plan->runs = distinct_runs(plan);
	return err;
}
