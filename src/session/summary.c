/*
 * The session summary: one pass over the samples, arrays indexed by the
 * parser's function and file ids, and a call tree of function ids.
 *
 * Per sample (stack root..leaf, time t):
 *  - self: the leaf's function gets t (and its file);
 *  - total: every distinct function on the stack gets t once, however
 *    often recursion repeats it. A per-function stamp (the number of the
 *    sample that last counted it) finds repeats without a set per sample;
 *    files are counted the same way;
 *  - tree: the stack's functions (not frames: the executing-line
 *    attribute must not split a node) are walked from a synthetic root,
 *    one (parent, function) hash look-up per level, at most max_depth
 *    levels. Consecutive samples share most of their stack, so the nodes
 *    of the previous sample's common prefix are reused without look-ups.
 * Pruning (nodes below prune_fraction of the sampled time) happens only
 * when the JSON is built, so it never depends on the order of samples.
 */
#include "session/summary.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/intern.h"
#include "util/array.h"
#include "results/error.h"
#include "results/escape.h"

struct func_stat {
	double self, total;
	uint64_t self_n, total_n;
	uint64_t stamp;
};

struct file_stat {
	double self, total;
	uint64_t stamp;
};

/* A dense copy of two fields of each frame: the per-sample loop reads
 * this small array instead of chasing pointers into the parser's arena. */
struct frame_map {
	uint32_t func, file;
};

struct node {
	uint32_t func;           /* RS_INTERN_NONE for the root */
	uint32_t first_child;    /* RS_INTERN_NONE: none */
	uint32_t next_sibling;
	uint32_t hint;           /* the child last walked into, or RS_INTERN_NONE */
	double total, self;
};

struct rs_summary {
	struct rs_summary_options opt;
	struct rs_session_callbacks chain;
	struct rs_session_parser *parser;
	int finished;

	uint64_t samples;
	double sampled_time;

	struct frame_map *map;      /* by frame id: its function and file */
	size_t map_alloc;
	struct func_stat *funcs;
	size_t funcs_alloc;
	struct file_stat *files;
	size_t files_alloc;

	struct node *nodes;
	uint32_t nnodes;
	size_t nodes_alloc;
	struct rs_intern_u64 edges; /* (parent << 32 | function) -> node */
	int tree_truncated;

	uint32_t *fids;             /* this sample's function ids */
	uint32_t *prev_fids;        /* the previous sample's, first max_depth */
	uint32_t *prev_nodes;
	size_t prev_len, fids_alloc;
};

static int grow(void *arrp, size_t *alloc, size_t need, size_t elem)
{
	if (rs_array_grow(arrp, alloc, need, elem, 64))
		return rs_error_set(RS_EGENERIC, "out of memory summarising a session");
	return 0;
}

static int new_node(struct rs_summary *s, uint32_t parent, uint32_t func, uint32_t *out)
{
	struct node *n;
	int err;

	if (s->nnodes >= s->opt.max_nodes) {
		s->tree_truncated = 1;
		*out = RS_INTERN_NONE;
		return 0;
	}
	err = grow(&s->nodes, &s->nodes_alloc, (size_t)s->nnodes + 1, sizeof(*s->nodes));
	if (err)
		return err;
	if (parent != RS_INTERN_NONE) {
		err = rs_intern_u64_insert(&s->edges, (uint64_t)parent << 32 | func, s->nnodes);
		if (err)
			return err;
	}
	n = &s->nodes[s->nnodes];
	n->func = func;
	n->first_child = RS_INTERN_NONE;
	n->next_sibling = RS_INTERN_NONE;
	n->hint = RS_INTERN_NONE;
	n->total = 0;
	n->self = 0;
	if (parent != RS_INTERN_NONE) {
		n->next_sibling = s->nodes[parent].first_child;
		s->nodes[parent].first_child = s->nnodes;
	}
	*out = s->nnodes++;
	return 0;
}

/* Room for every function and file the parser knows, and for `depth` frames. */
static int sample_room(struct rs_summary *s, const struct rs_session_parser *p, size_t depth)
{
	size_t a;
	int err;

	err = grow(&s->funcs, &s->funcs_alloc, rs_session_parser_function_count(p),
		   sizeof(*s->funcs));
	if (err)
		return err;
	err = grow(&s->files, &s->files_alloc, rs_session_parser_file_count(p),
		   sizeof(*s->files));
	if (err)
		return err;
	if (depth <= s->fids_alloc)
		return 0;
	a = s->fids_alloc;
	err = grow(&s->fids, &a, depth, sizeof(*s->fids));
	if (err)
		return err;
	a = s->fids_alloc;
	err = grow(&s->prev_fids, &a, depth, sizeof(*s->prev_fids));
	if (err)
		return err;
	a = s->fids_alloc;
	err = grow(&s->prev_nodes, &a, depth, sizeof(*s->prev_nodes));
	if (err)
		return err;
	s->fids_alloc = a;
	return 0;
}

/* The flat tables: each function and file once per sample, and the leaf's self time. */
static void count_sample(struct rs_summary *s, const uint32_t *frames, size_t depth, double t)
{
	uint64_t stamp = ++s->samples;
	size_t i;

	s->sampled_time += t;
	for (i = 0; i < depth; i++) {
		uint32_t f = s->map[frames[i]].func, file = s->map[frames[i]].file;

		s->fids[i] = f;
		if (s->funcs[f].stamp != stamp) {
			s->funcs[f].stamp = stamp;
			s->funcs[f].total += t;
			s->funcs[f].total_n++;
		}
		if (s->files[file].stamp != stamp) {
			s->files[file].stamp = stamp;
			s->files[file].total += t;
		}
	}
	if (depth) {
		uint32_t leaf = s->fids[depth - 1];

		s->funcs[leaf].self += t;
		s->funcs[leaf].self_n++;
		s->files[s->map[frames[depth - 1]].file].self += t;
	}
}

/* The tree: reuse the previous sample's nodes for the common prefix. */
static int tree_sample(struct rs_summary *s, size_t depth, double t)
{
	size_t i, k, lim = depth < s->opt.max_depth ? depth : s->opt.max_depth;
	uint32_t node;
	int err;

	s->nodes[0].total += t;
	for (k = 0; k < lim && k < s->prev_len && s->fids[k] == s->prev_fids[k]; k++)
		s->nodes[s->prev_nodes[k]].total += t;
	node = k ? s->prev_nodes[k - 1] : 0;
	for (i = k; i < lim; i++) {
		uint32_t child = s->nodes[node].hint;

		/* the hint saves a probe into the (cache-cold) edge table */
		if (child == RS_INTERN_NONE || s->nodes[child].func != s->fids[i])
			child = rs_intern_u64_find(&s->edges, (uint64_t)node << 32 | s->fids[i]);
		if (child == RS_INTERN_NONE) {
			err = new_node(s, node, s->fids[i], &child);
			if (err)
				return err;
			if (child == RS_INTERN_NONE)
				break; /* node cap: time stays in the ancestors' totals */
		}
		s->nodes[node].hint = child;
		s->nodes[child].total += t;
		s->prev_fids[i] = s->fids[i];
		s->prev_nodes[i] = child;
		node = child;
	}
	s->prev_len = i;
	if (i == depth)
		s->nodes[node].self += t; /* the leaf is in the tree (or depth 0: root) */
	return 0;
}

static int on_sample(void *ctx, const struct rs_session_parser *p, const uint32_t *frames,
		     size_t depth, double t)
{
	struct rs_summary *s = ctx;
	int err;

	err = sample_room(s, p, depth);
	if (err)
		return err;
	count_sample(s, frames, depth, t);
	err = tree_sample(s, depth, t);
	if (err)
		return err;
	if (s->chain.sample)
		return s->chain.sample(s->chain.ctx, p, frames, depth, t);
	return 0;
}

static int on_frame(void *ctx, const struct rs_session_parser *p, uint32_t id,
		    const struct rs_session_frame *f)
{
	struct rs_summary *s = ctx;
	int err;

	err = grow(&s->map, &s->map_alloc, (size_t)id + 1, sizeof(*s->map));
	if (err)
		return err;
	s->map[id].func = f->function_id;
	s->map[id].file = f->file_id;
	return s->chain.frame ? s->chain.frame(s->chain.ctx, p, id, f) : 0;
}

static int on_header(void *ctx, const struct rs_session_parser *p, const struct rs_session_header *h)
{
	struct rs_summary *s = ctx;

	return s->chain.header ? s->chain.header(s->chain.ctx, p, h) : 0;
}

int rs_summary_new(struct rs_summary **out, const struct rs_summary_options *opts)
{
	struct rs_summary *s = calloc(1, sizeof(*s));
	struct rs_session_callbacks cb;
	uint32_t root;
	int err;

	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (opts)
		s->opt = *opts;
	if (s->opt.chain)
		s->chain = *s->opt.chain;
	s->opt.chain = NULL;
	if (!s->opt.top_functions)
		s->opt.top_functions = 50;
	if (!s->opt.top_files)
		s->opt.top_files = 30;
	if (!(s->opt.prune_fraction > 0))
		s->opt.prune_fraction = 0.005;
	if (!(s->opt.floor_share > 0))
		s->opt.floor_share = RS_SUMMARY_FLOOR;
	if (!s->opt.max_depth)
		s->opt.max_depth = 40;
	if (!s->opt.max_nodes || s->opt.max_nodes > RS_SUMMARY_MAX_NODES)
		s->opt.max_nodes = RS_SUMMARY_MAX_NODES;
	cb.ctx = s;
	cb.frame = on_frame;
	cb.sample = on_sample;
	cb.header = on_header;
	err = rs_session_parser_new(&s->parser, &cb);
	if (err)
		goto fail;
	err = new_node(s, RS_INTERN_NONE, RS_INTERN_NONE, &root);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	rs_summary_free(s);
	return err;
}

int rs_summary_feed(struct rs_summary *s, const void *bytes, size_t n)
{
	return rs_session_parser_feed(s->parser, bytes, n);
}

int rs_summary_finish(struct rs_summary *s)
{
	int err = rs_session_parser_finish(s->parser);

	if (!err)
		s->finished = 1;
	return err;
}

const struct rs_session_parser *rs_summary_parser(const struct rs_summary *s)
{
	return s->parser;
}

void rs_summary_free(struct rs_summary *s)
{
	if (!s)
		return;
	rs_session_parser_free(s->parser);
	free(s->map);
	free(s->funcs);
	free(s->files);
	free(s->nodes);
	rs_intern_u64_release(&s->edges);
	free(s->fids);
	free(s->prev_fids);
	free(s->prev_nodes);
	free(s);
}

/* ---- JSON -------------------------------------------------------------- */

/* qsort has no context argument; the sort keys are copied into the items. */
struct rank {
	uint32_t id;
	double a, b;
};

static int rank_cmp(const void *x, const void *y)
{
	const struct rank *l = x, *r = y;

	if (l->a != r->a)
		return l->a > r->a ? -1 : 1;
	if (l->b != r->b)
		return l->b > r->b ? -1 : 1;
	return l->id < r->id ? -1 : l->id > r->id;
}

/* json_object_set_new that reports failure (NULL value or no memory). */
static int put(json_t *o, const char *k, json_t *v)
{
	if (!v || json_object_set_new(o, k, v))
		return rs_error_set(RS_EGENERIC, "out of memory building the summary JSON");
	return 0;
}

static json_t *opt_real(unsigned present, unsigned bit, double v)
{
	return (present & bit) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* "function", "file" and "line": where a function (or a tree node) is. */
static int put_place(json_t *o, const char *function, const char *file, int64_t line)
{
	int err;

	err = put(o, "function", json_string(function));
	if (err)
		return err;
	err = put(o, "file", json_string(file));
	if (err)
		return err;
	return put(o, "line", json_integer(line));
}

static int add_function(const struct rs_summary *s, json_t *arr, uint32_t id, uint32_t *pos)
{
	const struct rs_session_function *fn = rs_session_parser_function(s->parser, id);
	const struct func_stat *st = &s->funcs[id];
	json_t *o = json_object();
	int err;

	pos[id] = (uint32_t)json_array_size(arr);
	if (!o || json_array_append_new(arr, o))
		return rs_error_set(RS_EGENERIC, "out of memory building the summary JSON");
	err = put_place(o, fn->function, fn->file, fn->line);
	if (err)
		return err;
	if (fn->class_name) {
		err = put(o, "class", json_string(fn->class_name));
		if (err)
			return err;
	}
	err = put(o, "self", json_real(st->self));
	if (err)
		return err;
	err = put(o, "total", json_real(st->total));
	if (err)
		return err;
	err = put(o, "self_samples", json_integer((json_int_t)st->self_n));
	if (err)
		return err;
	return put(o, "total_samples", json_integer((json_int_t)st->total_n));
}

static int build_more(const struct rs_summary *s, uint32_t n, const unsigned char *pick,
		      uint32_t first, uint32_t *pos, json_t **out);
static int build_ran(const struct rs_summary *s, uint32_t n, json_t **out);

/*
 * "functions", "more_functions" and "ran". pos[id] (n entries, the
 * caller's, set to RS_INTERN_NONE) becomes each listed function's index
 * in "functions" followed by "more_functions".rows, for "calls".
 */
static int build_functions(const struct rs_summary *s, json_t *arr, json_t **more,
			   json_t **ran, uint32_t *pos)
{
	uint32_t n = rs_session_parser_function_count(s->parser), i, m = 0;
	struct rank *r = NULL;
	unsigned char *pick = NULL;
	int err = 0;

	if (n > s->funcs_alloc) /* functions met only in start_call_stack */
		n = (uint32_t)s->funcs_alloc;
	r = malloc((n ? n : 1) * sizeof(*r));
	pick = calloc(n ? n : 1, 1);
	if (!r || !pick) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		if (s->funcs[i].total_n) {
			r[m].id = i;
			r[m].a = s->funcs[i].total;
			r[m].b = s->funcs[i].self;
			m++;
		}
	qsort(r, m, sizeof(*r), rank_cmp);
	for (i = 0; i < m && i < s->opt.top_functions; i++)
		pick[r[i].id] = 1;
	for (i = 0; i < m; i++) {
		r[i].a = s->funcs[r[i].id].self;
		r[i].b = s->funcs[r[i].id].total;
	}
	qsort(r, m, sizeof(*r), rank_cmp);
	for (i = 0; i < m && i < s->opt.top_functions; i++)
		pick[r[i].id] = 1;
	for (i = 0; i < m && !err; i++)
		if (pick[r[i].id])
			err = add_function(s, arr, r[i].id, pos);
	if (!err)
		err = build_more(s, n, pick, (uint32_t)json_array_size(arr), pos, more);
	if (!err)
		err = build_ran(s, n, ran);
out:
	free(r);
	free(pick);
	return err;
}

/* ---- every function that ran, and every one above the floor ---------- */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

uint32_t rs_summary_name_hash(const char *function, const char *file)
{
	uint32_t h = 2166136261u;
	const unsigned char *p;

	for (p = (const unsigned char *)function; *p; p++)
		h = (h ^ *p) * 16777619u;
	h = (h ^ 0x1f) * 16777619u;
	for (p = (const unsigned char *)file; *p; p++)
		h = (h ^ *p) * 16777619u;
	return (h ^ (h >> 24)) & 0xffffffu;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* "ran": the sorted, distinct 24-bit name hashes, 4 base64 digits each. */
static int build_ran(const struct rs_summary *s, uint32_t n, json_t **out)
{
	uint32_t *h = malloc((n ? n : 1) * sizeof(*h)), i, m = 0, k = 0;
	char *text = NULL;
	int err = 0;

	if (!h)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n; i++)
		if (s->funcs[i].total_n) {
			const struct rs_session_function *fn = rs_session_parser_function(s->parser, i);

			h[m++] = rs_summary_name_hash(fn->function, fn->file);
		}
	qsort(h, m, sizeof(*h), cmp_u32);
	text = malloc((size_t)m * 4 + 1);
	if (!text) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < m; i++) {
		if (i && h[i] == h[i - 1])
			continue;
		text[k++] = b64[(h[i] >> 18) & 63];
		text[k++] = b64[(h[i] >> 12) & 63];
		text[k++] = b64[(h[i] >> 6) & 63];
		text[k++] = b64[h[i] & 63];
	}
	text[k] = 0;
	*out = json_string(text);
	if (!*out)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	free(h);
	free(text);
	return err;
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int rs_summary_ran_in(const char *ran, const char *function, const char *file)
{
	uint32_t want;
	size_t lo = 0, hi;

	if (!ran || !function || !file)
		return -1;
	hi = strlen(ran) / 4;
	want = rs_summary_name_hash(function, file);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *q = ran + mid * 4;
		int a = b64_val(q[0]), b = b64_val(q[1]), c = b64_val(q[2]), d = b64_val(q[3]);
		uint32_t v;

		if (a < 0 || b < 0 || c < 0 || d < 0)
			return -1; /* not ours: unknown */
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		if (v == want)
			return 1;
		if (v < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int rs_summary_ran(const json_t *summary, const char *function, const char *file)
{
	const json_t *ran = json_object_get(summary, "ran");

	return json_is_string(ran) ? rs_summary_ran_in(json_string_value(ran), function, file) : -1;
}

/* One row of "more_functions", its file added to the file table if new. */
static int add_more_row(const struct rs_session_function *fn, const struct func_stat *st,
			json_t *files, json_t *fidx, json_t *rows)
{
	const json_t *at = json_object_get(fidx, fn->file);
	json_int_t fi;

	if (at) {
		fi = json_integer_value(at);
	} else {
		fi = (json_int_t)json_array_size(files);
		if (json_array_append_new(files, json_string(fn->file)) ||
		    json_object_set_new(fidx, fn->file, json_integer(fi)))
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (json_array_append_new(rows, json_pack("[sIIII]", fn->function, fi,
						   (json_int_t)fn->line,
						   (json_int_t)(st->self * 1e6 + 0.5),
						   (json_int_t)(st->total * 1e6 + 0.5))))
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

/*
 * "more_functions": the functions not in "functions" whose own or total
 * time is at least floor_share of the sampled time, compactly: a file
 * table and one row [function, file index, line, self us, total us] each.
 */
/*
 * The floor of "more_functions" and "calls" in seconds: floor_share of
 * the sampled time, and at least RS_SUMMARY_FLOOR_SAMPLES samples' worth:
 * in a short run 0.1% is two or three samples, which is noise, not a
 * measurement, and storing it doubled the bytes of a run.
 */
static double stored_floor(const struct rs_summary *s)
{
	double floor = s->sampled_time * s->opt.floor_share;

	if (s->samples && s->sampled_time * RS_SUMMARY_FLOOR_SAMPLES / (double)s->samples > floor)
		floor = s->sampled_time * RS_SUMMARY_FLOOR_SAMPLES / (double)s->samples;
	return floor;
}

static int build_more(const struct rs_summary *s, uint32_t n, const unsigned char *pick,
		      uint32_t first, uint32_t *pos, json_t **out)
{
	json_t *o = json_object(), *files = json_array(), *rows = json_array(),
	       *fidx = json_object();
	double floor = stored_floor(s);
	uint32_t i;
	int err = 0;

	if (!o || !files || !rows || !fidx) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (i = 0; i < n && !err; i++) {
		const struct func_stat *st = &s->funcs[i];

		if (pick[i] || !st->total_n || (st->total < floor && st->self < floor))
			continue;
		pos[i] = first + (uint32_t)json_array_size(rows);
		err = add_more_row(rs_session_parser_function(s->parser, i), st, files, fidx, rows);
	}
	if (!err)
		err = put(o, "floor", json_real(s->sampled_time > 0 ? floor / s->sampled_time
								    : s->opt.floor_share));
	if (!err) {
		err = put(o, "files", files);
		files = NULL; /* put() took the reference, or freed it */
	}
	if (!err) {
		err = put(o, "rows", rows);
		rows = NULL;
	}
out:
	json_decref(files);
	json_decref(rows);
	json_decref(fidx);
	if (err) {
		json_decref(o);
		return err;
	}
	*out = o;
	return 0;
}

static int build_files(const struct rs_summary *s, json_t *arr)
{
	uint32_t n = rs_session_parser_file_count(s->parser), i, m = 0;
	struct rank *r;
	int err = 0;

	if (n > s->files_alloc)
		n = (uint32_t)s->files_alloc;
	r = malloc((n ? n : 1) * sizeof(*r));
	if (!r)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < n; i++)
		if (s->files[i].total > 0 || s->files[i].self > 0) {
			r[m].id = i;
			r[m].a = s->files[i].self;
			r[m].b = s->files[i].total;
			m++;
		}
	qsort(r, m, sizeof(*r), rank_cmp);
	for (i = 0; i < m && i < s->opt.top_files && !err; i++) {
		json_t *o = json_object();

		if (!o || json_array_append_new(arr, o)) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			break;
		}
		err = put(o, "file", json_string(rs_session_parser_file(s->parser, r[i].id)));
		if (err)
			break;
		err = put(o, "self", json_real(s->files[r[i].id].self));
		if (err)
			break;
		err = put(o, "total", json_real(s->files[r[i].id].total));
		if (err)
			break;
	}
	free(r);
	return err;
}

/* A tree node's place and times (the root is "[root]"). */
static int put_node(json_t *o, const struct rs_summary *s, const struct node *n)
{
	const struct rs_session_function *fn;
	int err;

	if (n->func == RS_INTERN_NONE) {
		err = put_place(o, "[root]", "", 0);
	} else {
		fn = rs_session_parser_function(s->parser, n->func);
		err = put_place(o, fn->function, fn->file, fn->line);
	}
	if (err)
		return err;
	err = put(o, "total", json_real(n->total));
	if (err)
		return err;
	return put(o, "self", json_real(n->self));
}

/* Recursion depth is bounded by opt.max_depth (the tree is no deeper). */
static int build_node(const struct rs_summary *s, uint32_t id, double cut, json_t **out)
{
	const struct node *n = &s->nodes[id];
	json_t *o = json_object(), *kids = json_array();
	struct rank *r = NULL;
	size_t m = 0, cap = 0, i;
	uint32_t c;
	int err = 0;

	if (!o || !kids) {
		json_decref(kids);
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = put_node(o, s, n);
	if (err) {
		json_decref(kids);
		goto out;
	}
	err = put(o, "children", kids);
	if (err)
		goto out;
	for (c = n->first_child; c != RS_INTERN_NONE; c = s->nodes[c].next_sibling) {
		if (s->nodes[c].total < cut)
			continue;
		if (m == cap) {
			err = grow(&r, &cap, m + 1, sizeof(*r));
			if (err)
				goto out;
		}
		r[m].id = c;
		r[m].a = s->nodes[c].total;
		r[m].b = s->nodes[c].self;
		m++;
	}
	if (m)
		qsort(r, m, sizeof(*r), rank_cmp);
	for (i = 0; i < m; i++) {
		json_t *child;

		err = build_node(s, r[i].id, cut, &child);
		if (err)
			goto out;
		if (json_array_append_new(kids, child)) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
out:
	free(r);
	if (err) {
		json_decref(o);
		return err;
	}
	*out = o;
	return 0;
}

/* ---- calls: time per (caller, callee) pair ---------------------------- */

struct call_edge {
	uint32_t caller, callee;   /* function ids */
	double total, self;
};

/* The walk of the in-memory tree that sums its nodes into call edges. */
struct calls_walk {
	const struct rs_summary *s;
	struct rs_intern_u64 map;  /* caller << 32 | callee -> index into e */
	struct call_edge *e;
	size_t n, alloc;
	uint64_t *active;          /* the pairs on the path walked, root first */
	size_t depth;
};

/*
 * Add node `id` (called by `parent`, RS_INTERN_NONE at the top) and its
 * subtree to the edges. A pair already on the path (recursion: a > b > a
 * > b) adds no total, so an edge's total counts each sample once, as a
 * function's does. Depth is bounded by the tree's (opt.max_depth).
 */
static int calls_visit(struct calls_walk *w, uint32_t id, uint32_t parent)
{
	const struct node *n = &w->s->nodes[id];
	int pushed = 0, err = 0;

	if (parent != RS_INTERN_NONE && n->func != RS_INTERN_NONE) {
		uint64_t key = (uint64_t)parent << 32 | n->func;
		uint32_t at = rs_intern_u64_find(&w->map, key);
		int dup = 0;

		for (size_t i = 0; i < w->depth && !dup; i++)
			dup = w->active[i] == key;
		if (at == RS_INTERN_NONE) {
			err = grow((void **)&w->e, &w->alloc, w->n + 1, sizeof(*w->e));
			if (err)
				return err;
			at = (uint32_t)w->n++;
			w->e[at] = (struct call_edge){ parent, n->func, 0, 0 };
			err = rs_intern_u64_insert(&w->map, key, at);
			if (err)
				return err;
		}
		if (!dup)
			w->e[at].total += n->total;
		w->e[at].self += n->self;
		w->active[w->depth++] = key;
		pushed = 1;
	}
	for (uint32_t c = n->first_child; c != RS_INTERN_NONE && !err; c = w->s->nodes[c].next_sibling)
		err = calls_visit(w, c, n->func);
	if (pushed)
		w->depth--;
	return err;
}

static int cmp_edge(const void *x, const void *y)
{
	const struct call_edge *l = x, *r = y;

	if (l->total != r->total)
		return l->total > r->total ? -1 : 1;
	if (l->caller != r->caller)
		return l->caller < r->caller ? -1 : 1;
	return l->callee < r->callee ? -1 : l->callee > r->callee;
}

/*
 * "calls": every (caller, callee) pair of functions whose time through
 * that call is at least the stored floor, as [caller, callee, total us,
 * self us], the functions by their index in "functions" followed by
 * "more_functions".rows (`pos`). This is what telling a new caller from
 * a callee slower everywhere needs (docs/regressions.md), at a fraction of
 * the bytes of a finer tree: a pair above the floor has both functions
 * above it, so both are listed. Pairs deeper than the tree's max_depth
 * are not seen.
 */
static int build_calls(const struct rs_summary *s, const uint32_t *pos, uint32_t npos,
		       json_t **out)
{
	struct calls_walk w = { .s = s };
	double floor = stored_floor(s);
	json_t *o = NULL, *rows = json_array();
	int err;

	w.active = calloc((size_t)s->opt.max_depth + 2, sizeof(*w.active));
	if (!w.active || !rows) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = calls_visit(&w, 0, RS_INTERN_NONE);
	if (err)
		goto out;
	if (w.n)
		qsort(w.e, w.n, sizeof(*w.e), cmp_edge);
	for (size_t i = 0; i < w.n && !err; i++) {
		const struct call_edge *e = &w.e[i];

		if (e->total < floor || e->caller >= npos || e->callee >= npos ||
		    pos[e->caller] == RS_INTERN_NONE || pos[e->callee] == RS_INTERN_NONE)
			continue;
		if (json_array_append_new(rows, json_pack("[IIII]", (json_int_t)pos[e->caller],
							   (json_int_t)pos[e->callee],
							   (json_int_t)(e->total * 1e6 + 0.5),
							   (json_int_t)(e->self * 1e6 + 0.5))))
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (err)
		goto out;
	o = json_pack("{s:i,s:f,s:O}", "version", RS_SUMMARY_CALLS_VERSION, "floor",
		      s->sampled_time > 0 ? floor / s->sampled_time : s->opt.floor_share, "rows", rows);
	if (!o)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	json_decref(rows);
	rs_intern_u64_release(&w.map);
	free(w.e);
	free(w.active);
	if (!err)
		*out = o;
	return err;
}

/* The session's header fields and the sampling counts. */
static int put_header(json_t *o, const struct rs_summary *s, const struct rs_session_header *h)
{
	int err;

	err = put(o, "layout", json_string(h->layout == 4 ? "4" : "5"));
	if (err)
		return err;
	err = put(o, "start_time", opt_real(h->present, RS_SESSION_HAS_START_TIME, h->start_time));
	if (err)
		return err;
	err = put(o, "duration", opt_real(h->present, RS_SESSION_HAS_DURATION, h->duration));
	if (err)
		return err;
	err = put(o, "cpu_time", opt_real(h->present, RS_SESSION_HAS_CPU_TIME, h->cpu_time));
	if (err)
		return err;
	err = put(o, "min_interval", opt_real(h->present, RS_SESSION_HAS_MIN_INTERVAL, h->min_interval));
	if (err)
		return err;
	err = put(o, "max_interval", opt_real(h->present, RS_SESSION_HAS_MAX_INTERVAL, h->max_interval));
	if (err)
		return err;
	err = put(o, "sample_count", (h->present & RS_SESSION_HAS_SAMPLE_COUNT)
					     ? json_integer((json_int_t)h->sample_count) : json_null());
	if (err)
		return err;
	err = put(o, "target", str_or_null(h->target_description ? h->target_description
								   : h->program));
	if (err)
		return err;
	err = put(o, "samples", json_integer((json_int_t)s->samples));
	if (err)
		return err;
	err = put(o, "sampled_time", json_real(s->sampled_time));
	if (err)
		return err;
	err = put(o, "distinct_frames", json_integer(rs_session_parser_frame_count(s->parser)));
	if (err)
		return err;
	return put(o, "distinct_functions", json_integer(rs_session_parser_function_count(s->parser)));
}

/* sys_path as the session gave it, its first 64 entries. */
static int build_sys_path(const struct rs_session_header *h, json_t **out)
{
	json_t *sp = json_array();
	size_t i;

	if (!sp)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < h->sys_path_len && i < 64; i++)
		if (json_array_append_new(sp, json_string(h->sys_path[i]))) {
			json_decref(sp);
			return rs_error_set(RS_EGENERIC, "out of memory");
		}
	*out = sp;
	return 0;
}

/* The parts of the summary's JSON, built before any goes into it. */
struct summary_parts {
	json_t *sys_path, *functions, *more_functions, *ran, *files, *tree, *calls;
};

static void summary_parts_release(struct summary_parts *p)
{
	json_decref(p->functions);
	json_decref(p->more_functions);
	json_decref(p->ran);
	json_decref(p->files);
	json_decref(p->tree);
	json_decref(p->calls);
	json_decref(p->sys_path);
}

/* Every part into `p`; on failure what was built stays there for summary_parts_release. */
static int build_parts(const struct rs_summary *s, const struct rs_session_header *h,
		       struct summary_parts *p)
{
	uint32_t n = rs_session_parser_function_count(s->parser), *pos = NULL;
	double cut;
	int err;

	p->functions = json_array();
	p->files = json_array();
	if (n > s->funcs_alloc)
		n = (uint32_t)s->funcs_alloc;
	pos = malloc((n ? n : 1) * sizeof(*pos));
	if (!p->functions || !p->files || !pos) {
		free(pos);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (uint32_t i = 0; i < n; i++)
		pos[i] = RS_INTERN_NONE;
	err = build_sys_path(h, &p->sys_path);
	if (!err)
		err = build_functions(s, p->functions, &p->more_functions, &p->ran, pos);
	if (!err)
		err = build_calls(s, pos, n, &p->calls);
	free(pos);
	if (err)
		return err;
	err = build_files(s, p->files);
	if (err)
		return err;
	/* a node's share is of the root's total: sampled time under max_depth */
	cut = s->nodes[0].total * s->opt.prune_fraction;
	return build_node(s, 0, cut, &p->tree);
}

int rs_summary_json(const struct rs_summary *s, json_t **out)
{
	const struct rs_session_header *h = rs_session_parser_header(s->parser);
	struct summary_parts p = { NULL };
	const struct {
		const char *key;
		json_t **value;
	} parts[] = {
		{ "sys_path", &p.sys_path }, { "functions", &p.functions },
		{ "more_functions", &p.more_functions }, { "ran", &p.ran },
		{ "files", &p.files }, { "calls", &p.calls }, { "tree", &p.tree },
	};
	json_t *o;
	size_t i;
	int err;

	if (!s->finished)
		return rs_error_set(RS_EUSAGE, "summary asked for before the whole session was read");
	o = json_object();
	if (!o) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = build_parts(s, h, &p);
	if (err)
		goto out;
	err = put_header(o, s, h);
	if (err)
		goto out;
	/* put() takes each part, whether it succeeds or not */
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		err = put(o, parts[i].key, *parts[i].value);
		*parts[i].value = NULL;
		if (err)
			goto out;
	}
	if (s->tree_truncated)
		err = put(o, "tree_truncated", json_true());
out:
	summary_parts_release(&p);
	if (err) {
		json_decref(o);
		return err;
	}
	*out = o;
	return 0;
}

int rs_summary_file(const char *path, const struct rs_summary_options *opts, json_t **out)
{
	struct rs_summary *s = NULL;
	unsigned char *buf = NULL;
	int fd = -1, err;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				     "cannot open '%s'", path);
		goto out;
	}
	buf = malloc(1u << 20);
	if (!buf) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_summary_new(&s, opts);
	if (err)
		goto out;
	for (;;) {
		n = read(fd, buf, 1u << 20);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
			goto out;
		}
		if (n == 0)
			break;
		err = rs_summary_feed(s, buf, (size_t)n);
		if (err)
			goto fail;
	}
	err = rs_summary_finish(s);
	if (err)
		goto fail;
	err = rs_summary_json(s, out);
	goto out;
fail:
	rs_error_wrap(err, "'%s'", path);
out:
	rs_summary_free(s);
	free(buf);
	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- Markdown ------------------------------------------------------------ */

#define MD_TOP 15

static double num(const json_t *o, const char *k, int *ok)
{
	const json_t *v = json_object_get(o, k);

	*ok = json_is_number(v);
	return *ok ? json_number_value(v) : 0;
}

static const char *str(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));

	return v ? v : "";
}

/*
 * The Markdown writer. A page has dozens of pieces, so the first rs_buf
 * error sticks (as a stdio stream's does) and the writes after it do
 * nothing; rs_summary_markdown checks it once at the end, so that a page
 * is either whole or an error, never silently short.
 */
struct md {
	struct rs_buf *b;
	int err;
};

static void md_puts(struct md *m, const char *s)
{
	if (!m->err)
		m->err = rs_buf_puts(m->b, s);
}

static void md_putc(struct md *m, char c)
{
	if (!m->err)
		m->err = rs_buf_putc(m->b, c);
}

static void md_printf(struct md *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void md_printf(struct md *m, const char *fmt, ...)
{
	va_list ap;

	if (m->err)
		return;
	va_start(ap, fmt);
	m->err = rs_buf_vprintf(m->b, fmt, ap);
	va_end(ap);
}

/* A code span in a table cell (results/escape.h): shown as it is, whatever it holds. */
static void md_code(struct md *b, const char *s)
{
	if (!b->err)
		b->err = rs_escape_md_code(b->b, s, RS_ESCAPE_IN_TABLE);
}

/* A code span of `fmt`'s text (the parts are untrusted: one span, one escape). */
static void md_code_printf(struct md *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void md_code_printf(struct md *b, const char *fmt, ...)
{
	struct rs_buf text = RS_BUF_INIT;
	va_list ap;

	if (b->err)
		return;
	va_start(ap, fmt);
	b->err = rs_buf_vprintf(&text, fmt, ap);
	va_end(ap);
	md_code(b, text.ptr ? text.ptr : "");
	rs_buf_release(&text);
}

/* The path relative to the longest sys_path entry that contains it. */
static const char *short_path(const json_t *summary, const char *file)
{
	const json_t *sp = json_object_get(summary, "sys_path"), *e;
	size_t i, best = 0;

	json_array_foreach(sp, i, e) {
		const char *dir = json_string_value(e);
		size_t n = dir ? strlen(dir) : 0;

		while (n > 1 && dir[n - 1] == '/')
			n--;
		if (n > best && !strncmp(file, dir, n) && file[n] == '/' && file[n + 1])
			best = n + 1;
	}
	return file + best;
}

static void fmt_count(struct md *b, double v)
{
	char digits[32];
	size_t n, i;

	snprintf(digits, sizeof(digits), "%.0f", v);
	n = strlen(digits);
	for (i = 0; i < n; i++) {
		md_putc(b, digits[i]);
		if (digits[i] != '-' && (n - i - 1) % 3 == 0 && i + 1 < n)
			md_putc(b, ',');
	}
}

static void fmt_secs(struct md *b, double v)
{
	if (v >= 100)
		md_printf(b, "%.1f s", v);
	else
		md_printf(b, "%.3f s", v);
}

static void fmt_pct(struct md *b, double v, double of)
{
	if (of > 0)
		md_printf(b, "%.1f%%", 100.0 * v / of);
	else
		md_puts(b, "n/a");
}

static void fmt_ms(struct md *b, double secs)
{
	/* the unit after rounding: "1 ms", never "1e+03 us" or "1e+03 ms" */
	if (secs >= 0.9995)
		md_printf(b, "%.3g s", secs);
	else if (secs >= 0.9995e-3 || secs == 0)
		md_printf(b, "%.3g ms", secs * 1000);
	else
		md_printf(b, "%.3g us", secs * 1e6);
}

static void md_function_name(struct md *b, const json_t *f)
{
	const char *fn = str(f, "function"), *cls = str(f, "class");

	if (*cls && !strchr(fn, '.')) {
		md_code_printf(b, "%s.%s", cls, fn);
	} else {
		md_code(b, fn);
	}
}

static void md_location(struct md *b, const json_t *summary, const json_t *f)
{
	int ok;
	double line = num(f, "line", &ok);

	/* a thread's root frame carries the thread id as its "line" */
	if (ok && line > 0 && strcmp(str(f, "file"), "<thread>"))
		md_code_printf(b, "%s:%.0f", short_path(summary, str(f, "file")), line);
	else
		md_code(b, short_path(summary, str(f, "file")));
}

/* Ties fall back on the names so that the page never depends on qsort. */
static int by_name(const json_t *l, const json_t *r)
{
	int c = strcmp(str(l, "function"), str(r, "function"));

	if (!c)
		c = strcmp(str(l, "file"), str(r, "file"));
	if (!c) {
		json_int_t a = json_integer_value(json_object_get(l, "line"));
		json_int_t d = json_integer_value(json_object_get(r, "line"));

		c = a < d ? -1 : a > d;
	}
	return c;
}

static int by_key(const json_t *l, const json_t *r, const char *k)
{
	double a = json_number_value(json_object_get(l, k));
	double c = json_number_value(json_object_get(r, k));

	return a > c ? -1 : a < c;
}

static int by_self(const void *x, const void *y)
{
	const json_t *const *l = x, *const *r = y;
	int c = by_key(*l, *r, "self");

	if (!c)
		c = by_key(*l, *r, "total");
	return c ? c : by_name(*l, *r);
}

static int by_total(const void *x, const void *y)
{
	const json_t *const *l = x, *const *r = y;
	int c = by_key(*l, *r, "total");

	if (!c)
		c = by_key(*l, *r, "self");
	return c ? c : by_name(*l, *r);
}

static int md_functions(struct md *b, const json_t *summary, const char *title,
			int (*cmp)(const void *, const void *), double of)
{
	const json_t *arr = json_object_get(summary, "functions"), *f;
	const json_t **v;
	size_t n = json_array_size(arr), i;

	md_printf(b, "\n### %s\n\n", title);
	if (!n) {
		md_puts(b, "No samples.\n");
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	json_array_foreach(arr, i, f)
		v[i] = f;
	qsort(v, n, sizeof(*v), cmp);
	md_puts(b, "| # | Function | Location | Own | Own % | Total | Total % |\n"
		       "|--:|---|---|--:|--:|--:|--:|\n");
	for (i = 0; i < n && i < MD_TOP; i++) {
		int ok;
		double self = num(v[i], "self", &ok), total = num(v[i], "total", &ok);

		/* the own-time table lists only functions that had own time */
		if (cmp == by_self && !(self > 0))
			break;
		md_printf(b, "| %zu | ", i + 1);
		md_function_name(b, v[i]);
		md_puts(b, " | ");
		md_location(b, summary, v[i]);
		md_puts(b, " | ");
		fmt_secs(b, self);
		md_puts(b, " | ");
		fmt_pct(b, self, of);
		md_puts(b, " | ");
		fmt_secs(b, total);
		md_puts(b, " | ");
		fmt_pct(b, total, of);
		md_puts(b, " |\n");
	}
	free(v);
	return 0;
}

/* The profile table's rows of times: duration, CPU time, samples, interval. */
static void md_time_rows(struct md *b, const json_t *summary)
{
	double duration, cpu, sampled, samples, mn, mx;
	int has_dur, has_cpu, has_sampled, has_samples, has_mn, has_mx;

	duration = num(summary, "duration", &has_dur);
	cpu = num(summary, "cpu_time", &has_cpu);
	sampled = num(summary, "sampled_time", &has_sampled);
	samples = num(summary, "samples", &has_samples);
	mn = num(summary, "min_interval", &has_mn);
	mx = num(summary, "max_interval", &has_mx);

	md_puts(b, "| Duration | ");
	if (has_dur)
		fmt_secs(b, duration);
	else
		md_puts(b, "n/a");
	md_puts(b, " |\n| CPU time | ");
	if (has_cpu) {
		fmt_secs(b, cpu);
		if (has_dur && duration > 0) {
			md_puts(b, " (");
			fmt_pct(b, cpu, duration);
			md_puts(b, " of duration)");
		}
	} else {
		md_puts(b, "n/a");
	}
	md_puts(b, " |\n| Samples | ");
	if (has_samples) {
		fmt_count(b, samples);
		if (has_sampled) {
			md_puts(b, " (");
			fmt_secs(b, sampled);
			md_puts(b, " sampled)");
		}
	} else {
		md_puts(b, "n/a");
	}
	md_puts(b, " |\n| Interval | ");
	if (has_mn && has_mx && mn == mx) {
		fmt_ms(b, mn);
	} else if (has_mn && has_mx) {
		fmt_ms(b, mn);
		md_puts(b, " to ");
		fmt_ms(b, mx);
	} else if (has_samples && samples > 0 && has_sampled) {
		fmt_ms(b, sampled / samples);
		md_puts(b, " (mean per sample)");
	} else {
		md_puts(b, "n/a");
	}
	md_puts(b, " |\n");
}

/* The profile table's rows about the run: target, start, session format. */
static void md_run_rows(struct md *b, const json_t *summary)
{
	const char *target = json_string_value(json_object_get(summary, "target"));
	const char *layout = str(summary, "layout");
	double start;
	int has_start;

	start = num(summary, "start_time", &has_start);
	if (target && *target) {
		md_puts(b, "| Target | ");
		md_code(b, target);
		md_puts(b, " |\n");
	}
	if (has_start) {
		char when[64];
		time_t t = (time_t)start;
		struct tm tm;

		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
			md_printf(b, "| Started | %s |\n", when);
	}
	if (*layout)
		md_printf(b, "| Session format | pyinstrument %s.x |\n", *layout == '4' ? "4" : "5");
}

/* The top files by own time, shares of the sampled time. */
static void md_files(struct md *b, const json_t *summary, double sampled)
{
	const json_t *files = json_object_get(summary, "files"), *f;
	size_t i;

	md_puts(b, "\n### Top files by own time\n\n");
	if (!json_array_size(files)) {
		md_puts(b, "No samples.\n");
		return;
	}
	md_puts(b, "| File | Own | Own % | Total | Total % |\n|---|--:|--:|--:|--:|\n");
	json_array_foreach(files, i, f) {
		int ok;
		double self = num(f, "self", &ok), total = num(f, "total", &ok);

		if (i >= MD_TOP)
			break;
		md_puts(b, "| ");
		md_code(b, short_path(summary, str(f, "file")));
		md_puts(b, " | ");
		fmt_secs(b, self);
		md_puts(b, " | ");
		fmt_pct(b, self, sampled);
		md_puts(b, " | ");
		fmt_secs(b, total);
		md_puts(b, " | ");
		fmt_pct(b, total, sampled);
		md_puts(b, " |\n");
	}
}

int rs_summary_markdown(const json_t *summary, struct rs_buf *out)
{
	struct md page = { out, 0 }, *b = &page;
	double sampled;
	int has_sampled, err;
	size_t before = out->len;

	if (!json_is_object(summary))
		return rs_error_set(RS_EUSAGE, "summary is not a JSON object");
	sampled = num(summary, "sampled_time", &has_sampled);

	md_puts(b, "## Profile\n\n| | |\n|---|---|\n");
	md_time_rows(b, summary);
	md_run_rows(b, summary);
	err = md_functions(b, summary, "Top functions by own time", by_self, sampled);
	if (err)
		goto out;
	err = md_functions(b, summary, "Top functions by total time", by_total, sampled);
	if (err)
		goto out;
	md_files(b, summary, sampled);
	md_puts(b, "\nOwn: time with the function itself executing. Total: time with the "
		       "function anywhere on the stack (counted once per sample under recursion). "
		       "Percentages are of the sampled time.\n");
	err = page.err;
	if (err == RS_ETOOBIG)
		err = rs_error_set(RS_ETOOBIG, "summary Markdown exceeds its buffer cap");
out:
	if (err) {
		/* the caller's buffer as it was: no half page */
		out->len = before;
		if (out->ptr)
			out->ptr[before] = '\0';
	}
	return err;
}
