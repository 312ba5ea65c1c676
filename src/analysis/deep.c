/*
 * Call-path diff from raw sessions.
 *
 * Each session is streamed once into a trie of call paths: node = (parent,
 * function key), holding the time of every record whose stack passes
 * through it (total) and of those where it is the leaf (self). Children
 * are found through one hash table keyed "parent/key"; consecutive
 * records share most of their stack (9 to 10 leading frames on real
 * sessions), so the previous record's node chain is reused up to the
 * first differing frame and only the tail is looked up.
 *
 * The heavy paths of both tries (total >= min_share of the run) are then
 * flattened to "a > b > c" strings and matched by string.
 */
#include "analysis/deep.h"
#include "analysis/culprit.h"
#include "session/session.h"
#include "runrec/runrec_json.h"
#include "session/summary.h"
#include "results/error.h"
#include "util/array.h"
#include "results/escape.h"
#include "results/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

struct node {
	size_t parent;     /* index; (size_t)-1 for a root */
	size_t key;        /* index into the key table */
	double total, self;
};

struct trie {
	struct node *nodes;
	size_t n, alloc;
	json_t *children;  /* "parent/key" -> node index */
	json_t *keys;      /* "name\x1ffile" -> key index */
	char **labels;     /* key index -> display label "name (file)" */
	size_t *name_lens; /* key index -> bytes of "name" in its label */
	size_t n_labels, labels_alloc;
	size_t *fkey;      /* parser function id -> key index + 1 (0: unset) */
	size_t fkey_alloc;
	uint32_t *prev;    /* previous record's frame ids ... */
	size_t *prev_nodes;/* ... and their nodes */
	size_t prev_depth, prev_alloc;
	double time;
	struct rs_buf scratch;
	const json_t *renames; /* base trie: "old\x1ffile" -> "new" (borrowed) */
};

static void trie_release(struct trie *t)
{
	size_t i;

	for (i = 0; i < t->n_labels; i++)
		free(t->labels[i]);
	free(t->labels);
	free(t->name_lens);
	free(t->nodes);
	free(t->fkey);
	free(t->prev);
	free(t->prev_nodes);
	json_decref(t->children);
	json_decref(t->keys);
	rs_buf_release(&t->scratch);
}

static int key_of_function(struct trie *t, const struct rs_session_parser *p,
			   uint32_t fid, size_t *out)
{
	const struct rs_session_function *f;
	const char *file, *name;
	json_t *v;

	if (rs_array_grow(&t->fkey, &t->fkey_alloc, (size_t)fid + 1, sizeof(*t->fkey), 1024))
		return rs_error_last();
	if (t->fkey[fid]) {
		*out = t->fkey[fid] - 1;
		return 0;
	}
	f = rs_session_parser_function(p, fid);
	name = f->function;
	file = strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file;
	rs_buf_clear(&t->scratch);
	if (rs_buf_printf(&t->scratch, "%s\x1f%s", f->function, f->file))
		return rs_error_set(RS_EGENERIC, "out of memory");
	/* a function renamed in the head is known by its new name in the
	 * base too, so that its paths match instead of one vanishing and
	 * one appearing */
	if (t->renames && json_is_string(json_object_get(t->renames, t->scratch.ptr))) {
		name = json_string_value(json_object_get(t->renames, t->scratch.ptr));
		rs_buf_clear(&t->scratch);
		if (rs_buf_printf(&t->scratch, "%s\x1f%s", name, f->file))
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	v = json_object_get(t->keys, t->scratch.ptr);
	if (v) {
		*out = (size_t)json_integer_value(v);
	} else {
		if (t->n_labels == t->labels_alloc) {
			/* Two arrays, one capacity: both grow from it to the same size. */
			size_t na = t->labels_alloc;

			if (rs_array_grow(&t->labels, &na, t->n_labels + 1, sizeof(*t->labels), 256))
				return rs_error_last();
			na = t->labels_alloc;
			if (rs_array_grow(&t->name_lens, &na, t->n_labels + 1, sizeof(*t->name_lens), 256))
				return rs_error_last();
			t->labels_alloc = na;
		}
		if (json_object_set_new(t->keys, t->scratch.ptr, json_integer((json_int_t)t->n_labels)))
			return rs_error_set(RS_EGENERIC, "out of memory");
		rs_buf_clear(&t->scratch);
		if (rs_buf_printf(&t->scratch, "%s (%s)", name, file))
			return rs_error_set(RS_EGENERIC, "out of memory");
		t->labels[t->n_labels] = rs_buf_detach(&t->scratch, NULL);
		t->name_lens[t->n_labels] = strlen(name);
		*out = t->n_labels++;
	}
	t->fkey[fid] = *out + 1;
	return 0;
}

static int child_of(struct trie *t, size_t parent, size_t key, size_t *out)
{
	char k[48];
	json_t *v;

	snprintf(k, sizeof(k), "%zd/%zu", parent == (size_t)-1 ? (ssize_t)-1 : (ssize_t)parent, key);
	v = json_object_get(t->children, k);
	if (v) {
		*out = (size_t)json_integer_value(v);
		return 0;
	}
	if (rs_array_grow(&t->nodes, &t->alloc, t->n + 1, sizeof(*t->nodes), 1024))
		return rs_error_last();
	t->nodes[t->n] = (struct node){ parent, key, 0, 0 };
	if (json_object_set_new(t->children, k, json_integer((json_int_t)t->n)))
		return rs_error_set(RS_EGENERIC, "out of memory");
	*out = t->n++;
	return 0;
}

static int on_sample(void *ctx, const struct rs_session_parser *p,
		     const uint32_t *frames, size_t depth, double time)
{
	struct trie *t = ctx;
	size_t same = 0, i, node = 0;
	int err;

	if (!depth)
		return 0;
	if (depth > t->prev_alloc) {
		/* Two arrays, one capacity: both grow from it to the same size. */
		size_t na = t->prev_alloc;

		err = rs_array_grow(&t->prev, &na, depth, sizeof(*t->prev), 64);
		if (err)
			return err;
		na = t->prev_alloc;
		err = rs_array_grow(&t->prev_nodes, &na, depth, sizeof(*t->prev_nodes), 64);
		if (err)
			return err;
		t->prev_alloc = na;
	}
	/* Frames with the same id are the same function: the previous
	 * record's nodes hold for the common prefix. */
	while (same < depth && same < t->prev_depth && frames[same] == t->prev[same])
		same++;
	for (i = same; i < depth; i++) {
		size_t key = 0;
		const struct rs_session_frame *fr = rs_session_parser_frame(p, frames[i]);

		err = key_of_function(t, p, fr->function_id, &key);
		if (err)
			return err;
		err = child_of(t, i ? t->prev_nodes[i - 1] : (size_t)-1, key, &node);
		if (err)
			return err;
		t->prev[i] = frames[i];
		t->prev_nodes[i] = node;
	}
	t->prev_depth = depth;
	for (i = 0; i < depth; i++)
		t->nodes[t->prev_nodes[i]].total += time;
	t->nodes[t->prev_nodes[depth - 1]].self += time;
	t->time += time;
	return 0;
}

/*
 * Stream the session at `path` into trie `t`. With `summary`, the same
 * single pass also summarises it (session/summary.h) with its whole call
 * tree (RS_DEEP_SUMMARY_DEPTH levels, RS_SUMMARY_MAX_NODES nodes), for
 * the culprits (the stored summary's tree stops at 0.5% and 40 levels).
 */
static int build(struct trie *t, const char *path, const json_t *renames, json_t **summary)
{
	struct rs_session_callbacks cb = { 0 };
	struct rs_summary_options so = { 0 };
	struct rs_summary *s = NULL;
	char *chunk = NULL;
	FILE *in;
	size_t got;
	int err = 0;

	memset(t, 0, sizeof(*t));
	t->renames = renames;
	t->children = json_object();
	t->keys = json_object();
	if (!t->children || !t->keys)
		return rs_error_set(RS_EGENERIC, "out of memory");
	in = fopen(path, "rb");
	if (!in)
		return rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				      "cannot open '%s'", path);
	cb.ctx = t;
	cb.sample = on_sample;
	so.chain = &cb;
	/* every node (up to the summary's node cap): a tree cut at any share
	 * hides where a thin new call's time went, as the stored one does */
	so.prune_fraction = 1e-12;
	so.max_depth = RS_DEEP_SUMMARY_DEPTH;
	chunk = malloc(1 << 20);
	err = chunk ? rs_summary_new(&s, &so) : rs_error_set(RS_EGENERIC, "out of memory");
	while (!err) {
		got = fread(chunk, 1, 1 << 20, in);
		if (!got)
			break;
		err = rs_summary_feed(s, chunk, got);
	}
	if (!err && ferror(in))
		err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
	if (!err)
		err = rs_summary_finish(s);
	if (err && err != RS_EGENERIC)
		rs_error_wrap(err, "%s", path);
	if (!err && summary)
		err = rs_summary_json(s, summary);
	rs_summary_free(s);
	free(chunk);
	fclose(in);
	return err;
}

/* The path of node i as "a > b > c" into `out`. */
static int path_text(struct rs_buf *out, const struct trie *t, size_t i, size_t *depth)
{
	/* deeper paths are cut at their root end (none that deep is heavy) */
	size_t chain[1024], n = 0, k;

	while (i != (size_t)-1 && n < sizeof(chain) / sizeof(chain[0])) {
		chain[n++] = i;
		i = t->nodes[i].parent;
	}
	rs_buf_clear(out);
	for (k = n; k-- > 0;) {
		if (k + 1 < n && rs_buf_puts(out, " > "))
			return RS_EGENERIC;
		if (rs_buf_puts(out, t->labels[t->nodes[chain[k]].key]))
			return RS_EGENERIC;
	}
	*depth = n;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	const struct rs_path_delta *x = a, *y = b;
	double dx = fabs(x->head_total - x->base_total), dy = fabs(y->head_total - y->base_total);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* "old\x1ffile" -> "new" for the renames of a summary diff. */
static json_t *rename_map(const struct rs_diff *sd)
{
	json_t *m = json_object();
	struct rs_buf k = RS_BUF_INIT;
	size_t i;

	for (i = 0; m && sd && i < sd->n_funcs; i++) {
		const struct rs_func_delta *f = &sd->funcs[i];
		const char *old, *sep;
		char *bare;

		if (f->change != RS_FUNC_RENAMED || !f->old_function || !f->key)
			continue;
		old = strrchr(f->old_function, '.') ? strrchr(f->old_function, '.') + 1 : f->old_function;
		sep = strchr(f->key, '\x1f');
		if (!sep)
			continue;
		bare = strndup(f->key, (size_t)(sep - f->key));
		rs_buf_clear(&k);
		if (!bare || rs_buf_printf(&k, "%s\x1f%s", old, f->file) ||
		    json_object_set_new(m, k.ptr, json_string(bare))) {
			free(bare);
			json_decref(m);
			m = NULL;
			break;
		}
		free(bare);
	}
	rs_buf_release(&k);
	return m;
}

/*
 * 1 when label `i` of the head (`total` its outermost calls' time) takes
 * at least `min_share` of the head's time and never ran in the base.
 */
static int is_new_func(const struct trie *base, const struct trie *head, double total,
		       size_t i, double min_share)
{
	const char *k = NULL;
	json_t *v;

	if (total < min_share * head->time)
		return 0;
	json_object_foreach(head->keys, k, v)
		if ((size_t)json_integer_value(v) == i)
			break;
	return k && !json_object_get(base->keys, k);
}

/*
 * Functions of the head that never ran in the base, by the total time of
 * their outermost calls (a recursive call is not counted twice).
 */
static int find_new(struct rs_deep_diff *d, const struct trie *base, const struct trie *head,
		    double min_share)
{
	double *tot = calloc(head->n_labels ? head->n_labels : 1, sizeof(*tot));
	size_t i, n = 0;
	int err = 0;

	if (!tot)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < head->n; i++) {
		const struct node *nd = &head->nodes[i];
		size_t a = nd->parent;

		while (a != (size_t)-1 && head->nodes[a].key != nd->key)
			a = head->nodes[a].parent;
		if (a == (size_t)-1)
			tot[nd->key] += nd->total;
	}
	for (i = 0; i < head->n_labels; i++)
		n += is_new_func(base, head, tot[i], i, min_share);
	d->new_funcs = calloc(n ? n : 1, sizeof(*d->new_funcs));
	if (!d->new_funcs) {
		free(tot);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; i < head->n_labels && !err; i++) {
		if (!is_new_func(base, head, tot[i], i, min_share))
			continue;
		d->new_funcs[d->n_new].label = strdup(head->labels[i]);
		d->new_funcs[d->n_new].head_total = tot[i];
		if (!d->new_funcs[d->n_new].label)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		else
			d->n_new++;
	}
	free(tot);
	return err;
}

int rs_deep_diff_sessions(struct rs_deep_diff **out, const char *base_session,
			  const char *head_session, double min_share)
{
	return rs_deep_diff_sessions_with(out, base_session, head_session, min_share, NULL);
}

/*
 * The row of call path `text` (`depth` frames) in d->paths, added when
 * new; `index` maps a path's text to its row, `*alloc` is the rows' room.
 */
static int path_delta_at(struct rs_path_delta **out, struct rs_deep_diff *d, json_t *index,
			 size_t *alloc, const char *text, size_t depth, size_t name_len)
{
	json_t *at = json_object_get(index, text);
	struct rs_path_delta *pd;

	if (at) {
		*out = &d->paths[json_integer_value(at)];
		return 0;
	}
	if (rs_array_grow(&d->paths, alloc, d->n_paths + 1, sizeof(*d->paths), 256))
		return rs_error_last();
	pd = &d->paths[d->n_paths];
	memset(pd, 0, sizeof(*pd));
	pd->path = strdup(text);
	pd->depth = depth;
	pd->name_len = name_len;
	if (!pd->path || json_object_set_new(index, text, json_integer((json_int_t)d->n_paths))) {
		free(pd->path);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	d->n_paths++;
	*out = pd;
	return 0;
}

/*
 * Add a frame's times to its path's row, on the base (side 0) or head
 * side. Two functions may share a label (same name, same file name in
 * two folders): their paths are one row, summed.
 */
static void path_delta_add(struct rs_path_delta *pd, int side, double total, double self)
{
	if (side == 0) {
		pd->base_total += total;
		pd->base_self += self;
	} else {
		pd->head_total += total;
		pd->head_self += self;
	}
}

/* The call paths of trie `t` above `min_share` of its time, into d->paths on `side`. */
static int trie_paths(struct rs_deep_diff *d, json_t *index, size_t *alloc,
		      const struct trie *t, double min_share, int side)
{
	struct rs_buf text = RS_BUF_INIT;
	struct rs_path_delta *pd;
	size_t depth;
	int err = 0;

	for (size_t i = 0; !err && i < t->n; i++) {
		const struct node *nd = &t->nodes[i];

		if (t->time <= 0 || nd->total < min_share * t->time)
			continue;
		if (path_text(&text, t, i, &depth))
			err = rs_error_set(RS_EGENERIC, "out of memory");
		if (!err)
			err = path_delta_at(&pd, d, index, alloc, text.ptr, depth, t->name_lens[nd->key]);
		if (!err)
			path_delta_add(pd, side, nd->total, nd->self);
	}
	rs_buf_release(&text);
	return err;
}

/*
 * Parse both sessions into tries (base with the summary's renames
 * applied); `*head` is tr[1], or tr[0] when the two are one file.
 */
static int build_tries(struct trie tr[2], const struct trie **head, const char *base_session,
		       const char *head_session, const json_t *renames, json_t *summaries[2])
{
	int same = !strcmp(head_session, base_session) && !json_object_size(renames);
	int err;

	*head = &tr[0];
	/* A session against itself (`results open`): parse it once, no culprits. */
	err = build(&tr[0], base_session, renames, same ? NULL : &summaries[0]);
	if (err)
		return err;
	if (same)
		return 0;
	err = build(&tr[1], head_session, NULL, &summaries[1]);
	if (err)
		return err;
	*head = &tr[1];
	return 0;
}

/*
 * The culprits of the head's growth by the calling-context rule of
 * analysis/culprit.h, from the two sessions' own summaries (their whole
 * call trees, `sums`), per unit of workload as the summary diff judges
 * time when it does.
 */
static int session_culprits(struct rs_deep_diff *d, json_t *sums[2], const struct rs_diff *summary)
{
	struct rs_runrec_summary *typed[2] = { NULL, NULL };
	double scale = 1;
	int err = 0;

	if (summary && summary->workload_key && summary->base_workload > 0 &&
	    summary->head_workload > 0)
		scale = summary->head_workload / summary->base_workload;
	/* read as a stored summary is: the culprits take the typed one */
	for (int side = 0; side < 2 && !err; side++)
		if (sums[side])
			err = rs_runrec_summary_from_json(sums[side], &typed[side]);
	if (!err)
		err = rs_culprits_find(&d->culprits, typed[0], typed[1], scale, 0);
	if (!err)
		d->culprits->from_sessions = 1;
	rs_runrec_summary_free(typed[0]);
	rs_runrec_summary_free(typed[1]);
	return err;
}

int rs_deep_diff_sessions_with(struct rs_deep_diff **out, const char *base_session,
			       const char *head_session, double min_share,
			       const struct rs_diff *summary)
{
	struct trie tr[2];
	const struct trie *head = &tr[0];
	struct rs_deep_diff *d = calloc(1, sizeof(*d));
	json_t *index = json_object(), *renames = NULL, *sums[2] = { NULL, NULL };
	size_t alloc = 0;
	int err = 0;

	memset(tr, 0, sizeof(tr));
	if (!d || !index) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (min_share <= 0)
		min_share = 0.001;
	renames = rename_map(summary);
	if (!renames) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	d->n_renamed = json_object_size(renames);
	err = build_tries(tr, &head, base_session, head_session, renames, sums);
	if (err)
		goto out;
	if (sums[0] && sums[1]) {
		err = session_culprits(d, sums, summary);
		if (err)
			goto out;
	}
	err = find_new(d, &tr[0], head, min_share);
	if (err)
		goto out;
	d->base_time = tr[0].time;
	d->head_time = head->time;
	err = trie_paths(d, index, &alloc, &tr[0], min_share, 0);
	if (err)
		goto out;
	err = trie_paths(d, index, &alloc, head, min_share, 1);
	if (err)
		goto out;
	if (d->n_paths)
		qsort(d->paths, d->n_paths, sizeof(*d->paths), cmp_path);
out:
	trie_release(&tr[0]);
	trie_release(&tr[1]);
	json_decref(index);
	json_decref(renames);
	json_decref(sums[0]);
	json_decref(sums[1]);
	if (err) {
		rs_deep_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void rs_deep_diff_free(struct rs_deep_diff *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_paths; i++)
		free(d->paths[i].path);
	for (i = 0; i < d->n_new; i++)
		free(d->new_funcs[i].label);
	free(d->new_funcs);
	free(d->paths);
	rs_culprits_free(d->culprits);
	free(d);
}

/* The last `keep` parts of a path, with "... > " in front when cut. */
static int short_path(struct rs_buf *out, const char *path, size_t keep)
{
	const char *p = path + strlen(path);
	size_t seen = 0;

	while (p > path) {
		p--;
		if (p - path >= 2 && !strncmp(p - 1, " > ", 3) && ++seen == keep) {
			return rs_buf_printf(out, "… > %s", p + 2);
		}
	}
	return rs_buf_puts(out, path);
}

/* One line of the list of functions new in the head. */
static int new_func_row(struct rs_buf *out, const struct rs_deep_func *f, int md)
{
	int err;

	err = rs_buf_puts(out, md ? "- " : "  ");
	if (err)
		return err;
	err = md ? rs_escape_md_code(out, f->label, 0) : rs_buf_puts(out, f->label);
	if (err)
		return err;
	err = rs_render_seconds_after(out, ": ", f->head_total);
	if (err)
		return err;
	return rs_buf_puts(out, "\n");
}

/* One row of the call-path table; `path` is the shortened path. */
static int path_row(struct rs_buf *out, const struct rs_path_delta *p, const char *path, int md)
{
	int err;

	if (md) {
		err = rs_buf_puts(out, "| ");
		if (err)
			return err;
		err = rs_escape_md_text(out, path);
		if (err)
			return err;
		err = rs_render_seconds_after(out, " | ", p->base_total);
	} else {
		err = rs_buf_printf(out, "  %s\n     ", path);
		if (err)
			return err;
		err = rs_render_seconds(out, p->base_total);
	}
	if (err)
		return err;
	err = rs_render_seconds_after(out, md ? " | " : " -> ", p->head_total);
	if (err)
		return err;
	err = rs_buf_puts(out, md ? " | " : "  (");
	if (err)
		return err;
	err = rs_render_seconds_after(out, p->head_total >= p->base_total ? "+" : "",
			  p->head_total - p->base_total);
	if (err)
		return err;
	err = rs_render_seconds_after(out, md ? " | " : "), own ", p->base_self);
	if (err)
		return err;
	err = rs_render_seconds_after(out, md ? " → " : " -> ", p->head_self);
	if (err)
		return err;
	return rs_buf_puts(out, md ? " |\n" : "\n");
}

/* A JSON number, or null for NaN and infinities, which json_real refuses. */
static json_t *real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/*
 * The call paths and new functions as one JSON document, built key by key
 * through one rs_json_build (results/json.h, a sticky error): a failed
 * allocation makes it an error, never a document without a key. In the
 * order json_pack put them, for the same bytes.
 */
static int deep_json(struct rs_buf *out, const struct rs_deep_diff *d)
{
	struct rs_json_build b = RS_JSON_BUILD_INIT;
	json_t *o = json_object(), *a = json_array();
	size_t i;
	int err;

	for (i = 0; i < d->n_paths && !b.failed; i++) {
		const struct rs_path_delta *p = &d->paths[i];
		json_t *j = json_object();

		rs_json_set(&b, j, "path", json_string(p->path));
		rs_json_set(&b, j, "depth", json_integer((json_int_t)p->depth));
		rs_json_set(&b, j, "base_total", real_or_null(p->base_total));
		rs_json_set(&b, j, "head_total", real_or_null(p->head_total));
		rs_json_set(&b, j, "base_self", real_or_null(p->base_self));
		rs_json_set(&b, j, "head_self", real_or_null(p->head_self));
		rs_json_append(&b, a, j);
	}
	rs_json_set(&b, o, "base_time", real_or_null(d->base_time));
	rs_json_set(&b, o, "head_time", real_or_null(d->head_time));
	rs_json_set(&b, o, "paths", a);
	a = json_array();
	for (i = 0; i < d->n_new && !b.failed; i++) {
		json_t *j = json_object();

		rs_json_set(&b, j, "function", json_string(d->new_funcs[i].label));
		rs_json_set(&b, j, "head_total", real_or_null(d->new_funcs[i].head_total));
		rs_json_append(&b, a, j);
	}
	rs_json_set(&b, o, "new_functions", a);
	rs_json_set(&b, o, "renames_applied", json_integer((json_int_t)d->n_renamed));
	err = rs_json_build_dump(out, &b, o, JSON_INDENT(2));
	if (err)
		return err;
	return rs_buf_putc(out, '\n');
}

/*
 * passed[i] = 1 when path i only passes its change on: one path below it
 * (its child) holds 80% or more of that change, same sign, or it lies
 * below a path that is new in the head (part of that new call). The root
 * frames every stack shares (MainThread, <module>, main, run, simulate)
 * are such paths; what is left are the paths where the change divides or
 * starts: the highest new path of a new call, where the paths part.
 */
static int passed_on(const struct rs_deep_diff *d, unsigned char *passed)
{
	json_t *index = json_object();
	double *best = calloc(d->n_paths ? d->n_paths : 1, sizeof(double));
	struct rs_buf parent = RS_BUF_INIT;
	size_t i;
	int err = 0;

	if (!index || !best) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < d->n_paths && !err; i++)
		if (json_object_set_new(index, d->paths[i].path, json_integer((json_int_t)i)))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < d->n_paths && !err; i++) {
		const char *p = d->paths[i].path, *cut = NULL;
		double ci = d->paths[i].head_total - d->paths[i].base_total;
		json_t *at;
		size_t pi;

		for (const char *q = strstr(p, " > "); q; q = strstr(q + 1, " > "))
			cut = q;
		if (!cut)
			continue;
		rs_buf_clear(&parent);
		err = rs_buf_put(&parent, p, (size_t)(cut - p));
		if (err)
			break;
		at = json_object_get(index, parent.ptr);
		if (!at)
			continue;
		pi = (size_t)json_integer_value(at);
		/* below a path new in the head: part of that new call */
		if (d->paths[i].base_total <= 0 && d->paths[pi].base_total <= 0)
			passed[i] = 2;
		{
			double cp = d->paths[pi].head_total - d->paths[pi].base_total;

			if (cp * ci > 0 && fabs(ci) > best[pi])
				best[pi] = fabs(ci);
		}
	}
	for (i = 0; i < d->n_paths; i++) {
		double c = fabs(d->paths[i].head_total - d->paths[i].base_total);

		/* the highest new path is where the paths part: always shown */
		if (passed[i] == 2)
			passed[i] = 1;
		else if (d->paths[i].base_total > 0)
			passed[i] = c > 0 && best[i] >= 0.8 * c;
	}
out:
	rs_buf_release(&parent);
	json_decref(index);
	free(best);
	return err;
}

int rs_render_deep(struct rs_buf *out, const struct rs_deep_diff *d,
		   enum rs_format fmt, size_t top)
{
	struct rs_buf cell = RS_BUF_INIT;
	unsigned char *passed = NULL;
	size_t i, shown = 0, left = 0;
	int md = fmt == RS_FORMAT_MARKDOWN, err = 0;

	if (!top)
		top = 15;
	if (fmt == RS_FORMAT_JSON)
		return deep_json(out, d);
	if (d->n_new) {
		err = rs_buf_puts(out, md ? "\n**Functions that did not run in the base** (from the sessions)\n\n"
					  : "\nFunctions that did not run in the base (from the sessions)\n");
		for (i = 0; !err && i < d->n_new && i < top; i++)
			err = new_func_row(out, &d->new_funcs[i], md);
		if (err)
			return err;
	}
	if (d->n_renamed) {
		err = rs_buf_printf(out, md ? "\n_Renamed functions (%zu, see above) are matched under their new names._\n"
					    : "\n(renamed functions, %zu, are matched under their new names)\n",
				    d->n_renamed);
		if (err)
			return err;
	}
	passed = calloc(d->n_paths ? d->n_paths : 1, 1);
	if (!passed)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = passed_on(d, passed);
	if (!err)
		err = rs_buf_puts(out, md ? "\n**Call paths whose total time changed most** (from the sessions; "
					    "where the paths divide, not the frames they share)\n\n"
					    "| call path | base | head | change | own time base → head |\n"
					    "|---|---:|---:|---:|---:|\n"
					  : "\nCall paths whose total time changed most (from the sessions; "
					    "where the paths divide, not the frames they share)\n");
	for (i = 0; !err && i < d->n_paths; i++) {
		const struct rs_path_delta *p = &d->paths[i];

		if (passed[i]) {
			left++;
			continue;
		}
		if (shown == top)
			continue;
		rs_buf_clear(&cell);
		err = short_path(&cell, p->path, 4);
		if (err)
			break;
		err = path_row(out, p, cell.ptr, md);
		shown++;
	}
	if (!err && left)
		err = rs_buf_printf(out, md ? "\n_Left out: %zu call path%s whose change is that of one call below them "
					      "(the frames every stack shares: MainThread, `<module>`, main...) or "
					      "that lie below a new call shown._\n"
					    : "  (left out: %zu call path%s whose change is that of one call below them, "
					      "the frames every stack shares: MainThread, <module>, main..., or that lie "
					      "below a new call shown)\n",
				    left, left == 1 ? "" : "s");
	free(passed);
	rs_buf_release(&cell);
	return err;
}

/* ---- the head run's call tree over the paths ------------------------- */

const char *rs_deep_last_label(const char *path)
{
	const char *label = path;

	for (const char *q = strstr(path, " > "); q; q = strstr(q + 3, " > "))
		label = q + 3;
	return label;
}

int rs_deep_tree(const struct rs_deep_diff *d, int skip_empty, size_t **first,
		 size_t **next, size_t **order)
{
	json_t *index = json_object();
	size_t n = d->n_paths ? d->n_paths : 1, *last = malloc(n * sizeof(size_t)), i;
	struct rs_buf parent = RS_BUF_INIT;
	int err = 0;

	*first = malloc(n * sizeof(size_t));
	*next = malloc(n * sizeof(size_t));
	*order = malloc(n * sizeof(size_t));
	if (!index || !*first || !*next || !*order || !last) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < d->n_paths; i++) {
		(*first)[i] = (*next)[i] = last[i] = (size_t)-1;
		(*order)[i] = i;
		if (json_object_set_new(index, d->paths[i].path, json_integer((json_int_t)i))) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	/* insertion sort by head time, heaviest first: a few thousand paths at most */
	for (i = 1; i < d->n_paths; i++) {
		size_t j = i, x = (*order)[i];

		while (j > 0 && d->paths[(*order)[j - 1]].head_total < d->paths[x].head_total) {
			(*order)[j] = (*order)[j - 1];
			j--;
		}
		(*order)[j] = x;
	}
	/* link each path under its parent (the path without its last " > " step) */
	for (i = 0; i < d->n_paths; i++) {
		size_t o = (*order)[i], pi;
		const char *p = d->paths[o].path, *cut = NULL, *q;
		json_t *at;

		for (q = strstr(p, " > "); q; q = strstr(q + 1, " > "))
			cut = q;
		if (!cut || (skip_empty && d->paths[o].head_total <= 0))
			continue;
		rs_buf_clear(&parent);
		err = rs_buf_put(&parent, p, (size_t)(cut - p));
		if (err)
			goto out;
		at = json_object_get(index, parent.ptr);
		if (!at)
			continue; /* parent below the stored floor */
		pi = (size_t)json_integer_value(at);
		if ((*first)[pi] == (size_t)-1)
			(*first)[pi] = o;
		else
			(*next)[last[pi]] = o;
		last[pi] = o;
	}
out:
	rs_buf_release(&parent);
	json_decref(index);
	free(last);
	return err;
}

/* ---- the same from two stored summaries' call trees ------------------- */

static int tree_paths(struct rs_deep_diff *d, json_t *index, size_t *alloc,
		      const struct rs_runrec_node *node, const char *prefix, size_t depth, int side)
{
	const char *fn = node->function, *file = node->file;
	struct rs_buf text = RS_BUF_INIT;
	const char *here = prefix;
	size_t i;
	int err = 0;

	if (depth > RS_DEEP_TREE_DEPTH + 1)
		return 0;
	if (depth > 0) { /* [root] is nobody's frame */
		const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
		struct rs_path_delta *pd;

		if (rs_buf_printf(&text, "%s%s%s (%s)", prefix, *prefix ? " > " : "", fn, base))
			return rs_error_set(RS_EGENERIC, "out of memory");
		err = path_delta_at(&pd, d, index, alloc, text.ptr, depth, strlen(fn));
		if (err)
			goto out;
		path_delta_add(pd, side, node->total, node->self);
		here = text.ptr;
	}
	for (i = 0; !err && i < node->nchildren; i++)
		err = tree_paths(d, index, alloc, &node->children[i], here, depth + 1, side);
out:
	rs_buf_release(&text);
	return err;
}

int rs_deep_diff_trees(struct rs_deep_diff **out, const struct rs_runrec_summary *base,
		       const struct rs_runrec_summary *head)
{
	struct rs_deep_diff *d = calloc(1, sizeof(*d));
	json_t *index = json_object();
	size_t alloc = 0;
	int err = 0;

	if (!d || !index) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (!base || !head) {
		err = rs_error_set(RS_ENOTFOUND, "a run has no stored call tree");
		goto out;
	}
	d->base_time = base->tree.total;
	d->head_time = head->tree.total;
	d->unknown_below = 0.005; /* the summary tree's pruning */
	err = tree_paths(d, index, &alloc, &base->tree, "", 0, 0);
	if (!err)
		err = tree_paths(d, index, &alloc, &head->tree, "", 0, 1);
	if (!err && d->n_paths)
		qsort(d->paths, d->n_paths, sizeof(*d->paths), cmp_path);
out:
	json_decref(index);
	if (err) {
		rs_deep_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}
