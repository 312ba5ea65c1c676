/*
 * Decoding and encoding run records (run.json).
 *
 * One table, keys[], lists every key of every object of the format with
 * the JSON types it may have and whether it may be absent; the decoder
 * fetches every key through it (field()), so a key is required unless the
 * table says otherwise, and its type is checked before it is read. The
 * struct is then filled by small per-object functions. Encoding builds
 * the JSON object back from the struct and writes it in run.json's layout
 * (one line per key at the top and in "summary"; see layered()).
 *
 * Bounds: the text is capped (RS_RUNREC_MAX_BYTES) before jansson sees
 * it; jansson bounds its own nesting (2048 levels); the only recursion
 * here is the call tree, bounded by RS_RUNREC_MAX_TREE_DEPTH; every index
 * read from the record (a file of more_functions, a function of calls) is
 * checked against the list it points into.
 */
#include "runrec/runrec.h"
#include "runrec/runrec_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JSON types a key may have. */
enum {
	T_STR = 1 << 0,
	T_INT = 1 << 1,
	T_REAL = 1 << 2,
	T_NUM = T_INT | T_REAL,
	T_BOOL = 1 << 3,
	T_OBJ = 1 << 4,
	T_ARR = 1 << 5,
	T_NULL = 1 << 6,
};

/* OPT: the key may be absent (older runs, --raw). Everything else is required. */
enum { REQ = 0, OPT = 1 };

struct keyspec {
	const char *scope;   /* the object: "" (top), "summary", "summary.functions[]"... */
	const char *key;
	unsigned types;
	unsigned optional;
};

/*
 * Every key of format 1. The optional ones, and since when the others
 * are always written: phases (runs before phases, --raw), summary's
 * more_functions, ran and calls (runs before the culprit analysis),
 * summary.tree_truncated and phases.paths_truncated (written only when
 * true), a function's class (only when the session knows it), a file's
 * oid (only when stored in LFS), phases.under (default phases found below
 * a frame) and phases.specs (configured phases). docs/run-format.md has
 * the same list.
 */
static const struct keyspec keys[] = {
	{ "", "format", T_INT, REQ },
	{ "", "id", T_STR, REQ },
	{ "", "commit", T_STR, REQ },
	{ "", "branch", T_STR, REQ },
	{ "", "trigger", T_STR, REQ },
	{ "", "recorded_at", T_STR, REQ },
	{ "", "message", T_STR | T_NULL, REQ },
	{ "", "machine", T_OBJ, REQ },
	{ "", "meta", T_OBJ, REQ },
	{ "", "stats", T_OBJ, REQ },
	{ "", "args", T_OBJ, REQ },
	{ "", "metrics", T_OBJ, REQ },
	{ "", "files", T_ARR, REQ },
	{ "", "session", T_OBJ | T_NULL, REQ },
	{ "", "phases", T_OBJ, OPT },
	{ "", "summary", T_OBJ | T_NULL, REQ },

	{ "machine", "hostname", T_STR | T_NULL, REQ },
	{ "machine", "os", T_STR | T_NULL, REQ },
	{ "machine", "arch", T_STR | T_NULL, REQ },
	{ "machine", "cpu_model", T_STR | T_NULL, REQ },
	{ "machine", "cpus", T_INT, REQ },
	{ "machine", "runner", T_STR | T_NULL, REQ },

	{ "files[]", "path", T_STR, REQ },
	{ "files[]", "role", T_STR, REQ },
	{ "files[]", "size", T_INT, REQ },
	{ "files[]", "lfs", T_BOOL, REQ },
	{ "files[]", "oid", T_STR, OPT },

	{ "session", "path", T_STR, REQ },
	{ "session", "oid", T_STR, REQ },
	{ "session", "size", T_INT, REQ },

	{ "summary", "layout", T_STR, REQ },
	{ "summary", "start_time", T_NUM | T_NULL, REQ },
	{ "summary", "duration", T_NUM | T_NULL, REQ },
	{ "summary", "cpu_time", T_NUM | T_NULL, REQ },
	{ "summary", "min_interval", T_NUM | T_NULL, REQ },
	{ "summary", "max_interval", T_NUM | T_NULL, REQ },
	{ "summary", "sample_count", T_INT | T_NULL, REQ },
	{ "summary", "target", T_STR | T_NULL, REQ },
	{ "summary", "samples", T_INT, REQ },
	{ "summary", "sampled_time", T_NUM, REQ },
	{ "summary", "distinct_frames", T_INT, REQ },
	{ "summary", "distinct_functions", T_INT, REQ },
	{ "summary", "sys_path", T_ARR, REQ },
	{ "summary", "functions", T_ARR, REQ },
	{ "summary", "files", T_ARR, REQ },
	{ "summary", "tree", T_OBJ, REQ },
	{ "summary", "tree_truncated", T_BOOL, OPT },
	{ "summary", "more_functions", T_OBJ, OPT },
	{ "summary", "ran", T_STR, OPT },
	{ "summary", "calls", T_OBJ, OPT },

	{ "summary.functions[]", "function", T_STR, REQ },
	{ "summary.functions[]", "file", T_STR, REQ },
	{ "summary.functions[]", "line", T_INT, REQ },
	{ "summary.functions[]", "class", T_STR, OPT },
	{ "summary.functions[]", "self", T_NUM, REQ },
	{ "summary.functions[]", "total", T_NUM, REQ },
	{ "summary.functions[]", "self_samples", T_INT, REQ },
	{ "summary.functions[]", "total_samples", T_INT, REQ },

	{ "summary.files[]", "file", T_STR, REQ },
	{ "summary.files[]", "self", T_NUM, REQ },
	{ "summary.files[]", "total", T_NUM, REQ },

	{ "summary.tree", "function", T_STR, REQ },
	{ "summary.tree", "file", T_STR, REQ },
	{ "summary.tree", "line", T_INT, REQ },
	{ "summary.tree", "total", T_NUM, REQ },
	{ "summary.tree", "self", T_NUM, REQ },
	{ "summary.tree", "children", T_ARR, REQ },

	{ "summary.more_functions", "floor", T_NUM, REQ },
	{ "summary.more_functions", "files", T_ARR, REQ },
	{ "summary.more_functions", "rows", T_ARR, REQ },

	{ "summary.calls", "version", T_INT, REQ },
	{ "summary.calls", "floor", T_NUM, REQ },
	{ "summary.calls", "rows", T_ARR, REQ },

	{ "phases", "source", T_STR, REQ },
	{ "phases", "under", T_STR, OPT },
	{ "phases", "names", T_ARR, REQ },
	{ "phases", "specs", T_ARR, OPT },
	{ "phases", "totals", T_OBJ, REQ },
	{ "phases", "other", T_NUM, REQ },
	{ "phases", "sampled", T_NUM, REQ },
	{ "phases", "paths_truncated", T_BOOL, OPT },
	{ "phases", "timeline", T_OBJ, REQ },

	{ "phases.timeline", "slice", T_NUM, REQ },
	{ "phases.timeline", "rows", T_ARR, REQ },
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

const char *const *rs_runrec_optional_keys(size_t *n)
{
	static const char *list[NKEYS];
	static char text[NKEYS][64];
	static size_t count;

	/* Built on first use; the same each time, so a race writes equal bytes. */
	if (!count) {
		size_t m = 0;

		for (size_t i = 0; i < NKEYS; i++) {
			if (!keys[i].optional)
				continue;
			snprintf(text[m], sizeof(text[m]), "%s%s%s", keys[i].scope,
				 keys[i].scope[0] ? "." : "", keys[i].key);
			list[m] = text[m];
			m++;
		}
		count = m;
	}
	*n = count;
	return list;
}

/* ---- decoding ---------------------------------------------------------- */

static const struct keyspec *spec_of(const char *scope, const char *key)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].scope, scope) == 0 && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

static unsigned type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: return T_STR;
	case JSON_INTEGER: return T_INT;
	case JSON_REAL: return T_REAL;
	case JSON_TRUE:
	case JSON_FALSE: return T_BOOL;
	case JSON_OBJECT: return T_OBJ;
	case JSON_ARRAY: return T_ARR;
	default: return T_NULL;
	}
}

static const char *type_name(unsigned t)
{
	return t & T_STR ? "a string" : t & T_INT ? "an integer" : t & T_REAL ? "a number" :
	       t & T_BOOL ? "a boolean" : t & T_OBJ ? "an object" : t & T_ARR ? "an array" :
	       "null";
}

/* What the key should be, for the message: "a number or null". */
static void types_text(char *out, size_t cap, unsigned t)
{
	static const unsigned order[] = { T_STR, T_NUM, T_INT, T_BOOL, T_OBJ, T_ARR, T_NULL };
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if ((t & order[i]) != order[i])
			continue;
		t &= ~order[i];
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s", out[0] ? " or " : "",
				      order[i] == T_NUM ? "a number" : type_name(order[i]));
		if (n >= cap)
			return;
	}
}

/*
 * The member `key` of `obj`, an object at `where` ("summary.functions[3]")
 * whose keys are those of `scope` in keys[]. *out: the value, or NULL when
 * the key is absent (optional keys) or null (nullable keys). RS_ECORRUPT
 * naming the key when a required key is missing or the type is wrong.
 */
static int field(const json_t **out, const json_t *obj, const char *scope, const char *where,
		 const char *key)
{
	const struct keyspec *ks = spec_of(scope, key);
	const json_t *v = json_object_get(obj, key);
	char want[96];
	unsigned t;

	/* a key missing from the table is a bug here, not in the record */
	if (!ks)
		return rs_error_set(RS_EGENERIC, "run record: no rule for key '%s' of %s", key,
				    scope[0] ? scope : "the top level");
	*out = NULL;
	if (!v) {
		if (ks->optional)
			return 0;
		return rs_error_set(RS_ECORRUPT, "run record: %s lacks the required key '%s'",
				    where[0] ? where : "the top level", key);
	}
	t = type_of(v);
	if (!(t & ks->types)) {
		types_text(want, sizeof(want), ks->types);
		return rs_error_set(RS_ECORRUPT, "run record: key '%s%s%s' is %s, expected %s", where,
				    where[0] ? "." : "", key, type_name(t), want);
	}
	if (t == T_STR && strlen(json_string_value(v)) != json_string_length(v))
		return rs_error_set(RS_ECORRUPT, "run record: key '%s%s%s' holds a NUL byte", where,
				    where[0] ? "." : "", key);
	if (t != T_NULL)
		*out = v;
	return 0;
}

static int oom(void)
{
	return rs_error_set(RS_EGENERIC, "out of memory");
}

static int dup_str(char **out, const json_t *v)
{
	*out = NULL;
	if (!v)
		return 0;
	*out = strdup(json_string_value(v));
	return *out ? 0 : oom();
}

/* A string key into *out (NULL when absent or null). */
static int get_str(char **out, const json_t *obj, const char *scope, const char *where,
		   const char *key)
{
	const json_t *v;
	int err = field(&v, obj, scope, where, key);

	if (err)
		return err;
	return dup_str(out, v);
}

static int get_int(int64_t *out, const json_t *obj, const char *scope, const char *where,
		   const char *key)
{
	const json_t *v;
	int err = field(&v, obj, scope, where, key);

	if (!err && v)
		*out = json_integer_value(v);
	return err;
}

static int get_num(double *out, const json_t *obj, const char *scope, const char *where,
		   const char *key)
{
	const json_t *v;
	int err = field(&v, obj, scope, where, key);

	if (!err && v)
		*out = json_number_value(v);
	return err;
}

static int get_opt(struct rs_runrec_opt *out, const json_t *obj, const char *scope,
		   const char *where, const char *key)
{
	const json_t *v;
	int err = field(&v, obj, scope, where, key);

	out->present = !err && v;
	out->v = out->present ? json_number_value(v) : 0;
	out->i = out->present && json_is_integer(v) ? json_integer_value(v) : 0;
	return err;
}

static int get_bool(int *out, const json_t *obj, const char *scope, const char *where,
		    const char *key)
{
	const json_t *v;
	int err = field(&v, obj, scope, where, key);

	*out = !err && v && json_is_true(v);
	return err;
}

/* Room for `n` elements of `size` bytes, zeroed (at least one, so never NULL). */
static int alloc_array(void *out, size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		return oom();
	memcpy(out, &p, sizeof(p));
	return 0;
}

/* An array of strings at `where` into a new list. */
static int str_list(char ***out, size_t *n, const json_t *arr, const char *where)
{
	size_t i;
	const json_t *v;
	int err = alloc_array(out, json_array_size(arr), sizeof(char *));

	*n = 0;
	if (err)
		return err;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return rs_error_set(RS_ECORRUPT, "run record: %s[%zu] is %s, expected a string",
					    where, i, type_name(type_of(v)));
		err = dup_str(&(*out)[i], v);
		if (err)
			return err;
		*n = i + 1;
	}
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	return strcmp(((const struct rs_runrec_pair *)a)->name,
		      ((const struct rs_runrec_pair *)b)->name);
}

/* An object of scalars (`types`: T_STR and/or T_NUM) at `where` into a sorted map. */
static int get_map(struct rs_runrec_map *out, const json_t *obj, unsigned types,
		   const char *where)
{
	const char *k;
	json_t *v;
	size_t n = 0;
	char want[64];
	int err = alloc_array(&out->items, json_object_size(obj), sizeof(*out->items));

	if (err)
		return err;
	json_object_foreach((json_t *)obj, k, v) {
		struct rs_runrec_pair *p = &out->items[n];
		unsigned t = type_of(v);

		if (!(t & types)) {
			types_text(want, sizeof(want), types);
			return rs_error_set(RS_ECORRUPT, "run record: '%s.%s' is %s, expected %s",
					    where, k, type_name(t), want);
		}
		p->name = strdup(k);
		if (!p->name)
			return oom();
		out->n = ++n;
		if (t == T_STR) {
			p->value.kind = RS_RUNREC_STRING;
			err = dup_str(&p->value.s, v);
			if (err)
				return err;
		} else if (t == T_INT) {
			p->value.kind = RS_RUNREC_INT;
			p->value.i = json_integer_value(v);
			p->value.d = (double)p->value.i;
		} else {
			p->value.kind = RS_RUNREC_REAL;
			p->value.d = json_real_value(v);
		}
	}
	if (out->n)
		qsort(out->items, out->n, sizeof(*out->items), cmp_pair);
	/* a key with a NUL byte reads as its prefix: two may then be equal */
	for (size_t i = 1; i < out->n; i++)
		if (strcmp(out->items[i - 1].name, out->items[i].name) == 0)
			return rs_error_set(RS_ECORRUPT, "run record: %s has the key '%s' twice",
					    where, out->items[i].name);
	return 0;
}

/* `v` must be an object: the element `i` of the array `where`. */
static int want_object(const json_t *v, const char *where, size_t i)
{
	if (json_is_object(v))
		return 0;
	return rs_error_set(RS_ECORRUPT, "run record: %s[%zu] is %s, expected an object", where, i,
			    type_name(type_of(v)));
}

static int decode_machine(struct rs_runrec_machine *m, const json_t *o)
{
	int err;

	err = get_str(&m->hostname, o, "machine", "machine", "hostname");
	if (!err)
		err = get_str(&m->os, o, "machine", "machine", "os");
	if (!err)
		err = get_str(&m->arch, o, "machine", "machine", "arch");
	if (!err)
		err = get_str(&m->cpu_model, o, "machine", "machine", "cpu_model");
	if (!err)
		err = get_int(&m->cpus, o, "machine", "machine", "cpus");
	if (!err)
		err = get_str(&m->runner, o, "machine", "machine", "runner");
	return err;
}

static int decode_files(struct rs_runrec *rec, const json_t *arr)
{
	size_t i;
	const json_t *o;
	char where[48];
	int err = alloc_array(&rec->files, json_array_size(arr), sizeof(*rec->files));

	if (err)
		return err;
	json_array_foreach(arr, i, o) {
		struct rs_runrec_file *f = &rec->files[i];

		snprintf(where, sizeof(where), "files[%zu]", i);
		err = want_object(o, "files", i);
		if (!err)
			err = get_str(&f->path, o, "files[]", where, "path");
		if (!err)
			err = get_str(&f->role, o, "files[]", where, "role");
		if (!err)
			err = get_int(&f->size, o, "files[]", where, "size");
		if (!err)
			err = get_bool(&f->lfs, o, "files[]", where, "lfs");
		if (!err)
			err = get_str(&f->oid, o, "files[]", where, "oid");
		rec->nfiles = i + 1;
		if (err)
			return err;
		if (f->size < 0)
			return rs_error_set(RS_ECORRUPT, "run record: %s.size is negative", where);
		if (f->lfs && !f->oid)
			return rs_error_set(RS_ECORRUPT, "run record: %s is in LFS but has no 'oid'",
					    where);
	}
	return 0;
}

static int decode_session(struct rs_runrec_session *s, const json_t *o)
{
	int err;

	err = get_str(&s->path, o, "session", "session", "path");
	if (!err)
		err = get_str(&s->oid, o, "session", "session", "oid");
	if (!err)
		err = get_int(&s->size, o, "session", "session", "size");
	if (!err && s->size < 0)
		err = rs_error_set(RS_ECORRUPT, "run record: session.size is negative");
	return err;
}

static int decode_functions(struct rs_runrec_summary *s, const json_t *arr)
{
	size_t i;
	const json_t *o;
	char where[64];
	int err = alloc_array(&s->functions, json_array_size(arr), sizeof(*s->functions));

	if (err)
		return err;
	json_array_foreach(arr, i, o) {
		struct rs_runrec_function *f = &s->functions[i];
		const char *sc = "summary.functions[]";

		snprintf(where, sizeof(where), "summary.functions[%zu]", i);
		s->nfunctions = i + 1;
		err = want_object(o, "summary.functions", i);
		if (!err)
			err = get_str(&f->function, o, sc, where, "function");
		if (!err)
			err = get_str(&f->file, o, sc, where, "file");
		if (!err)
			err = get_int(&f->line, o, sc, where, "line");
		if (!err)
			err = get_str(&f->class_name, o, sc, where, "class");
		if (!err)
			err = get_num(&f->self, o, sc, where, "self");
		if (!err)
			err = get_num(&f->total, o, sc, where, "total");
		if (!err)
			err = get_int(&f->self_samples, o, sc, where, "self_samples");
		if (!err)
			err = get_int(&f->total_samples, o, sc, where, "total_samples");
		if (err)
			return err;
	}
	return 0;
}

static int decode_file_times(struct rs_runrec_summary *s, const json_t *arr)
{
	size_t i;
	const json_t *o;
	char where[64];
	int err = alloc_array(&s->files, json_array_size(arr), sizeof(*s->files));

	if (err)
		return err;
	json_array_foreach(arr, i, o) {
		struct rs_runrec_file_time *f = &s->files[i];

		snprintf(where, sizeof(where), "summary.files[%zu]", i);
		s->nfiles = i + 1;
		err = want_object(o, "summary.files", i);
		if (!err)
			err = get_str(&f->file, o, "summary.files[]", where, "file");
		if (!err)
			err = get_num(&f->self, o, "summary.files[]", where, "self");
		if (!err)
			err = get_num(&f->total, o, "summary.files[]", where, "total");
		if (err)
			return err;
	}
	return 0;
}

/* A tree node at `depth` levels below the root; its children recursively. */
static int decode_node(struct rs_runrec_node *n, const json_t *o, unsigned depth)
{
	const json_t *kids, *k;
	const char *sc = "summary.tree";
	char where[64];
	size_t i;
	int err;

	snprintf(where, sizeof(where), "summary.tree (a node %u levels down)", depth);
	if (!depth)
		snprintf(where, sizeof(where), "summary.tree");
	if (depth > RS_RUNREC_MAX_TREE_DEPTH)
		return rs_error_set(RS_ECORRUPT, "run record: summary.tree is deeper than %u levels",
				    RS_RUNREC_MAX_TREE_DEPTH);
	err = get_str(&n->function, o, sc, where, "function");
	if (!err)
		err = get_str(&n->file, o, sc, where, "file");
	if (!err)
		err = get_int(&n->line, o, sc, where, "line");
	if (!err)
		err = get_num(&n->total, o, sc, where, "total");
	if (!err)
		err = get_num(&n->self, o, sc, where, "self");
	if (!err)
		err = field(&kids, o, sc, where, "children");
	if (!err)
		err = alloc_array(&n->children, json_array_size(kids), sizeof(*n->children));
	if (err)
		return err;
	json_array_foreach(kids, i, k) {
		n->nchildren = i + 1;
		if (!json_is_object(k))
			return rs_error_set(RS_ECORRUPT, "run record: a child of %s is %s, "
					    "expected an object", where, type_name(type_of(k)));
		err = decode_node(&n->children[i], k, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* An element of a row that must be an integer. */
static int row_int(int64_t *out, const json_t *row, size_t j, const char *where, size_t i)
{
	const json_t *v = json_array_get(row, j);

	if (!json_is_integer(v))
		return rs_error_set(RS_ECORRUPT, "run record: %s[%zu][%zu] is %s, expected an integer",
				    where, i, j, v ? type_name(type_of(v)) : "missing");
	*out = json_integer_value(v);
	return 0;
}

static int want_row(const json_t *row, size_t width, const char *where, size_t i)
{
	if (json_is_array(row) && json_array_size(row) == width)
		return 0;
	return rs_error_set(RS_ECORRUPT, "run record: %s[%zu] is not an array of %zu values", where,
			    i, width);
}

static int decode_more(struct rs_runrec_more *m, const json_t *o)
{
	const char *sc = "summary.more_functions", *rw = "summary.more_functions.rows";
	const json_t *files, *rows, *row;
	size_t i;
	int err;

	err = get_num(&m->floor, o, sc, sc, "floor");
	if (!err)
		err = field(&files, o, sc, sc, "files");
	if (!err)
		err = field(&rows, o, sc, sc, "rows");
	if (!err)
		err = str_list(&m->files, &m->nfiles, files, "summary.more_functions.files");
	if (!err)
		err = alloc_array(&m->rows, json_array_size(rows), sizeof(*m->rows));
	if (err)
		return err;
	json_array_foreach(rows, i, row) {
		struct rs_runrec_more_row *r = &m->rows[i];
		const json_t *fn = json_array_get(row, 0);
		int64_t file = 0;

		err = want_row(row, 5, rw, i);
		if (!err && (!json_is_string(fn) ||
			     strlen(json_string_value(fn)) != json_string_length(fn)))
			err = rs_error_set(RS_ECORRUPT, "run record: %s[%zu][0] is not a string", rw, i);
		if (!err)
			err = row_int(&file, row, 1, rw, i);
		if (!err && (file < 0 || (uint64_t)file >= m->nfiles))
			err = rs_error_set(RS_ECORRUPT, "run record: %s[%zu] names file %lld of %zu",
					   rw, i, (long long)file, m->nfiles);
		if (!err)
			err = row_int(&r->line, row, 2, rw, i);
		if (!err)
			err = row_int(&r->self_us, row, 3, rw, i);
		if (!err)
			err = row_int(&r->total_us, row, 4, rw, i);
		if (!err)
			err = dup_str(&r->function, fn);
		if (err)
			return err;
		r->file = (size_t)file;
		m->nrows = i + 1;
	}
	return 0;
}

/* calls: after functions and more_functions, whose rows its indexes name. */
static int decode_calls(struct rs_runrec_summary *s, const json_t *o)
{
	struct rs_runrec_calls *c = &s->calls;
	const char *sc = "summary.calls", *rw = "summary.calls.rows";
	size_t listed = s->nfunctions + (s->has_more ? s->more.nrows : 0), i;
	const json_t *rows, *row;
	int err;

	err = get_int(&c->version, o, sc, sc, "version");
	if (!err && c->version != RS_RUNREC_CALLS_VERSION)
		err = rs_error_set(c->version > RS_RUNREC_CALLS_VERSION ? RS_ENEWER : RS_ECORRUPT,
				   "run record: summary.calls has version %lld, this build reads %d",
				   (long long)c->version, RS_RUNREC_CALLS_VERSION);
	if (!err)
		err = get_num(&c->floor, o, sc, sc, "floor");
	if (!err)
		err = field(&rows, o, sc, sc, "rows");
	if (!err)
		err = alloc_array(&c->rows, json_array_size(rows), sizeof(*c->rows));
	if (err)
		return err;
	json_array_foreach(rows, i, row) {
		struct rs_runrec_call *r = &c->rows[i];
		int64_t caller = 0, callee = 0;

		err = want_row(row, 4, rw, i);
		if (!err)
			err = row_int(&caller, row, 0, rw, i);
		if (!err)
			err = row_int(&callee, row, 1, rw, i);
		if (!err && (caller < 0 || callee < 0 || (uint64_t)caller >= listed ||
			     (uint64_t)callee >= listed))
			err = rs_error_set(RS_ECORRUPT, "run record: %s[%zu] names a function "
					   "beyond the %zu listed", rw, i, listed);
		if (!err)
			err = row_int(&r->total_us, row, 2, rw, i);
		if (!err)
			err = row_int(&r->self_us, row, 3, rw, i);
		if (err)
			return err;
		r->caller = (size_t)caller;
		r->callee = (size_t)callee;
		c->nrows = i + 1;
	}
	return 0;
}

static int decode_summary_header(struct rs_runrec_summary *s, const json_t *o)
{
	const char *sc = "summary";
	const json_t *sp;
	int err;

	err = get_str(&s->layout, o, sc, sc, "layout");
	if (!err)
		err = get_opt(&s->start_time, o, sc, sc, "start_time");
	if (!err)
		err = get_opt(&s->duration, o, sc, sc, "duration");
	if (!err)
		err = get_opt(&s->cpu_time, o, sc, sc, "cpu_time");
	if (!err)
		err = get_opt(&s->min_interval, o, sc, sc, "min_interval");
	if (!err)
		err = get_opt(&s->max_interval, o, sc, sc, "max_interval");
	if (!err)
		err = get_opt(&s->sample_count, o, sc, sc, "sample_count");
	if (!err)
		err = get_str(&s->target, o, sc, sc, "target");
	if (!err)
		err = get_int(&s->samples, o, sc, sc, "samples");
	if (!err)
		err = get_num(&s->sampled_time, o, sc, sc, "sampled_time");
	if (!err)
		err = get_int(&s->distinct_frames, o, sc, sc, "distinct_frames");
	if (!err)
		err = get_int(&s->distinct_functions, o, sc, sc, "distinct_functions");
	if (!err)
		err = field(&sp, o, sc, sc, "sys_path");
	if (!err)
		err = str_list(&s->sys_path, &s->nsys_path, sp, "summary.sys_path");
	return err;
}

static int decode_summary(struct rs_runrec_summary *s, const json_t *o)
{
	const char *sc = "summary";
	const json_t *v;
	int err;

	err = decode_summary_header(s, o);
	if (!err)
		err = field(&v, o, sc, sc, "functions");
	if (!err)
		err = decode_functions(s, v);
	if (!err)
		err = field(&v, o, sc, sc, "files");
	if (!err)
		err = decode_file_times(s, v);
	if (!err)
		err = field(&v, o, sc, sc, "tree");
	if (!err)
		err = decode_node(&s->tree, v, 0);
	if (!err)
		err = get_bool(&s->tree_truncated, o, sc, sc, "tree_truncated");
	if (!err)
		err = field(&v, o, sc, sc, "more_functions");
	if (!err && v) {
		s->has_more = 1;
		err = decode_more(&s->more, v);
	}
	if (!err)
		err = get_str(&s->ran, o, sc, sc, "ran");
	if (!err)
		err = field(&v, o, sc, sc, "calls");
	if (!err && v) {
		s->has_calls = 1;
		err = decode_calls(s, v);
	}
	return err;
}

static int decode_timeline(struct rs_runrec_phases *p, const json_t *o)
{
	const char *sc = "phases.timeline", *rw = "phases.timeline.rows";
	size_t width = p->nnames + 2, i;
	const json_t *rows, *row;
	int err;

	err = get_num(&p->slice, o, sc, sc, "slice");
	if (!err)
		err = field(&rows, o, sc, sc, "rows");
	if (err)
		return err;
	if (json_array_size(rows) > SIZE_MAX / sizeof(double) / width)
		return rs_error_set(RS_ETOOBIG, "run record: %s is too long", rw);
	err = alloc_array(&p->rows, json_array_size(rows) * width, sizeof(double));
	if (err)
		return err;
	json_array_foreach(rows, i, row) {
		err = want_row(row, width, rw, i);
		if (err)
			return err;
		for (size_t j = 0; j < width; j++) {
			const json_t *v = json_array_get(row, j);

			if (!json_is_number(v))
				return rs_error_set(RS_ECORRUPT, "run record: %s[%zu][%zu] is %s, "
						    "expected a number", rw, i, j,
						    type_name(type_of(v)));
			p->rows[i * width + j] = json_number_value(v);
		}
		p->nrows = i + 1;
	}
	return 0;
}

static int decode_phases(struct rs_runrec_phases *p, const json_t *o)
{
	const char *sc = "phases";
	const json_t *v;
	int err;

	err = get_str(&p->source, o, sc, sc, "source");
	if (!err)
		err = get_str(&p->under, o, sc, sc, "under");
	if (!err)
		err = field(&v, o, sc, sc, "names");
	if (!err)
		err = str_list(&p->names, &p->nnames, v, "phases.names");
	if (!err)
		err = field(&v, o, sc, sc, "specs");
	if (!err && v) {
		p->has_specs = 1;
		err = str_list(&p->specs, &p->nspecs, v, "phases.specs");
	}
	if (!err)
		err = field(&v, o, sc, sc, "totals");
	if (!err)
		err = get_map(&p->totals, v, T_NUM, "phases.totals");
	if (!err)
		err = get_num(&p->other, o, sc, sc, "other");
	if (!err)
		err = get_num(&p->sampled, o, sc, sc, "sampled");
	if (!err)
		err = get_bool(&p->paths_truncated, o, sc, sc, "paths_truncated");
	if (!err)
		err = field(&v, o, sc, sc, "timeline");
	if (!err)
		err = decode_timeline(p, v);
	return err;
}

/* The identity: format first, so that a newer record is named as such. */
static int decode_identity(struct rs_runrec *rec, const json_t *o)
{
	int err;

	err = get_int(&rec->format, o, "", "", "format");
	if (!err && rec->format > RS_RUNREC_FORMAT)
		err = rs_error_set(RS_ENEWER, "run record of format %lld: this build reads format %d "
				   "and older (upgrade results)", (long long)rec->format,
				   RS_RUNREC_FORMAT);
	if (!err && rec->format < 1)
		err = rs_error_set(RS_ECORRUPT, "run record of format %lld: formats start at 1",
				   (long long)rec->format);
	if (!err)
		err = get_str(&rec->id, o, "", "", "id");
	if (!err)
		err = get_str(&rec->commit, o, "", "", "commit");
	if (!err)
		err = get_str(&rec->branch, o, "", "", "branch");
	if (!err)
		err = get_str(&rec->trigger, o, "", "", "trigger");
	if (!err)
		err = get_str(&rec->recorded_at, o, "", "", "recorded_at");
	if (!err)
		err = get_str(&rec->message, o, "", "", "message");
	return err;
}

static int decode_record(struct rs_runrec *rec, const json_t *o)
{
	const json_t *v;
	int err;

	err = decode_identity(rec, o);
	if (!err)
		err = field(&v, o, "", "", "machine");
	if (!err)
		err = decode_machine(&rec->machine, v);
	if (!err)
		err = field(&v, o, "", "", "meta");
	if (!err)
		err = get_map(&rec->meta, v, T_STR, "meta");
	if (!err)
		err = field(&v, o, "", "", "stats");
	if (!err)
		err = get_map(&rec->stats, v, T_STR | T_NUM, "stats");
	if (!err)
		err = field(&v, o, "", "", "args");
	if (!err)
		err = get_map(&rec->args, v, T_STR | T_NUM, "args");
	if (!err)
		err = field(&v, o, "", "", "metrics");
	if (!err)
		err = get_map(&rec->metrics, v, T_NUM, "metrics");
	if (!err)
		err = field(&v, o, "", "", "files");
	if (!err)
		err = decode_files(rec, v);
	if (!err)
		err = field(&v, o, "", "", "session");
	if (!err && v) {
		rec->has_session = 1;
		err = decode_session(&rec->session, v);
	}
	if (!err)
		err = field(&v, o, "", "", "phases");
	if (!err && v) {
		rec->has_phases = 1;
		err = decode_phases(&rec->phases, v);
	}
	if (!err)
		err = field(&v, o, "", "", "summary");
	if (!err && v) {
		rec->summary = calloc(1, sizeof(*rec->summary));
		err = rec->summary ? decode_summary(rec->summary, v) : oom();
	}
	return err;
}

int rs_runrec_from_json(const json_t *o, rs_runrec **out)
{
	rs_runrec *rec;
	int err;

	if (!json_is_object(o))
		return rs_error_set(RS_ECORRUPT, "run record: %s, expected an object",
				    o ? type_name(type_of(o)) : "no JSON value");
	rec = calloc(1, sizeof(*rec));
	if (!rec)
		return oom();
	err = decode_record(rec, o);
	if (err) {
		rs_runrec_free(rec);
		return err;
	}
	*out = rec;
	return 0;
}

int rs_runrec_decode(const char *json, size_t len, rs_runrec **out)
{
	json_error_t jerr;
	json_t *o;
	int err;

	if (len > RS_RUNREC_MAX_BYTES)
		return rs_error_set(RS_ETOOBIG, "run record of %zu bytes: the cap is %u", len,
				    RS_RUNREC_MAX_BYTES);
	o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return rs_error_set(RS_ECORRUPT, "run record is not JSON: %s (line %d)", jerr.text,
				    jerr.line);
	err = rs_runrec_from_json(o, out);
	json_decref(o);
	return err;
}

int rs_runrec_metrics_from_json(struct rs_runrec_map *out, const json_t *o, const char *where)
{
	if (!json_is_object(o))
		return rs_error_set(RS_ECORRUPT, "run record: '%s' is %s, expected an object",
				    where, o ? type_name(type_of(o)) : "no JSON value");
	return get_map(out, o, T_NUM, where);
}

int rs_runrec_summary_from_json(const json_t *o, struct rs_runrec_summary **out)
{
	struct rs_runrec_summary *s;
	int err;

	if (!json_is_object(o))
		return rs_error_set(RS_ECORRUPT, "run record: summary is %s, expected an object",
				    o ? type_name(type_of(o)) : "no JSON value");
	s = calloc(1, sizeof(*s));
	if (!s)
		return oom();
	err = decode_summary(s, o);
	if (err) {
		rs_runrec_summary_free(s);
		return err;
	}
	*out = s;
	return 0;
}

/* ---- freeing ----------------------------------------------------------- */

static void free_list(char **list, size_t n)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

static void free_map(struct rs_runrec_map *m)
{
	for (size_t i = 0; m->items && i < m->n; i++) {
		free(m->items[i].name);
		free(m->items[i].value.s);
	}
	free(m->items);
}

/* Recursive: the decoder refused trees deeper than RS_RUNREC_MAX_TREE_DEPTH. */
static void free_node(struct rs_runrec_node *root)
{
	for (size_t i = 0; root->children && i < root->nchildren; i++)
		free_node(&root->children[i]);
	free(root->function);
	free(root->file);
	free(root->children);
}

void rs_runrec_summary_free(struct rs_runrec_summary *s)
{
	if (!s)
		return;
	free(s->layout);
	free(s->target);
	free_list(s->sys_path, s->nsys_path);
	for (size_t i = 0; s->functions && i < s->nfunctions; i++) {
		free(s->functions[i].function);
		free(s->functions[i].file);
		free(s->functions[i].class_name);
	}
	free(s->functions);
	for (size_t i = 0; s->files && i < s->nfiles; i++)
		free(s->files[i].file);
	free(s->files);
	free_node(&s->tree);
	free_list(s->more.files, s->more.nfiles);
	for (size_t i = 0; s->more.rows && i < s->more.nrows; i++)
		free(s->more.rows[i].function);
	free(s->more.rows);
	free(s->ran);
	free(s->calls.rows);
	free(s);
}

void rs_runrec_free(rs_runrec *rec)
{
	if (!rec)
		return;
	free(rec->id);
	free(rec->commit);
	free(rec->branch);
	free(rec->trigger);
	free(rec->recorded_at);
	free(rec->message);
	free(rec->machine.hostname);
	free(rec->machine.os);
	free(rec->machine.arch);
	free(rec->machine.cpu_model);
	free(rec->machine.runner);
	free_map(&rec->meta);
	free_map(&rec->stats);
	free_map(&rec->args);
	free_map(&rec->metrics);
	for (size_t i = 0; rec->files && i < rec->nfiles; i++) {
		free(rec->files[i].path);
		free(rec->files[i].role);
		free(rec->files[i].oid);
	}
	free(rec->files);
	free(rec->session.path);
	free(rec->session.oid);
	free(rec->phases.source);
	free(rec->phases.under);
	free_list(rec->phases.names, rec->phases.nnames);
	free_list(rec->phases.specs, rec->phases.nspecs);
	free_map(&rec->phases.totals);
	free(rec->phases.rows);
	rs_runrec_summary_free(rec->summary);
	free(rec);
}

const struct rs_runrec_value *rs_runrec_map_get(const struct rs_runrec_map *map,
						const char *name)
{
	size_t lo = 0, hi = map->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, map->items[mid].name);

		if (!c)
			return &map->items[mid].value;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
