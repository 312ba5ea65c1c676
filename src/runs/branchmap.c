/*
 * The branch map of the run index (branchmap.h, docs/run-format.md).
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
 * Why covered.json: an add by an older results appends a run without
 * touching the map. The map is then true of the runs up to the covered
 * one, and whatever came after it is in the shards newer than that run's
 * (readers read those in full, as they did before the map; the next add
 * adds those runs to the map).
 */
#include "runs/branchmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/json.h"
#include "runs/runindex_internal.h"
#include "util/array.h"

#define COVERED_PATH "branches/covered.json" /* under index/ */

void rs_branch_entry_release(struct rs_branch_entry *e)
{
	if (!e)
		return;
	free(e->branch);
	free(e->shards);
	memset(e, 0, sizeof(*e));
}

void rs_branchmap_files_release(struct rs_branchmap_files *f)
{
	for (size_t i = 0; i < f->count; i++) {
		rs_buf_release(&f->files[i].path);
		rs_buf_release(&f->files[i].text);
	}
	free(f->files);
	memset(f, 0, sizeof(*f));
}

/* FNV-1a (32 bits) of the branch name; its low byte is the bucket. Never change it. */
static unsigned bucket_of(const char *branch)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)branch; *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h & (RS_BRANCHMAP_BUCKETS - 1);
}

/*
 * The blob at `rel` under index/ `sub`, through `max`; RS_ENOTFOUND when
 * there is none. `label` gets "index/<rel>" for messages.
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
	if (git_tree_entry_bypath(&te, sub, rel) < 0) {
		git_error_clear();
		return rs_error_set(RS_ENOTFOUND, "no '%s'", label->ptr);
	}
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
		err = rs_error_set(RS_ECORRUPT, "'%s' is not a file", label->ptr);
	else
		err = rs_repo_blob_capped(blob, repo, git_tree_entry_id(te), max, label->ptr);
	git_tree_entry_free(te);
	return err;
}

int rs_branchmap_covered(struct rs_buf *id, git_repository *repo, git_tree *sub)
{
	struct rs_buf label = RS_BUF_INIT;
	git_blob *blob = NULL;
	json_t *root = NULL;
	json_error_t jerr;
	const char *run;
	int err;

	err = read_sub_file(&blob, repo, sub, COVERED_PATH, RS_BRANCHMAP_MAX_COVERED, &label);
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
	rs_buf_release(&label);
	return err;
}

/* Insert `runs` runs in shard (month, seq) into `e`, newest first. */
static int entry_add(struct rs_branch_entry *e, const char *month, unsigned seq, unsigned runs)
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
static void entry_trim(struct rs_branch_entry *e)
{
	size_t sum = 0, keep = 0;

	while (keep < e->count && sum < RS_BRANCHMAP_RUNS)
		sum += e->shards[keep++].runs;
	if (keep < e->count)
		e->more = 1;
	e->count = keep;
}

/* One line of a bucket into `e` (the caller's), every field checked. */
static int entry_parse(struct rs_branch_entry *e, const char *line, size_t len)
{
	json_t *root, *shards, *s;
	json_error_t jerr;
	const char *branch;
	size_t i;
	int err = 0;

	memset(e, 0, sizeof(*e));
	if (len > RS_RUNINDEX_MAX_LINE)
		return rs_error_set(RS_ECORRUPT, "line longer than %u bytes", RS_RUNINDEX_MAX_LINE);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root && json_error_code(&jerr) == json_error_out_of_memory)
		return rs_error_set(RS_EGENERIC, "out of memory");
	branch = json_string_value(json_object_get(root, "branch"));
	shards = json_object_get(root, "shards");
	if (!branch || !*branch || strlen(branch) > 1024 || !json_is_array(shards) ||
	    json_array_size(shards) > RS_BRANCHMAP_MAX_SHARDS) {
		err = rs_error_set(RS_ECORRUPT, "not a branch line: %s",
				   root ? "a field is missing or of the wrong type" : jerr.text);
		goto out;
	}
	e->branch = strdup(branch);
	e->more = json_is_true(json_object_get(root, "more"));
	if (!e->branch) {
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
			err = rs_error_set(RS_ECORRUPT, "shard %zu of branch line is not "
					   "[\"YYYY-MM\", number, runs]", i + 1);
			goto out;
		}
		size_t had = e->count;

		err = entry_add(e, month, (unsigned)json_integer_value(seq),
				(unsigned)json_integer_value(runs));
		if (err)
			goto out;
		if (e->count == had) {
			err = rs_error_set(RS_ECORRUPT, "shard %s/%lld listed twice for one branch",
					   month, (long long)json_integer_value(seq));
			goto out;
		}
	}
out:
	json_decref(root);
	if (err)
		rs_branch_entry_release(e);
	return err;
}

int rs_branch_entry_to_line(struct rs_buf *out, const struct rs_branch_entry *e)
{
	json_t *o = json_pack("{s:s, s:[]}", "branch", e->branch, "shards");
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

/* ---- reading: one branch's line ---------------------------------------- */

struct lookup {
	const char *branch, *name;
	struct rs_branch_entry *out;
	int found, err;
};

static int lookup_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct lookup *lk = ctx;
	struct rs_branch_entry e;

	lk->err = entry_parse(&e, line, len);
	if (lk->err) {
		lk->err = rs_error_wrap(lk->err, "%s:%zu", lk->name, lineno);
		return 1;
	}
	if (strcmp(e.branch, lk->branch) != 0) {
		rs_branch_entry_release(&e);
		return 0;
	}
	*lk->out = e;
	lk->found = 1;
	return 1;
}

static int bucket_rel(struct rs_buf *rel, unsigned b)
{
	return rs_buf_printf(rel, "branches/%x/%x.jsonl", b >> 4, b & 15);
}

int rs_branchmap_find(struct rs_branch_entry *out, int *found, const char *text, size_t len,
		      const char *name, const char *branch)
{
	struct lookup lk = { branch, name, out, 0, 0 };

	*found = 0;
	each_line(text, len, lookup_line, &lk);
	*found = !lk.err && lk.found;
	return lk.err;
}

int rs_branchmap_lookup(struct rs_branch_entry *out, int *found, git_repository *repo,
			git_tree *sub, const char *branch)
{
	struct rs_buf rel = RS_BUF_INIT, label = RS_BUF_INIT;
	git_blob *blob = NULL;
	int err;

	*found = 0;
	err = bucket_rel(&rel, bucket_of(branch));
	if (!err)
		err = read_sub_file(&blob, repo, sub, rel.ptr, RS_BRANCHMAP_MAX_BUCKET, &label);
	if (err == RS_ENOTFOUND) {
		/* no bucket: no branch of it has a run */
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	err = rs_branchmap_find(out, found, git_blob_rawcontent(blob),
				(size_t)git_blob_rawsize(blob), label.ptr, branch);
out:
	git_blob_free(blob);
	rs_buf_release(&rel);
	rs_buf_release(&label);
	return err;
}

/* ---- writing: the buckets an add changes ------------------------------- */

struct bucket {
	struct rs_branch_entry *entries;
	size_t count, alloc;
	int loaded, touched;
};

struct writer {
	git_repository *repo;
	git_tree *sub;
	struct bucket buckets[RS_BRANCHMAP_BUCKETS];
	int full;          /* building the map from every shard: the tree's buckets are not read */
	const char *name;  /* of the bucket being parsed */
	struct bucket *into;
	int err;
};

static int bucket_line(void *ctx, const char *line, size_t len, size_t lineno)
{
	struct writer *w = ctx;
	struct bucket *b = w->into;

	w->err = rs_array_grow(&b->entries, &b->alloc, b->count + 1, sizeof(*b->entries), 8);
	if (!w->err)
		w->err = entry_parse(&b->entries[b->count], line, len);
	if (w->err) {
		w->err = rs_error_wrap(w->err, "%s:%zu", w->name, lineno);
		return 1;
	}
	b->count++;
	return 0;
}

/* Bucket `i`, read from the tree the first time unless building from scratch. */
static int bucket_load(struct writer *w, unsigned i)
{
	struct bucket *b = &w->buckets[i];
	struct rs_buf rel = RS_BUF_INIT, label = RS_BUF_INIT;
	git_blob *blob = NULL;
	int err = 0;

	if (b->loaded)
		return 0;
	b->loaded = 1;
	if (w->full || !w->sub)
		return 0;
	err = bucket_rel(&rel, i);
	if (!err)
		err = read_sub_file(&blob, w->repo, w->sub, rel.ptr, RS_BRANCHMAP_MAX_BUCKET, &label);
	if (err == RS_ENOTFOUND) {
		rs_error_clear(); /* a bucket none of whose branches has run yet */
		err = 0;
	} else if (!err) {
		w->name = label.ptr;
		w->into = b;
		w->err = 0;
		each_line(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), bucket_line, w);
		err = w->err;
	}
	git_blob_free(blob);
	rs_buf_release(&rel);
	rs_buf_release(&label);
	return err;
}

/* One run of `branch` in shard (month, seq) into the map. */
static int writer_add(struct writer *w, const char *branch, const char *month, unsigned seq)
{
	unsigned i = bucket_of(branch);
	struct bucket *b = &w->buckets[i];
	struct rs_branch_entry *e = NULL;
	int err;

	err = bucket_load(w, i);
	if (err)
		return err;
	b->touched = 1;
	for (size_t k = 0; k < b->count && !e; k++)
		if (!strcmp(b->entries[k].branch, branch))
			e = &b->entries[k];
	if (!e) {
		err = rs_array_grow(&b->entries, &b->alloc, b->count + 1, sizeof(*b->entries), 8);
		if (err)
			return err;
		e = &b->entries[b->count];
		memset(e, 0, sizeof(*e));
		e->branch = strdup(branch);
		if (!e->branch)
			return rs_error_set(RS_EGENERIC, "out of memory");
		b->count++;
	}
	return entry_add(e, month, seq, 1);
}

static int cmp_entries(const void *a, const void *b)
{
	return strcmp(((const struct rs_branch_entry *)a)->branch,
		      ((const struct rs_branch_entry *)b)->branch);
}

static int push_file(struct rs_branchmap_files *out, struct rs_buf **path, struct rs_buf **text)
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
static int writer_emit(struct rs_branchmap_files *out, struct writer *w, const char *covered)
{
	struct rs_buf *path, *text;
	json_t *cov = NULL;
	int err = 0;

	for (unsigned i = 0; i < RS_BRANCHMAP_BUCKETS && !err; i++) {
		struct bucket *b = &w->buckets[i];

		if (w->full && !b->touched && w->sub) {
			struct rs_buf rel = RS_BUF_INIT;
			git_tree_entry *te = NULL;

			/* a bucket of an older map that no run of this one fills: emptied */
			err = bucket_rel(&rel, i);
			if (!err && git_tree_entry_bypath(&te, w->sub, rel.ptr) == 0)
				b->touched = 1;
			git_error_clear();
			git_tree_entry_free(te);
			rs_buf_release(&rel);
		}
		if (err || !b->touched)
			continue;
		qsort(b->entries, b->count, sizeof(*b->entries), cmp_entries);
		err = push_file(out, &path, &text);
		if (!err)
			err = rs_buf_printf(path, "index/branches/%x/%x.jsonl", i >> 4, i & 15);
		for (size_t k = 0; k < b->count && !err; k++) {
			entry_trim(&b->entries[k]);
			err = rs_branch_entry_to_line(text, &b->entries[k]);
		}
	}
	if (err)
		return err;
	cov = json_pack("{s:s}", "run", covered);
	err = push_file(out, &path, &text);
	if (err)
		goto out;
	err = rs_buf_puts(path, "index/" COVERED_PATH);
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
			err = writer_add(c->w, e.branch, c->ref->month, c->ref->seq);
		rs_run_entry_release(&e);
	}
	return err;
}

/* The shards newest first into the map, back to the covered run (`*found`) or all of them. */
static int catch_up(struct catchup *c, git_repository *repo, const struct rs_shard_list *l,
		    int *found)
{
	struct rs_buf label = RS_BUF_INIT;
	int err = 0;

	*found = 0;
	for (size_t k = 0; k < l->count && !*found && !err; k++) {
		git_blob *blob = NULL;

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
	for (unsigned i = 0; i < RS_BRANCHMAP_BUCKETS; i++) {
		struct bucket *b = &w->buckets[i];

		for (size_t k = 0; k < b->count; k++)
			rs_branch_entry_release(&b->entries[k]);
		b->count = 0;
		b->loaded = b->touched = 0;
	}
	w->full = 1;
}

int rs_branchmap_record(struct rs_branchmap_files *out, struct rs_repo *repo,
			const struct rs_run_entry *e, const char *shard_path)
{
	struct writer *w = calloc(1, sizeof(*w));
	struct rs_buf covered = RS_BUF_INIT;
	struct rs_shard_list l = { NULL, 0, 0 };
	struct catchup c;
	char month[8] = "";
	unsigned seq = 0;
	int err, found = 0;

	memset(&c, 0, sizeof(c));
	if (!w)
		return rs_error_set(RS_EGENERIC, "out of memory");
	w->repo = repo->git;
	err = parse_shard_path(month, &seq, shard_path);
	if (!err)
		err = rs_runindex_tree(&w->sub, repo->git, NULL);
	if (err)
		goto out;
	if (w->sub) {
		err = rs_branchmap_covered(&covered, repo->git, w->sub);
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
	err = writer_add(w, e->branch, month, seq);
	if (!err)
		err = writer_emit(out, w, e->id);
out:
	if (err)
		rs_branchmap_files_release(out);
	writer_reset(w);
	for (unsigned i = 0; i < RS_BRANCHMAP_BUCKETS; i++)
		free(w->buckets[i].entries);
	git_tree_free(w->sub);
	free(w);
	free(c.lines);
	free(l.refs);
	rs_buf_release(&covered);
	return err;
}
