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

#include "git/gitremote.h"
#include "git/pointer.h"
#include "runs/runindex.h"
#include "runs/run.h"
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
	for (i = 0; i < plan->noid_keys; i++)
		free(plan->oid_keys[i]);
	free(plan->oid_keys);
	rs_intern_release(&plan->by_run);
	rs_intern_release(&plan->by_oid);
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

static uint64_t run_hash(const struct rs_retention_plan *plan, const char *run_id)
{
	return rs_intern_hash(run_id, strlen(run_id), plan->seed ^ 0x72756e73u);
}

static uint64_t oid_hash(const struct rs_retention_plan *plan, const struct rs_id *oid)
{
	return rs_intern_hash(oid->id, RS_ID_RAWSZ, plan->seed ^ 0x6f696473u);
}

/* The first item of run `run_id`, or RS_PLAN_END. */
static size_t first_of_run(const struct rs_retention_plan *plan, const char *run_id)
{
	uint32_t v = rs_intern_find(&plan->by_run, run_id, strlen(run_id), run_hash(plan, run_id));

	return v == RS_INTERN_NONE ? RS_PLAN_END : v;
}

size_t rs_retention_plan_first(const struct rs_retention_plan *plan, const struct rs_id *oid)
{
	uint32_t v = rs_intern_find(&plan->by_oid, oid->id, RS_ID_RAWSZ, oid_hash(plan, oid));

	return v == RS_INTERN_NONE ? RS_PLAN_END : v;
}

/* Item `i` is kept: so is its oid, whichever run names it. */
static void keep_item(struct rs_retention_plan *plan, size_t i)
{
	plan->items[i].keep = 1;
	plan->items[plan->items[i].first_of_oid].oid_kept = 1;
}

void rs_retention_plan_keep_run(struct rs_retention_plan *plan, const char *run_id)
{
	for (size_t i = first_of_run(plan, run_id); i != RS_PLAN_END; i = plan->items[i].next_of_run)
		keep_item(plan, i);
}

int rs_retention_plan_keeps(const struct rs_retention_plan *plan, const struct rs_id *oid)
{
	size_t i = rs_retention_plan_first(plan, oid);

	return i != RS_PLAN_END && plan->items[i].oid_kept;
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

/* A new oid's first item `i`: a key of its own (items move as the array grows). */
static int index_oid(struct rs_retention_plan *plan, const struct rs_id *oid, size_t i)
{
	struct rs_id *key;

	if (rs_array_grow(&plan->oid_keys, &plan->oid_keys_alloc, plan->noid_keys + 1,
			  sizeof(*plan->oid_keys), 64))
		return rs_error_set(RS_EGENERIC, "out of memory");
	key = malloc(sizeof(*key));
	if (!key)
		return rs_error_set(RS_EGENERIC, "out of memory");
	*key = *oid;
	plan->oid_keys[plan->noid_keys++] = key;
	return rs_intern_insert(&plan->by_oid, key->id, RS_ID_RAWSZ, oid_hash(plan, key), (uint32_t)i);
}

/*
 * One (run, object) into the plan, or its flags onto the item already
 * there: a run's items are found through its chain, an oid's first item
 * through the table, so that adding costs O(objects of the run).
 */
static int add_item(struct rs_retention_plan *plan, const struct rs_run_entry *run,
		    const struct rs_id *oid, uint64_t size, int keep, int pin)
{
	struct rs_plan_item *it;
	size_t i, last = RS_PLAN_END, first;
	int err;

	if (!plan->seed)
		plan->seed = rs_intern_mix64((uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)plan) | 1;
	for (i = first_of_run(plan, run->id); i != RS_PLAN_END; i = plan->items[i].next_of_run) {
		it = &plan->items[i];
		if (!rs_id_cmp(&it->oid, oid)) {
			it->pinned |= pin;
			if (keep)
				keep_item(plan, i);
			return 0;
		}
		last = i;
	}
	if (plan->n >= RS_INTERN_NONE - 1)
		return rs_error_set(RS_ETOOBIG, "more than %u LFS objects in the runs of every ref",
				    RS_INTERN_NONE - 1);
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
	it->pinned = pin;
	it->next_of_run = RS_PLAN_END;
	i = plan->n;
	first = rs_retention_plan_first(plan, oid);
	err = 0;
	if (first == RS_PLAN_END) {
		first = i;
		err = index_oid(plan, oid, i);
	}
	if (!err && last == RS_PLAN_END)
		err = rs_intern_insert(&plan->by_run, it->run_id, strlen(it->run_id),
				       run_hash(plan, it->run_id), (uint32_t)i);
	if (err) {
		free(it->run_id);
		free(it->branch);
		free(it->recorded_at);
		return err;
	}
	if (last != RS_PLAN_END)
		plan->items[last].next_of_run = i;
	it->first_of_oid = first;
	plan->n++;
	if (keep)
		keep_item(plan, i);
	return 0;
}

struct rs_plan_object {
	struct rs_id oid;
	uint64_t size;
};

/*
 * One run folder's LFS objects, read once however many refs hold that
 * tree: those of its pointers, and (once the run is judged) those its
 * run.json lists.
 */
struct folder_objects {
	git_oid tree;
	size_t n, alloc;
	struct rs_plan_object *objects;  /* from the pointers */
	int recorded;                    /* run.json was read: */
	size_t nrec, arec;
	struct rs_plan_object *rec;      /* its "files" with "lfs": true */
};

static void folder_objects_free(struct folder_objects *f)
{
	if (f) {
		free(f->objects);
		free(f->rec);
	}
	free(f);
}

/*
 * What planning every ref shares: the run folders read so far, by tree
 * id. Refs at distinct commits of one history hold the same folder tree
 * for every run they share (a run folder is written once), so each is
 * read once, and planning grows with the runs, not the runs times the
 * refs.
 */
struct planner {
	struct rs_repo *r;
	time_t now;
	struct rs_retention_plan *plan;
	const struct rs_retention_judged *judged;
	struct rs_intern seen;            /* folder tree id -> index in `folders` */
	struct folder_objects **folders;
	size_t nfolders, alloc;
	uint64_t seed;
	/* A partial clone's promise (rs_git_promised_min_size): its missing
	   blobs hold at least this many bytes; 0: nothing known. */
	size_t promised_min;
	git_odb *odb;                     /* NULL: not opened (no promise to use) */
};

static void planner_release(struct planner *pl)
{
	for (size_t i = 0; i < pl->nfolders; i++)
		folder_objects_free(pl->folders[i]);
	free(pl->folders);
	rs_intern_release(&pl->seen);
	git_odb_free(pl->odb);
}

/*
 * Whether the blob `id` is left out of this partial clone by a filter that
 * leaves out only blobs of RS_POINTER_MAX bytes or more (the developer
 * clone's --filter=blob:limit=1k): such a file is no LFS pointer, and
 * reading its size would fetch it (about 100 KB a run.json) for nothing.
 */
static int promised_large(const struct planner *pl, const git_oid *id)
{
	/* no refresh: a miss would rescan the pack folder, twice a run */
	return pl->odb && pl->promised_min >= RS_POINTER_MAX &&
	       !git_odb_exists_ext(pl->odb, id, GIT_ODB_LOOKUP_NO_REFRESH);
}

/*
 * The LFS objects of the run folder `folder` of `run` into `f`: the git
 * LFS pointers among its files, which are what `results add` committed
 * for the files its run.json lists with "lfs": true, and what git lfs
 * fetches. Only each file's header is read, and a pointer's few bytes:
 * run.json itself (about 100 KB a run) is not, which is what makes gc
 * and verify cost O(runs) reads of a few hundred bytes. run.json must
 * be there and within its cap, as before.
 */
static int read_folder(struct folder_objects *f, struct planner *pl, git_tree *folder,
		       const struct rs_run_entry *run, const char *rel)
{
	struct rs_buf name = RS_BUF_INIT;
	const git_tree_entry *rj = git_tree_entry_byname(folder, "run.json");
	git_blob *blob = NULL;
	size_t len = 0;
	int err;

	if (!rj || git_tree_entry_type(rj) != GIT_OBJECT_BLOB)
		return rs_error_set(RS_ENOTFOUND, "run %s: no file '%s'", run->id, rel);
	/* a run.json this clone lacks meets its cap when it is read (read_record) */
	err = 0;
	if (!promised_large(pl, git_tree_entry_id(rj)))
		err = rs_repo_blob_size(&len, pl->r->git, git_tree_entry_id(rj), rel);
	if (!err && len > RS_RUN_MAX_RUN_JSON)
		err = rs_error_set(RS_ECORRUPT, "'%s' is too large (%zu bytes, limit %zu)", rel, len, (size_t)RS_RUN_MAX_RUN_JSON);
	for (size_t i = 0; !err && i < git_tree_entrycount(folder); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(folder, i);
		struct rs_pointer ptr;

		if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || e == rj ||
		    promised_large(pl, git_tree_entry_id(e)))
			continue;
		rs_buf_clear(&name);
		err = rs_buf_printf(&name, "%s/%s", run->path, git_tree_entry_name(e));
		if (!err)
			err = rs_repo_blob_size(&len, pl->r->git, git_tree_entry_id(e), name.ptr);
		if (err || len >= RS_POINTER_MAX)
			continue;
		err = rs_repo_blob_capped(&blob, pl->r->git, git_tree_entry_id(e), RS_POINTER_MAX, name.ptr);
		if (err || !rs_pointer_looks_like(git_blob_rawcontent(blob), len))
			goto next;
		if (rs_array_grow(&f->objects, &f->alloc, f->n + 1, sizeof(*f->objects), 2)) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto next;
		}
		err = rs_pointer_parse(&ptr, git_blob_rawcontent(blob), len);
		if (err) {
			err = rs_error_wrap(err, "run %s: '%s' is not a valid LFS pointer", run->id, name.ptr);
			goto next;
		}
		f->objects[f->n].oid = ptr.oid;
		f->objects[f->n++].size = ptr.size;
		rs_pointer_release(&ptr);
next:
		git_blob_free(blob);
		blob = NULL;
	}
	rs_buf_release(&name);
	return err;
}

/*
 * The LFS objects of `run`, whose folder is in `tree` (the tree of `rev`),
 * read on first use; borrowed from `pl`. A folder that cannot be read is
 * not remembered: each ref holding it says so.
 */
static int folder_objects(struct folder_objects **out, struct planner *pl, git_tree *tree,
			  const char *rev, const struct rs_run_entry *run, const char *rel)
{
	struct folder_objects *f = NULL;
	git_tree_entry *entry = NULL;
	git_tree *folder = NULL;
	uint64_t h;
	uint32_t at;
	int err = 0;

	/* the folders on the way read within their caps: one past it is a doubt, as ever */
	err = rs_repo_tree_entry_bypath(&entry, tree, run->path);
	if (err && err != RS_ENOTFOUND)
		goto out;
	if (err || git_tree_entry_type(entry) != GIT_OBJECT_TREE) {
		err = rs_error_set(RS_ENOTFOUND, "no file '%s' in %s", rel, rev);
		goto out;
	}
	h = rs_intern_hash(git_tree_entry_id(entry)->id, GIT_OID_RAWSZ, pl->seed);
	at = rs_intern_find(&pl->seen, git_tree_entry_id(entry)->id, GIT_OID_RAWSZ, h);
	if (at != RS_INTERN_NONE) {
		*out = pl->folders[at];
		goto out;
	}
	err = rs_repo_tree_capped(&folder, pl->r->git, git_tree_entry_id(entry), run->path);
	if (err) {
		err = rs_error_wrap(RS_ECORRUPT, "run %s: cannot read its folder", run->id);
		goto out;
	}
	f = calloc(1, sizeof(*f));
	if (!f || rs_array_grow(&pl->folders, &pl->alloc, pl->nfolders + 1, sizeof(*pl->folders), 64)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	git_oid_cpy(&f->tree, git_tree_entry_id(entry));
	err = read_folder(f, pl, folder, run, rel);
	if (!err)
		err = rs_intern_insert(&pl->seen, f->tree.id, GIT_OID_RAWSZ, h, (uint32_t)pl->nfolders);
	if (err)
		goto out;
	pl->folders[pl->nfolders++] = f;
	*out = f;
	f = NULL;
out:
	folder_objects_free(f);
	git_tree_free(folder);
	git_tree_entry_free(entry);
	return err;
}

/*
 * The LFS files the run.json of `run` (at `rev`) lists into `f->rec`,
 * decoded as the typed record (rs_run_record_read: read through its cap;
 * a record that does not decode stops the plan, since a run.json whose
 * files cannot be read would otherwise protect none of its sessions).
 */
static int read_record(struct folder_objects *f, struct planner *pl, const char *rev,
		       const struct rs_run_entry *run)
{
	rs_runrec *rec = NULL;
	int err = rs_run_record_read(&rec, NULL, pl->r, rev, run);

	f->nrec = 0;
	for (size_t i = 0; !err && i < rec->nfiles; i++) {
		const struct rs_runrec_file *file = &rec->files[i];
		struct rs_id oid;

		if (!file->lfs)
			continue;
		if (strlen(file->oid) != RS_ID_HEXSZ || rs_id_from_hex(&oid, file->oid, RS_ID_HEXSZ)) {
			err = rs_error_set(RS_ECORRUPT, "run %s: '%s/run.json' names an LFS file "
					   "without a valid oid", run->id, run->path);
			break;
		}
		if (rs_array_grow(&f->rec, &f->arec, f->nrec + 1, sizeof(*f->rec), 2)) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			break;
		}
		f->rec[f->nrec].oid = oid;
		f->rec[f->nrec++].size = (uint64_t)file->size;
	}
	if (!err)
		f->recorded = 1;
	rs_runrec_free(rec);
	return err;
}

/* Whether the store holds (or has set aside) one of the sessions of folder `f`. */
static int must_judge(const struct planner *pl, const struct folder_objects *f)
{
	if (!pl->judged)
		return 0;
	if (!pl->judged->fn)
		return 1;
	for (size_t i = 0; i < f->n; i++)
		if (pl->judged->fn(&f->objects[i].oid, pl->judged->payload))
			return 1;
	return 0;
}

/*
 * The LFS objects of one run (its folder in `tree`, the tree of `rev`).
 * A run that must be judged (its session is on the store: gc could
 * delete it, verify checks it) is judged as its run.json says, read
 * whole and parsed: one that does not parse is a doubt, as ever. The
 * others (their sessions long removed, at 100,000 runs nearly all) are
 * named by their pointers, and their run.json is not read.
 */
static int run_objects(struct planner *pl, git_tree *tree, const char *rev, const struct rs_run_entry *run,
		       int keep, int pin)
{
	struct folder_objects *f = NULL;
	const struct rs_plan_object *objs;
	struct rs_buf rel = RS_BUF_INIT;
	size_t n;
	int err = rs_buf_printf(&rel, "%s/run.json", run->path);

	if (!err)
		err = folder_objects(&f, pl, tree, rev, run, rel.ptr);
	if (!err && !f->recorded && must_judge(pl, f))
		err = read_record(f, pl, rev, run);
	if (err)
		goto out;
	objs = f->recorded ? f->rec : f->objects;
	n = f->recorded ? f->nrec : f->n;
	for (size_t i = 0; !err && i < n; i++)
		err = add_item(pl->plan, run, &objs[i].oid, objs[i].size, keep, pin);
out:
	rs_buf_release(&rel);
	return err;
}

/* keep_last counts runs by branch, or by branch and trigger. */
static const char *run_trigger_key(const struct rs_run_entry *e, int per_trigger)
{
	return per_trigger && e->trigger ? e->trigger : "";
}

static int cmp_keep_last(const void *a, const void *b, void *arg)
{
	const size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct rs_runindex *idx = ((const void **)arg)[0];
	const int per_trigger = *(const int *)((const void **)arg)[1];
	const struct rs_run_entry *x = &idx->runs[i], *y = &idx->runs[j];
	int c = strcmp(x->branch ? x->branch : "", y->branch ? y->branch : "");

	if (!c)
		c = strcmp(run_trigger_key(x, per_trigger), run_trigger_key(y, per_trigger));
	if (!c)
		c = i < j ? -1 : i > j;
	return c;
}

/*
 * For every run `i` of `idx`, in `newer[i]`, how many later runs of the
 * index are of its branch (and, per trigger, of its trigger): keep_last's
 * question, answered by one sort instead of a scan per run.
 */
static int count_newer(size_t **out, const struct rs_retention *pol, const struct rs_runindex *idx)
{
	size_t *order = calloc(idx->count ? idx->count : 1, sizeof(*order));
	size_t *newer = calloc(idx->count ? idx->count : 1, sizeof(*newer));
	const void *arg[2] = { idx, &pol->per_trigger };

	if (!order || !newer) {
		free(order);
		free(newer);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (size_t i = 0; i < idx->count; i++)
		order[i] = i;
	qsort_r(order, idx->count, sizeof(*order), cmp_keep_last, (void *)arg);
	for (size_t a = 0, b; a < idx->count; a = b) {
		const struct rs_run_entry *first = &idx->runs[order[a]];

		for (b = a + 1; b < idx->count; b++) {
			const struct rs_run_entry *e = &idx->runs[order[b]];

			if (strcmp(e->branch ? e->branch : "", first->branch ? first->branch : "") ||
			    strcmp(run_trigger_key(e, pol->per_trigger), run_trigger_key(first, pol->per_trigger)))
				break;
		}
		for (size_t p = a; p < b; p++)
			newer[order[p]] = b - 1 - p;
	}
	free(order);
	*out = newer;
	return 0;
}

/*
 * Whether keep_last keeps a run of trigger `trigger` that `newer` later
 * runs of its branch (per trigger: and trigger) follow: one of the newest
 * N of its branch, or per trigger of its branch and trigger (a trigger
 * the object does not name, without "*": keep_last does not count it, so
 * keeps it).
 */
static int keep_last_keeps(const struct rs_retention *pol, const struct rs_run_entry *run, size_t newer)
{
	const char *trigger = run->trigger ? run->trigger : "";
	unsigned limit = pol->keep_last;
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
	/* Said once per run: a run planned already (another ref) was said then. */
	if (first_of_run(plan, run->id) == RS_PLAN_END && !strstr(rs_buf_cstr(&plan->notes), run->id))
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
static const char fix[] = "gc deletes nothing until it is fixed there (commit a fix on that "
			  "branch, or delete the branch); verify still verifies the other runs";

static int plan_rev(struct planner *pl, const char *rev, const char *label)
{
	struct rs_retention_plan *plan = pl->plan;
	struct rs_retention pol;
	struct rs_runindex idx;
	struct rs_buf pins = RS_BUF_INIT;
	git_tree *tree = NULL;
	size_t *newer = NULL;
	int err, unsure = 0;

	rs_runindex_init(&idx);
	err = rs_retention_load(pl->r, rev, &pol);
	if (err) {
		memset(&pol, 0, sizeof(pol));
		unsure = 1;
		err = doubt_here(plan, err, label, fix);
		if (err)
			goto out;
	}
	err = rs_repo_read_tree_file(pl->r, rev, RS_PINS_FILE, RS_PINS_MAX, &pins);
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
	err = rs_runindex_load(&idx, pl->r, rev, 0);
	if (err) {
		plan->unread++;
		err = doubt_here(plan, err, label, fix);
		goto out;
	}
	if (!idx.count)
		goto out;
	if (!pol.configured && !unsure) {
		err = rs_buf_printf(&plan->notes, "%s has no retention policy in %s: its %zu runs keep "
				    "their raw sessions\n", label, RS_REPO_MARKER, idx.count);
		if (err)
			goto out;
	}
	/* each object of the way read within its cap (git/repo.h) */
	err = rs_repo_rev_tree(&tree, pl->r->git, rev);
	if (!err)
		err = count_newer(&newer, &pol, &idx);
	/* Newest first, counting each branch's runs. */
	for (size_t i = idx.count; !err && i-- > 0;) {
		const struct rs_run_entry *run = &idx.runs[i];
		int pin = rs_pins_text_names(&pins, run->id);
		int keep = !pol.configured || pin || keep_last_keeps(&pol, run, newer[i]) ||
			   keep_days_keeps(&pol, run, pl->now, plan, &err);

		if (err)
			break;
		err = run_objects(pl, tree, rev ? rev : "HEAD", run, keep, pin);
		if (err) {
			plan->unread++;
			err = doubt_here(plan, err, label, fix);
		}
	}
out:
	free(newer);
	git_tree_free(tree);
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
static int plan_commit(struct planner *pl, const git_oid *target, const char *name, const char *remote,
		       struct planned *seen, int *added)
{
	struct rs_buf label = RS_BUF_INIT;
	struct rs_error_saved why;
	git_oid commit;
	char hex[GIT_OID_HEXSZ + 1];
	int err = 0;

	*added = 0;
	/*
	 * Peeled through the cap: a ref may name a blob of any size, or a tag
	 * (of a tag) of one, which git_object_peel would read whole. A commit
	 * or tag past its cap is not read: its runs are unknown, a doubt.
	 */
	err = rs_repo_peel_commit(&commit, pl->r->git, target);
	if (err == RS_ENOTFOUND) {
		rs_error_clear(); /* no commit: no runs */
		err = 0;
		goto out;
	}
	if (err) {
		rs_error_save(&why, err);
		err = ref_label(&label, name, remote);
		if (err)
			goto out;
		pl->plan->unread++;
		rs_error_restore(&why);
		err = doubt_here(pl->plan, why.code, label.ptr, fix);
		goto out;
	}
	for (size_t i = 0; i < seen->n; i++)
		if (git_oid_equal(&seen->commits[i], &commit))
			goto out;
	if (rs_array_grow((void **)&seen->commits, &seen->alloc, seen->n + 1, sizeof(git_oid), 16)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	git_oid_cpy(&seen->commits[seen->n++], &commit);
	*added = 1;
	git_oid_tostr(hex, sizeof(hex), &commit);
	err = ref_label(&label, name, remote);
	if (!err)
		err = plan_rev(pl, hex, label.ptr);
out:
	rs_buf_release(&label);
	return err;
}

/* Plan the tips of the git remote's refs, then this clone's refs, each commit once. */
static int plan_refs(struct planner *pl, const struct rs_git_refs *remote)
{
	struct rs_retention_plan *plan = pl->plan;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	struct planned seen = { NULL, 0, 0 };
	int err = 0, added;

	for (size_t i = 0; remote && i < remote->n && !err; i++) {
		err = plan_commit(pl, &remote->refs[i].oid, remote->refs[i].name, remote->remote, &seen,
				  &added);
		plan->refs++;
	}
	if (err)
		goto out;
	if (git_reference_iterator_new(&it, pl->r->git) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot list the refs: %s", git_error_last()->message);
		goto out;
	}
	while (!err && git_reference_next(&ref, it) == 0) {
		/* plan_commit peels the target through the cap (not git_reference_peel) */
		if (is_kept_ref(git_reference_name(ref)) && git_reference_type(ref) == GIT_REFERENCE_DIRECT) {
			err = plan_commit(pl, git_reference_target(ref), git_reference_name(ref), NULL, &seen,
					  &added);
			plan->local_refs += added;
		}
		git_error_clear();
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	free(seen.commits);
	return err;
}

int rs_retention_plan_make(struct rs_repo *r, time_t now, int only_head,
			   const struct rs_git_refs *remote, const struct rs_retention_judged *judged,
			   struct rs_retention_plan *plan)
{
	struct planner pl;
	int err;

	memset(&pl, 0, sizeof(pl));
	pl.r = r;
	pl.now = now;
	pl.plan = plan;
	pl.judged = judged;
	pl.seed = rs_intern_mix64((uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&pl);
	pl.promised_min = rs_git_promised_min_size(r->git);
	if (pl.promised_min && git_repository_odb(&pl.odb, r->git) < 0) {
		/* without the odb every size is read (and fetched) as in a full clone */
		git_error_clear();
		pl.odb = NULL;
	}
	if (only_head) {
		err = plan_rev(&pl, NULL, "HEAD");
		plan->local_refs = 1;
	} else {
		err = plan_refs(&pl, remote);
	}
	planner_release(&pl);
	if (!err)
		plan->runs = plan->by_run.count; /* the distinct runs */
	return err;
}
