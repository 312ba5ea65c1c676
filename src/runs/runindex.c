/*
 * Run index: index/YYYY-MM.jsonl and index/YYYY-MM/NNNN.jsonl shards, and
 * the README table.
 *
 * Why bounded JSON-lines shards: `results add` must not rewrite a file
 * whose size grows with the history or with the runs of a month (each
 * commit would then cost O(runs) bytes in every clone, and add's time
 * would grow through a busy month), yet `list` must not open every run
 * folder either. The month's last shard, of at most
 * RS_RUNINDEX_SHARD_RUNS lines, is the only index file `add` rewrites;
 * full shards never change again, so git stores them once. A month's
 * first shard keeps the name of the older one-shard-a-month layout, so a
 * repository written by either is read the same way.
 *
 * Ordering: runs are kept sorted by recorded_at (ISO 8601 UTC strings sort
 * as times), ties broken by the order in which they were loaded (line
 * order within a shard, which is recording order). The sort is a stable
 * insertion of each new batch, so loading N shards costs O(N log N).
 */
#include "git/gitremote.h"
#include "git/repo.h"
#include "runs/runindex.h"
#include "runs/runindex_internal.h"
#include "runs/branchmap.h"

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/error.h"
#include "results/escape.h"
#include "results/json.h"
#include "results/runs.h"
#include "util/array.h"
#include "util/hex.h"
#include "util/path.h"

void rs_runindex_init(struct rs_runindex *idx)
{
	idx->runs = NULL;
	idx->count = 0;
	idx->alloc = 0;
}

void rs_run_entry_release(struct rs_run_entry *e)
{
	if (!e)
		return;
	free(e->id);
	free(e->commit);
	free(e->branch);
	free(e->trigger);
	free(e->recorded_at);
	free(e->path);
	json_decref(e->metrics);
	free(e->verdict);
	memset(e, 0, sizeof(*e));
}

void rs_runindex_release(struct rs_runindex *idx)
{
	if (!idx)
		return;
	for (size_t i = 0; i < idx->count; i++)
		rs_run_entry_release(&idx->runs[i]);
	free(idx->runs);
	rs_runindex_init(idx);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

int rs_run_entry_copy(struct rs_run_entry *out, const struct rs_run_entry *e)
{
	struct rs_run_entry c;

	memset(&c, 0, sizeof(c));
	c.id = dup_or_null(e->id);
	c.commit = dup_or_null(e->commit);
	c.branch = dup_or_null(e->branch);
	c.trigger = dup_or_null(e->trigger);
	c.recorded_at = dup_or_null(e->recorded_at);
	c.path = dup_or_null(e->path);
	c.metrics = e->metrics ? json_deep_copy(e->metrics) : json_object();
	c.verdict = dup_or_null(e->verdict);
	if ((e->verdict && !c.verdict) || (e->id && !c.id) || (e->commit && !c.commit) ||
	    (e->branch && !c.branch) || (e->trigger && !c.trigger) ||
	    (e->recorded_at && !c.recorded_at) || (e->path && !c.path) ||
	    !c.metrics) {
		rs_run_entry_release(&c);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	*out = c;
	return 0;
}

static int entry_cmp(const struct rs_run_entry *a, const struct rs_run_entry *b)
{
	return strcmp(a->recorded_at, b->recorded_at);
}

/*
 * Stable merge sort of runs[0..count) by recorded_at: ties keep their
 * current order, which is line (= recording) order within a shard.
 */
static void merge_sort(struct rs_run_entry *a, struct rs_run_entry *tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(a, tmp, mid);
	merge_sort(a + mid, tmp, n - mid);
	if (entry_cmp(&a[mid - 1], &a[mid]) <= 0)
		return;
	while (i < mid && j < n)
		tmp[k++] = entry_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

/*
 * Restore order after runs[from..count) were appended. The common cases
 * (a new run appended by `add`, shards loaded in month order) are already
 * sorted and cost one pass; anything else gets a full stable sort.
 */
static int sort_tail(struct rs_runindex *idx, size_t from)
{
	struct rs_run_entry *tmp;
	size_t i = from ? from : 1;

	for (; i < idx->count; i++)
		if (entry_cmp(&idx->runs[i - 1], &idx->runs[i]) > 0)
			break;
	if (i >= idx->count)
		return 0;
	tmp = malloc(idx->count * sizeof(*tmp));
	if (!tmp)
		return rs_error_set(RS_EGENERIC, "out of memory");
	merge_sort(idx->runs, tmp, idx->count);
	free(tmp);
	return 0;
}

static int reserve_one(struct rs_runindex *idx)
{
	if (idx->count < idx->alloc)
		return 0;
	if (idx->count >= RS_RUNINDEX_MAX_RUNS)
		return rs_error_set(RS_ECORRUPT, "too many runs in the index (more than %u)",
				    RS_RUNINDEX_MAX_RUNS);
	return rs_array_grow(&idx->runs, &idx->alloc, idx->count + 1, sizeof(*idx->runs), 64);
}

int rs_runindex_add(struct rs_runindex *idx, const struct rs_run_entry *e)
{
	int err;
	size_t from = idx->count;

	err = reserve_one(idx);
	if (err)
		return err;
	err = rs_run_entry_copy(&idx->runs[idx->count], e);
	if (err)
		return err;
	idx->count++;
	return sort_tail(idx, from);
}

/* A required string member, copied. */
static int take_string(char **out, json_t *obj, const char *key, size_t maxlen)
{
	json_t *v = json_object_get(obj, key);
	const char *s;

	if (!json_is_string(v))
		return rs_error_set(RS_ECORRUPT, "missing or non-string \"%s\"", key);
	s = json_string_value(v);
	if (strlen(s) > maxlen || strlen(s) == 0)
		return rs_error_set(RS_ECORRUPT, "bad length of \"%s\"", key);
	*out = strdup(s);
	if (!*out)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}


/* The line's numeric metrics into e->metrics (a new object; no "metrics": none). */
static int take_metrics(struct rs_run_entry *e, json_t *root)
{
	json_t *metrics = json_object_get(root, "metrics"), *val;
	const char *key;

	e->metrics = json_object();
	if (!e->metrics)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (metrics && !json_is_object(metrics))
		return rs_error_set(RS_ECORRUPT, "\"metrics\" is not an object");
	/* Keep only numbers: metrics are what comparisons work on. */
	json_object_foreach(metrics, key, val) {
		if (json_is_number(val) && json_object_set(e->metrics, key, val) < 0)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/* The string fields of an index line, in the order they are checked, with their caps. */
static const struct {
	const char *key;
	size_t max;
	size_t offset; /* of the char * in struct rs_run_entry */
} line_strings[] = {
	{ "id", 128, offsetof(struct rs_run_entry, id) },
	{ "commit", 64, offsetof(struct rs_run_entry, commit) },
	{ "branch", 1024, offsetof(struct rs_run_entry, branch) },
	{ "trigger", 1024, offsetof(struct rs_run_entry, trigger) },
	{ "recorded_at", 64, offsetof(struct rs_run_entry, recorded_at) },
	{ "path", 4096, offsetof(struct rs_run_entry, path) },
};

int rs_run_entry_parse(struct rs_run_entry *out, const char *line, size_t len)
{
	struct rs_run_entry e;
	json_error_t jerr;
	json_t *root = NULL;
	int err = 0;

	memset(&e, 0, sizeof(e));
	if (len > RS_RUNINDEX_MAX_LINE)
		return rs_error_set(RS_ECORRUPT, "index line longer than %u bytes",
				    RS_RUNINDEX_MAX_LINE);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		err = rs_error_set(RS_ECORRUPT, "not a JSON object: %s",
				   root ? "wrong type" : jerr.text);
		goto out;
	}
	for (size_t i = 0; i < sizeof(line_strings) / sizeof(line_strings[0]); i++) {
		char **slot = (char **)((char *)&e + line_strings[i].offset);

		err = take_string(slot, root, line_strings[i].key, line_strings[i].max);
		if (err)
			goto out;
	}
	if (!rs_hex_is(e.commit)) {
		err = rs_error_set(RS_ECORRUPT, "commit '%s' is not hex", e.commit);
		goto out;
	}
	/*
	 * The id and the path come from a clone and become file names
	 * (fetch -o DIR/<id>/, site runs/<id>.html, the run folder in the
	 * work tree): refuse here, once, what could leave its folder or reach
	 * into .git. Neither `add` nor older versions write a leading dot.
	 */
	err = rs_path_check(e.id, strlen(e.id), RS_PATH_NO_DOTFILES, "run id");
	if (err)
		goto out;
	err = rs_path_check(e.path, strlen(e.path), RS_PATH_RELATIVE | RS_PATH_NO_DOTFILES,
			    "run path");
	if (err)
		goto out;
	err = take_metrics(&e, root);
	if (err)
		goto out;
	/* optional, display only: anything but a string is ignored */
	if (json_is_string(json_object_get(root, "verdict"))) {
		const char *v = json_string_value(json_object_get(root, "verdict"));

		e.verdict = strndup(v, RS_RUN_MAX_VERDICT);
		if (!e.verdict) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	*out = e;
	memset(&e, 0, sizeof(e));
out:
	json_decref(root);
	rs_run_entry_release(&e);
	return err;
}

int rs_run_entry_to_line(struct rs_buf *out, const struct rs_run_entry *e)
{
	json_t *o;
	int err = 0;

	/* checked before json_pack, whose NULL also means out of memory */
	if (!e->id || !e->commit || !e->branch || !e->trigger || !e->recorded_at || !e->path ||
	    !e->metrics)
		return rs_error_set(RS_EUSAGE, "incomplete run entry");
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O}",
		      "id", e->id, "commit", e->commit, "branch", e->branch,
		      "trigger", e->trigger, "recorded_at", e->recorded_at,
		      "path", e->path, "metrics", e->metrics);
	if (!o)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (e->verdict && json_object_set_new(o, "verdict", json_string(e->verdict))) {
		json_decref(o);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	err = rs_json_dump(out, o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (err)
		goto out;
	err = rs_buf_putc(out, '\n');
out:
	json_decref(o);
	return err;
}

static int parse_shard_unsorted(struct rs_runindex *idx, const char *text,
				size_t len, const char *name)
{
	size_t pos = 0, lineno = 0;
	int err = 0;

	if (len > RS_RUNINDEX_MAX_SHARD)
		return rs_error_set(RS_ECORRUPT, "index shard '%s' is larger than %u bytes",
				    name, RS_RUNINDEX_MAX_SHARD);
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		size_t l = end - pos;
		const char *p = text + pos;

		lineno++;
		pos = end + 1;
		while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' '))
			l--;
		if (l == 0)
			continue;
		err = reserve_one(idx);
		if (err)
			goto out;
		err = rs_run_entry_parse(&idx->runs[idx->count], p, l);
		if (err) {
			err = rs_error_wrap(err, "%s:%zu", name, lineno);
			goto out;
		}
		idx->count++;
	}
out:
	return err;
}

int rs_runindex_parse_shard(struct rs_runindex *idx, const char *text,
			    size_t len, const char *name)
{
	size_t from = idx->count;
	int err = parse_shard_unsorted(idx, text, len, name);
	int serr = sort_tail(idx, from);

	return err ? err : serr;
}

int rs_runindex_shard_path(struct rs_buf *out, const char *at)
{
	/* "YYYY-MM-..." */
	for (int i = 0; i < 7; i++) {
		if (i == 4 ? at[i] != '-' : !isdigit((unsigned char)at[i]))
			return rs_error_set(RS_EUSAGE, "bad recording time '%s'", at);
	}
	return rs_buf_printf(out, "index/%.7s.jsonl", at);
}

/* A month's first shard name "YYYY-MM.jsonl". */
static int is_shard_name(const char *n)
{
	if (strlen(n) != 13 || strcmp(n + 7, ".jsonl") != 0)
		return 0;
	for (int i = 0; i < 7; i++)
		if (i == 4 ? n[i] != '-' : !isdigit((unsigned char)n[i]))
			return 0;
	return 1;
}

/* runindex_internal.h */
int rs_runindex_tree(git_tree **sub, git_repository *repo, const char *rev)
{
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	int err, gerr;

	*sub = NULL;
	/* each object of the way read within its cap (git/repo.h) */
	err = rs_repo_rev_tree(&tree, repo, rev);
	if (!rev && err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
		goto out; /* a new repository: no runs yet */
	}
	if (err == RS_ENOTFOUND) {
		err = rs_error_set(RS_ENOTFOUND, "no commit '%s'", rev);
		goto out;
	}
	if (err)
		goto out;
	gerr = git_tree_entry_bypath(&te, tree, "index");
	if (gerr < 0 || git_tree_entry_type(te) != GIT_OBJECT_TREE) {
		git_error_clear();
		goto out; /* no index folder: no runs */
	}
	err = rs_repo_tree_capped(sub, repo, git_tree_entry_id(te), "index/");
out:
	git_tree_entry_free(te);
	git_tree_free(tree);
	return err;
}

/* "YYYY-MM" at the start of `n`. */
int rs_runindex_is_month(const char *n)
{
	for (int i = 0; i < 7; i++)
		if (i == 4 ? n[i] != '-' : !isdigit((unsigned char)n[i]))
			return 0;
	return 1;
}

/* A further shard's name "NNNN.jsonl", NNNN from 0002 to 9999: its number, else 0. */
static unsigned further_shard_seq(const char *n)
{
	unsigned seq = 0;

	if (strlen(n) != 10 || strcmp(n + 4, ".jsonl") != 0)
		return 0;
	for (int i = 0; i < 4; i++) {
		if (!isdigit((unsigned char)n[i]))
			return 0;
		seq = seq * 10 + (unsigned)(n[i] - '0');
	}
	return seq >= 2 ? seq : 0;
}

static int push_ref(struct rs_shard_list *l, const char *month, unsigned seq, const git_oid *oid)
{
	int err = rs_array_grow(&l->refs, &l->alloc, l->count + 1, sizeof(*l->refs), 64);

	if (err)
		return err;
	memcpy(l->refs[l->count].month, month, 7);
	l->refs[l->count].month[7] = '\0';
	l->refs[l->count].seq = seq;
	git_oid_cpy(&l->refs[l->count].oid, oid);
	l->count++;
	return 0;
}

/* Newest first: later month, then higher number. */
static int cmp_refs_desc(const void *a, const void *b)
{
	const struct rs_shard_ref *x = a, *y = b;
	int c = strcmp(y->month, x->month);

	if (c)
		return c;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

/* The further shards of month `m`'s folder, tree `id`, into `l`, highest number first. */
static int list_month_folder(struct rs_shard_list *l, const char *m, const git_oid *id)
{
	struct rs_buf what = RS_BUF_INIT;
	git_tree *t = NULL;
	size_t from = l->count;
	int err;

	err = rs_buf_printf(&what, "index/%s/", m);
	if (!err)
		err = rs_repo_tree_capped(&t, l->repo, id, what.ptr);
	rs_buf_release(&what);
	if (err)
		return err;
	for (size_t i = 0; i < git_tree_entrycount(t) && !err; i++) {
		const git_tree_entry *s = git_tree_entry_byindex(t, i);
		unsigned seq = further_shard_seq(git_tree_entry_name(s));

		if (seq && git_tree_entry_type(s) == GIT_OBJECT_BLOB)
			err = push_ref(l, m, seq, git_tree_entry_id(s));
	}
	git_tree_free(t);
	if (!err && l->count - from > 1)
		qsort(l->refs + from, l->count - from, sizeof(*l->refs), cmp_refs_desc);
	return err;
}

/*
 * The next month not listed yet: its folder's shards, then its first. On
 * an error it stays unlisted, so that the next reader to reach it fails
 * on it too (a prefetch that clears the error skips nothing).
 */
static int list_next_month(struct rs_shard_list *l)
{
	const struct rs_shard_month *m = &l->months[l->next];
	size_t from = l->count;
	int err = 0;

	if (m->has_folder)
		err = list_month_folder(l, m->month, &m->folder);
	if (!err && m->has_first)
		err = push_ref(l, m->month, 1, &m->first);
	if (err) {
		l->count = from;
		return err;
	}
	l->next++;
	return 0;
}

/* Newest month first. */
static int cmp_months_desc(const void *a, const void *b)
{
	return strcmp(((const struct rs_shard_month *)b)->month,
		      ((const struct rs_shard_month *)a)->month);
}

/* Month `n` ("YYYY-MM...") among l->months (sorted by name so far), added if new. */
static struct rs_shard_month *month_of(struct rs_shard_list *l, size_t *alloc, const char *n)
{
	struct rs_shard_month *m;

	/* index/'s entries come sorted: a month's two names are neighbours */
	if (l->nmonths && strncmp(l->months[l->nmonths - 1].month, n, 7) == 0)
		return &l->months[l->nmonths - 1];
	if (rs_array_grow(&l->months, alloc, l->nmonths + 1, sizeof(*l->months), 16))
		return NULL;
	m = &l->months[l->nmonths++];
	memset(m, 0, sizeof(*m));
	memcpy(m->month, n, 7);
	return m;
}

/* runindex_internal.h */
int rs_runindex_list_shards(struct rs_shard_list *l, git_repository *repo, git_tree *sub, const char *month)
{
	size_t alloc = 0;

	l->repo = repo;
	for (size_t i = 0; i < git_tree_entrycount(sub); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(sub, i);
		const char *n = git_tree_entry_name(e);
		int first = git_tree_entry_type(e) == GIT_OBJECT_BLOB && is_shard_name(n);
		int folder = git_tree_entry_type(e) == GIT_OBJECT_TREE && strlen(n) == 7 &&
			     rs_runindex_is_month(n);
		struct rs_shard_month *m;

		if ((!first && !folder) || (month && strncmp(n, month, 7) != 0))
			continue;
		m = month_of(l, &alloc, n);
		if (!m)
			return rs_error_set(RS_EGENERIC, "out of memory");
		if (first) {
			m->has_first = 1;
			git_oid_cpy(&m->first, git_tree_entry_id(e));
		} else {
			m->has_folder = 1;
			git_oid_cpy(&m->folder, git_tree_entry_id(e));
		}
	}
	if (l->nmonths > 1)
		qsort(l->months, l->nmonths, sizeof(*l->months), cmp_months_desc);
	return rs_runindex_list_reach(l, month ? SIZE_MAX : 0);
}

/* runindex_internal.h */
int rs_runindex_list_reach(struct rs_shard_list *l, size_t j)
{
	int err = 0;

	while (!err && l->count <= j && l->next < l->nmonths)
		err = list_next_month(l);
	return err;
}

/* runindex_internal.h */
int rs_runindex_list_down_to(struct rs_shard_list *l, const char *month)
{
	int err = 0;

	while (!err && l->next < l->nmonths && strncmp(l->months[l->next].month, month, 7) >= 0)
		err = list_next_month(l);
	return err;
}

/* runindex_internal.h */
void rs_runindex_list_release(struct rs_shard_list *l)
{
	free(l->refs);
	free(l->months);
	memset(l, 0, sizeof(*l));
}

/* runindex_internal.h */
int rs_runindex_ref_path(struct rs_buf *out, const struct rs_shard_ref *ref)
{
	if (ref->seq == 1)
		return rs_buf_printf(out, "index/%s.jsonl", ref->month);
	return rs_buf_printf(out, "index/%s/%04u.jsonl", ref->month, ref->seq);
}

/* The runs (non-blank lines) a shard's text holds. */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0, pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len;
		int blank = 1;

		for (size_t i = pos; i < end && blank; i++)
			blank = text[i] == ' ' || text[i] == '\r';
		n += !blank;
		pos = end + 1;
	}
	return n;
}

/* runindex_internal.h */
int rs_runindex_read_shard(git_blob **blob, git_repository *repo, const struct rs_shard_ref *ref,
		    struct rs_buf *label)
{
	int err = rs_runindex_ref_path(label, ref);

	if (err)
		return err;
	return rs_repo_blob_capped(blob, repo, &ref->oid, RS_RUNINDEX_MAX_SHARD, label->ptr);
}

/*
 * In a partial clone whose work tree leaves index/ out (`results clone`),
 * bring the shards l->refs[js[0..count)] that it lacks in one git call
 * (rs_git_fetch_promised_many), before they are read one by one.
 * RS_ERETRY when git cannot fetch them (offline).
 */
static int prefetch_shards(git_repository *repo, const struct rs_shard_list *l,
			   const size_t *js, size_t count)
{
	struct rs_buf *paths = calloc(count + 1, sizeof(*paths));
	const char **names = calloc(count + 1, sizeof(*names));
	git_oid *ids = calloc(count + 1, sizeof(*ids));
	size_t n = 0;
	int err = 0;

	if (!paths || !names || !ids) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < count && !err; i++, n++) {
		rs_buf_init(&paths[n], 0);
		err = rs_runindex_ref_path(&paths[n], &l->refs[js[i]]);
		names[n] = paths[n].ptr;
		git_oid_cpy(&ids[n], &l->refs[js[i]].oid);
	}
	if (!err)
		err = rs_git_fetch_promised_many(repo, ids, names, n, NULL);
out:
	for (size_t i = 0; paths && i < n; i++)
		rs_buf_release(&paths[i]);
	free(paths);
	free(names);
	free(ids);
	return err;
}

/* The runs of runs[from..count) that `w` counts; `*hb` is set from the first block when asked. */
static size_t count_window(const struct rs_runindex *idx, size_t from,
			   const struct rs_runindex_window *w, const char **hb)
{
	size_t n = 0;

	if (!w->branch && w->newest_branch && !*hb) {
		const struct rs_run_entry *newest = NULL;

		for (size_t i = from; i < idx->count; i++)
			if (!newest || entry_cmp(&idx->runs[i], newest) >= 0)
				newest = &idx->runs[i];
		*hb = newest ? newest->branch : NULL;
		if (newest && !*hb)
			*hb = ""; /* a run without a branch: count runs without one */
	}
	for (size_t i = from; i < idx->count; i++) {
		const char *b = idx->runs[i].branch;

		if (!*hb)
			n++;
		else if (!**hb ? !b : b && !strcmp(b, *hb))
			n++;
	}
	return n;
}

/* The runs one shard added to the index being loaded: runs[start..end), from l.refs[ref]. */
struct block {
	size_t start, end, ref;
};

/* Oldest shard first: the higher index in the newest-first list. */
static int cmp_blocks_oldest(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	return x->ref < y->ref ? 1 : x->ref > y->ref ? -1 : 0;
}

/*
 * Put the blocks of runs (one per shard, loaded into runs[base..count) in
 * the order they were read) back in shard order, oldest first, so that
 * the stable sort keeps recording order between runs of the same second.
 */
static int blocks_oldest_first(struct rs_runindex *idx, size_t base, struct block *blocks,
			       size_t nb)
{
	struct rs_run_entry *tmp;
	size_t k = 0;

	if (nb < 2)
		return 0;
	tmp = malloc((idx->count - base) * sizeof(*tmp));
	if (!tmp)
		return rs_error_set(RS_EGENERIC, "out of memory");
	qsort(blocks, nb, sizeof(*blocks), cmp_blocks_oldest);
	for (size_t b = 0; b < nb; b++) {
		memcpy(tmp + k, idx->runs + blocks[b].start,
		       (blocks[b].end - blocks[b].start) * sizeof(*tmp));
		k += blocks[b].end - blocks[b].start;
	}
	memcpy(idx->runs + base, tmp, k * sizeof(*tmp));
	free(tmp);
	return 0;
}

/* A bounded load in progress (rs_runindex_load_window). */
struct loader {
	struct rs_runindex *idx;
	git_repository *git;
	const struct rs_runindex_window *w;
	struct rs_shard_list l;
	struct block *blocks; /* one per shard read, in reading order */
	size_t nb;
	char *read;           /* read[j]: l.refs[j] was read */
	size_t cap;           /* entries of blocks and read: l.count at most */
	size_t held;          /* runs the window counts */
	const char *hb;       /* the branch counted (NULL: any) */
	struct rs_buf label;
	size_t fetched;       /* l.refs[..fetched) were asked for ahead of need */
	size_t chunk;         /* how many to ask for next */
};

/*
 * A partial clone fetches the shards it will read in few calls: enough
 * for the window first (a shard holds up to RS_RUNINDEX_SHARD_RUNS runs),
 * then, if the window is not full yet (a branch with few runs), all the
 * others; the shards the branch map names, in one call of their own.
 * Each `git fetch` costs the remote a pack of its own, so growing batches
 * (2, 8, 32...: six calls at 822 shards) cost several times one. Ahead of
 * need, so never an error: offline, the shards the window does read are
 * asked for one by one, and the first one missing is named (the clone
 * may hold them all). Nothing happens outside a partial clone.
 */
static void prefetch_list(struct loader *ld, const size_t *js, size_t n)
{
	if (n && prefetch_shards(ld->git, &ld->l, js, n)) {
		rs_error_clear();
		ld->fetched = SIZE_MAX; /* offline: no more batches */
	}
}

static int loader_reach(struct loader *ld, size_t j);

static void prefetch_from(struct loader *ld, size_t j)
{
	size_t to, n = 0, *js;

	if (j < ld->fetched)
		return;
	/* the batch's shards listed first (a month's folder unread yet: said
	   when the shards are read one by one) */
	if (loader_reach(ld, ld->chunk < SIZE_MAX - j ? j + ld->chunk - 1 : SIZE_MAX))
		rs_error_clear();
	if (j >= ld->l.count)
		return;
	to = ld->l.count - j > ld->chunk ? j + ld->chunk : ld->l.count;
	ld->chunk = SIZE_MAX; /* then all the others */
	js = calloc(to - j + 1, sizeof(*js));
	if (!js)
		return; /* read one by one */
	for (size_t k = j; k < to; k++)
		if (!ld->read[k])
			js[n++] = k;
	ld->fetched = to;
	prefetch_list(ld, js, n);
	free(js);
}

static int loader_full(const struct loader *ld)
{
	return ld->w->runs && ld->held >= ld->w->runs;
}

/* The arrays as long as the list: l.count entries, the new ones zero. */
static int loader_grow(struct loader *ld)
{
	size_t cap = ld->l.count;
	struct block *b;
	char *r;

	if (cap <= ld->cap)
		return 0;
	b = realloc(ld->blocks, cap * sizeof(*b));
	if (!b)
		return rs_error_set(RS_EGENERIC, "out of memory");
	ld->blocks = b;
	r = realloc(ld->read, cap);
	if (!r)
		return rs_error_set(RS_EGENERIC, "out of memory");
	memset(r + ld->cap, 0, cap - ld->cap);
	ld->read = r;
	ld->cap = cap;
	return 0;
}

/*
 * After a listing that returned `err`: the arrays grown with what it
 * listed even when a later month failed (a caller that clears the error
 * goes on with the longer list). `err`, else loader_grow's.
 */
static int loader_listed(struct loader *ld, int err)
{
	int gerr = loader_grow(ld);

	return err ? err : gerr;
}

/* l.refs[j] listed when there is one (rs_runindex_list_reach); j < l.count tells. */
static int loader_reach(struct loader *ld, size_t j)
{
	return loader_listed(ld, rs_runindex_list_reach(&ld->l, j));
}

/* Every shard of `month` and of the months after it listed. */
static int loader_down_to(struct loader *ld, const char *month)
{
	return loader_listed(ld, rs_runindex_list_down_to(&ld->l, month));
}

/* Read shard l.refs[j] into the index. */
static int load_shard(struct loader *ld, size_t j)
{
	git_blob *blob = NULL;
	struct block *b = &ld->blocks[ld->nb];
	int err;

	b->start = ld->idx->count;
	b->ref = j;
	rs_buf_clear(&ld->label);
	err = rs_runindex_read_shard(&blob, ld->git, &ld->l.refs[j], &ld->label);
	if (!err)
		err = parse_shard_unsorted(ld->idx, git_blob_rawcontent(blob),
					   (size_t)git_blob_rawsize(blob), ld->label.ptr);
	git_blob_free(blob);
	b->end = ld->idx->count;
	ld->nb++;
	ld->read[j] = 1;
	if (err)
		return err;
	ld->held += count_window(ld->idx, b->start, ld->w, &ld->hb);
	return 0;
}

/* Whether the last block read holds the run `id`. */
static int last_block_has(const struct loader *ld, const char *id)
{
	const struct block *b = &ld->blocks[ld->nb - 1];

	for (size_t i = b->start; i < b->end; i++)
		if (!strcmp(ld->idx->runs[i].id, id))
			return 1;
	return 0;
}

/* The index in l.refs of shard (month, seq), or l.count. */
static size_t find_ref(const struct rs_shard_list *l, const char *month, unsigned seq)
{
	size_t lo = 0, hi = l->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->refs[mid].month, month);

		if (c == 0 && l->refs[mid].seq == seq)
			return mid;
		if (c > 0 || (c == 0 && l->refs[mid].seq > seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return l->count;
}

/*
 * The rest of a window of one branch, once the shards down to the run the
 * branch map covers were read (branchmap.h): the shards the map lists for
 * the branch, newest first, skipping those read. When the map lists fewer
 * runs than it may hold, the branch has no others and nothing more is
 * read; when it lists its newest runs only ("more"), the shards older than
 * the last listed are read one by one, as without a map. `*next` is where
 * the one-by-one reading goes on (SIZE_MAX: nowhere).
 */
static int load_mapped(struct loader *ld, git_tree *sub, size_t *next)
{
	struct rs_map_entry e;
	int err, found;

	err = rs_branchmap_lookup(&e, &found, ld->git, sub, ld->hb);
	if (err || !found) {
		*next = SIZE_MAX; /* no run of it up to the covered one */
		return err;
	}
	/* the months the map names listed, so that find_ref sees their shards */
	for (size_t i = 0; i < e.count && !err; i++)
		err = loader_down_to(ld, e.shards[i].month);
	if (err) {
		rs_map_entry_release(&e);
		return err;
	}
	if (ld->fetched < ld->l.count) {
		size_t *js = calloc(e.count + 1, sizeof(*js)), n = 0;

		for (size_t i = 0; js && i < e.count; i++) {
			size_t j = find_ref(&ld->l, e.shards[i].month, e.shards[i].seq);

			if (j < ld->l.count && !ld->read[j])
				js[n++] = j;
		}
		if (js)
			prefetch_list(ld, js, n);
		free(js);
	}
	for (size_t i = 0; i < e.count && !err && !loader_full(ld); i++) {
		size_t j = find_ref(&ld->l, e.shards[i].month, e.shards[i].seq);

		if (j == ld->l.count) {
			/* a shard the map names is not there: read as without a map */
			e.more = 1;
			break;
		}
		*next = j + 1;
		if (!ld->read[j])
			err = load_shard(ld, j);
	}
	if (!e.more)
		*next = SIZE_MAX;
	rs_map_entry_release(&e);
	return err;
}

int rs_runindex_load_window(struct rs_runindex *idx, struct rs_repo *r, const char *rev,
			    const struct rs_runindex_window *w)
{
	struct loader ld = { .idx = idx, .git = r->git, .w = w, .hb = w->branch };
	struct rs_buf covered = RS_BUF_INIT;
	git_tree *sub = NULL;
	size_t base = idx->count, next = 0;
	int err, use_map;

	rs_buf_init(&ld.label, 0);
	err = rs_runindex_tree(&sub, r->git, rev);
	if (err || !sub)
		goto out;
	err = rs_runindex_list_shards(&ld.l, r->git, sub, NULL);
	if (err || !ld.l.count)
		goto out;
	err = loader_grow(&ld);
	if (err)
		goto out;
	/* The branch map serves a bounded load of one branch (branchmap.h). */
	use_map = w->runs && (w->branch || w->newest_branch);
	if (use_map) {
		err = rs_map_covered(&covered, r->git, sub, RS_MAP_BRANCHES);
		if (err == RS_ENOTFOUND) {
			rs_error_clear(); /* an older repository: no map, every shard as before */
			err = 0;
			use_map = 0;
		}
		if (err)
			goto out;
	}
	/*
	 * Newest shard first, so that a bounded load stops early; with the
	 * map, down to the shard of the run it covers (the first, unless an
	 * older results recorded runs since), then the branch's shards.
	 */
	ld.chunk = w->runs ? w->runs / RS_RUNINDEX_SHARD_RUNS + 2 : SIZE_MAX;
	while (!loader_full(&ld)) {
		err = next < SIZE_MAX ? loader_reach(&ld, next) : 0;
		if (err)
			goto out;
		if (next >= ld.l.count)
			break;
		if (ld.read[next]) {
			next++;
			continue;
		}
		prefetch_from(&ld, next);
		err = load_shard(&ld, next++);
		if (err)
			goto out;
		if (use_map && last_block_has(&ld, covered.ptr)) {
			use_map = 0;
			if (ld.hb && *ld.hb && !loader_full(&ld))
				err = load_mapped(&ld, sub, &next);
			if (err)
				goto out;
		}
	}
	err = blocks_oldest_first(idx, base, ld.blocks, ld.nb);
	if (!err)
		err = sort_tail(idx, 0);
out:
	free(ld.blocks);
	free(ld.read);
	rs_runindex_list_release(&ld.l);
	rs_buf_release(&ld.label);
	rs_buf_release(&covered);
	git_tree_free(sub);
	return err;
}

int rs_runindex_load(struct rs_runindex *idx, struct rs_repo *r,
		     const char *rev, size_t want_recent)
{
	struct rs_runindex_window w = { want_recent, NULL, 0 };

	return rs_runindex_load_window(idx, r, rev, &w);
}

/* ---- the commit map: the shards a resolve or a profiled-commit query needs ---- */

static const struct rs_runindex_window every_run = { 0, NULL, 0 };

/* The shards of index/ at `rev` listed into `ld` (no shard: ld->l.count 0, `*sub` may be NULL). */
static int loader_open(struct loader *ld, git_tree **sub, struct rs_runindex *idx,
		       struct rs_repo *r, const char *rev)
{
	int err;

	memset(ld, 0, sizeof(*ld));
	ld->idx = idx;
	ld->git = r->git;
	ld->w = &every_run;
	rs_buf_init(&ld->label, 0);
	err = rs_runindex_tree(sub, r->git, rev);
	if (err || !*sub)
		return err;
	err = rs_runindex_list_shards(&ld->l, r->git, *sub, NULL);
	if (!err)
		err = loader_reach(ld, SIZE_MAX); /* the maps may name any month */
	if (err || !ld->l.count)
		return err;
	/* the covered run is in the newest shard, unless an older results recorded since */
	ld->chunk = 2;
	return 0;
}

static void loader_close(struct loader *ld)
{
	free(ld->blocks);
	free(ld->read);
	rs_runindex_list_release(&ld->l);
	rs_buf_release(&ld->label);
}

/* Every shard not read yet, newest first. */
static int load_rest(struct loader *ld)
{
	int err = 0;

	for (size_t j = 0; j < ld->l.count && !err; j++) {
		if (ld->read[j])
			continue;
		prefetch_from(ld, j);
		err = load_shard(ld, j);
	}
	return err;
}

/*
 * The shards newest first down to the one holding the run the commit map
 * covers (branchmap.h): `*use_map` 1 then, and the map accounts for every
 * run of the shards not read. 0 when there is no map (nothing read), or
 * when its covered run is in no shard (every shard read).
 */
static int load_to_covered(struct loader *ld, git_tree *sub, int *use_map)
{
	struct rs_buf covered = RS_BUF_INIT;
	int err;

	*use_map = 0;
	err = rs_map_covered(&covered, ld->git, sub, RS_MAP_COMMITS);
	if (err == RS_ENOTFOUND) {
		rs_error_clear(); /* an older repository: no map, every shard as before */
		err = 0;
		goto out;
	}
	for (size_t j = 0; j < ld->l.count && !err && !*use_map; j++) {
		prefetch_from(ld, j);
		err = load_shard(ld, j);
		if (!err && last_block_has(ld, covered.ptr))
			*use_map = 1;
	}
out:
	rs_buf_release(&covered);
	return err;
}

/*
 * The shards the commit map lists for the commits starting with `prefix`,
 * those not read yet. `*whole` 1 when a shard it names is not there: the
 * map is not to be trusted, every shard is read then.
 */
static int load_prefix(struct loader *ld, git_tree *sub, const char *prefix, int *whole)
{
	struct rs_map_entries es = { NULL, 0, 0 };
	size_t *js = NULL, n = 0, total = 0;
	int err;

	err = rs_commitmap_prefix(&es, ld->git, sub, prefix);
	if (err || !es.count)
		goto out;
	for (size_t i = 0; i < es.count; i++)
		total += es.entries[i].count;
	js = calloc(total + 1, sizeof(*js));
	if (!js) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < es.count && !*whole; i++) {
		for (size_t k = 0; k < es.entries[i].count && !*whole; k++) {
			const struct rs_map_shard *s = &es.entries[i].shards[k];
			size_t j = find_ref(&ld->l, s->month, s->seq);

			if (j == ld->l.count)
				*whole = 1;
			else if (!ld->read[j])
				js[n++] = j;
		}
	}
	if (*whole)
		goto out;
	if (ld->fetched < ld->l.count)
		prefetch_list(ld, js, n);
	for (size_t i = 0; i < n && !err; i++)
		if (!ld->read[js[i]])
			err = load_shard(ld, js[i]);
out:
	free(js);
	rs_map_entries_release(&es);
	return err;
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/*
 * The digits of a profiled commit that `query` names, into `out`: a
 * query of 4 to 64 hex digits is one; a run id
 * ("YYYYMMDD-HHMMSS-<trigger>-<sha7>[-N]") names its commit's first 7.
 * 0 when it names none.
 */
static int query_prefix(char out[65], const char *q)
{
	size_t n = strlen(q);
	const char *t, *sha, *end;

	if (n >= 4 && n <= 64 && rs_hex_is(q)) {
		memcpy(out, q, n + 1);
		return 1;
	}
	if (n < 8 + 1 + 6 + 1 + 1 + 1 + RS_RUN_SHA7 || !all_digits(q, 8) || q[8] != '-' ||
	    !all_digits(q + 9, 6) || q[15] != '-')
		return 0;
	t = strchr(q + 16, '-'); /* a trigger holds no '-' */
	if (!t || t == q + 16)
		return 0;
	sha = t + 1;
	end = strchr(sha, '-');
	if ((end ? (size_t)(end - sha) : strlen(sha)) != RS_RUN_SHA7 ||
	    (end && (!end[1] || !all_digits(end + 1, strlen(end + 1)))))
		return 0;
	memcpy(out, sha, RS_RUN_SHA7);
	out[RS_RUN_SHA7] = '\0';
	return rs_hex_is(out);
}

/* Whether runs[from..count) of `idx` hold the run `id`. */
static int holds_id(const struct rs_runindex *idx, size_t from, const char *id)
{
	for (size_t i = from; i < idx->count; i++)
		if (!strcmp(idx->runs[i].id, id))
			return 1;
	return 0;
}

int rs_runindex_load_queries(struct rs_runindex *idx, struct rs_repo *r, const char *rev,
			     const char *const *queries, size_t n)
{
	struct loader ld;
	git_tree *sub = NULL;
	size_t base = idx->count;
	char prefix[65];
	int err, use_map = 0, whole = 0;

	err = loader_open(&ld, &sub, idx, r, rev);
	if (err || !ld.l.count)
		goto out;
	for (size_t i = 0; i < n && !whole; i++)
		whole = !query_prefix(prefix, queries[i]);
	if (!whole)
		err = load_to_covered(&ld, sub, &use_map);
	if (err)
		goto out;
	whole |= !use_map;
	for (size_t i = 0; i < n && !whole && !err; i++) {
		if (query_prefix(prefix, queries[i]))
			err = load_prefix(&ld, sub, prefix, &whole);
	}
	if (err)
		goto out;
	/*
	 * A run id is looked up through its commit's 7 digits: one the shards
	 * read do not hold (an id that does not name its commit, or a run
	 * older than the newest RS_BRANCHMAP_RUNS of its commit) is looked
	 * for in every shard, as is a run that does not exist, whose message
	 * says so after a whole read.
	 */
	for (size_t i = 0; i < n && !whole; i++) {
		size_t len = strlen(queries[i]);

		if (!(len >= 4 && len <= 64 && rs_hex_is(queries[i])))
			whole = !holds_id(idx, base, queries[i]);
	}
	if (whole)
		err = load_rest(&ld);
	if (!err)
		err = blocks_oldest_first(idx, base, ld.blocks, ld.nb);
	if (!err)
		err = sort_tail(idx, 0);
out:
	loader_close(&ld);
	git_tree_free(sub);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int rs_runindex_first_profiled(size_t *at, int *found, struct rs_repo *r, const char *rev,
			       const char *const *commits, size_t n)
{
	struct rs_runindex idx;
	struct loader ld;
	git_tree *sub = NULL;
	const char **loaded = NULL;
	size_t k = n;
	int err = 0, use_map = 0;

	*found = 0;
	rs_runindex_init(&idx);
	memset(&ld, 0, sizeof(ld));
	rs_buf_init(&ld.label, 0);
	if (n > RS_RUNS_MAX_CANDIDATES)
		return rs_error_set(RS_EUSAGE, "more than %u commits to look for",
				    RS_RUNS_MAX_CANDIDATES);
	for (size_t i = 0; i < n; i++)
		if (strlen(commits[i]) < 4 || strlen(commits[i]) > 64 || !rs_hex_is(commits[i]))
			return rs_error_set(RS_EUSAGE, "'%s' is not a commit id", commits[i]);
	err = loader_open(&ld, &sub, &idx, r, rev);
	if (err || !ld.l.count)
		goto out;
	err = load_to_covered(&ld, sub, &use_map);
	if (!err && !use_map)
		err = load_rest(&ld);
	if (err)
		goto out;
	/* the runs read (those the map does not cover, or every run): sorted commits */
	loaded = calloc(idx.count + 1, sizeof(*loaded));
	if (!loaded) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < idx.count; i++)
		loaded[i] = idx.runs[i].commit;
	qsort(loaded, idx.count, sizeof(*loaded), cmp_str);
	for (k = 0; k < n; k++)
		if (idx.count && bsearch(&commits[k], loaded, idx.count, sizeof(*loaded), cmp_str))
			break;
	/* the map, for the candidates before the first one the runs read hold */
	if (use_map && k > 0)
		err = rs_commitmap_first(at, found, r->git, sub, commits, k);
	if (!err && !*found && k < n) {
		*at = k;
		*found = 1;
	}
out:
	free(loaded);
	loader_close(&ld);
	rs_runindex_release(&idx);
	git_tree_free(sub);
	return err;
}

int rs_runindex_append_shard(struct rs_buf *path, struct rs_buf *text, struct rs_repo *r,
			     const char *recorded_at)
{
	git_tree *sub = NULL;
	git_blob *blob = NULL;
	struct rs_shard_list l;
	struct rs_shard_ref next;
	int err;

	memset(&l, 0, sizeof(l));
	err = rs_runindex_shard_path(path, recorded_at); /* checks recorded_at */
	if (err)
		goto out;
	memcpy(next.month, recorded_at, 7);
	next.month[7] = '\0';
	next.seq = 1;
	err = rs_runindex_tree(&sub, r->git, NULL);
	if (!err && sub)
		err = rs_runindex_list_shards(&l, r->git, sub, next.month);
	if (err || !l.count)
		goto out; /* the month's first shard, new */
	rs_buf_clear(path);
	err = rs_runindex_read_shard(&blob, r->git, &l.refs[0], path);
	if (err)
		goto out;
	/* The last shard of a month while it has room (and at the last number), else a new one. */
	if (count_lines(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob)) <
		    RS_RUNINDEX_SHARD_RUNS || l.refs[0].seq >= 9999) {
		err = rs_buf_put(text, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		goto out;
	}
	next.seq = l.refs[0].seq + 1;
	rs_buf_clear(path);
	err = rs_runindex_ref_path(path, &next);
out:
	git_blob_free(blob);
	rs_runindex_list_release(&l);
	git_tree_free(sub);
	return err;
}

static int starts_with_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix))
			return 0;
	return 1;
}

int rs_runindex_resolve(const struct rs_run_entry **out,
			const struct rs_runindex *idx, const char *query)
{
	const struct rs_run_entry *best = NULL;
	const char *other = NULL;
	size_t qlen = strlen(query);

	/* Exact run id first: ids are unique. */
	for (size_t i = idx->count; i-- > 0;) {
		if (strcmp(idx->runs[i].id, query) == 0) {
			*out = &idx->runs[i];
			return 0;
		}
	}
	if (qlen < 4 || qlen > 64 || !rs_hex_is(query))
		return rs_error_set(RS_ENOTFOUND,
				    "no run '%s' (give a run id or at least 4 hex digits "
				    "of a profiled commit; 'results list' shows them)", query);
	/* Newest first, so the first match of a commit is its latest run. */
	for (size_t i = idx->count; i-- > 0;) {
		const struct rs_run_entry *e = &idx->runs[i];

		if (!starts_with_ci(e->commit, query))
			continue;
		if (!best)
			best = e;
		else if (strcmp(best->commit, e->commit) != 0 && !other)
			other = e->commit;
	}
	if (!best)
		return rs_error_set(RS_ENOTFOUND,
				    "no run of commit '%s' (see 'results list'; after a "
				    "'git pull' new runs appear)", query);
	if (other)
		return rs_error_set(RS_ENOTFOUND,
				    "commit prefix '%s' is ambiguous: it matches %.12s and "
				    "%.12s; give more digits", query, best->commit, other);
	*out = best;
	return 0;
}

static int put_metric(struct rs_buf *out, json_t *metrics, const char *key,
		      const char *fmt)
{
	json_t *v = json_object_get(metrics, key);

	if (!json_is_number(v))
		return rs_buf_puts(out, "–");
	return rs_buf_printf(out, fmt, json_number_value(v));
}

/* One row of the README's table of recent runs. */
static int readme_row(struct rs_buf *out, const struct rs_run_entry *e)
{
	int err;

	char when[20], commit[8];

	/* every field is a committed index line's: untrusted, escaped */
	snprintf(when, sizeof(when), "%.10s %.8s", e->recorded_at,
		 strlen(e->recorded_at) > 11 ? e->recorded_at + 11 : "");
	snprintf(commit, sizeof(commit), "%.7s", e->commit);
	err = rs_buf_puts(out, "| ");
	if (!err)
		err = rs_escape_md_text(out, when);
	if (!err)
		err = rs_buf_puts(out, " | ");
	if (!err)
		err = rs_escape_md_code(out, commit, RS_ESCAPE_IN_TABLE);
	if (!err)
		err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = rs_escape_md_text(out, e->branch);
	if (err)
		return err;
	err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = rs_escape_md_text(out, e->trigger);
	if (err)
		return err;
	err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = put_metric(out, e->metrics, "duration", "%.3f");
	if (err)
		return err;
	err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = put_metric(out, e->metrics, "samples", "%.0f");
	if (err)
		return err;
	err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = e->verdict ? rs_escape_md_text(out, e->verdict) : rs_buf_puts(out, "–");
	if (err)
		return err;
	err = rs_buf_puts(out, " | [");
	if (!err)
		err = rs_escape_md_text(out, e->id);
	if (!err)
		err = rs_buf_puts(out, "](");
	if (!err)
		err = rs_percent_encode_str(out, e->path, RS_SLASH_KEEP);
	if (!err)
		err = rs_buf_puts(out, "/summary.md) |\n");
	return err;
}

int rs_runindex_readme(struct rs_buf *out, const struct rs_runindex *idx,
		       size_t limit)
{
	size_t shown = 0;
	int err = 0;

	err = rs_buf_puts(out,
		"# Profiling results\n\n"
		"Each folder under `runs/` is one recorded profiling run: `summary.md` "
		"is its readable summary, `run.json` its machine-readable record, and "
		"the raw pyinstrument session is stored with Git LFS and not downloaded "
		"by default. Use `results list`, `results show <commit>` and "
		"`results fetch <commit>` to browse and download; `index/` lists every "
		"run month by month.\n\n");
	if (err)
		return err;
	if (idx->count == 0)
		return rs_buf_puts(out, "No runs recorded yet.\n");
	err = rs_buf_printf(out, "## Recent runs\n\n"
			    "| recorded (UTC) | commit | branch | trigger | duration (s) | samples | verdict | summary |\n"
			    "|---|---|---|---|---:|---:|---|---|\n");
	for (size_t i = idx->count; i-- > 0 && shown < limit && !err; shown++) {
		const struct rs_run_entry *e = &idx->runs[i];

		err = readme_row(out, e);
	}
	/* No count: the index given may be a bounded load of recent shards. */
	if (!err && idx->count > shown)
		err = rs_buf_puts(out, "\nOlder runs are listed month by month in "
				  "[`index/`](index/), and by `results list --limit 0`.\n");
	return err;
}
