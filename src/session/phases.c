/*
 * Phases and their timeline in the summary's single pass (phases.h has
 * the contract). Per sample: the configured phases cost one mask OR per
 * frame (each frame's phase bits are computed once, when the parser
 * meets it); the default phases cost one step per level of the first
 * RS_PHASES_MAX_DEPTH levels in a small tree of call paths, reusing the
 * previous sample's path for the common prefix (consecutive samples share
 * most of their stack).
 */
#include "session/phases.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

#define FIRST_SLICE 0.05 /* seconds: the timeline's first slice width */

struct spec {
	char name[RS_PHASES_MAX_NAME + 1];
	char *text;           /* as configured */
	char *class_name;     /* NULL: any class */
	char *function;
	char *file_suffix;    /* NULL: any file */
};

/* A call path of the first levels: (parent, function) with its time. */
struct node {
	int32_t parent;       /* -1: a child of the root */
	uint32_t function_id;
	double total;
};

struct rs_phases {
	struct spec specs[RS_PHASES_MAX];
	size_t nspecs;        /* 0: the default phases */
	uint32_t *frame_mask; /* per frame id: the phases its function belongs to */
	size_t frame_alloc;
	/* the default: call paths, and a hash (parent, function) -> node */
	struct node *nodes;
	size_t nnodes, nodes_alloc;
	int32_t *slots;       /* open addressing, 2 * RS_PHASES_MAX_NODES, -1 empty */
	uint32_t prev_frames[RS_PHASES_MAX_DEPTH];
	int32_t prev_nodes[RS_PHASES_MAX_DEPTH];
	size_t prev_depth;
	/* the timeline: per slice, one value per column (phases + other, or
	   nodes) and the slice's whole time */
	double *slices;       /* RS_PHASES_MAX_SLICES * stride */
	size_t stride;
	double slice_width;
	size_t nslices;       /* used */
	double pos;           /* seconds so far */
	double phase_total[RS_PHASES_MAX + 1];  /* + other */
	double sampled;
	int overflow;         /* call paths past RS_PHASES_MAX_NODES were not kept */
};

/* ---- configuration --------------------------------------------------- */

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > RS_PHASES_MAX_NAME)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
			return 0;
	return 1;
}

/* "path/x.py:function", "Class.function" or "function". */
static int parse_spec(struct spec *sp, const char *name, const char *text)
{
	const char *colon = strrchr(text, ':'), *fn = text, *dot;
	size_t n = strlen(text);

	if (n == 0 || n > RS_PHASES_MAX_SPEC)
		return rs_error_set(RS_EUSAGE, ".results.json: phase '%s' needs a frame of 1 to %d "
				    "bytes (\"Class.function\", \"function\" or \"file.py:function\")",
				    name, RS_PHASES_MAX_SPEC);
	strcpy(sp->name, name);
	sp->text = strdup(text);
	if (colon) {
		sp->file_suffix = strndup(text, (size_t)(colon - text));
		fn = colon + 1;
	}
	dot = strrchr(fn, '.');
	if (dot && !colon) {
		sp->class_name = strndup(fn, (size_t)(dot - fn));
		fn = dot + 1;
	}
	sp->function = strdup(fn);
	if (!sp->text || !sp->function || (colon && !sp->file_suffix) ||
	    (dot && !colon && !sp->class_name))
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (!*sp->function || (sp->class_name && !*sp->class_name) ||
	    (sp->file_suffix && !*sp->file_suffix))
		return rs_error_set(RS_EUSAGE, ".results.json: phase '%s': '%s' names no function",
				    name, text);
	return 0;
}

static int read_config(struct rs_phases *ph, const json_t *config)
{
	const char *name;
	json_t *v;
	int err;

	if (!json_is_object(config))
		return rs_error_set(RS_EUSAGE, ".results.json: \"phases\" must be an object of "
				    "name: \"Class.function\"");
	if (json_object_size(config) > RS_PHASES_MAX)
		return rs_error_set(RS_EUSAGE, ".results.json: more than %d phases", RS_PHASES_MAX);
	json_object_foreach((json_t *)config, name, v) {
		if (!name_ok(name))
			return rs_error_set(RS_EUSAGE, ".results.json: phase name '%.64s' must be 1 to "
					    "%d of [A-Za-z0-9_.-]", name, RS_PHASES_MAX_NAME);
		if (!json_is_string(v))
			return rs_error_set(RS_EUSAGE, ".results.json: phase '%s' must name a frame "
					    "as a string", name);
		err = parse_spec(&ph->specs[ph->nspecs++], name, json_string_value(v));
		if (err)
			return err;
	}
	return 0;
}

int rs_phases_new(struct rs_phases **out, const json_t *config)
{
	struct rs_phases *ph = calloc(1, sizeof(*ph));
	int err = 0;

	*out = NULL;
	if (!ph)
		return rs_error_set(RS_EGENERIC, "out of memory");
	ph->slice_width = FIRST_SLICE;
	if (config)
		err = read_config(ph, config);
	if (!err && ph->nspecs == 0) {
		ph->slots = malloc(2 * RS_PHASES_MAX_NODES * sizeof(*ph->slots));
		if (!ph->slots)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		else
			memset(ph->slots, 0xff, 2 * RS_PHASES_MAX_NODES * sizeof(*ph->slots));
	}
	/* columns: the phases, other and the slice's time; or (the default) one
	   per call path, widened as paths appear, and the slice's time */
	ph->stride = ph->nspecs ? ph->nspecs + 2 : 64;
	if (!err) {
		ph->slices = calloc(RS_PHASES_MAX_SLICES * ph->stride, sizeof(*ph->slices));
		if (!ph->slices)
			err = rs_error_set(RS_EGENERIC, "out of memory");
	}
	if (err) {
		rs_phases_free(ph);
		return err;
	}
	*out = ph;
	return 0;
}

void rs_phases_free(struct rs_phases *ph)
{
	if (!ph)
		return;
	for (size_t i = 0; i < ph->nspecs; i++) {
		free(ph->specs[i].text);
		free(ph->specs[i].class_name);
		free(ph->specs[i].function);
		free(ph->specs[i].file_suffix);
	}
	free(ph->frame_mask);
	free(ph->nodes);
	free(ph->slots);
	free(ph->slices);
	free(ph);
}

/* ---- per frame and per sample ---------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int on_frame(void *ctx, const struct rs_session_parser *p, uint32_t id,
		    const struct rs_session_frame *f)
{
	struct rs_phases *ph = ctx;
	uint32_t mask = 0;

	(void)p;
	if (!ph->nspecs)
		return 0;
	for (size_t i = 0; i < ph->nspecs; i++) {
		const struct spec *sp = &ph->specs[i];

		if (strcmp(f->function, sp->function) != 0)
			continue;
		if (sp->class_name && (!f->class_name || strcmp(f->class_name, sp->class_name) != 0))
			continue;
		if (sp->file_suffix && !ends_with(f->file, sp->file_suffix))
			continue;
		mask |= 1u << i;
	}
	if (rs_array_grow((void **)&ph->frame_mask, &ph->frame_alloc, (size_t)id + 1,
			  sizeof(*ph->frame_mask), 1024))
		return rs_error_set(RS_EGENERIC, "out of memory reading phases");
	ph->frame_mask[id] = mask;
	return 0;
}

/* Merge neighbouring slices (the slice width doubles). */
static void halve(struct rs_phases *ph)
{
	size_t k = ph->stride;

	for (size_t i = 0; i < RS_PHASES_MAX_SLICES / 2; i++)
		for (size_t c = 0; c < k; c++)
			ph->slices[i * k + c] = ph->slices[2 * i * k + c] + ph->slices[(2 * i + 1) * k + c];
	memset(ph->slices + RS_PHASES_MAX_SLICES / 2 * k, 0,
	       RS_PHASES_MAX_SLICES / 2 * k * sizeof(*ph->slices));
	ph->slice_width *= 2;
	ph->nslices = (ph->nslices + 1) / 2;
}

/* The slice row the sample starting at ph->pos belongs to. */
static double *slice_row(struct rs_phases *ph)
{
	size_t i = (size_t)(ph->pos / ph->slice_width);

	while (i >= RS_PHASES_MAX_SLICES) {
		halve(ph);
		i = (size_t)(ph->pos / ph->slice_width);
	}
	if (i + 1 > ph->nslices)
		ph->nslices = i + 1;
	return ph->slices + i * ph->stride;
}

static uint32_t slot_of(int32_t parent, uint32_t fid)
{
	uint64_t h = ((uint64_t)(uint32_t)parent << 32 | fid) * 0x9E3779B97F4A7C15ull;

	return (uint32_t)(h >> 40) % (2 * RS_PHASES_MAX_NODES);
}

/* The node (parent, fid), made if new; -1 when the tree is full. */
static int32_t node_of(struct rs_phases *ph, int32_t parent, uint32_t fid, int *err)
{
	uint32_t s = slot_of(parent, fid);
	size_t old_stride = ph->stride;

	for (;;) {
		int32_t n = ph->slots[s];

		if (n < 0)
			break;
		if (ph->nodes[n].parent == parent && ph->nodes[n].function_id == fid)
			return n;
		s = (s + 1) % (2 * RS_PHASES_MAX_NODES);
	}
	if (ph->nnodes == RS_PHASES_MAX_NODES) {
		ph->overflow = 1;
		return -1;
	}
	if (rs_array_grow((void **)&ph->nodes, &ph->nodes_alloc, ph->nnodes + 1, sizeof(*ph->nodes),
			  256)) {
		*err = rs_error_set(RS_EGENERIC, "out of memory reading phases");
		return -1;
	}
	/* the timeline holds one column per node (+ the slice's time): widen it */
	if (ph->nnodes + 2 > ph->stride) {
		/* doubling, but never past the last node's column: at most
		   RS_PHASES_MAX_SLICES * (RS_PHASES_MAX_NODES + 2) doubles */
		size_t stride = old_stride ? old_stride * 2 : 64;

		if (stride > RS_PHASES_MAX_NODES + 2)
			stride = RS_PHASES_MAX_NODES + 2;
		double *grown = calloc(RS_PHASES_MAX_SLICES * stride, sizeof(*grown));

		if (!grown) {
			*err = rs_error_set(RS_EGENERIC, "out of memory reading phases");
			return -1;
		}
		for (size_t i = 0; i < RS_PHASES_MAX_SLICES && old_stride; i++) {
			memcpy(grown + i * stride, ph->slices + i * old_stride,
			       (old_stride - 1) * sizeof(*grown));
			grown[i * stride + stride - 1] = ph->slices[i * old_stride + old_stride - 1];
		}
		free(ph->slices);
		ph->slices = grown;
		ph->stride = stride;
	}
	ph->nodes[ph->nnodes].parent = parent;
	ph->nodes[ph->nnodes].function_id = fid;
	ph->nodes[ph->nnodes].total = 0;
	ph->slots[s] = (int32_t)ph->nnodes;
	return (int32_t)ph->nnodes++;
}

/*
 * The default phases: the sample's path through the first levels, each
 * node's time, and (in `path`, `*npath`) the nodes it passed, for the row.
 */
static int sample_default(struct rs_phases *ph, const struct rs_session_parser *p,
			  const uint32_t *frames, size_t depth, double t, int32_t *path,
			  size_t *npath)
{
	size_t d, n = depth < RS_PHASES_MAX_DEPTH ? depth : RS_PHASES_MAX_DEPTH;
	int32_t parent = -1;
	int err = 0;

	*npath = 0;
	for (d = 0; d < n; d++) {
		int32_t node;

		if (d < ph->prev_depth && ph->prev_frames[d] == frames[d]) {
			node = ph->prev_nodes[d];
		} else {
			const struct rs_session_frame *f = rs_session_parser_frame(p, frames[d]);

			node = node_of(ph, parent, f->function_id, &err);
			if (err)
				return err;
			/* below a changed frame the previous path no longer holds */
			if (d < ph->prev_depth)
				ph->prev_depth = d;
		}
		ph->prev_frames[d] = frames[d];
		ph->prev_nodes[d] = node;
		if (node < 0)
			break;
		ph->nodes[node].total += t;
		path[(*npath)++] = node;
		parent = node;
	}
	ph->prev_depth = d;
	return 0;
}

static int on_sample(void *ctx, const struct rs_session_parser *p, const uint32_t *frames,
		     size_t depth, double t)
{
	struct rs_phases *ph = ctx;
	int32_t path[RS_PHASES_MAX_DEPTH];
	size_t npath = 0;
	double *row;
	int err;

	if (!(t > 0) || !isfinite(t))
		return 0;
	if (ph->nspecs) {
		uint32_t mask = 0;

		for (size_t d = 0; d < depth; d++)
			if (frames[d] < ph->frame_alloc)
				mask |= ph->frame_mask[frames[d]];
		row = slice_row(ph);
		for (size_t i = 0; i < ph->nspecs; i++)
			if (mask & (1u << i)) {
				ph->phase_total[i] += t;
				row[i] += t;
			}
		if (!mask) {
			ph->phase_total[ph->nspecs] += t;
			row[ph->nspecs] += t;
		}
	} else {
		/* the walk may widen the rows (a new node): the row comes after it */
		err = sample_default(ph, p, frames, depth, t, path, &npath);
		if (err)
			return err;
		row = slice_row(ph);
		for (size_t i = 0; i < npath; i++)
			row[path[i]] += t;
	}
	row[ph->stride - 1] += t;
	ph->sampled += t;
	ph->pos += t;
	return 0;
}

void rs_phases_callbacks(struct rs_phases *ph, struct rs_session_callbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ctx = ph;
	cb->frame = on_frame;
	cb->sample = on_sample;
}
/* ---- the result -------------------------------------------------------- */

static json_t *rounded(double v)
{
	return json_real(round(v * 1e6) / 1e6);
}

/* A default phase's name: "Class.function" of the node, kept to [A-Za-z0-9_.-]. */
static void node_name(char *out, size_t cap, const struct rs_session_parser *p, uint32_t fid)
{
	const struct rs_session_function *fn = rs_session_parser_function(p, fid);
	size_t k = 0;
	char raw[2 * RS_PHASES_MAX_NAME + 2];

	snprintf(raw, sizeof(raw), "%s%s%s", fn && fn->class_name ? fn->class_name : "",
		 fn && fn->class_name ? "." : "", fn ? fn->function : "?");
	for (const char *c = raw; *c && k + 1 < cap; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			 (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '-';

		if (ok)
			out[k++] = *c;
		else if (k && out[k - 1] != '_')
			out[k++] = '_';
	}
	while (k && out[k - 1] == '_')
		k--;
	if (!k)
		out[k++] = '_';
	out[k] = '\0';
}

/* The `cap` biggest children of `parent` (-1: the root), biggest first. */
static size_t children(const struct rs_phases *ph, int32_t parent, int32_t *kids, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		int32_t best = -1;

		for (size_t i = 0; i < ph->nnodes; i++) {
			int taken = 0;

			if (ph->nodes[i].parent != parent)
				continue;
			for (size_t j = 0; j < n && !taken; j++)
				taken = kids[j] == (int32_t)i;
			if (!taken && (best < 0 || ph->nodes[i].total > ph->nodes[best].total))
				best = (int32_t)i;
		}
		if (best < 0)
			break;
		kids[n++] = best;
	}
	return n;
}

/*
 * The default phases: through the frames that hand (nearly) all their
 * time to one child, to the first that splits it; its children holding
 * at least 1% of the run. `*under` is the splitting node (-1: the root).
 */
static size_t default_phases(const struct rs_phases *ph, int32_t *out, int32_t *under)
{
	int32_t kids[RS_PHASES_DEFAULT_MAX + 1], node = -1;
	double node_total = ph->sampled;
	size_t n = 0;

	for (int level = 0; level < RS_PHASES_MAX_DEPTH; level++) {
		size_t k = children(ph, node, kids, 2);

		if (k == 0)
			break;
		if (ph->nodes[kids[0]].total < 0.99 * node_total ||
		    (k > 1 && ph->nodes[kids[1]].total >= 0.01 * ph->sampled))
			break;
		node = kids[0];
		node_total = ph->nodes[node].total;
	}
	*under = node;
	n = children(ph, node, kids, RS_PHASES_DEFAULT_MAX);
	for (size_t i = 0; i < n; i++)
		if (ph->nodes[kids[i]].total < 0.01 * ph->sampled)
			n = i;
	memcpy(out, kids, n * sizeof(*out));
	return n;
}

static int put_new(json_t *o, const char *k, json_t *v)
{
	return !v || json_object_set_new(o, k, v) != 0;
}

static int append_new(json_t *a, json_t *v)
{
	return !v || json_array_append_new(a, v) != 0;
}

/* The timeline's rows: [t_start, one value per column of `cols`, other]. */
static int timeline_json(const struct rs_phases *ph, const size_t *cols, size_t ncols, json_t *tl)
{
	json_t *rows = json_array();
	int bad = !rows || put_new(tl, "rows", rows) || put_new(tl, "slice", rounded(ph->slice_width));

	for (size_t i = 0; !bad && i < ph->nslices; i++) {
		const double *row = ph->slices + i * ph->stride;
		json_t *r = json_array();
		double rest = row[ph->stride - 1];

		bad = append_new(rows, r) || append_new(r, rounded((double)i * ph->slice_width));
		for (size_t c = 0; !bad && c < ncols; c++) {
			bad = append_new(r, rounded(row[cols[c]]));
			rest -= row[cols[c]];
		}
		if (!bad)
			bad = append_new(r, rounded(ph->nspecs ? row[ph->nspecs] : (rest > 0 ? rest : 0)));
	}
	return bad;
}

int rs_phases_json(const struct rs_phases *ph, const struct rs_session_parser *parser,
		   json_t **out)
{
	json_t *o = json_object(), *names = json_array(), *totals = json_object(),
	       *specs = NULL, *tl = json_object();
	size_t cols[RS_PHASES_MAX > RS_PHASES_DEFAULT_MAX ? RS_PHASES_MAX : RS_PHASES_DEFAULT_MAX];
	size_t ncols = 0;
	double phased = 0;
	int bad = !o || !names || !totals || !tl;

	*out = NULL;
	if (!bad && ph->nspecs) {
		specs = json_array();
		bad = !specs || put_new(o, "source", json_string("config")) || put_new(o, "specs", specs);
		for (size_t i = 0; !bad && i < ph->nspecs; i++) {
			bad = append_new(names, json_string(ph->specs[i].name)) ||
			      append_new(specs, json_string(ph->specs[i].text)) ||
			      put_new(totals, ph->specs[i].name, rounded(ph->phase_total[i]));
			cols[ncols++] = i;
		}
		if (!bad)
			bad = put_new(o, "other", rounded(ph->phase_total[ph->nspecs]));
	} else if (!bad) {
		int32_t picked[RS_PHASES_DEFAULT_MAX], under;
		size_t n = default_phases(ph, picked, &under);

		bad = put_new(o, "source", json_string("default"));
		if (!bad && under >= 0) {
			char nm[RS_PHASES_MAX_NAME + 1];

			node_name(nm, sizeof(nm), parser, ph->nodes[under].function_id);
			bad = put_new(o, "under", json_string(nm));
		}
		for (size_t i = 0; !bad && i < n; i++) {
			char nm[RS_PHASES_MAX_NAME + 1], unique[RS_PHASES_MAX_NAME + 16];

			node_name(nm, sizeof(nm), parser, ph->nodes[picked[i]].function_id);
			/* two frames of one name under the same parent: number them */
			snprintf(unique, sizeof(unique), "%s", nm);
			for (unsigned k = 2; json_object_get(totals, unique) && k < 100; k++)
				snprintf(unique, sizeof(unique), "%.*s_%u", RS_PHASES_MAX_NAME - 3, nm, k);
			bad = append_new(names, json_string(unique)) ||
			      put_new(totals, unique, rounded(ph->nodes[picked[i]].total));
			phased += ph->nodes[picked[i]].total;
			cols[ncols++] = (size_t)picked[i];
		}
		if (!bad)
			bad = put_new(o, "other", rounded(ph->sampled > phased ? ph->sampled - phased : 0));
		if (!bad && ph->overflow)
			bad = put_new(o, "paths_truncated", json_true());
	}
	if (!bad)
		bad = put_new(o, "names", names) || put_new(o, "totals", totals) ||
		      put_new(o, "sampled", rounded(ph->sampled));
	names = totals = NULL;
	if (!bad)
		bad = timeline_json(ph, cols, ncols, tl) || put_new(o, "timeline", tl);
	tl = NULL;
	if (bad) {
		json_decref(o);
		json_decref(names);
		json_decref(totals);
		json_decref(tl);
		return rs_error_set(RS_EGENERIC, "out of memory writing phases");
	}
	*out = o;
	return 0;
}

int rs_phases_metrics(const json_t *phases, json_t *metrics)
{
	json_t *names = json_object_get(phases, "names"), *totals = json_object_get(phases, "totals");
	size_t i;
	json_t *n;

	if (!json_is_array(names) || !json_is_object(totals))
		return 0;
	json_array_foreach(names, i, n) {
		char key[RS_PHASES_MAX_NAME + 16];
		json_t *v = json_is_string(n) ? json_object_get(totals, json_string_value(n)) : NULL;

		if (!json_is_number(v) || strlen(json_string_value(n)) > RS_PHASES_MAX_NAME + 8)
			continue;
		snprintf(key, sizeof(key), "phase.%s", json_string_value(n));
		if (json_object_set(metrics, key, v) != 0)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}
