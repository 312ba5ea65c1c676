/*
 * Retention plan: every (run, LFS object) of every ref, with the verdict
 * of that ref's committed policy. Everything read here is committed data
 * (untrusted): files are read with caps, and ids are parsed, never used
 * as paths.
 */
#define _GNU_SOURCE
#include "runs/retention.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runs/runindex.h"
#include "runs/runs.h"
#include "util/array.h"
#include "results/error.h"

#define RS_PLAN_DOUBTS_SAID 20 /* doubts whose lines are kept; the rest are counted */

/* A count of runs for 'retention.keep_last' (`what` names it in the message). */
static int parse_count(unsigned *out, json_t *v, const char *what)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 1000000)
		return rs_error_set(RS_ECORRUPT, "'%s' in '%s' must be a count of runs", what, RS_REPO_MARKER);
	*out = (unsigned)json_integer_value(v);
	return 0;
}

/*
 * keep_last as an object: a count per trigger ({"nightly": 30, "pr": 5}),
 * "*" for the triggers it does not name. Without "*", runs of other
 * triggers are not counted: keep_last keeps them all.
 */
static int parse_keep_last_triggers(struct rs_retention *out, json_t *v)
{
	const char *key;
	json_t *n;
	int err;

	out->per_trigger = 1;
	if (!json_object_size(v))
		return rs_error_set(RS_ECORRUPT, "'retention.keep_last' in '%s' names no trigger", RS_REPO_MARKER);
	json_object_foreach(v, key, n) {
		if (!strcmp(key, "*")) {
			err = parse_count(&out->keep_last, n, "retention.keep_last.*");
			if (err)
				return err;
			out->keep_last_rest = 1;
			continue;
		}
		if (!*key || strlen(key) > RS_RUN_MAX_TRIGGER)
			return rs_error_set(RS_ECORRUPT, "'retention.keep_last' in '%s' names a trigger of "
					    "more than %d characters", RS_REPO_MARKER, RS_RUN_MAX_TRIGGER);
		if (out->ntriggers == RS_RETENTION_TRIGGERS)
			return rs_error_set(RS_ECORRUPT, "'retention.keep_last' in '%s' names more than %d "
					    "triggers: use \"*\" for the rest", RS_REPO_MARKER, RS_RETENTION_TRIGGERS);
		err = parse_count(&out->triggers[out->ntriggers].keep, n, "retention.keep_last.<trigger>");
		if (err)
			return err;
		strcpy(out->triggers[out->ntriggers++].name, key);
	}
	return 0;
}

/* The "retention" object `ret` of the marker file into `out`. */
static int parse_policy(struct rs_retention *out, json_t *ret)
{
	json_t *v;
	int err;

	out->configured = 1;
	v = json_object_get(ret, "keep_last");
	if (json_is_object(v))
		err = parse_keep_last_triggers(out, v);
	else
		err = v ? parse_count(&out->keep_last, v, "retention.keep_last") : 0;
	if (err)
		return err;
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
	if (!out->keep_last && !out->per_trigger && !out->keep_days)
		return rs_error_set(RS_EUSAGE, "'retention' in '%s' keeps nothing: set keep_last or keep_days",
				    RS_REPO_MARKER);
	return 0;
}

int rs_retention_load(struct rs_repo *r, const char *rev, struct rs_retention *out)
{
	json_t *root = NULL, *ret;
	int err;

	memset(out, 0, sizeof(*out));
	err = rs_repo_read_marker(r, rev, &root);
	if (err || !root)
		goto out;
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
	rs_buf_release(&plan->doubts);
	rs_buf_release(&plan->notes);
	memset(plan, 0, sizeof(*plan));
}

int rs_retention_plan_doubt(struct rs_retention_plan *plan, int code, const char *fmt, ...)
{
	va_list ap;
	int err;

	/* A history of broken records would say the same thing thousands of times. */
	if (plan->ndoubts >= RS_PLAN_DOUBTS_SAID) {
		plan->ndoubts++;
		return 0;
	}
	va_start(ap, fmt);
	err = rs_buf_vprintf(&plan->doubts, fmt, ap);
	va_end(ap);
	if (!err)
		err = rs_buf_putc(&plan->doubts, '\n');
	if (err)
		return err;
	if (!plan->ndoubts++)
		plan->doubt_code = code ? code : RS_EGENERIC;
	return 0;
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

/*
 * The unix time of an ISO 8601 UTC time as `add` writes it
 * ("2026-11-30T09:30:12Z"), the whole string; -1 when it is not one: an
 * unknown age, which keep_days keeps.
 */
static time_t parse_utc(const char *iso)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	if (!end || *end || tm.tm_year < 70)
		return -1;
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

/*
 * The LFS objects of one run (from its run.json at `rev`). A record that
 * does not decode stops the plan: a run.json whose files cannot be read
 * would otherwise protect none of its sessions.
 */
static int run_objects(struct rs_repo *r, const char *rev, const struct rs_run_entry *run,
		       struct rs_retention_plan *plan, int keep, int pin)
{
	rs_runrec *rec = NULL;
	int err = rs_run_record_read(&rec, NULL, r, rev, run);

	for (size_t i = 0; !err && i < rec->nfiles; i++) {
		const struct rs_runrec_file *f = &rec->files[i];
		struct rs_id oid;

		if (!f->lfs)
			continue;
		if (strlen(f->oid) != RS_ID_HEXSZ || rs_id_from_hex(&oid, f->oid, RS_ID_HEXSZ)) {
			err = rs_error_set(RS_ECORRUPT, "run %s: '%s/run.json' names an LFS file "
					   "without a valid oid", run->id, run->path);
			break;
		}
		err = add_item(plan, run, &oid, (uint64_t)f->size, keep, pin);
	}
	rs_runrec_free(rec);
	return err;
}

/*
 * Whether keep_last keeps run `i` of `idx`: one of the newest N of its
 * branch, or per trigger of its branch and trigger (a trigger the object
 * does not name, without "*": keep_last does not count it, so keeps it).
 */
static int keep_last_keeps(const struct rs_retention *pol, const struct rs_runindex *idx, size_t i)
{
	const struct rs_run_entry *run = &idx->runs[i];
	const char *branch = run->branch ? run->branch : "";
	const char *trigger = run->trigger ? run->trigger : "";
	unsigned limit = pol->keep_last, newer = 0;
	int named = 0;

	if (pol->per_trigger) {
		for (size_t k = 0; k < pol->ntriggers && !named; k++) {
			if (!strcmp(pol->triggers[k].name, trigger)) {
				limit = pol->triggers[k].keep;
				named = 1;
			}
		}
		if (!named && !pol->keep_last_rest)
			return 1;
	}
	if (!limit)
		return 0;
	for (size_t j = i + 1; j < idx->count && newer < limit; j++) {
		const struct rs_run_entry *b = &idx->runs[j];

		if (strcmp(b->branch ? b->branch : "", branch))
			continue;
		if (pol->per_trigger && strcmp(b->trigger ? b->trigger : "", trigger))
			continue;
		newer++;
	}
	return newer < limit;
}

/* Whether keep_days keeps `run`; an age that cannot be told keeps it, and says so once. */
static int keep_days_keeps(const struct rs_retention *pol, const struct rs_run_entry *run, time_t now,
			   struct rs_retention_plan *plan, int *err)
{
	time_t at;

	if (!pol->keep_days)
		return 0;
	at = parse_utc(run->recorded_at);
	if (at >= 0)
		return now - at < (time_t)pol->keep_days * 86400;
	if (!strstr(rs_buf_cstr(&plan->notes), run->id))
		*err = rs_buf_printf(&plan->notes, "run %s: its recorded_at '%s' is not a UTC time "
				     "(YYYY-MM-DDTHH:MM:SSZ): an unknown age, its raw session is kept\n",
				     run->id, run->recorded_at ? run->recorded_at : "");
	return 1;
}

/* A doubt about `label` from the current error, which it clears. */
static int doubt_here(struct rs_retention_plan *plan, int code, const char *label, const char *what)
{
	int err = rs_retention_plan_doubt(plan, code, "%s: %s: %s", label, rs_error_message(), what);

	rs_error_clear();
	return err;
}

/*
 * Apply the policy committed at `rev` (a commit; NULL: HEAD) to the runs
 * indexed there. `label` names the ref in messages. What cannot be read
 * is a doubt, and keeps: a policy or pins.txt that does not parse keeps
 * every run of the ref, a run.json that does not its run's sessions (it
 * names none that could be dropped), an index that does not its runs (gc
 * then removes nothing anyway).
 */
static int plan_rev(struct rs_repo *r, const char *rev, const char *label, time_t now,
		    struct rs_retention_plan *plan)
{
	static const char fix[] = "gc deletes nothing until it is fixed there (commit a fix on that "
				  "branch, or delete the branch); verify still verifies the other runs";
	struct rs_retention pol;
	struct rs_runindex idx;
	struct rs_buf pins = RS_BUF_INIT;
	int err, unsure = 0;

	rs_runindex_init(&idx);
	err = rs_retention_load(r, rev, &pol);
	if (err) {
		memset(&pol, 0, sizeof(pol));
		unsure = 1;
		err = doubt_here(plan, err, label, fix);
		if (err)
			goto out;
	}
	err = rs_repo_read_tree_file(r, rev, RS_PINS_FILE, RS_PINS_MAX, &pins);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
	} else if (err) {
		pol.configured = 0; /* pins unknown: every run may be pinned */
		unsure = 1;
		err = doubt_here(plan, err, label, fix);
		if (err)
			goto out;
	}
	err = rs_runindex_load(&idx, r, rev, 0);
	if (err) {
		plan->unread++;
		err = doubt_here(plan, err, label, fix);
		goto out;
	}
	if (!pol.configured && !unsure && idx.count) {
		err = rs_buf_printf(&plan->notes, "%s has no retention policy in %s: its %zu runs keep "
				    "their raw sessions\n", label, RS_REPO_MARKER, idx.count);
		if (err)
			goto out;
	}
	/* Newest first, counting each branch's runs. */
	for (size_t i = idx.count; !err && i-- > 0;) {
		const struct rs_run_entry *run = &idx.runs[i];
		int pin = rs_pins_text_names(&pins, run->id);
		int keep = !pol.configured || pin || keep_last_keeps(&pol, &idx, i) ||
			   keep_days_keeps(&pol, run, now, plan, &err);

		if (err)
			break;
		err = run_objects(r, rev, run, plan, keep, pin);
		if (err) {
			plan->unread++;
			err = doubt_here(plan, err, label, fix);
		}
	}
out:
	rs_runindex_release(&idx);
	rs_buf_release(&pins);
	return err;
}

/* Whether the runs of local ref `name` count: a branch, a tag or a remote-tracking branch. */
static int is_kept_ref(const char *name)
{
	return !strncmp(name, "refs/heads/", 11) || !strncmp(name, "refs/tags/", 10) ||
	       !strncmp(name, "refs/remotes/", 13);
}

/* How ref `name` (of the git remote `remote`; NULL: of this clone) is named in messages. */
static int ref_label(struct rs_buf *out, const char *name, const char *remote)
{
	const char *kind = "ref", *shown = name;

	rs_buf_clear(out);
	if (!strncmp(name, "refs/heads/", 11)) {
		kind = "branch";
		shown = name + 11;
	} else if (!strncmp(name, "refs/tags/", 10)) {
		kind = "tag";
		shown = name + 10;
	} else if (!strncmp(name, "refs/remotes/", 13)) {
		kind = "remote-tracking branch";
		shown = name + 13;
	}
	if (remote)
		return rs_buf_printf(out, "%s '%s' of the git remote '%s'", kind, shown, remote);
	return rs_buf_printf(out, "%s '%s'", kind, shown);
}

/* The commits planned so far, each once. */
struct planned {
	git_oid *commits;
	size_t n, alloc;
};

/*
 * Plan the commit `target` of ref `name` (`remote`: NULL for one of this
 * clone's), unless it was planned already. `*added` says whether it was
 * new. A ref that is no commit (a tag of a tree) has no runs.
 */
static int plan_commit(struct rs_repo *r, const git_oid *target, const char *name, const char *remote,
		       time_t now, struct planned *seen, struct rs_retention_plan *plan, int *added)
{
	struct rs_buf label = RS_BUF_INIT;
	git_object *obj = NULL, *commit = NULL;
	char hex[GIT_OID_HEXSZ + 1];
	int err = 0;

	*added = 0;
	if (git_object_lookup(&obj, r->git, target, GIT_OBJECT_ANY) < 0 ||
	    git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) < 0) {
		git_error_clear();
		goto out;
	}
	for (size_t i = 0; i < seen->n; i++)
		if (git_oid_equal(&seen->commits[i], git_object_id(commit)))
			goto out;
	if (rs_array_grow((void **)&seen->commits, &seen->alloc, seen->n + 1, sizeof(git_oid), 16)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	git_oid_cpy(&seen->commits[seen->n++], git_object_id(commit));
	*added = 1;
	git_oid_tostr(hex, sizeof(hex), git_object_id(commit));
	err = ref_label(&label, name, remote);
	if (!err)
		err = plan_rev(r, hex, label.ptr, now, plan);
out:
	git_object_free(commit);
	git_object_free(obj);
	rs_buf_release(&label);
	return err;
}

/* Plan the tips of the git remote's refs, then this clone's refs, each commit once. */
static int plan_refs(struct rs_repo *r, time_t now, const struct rs_git_refs *remote,
		     struct rs_retention_plan *plan)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	struct planned seen = { NULL, 0, 0 };
	int err = 0, added;

	for (size_t i = 0; remote && i < remote->n && !err; i++) {
		err = plan_commit(r, &remote->refs[i].oid, remote->refs[i].name, remote->remote, now, &seen,
				  plan, &added);
		plan->refs++;
	}
	if (err)
		goto out;
	if (git_reference_iterator_new(&it, r->git) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot list the refs: %s", git_error_last()->message);
		goto out;
	}
	while (!err && git_reference_next(&ref, it) == 0) {
		git_object *target = NULL;

		if (is_kept_ref(git_reference_name(ref)) &&
		    git_reference_peel(&target, ref, GIT_OBJECT_ANY) == 0) {
			err = plan_commit(r, git_object_id(target), git_reference_name(ref), NULL, now, &seen,
					  plan, &added);
			plan->local_refs += added;
		}
		git_error_clear();
		git_object_free(target);
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	free(seen.commits);
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
			   const struct rs_git_refs *remote, struct rs_retention_plan *plan)
{
	int err;

	if (only_head) {
		err = plan_rev(r, NULL, "HEAD", now, plan);
		plan->local_refs = 1;
	} else {
		err = plan_refs(r, now, remote, plan);
	}
	if (!err)
		plan->runs = distinct_runs(plan);
	return err;
}
