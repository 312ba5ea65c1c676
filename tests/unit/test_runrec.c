/*
 * Unit tests of src/runrec: the typed run record (run.json).
 *
 * Two committed records written by `results add` itself: the oldest
 * format (tests/data/run_format1_oldest.json, written by the first
 * `results add`, commit 25d921d: indented, 17 digits, no phases, no
 * calls table) and today's (run_format1_current.json, a run of
 * tiny_pyinstrument_4.6.2.pyisession). Today's must come back byte for
 * byte through decode and encode; every key the table calls optional is
 * taken out in turn and must still decode; required keys renamed, keys
 * of the wrong type, a newer format, bad indexes, huge and deep input
 * must fail with the key named. What the builder (runrec_build.c) makes,
 * neutral or filled, encodes and decodes strictly back to an equal record.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "results/buf.h"
#include "results/error.h"
#include "runrec/runrec.h"
#include "util/fs.h"

static void read_data(struct rs_buf *out, const char *name)
{
	const char *dir = getenv("RS_TEST_DATA");
	struct rs_buf path = RS_BUF_INIT;

	assert_non_null(dir);
	assert_int_equal(rs_buf_printf(&path, "%s/%s", dir, name), 0);
	assert_int_equal(rs_fs_read_file(out, path.ptr, 1u << 20), 0);
	rs_buf_release(&path);
}

/* Decode `o` (dumped compactly): the code, and the record when 0. */
static int decode_json(const json_t *o, rs_runrec **rec)
{
	char *text = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
	int err;

	assert_non_null(text);
	*rec = NULL;
	err = rs_runrec_decode(text, strlen(text), rec);
	free(text);
	return err;
}

static json_t *load_current(void)
{
	struct rs_buf text = RS_BUF_INIT;
	json_t *o;

	read_data(&text, "run_format1_current.json");
	o = json_loadb(text.ptr, text.len, 0, NULL);
	assert_non_null(o);
	rs_buf_release(&text);
	return o;
}

/*
 * The member at a dotted path with [] for "every element" ("summary.
 * functions[].class"): `fn` is called on each object that holds it, with
 * the last component.
 */
static void each_holder(json_t *o, const char *path, void (*fn)(json_t *, const char *, void *),
			void *ctx)
{
	char head[128];
	const char *dot = strchr(path, '.');
	size_t n = dot ? (size_t)(dot - path) : strlen(path);
	json_t *v;

	if (!dot) {
		fn(o, path, ctx);
		return;
	}
	assert_true(n < sizeof(head));
	memcpy(head, path, n);
	head[n] = '\0';
	if (n > 2 && strcmp(head + n - 2, "[]") == 0) {
		size_t i;
		json_t *e;

		head[n - 2] = '\0';
		v = json_object_get(o, head);
		json_array_foreach(v, i, e)
			each_holder(e, dot + 1, fn, ctx);
		return;
	}
	v = json_object_get(o, head);
	if (json_is_object(v))
		each_holder(v, dot + 1, fn, ctx);
}

static void del_key(json_t *o, const char *key, void *ctx)
{
	int *found = ctx;

	if (json_object_del(o, key) == 0)
		(*found)++;
}

static void rename_key(json_t *o, const char *key, void *ctx)
{
	json_t *v = json_object_get(o, key);
	int *found = ctx;

	assert_non_null(v);
	json_object_set(o, "renamed", v);
	json_object_del(o, key);
	(*found)++;
}

static void set_key(json_t *o, const char *key, void *ctx)
{
	json_object_set(o, key, ctx);
}

/* Today's record with every optional key present at least once. */
static json_t *load_complete(void)
{
	json_t *o = load_current();
	json_t *ph = json_object_get(o, "phases"), *s = json_object_get(o, "summary");

	json_object_set_new(ph, "specs", json_pack("[s]", "Model.step"));
	json_object_set_new(ph, "paths_truncated", json_true());
	json_object_set_new(s, "tree_truncated", json_true());
	json_object_set_new(json_array_get(json_object_get(s, "functions"), 0), "class",
			    json_string("Model"));
	return o;
}

/* ---- the committed records -------------------------------------------- */

static void test_current_round_trip_is_byte_exact(void **state)
{
	struct rs_buf text = RS_BUF_INIT, back = RS_BUF_INIT;
	rs_runrec *rec = NULL;

	(void)state;
	read_data(&text, "run_format1_current.json");
	assert_int_equal(rs_runrec_decode(text.ptr, text.len, &rec), 0);
	assert_int_equal(rec->format, 1);
	assert_string_equal(rec->id, "20261201-035500-manual-1234bbb");
	assert_string_equal(rec->commit, "1234bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	assert_null(rec->message);
	assert_null(rec->machine.runner);
	assert_int_equal(rec->machine.cpus > 0, 1);
	assert_int_equal(rec->nfiles, 1);
	assert_true(rec->files[0].lfs);
	assert_string_equal(rec->files[0].oid, rec->session.oid);
	assert_true(rec->has_session);
	assert_true(rec->has_phases);
	assert_string_equal(rec->phases.source, "default");
	assert_non_null(rec->summary);
	assert_string_equal(rec->summary->layout, "4");
	assert_true(rec->summary->has_calls);
	assert_true(rec->summary->has_more);
	assert_non_null(rec->summary->ran);
	assert_true(rec->summary->nfunctions > 0);
	assert_true(rec->summary->functions[0].self >= rec->summary->functions[1].self);
	assert_string_equal(rec->summary->tree.function, "[root]");
	/* the metrics carry the session's figures */
	assert_non_null(rs_runrec_map_get(&rec->metrics, "duration"));
	assert_null(rs_runrec_map_get(&rec->metrics, "no such metric"));
	assert_int_equal(rs_runrec_map_get(&rec->metrics, "samples")->kind, RS_RUNREC_INT);
	assert_int_equal(rs_runrec_encode(&back, rec), 0);
	assert_int_equal(back.len, text.len);
	assert_memory_equal(back.ptr, text.ptr, text.len);
	rs_runrec_free(rec);
	rs_buf_release(&text);
	rs_buf_release(&back);
}

static void test_oldest_format_still_decodes(void **state)
{
	struct rs_buf text = RS_BUF_INIT, once = RS_BUF_INIT, twice = RS_BUF_INIT;
	rs_runrec *rec = NULL, *again = NULL;
	const struct rs_runrec_value *v;

	(void)state;
	read_data(&text, "run_format1_oldest.json");
	assert_int_equal(rs_runrec_decode(text.ptr, text.len, &rec), 0);
	assert_string_equal(rec->id, "20251130-093012-ci-0123456");
	assert_string_equal(rec->trigger, "ci");
	assert_string_equal(rec->message, "oldest format");
	assert_false(rec->has_phases);
	assert_non_null(rec->summary);
	assert_false(rec->summary->has_calls);
	assert_false(rec->summary->has_more);
	assert_null(rec->summary->ran);
	assert_int_equal(rec->summary->samples, 54);
	v = rs_runrec_map_get(&rec->stats, "population");
	assert_non_null(v);
	assert_int_equal(v->kind, RS_RUNREC_INT);
	assert_int_equal(v->i, 1000);
	v = rs_runrec_map_get(&rec->meta, "note");
	assert_string_equal(v->s, "old");
	/* today's encoder writes it in today's layout, stably */
	assert_int_equal(rs_runrec_encode(&once, rec), 0);
	assert_int_equal(rs_runrec_decode(once.ptr, once.len, &again), 0);
	assert_int_equal(rs_runrec_encode(&twice, again), 0);
	assert_int_equal(once.len, twice.len);
	assert_memory_equal(once.ptr, twice.ptr, once.len);
	rs_runrec_free(rec);
	rs_runrec_free(again);
	rs_buf_release(&text);
	rs_buf_release(&once);
	rs_buf_release(&twice);
}

/* ---- optional and required keys --------------------------------------- */

static void test_each_optional_key_may_be_absent(void **state)
{
	size_t n;
	const char *const *opt = rs_runrec_optional_keys(&n);

	(void)state;
	assert_true(n >= 10);
	for (size_t i = 0; i < n; i++) {
		json_t *o = load_complete();
		rs_runrec *rec;
		int found = 0;

		if (strcmp(opt[i], "files[].oid") == 0) /* only a file outside LFS may lack it */
			json_object_set_new(json_array_get(json_object_get(o, "files"), 0), "lfs",
					    json_false());
		each_holder(o, opt[i], del_key, &found);
		if (!found)
			fail_msg("optional key %s is not in the complete record", opt[i]);
		if (decode_json(o, &rec))
			fail_msg("without %s: %s", opt[i], rs_error_message());
		/* the presence flag says it is gone */
		if (strcmp(opt[i], "phases") == 0)
			assert_false(rec->has_phases);
		else if (strcmp(opt[i], "phases.specs") == 0)
			assert_false(rec->phases.has_specs);
		else if (strcmp(opt[i], "phases.under") == 0)
			assert_null(rec->phases.under);
		else if (strcmp(opt[i], "phases.paths_truncated") == 0)
			assert_false(rec->phases.paths_truncated);
		else if (strcmp(opt[i], "summary.calls") == 0)
			assert_false(rec->summary->has_calls);
		else if (strcmp(opt[i], "summary.more_functions") == 0)
			assert_false(rec->summary->has_more);
		else if (strcmp(opt[i], "summary.ran") == 0)
			assert_null(rec->summary->ran);
		else if (strcmp(opt[i], "summary.tree_truncated") == 0)
			assert_false(rec->summary->tree_truncated);
		else if (strcmp(opt[i], "summary.functions[].class") == 0)
			assert_null(rec->summary->functions[0].class_name);
		else if (strcmp(opt[i], "files[].oid") != 0)
			fail_msg("no presence check for optional key %s", opt[i]);
		rs_runrec_free(rec);
		json_decref(o);
	}
}

/* Every optional key present: each flag says so. */
static void test_complete_record_has_every_flag(void **state)
{
	json_t *o = load_complete();
	rs_runrec *rec;

	(void)state;
	assert_int_equal(decode_json(o, &rec), 0);
	assert_true(rec->phases.has_specs);
	assert_string_equal(rec->phases.specs[0], "Model.step");
	assert_true(rec->phases.paths_truncated);
	assert_true(rec->summary->tree_truncated);
	assert_string_equal(rec->summary->functions[0].class_name, "Model");
	rs_runrec_free(rec);
	json_decref(o);
}

static void test_renamed_required_key_fails_naming_it(void **state)
{
	static const struct {
		const char *path, *named;
	} cases[] = {
		{ "commit", "'commit'" },
		{ "format", "'format'" },
		{ "message", "'message'" },
		{ "machine.cpus", "'cpus'" },
		{ "files[].size", "'size'" },
		{ "session.oid", "'oid'" },
		{ "summary.samples", "'samples'" },
		{ "summary.functions[].self", "'self'" },
		{ "summary.functions[].total_samples", "'total_samples'" },
		{ "summary.files[].total", "'total'" },
		{ "summary.tree.children", "'children'" },
		{ "summary.calls.rows", "'rows'" },
		{ "summary.more_functions.floor", "'floor'" },
		{ "phases.totals", "'totals'" },
		{ "phases.timeline.slice", "'slice'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = load_current();
		rs_runrec *rec = NULL;
		int found = 0;

		each_holder(o, cases[i].path, rename_key, &found);
		assert_true(found > 0);
		assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
		assert_null(rec);
		if (!strstr(rs_error_message(), cases[i].named))
			fail_msg("%s renamed: '%s' does not name it", cases[i].path,
				 rs_error_message());
		json_decref(o);
	}
	/* the place of an element is in the message */
	{
		json_t *o = load_current();
		json_t *f = json_array_get(json_object_get(json_object_get(o, "summary"),
							   "functions"), 1);
		rs_runrec *rec = NULL;

		json_object_del(f, "line");
		assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
		assert_non_null(strstr(rs_error_message(), "summary.functions[1]"));
		json_decref(o);
	}
}

static void test_wrong_types_fail_naming_the_key(void **state)
{
	static const struct {
		const char *path, *value, *named;
	} cases[] = {
		{ "commit", "5", "'commit'" },
		{ "format", "1.5", "'format'" },
		{ "id", "null", "'id'" },
		{ "machine.hostname", "[]", "'machine.hostname'" },
		{ "machine.cpus", "\"2\"", "'machine.cpus'" },
		{ "meta.k", "3", "'meta.k'" },
		{ "metrics.duration", "\"fast\"", "'metrics.duration'" },
		{ "stats.x", "true", "'stats.x'" },
		{ "files[].lfs", "\"yes\"", "'files[0].lfs'" },
		{ "session", "\"s\"", "'session'" },
		{ "summary", "[]", "'summary'" },
		{ "summary.layout", "4", "'summary.layout'" },
		{ "summary.sample_count", "1.5", "'summary.sample_count'" },
		{ "summary.functions[].line", "\"9\"", "'summary.functions[0].line'" },
		{ "summary.tree.total", "\"t\"", "'summary.tree.total'" },
		{ "summary.ran", "0", "'summary.ran'" },
		{ "phases.names", "{}", "'phases.names'" },
		{ "phases.paths_truncated", "1", "'phases.paths_truncated'" },
		{ "phases", "true", "'phases'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = load_current();
		json_t *v = json_loads(cases[i].value, JSON_DECODE_ANY, NULL);
		rs_runrec *rec = NULL;

		assert_non_null(v);
		each_holder(o, cases[i].path, set_key, v);
		assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
		if (!strstr(rs_error_message(), cases[i].named))
			fail_msg("%s = %s: '%s' does not name it", cases[i].path, cases[i].value,
				 rs_error_message());
		json_decref(v);
		json_decref(o);
	}
}

static void test_newer_format_is_refused(void **state)
{
	json_t *o = load_current();
	rs_runrec *rec = NULL;

	(void)state;
	json_object_set_new(o, "format", json_integer(RS_RUNREC_FORMAT + 1));
	assert_int_equal(decode_json(o, &rec), RS_ENEWER);
	assert_null(rec);
	assert_non_null(strstr(rs_error_message(), "format 2"));
	/* even when it renamed everything else */
	json_object_del(o, "commit");
	assert_int_equal(decode_json(o, &rec), RS_ENEWER);
	json_object_set_new(o, "format", json_integer(0));
	assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
	json_decref(o);
}

/* ---- indexes, shapes, bounds ------------------------------------------ */

static void test_indexes_and_rows_are_checked(void **state)
{
	struct {
		const char *what, *named;
	} cases[] = {
		{ "calls caller", "summary.calls.rows[0] names a function" },
		{ "more file", "summary.more_functions.rows[0] names file" },
		{ "timeline width", "phases.timeline.rows[0] is not an array of" },
		{ "calls version", "summary.calls has version 2" },
		{ "lfs without oid", "files[0] is in LFS but has no 'oid'" },
		{ "negative size", "files[0].size is negative" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *o = load_current();
		json_t *s = json_object_get(o, "summary");
		json_t *calls = json_object_get(s, "calls"), *more = json_object_get(s, "more_functions");
		json_t *file0 = json_array_get(json_object_get(o, "files"), 0);
		rs_runrec *rec = NULL;
		int want = RS_ECORRUPT;

		switch (i) {
		case 0:
			json_array_set_new(json_array_get(json_object_get(calls, "rows"), 0), 0,
					   json_integer(100000));
			break;
		case 1:
			json_array_insert_new(json_object_get(more, "rows"), 0,
					      json_pack("[siiii]", "f", -1, 1, 10, 10));
			break;
		case 2:
			json_array_append_new(json_array_get(json_object_get(json_object_get(
				json_object_get(o, "phases"), "timeline"), "rows"), 0), json_real(1));
			break;
		case 3:
			json_object_set_new(calls, "version", json_integer(2));
			want = RS_ENEWER;
			break;
		case 4:
			json_object_del(file0, "oid");
			break;
		default:
			json_object_set_new(file0, "size", json_integer(-5));
			break;
		}
		assert_int_equal(decode_json(o, &rec), want);
		if (!strstr(rs_error_message(), cases[i].named))
			fail_msg("%s: '%s'", cases[i].what, rs_error_message());
		json_decref(o);
	}
}

static void test_not_a_record(void **state)
{
	static const char *texts[] = { "", "[]", "\"run\"", "{\"format\":1", "{} trailing",
				       "{\"format\":1,\"format\":1}", "null" };
	rs_runrec *rec = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		assert_int_equal(rs_runrec_decode(texts[i], strlen(texts[i]), &rec), RS_ECORRUPT);
		assert_null(rec);
	}
	/* a string with a NUL byte in it (\u0000) */
	{
		json_t *o = load_current();

		json_object_set_new(o, "branch", json_stringn("ma\0in", 5));
		assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
		assert_null(rec);
		json_decref(o);
	}
}

static void test_huge_and_deep_input_is_bounded(void **state)
{
	rs_runrec *rec = NULL;
	json_t *o = load_current(), *node;
	size_t n = 200000;
	char *deep = malloc(2 * n + 1);

	(void)state;
	/* the length is refused before a byte is read */
	assert_int_equal(rs_runrec_decode("{}", (size_t)RS_RUNREC_MAX_BYTES + 1, &rec), RS_ETOOBIG);
	/* nesting far beyond any record: refused by the parser, no crash */
	assert_non_null(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	assert_int_equal(rs_runrec_decode(deep, 2 * n, &rec), RS_ECORRUPT);
	free(deep);
	/* a call tree deeper than the cap, within what JSON allows */
	node = json_object_get(json_object_get(o, "summary"), "tree");
	for (unsigned d = 0; d <= RS_RUNREC_MAX_TREE_DEPTH + 1; d++) {
		json_t *kid = json_pack("{s:s, s:s, s:i, s:f, s:f, s:[]}", "function", "f", "file",
					"f.py", "line", 1, "total", 1.0, "self", 0.0, "children");

		json_array_clear(json_object_get(node, "children"));
		json_array_append_new(json_object_get(node, "children"), kid);
		node = kid;
	}
	assert_int_equal(decode_json(o, &rec), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "summary.tree is deeper than"));
	json_decref(o);
}

static void test_encode_refuses_an_incomplete_record(void **state)
{
	rs_runrec rec;
	struct rs_buf out = RS_BUF_INIT;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	rec.id = "20261201-000000-ci-abc1234";
	assert_int_equal(rs_runrec_encode(&out, &rec), RS_EUSAGE);
	assert_int_equal(out.len, 0);
	/* a decoded record that lost a required string is refused, naming it */
	{
		struct rs_buf text = RS_BUF_INIT;
		rs_runrec *r = NULL;
		char *layout;

		read_data(&text, "run_format1_current.json");
		assert_int_equal(rs_runrec_decode(text.ptr, text.len, &r), 0);
		layout = r->summary->layout;
		r->summary->layout = NULL;
		assert_int_equal(rs_runrec_encode(&out, r), RS_EUSAGE);
		assert_non_null(strstr(rs_error_message(), "summary.layout"));
		assert_int_equal(out.len, 0);
		r->summary->layout = layout;
		assert_int_equal(rs_runrec_encode(&out, r), 0);
		assert_int_equal(out.len, text.len);
		rs_runrec_free(r);
		rs_buf_release(&text);
	}
	rs_buf_release(&out);
}

/* ---- the builder (runrec_build.c) ------------------------------------------
 *
 * What the builder makes must be a record of the format: encoded, it
 * decodes strictly back to an equal record. same_record compares member
 * by member (not through the encoder, so that a member the encoder
 * dropped would show).
 */

static void same_str(const char *a, const char *b, const char *what)
{
	if (!a || !b) {
		if (a != b)
			fail_msg("%s: '%s' against '%s'", what, a ? a : "(null)", b ? b : "(null)");
		return;
	}
	if (strcmp(a, b) != 0)
		fail_msg("%s: '%s' against '%s'", what, a, b);
}

static void same_map(const struct rs_runrec_map *a, const struct rs_runrec_map *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct rs_runrec_value *x = &a->items[i].value, *y = &b->items[i].value;

		same_str(a->items[i].name, b->items[i].name, "map name");
		assert_int_equal(x->kind, y->kind);
		assert_true(x->i == y->i);
		assert_true(x->d == y->d);
		same_str(x->s, y->s, a->items[i].name);
	}
}

static void same_opt(const struct rs_runrec_opt *a, const struct rs_runrec_opt *b)
{
	assert_int_equal(a->present, b->present);
	assert_true(a->v == b->v);
	assert_true(a->i == b->i);
}

static void same_node(const struct rs_runrec_node *a, const struct rs_runrec_node *b)
{
	same_str(a->function, b->function, "node function");
	same_str(a->file, b->file, "node file");
	assert_true(a->line == b->line);
	assert_true(a->total == b->total);
	assert_true(a->self == b->self);
	assert_int_equal(a->nchildren, b->nchildren);
	for (size_t i = 0; i < a->nchildren; i++)
		same_node(&a->children[i], &b->children[i]);
}

static void same_summary(const struct rs_runrec_summary *a, const struct rs_runrec_summary *b)
{
	same_str(a->layout, b->layout, "layout");
	same_opt(&a->start_time, &b->start_time);
	same_opt(&a->duration, &b->duration);
	same_opt(&a->cpu_time, &b->cpu_time);
	same_opt(&a->min_interval, &b->min_interval);
	same_opt(&a->max_interval, &b->max_interval);
	same_opt(&a->sample_count, &b->sample_count);
	same_str(a->target, b->target, "target");
	assert_true(a->samples == b->samples);
	assert_true(a->sampled_time == b->sampled_time);
	assert_true(a->distinct_frames == b->distinct_frames);
	assert_true(a->distinct_functions == b->distinct_functions);
	assert_int_equal(a->nsys_path, b->nsys_path);
	assert_int_equal(a->nfunctions, b->nfunctions);
	for (size_t i = 0; i < a->nfunctions; i++) {
		const struct rs_runrec_function *x = &a->functions[i], *y = &b->functions[i];

		same_str(x->function, y->function, "function");
		same_str(x->file, y->file, "function file");
		same_str(x->class_name, y->class_name, "class");
		assert_true(x->line == y->line);
		assert_true(x->self == y->self);
		assert_true(x->total == y->total);
		assert_true(x->self_samples == y->self_samples);
		assert_true(x->total_samples == y->total_samples);
	}
	assert_int_equal(a->nfiles, b->nfiles);
	same_node(&a->tree, &b->tree);
	assert_int_equal(a->tree_truncated, b->tree_truncated);
	assert_int_equal(a->has_more, b->has_more);
	assert_true(a->more.floor == b->more.floor);
	assert_int_equal(a->more.nfiles, b->more.nfiles);
	for (size_t i = 0; i < a->more.nfiles; i++)
		same_str(a->more.files[i], b->more.files[i], "more_functions file");
	assert_int_equal(a->more.nrows, b->more.nrows);
	for (size_t i = 0; i < a->more.nrows; i++) {
		const struct rs_runrec_more_row *x = &a->more.rows[i], *y = &b->more.rows[i];

		same_str(x->function, y->function, "more_functions row");
		assert_int_equal(x->file, y->file);
		assert_true(x->line == y->line);
		assert_true(x->self_us == y->self_us);
		assert_true(x->total_us == y->total_us);
	}
	same_str(a->ran, b->ran, "ran");
	assert_int_equal(a->has_calls, b->has_calls);
}

static void same_record(const rs_runrec *a, const rs_runrec *b)
{
	assert_true(a->format == b->format);
	same_str(a->id, b->id, "id");
	same_str(a->commit, b->commit, "commit");
	same_str(a->branch, b->branch, "branch");
	same_str(a->trigger, b->trigger, "trigger");
	same_str(a->recorded_at, b->recorded_at, "recorded_at");
	same_str(a->message, b->message, "message");
	same_str(a->machine.hostname, b->machine.hostname, "hostname");
	same_str(a->machine.os, b->machine.os, "os");
	same_str(a->machine.arch, b->machine.arch, "arch");
	same_str(a->machine.cpu_model, b->machine.cpu_model, "cpu_model");
	assert_true(a->machine.cpus == b->machine.cpus);
	same_str(a->machine.runner, b->machine.runner, "runner");
	same_map(&a->meta, &b->meta);
	same_map(&a->stats, &b->stats);
	same_map(&a->args, &b->args);
	same_map(&a->metrics, &b->metrics);
	assert_int_equal(a->nfiles, b->nfiles);
	assert_int_equal(a->has_session, b->has_session);
	same_str(a->session.path, b->session.path, "session.path");
	same_str(a->session.oid, b->session.oid, "session.oid");
	assert_true(a->session.size == b->session.size);
	assert_int_equal(a->has_phases, b->has_phases);
	assert_int_equal(!a->summary, !b->summary);
	if (a->summary)
		same_summary(a->summary, b->summary);
}

/* `rec` encoded, then decoded strictly: the new record (the caller's). */
static rs_runrec *through_run_json(const rs_runrec *rec)
{
	struct rs_buf text = RS_BUF_INIT, again = RS_BUF_INIT;
	rs_runrec *back = NULL;

	assert_int_equal(rs_runrec_encode(&text, rec), 0);
	if (rs_runrec_decode(text.ptr, text.len, &back) != 0)
		fail_msg("a built record does not decode: %s\n%s", rs_error_message(), text.ptr);
	/* and the decoded one encodes to the same bytes */
	assert_int_equal(rs_runrec_encode(&again, back), 0);
	assert_string_equal(again.ptr, text.ptr);
	rs_buf_release(&again);
	rs_buf_release(&text);
	return back;
}

static void test_builder_neutral_record_round_trips(void **state)
{
	rs_runrec *rec = NULL, *back;
	struct rs_runrec_summary *s = NULL;

	(void)state;
	assert_int_equal(rs_runrec_new(&rec), 0);
	assert_int_equal(rec->format, RS_RUNREC_FORMAT);
	assert_string_equal(rec->id, "");
	assert_null(rec->message);
	assert_null(rec->summary);
	back = through_run_json(rec);
	same_record(rec, back);
	rs_runrec_free(back);
	/* with a neutral summary */
	assert_int_equal(rs_runrec_summary_new(&s), 0);
	rec->summary = s;
	assert_string_equal(s->layout, "5");
	assert_string_equal(s->tree.function, "[root]");
	assert_false(s->duration.present);
	assert_false(s->has_more);
	back = through_run_json(rec);
	same_record(rec, back);
	rs_runrec_free(back);
	rs_runrec_free(rec);
}

static void set(struct rs_runrec_map *m, const char *name, enum rs_runrec_kind kind, double d,
		const char *str)
{
	struct rs_runrec_value v = { .kind = kind, .i = (int64_t)d, .d = d, .s = (char *)str };

	assert_int_equal(rs_runrec_map_set(m, name, &v), 0);
}

static void test_builder_full_record_round_trips(void **state)
{
	struct rs_runrec_function fns[] = {
		{ "main", "run.py", 1, NULL, 0.25, 2.5, 250, 2500 },
		{ "step", "sim.py", 40, "Model", 1.5, 2.0, 1500, 2000 },
	};
	rs_runrec *rec = NULL, *back;
	struct rs_runrec_summary *s = NULL;
	struct rs_runrec_node *main_node = NULL, *step = NULL;
	const struct rs_runrec_value *v;

	(void)state;
	assert_int_equal(rs_runrec_new(&rec), 0);
	assert_int_equal(rs_runrec_set_string(&rec->id, "20261201-093012-ci-abc1234"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->commit, "abc1234"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->branch, "main"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->trigger, "ci"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->recorded_at, "2026-12-01T09:30:12Z"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->message, "a message"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->machine.runner, "ci-1"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->machine.os, "Linux"), 0);
	rec->machine.cpus = 8;
	/* set out of order and replaced: the map stays sorted, one entry a name */
	set(&rec->metrics, "samples", RS_RUNREC_INT, 2500, NULL);
	set(&rec->metrics, "duration", RS_RUNREC_REAL, 3.0, NULL);
	set(&rec->metrics, "cpu_time", RS_RUNREC_REAL, 2.4, NULL);
	set(&rec->metrics, "duration", RS_RUNREC_REAL, 2.5, NULL);
	assert_int_equal(rec->metrics.n, 3);
	assert_string_equal(rec->metrics.items[0].name, "cpu_time");
	assert_string_equal(rec->metrics.items[2].name, "samples");
	v = rs_runrec_map_get(&rec->metrics, "duration");
	assert_non_null(v);
	assert_true(v->d == 2.5);
	set(&rec->stats, "population", RS_RUNREC_INT, 30000, NULL);
	set(&rec->stats, "label", RS_RUNREC_STRING, 0, "baseline");
	set(&rec->stats, "label", RS_RUNREC_STRING, 0, "head");
	set(&rec->meta, "pr", RS_RUNREC_STRING, 0, "12");
	set(&rec->args, "seed", RS_RUNREC_INT, 7, NULL);
	rec->has_session = 1;
	assert_int_equal(rs_runrec_set_string(&rec->session.path, "run.pyisession"), 0);
	assert_int_equal(rs_runrec_set_string(&rec->session.oid, "0123456789abcdef0123456789abcdef"
					      "0123456789abcdef0123456789abcdef"), 0);
	rec->session.size = 4096;

	assert_int_equal(rs_runrec_summary_new(&s), 0);
	rec->summary = s;
	s->duration = (struct rs_runrec_opt){ 1, 2.5, 0 };
	s->sample_count = (struct rs_runrec_opt){ 1, 2500, 2500 };
	assert_int_equal(rs_runrec_set_string(&s->target, "Program: run.py --months 12"), 0);
	s->samples = 2500;
	s->sampled_time = 2.5;
	s->distinct_frames = 4;
	s->distinct_functions = 4;
	for (size_t i = 0; i < 2; i++)
		assert_int_equal(rs_runrec_add_function(s, &fns[i]), 0);
	s->tree.total = 2.5;
	assert_int_equal(rs_runrec_node_add(&s->tree, "main", "run.py", 1, 2.5, 0.25, &main_node), 0);
	assert_int_equal(rs_runrec_node_add(main_node, "step", "sim.py", 40, 2.0, 1.5, &step), 0);
	assert_int_equal(rs_runrec_node_add(step, "tiny", "sim.py", 90, 0.25, 0.25, NULL), 0);
	assert_int_equal(rs_runrec_node_add(main_node, "load", "io.py", 3, 0.25, 0.25, NULL), 0);
	assert_int_equal(main_node->nchildren, 2);
	assert_string_equal(main_node->children[0].children[0].function, "tiny");
	assert_int_equal(rs_runrec_add_more_row(s, "tiny", "sim.py", 90, 250, 250), 0);
	assert_int_equal(rs_runrec_add_more_row(s, "load", "io.py", 3, 250, 250), 0);
	assert_int_equal(rs_runrec_add_more_row(s, "other", "sim.py", 120, 10, 10), 0);
	assert_true(s->has_more);
	assert_int_equal(s->more.nfiles, 2); /* sim.py once */
	assert_int_equal(s->more.rows[2].file, 0);
	s->more.floor = 0.001;
	assert_int_equal(rs_runrec_set_string(&s->ran, "AAAAAAAB"), 0);

	back = through_run_json(rec);
	same_record(rec, back);
	/* a decoded record is changed the same way */
	set(&back->metrics, "mem.peak_mb", RS_RUNREC_REAL, 512, NULL);
	assert_int_equal(back->metrics.n, 4);
	assert_string_equal(back->metrics.items[2].name, "mem.peak_mb");
	assert_int_equal(rs_runrec_set_string(&back->machine.runner, NULL), 0);
	assert_null(back->machine.runner);
	rs_runrec_free(back);
	rs_runrec_free(rec);
}

int main(void)

{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_current_round_trip_is_byte_exact),
		cmocka_unit_test(test_oldest_format_still_decodes),
		cmocka_unit_test(test_each_optional_key_may_be_absent),
		cmocka_unit_test(test_complete_record_has_every_flag),
		cmocka_unit_test(test_renamed_required_key_fails_naming_it),
		cmocka_unit_test(test_wrong_types_fail_naming_the_key),
		cmocka_unit_test(test_newer_format_is_refused),
		cmocka_unit_test(test_indexes_and_rows_are_checked),
		cmocka_unit_test(test_not_a_record),
		cmocka_unit_test(test_huge_and_deep_input_is_bounded),
		cmocka_unit_test(test_encode_refuses_an_incomplete_record),
		cmocka_unit_test(test_builder_neutral_record_round_trips),
		cmocka_unit_test(test_builder_full_record_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
