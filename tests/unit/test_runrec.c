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
 * must fail with the key named.
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
