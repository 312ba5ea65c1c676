/*
 * Run-to-run comparison from the stored records.
 *
 * Function matching runs in three passes over the two summaries' flat
 * function lists, each pass only looking at what the earlier ones left:
 *   1. same name, file and first line: the function did not move;
 *   2. same name and file: the function moved (code was added above it);
 *   3. same file and first line, different name: a rename. pyinstrument
 *      records the line a function's body starts on, so a renamed
 *      function keeps it as long as nothing above it changed in the same
 *      commit -- which is what "a pure rename" looks like.
 * What is left is new (head only) or vanished (base only). Lookups go
 * through jansson hash tables keyed by "name\x1f file\x1f line", so a
 * diff costs O(functions), not O(functions^2).
 */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/diff.h"
#include "analysis/culprit.h"
#include "analysis/owncode.h"
#include "analysis/runview.h"
#include "session/summary.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/array.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One function row of a summary, flattened for matching. */
struct fnrow {
	char *name;   /* "Class.function" when the summary names a class */
	/* The function name alone: the matching key. A summary row is one
	 * (function, file, line); its class is that of whichever `self` was
	 * seen, which for a base-class method changes from run to run. */
	const char *bare;
	const char *file;
	long line;
	double self, total;
	double self_share, total_share;
	int matched;
	int fate;     /* unmatched: FATE_* */
};

enum { FATE_GONE = 0, FATE_BELOW, FATE_HIDDEN };

struct fnlist {
	struct fnrow *rows;
	size_t n;
	/* The stored list holds only the top functions (by own and by total
	 * time); a function below both cuts is absent without having
	 * vanished. */
	int truncated;
	double self_cut, total_cut;
	/* Summaries recorded since issue 10 hold every function above a
	 * floor (a share of the sampled time) and the set of every function
	 * that ran: absence then means "below the floor" or "did not run". */
	const struct rs_runrec_summary *summary;
	int has_ran;
	double floor;
	double timebase;   /* the run's sampled time: floor * timebase seconds */
};

/* Rows per ranking in a stored summary (rs_summary's default). */
#define SUMMARY_TOP 50

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The value at rank SUMMARY_TOP (or the last) of one ranking. */
static double cut_of(const struct fnlist *l, int by_total)
{
	double *v = malloc(l->n * sizeof(*v)), cut;
	size_t i;

	if (!v)
		return INFINITY; /* unknown: treat everything as maybe-hidden */
	for (i = 0; i < l->n; i++)
		v[i] = by_total ? l->rows[i].total : l->rows[i].self;
	qsort(v, l->n, sizeof(*v), cmp_desc);
	cut = v[(l->n < SUMMARY_TOP ? l->n : SUMMARY_TOP) - 1];
	free(v);
	return cut;
}

static void fnlist_release(struct fnlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->rows[i].name);
	free(l->rows);
	l->rows = NULL;
	l->n = 0;
}

/*
 * The denominator for "share of samples": the summary's sample count
 * when rows carry sample counts, else its sampled time (or duration).
 */
/*
 * One row of summary.functions into `r`. Shares are of the sampled time
 * (`timebase`, the summary page's one definition); sample counts only
 * when times are missing.
 */
static int load_top_row(struct fnrow *r, const struct rs_runrec_function *f, double timebase,
			double samples)
{
	const char *cls = f->class_name;
	struct rs_buf b = RS_BUF_INIT;
	int err;

	if (cls && *cls)
		err = rs_buf_printf(&b, "%s.%s", cls, f->function);
	else
		err = rs_buf_puts(&b, f->function);
	if (err) {
		rs_buf_release(&b);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	r->name = rs_buf_detach(&b, NULL);
	r->bare = f->function;
	r->file = f->file;
	r->line = (long)f->line;
	r->self = f->self;
	r->total = f->total;
	if (timebase > 0) {
		r->self_share = r->self / timebase;
		r->total_share = r->total / timebase;
	} else if (samples > 0) {
		r->self_share = (double)f->self_samples / samples;
		r->total_share = (double)f->total_samples / samples;
	}
	return 0;
}

/*
 * The rows of summary.more_functions (summaries since issue 10: every
 * function above a floor, as [name, file index, line, self us, total us])
 * appended to `out`, whose rows array holds `n` slots so far.
 */
static int load_more_rows(struct fnlist *out, const struct rs_runrec_summary *summary, size_t n,
			  double timebase)
{
	const struct rs_runrec_more *more = &summary->more;
	size_t m = summary->has_more ? more->nrows : 0;

	out->floor = summary->has_more ? more->floor : 0;
	if (m) {
		size_t alloc = n; /* the rows so far fill their array exactly */
		int err = rs_array_grow(&out->rows, &alloc, n + m, sizeof(*out->rows), 0);

		if (err)
			return err;
	}
	for (size_t i = 0; i < m; i++) {
		const struct rs_runrec_more_row *row = &more->rows[i];
		struct fnrow *r = &out->rows[out->n];

		memset(r, 0, sizeof(*r));
		r->name = strdup(row->function);
		if (!r->name)
			return rs_error_set(RS_EGENERIC, "out of memory");
		r->bare = row->function;
		r->file = more->files[row->file];
		r->line = (long)row->line;
		r->self = (double)row->self_us / 1e6;
		r->total = (double)row->total_us / 1e6;
		if (timebase > 0) {
			r->self_share = r->self / timebase;
			r->total_share = r->total / timebase;
		}
		out->n++;
	}
	return 0;
}

/* Whether the list is the top of a longer one, and its cuts. */
static void set_cuts(struct fnlist *out, const struct rs_runrec_summary *summary)
{
	if (!out->n)
		return;
	out->truncated = (double)summary->distinct_functions > (double)out->n;
	out->self_cut = cut_of(out, 0);
	out->total_cut = cut_of(out, 1);
}

static int load_functions(struct fnlist *out, const rs_runrec *run)
{
	const struct rs_runrec_summary *summary = run->summary;
	double samples, timebase;
	size_t i, n;
	int err;

	memset(out, 0, sizeof(*out));
	if (!summary)
		return 0;
	samples = (double)summary->samples;
	timebase = summary->sampled_time;
	if (!(timebase > 0))
		timebase = summary->duration.present ? summary->duration.v : 0;
	out->timebase = timebase;
	n = summary->nfunctions;
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!out->rows)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n; i++) {
		err = load_top_row(&out->rows[out->n], &summary->functions[i], timebase, samples);
		if (err)
			goto fail;
		out->n++;
	}
	out->summary = summary;
	out->has_ran = summary->ran != NULL;
	err = load_more_rows(out, summary, n, timebase);
	if (err)
		goto fail;
	set_cuts(out, summary);
	return 0;
fail:
	fnlist_release(out);
	return err;
}

/*
 * Whether `r`, present in one run only, may simply be below the cut of
 * the other run's truncated list. Twice the cut: small functions move by
 * that much from run to run without any code change.
 */
static int maybe_hidden(const struct fnrow *r, const struct fnlist *other)
{
	return other->truncated && r->self <= 2 * other->self_cut &&
	       r->total <= 2 * other->total_cut;
}

static int push_func(struct rs_diff *d, size_t *alloc, enum rs_func_change c,
		     const struct fnrow *b, const struct fnrow *h);

/*
 * What an unmatched row of `l` is on the other side: below the other
 * run's floor (it ran there, and was not stored), absent for sure (it did
 * not run there), or -- for summaries without the set of functions that
 * ran -- possibly hidden below the other list's cut.
 */
static void classify(struct fnlist *l, const struct fnlist *other)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct fnrow *r = &l->rows[i];
		int ran;

		if (r->matched)
			continue;
		ran = other->has_ran ? rs_summary_ran_in(other->summary->ran, r->bare, r->file) : -1;
		if (ran > 0)
			r->fate = FATE_BELOW;
		else if (ran == 0)
			r->fate = FATE_GONE;
		else
			r->fate = maybe_hidden(r, other) ? FATE_HIDDEN : FATE_GONE;
	}
}

/* A function stored on one side, below the other side's floor (`timebase`: that side's time). */
static int push_below(struct rs_diff *d, size_t *alloc, const struct fnrow *b,
		      const struct fnrow *h, double floor, double timebase)
{
	int err = push_func(d, alloc, RS_FUNC_CHANGED, b, h);
	struct rs_func_delta *f;

	if (err)
		return err;
	f = &d->funcs[d->n_funcs - 1];
	if (!(floor > 0))
		floor = RS_SUMMARY_FLOOR;
	if (b) {
		f->head_below = floor;
		f->head_max = floor * timebase;
	} else {
		f->base_below = floor;
		f->base_max = floor * timebase;
	}
	d->n_below++;
	return 0;
}

/* Lines apart, at most, for a rename whose body also moved a little. */
#define RENAME_LINES 10
/* Each side's total at least this share of its run: small functions come
 * and go with the simulated events, and two of them in one file are no
 * evidence of a rename. */
#define RENAME_MIN_SHARE 0.002

/*
 * Probable renames: a function that is gone for sure from one side and
 * one that is new for sure on the other, in the same file, starting
 * within RENAME_LINES lines, with total times within a factor of 1.5,
 * each at least RENAME_MIN_SHARE of its run.
 * The closest in lines wins; each row is used once.
 */
static int probable_renames(struct rs_diff *d, size_t *alloc, struct fnlist *base,
			    struct fnlist *head)
{
	size_t i, j;
	int err = 0;

	for (i = 0; i < head->n && !err; i++) {
		struct fnrow *h = &head->rows[i], *best = NULL;
		long bestdist = RENAME_LINES + 1;

		if (h->matched || h->fate != FATE_GONE || h->line <= 0 || !base->has_ran)
			continue;
		for (j = 0; j < base->n; j++) {
			struct fnrow *b = &base->rows[j];
			long dist = labs(b->line - h->line);

			if (b->matched || b->fate != FATE_GONE || b->line <= 0 ||
			    strcmp(b->file, h->file) || !strcmp(b->bare, h->bare) ||
			    !head->has_ran)
				continue;
			if (!(h->total <= 1.5 * b->total && b->total <= 1.5 * h->total) ||
			    h->total_share < RENAME_MIN_SHARE || b->total_share < RENAME_MIN_SHARE)
				continue;
			if (dist < bestdist) {
				bestdist = dist;
				best = b;
			}
		}
		if (!best)
			continue;
		best->matched = h->matched = 1;
		err = push_func(d, alloc, RS_FUNC_RENAMED, best, h);
		if (!err)
			d->funcs[d->n_funcs - 1].probable = 1;
	}
	return err;
}

static int key_of(struct rs_buf *b, const char *name, const char *file,
		  long line, int with_name, int with_line)
{
	rs_buf_clear(b);
	return rs_buf_printf(b, "%s\x1f%s\x1f%ld", with_name ? name : "", file,
			     with_line ? line : -1L);
}

/*
 * Index the unmatched rows of `l` by the chosen key parts. A key seen
 * twice maps to -1: ambiguous, so pass 2 and 3 leave it alone rather
 * than guess.
 */
static json_t *index_rows(const struct fnlist *l, int with_name, int with_line)
{
	json_t *map = json_object();
	struct rs_buf k = RS_BUF_INIT;
	size_t i;

	if (!map)
		return NULL;
	for (i = 0; i < l->n; i++) {
		json_int_t v = (json_int_t)i;

		if (l->rows[i].matched)
			continue;
		if (key_of(&k, l->rows[i].bare, l->rows[i].file, l->rows[i].line,
			   with_name, with_line))
			goto fail;
		if (json_object_get(map, k.ptr))
			v = -1;
		if (json_object_set_new(map, k.ptr, json_integer(v)))
			goto fail;
	}
	rs_buf_release(&k);
	return map;
fail:
	rs_buf_release(&k);
	json_decref(map);
	return NULL;
}

static int push_func(struct rs_diff *d, size_t *alloc, enum rs_func_change c,
		     const struct fnrow *b, const struct fnrow *h)
{
	struct rs_func_delta *f;
	int err = rs_array_grow(&d->funcs, alloc, d->n_funcs + 1, sizeof(*d->funcs), 64);

	if (err)
		return err;
	f = &d->funcs[d->n_funcs];
	memset(f, 0, sizeof(*f));
	f->change = c;
	f->function = strdup(h ? h->name : b->name);
	f->file = strdup(h ? h->file : b->file);
	{
		struct rs_buf k = RS_BUF_INIT;

		if (!rs_buf_printf(&k, "%s\x1f%s", h ? h->bare : b->bare, f->file ? f->file : ""))
			f->key = rs_buf_detach(&k, NULL);
		rs_buf_release(&k);
	}
	f->own = rs_owncode_match(d->own, f->file);
	f->line = h ? h->line : b->line;
	if (c == RS_FUNC_RENAMED)
		f->old_function = strdup(b->name);
	if (!f->function || !f->file || !f->key ||
	    (c == RS_FUNC_RENAMED && !f->old_function)) {
		free(f->function);
		free(f->file);
		free(f->key);
		free(f->old_function);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (b) {
		f->base_self = b->self;
		f->base_total = b->total;
		f->base_self_share = b->self_share;
		f->base_total_share = b->total_share;
	}
	if (h) {
		f->head_self = h->self;
		f->head_total = h->total;
		f->head_self_share = h->self_share;
		f->head_total_share = h->total_share;
	}
	d->n_funcs++;
	return 0;
}

/* One matching pass: every unmatched head row looks up the base index. */
static int match_pass(struct rs_diff *d, size_t *alloc, struct fnlist *base,
		      struct fnlist *head, int with_name, int with_line,
		      int want_rename)
{
	json_t *bmap = index_rows(base, with_name, with_line);
	json_t *hmap = index_rows(head, with_name, with_line);
	struct rs_buf k = RS_BUF_INIT;
	int err = 0;
	size_t i;

	if (!bmap || !hmap) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < head->n; i++) {
		struct fnrow *h = &head->rows[i];
		json_int_t bi, hi;
		struct fnrow *b;

		if (h->matched)
			continue;
		err = key_of(&k, h->bare, h->file, h->line, with_name, with_line);
		if (err)
			goto out;
		hi = json_integer_value(json_object_get(hmap, k.ptr));
		if (!json_object_get(bmap, k.ptr) || hi < 0)
			continue;
		bi = json_integer_value(json_object_get(bmap, k.ptr));
		if (bi < 0)
			continue;
		b = &base->rows[bi];
		if (b->matched)
			continue;
		/* Same function under another `self` class (a base-class
		 * method) is not a rename: the bare names must differ. */
		if (want_rename && !strcmp(b->bare, h->bare))
			continue;
		/* A rename needs a real position: line 0 means "unknown". */
		if (want_rename && h->line <= 0)
			continue;
		b->matched = h->matched = 1;
		err = push_func(d, alloc, want_rename ? RS_FUNC_RENAMED : RS_FUNC_CHANGED,
				b, h);
		if (err)
			goto out;
	}
out:
	rs_buf_release(&k);
	json_decref(bmap);
	json_decref(hmap);
	return err;
}

double rs_func_self_change_min(const struct rs_func_delta *f)
{
	double c = fabs(f->head_self - f->base_self);

	/* a side below the floor was somewhere in [0, max]: the change is at
	 * least the distance from the stored side to that range */
	if (f->head_below > 0)
		c = fmax(0, f->base_self - f->head_max);
	else if (f->base_below > 0)
		c = fmax(0, f->head_self - f->base_max);
	return c;
}

static int cmp_func(const void *a, const void *b)
{
	const struct rs_func_delta *x = a, *y = b;
	double dx = rs_func_self_change_min(x);
	double dy = rs_func_self_change_min(y);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	dx = fabs(x->head_total - x->base_total);
	dy = fabs(y->head_total - y->base_total);
	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->function, y->function);
}

int rs_diff_is_time_metric(const char *name)
{
	static const char *const names[] = { "duration", "cpu_time", "sampled_time" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return 1;
	/* a phase's inclusive time (session/phases.h) is a time like duration */
	return !strncmp(name, "phase.", 6);
}

static int push_metric(struct rs_diff *d, size_t *alloc, const char *name,
		       double base, double head, int normalised)
{
	struct rs_metric_delta *m;
	int err = rs_array_grow(&d->metrics, alloc, d->n_metrics + 1, sizeof(*d->metrics), 32);

	if (err)
		return err;
	m = &d->metrics[d->n_metrics];
	m->name = strdup(name);
	if (!m->name)
		return rs_error_set(RS_EGENERIC, "out of memory");
	m->base = base;
	m->head = head;
	m->abs = head - base;
	m->rel = base != 0 ? (head - base) / fabs(base) : NAN;
	m->normalised = normalised;
	d->n_metrics++;
	return 0;
}

/* The metrics every run has, shown first and in this order. */
static const char *const headline[] = { "duration", "cpu_time", "samples", "sampled_time" };
#define N_HEADLINE (sizeof(headline) / sizeof(headline[0]))

static int is_headline(const char *key)
{
	for (size_t i = 0; i < N_HEADLINE; i++)
		if (!strcmp(key, headline[i]))
			return 1;
	return 0;
}

/*
 * The time metrics per unit of workload, when both runs record the same
 * workload key with different values (the same workload on both sides:
 * per-unit rows would only repeat every time metric with the same change).
 */
static int diff_per_unit(struct rs_diff *d, size_t *alloc, const rs_runrec *base,
			 const rs_runrec *head, const char *per)
{
	const char *kb = NULL, *kh = NULL;
	struct rs_buf name = RS_BUF_INIT;
	double wb, wh, bv, hv;
	int err = 0;

	if (!rs_runview_workload(base, per, &kb, &wb) ||
	    !rs_runview_workload(head, per, &kh, &wh) || strcmp(kb, kh) || wb == wh)
		return 0;
	d->workload_key = strdup(kh);
	if (!d->workload_key)
		return rs_error_set(RS_EGENERIC, "out of memory");
	d->base_workload = wb;
	d->head_workload = wh;
	for (size_t i = 0; !err && i < N_HEADLINE; i++) {
		if (!rs_diff_is_time_metric(headline[i]) ||
		    !rs_runview_metric(base, headline[i], &bv) ||
		    !rs_runview_metric(head, headline[i], &hv))
			continue;
		rs_buf_clear(&name);
		err = rs_buf_printf(&name, "%s/%s", headline[i], kh);
		if (!err)
			err = push_metric(d, alloc, name.ptr, bv / wb, hv / wh, 1);
	}
	rs_buf_release(&name);
	return err;
}

/*
 * Metrics in a stable order: the four headline ones first (as a reader
 * expects them), then the others in the head run's order, then the
 * workload-normalised ones.
 */
static int diff_metrics(struct rs_diff *d, const rs_runrec *base, const rs_runrec *head,
			const struct rs_diff_opts *opts)
{
	const struct rs_runrec_map *hm = &head->metrics;
	size_t alloc = 0, i;
	double bv, hv;
	int err;

	for (i = 0; i < N_HEADLINE; i++)
		if (rs_runview_metric(base, headline[i], &bv) &&
		    rs_runview_metric(head, headline[i], &hv)) {
			err = push_metric(d, &alloc, headline[i], bv, hv, 0);
			if (err)
				return err;
		}
	for (i = 0; i < hm->n; i++) {
		const char *key = hm->items[i].name;

		if (is_headline(key) || hm->items[i].value.kind == RS_RUNREC_STRING)
			continue;
		if (!rs_runview_metric(base, key, &bv))
			continue;
		err = push_metric(d, &alloc, key, bv, hm->items[i].value.d, 0);
		if (err)
			return err;
	}
	if (opts && opts->no_workload)
		return 0;
	return diff_per_unit(d, &alloc, base, head, opts ? opts->per : NULL);
}


/* ---- call-tree ancestry ----------------------------------------------- */

/* Tree levels walked at most (the stored tree has 40 under the root). */
#define ANC_DEPTH 64

/*
 * Add "ancestor\x1e descendant" for every pair of distinct functions on
 * one root-to-node path of a stored summary tree. The tree is pruned
 * (0.5% of the run), which is what attribution needs: a frame below
 * that explains no step worth reporting.
 */
static int tree_pairs(json_t *set, const struct rs_runrec_node *node, const char **path_keys,
		      char **owned, size_t depth, struct rs_buf *k)
{
	const char *fn = node->function, *file = node->file;
	size_t i;
	int err = 0;

	if (depth >= ANC_DEPTH)
		return 0;
	rs_buf_clear(k);
	if (rs_buf_printf(k, "%s\x1f%s", fn, file))
		return rs_error_set(RS_EGENERIC, "out of memory");
	owned[depth] = rs_buf_detach(k, NULL);
	if (!owned[depth])
		return rs_error_set(RS_EGENERIC, "out of memory");
	path_keys[depth] = owned[depth];
	for (i = 1; i < depth && !err; i++) { /* [root] (0) is nobody's caller */
		if (!strcmp(path_keys[i], path_keys[depth]))
			continue;
		rs_buf_clear(k);
		if (rs_buf_printf(k, "%s\x1e%s", path_keys[i], path_keys[depth]) ||
		    json_object_set_new(set, k->ptr, json_true()))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; !err && i < node->nchildren; i++)
		err = tree_pairs(set, &node->children[i], path_keys, owned, depth + 1, k);
	free(owned[depth]);
	owned[depth] = NULL;
	return err;
}

static int load_ancestry(json_t *set, const rs_runrec *run)
{
	const char *keys[ANC_DEPTH];
	char *owned[ANC_DEPTH] = { NULL };
	struct rs_buf k = RS_BUF_INIT;
	int err;

	if (!run->summary)
		return 0;
	err = tree_pairs(set, &run->summary->tree, keys, owned, 0, &k);
	rs_buf_release(&k);
	return err;
}

int rs_diff_calls(const struct rs_diff *d, const struct rs_func_delta *a,
		  const struct rs_func_delta *b)
{
	struct rs_buf k = RS_BUF_INIT;
	int yes = 0;

	if (!d->ancestry || !a->key || !b->key || !strcmp(a->key, b->key))
		return 0;
	if (!rs_buf_printf(&k, "%s\x1e%s", a->key, b->key))
		yes = json_object_get(d->ancestry, k.ptr) != NULL;
	rs_buf_release(&k);
	return yes;
}

/* A root frame: ~100% of every run, explains nothing. */
#define ROOT_SHARE 0.9

static int is_root(const struct rs_func_delta *f)
{
	if (f->change == RS_FUNC_NEW)
		return 0;
	if (f->change == RS_FUNC_VANISHED)
		return 0;
	return f->base_total_share >= ROOT_SHARE && f->head_total_share >= ROOT_SHARE;
}

static double delta_of(const struct rs_func_delta *f, double wb, double wh)
{
	return f->head_total / wh - f->base_total / wb;
}

/* What cmp_explain needs besides the two indexes it compares. */
struct explain_sort {
	const struct rs_diff *d;
	double wb, wh;
};

static int cmp_explain(const void *a, const void *b, void *ctx)
{
	const struct explain_sort *e = ctx;
	const struct rs_func_delta *x = &e->d->funcs[*(const size_t *)a];
	const struct rs_func_delta *y = &e->d->funcs[*(const size_t *)b];
	double dx = delta_of(x, e->wb, e->wh), dy = delta_of(y, e->wb, e->wh);

	if (x->own != y->own)
		return x->own ? -1 : 1;
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/*
 * Candidates are few (each explains at least `floor` of the growth), so
 * the pairwise "is there a candidate below it" is cheap.
 */
/*
 * The growth of the candidates nearest below candidate `i` (those with no
 * candidate between them and it). Own code counts only own code below it.
 */
static double growth_below(const struct rs_diff *d, const size_t *cand, size_t n, size_t i,
			   double wb, double wh)
{
	const struct rs_func_delta *f = &d->funcs[cand[i]];
	double below = 0;

	for (size_t j = 0; j < n; j++) {
		const struct rs_func_delta *g = &d->funcs[cand[j]];
		int leaf = 1;

		if (j == i || (f->own && !g->own) || !rs_diff_calls(d, f, g))
			continue;
		for (size_t k = 0; k < n && leaf; k++) {
			const struct rs_func_delta *h = &d->funcs[cand[k]];

			/* g counts when no candidate sits between f and g */
			if (k != j && k != i && (f->own ? h->own : 1) &&
			    rs_diff_calls(d, f, h) && rs_diff_calls(d, h, g))
				leaf = 0;
		}
		if (leaf)
			below += delta_of(g, wb, wh);
	}
	return below;
}

/*
 * Library code below a kept own frame is how that frame spends its time,
 * already counted in it: not named again.
 */
static void drop_library_below_own(const struct rs_diff *d, const size_t *cand, size_t n,
				   unsigned char *keep)
{
	for (size_t i = 0; i < n; i++) {
		if (!keep[i] || d->funcs[cand[i]].own)
			continue;
		for (size_t j = 0; j < n; j++)
			if (keep[j] && d->funcs[cand[j]].own &&
			    rs_diff_calls(d, &d->funcs[cand[j]], &d->funcs[cand[i]])) {
				keep[i] = 0;
				break;
			}
	}
}

size_t rs_diff_explain(const struct rs_diff *d, double wb, double wh, double floor,
		       size_t *out, size_t max)
{
	struct explain_sort sort = { d, wb, wh };
	size_t *cand, n = 0, kept = 0, i;
	unsigned char *keep;

	if (!max || !d->n_funcs || !(wb > 0) || !(wh > 0))
		return 0;
	cand = malloc(d->n_funcs * sizeof(*cand));
	if (!cand)
		return 0;
	for (i = 0; i < d->n_funcs; i++) {
		double delta = delta_of(&d->funcs[i], wb, wh);

		if (delta > 0 && delta >= floor && !d->funcs[i].root)
			cand[n++] = i;
	}
	/* Deepest: a candidate is dropped when the nearest candidates below
	 * it explain at least 80% of its growth -- it only passed them on.
	 * Own code is never dropped for library code below it: a new user
	 * function stays named whatever pandas calls it makes. */
	keep = calloc(n ? n : 1, 1);
	if (!keep) {
		free(cand);
		return 0;
	}
	for (i = 0; i < n; i++)
		keep[i] = growth_below(d, cand, n, i, wb, wh) <
			  0.8 * delta_of(&d->funcs[cand[i]], wb, wh);
	drop_library_below_own(d, cand, n, keep);
	for (i = 0; i < n; i++)
		if (keep[i])
			cand[kept++] = cand[i];
	free(keep);
	qsort_r(cand, kept, sizeof(*cand), cmp_explain, &sort);
	for (i = 0; i < kept && i < max; i++)
		out[i] = cand[i];
	free(cand);
	return i < max ? i : max;
}

/*
 * Mark root frames and callers whose total changed only through a
 * function below them: a callee that is responsible for at least 80%
 * of the caller's change (same sign); own code is not a wrapper of the
 * library code it calls. Only functions whose total moved
 * by 0.5% of the run or more are looked at.
 */
static void mark_wrappers(struct rs_diff *d)
{
	size_t i, j;

	for (i = 0; i < d->n_funcs; i++)
		d->funcs[i].root = is_root(&d->funcs[i]);
	for (i = 0; i < d->n_funcs; i++) {
		struct rs_func_delta *f = &d->funcs[i];
		double df = f->head_total - f->base_total;
		double scale = fmax(f->head_total / fmax(f->head_total_share, 1e-12),
				    f->base_total / fmax(f->base_total_share, 1e-12));

		if (f->root || fabs(df) < 0.005 * scale || !isfinite(scale))
			continue;
		for (j = 0; j < d->n_funcs && !f->wrapper; j++) {
			const struct rs_func_delta *g = &d->funcs[j];
			double dg = g->head_total - g->base_total;

			if (j != i && dg * df > 0 && fabs(dg) >= 0.8 * fabs(df) &&
			    (!f->own || g->own) && rs_diff_calls(d, f, g))
				f->wrapper = 1;
		}
		if (f->wrapper)
			d->n_wrappers++;
	}
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The diff's ids, its metrics and the call ancestry of both runs. */
static int diff_header(struct rs_diff *d, const rs_runrec *base, const rs_runrec *head,
		       const struct rs_diff_opts *opts)
{
	int err;

	d->base_id = dup_or_null(base->id ? base->id : "base");
	d->head_id = dup_or_null(head->id ? head->id : "head");
	d->base_commit = dup_or_null(base->commit ? base->commit : "");
	d->head_commit = dup_or_null(head->commit ? head->commit : "");
	if (!d->base_id || !d->head_id || !d->base_commit || !d->head_commit)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = diff_metrics(d, base, head, opts);
	if (err)
		return err;
	d->own = opts ? opts->own : NULL;
	d->ancestry = json_object();
	if (!d->ancestry)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = load_ancestry(d->ancestry, head);
	if (err)
		return err;
	return load_ancestry(d->ancestry, base);
}

/*
 * The functions of one side (`list`) that matched none of the other:
 * hidden (not compared), below the other side's floor (`other_floor`),
 * or new (head side) / vanished.
 */
static int push_unmatched(struct rs_diff *d, size_t *alloc, struct fnlist *list,
			  const struct fnlist *other, int head_side)
{
	int err = 0;

	for (size_t i = 0; !err && i < list->n; i++) {
		struct fnrow *r = &list->rows[i];

		if (r->matched)
			continue;
		if (r->fate == FATE_HIDDEN)
			d->n_uncompared++;
		else if (r->fate == FATE_BELOW)
			err = push_below(d, alloc, head_side ? NULL : r, head_side ? r : NULL,
					 other->floor, other->timebase);
		else if (head_side)
			err = push_func(d, alloc, RS_FUNC_NEW, NULL, r);
		else
			err = push_func(d, alloc, RS_FUNC_VANISHED, r, NULL);
	}
	return err;
}

/* Match the functions of both runs: same name and file, then looser, then renames. */
static int diff_functions(struct rs_diff *d, struct fnlist *bl, struct fnlist *hl)
{
	size_t alloc = 0;
	int err;

	err = match_pass(d, &alloc, bl, hl, 1, 1, 0);
	if (err)
		return err;
	err = match_pass(d, &alloc, bl, hl, 1, 0, 0);
	if (err)
		return err;
	err = match_pass(d, &alloc, bl, hl, 0, 1, 1);
	if (err)
		return err;
	classify(hl, bl);
	classify(bl, hl);
	err = probable_renames(d, &alloc, bl, hl);
	if (err)
		return err;
	err = push_unmatched(d, &alloc, hl, bl, 1);
	if (err)
		return err;
	err = push_unmatched(d, &alloc, bl, hl, 0);
	if (err)
		return err;
	if (d->n_funcs)
		qsort(d->funcs, d->n_funcs, sizeof(*d->funcs), cmp_func);
	mark_wrappers(d);
	return 0;
}

/*
 * The culprits of a longer run (per unit of workload when normalised),
 * from the two summaries' calls by context; none when it did not grow.
 */
static int diff_culprits(struct rs_diff *d, const rs_runrec *base, const rs_runrec *head)
{
	double scale = 1;

	if (d->workload_key && d->base_workload > 0 && d->head_workload > 0)
		scale = d->head_workload / d->base_workload;
	return rs_culprits_find(&d->culprits, base->summary, head->summary, scale, 0);
}

int rs_diff_runs(struct rs_diff **out, const rs_runrec *base, const rs_runrec *head,
		 const struct rs_diff_opts *opts)
{
	struct fnlist bl, hl;
	struct rs_diff *d = NULL;
	int err;

	memset(&bl, 0, sizeof(bl));
	memset(&hl, 0, sizeof(hl));
	d = calloc(1, sizeof(*d));
	if (!d)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = diff_header(d, base, head, opts);
	if (err)
		goto out;
	err = load_functions(&bl, base);
	if (err)
		goto out;
	err = load_functions(&hl, head);
	if (err)
		goto out;
	err = diff_functions(d, &bl, &hl);
	if (!err)
		err = diff_culprits(d, base, head);
out:
	d->own = NULL;
	fnlist_release(&bl);
	fnlist_release(&hl);
	if (err) {
		rs_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void rs_diff_free(struct rs_diff *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n_metrics; i++)
		free(d->metrics[i].name);
	json_decref(d->ancestry);
	rs_culprits_free(d->culprits);
	for (i = 0; i < d->n_funcs; i++) {
		free(d->funcs[i].key);
		free(d->funcs[i].function);
		free(d->funcs[i].old_function);
		free(d->funcs[i].file);
	}
	free(d->metrics);
	free(d->funcs);
	free(d->base_id);
	free(d->head_id);
	free(d->base_commit);
	free(d->head_commit);
	free(d->workload_key);
	free(d);
}

const struct rs_metric_delta *rs_diff_metric(const struct rs_diff *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_metrics; i++)
		if (!strcmp(d->metrics[i].name, name))
			return &d->metrics[i];
	return NULL;
}
