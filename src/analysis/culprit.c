/*
 * Culprits by calling context (the model is in culprit.h).
 *
 * Both summaries are read into one table of functions (matched by name,
 * file and first line, then by name and file when that is unique) and
 * one table of call edges caller -> callee with base and head times.
 * Then, with d(x) = head(x) - scale * base(x):
 *
 *  0. The time under a function that did not run in the base (a new
 *     frame, from the head's stored tree) is that new call's: it is left
 *     out of every function and call below it, and of the calls on the
 *     path down to it.
 *  1. For every function c, whether it grew wherever it is called: set
 *     aside the call into c that grew most; c is "blamable" when the
 *     other calls held 10% of its old time or more (each caller with 2%
 *     counting as a context) and grew by at least 30% of c's overall
 *     rate; or, with one context, when c is not library code (see
 *     culprit.h for that tie).
 *  2. The growth of a function's own body B(f): its own time, plus the
 *     growth of each call f -> c whose callee is not blamable (library
 *     code that grew only under f) or that is new (f now calls an
 *     existing c). Calls of blamable or new callees are not f's body:
 *     they are blamed where they are.
 *  3. Culprits: each new call a -> b (b did not run in the base, a did)
 *     with the time under it; each blamable function that is not a root
 *     frame (90% of both runs) with B(f) >= floor.
 *
 * Cost: O(functions + edges); a summary holds a few thousand of each.
 */
#include "analysis/culprit.h"
#include "analysis/owncode.h"
#include "session/summary.h"
#include "util/array.h"
#include "results/buf.h"
#include "results/error.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A root frame: this share of both runs or more (MainThread, <module>, main). */
#define ROOT_SHARE 0.9
/* A caller counts as a context of its own with this share of the old time. */
#define CONTEXT_SHARE 0.02
/* "In proportion": the other callers grew at 30% of the overall rate or more. */
#define PROPORTIONAL 0.3
/* ... when they held this share of the old time at least. */
#define REST_SHARE 0.1
/* The stored tree's pruning (summary.c): pairs below it are not seen. */
#define TREE_FLOOR 0.005
/* A call missing from the base is new when this many times its floor. */
#define NEW_CALL_FLOORS 3
/* A call path shown is cut after this many bytes. */
#define PATH_BYTES 2048
/* Levels of a stored tree walked at most (it has 40 under the root). */
#define TREE_DEPTH 64

struct cfn {
	char *name;        /* "Class.method" when a side names a class */
	const char *bare, *file; /* borrowed from the summaries */
	long line;
	double t[2], s[2]; /* total and own time, base (0) and head (1) */
	int listed[2];
	int ran_base;      /* ran in the base at all */
	int lib;
	double under_new[2]; /* head total and own time under a new frame */
	/* step 1 */
	size_t n_ctx, n_callers;
	int blamable;
	double body;
	/* the heaviest head tree node of the function */
	double best_total;
	char *best_path;
};

struct cedge {
	size_t a, b;
	double t[2], s[2];
	int seen[2];
	double under_new;  /* head time of the call under a new frame, or on
	                      the path down to one (that new call's time) */
	double best_total;
	char *best_path;
};

struct ctx {
	struct cfn *f;
	size_t nf, af;
	struct cedge *e;
	size_t ne, ae;
	json_t *by_key;    /* "bare\x1f file\x1f line" -> index */
	json_t *by_name;   /* "bare\x1f file" -> index, -1 when ambiguous */
	json_t *by_edge;   /* "a,b" -> index */
	size_t *rows[2];   /* row index of a side's lists -> function */
	size_t nrows[2];
	double time[2];
	double floor[2];   /* a call below this (seconds) is not stored */
	const struct rs_runrec_summary *sum[2];
	struct rs_buf k;
	int from_tree;
};

static int oom(void)
{
	return rs_error_set(RS_EGENERIC, "out of memory");
}

static int grow_arr(void **p, size_t *alloc, size_t need, size_t size)
{
	if (rs_array_grow(p, alloc, need, size, 256))
		return oom();
	return 0;
}

/*
 * The function (bare, file, line) of `side`, matched or added; its index
 * in *out. `tree`: a tree node, matched by name and file alone when that
 * is unique (a node may carry no line, or a moved function's).
 */
static int fn_at(struct ctx *c, int side, int tree, const char *bare, const char *cls,
		 const char *file, long line, size_t *out)
{
	json_t *v;
	struct cfn *f;
	int err;

	/* the thread frame's "line" is the thread id, new every run */
	if (!strcmp(file, "<thread>"))
		line = 0;
	rs_buf_clear(&c->k);
	err = rs_buf_printf(&c->k, "%s\x1f%s\x1f%ld", bare, file, line);
	if (err)
		return err;
	v = json_object_get(c->by_key, c->k.ptr);
	if (!v && (side == 1 || tree)) {
		/* moved: the same name in the same file, when only one */
		rs_buf_clear(&c->k);
		err = rs_buf_printf(&c->k, "%s\x1f%s", bare, file);
		if (err)
			return err;
		v = json_object_get(c->by_name, c->k.ptr);
		if (v && (json_integer_value(v) < 0 || (!tree && c->f[json_integer_value(v)].listed[1])))
			v = NULL;
	}
	if (v) {
		*out = (size_t)json_integer_value(v);
		f = &c->f[*out];
		if (cls && *cls && !strchr(f->name, '.')) {
			char *n = NULL;

			rs_buf_clear(&c->k);
			err = rs_buf_printf(&c->k, "%s.%s", cls, bare);
			if (err)
				return err;
			n = rs_buf_detach(&c->k, NULL);
			if (!n)
				return oom();
			free(f->name);
			f->name = n;
		}
		return 0;
	}
	err = grow_arr((void **)&c->f, &c->af, c->nf + 1, sizeof(*c->f));
	if (err)
		return err;
	f = &c->f[c->nf];
	memset(f, 0, sizeof(*f));
	rs_buf_clear(&c->k);
	err = cls && *cls ? rs_buf_printf(&c->k, "%s.%s", cls, bare) : rs_buf_puts(&c->k, bare);
	if (err)
		return err;
	f->name = rs_buf_detach(&c->k, NULL);
	if (!f->name)
		return oom();
	f->bare = bare;
	f->file = file;
	f->line = line;
	f->lib = !rs_owncode_match(NULL, file);
	*out = c->nf++;
	rs_buf_clear(&c->k);
	err = rs_buf_printf(&c->k, "%s\x1f%s\x1f%ld", bare, file, line);
	if (!err && json_object_set_new(c->by_key, c->k.ptr, json_integer((json_int_t)*out)))
		err = oom();
	if (err)
		return err;
	rs_buf_clear(&c->k);
	err = rs_buf_printf(&c->k, "%s\x1f%s", bare, file);
	if (err)
		return err;
	v = json_object_get(c->by_name, c->k.ptr);
	if (json_object_set_new(c->by_name, c->k.ptr, json_integer(v ? -1 : (json_int_t)*out)))
		return oom();
	return 0;
}

/* One listed row of `side` into the table, as row number `row`. */
static int take_row(struct ctx *c, int side, size_t row, const char *bare, const char *cls,
		    const char *file, long line, double self, double total)
{
	size_t i;
	int err;

	err = fn_at(c, side, 0, bare, cls, file, line, &i);
	if (err)
		return err;
	c->f[i].t[side] = total;
	c->f[i].s[side] = self;
	c->f[i].listed[side] = 1;
	c->rows[side][row] = i;
	return 0;
}

/* "functions" then "more_functions".rows of one summary: the rows "calls" indexes. */
static int load_lists(struct ctx *c, int side)
{
	const struct rs_runrec_summary *sum = c->sum[side];
	const struct rs_runrec_more *more = &sum->more;
	size_t nf = sum->nfunctions, nm = sum->has_more ? more->nrows : 0, i;
	int err = 0;

	c->rows[side] = calloc(nf + nm + 1, sizeof(size_t));
	if (!c->rows[side])
		return oom();
	c->nrows[side] = nf + nm;
	for (i = 0; i < nf + nm; i++)
		c->rows[side][i] = (size_t)-1;
	for (i = 0; i < nf && !err; i++) {
		const struct rs_runrec_function *f = &sum->functions[i];

		err = take_row(c, side, i, f->function, f->class_name, f->file, (long)f->line,
			       f->self, f->total);
	}
	for (i = 0; i < nm && !err; i++) {
		const struct rs_runrec_more_row *r = &more->rows[i];

		err = take_row(c, side, nf + i, r->function, NULL, more->files[r->file],
			       (long)r->line, (double)r->self_us / 1e6, (double)r->total_us / 1e6);
	}
	return err;
}

/* The edge a -> b, added when new; its index in *out. */
static int edge_at(struct ctx *c, size_t a, size_t b, size_t *out)
{
	json_t *v;
	int err;

	rs_buf_clear(&c->k);
	err = rs_buf_printf(&c->k, "%zu,%zu", a, b);
	if (err)
		return err;
	v = json_object_get(c->by_edge, c->k.ptr);
	if (v) {
		*out = (size_t)json_integer_value(v);
		return 0;
	}
	err = grow_arr((void **)&c->e, &c->ae, c->ne + 1, sizeof(*c->e));
	if (err)
		return err;
	memset(&c->e[c->ne], 0, sizeof(*c->e));
	c->e[c->ne].a = a;
	c->e[c->ne].b = b;
	*out = c->ne++;
	if (json_object_set_new(c->by_edge, c->k.ptr, json_integer((json_int_t)*out)))
		return oom();
	return 0;
}

/*
 * The "calls" table of `side`; 1 in *had when the summary has one (the
 * decoder read only RS_RUNREC_CALLS_VERSION's layout, the one this file
 * reads: a later layout is refused there, never guessed at).
 */
static int load_calls(struct ctx *c, int side, int *had)
{
	const struct rs_runrec_calls *calls = &c->sum[side]->calls;
	size_t i, e;
	int err = 0;

	*had = c->sum[side]->has_calls;
	if (!*had)
		return 0;
	for (i = 0; i < calls->nrows && !err; i++) {
		const struct rs_runrec_call *r = &calls->rows[i];

		if (r->caller >= c->nrows[side] || r->callee >= c->nrows[side] ||
		    c->rows[side][r->caller] == (size_t)-1 || c->rows[side][r->callee] == (size_t)-1)
			continue;
		err = edge_at(c, c->rows[side][r->caller], c->rows[side][r->callee], &e);
		if (err)
			break;
		c->e[e].t[side] += (double)r->total_us / 1e6;
		c->e[e].s[side] += (double)r->self_us / 1e6;
		c->e[e].seen[side] = 1;
	}
	return err;
}

/* A function of the head that did not run at all in the base. */
static int is_new(const struct cfn *f)
{
	return !f->ran_base && f->t[1] > 0;
}

/* What a walk of a stored tree keeps: the functions and path on the way down. */
struct walk {
	struct ctx *c;
	int side;
	int edges;                 /* add the tree's pairs as edges (no "calls") */
	size_t fn[TREE_DEPTH];
	size_t edge[TREE_DEPTH];
	struct rs_buf path;
	size_t plen[TREE_DEPTH];
	size_t new_at;             /* depth of the highest new frame; 0: none */
};

/* Keep `path` in *slot when `total` beats *best. */
static int keep_best(char **slot, double *best, double total, const struct rs_buf *path)
{
	char *p;

	if (total <= *best)
		return 0;
	p = strdup(path->ptr ? path->ptr : "");
	if (!p)
		return oom();
	free(*slot);
	*slot = p;
	*best = total;
	return 0;
}

/* The path text: frames of a root share (both runs) are left out, shown as "… > ". */
static int path_push(struct walk *w, const struct cfn *f, size_t depth)
{
	int root = w->c->time[0] > 0 && w->c->time[1] > 0 &&
		   f->t[0] >= ROOT_SHARE * w->c->time[0] && f->t[1] >= ROOT_SHARE * w->c->time[1];
	int err = 0;

	w->plen[depth] = w->path.len;
	/* a hostile record's names could make every kept path huge */
	if (root || w->path.len > PATH_BYTES)
		return 0;
	if (!w->path.len)
		err = rs_buf_puts(&w->path, depth > 1 ? "… > " : "");
	else
		err = rs_buf_puts(&w->path, " > ");
	if (!err)
		err = rs_buf_puts(&w->path, f->name);
	return err;
}

static int walk_node(struct walk *w, const struct rs_runrec_node *node, size_t depth)
{
	double total = node->total, self = node->self;
	size_t i, fi, e = (size_t)-1;
	int err = 0, dup = 0;

	if (depth >= TREE_DEPTH)
		return 0;
	if (depth > 0) {
		err = fn_at(w->c, w->side, 1, node->function, NULL, node->file, (long)node->line,
			    &fi);
		if (err)
			return err;
		w->fn[depth] = fi;
		if (depth > 1) {
			err = edge_at(w->c, w->fn[depth - 1], fi, &e);
			if (err)
				return err;
			for (i = 2; i < depth && !dup; i++)
				dup = w->edge[i] == e;
		}
		w->edge[depth] = e;
		if (w->edges && e != (size_t)-1) {
			if (!dup)
				w->c->e[e].t[w->side] += total;
			w->c->e[e].s[w->side] += self;
			w->c->e[e].seen[w->side] = 1;
		}
		if (w->side == 1 && w->new_at && w->new_at < depth) {
			struct cfn *f = &w->c->f[fi];
			int again = 0;

			for (i = 1; i < depth && !again; i++)
				again = w->fn[i] == fi;
			if (!again)
				f->under_new[0] += total;
			f->under_new[1] += self;
			if (e != (size_t)-1 && !dup)
				w->c->e[e].under_new += total;
		}
		if (w->side == 1 && !w->new_at && is_new(&w->c->f[fi])) {
			w->new_at = depth;
			/* the calls on the way down to a new call carry its time:
			 * it is that call's, not growth of the frames above it */
			for (i = 2; i < depth; i++) {
				size_t k, ei = w->edge[i];
				int again = 0;

				for (k = 2; k < i && !again; k++)
					again = w->edge[k] == ei;
				if (ei != (size_t)-1 && !again)
					w->c->e[ei].under_new += total;
			}
		}
		if (w->side == 1) {
			err = path_push(w, &w->c->f[fi], depth);
			if (!err)
				err = keep_best(&w->c->f[fi].best_path, &w->c->f[fi].best_total, total,
						&w->path);
			if (!err && e != (size_t)-1)
				err = keep_best(&w->c->e[e].best_path, &w->c->e[e].best_total, total,
						&w->path);
			if (err)
				return err;
		}
	}
	for (i = 0; !err && i < node->nchildren; i++)
		err = walk_node(w, &node->children[i], depth + 1);
	if (depth > 0 && w->new_at == depth)
		w->new_at = 0;
	if (depth > 0 && w->side == 1) {
		w->path.len = w->plen[depth];
		if (w->path.ptr)
			w->path.ptr[w->path.len] = '\0';
	}
	return err;
}

static int walk_tree(struct ctx *c, int side, int edges)
{
	struct walk w;
	int err;

	if (!edges && side == 0)
		return 0;
	memset(&w, 0, sizeof(w));
	w.c = c;
	w.side = side;
	w.edges = edges;
	err = walk_node(&w, &c->sum[side]->tree, 0);
	rs_buf_release(&w.path);
	return err;
}

/* The head time of call `e`, less what ran under a new frame (blamed there). */
static double head_of(const struct cedge *e)
{
	return fmax(0, e->t[1] - e->under_new);
}

/*
 * Step 1: whether each function grew in every context it is called
 * from. Its callers' calls are compared: the one whose time grew most
 * is set aside, and the rest must have grown by at least half the
 * function's overall rate -- a function called more from one new or
 * changed place grows there only. Time under new frames is left out
 * (it is the new call's), so a helper called from a new method is not
 * "slower" where its old callers call it.
 */
struct callers {
	double all_b, all_h;   /* over every call of the function */
	double top_g, top_b, top_h; /* the call whose time grew most */
};

static int contexts(struct ctx *c, double scale)
{
	struct callers *k = calloc(c->nf ? c->nf : 1, sizeof(*k));
	size_t i;

	/* not "nobody is blamable": fewer culprits change the check's verdict */
	if (!k)
		return oom();
	for (i = 0; i < c->nf; i++)
		k[i].top_g = -INFINITY;
	for (i = 0; i < c->ne; i++) {
		const struct cedge *e = &c->e[i];
		struct callers *x = &k[e->b];
		double b = scale * e->t[0], h = head_of(e);

		if (e->a == e->b)
			continue;
		x->all_b += b;
		x->all_h += h;
		if (h - b > x->top_g) {
			x->top_g = h - b;
			x->top_b = b;
			x->top_h = h;
		}
	}
	for (i = 0; i < c->ne; i++) {
		const struct cedge *e = &c->e[i];
		struct cfn *f = &c->f[e->b];

		if (e->a == e->b)
			continue;
		f->n_ctx += k[e->b].all_b > 0 && scale * e->t[0] >= CONTEXT_SHARE * k[e->b].all_b;
		f->n_callers += e->t[0] > 0 || e->t[1] > 0;
	}
	for (i = 0; i < c->nf; i++) {
		struct cfn *f = &c->f[i];
		const struct callers *x = &k[i];
		double rest_b = x->all_b - x->top_b, rest_h = x->all_h - x->top_h;

		if (f->n_ctx >= 2 && rest_b >= REST_SHARE * x->all_b && x->all_h > x->all_b)
			f->blamable = (rest_h - rest_b) / rest_b >=
				      PROPORTIONAL * (x->all_h - x->all_b) / x->all_b;
		else
			f->blamable = !f->lib;
		if (f->n_ctx < 2 || rest_b < REST_SHARE * x->all_b)
			f->n_ctx = 1;
	}
	free(k);
	return 0;
}

/* Step 2: the growth of each function's own body. */
static void bodies(struct ctx *c, double scale)
{
	size_t i;

	for (i = 0; i < c->nf; i++)
		c->f[i].body = fmax(0, c->f[i].s[1] - c->f[i].under_new[1] - scale * c->f[i].s[0]);
	for (i = 0; i < c->ne; i++) {
		const struct cedge *e = &c->e[i];
		const struct cfn *b = &c->f[e->b];

		if (is_new(b) || e->a == e->b)
			continue;
		/* a call the base did not store is new only when it is well above
		 * what the base could have left out */
		if (!b->blamable || (!e->seen[0] && head_of(e) >= NEW_CALL_FLOORS * scale * c->floor[0]))
			c->f[e->a].body += fmax(0, head_of(e) - scale * e->t[0]);
	}
}

static int push_culprit(struct rs_culprits *r, size_t *alloc, enum rs_culprit_case kind,
			const struct cfn *f, const struct cfn *caller, double growth,
			const char *path, const struct ctx *c, double scale)
{
	struct rs_culprit *x;
	int err;

	err = grow_arr((void **)&r->c, alloc, r->n + 1, sizeof(*r->c));
	if (err)
		return err;
	x = &r->c[r->n];
	memset(x, 0, sizeof(*x));
	x->kind = kind;
	x->function = strdup(f->name);
	x->file = strdup(f->file);
	x->caller = caller ? strdup(caller->name) : NULL;
	x->path = path ? strdup(path) : NULL;
	r->n++;
	if (!x->function || !x->file || (caller && !x->caller) || (path && !x->path))
		return oom();
	x->line = f->line;
	x->growth = growth;
	x->head_total = f->t[1];
	x->base_total = scale * f->t[0];
	x->share = c->time[1] > 0 ? growth / c->time[1] : 0;
	x->n_callers = f->n_callers;
	return 0;
}

static int cmp_culprit(const void *a, const void *b)
{
	const struct rs_culprit *x = a, *y = b;

	if (x->growth != y->growth)
		return x->growth < y->growth ? 1 : -1;
	return strcmp(x->function, y->function);
}

/* Step 3. */
static int pick(struct ctx *c, struct rs_culprits *r, double scale, double floor)
{
	size_t alloc = 0, i;
	int err = 0;

	for (i = 0; i < c->ne && !err; i++) {
		const struct cedge *e = &c->e[i];
		const struct cfn *a = &c->f[e->a], *b = &c->f[e->b];

		if (!is_new(b) || is_new(a) || e->t[1] < floor)
			continue;
		err = push_culprit(r, &alloc, RS_CULPRIT_NEW_CALL, b, a, e->t[1] - scale * e->t[0],
				   e->best_path ? e->best_path : b->best_path, c, scale);
	}
	for (i = 0; i < c->nf && !err; i++) {
		const struct cfn *f = &c->f[i];
		int root = f->t[0] >= ROOT_SHARE * c->time[0] && f->t[1] >= ROOT_SHARE * c->time[1];

		if (is_new(f) || !f->blamable || root || f->body < floor)
			continue;
		err = push_culprit(r, &alloc, f->n_ctx >= 2 ? RS_CULPRIT_EVERYWHERE : RS_CULPRIT_OWN_BODY,
				   f, NULL, f->body, f->best_path, c, scale);
	}
	if (!err && r->n)
		qsort(r->c, r->n, sizeof(*r->c), cmp_culprit);
	return err;
}

/* Whether each function ran in the base: the "ran" set, else being listed. */
static void ran_in_base(struct ctx *c)
{
	int has_ran = c->sum[0]->ran != NULL;

	for (size_t i = 0; i < c->nf; i++) {
		struct cfn *f = &c->f[i];

		f->ran_base = f->listed[0] || f->t[0] > 0;
		if (!f->ran_base && has_ran)
			f->ran_base = rs_summary_ran_in(c->sum[0]->ran, f->bare, f->file) > 0;
	}
}

static void ctx_release(struct ctx *c)
{
	for (size_t i = 0; i < c->nf; i++) {
		free(c->f[i].name);
		free(c->f[i].best_path);
	}
	for (size_t i = 0; i < c->ne; i++)
		free(c->e[i].best_path);
	free(c->f);
	free(c->e);
	free(c->rows[0]);
	free(c->rows[1]);
	json_decref(c->by_key);
	json_decref(c->by_name);
	json_decref(c->by_edge);
	rs_buf_release(&c->k);
}

static void ran_in_base(struct ctx *c);

/* Both summaries' functions and edges into `c`. */
static int load(struct ctx *c)
{
	int err, had[2];

	for (int side = 0; side < 2; side++) {
		err = load_lists(c, side);
		if (err)
			return err;
		err = load_calls(c, side, &had[side]);
		if (err)
			return err;
	}
	/* a side without "calls" (recorded before them): both sides' edges
	 * from their pruned trees, so that the two are alike */
	ran_in_base(c);
	c->from_tree = !had[0] || !had[1];
	for (int side = 0; side < 2; side++) {
		double share = 0;

		share = c->from_tree ? TREE_FLOOR : c->sum[side]->calls.floor;
		c->floor[side] = share * c->time[side];
	}
	if (c->from_tree) {
		for (size_t i = 0; i < c->ne; i++)
			for (int side = 0; side < 2; side++) {
				c->e[i].t[side] = c->e[i].s[side] = 0;
				c->e[i].seen[side] = 0;
			}
		err = walk_tree(c, 0, 1);
		if (err)
			return err;
	}
	return walk_tree(c, 1, c->from_tree);
}

int rs_culprits_find(struct rs_culprits **out, const struct rs_runrec_summary *base_summary,
		     const struct rs_runrec_summary *head_summary, double scale, double floor)
{
	struct ctx c;
	struct rs_culprits *r = calloc(1, sizeof(*r));
	int err = 0;

	memset(&c, 0, sizeof(c));
	c.by_key = json_object();
	c.by_name = json_object();
	c.by_edge = json_object();
	if (!r || !c.by_key || !c.by_name || !c.by_edge) {
		err = oom();
		goto out;
	}
	if (!(scale > 0))
		scale = 1;
	c.sum[0] = base_summary;
	c.sum[1] = head_summary;
	c.time[0] = base_summary ? base_summary->sampled_time : 0;
	c.time[1] = head_summary ? head_summary->sampled_time : 0;
	r->growth = c.time[1] - scale * c.time[0];
	if (!base_summary || !head_summary || !(r->growth > 0))
		goto out;
	if (!(floor > 0))
		floor = r->growth / 5;
	err = load(&c);
	if (err)
		goto out;
	r->from_tree = c.from_tree;
	err = contexts(&c, scale);
	if (err)
		goto out;
	bodies(&c, scale);
	err = pick(&c, r, scale, floor);
out:
	ctx_release(&c);
	if (err) {
		rs_culprits_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void rs_culprits_free(struct rs_culprits *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->c[i].function);
		free(r->c[i].file);
		free(r->c[i].caller);
		free(r->c[i].path);
	}
	free(r->c);
	free(r);
}

const char *rs_culprit_case_name(enum rs_culprit_case k)
{
	switch (k) {
	case RS_CULPRIT_NEW_CALL:
		return "new call";
	case RS_CULPRIT_EVERYWHERE:
		return "slower wherever it is called";
	case RS_CULPRIT_OWN_BODY:
		return "slower in its own body";
	}
	return "?";
}
