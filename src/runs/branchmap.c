/*
 * The branch map and the commit map of the run index (branchmap.h,
 * docs/run-format.md).
 *
 * Why a map: `check` judges the newest run against the runs before it on
 * its branch. Shards are in recording order, so the runs of a branch can
 * be anywhere in them: the first run of a pull-request branch made check
 * read every shard of the history to find that nothing came before it
 * (7.9 s at 100,000 runs). The map says, for every branch, which shards
 * hold its newest RS_BRANCHMAP_RUNS runs; a reader reads those.
 *
 * Why buckets: one file of every branch would grow with the branches of
 * the history (every pull request brings one) and be rewritten by every
 * add. 256 files by hash, each a few KB at 100,000 runs, and add rewrites
 * one of them, plus covered.json; they are in 16 folders of 16, so that
 * the trees an add rewrites hold 17 and 16 entries (one tree of 256
 * would be 9 KB more in every commit). A line lists at most the shards of
 * RS_BRANCHMAP_RUNS runs, so it is bounded whatever a branch holds.
 *
 * Why a commit map too, of the same shape: resolving a profiled commit
 * (check --baseline, compare, show, fetch) and asking which of a list of
 * commits is profiled (the GitHub Action's pull-request path) read every
 * shard without it (the commit of a run can be in any shard). Its buckets
 * are keyed on the commit's first three hex digits, so that a commit or a
 * prefix of 3 digits or more (resolving takes 4) names its one bucket; a
 * run id names its commit's first 7 digits. Three, not two: commits are
 * as many as runs, and each add rewrites its commit's bucket: 4096
 * buckets (16 folders of 16 folders of 16) are about 2 KB each at 100,000
 * runs, where 256 would be 35 KB, and the three trees an add rewrites
 * hold 17, 16 and 16 entries.
 *
 * Why covered.json: an add by an older results appends a run without
 * touching the map. The map is then true of the runs up to the covered
 * one, and whatever came after it is in the shards newer than that run's
 * (readers read those in full, as they did before the map; the next add
 * adds those runs to the map).
 */
#include "runs/branchmap.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/json.h"
#include "runs/runindex_internal.h"
#include "util/array.h"
#include "util/hex.h"

/*
 * What differs between the two maps: their folder under index/, the field
 * keying a line, and how many buckets (in folders of 16) they have.
 */
static const struct map_kind {
	const char *dir, *field;
	unsigned buckets;
} kinds[] = {
	[RS_MAP_BRANCHES] = { "branches", "branch", RS_BRANCHMAP_BUCKETS },
	[RS_MAP_COMMITS] = { "commits", "commit", RS_COMMITMAP_BUCKETS },
};

void rs_map_entry_release(struct rs_map_entry *e)
{
	if (!e)
		return;
	free(e->key);
	free(e->shards);
	memset(e, 0, sizeof(*e));
}

void rs_map_entries_release(struct rs_map_entries *l)
{
	for (size_t i = 0; i < l->count; i++)
		rs_map_entry_release(&l->entries[i]);
	free(l->entries);
	memset(l, 0, sizeof(*l));
}

void rs_map_files_release(struct rs_map_files *f)
{
	for (size_t i = 0; i < f->count; i++) {
		rs_buf_release(&f->files[i].path);
		rs_buf_release(&f->files[i].text);
	}
	free(f->files);
	memset(f, 0, sizeof(*f));
}


static unsigned hex_value(char c)
{
	c = (char)tolower((unsigned char)c);
	return c >= 'a' ? (unsigned)(c - 'a' + 10) : (unsigned)(c - '0');
}

/*
 * The bucket of a key. Branches: the low byte of the FNV-1a (32 bits) of
 * the name. Commits (hex, checked by the caller): the first three digits,
 * lower-cased (a shorter commit, which only a hostile index holds: its
 * digits, then 0s). Never change either.
 */
static unsigned bucket_of(enum rs_map m, const char *key)
{
	uint32_t h = 2166136261u;

	if (m == RS_MAP_COMMITS) {
		unsigned b = 0;
		int end = 0;

		for (int i = 0; i < RS_COMMITMAP_DIGITS; i++) {
			end = end || !key[i];
			b = b << 4 | (end ? 0 : hex_value(key[i]));
		}
		return b;
	}
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h & (RS_BRANCHMAP_BUCKETS - 1);
}

static int starts_with_ci(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (tolower((unsigned char)*s) != tolower((unsigned char)*prefix))
			return 0;
	return 1;
}

/*
 * The blob at `rel` under index/ `sub`, through `max` (checked from the
 * object's header, before it is read); RS_ENOTFOUND when there is none.
 * `label` gets "index/<rel>" for messages.
 */
static int read_sub_file(git_blob **blob, git_repository *repo, git_tree *sub, const char *rel,
			 size_t max, struct rs_buf *label)
{
	git_tree_entry *te = NULL;
	int err;

	*blob = NULL;
	err = rs_buf_printf(label, "index/%s", rel);
	if (err)
		return err;
	/* the folders on the way read within their caps (git/repo.h) */
	err = rs_repo_tree_entry_bypath(&te, sub, rel);
	if (err == RS_ENOTFOUND)
		return rs_error_set(RS_ENOTFOUND, "no '%s'", label->ptr);
	if (err)
		return err;
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
		err = rs_error_set(RS_ECORRUPT, "'%s' is not a file", label->ptr);
	else
		err = rs_repo_blob_capped(blob, repo, git_tree_entry_id(te), max, label->ptr);
	git_tree_entry_free(te);
	return err;
}

int rs_map_covered(struct rs_buf *id, git_repository *repo, git_tree *sub, enum rs_map m)
{
	struct rs_buf rel = RS_BUF_INIT, label = RS_BUF_INIT;
	git_blob *blob = NULL;
	json_t *root = NULL;
	json_error_t jerr;
	const char *run;
	int err;

	err = rs_buf_printf(&rel, "%s/covered.json", kinds[m].dir);
	if (err)
		goto out;
	err = read_sub_file(&blob, repo, sub, rel.ptr, RS_BRANCHMAP_MAX_COVERED, &label);
	if (err)
		goto out;
	root = json_loadb(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
			  JSON_REJECT_DUPLICATES, &jerr);
	run = json_string_value(json_object_get(root, "run"));
	if (!run || !*run) {
		err = rs_error_set(RS_ECORRUPT, "'%s' names no run", label.ptr);
		goto out;
	}
	err = rs_buf_puts(id, run);
out:
	json_decref(root);
	git_blob_free(blob);
	rs_buf_release(&rel);
	rs_buf_release(&label);
	return err;
}

/* Insert `runs` runs in shard (month, seq) into `e`, newest first. */
static int entry_add(struct rs_map_entry *e, const char *month, unsigned seq, unsigned runs)
{
	size_t at = 0;
	int err;

	for (; at < e->count; at++) {
		int c = strcmp(e->shards[at].month, month);

		if (c == 0 && e->shards[at].seq == seq) {
			e->shards[at].runs += runs;
			return 0;
		}
		if (c < 0 || (c == 0 && e->shards[at].seq < seq))
			break;
	}
	err = rs_array_grow(&e->shards, &e->alloc, e->count + 1, sizeof(*e->shards), 4);
	if (err)
		return err;
	memmove(e->shards + at + 1, e->shards + at, (e->count - at) * sizeof(*e->shards));
	memcpy(e->shards[at].month, month, 8);
	e->shards[at].seq = seq;
	e->shards[at].runs = runs;
	e->count++;
	return 0;
}

/* Keep the shards of the newest RS_BRANCHMAP_RUNS runs; the rest become "more". */
static void entry_trim(struct rs_map_entry *e)
{
	size_t sum = 0, keep = 0;

	while (keep < e->count && sum < RS_BRANCHMAP_RUNS)
		sum += e->shards[keep++].runs;
	if (keep < e->count)
		e->more = 1;
	e->count = keep;
}

/* Whether `key` may key a line of map `m` (of `bucket`, when not -1); else the error. */
static int key_check(enum rs_map m, const char *key, int bucket)
{
	if (m == RS_MAP_BRANCHES)
		return 0;
	if (strlen(key) > 64 || !rs_hex_is(key))
		return rs_error_set(RS_ECORRUPT, "commit of a commit line is not 1 to 64 hex digits");
	if (bucket >= 0 && bucket_of(m, key) != (unsigned)bucket)
		return rs_error_set(RS_ECORRUPT, "commit %.64s is not of this bucket", key);
	return 0;
}

/* One line of a bucket of map `m` (number `bucket`, or -1) into `e` (the caller's), every field checked. */
static int entry_parse(struct rs_map_entry *e, const char *line, size_t len, enum rs_map m,
		       int bucket)
{
	json_t *root, *shards, *s;
	json_error_t jerr;
	const char *key;
	size_t i;
	int err = 0;

	memset(e, 0, sizeof(*e));
	if (len > RS_RUNINDEX_MAX_LINE)
		return rs_error_set(RS_ECORRUPT, "line longer than %u bytes", RS_RUNINDEX_MAX_LINE);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	/* jansson sets no text when it cannot allocate its lexer: no parse error is silent */
	if (!root && (json_error_code(&jerr) == json_error_out_of_memory || !jerr.text[0]))
		return rs_error_set(RS_EGENERIC, "out of memory");
	key = json_string_value(json_object_get(root, kinds[m].field));
	shards = json_object_get(root, "shards");
	if (!key || !*key || strlen(key) > 1024 || !json_is_array(shards) ||
	    json_array_size(shards) > RS_BRANCHMAP_MAX_SHARDS) {
		err = rs_error_set(RS_ECORRUPT, "not a %s line: %s", kinds[m].field,
				   root ? "a field is missing or of the wrong type" : jerr.text);
		goto out;
	}
	err = key_check(m, key, bucket);
	if (err)
		goto out;
	e->key = strdup(key);
	e->more = json_is_true(json_object_get(root, "more"));
	if (!e->key) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	json_array_foreach(shards, i, s) {
		const char *month = json_string_value(json_array_get(s, 0));
		json_t *seq = json_array_get(s, 1), *runs = json_array_get(s, 2);

		if (!month || strlen(month) != 7 || !rs_runindex_is_month(month) ||
		    !json_is_integer(seq) || json_integer_value(seq) < 1 ||
		    json_integer_value(seq) > 9999 || !json_is_integer(runs) ||
		    json_integer_value(runs) < 1 ||
		    json_integer_value(runs) > (json_int_t)RS_RUNINDEX_MAX_RUNS) {
			err = rs_error_set(RS_ECORRUPT, "shard %zu of %s line is not "
					   "[\"YYYY-MM\", number, runs]", i + 1, kinds[m].field);
			goto out;
		}
		size_t had = e->count;

		err = entry_add(e, month, (unsigned)json_integer_value(seq),
				(unsigned)json_integer_value(runs));
		if (err)
			goto out;
		if (e->count == had) {
			err = rs_error_set(RS_ECORRUPT, "shard %s/%lld listed twice for one %s",
					   month, (long long)json_integer_value(seq), kinds[m].field);
			goto out;
		}
	}
out:
	json_decref(root);
	if (err)
		rs_map_entry_release(e);
	return err;
}

int rs_map_entry_to_line(struct rs_buf *out, const struct rs_map_entry *e, enum rs_map m)
{
	json_t *o = json_pack("{s:s, s:[]}", kinds[m].field, e->key, "shards");
	json_t *shards = json_object_get(o, "shards");
	int err = 0;

	if (!o)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < e->count; i++) {
		if (json_array_append_new(shards, json_pack("[s, i, i]", e->shards[i].month,
							    (int)e->shards[i].seq,
							    (int)e->shards[i].runs))) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	if (e->more && json_object_set_new(o, "more", json_true())) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_json_dump(out, o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (err)
		goto out;
	err = rs_buf_putc(out, '\n');
out:
	json_decref(o);
	return err;
}

/* The lines of a text: calls `fn` on each non-blank one, with its number, until it returns non-0. */
typedef int (*line_fn)(void *ctx, const char *line, size_t len, size_t lineno);

static int each_line(const char *text, size_t len, line_fn fn, void *ctx)
{
	size_t pos = 0, lineno = 0;
	int r = 0;

	while (pos < len && !r) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, l = end - pos;
		const char *p = text + pos;

		lineno++;
		pos = end + 1;
		while (l > 0 && (p[l - 1] == '\r' || p[l - 1] == ' '))
			l--;
		if (l)
			r = fn(ctx, p, l, lineno);
	}
	return r;
}

/*
 * The parse of a bucket's lines, one after the other: each checked, and
 * in the commit map in strictly increasing order of commit (as add writes
 * them), so that a commit is listed once and a reader may search the
 * bucket's lines as a sorted list.
 */
struct bucket_parse {
	enum rs_map m;
	int bucket;        /* the bucket's number, or -1: not checked */
	char *prev;        /* the key of the line before */
};

/* Line `lineno` of the bucket into `e`; the error names `name` and the line. */
static int parse_next(struct bucket_parse *bp, struct rs_map_entry *e, const char *line,
		      size_t len, const char *name, size_t lineno)
{
	int err = entry_parse(e, line, len, bp->m, bp->bucket);

	if (!err && bp->m == RS_MAP_COMMITS && bp->prev && strcmp(bp->prev, e->key) >= 0) {
		err = rs_error_set(RS_ECORRUPT, "commit %.64s is out of order or listed twice",
				   e->key);
		rs_map_entry_release(e);
	}
	if (err)
		return rs_error_wrap(err, "%s:%zu", name, lineno);
	free(bp->prev);
	bp->prev = strdup(e->key);
	if (!bp->prev) {
		rs_map_entry_release(e);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/* "branches/X/Y.jsonl" (the bucket's two hex digits), "commits/X/Y/Z.jsonl" (three). */
static int bucket_rel(struct rs_buf *rel, enum rs_map m, unsigned b)
{
	if (m == RS_MAP_COMMITS)
		return rs_buf_printf(rel, "%s/%x/%x/%x.jsonl", kinds[m].dir, b >> 8, (b >> 4) & 15,
				     b & 15);
	return rs_buf_printf(rel, "%s/%x/%x.jsonl", kinds[m].dir, b >> 4, b & 15);
}

/* ---- reading: one key's line, the lines of a prefix ----------------------- */

struct lookup {
	struct bucket_parse bp;
	const char *key, *name;
	struct rs_map_entry *out;
	int found, err;
};

static int lookup_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct lookup *lk = ctx;
	struct rs_map_entry e;

	lk->err = parse_next(&lk->bp, &e, line, len, lk->name, lineno);
	if (lk->err)
		return 1;
	if (strcmp(e.key, lk->key) != 0) {
		rs_map_entry_release(&e);
		return 0;
	}
	*lk->out = e;
	lk->found = 1;
	return 1;
}

int rs_map_find(struct rs_map_entry *out, int *found, const char *text, size_t len,
		const char *name, enum rs_map m, const char *key)
{
	struct lookup lk = { { m, -1, NULL }, key, name, out, 0, 0 };

	*found = 0;
	if (m == RS_MAP_COMMITS && (strlen(key) > 64 || !rs_hex_is(key)))
		return rs_error_set(RS_EUSAGE, "'%s' is not a commit id", key);
	if (m == RS_MAP_COMMITS)
		lk.bp.bucket = (int)bucket_of(m, key);
	each_line(text, len, lookup_line, &lk);
	free(lk.bp.prev);
	*found = !lk.err && lk.found;
	return lk.err;
}

/* Bucket `b` of map `m` in index/ `sub`: NULL (and 0) when it is not there. */
static int read_bucket(git_blob **blob, struct rs_buf *label, git_repository *repo, git_tree *sub,
		       enum rs_map m, unsigned b)
{
	struct rs_buf rel = RS_BUF_INIT;
	int err;

	err = bucket_rel(&rel, m, b);
	if (!err)
		err = read_sub_file(blob, repo, sub, rel.ptr, RS_BRANCHMAP_MAX_BUCKET, label);
	if (err == RS_ENOTFOUND) {
		/* no bucket: no key of it has a run */
		rs_error_clear();
		err = 0;
	}
	rs_buf_release(&rel);
	return err;
}

int rs_branchmap_lookup(struct rs_map_entry *out, int *found, git_repository *repo,
			git_tree *sub, const char *branch)
{
	struct rs_buf label = RS_BUF_INIT;
	git_blob *blob = NULL;
	int err;

	*found = 0;
	err = read_bucket(&blob, &label, repo, sub, RS_MAP_BRANCHES,
			  bucket_of(RS_MAP_BRANCHES, branch));
	if (!err && blob)
		err = rs_map_find(out, found, git_blob_rawcontent(blob),
				  (size_t)git_blob_rawsize(blob), label.ptr, RS_MAP_BRANCHES, branch);
	git_blob_free(blob);
	rs_buf_release(&label);
	return err;
}

struct prefix_scan {
	struct bucket_parse bp;
	const char *prefix, *name;
	struct rs_map_entries *out;
	int err;
};

static int prefix_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct prefix_scan *ps = ctx;
	struct rs_map_entry e;

	ps->err = parse_next(&ps->bp, &e, line, len, ps->name, lineno);
	if (ps->err)
		return 1;
	if (!starts_with_ci(e.key, ps->prefix)) {
		rs_map_entry_release(&e);
		return 0;
	}
	ps->err = rs_array_grow(&ps->out->entries, &ps->out->alloc, ps->out->count + 1,
				sizeof(*ps->out->entries), 4);
	if (ps->err) {
		rs_map_entry_release(&e);
		return 1;
	}
	ps->out->entries[ps->out->count++] = e;
	return 0;
}

int rs_commitmap_prefix(struct rs_map_entries *out, git_repository *repo, git_tree *sub,
			const char *prefix)
{
	struct prefix_scan ps = { { RS_MAP_COMMITS, 0, NULL }, prefix, NULL, out, 0 };
	struct rs_buf label = RS_BUF_INIT;
	git_blob *blob = NULL;
	int err;

	if (strlen(prefix) < RS_COMMITMAP_DIGITS || strlen(prefix) > 64 || !rs_hex_is(prefix))
		return rs_error_set(RS_EUSAGE, "'%s' is not %d to 64 hex digits of a commit", prefix,
				    RS_COMMITMAP_DIGITS);
	ps.bp.bucket = (int)bucket_of(RS_MAP_COMMITS, prefix);
	err = read_bucket(&blob, &label, repo, sub, RS_MAP_COMMITS, (unsigned)ps.bp.bucket);
	if (!err && blob) {
		ps.name = label.ptr;
		each_line(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), prefix_line, &ps);
		err = ps.err;
	}
	free(ps.bp.prev);
	git_blob_free(blob);
	rs_buf_release(&label);
	return err;
}

/* The commits of one bucket, sorted (the lines are): what rs_commitmap_first searches. */
struct key_list {
	struct bucket_parse bp;
	const char *name;
	char **keys;
	size_t count, alloc;
	int loaded, err;
};

static int key_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct key_list *kl = ctx;
	struct rs_map_entry e;

	kl->err = parse_next(&kl->bp, &e, line, len, kl->name, lineno);
	if (kl->err)
		return 1;
	kl->err = rs_array_grow(&kl->keys, &kl->alloc, kl->count + 1, sizeof(*kl->keys), 64);
	if (!kl->err)
		kl->keys[kl->count++] = e.key;
	else
		free(e.key);
	e.key = NULL;
	rs_map_entry_release(&e);
	return kl->err != 0;
}

static int cmp_key(const void *k, const void *elem)
{
	return strcmp(k, *(char *const *)elem);
}

int rs_commitmap_first(size_t *at, int *found, git_repository *repo, git_tree *sub,
		       const char *const *commits, size_t n)
{
	struct key_list *lists = calloc(RS_COMMITMAP_BUCKETS, sizeof(*lists));
	struct rs_buf label = RS_BUF_INIT;
	int err = 0;

	*found = 0;
	if (!lists)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < n && !err && !*found; i++) {
		struct key_list *kl;
		git_blob *blob = NULL;

		if (strlen(commits[i]) < RS_COMMITMAP_DIGITS || strlen(commits[i]) > 64 ||
		    !rs_hex_is(commits[i])) {
			err = rs_error_set(RS_EUSAGE, "'%s' is not a commit id", commits[i]);
			break;
		}
		kl = &lists[bucket_of(RS_MAP_COMMITS, commits[i])];
		if (!kl->loaded) {
			kl->loaded = 1;
			kl->bp.m = RS_MAP_COMMITS;
			kl->bp.bucket = (int)(kl - lists);
			rs_buf_clear(&label);
			err = read_bucket(&blob, &label, repo, sub, RS_MAP_COMMITS,
					  (unsigned)kl->bp.bucket);
			if (!err && blob) {
				kl->name = label.ptr;
				each_line(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					  key_line, kl);
				err = kl->err;
			}
			git_blob_free(blob);
			free(kl->bp.prev);
			kl->bp.prev = NULL;
		}
		if (!err && kl->count &&
		    bsearch(commits[i], kl->keys, kl->count, sizeof(*kl->keys), cmp_key)) {
			*at = i;
			*found = 1;
		}
	}
	for (unsigned b = 0; b < RS_COMMITMAP_BUCKETS; b++) {
		for (size_t k = 0; k < lists[b].count; k++)
			free(lists[b].keys[k]);
		free(lists[b].keys);
	}
	free(lists);
	rs_buf_release(&label);
	if (err)
		*found = 0;
	return err;
}

/* ---- writing: the buckets an add changes ------------------------------- */

struct bucket {
	struct rs_map_entry *entries;
	size_t count, alloc;
	int loaded, touched;
};

struct writer {
	enum rs_map m;
	git_repository *repo;
	git_tree *sub;
	struct bucket buckets[RS_COMMITMAP_BUCKETS]; /* the first kinds[m].buckets */
	int full;          /* building the map from every shard: the tree's buckets are not read */
	const char *name;  /* of the bucket being parsed */
	struct bucket *into;
	struct bucket_parse bp;
	int err;
};

static int bucket_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct writer *w = ctx;
	struct bucket *b = w->into;

	w->err = rs_array_grow(&b->entries, &b->alloc, b->count + 1, sizeof(*b->entries), 8);
	if (!w->err)
		w->err = parse_next(&w->bp, &b->entries[b->count], line, len, w->name, lineno);
	if (w->err)
		return 1;
	b->count++;
	return 0;
}

/* Bucket `i`, read from the tree the first time unless building from scratch. */
static int bucket_load(struct writer *w, unsigned i)
{
	struct bucket *b = &w->buckets[i];
	struct rs_buf label = RS_BUF_INIT;
	git_blob *blob = NULL;
	int err = 0;

	if (b->loaded)
		return 0;
	b->loaded = 1;
	if (w->full || !w->sub)
		return 0;
	err = read_bucket(&blob, &label, w->repo, w->sub, w->m, i);
	if (!err && blob) {
		w->name = label.ptr;
		w->into = b;
		w->err = 0;
		w->bp.m = w->m;
		w->bp.bucket = w->m == RS_MAP_COMMITS ? (int)i : -1;
		each_line(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), bucket_line, w);
		free(w->bp.prev);
		w->bp.prev = NULL;
		err = w->err;
	}
	git_blob_free(blob);
	rs_buf_release(&label);
	return err;
}

/* One run of `key` (its branch or commit) in shard (month, seq) into the map. */
static int writer_add(struct writer *w, const char *key, const char *month, unsigned seq)
{
	unsigned i;
	struct bucket *b;
	struct rs_map_entry *e = NULL;
	int err;

	err = key_check(w->m, key, -1);
	if (err)
		return err;
	i = bucket_of(w->m, key);
	b = &w->buckets[i];
	err = bucket_load(w, i);
	if (err)
		return err;
	b->touched = 1;
	for (size_t k = 0; k < b->count && !e; k++)
		if (!strcmp(b->entries[k].key, key))
			e = &b->entries[k];
	if (!e) {
		err = rs_array_grow(&b->entries, &b->alloc, b->count + 1, sizeof(*b->entries), 8);
		if (err)
			return err;
		e = &b->entries[b->count];
		memset(e, 0, sizeof(*e));
		e->key = strdup(key);
		if (!e->key)
			return rs_error_set(RS_EGENERIC, "out of memory");
		b->count++;
	}
	return entry_add(e, month, seq, 1);
}

static int cmp_entries(const void *a, const void *b)
{
	return strcmp(((const struct rs_map_entry *)a)->key, ((const struct rs_map_entry *)b)->key);
}

static int push_file(struct rs_map_files *out, struct rs_buf **path, struct rs_buf **text)
{
	int err = rs_array_grow(&out->files, &out->alloc, out->count + 1, sizeof(*out->files), 4);

	if (err)
		return err;
	rs_buf_init(&out->files[out->count].path, 0);
	rs_buf_init(&out->files[out->count].text, RS_BRANCHMAP_MAX_BUCKET);
	*path = &out->files[out->count].path;
	*text = &out->files[out->count].text;
	out->count++;
	return 0;
}

/* The text of every bucket touched (and, building from scratch, of every one the tree has). */
static int writer_emit(struct rs_map_files *out, struct writer *w, const char *covered)
{
	struct rs_buf *path, *text;
	json_t *cov = NULL;
	int err = 0;

	for (unsigned i = 0; i < kinds[w->m].buckets && !err; i++) {
		struct bucket *b = &w->buckets[i];

		if (w->full && !b->touched && w->sub) {
			struct rs_buf rel = RS_BUF_INIT;
			git_tree_entry *te = NULL;

			/* a bucket of an older map that no run of this one fills: emptied */
			err = bucket_rel(&rel, w->m, i);
			if (!err)
				err = rs_repo_tree_entry_bypath(&te, w->sub, rel.ptr);
			if (!err)
				b->touched = 1;
			if (err == RS_ENOTFOUND) {
				rs_error_clear();
				err = 0;
			}
			git_tree_entry_free(te);
			rs_buf_release(&rel);
		}
		if (err || !b->touched)
			continue;
		qsort(b->entries, b->count, sizeof(*b->entries), cmp_entries);
		err = push_file(out, &path, &text);
		if (!err)
			err = rs_buf_puts(path, "index/");
		if (!err)
			err = bucket_rel(path, w->m, i);
		for (size_t k = 0; k < b->count && !err; k++) {
			entry_trim(&b->entries[k]);
			err = rs_map_entry_to_line(text, &b->entries[k], w->m);
		}
	}
	if (err)
		return err;
	cov = json_pack("{s:s}", "run", covered);
	err = push_file(out, &path, &text);
	if (err)
		goto out;
	err = rs_buf_printf(path, "index/%s/covered.json", kinds[w->m].dir);
	if (err)
		goto out;
	err = rs_json_dump(text, cov, JSON_COMPACT); /* cov NULL: out of memory */
	if (err)
		goto out;
	err = rs_buf_putc(text, '\n');
out:
	json_decref(cov);
	return err;
}

/* "index/YYYY-MM.jsonl" (1) or "index/YYYY-MM/NNNN.jsonl" (NNNN): month and number. */
static int parse_shard_path(char month[8], unsigned *seq, const char *p)
{
	size_t n = strlen(p);

	if (n < 19 || strncmp(p, "index/", 6) != 0 || !rs_runindex_is_month(p + 6))
		goto bad;
	memcpy(month, p + 6, 7);
	month[7] = '\0';
	if (n == 19 && !strcmp(p + 13, ".jsonl")) {
		*seq = 1;
		return 0;
	}
	if (n != 24 || p[13] != '/' || strcmp(p + 18, ".jsonl") != 0)
		goto bad;
	*seq = 0;
	for (int i = 14; i < 18; i++) {
		if (p[i] < '0' || p[i] > '9')
			goto bad;
		*seq = *seq * 10 + (unsigned)(p[i] - '0');
	}
	if (*seq >= 2)
		return 0;
bad:
	return rs_error_set(RS_EUSAGE, "'%s' is not an index shard", p);
}

/* The runs of one shard the map does not cover yet, newest first; stops at the covered run. */
struct catchup {
	struct writer *w;
	const struct rs_shard_ref *ref;
	const char *covered; /* NULL: every run */
	const char *name;
	/* the shard's lines, to be walked from the last */
	struct { const char *p; size_t len, lineno; } *lines;
	size_t count, alloc;
	int err;
};

static int collect_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct catchup *c = ctx;

	c->err = rs_array_grow(&c->lines, &c->alloc, c->count + 1, sizeof(*c->lines), 128);
	if (c->err)
		return 1;
	c->lines[c->count].p = line;
	c->lines[c->count].len = len;
	c->lines[c->count].lineno = lineno;
	c->count++;
	return 0;
}

/* Add the runs of the shard after the covered one to the map; `*found` when it was there. */
static int catch_up_shard(struct catchup *c, const char *text, size_t len, int *found)
{
	int err = 0;

	*found = 0;
	c->count = 0;
	c->err = 0;
	each_line(text, len, collect_line, c);
	if (c->err)
		return c->err;
	for (size_t i = c->count; i-- > 0 && !err && !*found;) {
		struct rs_run_entry e;

		err = rs_run_entry_parse(&e, c->lines[i].p, c->lines[i].len);
		if (err)
			return rs_error_wrap(err, "%s:%zu", c->name, c->lines[i].lineno);
		if (c->covered && !strcmp(e.id, c->covered))
			*found = 1;
		else
			err = writer_add(c->w, c->w->m == RS_MAP_COMMITS ? e.commit : e.branch,
					 c->ref->month, c->ref->seq);
		rs_run_entry_release(&e);
	}
	return err;
}

/* The shards newest first into the map, back to the covered run (`*found`) or all of them. */
static int catch_up(struct catchup *c, git_repository *repo, struct rs_shard_list *l,
		    int *found)
{
	struct rs_buf label = RS_BUF_INIT;
	int err = 0;

	*found = 0;
	for (size_t k = 0; !*found && !err; k++) {
		git_blob *blob = NULL;

		err = rs_runindex_list_reach(l, k); /* older months read as needed */
		if (err || k >= l->count)
			break;

		rs_buf_clear(&label);
		err = rs_runindex_read_shard(&blob, repo, &l->refs[k], &label);
		c->ref = &l->refs[k];
		c->name = label.ptr;
		if (!err)
			err = catch_up_shard(c, git_blob_rawcontent(blob),
					     (size_t)git_blob_rawsize(blob), found);
		git_blob_free(blob);
	}
	rs_buf_release(&label);
	return err;
}

/* Forget every bucket: the map is built again from every shard. */
static void writer_reset(struct writer *w)
{
	for (unsigned i = 0; i < RS_COMMITMAP_BUCKETS; i++) {
		struct bucket *b = &w->buckets[i];

		for (size_t k = 0; k < b->count; k++)
			rs_map_entry_release(&b->entries[k]);
		b->count = 0;
		b->loaded = b->touched = 0;
	}
	w->full = 1;
}

int rs_map_record(struct rs_map_files *out, struct rs_repo *repo, const struct rs_run_entry *e,
		  const char *shard_path, enum rs_map m)
{
	struct writer *w = calloc(1, sizeof(*w));
	struct rs_buf covered = RS_BUF_INIT;
	struct rs_shard_list l;
	struct catchup c;
	char month[8] = "";
	unsigned seq = 0;
	int err, found = 0;

	memset(&c, 0, sizeof(c));
	memset(&l, 0, sizeof(l));
	if (!w)
		return rs_error_set(RS_EGENERIC, "out of memory");
	w->m = m;
	w->repo = repo->git;
	err = parse_shard_path(month, &seq, shard_path);
	if (!err)
		err = rs_runindex_tree(&w->sub, repo->git, NULL);
	if (err)
		goto out;
	if (w->sub) {
		err = rs_map_covered(&covered, repo->git, w->sub, m);
		if (err == RS_ENOTFOUND) {
			rs_error_clear(); /* no map yet: built from every shard */
			err = 0;
		}
		if (!err)
			err = rs_runindex_list_shards(&l, repo->git, w->sub, NULL);
		if (err)
			goto out;
		c.w = w;
		c.covered = covered.len ? covered.ptr : NULL;
		w->full = !c.covered;
		err = catch_up(&c, repo->git, &l, &found);
		if (!err && c.covered && !found) {
			/* the covered run is in no shard (a history rewritten under the map) */
			writer_reset(w);
			c.covered = NULL;
			err = catch_up(&c, repo->git, &l, &found);
		}
		if (err)
			goto out;
	}
	/* no index yet: the map starts with this run */
	err = writer_add(w, m == RS_MAP_COMMITS ? e->commit : e->branch, month, seq);
	if (!err)
		err = writer_emit(out, w, e->id);
out:
	if (err)
		rs_map_files_release(out);
	writer_reset(w);
	for (unsigned i = 0; i < RS_COMMITMAP_BUCKETS; i++)
		free(w->buckets[i].entries);
	git_tree_free(w->sub);
	free(w);
	free(c.lines);
	rs_runindex_list_release(&l);
	rs_buf_release(&covered);
	return err;
}
