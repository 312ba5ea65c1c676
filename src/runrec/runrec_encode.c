/*
 * Encoding run records: the struct back into run.json's object, and that
 * object into run.json's bytes. Kept apart from the decoder, which is
 * what a hostile clone reaches and should be readable alone.
 */
#include "runrec/runrec.h"
#include "runrec/runrec_json.h"
#include "results/json.h"

#include <stdlib.h>
#include <string.h>

/*
 * The builders below add to an object or array and remember a failure in
 * `bad` rather than returning at each step: json_object_set_new and
 * json_array_append_new take (and on failure free) the new value, so a
 * NULL from an earlier allocation is handled there too.
 */
static void put(int *bad, json_t *o, const char *k, json_t *v)
{
	if (!v || json_object_set_new(o, k, v) != 0)
		*bad = 1;
}

static void append(int *bad, json_t *a, json_t *v)
{
	if (!v || json_array_append_new(a, v) != 0)
		*bad = 1;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *list_json(char *const *list, size_t n)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < n; i++)
		append(&bad, a, json_string(list[i]));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *value_json(const struct rs_runrec_value *v)
{
	switch (v->kind) {
	case RS_RUNREC_INT: return json_integer(v->i);
	case RS_RUNREC_REAL: return json_real(v->d);
	case RS_RUNREC_STRING: return json_string(v->s ? v->s : "");
	}
	return NULL;
}

static json_t *map_json(const struct rs_runrec_map *m)
{
	json_t *o = json_object();
	int bad = !o;

	for (size_t i = 0; !bad && i < m->n; i++)
		put(&bad, o, m->items[i].name, value_json(&m->items[i].value));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *opt_json(const struct rs_runrec_opt *v)
{
	return v->present ? json_real(v->v) : json_null();
}

static json_t *machine_json(const struct rs_runrec_machine *m)
{
	json_t *o = json_object();
	int bad = !o;

	if (!bad) {
		put(&bad, o, "hostname", str_or_null(m->hostname));
		put(&bad, o, "os", str_or_null(m->os));
		put(&bad, o, "arch", str_or_null(m->arch));
		put(&bad, o, "cpu_model", str_or_null(m->cpu_model));
		put(&bad, o, "cpus", json_integer(m->cpus));
		put(&bad, o, "runner", str_or_null(m->runner));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *files_json(const rs_runrec *rec)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < rec->nfiles; i++) {
		const struct rs_runrec_file *f = &rec->files[i];
		json_t *o = json_object();

		append(&bad, a, o);
		if (bad)
			break;
		put(&bad, o, "path", json_string(f->path));
		put(&bad, o, "role", json_string(f->role));
		put(&bad, o, "size", json_integer(f->size));
		put(&bad, o, "lfs", json_boolean(f->lfs));
		if (f->oid)
			put(&bad, o, "oid", json_string(f->oid));
	}
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *session_json(const rs_runrec *rec)
{
	if (!rec->has_session)
		return json_null();
	return json_pack("{s:s, s:s, s:I}", "path", rec->session.path, "oid", rec->session.oid,
			 "size", (json_int_t)rec->session.size);
}

static json_t *functions_json(const struct rs_runrec_summary *s)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < s->nfunctions; i++) {
		const struct rs_runrec_function *f = &s->functions[i];
		json_t *o = json_object();

		append(&bad, a, o);
		if (bad)
			break;
		put(&bad, o, "function", json_string(f->function));
		put(&bad, o, "file", json_string(f->file));
		put(&bad, o, "line", json_integer(f->line));
		if (f->class_name)
			put(&bad, o, "class", json_string(f->class_name));
		put(&bad, o, "self", json_real(f->self));
		put(&bad, o, "total", json_real(f->total));
		put(&bad, o, "self_samples", json_integer(f->self_samples));
		put(&bad, o, "total_samples", json_integer(f->total_samples));
	}
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static json_t *file_times_json(const struct rs_runrec_summary *s)
{
	json_t *a = json_array();
	int bad = !a;

	for (size_t i = 0; !bad && i < s->nfiles; i++)
		append(&bad, a, json_pack("{s:s, s:f, s:f}", "file", s->files[i].file, "self",
					  s->files[i].self, "total", s->files[i].total));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* Recursion bounded as the decoder bounds it (and as the summary builds it). */
static json_t *node_json(const struct rs_runrec_node *n)
{
	json_t *kids = json_array();
	json_t *o;
	int bad = !kids;

	for (size_t i = 0; !bad && i < n->nchildren; i++)
		append(&bad, kids, node_json(&n->children[i]));
	if (bad) {
		json_decref(kids);
		return NULL;
	}
	o = json_pack("{s:s, s:s, s:I, s:f, s:f, s:o}", "function", n->function ? n->function : "",
		      "file", n->file ? n->file : "", "line", (json_int_t)n->line, "total",
		      n->total, "self", n->self, "children", kids);
	return o;
}

static json_t *more_json(const struct rs_runrec_more *m)
{
	json_t *rows = json_array();
	int bad = !rows;

	for (size_t i = 0; !bad && i < m->nrows; i++) {
		const struct rs_runrec_more_row *r = &m->rows[i];

		append(&bad, rows, json_pack("[sIIII]", r->function, (json_int_t)r->file,
					     (json_int_t)r->line, (json_int_t)r->self_us,
					     (json_int_t)r->total_us));
	}
	if (bad) {
		json_decref(rows);
		return NULL;
	}
	return json_pack("{s:f, s:o, s:o}", "floor", m->floor, "files",
			 list_json(m->files, m->nfiles), "rows", rows);
}

static json_t *calls_json(const struct rs_runrec_calls *c)
{
	json_t *rows = json_array();
	int bad = !rows;

	for (size_t i = 0; !bad && i < c->nrows; i++) {
		const struct rs_runrec_call *r = &c->rows[i];

		append(&bad, rows, json_pack("[IIII]", (json_int_t)r->caller, (json_int_t)r->callee,
					     (json_int_t)r->total_us, (json_int_t)r->self_us));
	}
	if (bad) {
		json_decref(rows);
		return NULL;
	}
	return json_pack("{s:I, s:f, s:o}", "version", (json_int_t)c->version, "floor", c->floor,
			 "rows", rows);
}

static json_t *summary_json(const struct rs_runrec_summary *s)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	put(&bad, o, "layout", json_string(s->layout));
	put(&bad, o, "start_time", opt_json(&s->start_time));
	put(&bad, o, "duration", opt_json(&s->duration));
	put(&bad, o, "cpu_time", opt_json(&s->cpu_time));
	put(&bad, o, "min_interval", opt_json(&s->min_interval));
	put(&bad, o, "max_interval", opt_json(&s->max_interval));
	put(&bad, o, "sample_count", s->sample_count.present
		     ? json_integer(s->sample_count.i) : json_null());
	put(&bad, o, "target", str_or_null(s->target));
	put(&bad, o, "samples", json_integer(s->samples));
	put(&bad, o, "sampled_time", json_real(s->sampled_time));
	put(&bad, o, "distinct_frames", json_integer(s->distinct_frames));
	put(&bad, o, "distinct_functions", json_integer(s->distinct_functions));
	put(&bad, o, "sys_path", list_json(s->sys_path, s->nsys_path));
	put(&bad, o, "functions", functions_json(s));
	put(&bad, o, "files", file_times_json(s));
	put(&bad, o, "tree", node_json(&s->tree));
	if (s->tree_truncated)
		put(&bad, o, "tree_truncated", json_true());
	if (s->has_more)
		put(&bad, o, "more_functions", more_json(&s->more));
	if (s->ran)
		put(&bad, o, "ran", json_string(s->ran));
	if (s->has_calls)
		put(&bad, o, "calls", calls_json(&s->calls));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *timeline_json(const struct rs_runrec_phases *p)
{
	size_t width = p->nnames + 2;
	json_t *rows = json_array();
	int bad = !rows;

	for (size_t i = 0; !bad && i < p->nrows; i++) {
		json_t *r = json_array();

		append(&bad, rows, r);
		for (size_t j = 0; !bad && j < width; j++)
			append(&bad, r, json_real(p->rows[i * width + j]));
	}
	if (bad) {
		json_decref(rows);
		return NULL;
	}
	return json_pack("{s:o, s:f}", "rows", rows, "slice", p->slice);
}

static json_t *phases_json(const struct rs_runrec_phases *p)
{
	json_t *o = json_object();
	int bad = !o;

	if (bad)
		return NULL;
	put(&bad, o, "source", json_string(p->source ? p->source : ""));
	if (p->under)
		put(&bad, o, "under", json_string(p->under));
	put(&bad, o, "names", list_json(p->names, p->nnames));
	if (p->has_specs)
		put(&bad, o, "specs", list_json(p->specs, p->nspecs));
	put(&bad, o, "totals", map_json(&p->totals));
	put(&bad, o, "other", json_real(p->other));
	put(&bad, o, "sampled", json_real(p->sampled));
	if (p->paths_truncated)
		put(&bad, o, "paths_truncated", json_true());
	put(&bad, o, "timeline", timeline_json(p));
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Whether every string of `list` is there. */
static int all_there(char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!list[i])
			return 0;
	return 1;
}

/*
 * The first required string `rec` lacks, as its key, or NULL: the
 * encoder writes only what the decoder reads back (the tree's names fall
 * back to "", as the root's file is).
 */
static const char *first_missing(const rs_runrec *rec)
{
	const struct rs_runrec_summary *s = rec->summary;
	const struct rs_runrec_phases *p = &rec->phases;

	if (!rec->id || !rec->commit || !rec->branch || !rec->trigger || !rec->recorded_at)
		return "id, commit, branch, trigger or recorded_at";
	for (size_t i = 0; i < rec->nfiles; i++)
		if (!rec->files[i].path || !rec->files[i].role || (rec->files[i].lfs && !rec->files[i].oid))
			return "files[].path, role or oid";
	if (rec->has_session && (!rec->session.path || !rec->session.oid))
		return "session.path or oid";
	if (rec->has_phases && (!p->source || !all_there(p->names, p->nnames) ||
				(p->has_specs && !all_there(p->specs, p->nspecs))))
		return "phases.source, names or specs";
	if (!s)
		return NULL;
	if (!s->layout || !all_there(s->sys_path, s->nsys_path))
		return "summary.layout or sys_path";
	for (size_t i = 0; i < s->nfunctions; i++)
		if (!s->functions[i].function || !s->functions[i].file)
			return "summary.functions[].function or file";
	for (size_t i = 0; i < s->nfiles; i++)
		if (!s->files[i].file)
			return "summary.files[].file";
	if (s->has_more && !all_there(s->more.files, s->more.nfiles))
		return "summary.more_functions.files";
	for (size_t i = 0; s->has_more && i < s->more.nrows; i++)
		if (!s->more.rows[i].function)
			return "summary.more_functions.rows[][0]";
	return NULL;
}

int rs_runrec_to_json(const rs_runrec *rec, json_t **out)
{
	const char *missing = first_missing(rec);
	json_t *o;
	int bad;

	if (missing)
		return rs_error_set(RS_EUSAGE, "incomplete run record: no %s", missing);
	o = json_object();
	bad = !o;
	if (bad)
		return rs_error_set(RS_EGENERIC, "out of memory");
	put(&bad, o, "format", json_integer(rec->format ? rec->format : RS_RUNREC_FORMAT));
	put(&bad, o, "id", json_string(rec->id));
	put(&bad, o, "commit", json_string(rec->commit));
	put(&bad, o, "branch", json_string(rec->branch));
	put(&bad, o, "trigger", json_string(rec->trigger));
	put(&bad, o, "recorded_at", json_string(rec->recorded_at));
	put(&bad, o, "message", str_or_null(rec->message));
	put(&bad, o, "machine", machine_json(&rec->machine));
	put(&bad, o, "meta", map_json(&rec->meta));
	put(&bad, o, "stats", map_json(&rec->stats));
	put(&bad, o, "args", map_json(&rec->args));
	put(&bad, o, "metrics", map_json(&rec->metrics));
	put(&bad, o, "files", files_json(rec));
	put(&bad, o, "session", session_json(rec));
	if (rec->has_phases)
		put(&bad, o, "phases", phases_json(&rec->phases));
	put(&bad, o, "summary", rec->summary ? summary_json(rec->summary) : json_null());
	if (bad) {
		json_decref(o);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	*out = o;
	return 0;
}

/* ---- the bytes --------------------------------------------------------- */

/* Compact JSON, keys sorted; whole or an error (results/json.h says why). */
static int dump_compact(struct rs_buf *out, const json_t *v)
{
	return rs_json_dump(out, v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
			    JSON_REAL_PRECISION(15));
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * run.json's layout: fully indented JSON is twice the size of compact
 * JSON (the call tree is deep), and every clone carries every run.json;
 * fully compact JSON is one unreadable line. So: one line per key at the
 * top level and inside "summary", one line per entry of the summary's
 * "functions" and "files" lists, everything deeper compact. Keys sorted.
 */
static int layered(struct rs_buf *out, const json_t *o, int depth)
{
	const char **names;
	const char *k;
	json_t *v;
	size_t n = json_object_size(o), i = 0;
	int err = 0;

	names = calloc(n ? n : 1, sizeof(*names));
	if (!names)
		return rs_error_set(RS_EGENERIC, "out of memory");
	json_object_foreach((json_t *)o, k, v)
		names[i++] = k;
	qsort(names, n, sizeof(*names), cmp_key);
	err = rs_buf_puts(out, "{");
	for (i = 0; i < n && !err; i++) {
		json_t *key = json_string(names[i]);

		v = json_object_get(o, names[i]);
		err = rs_buf_printf(out, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
		if (!err)
			err = dump_compact(out, key); /* key NULL: out of memory */
		json_decref(key);
		if (!err)
			err = rs_buf_puts(out, ": ");
		if (err)
			break;
		if (depth == 0 && strcmp(names[i], "summary") == 0 && json_is_object(v)) {
			err = layered(out, v, depth + 1);
		} else if (depth == 1 && json_is_array(v) && json_array_size(v) &&
			   (strcmp(names[i], "functions") == 0 || strcmp(names[i], "files") == 0)) {
			size_t j;
			json_t *e;

			err = rs_buf_puts(out, "[");
			json_array_foreach(v, j, e) {
				if (!err)
					err = rs_buf_printf(out, "%s\n%*s", j ? "," : "",
							    2 * (depth + 2), "");
				if (!err)
					err = dump_compact(out, e);
			}
			if (!err)
				err = rs_buf_printf(out, "\n%*s]", 2 * (depth + 1), "");
		} else {
			err = dump_compact(out, v);
		}
	}
	if (!err)
		err = rs_buf_printf(out, "\n%*s}", 2 * depth, "");
	free(names);
	return err;
}

int rs_runrec_encode(struct rs_buf *out, const rs_runrec *rec)
{
	json_t *o = NULL;
	int err;

	err = rs_runrec_to_json(rec, &o);
	if (!err)
		err = layered(out, o, 0);
	if (!err)
		err = rs_buf_putc(out, '\n');
	json_decref(o);
	return err;
}
