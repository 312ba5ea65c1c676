/*
 * Tests of the streaming session parser and the summary.
 *
 * Expected figures come from an independent computation in Python over
 * the same files (json.load, then plain loops), run while writing these
 * tests:
 *
 *   def fid(s):                      # (function, file, first line)
 *       p = s.split('\x01')[0].split('\x00'); return (p[0], p[1], int(p[2]))
 *   d = json.load(open(path)); recs = d['frame_records']
 *   samples = len(recs); sampled = sum(t for _, t in recs)
 *   self[fid(stack[-1])] += t                     # per record
 *   for f in set(map(fid, stack)): total[f] += t  # once per stack
 *   file_self[fid(stack[-1])[1]] += t
 *
 * Set RS_SESSION_BENCH=N to time N parses of the 4 MB session (printed,
 * never asserted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <math.h>

#include "session/session.h"
#include "session/summary.h"
#include "results/buf.h"
#include "results/error.h"

#define EPS 1e-12

static char *load(const char *name, size_t *len)
{
	const char *dir = getenv("RS_TEST_DATA");
	char path[4096];
	FILE *f;
	char *p;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open '%s'", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return p;
}

/*
 * Summarise `buf` fed in pieces: `piece` bytes each (0: all at once,
 * SIZE_MAX: pseudo-random sizes 1..4096). Returns the parser's code;
 * *out gets the JSON on success.
 */
static int summarise(const char *buf, size_t n, size_t piece, json_t **out)
{
	struct rs_summary *s = NULL;
	uint32_t lcg = 12345;
	size_t off = 0;
	int err;

	*out = NULL;
	assert_int_equal(rs_summary_new(&s, NULL), 0);
	while (off < n) {
		size_t k = piece == 0 ? n - off : piece;

		if (piece == SIZE_MAX) {
			lcg = lcg * 1103515245u + 12345u;
			k = 1 + (lcg >> 8) % 4096;
		}
		if (k > n - off)
			k = n - off;
		err = rs_summary_feed(s, buf + off, k);
		if (err)
			goto out;
		off += k;
	}
	err = rs_summary_finish(s);
	if (err)
		goto out;
	err = rs_summary_json(s, out);
out:
	rs_summary_free(s);
	return err;
}

static json_t *summarise_ok(const char *buf, size_t n, size_t piece)
{
	json_t *j;
	int err = summarise(buf, n, piece, &j);

	if (err)
		fail_msg("summary failed (%d): %s", err, rs_error_message());
	return j;
}

static json_t *summarise_file(const char *name)
{
	size_t n;
	char *buf = load(name, &n);
	json_t *j = summarise_ok(buf, n, 0);

	free(buf);
	return j;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_number(v))
		fail_msg("key '%s' is not a number", k);
	return json_number_value(v);
}

static const json_t *function(const json_t *summary, const char *fn, const char *file, long line)
{
	const json_t *f;
	size_t i;

	json_array_foreach(json_object_get(summary, "functions"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "function")), fn) &&
		    !strcmp(json_string_value(json_object_get(f, "file")), file) &&
		    json_integer_value(json_object_get(f, "line")) == line)
			return f;
	fail_msg("function %s (%s:%ld) not in the summary", fn, file, line);
	return NULL;
}

static const json_t *child(const json_t *node, size_t i)
{
	const json_t *c = json_array_get(json_object_get(node, "children"), i);

	assert_non_null(c);
	return c;
}

static void assert_error(int err, int code, const char *needle)
{
	assert_int_equal(err, code);
	if (!strstr(rs_error_message(), needle))
		fail_msg("error message '%s' lacks '%s'", rs_error_message(), needle);
}

/* ---- real sessions ------------------------------------------------------ */

static void test_real_small_figures(void **state)
{
	json_t *j = summarise_file("real_small_pop1k.pyisession");
	const json_t *f, *fs, *tree, *n;
	double sampled;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(j, "layout")), "5");
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 2373);
	assert_int_equal(json_integer_value(json_object_get(j, "sample_count")), 2373);
	sampled = num(j, "sampled_time");
	assert_true(fabs(sampled - 2.4003613160000441) < EPS);
	assert_true(num(j, "duration") == 2.4007604122161865);
	assert_true(num(j, "cpu_time") == 2.397825454);
	assert_true(num(j, "start_time") == 1796028654.0114212);
	assert_true(num(j, "min_interval") == 0.001 && num(j, "max_interval") == 0.001);
	assert_string_equal(json_string_value(json_object_get(j, "target")),
			    "Profile at /tmp/popmodel-run/scripts/run_profile.py:60");
	/* 2,665 distinct strings in the records, one more in start_call_stack */
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_frames")), 2666);
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_functions")), 1203);

	/* top by self, in order */
	f = json_array_get(json_object_get(j, "functions"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "function")), "_tokenize");
	assert_string_equal(json_string_value(json_object_get(f, "file")), "/usr/lib/python3.11/tokenize.py");
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 433);
	assert_true(fabs(num(f, "self") - 0.11609175700084506) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "self_samples")), 116);
	f = json_array_get(json_object_get(j, "functions"), 1);
	assert_string_equal(json_string_value(json_object_get(f, "function")), "Pattern.match");
	assert_true(fabs(num(f, "self") - 0.096581958999422568) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "self_samples")), 81);
	f = function(j, "tokenize_string",
		     "/usr/lib/python3/dist-packages/pandas/core/computation/parsing.py", 167);
	assert_true(fabs(num(f, "self") - 0.053008000999739124) < EPS);

	/* recursion: counted once per stack (a naive sum gives 0.90086...) */
	f = function(j, "wrapper", "/usr/lib/python3/dist-packages/pandas/util/_decorators.py", 323);
	assert_true(fabs(num(f, "total") - 0.86985235799977545) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "total_samples")), 853);
	f = function(j, "__getitem__", "/usr/lib/python3/dist-packages/pandas/core/indexing.py", 1059);
	assert_true(fabs(num(f, "total") - 0.48423567700058356) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "total_samples")), 483);
	f = function(j, "MainThread", "<thread>", 139767170273984);
	assert_true(fabs(num(f, "total") - sampled) < EPS);

	/* files */
	fs = json_array_get(json_object_get(j, "files"), 0);
	assert_string_equal(json_string_value(json_object_get(fs, "file")), "<built-in>");
	assert_true(fabs(num(fs, "self") - 0.4576835439986553) < EPS);
	fs = json_array_get(json_object_get(j, "files"), 1);
	assert_string_equal(json_string_value(json_object_get(fs, "file")),
			    "/usr/lib/python3/dist-packages/pandas/core/generic.py");
	assert_true(fabs(num(fs, "self") - 0.17549370899894257) < EPS);
	assert_true(json_array_size(json_object_get(j, "files")) <= 30);

	/* tree: [root] > MainThread > <module> > main > run > simulate */
	tree = json_object_get(j, "tree");
	assert_string_equal(json_string_value(json_object_get(tree, "function")), "[root]");
	assert_true(fabs(num(tree, "total") - sampled) < EPS);
	n = child(child(child(child(child(tree, 0), 0), 0), 0), 0);
	assert_string_equal(json_string_value(json_object_get(n, "function")), "simulate");
	assert_true(fabs(num(n, "total") - 2.2324394280000206) < EPS);
	json_decref(j);
}

/* every node >= 0.5% of the time, children sorted, depth <= 40 */
static void check_tree(const json_t *node, double cut, int depth, int *max_depth)
{
	const json_t *c;
	size_t i;
	double prev = 1e300, sum = 0;

	if (depth > *max_depth)
		*max_depth = depth;
	json_array_foreach(json_object_get(node, "children"), i, c) {
		double t = num(c, "total");

		assert_true(t >= cut);
		assert_true(t <= prev);
		prev = t;
		sum += t;
		check_tree(c, cut, depth + 1, max_depth);
	}
	assert_true(sum + num(node, "self") <= num(node, "total") + 1e-9);
}

static void test_tree_pruning(void **state)
{
	json_t *j = summarise_file("real_small_pop1k.pyisession");
	const json_t *tree = json_object_get(j, "tree");
	int depth = 0;

	(void)state;
	check_tree(tree, 0.005 * num(tree, "total"), 0, &depth);
	assert_true(depth > 10 && depth <= 40);
	json_decref(j);
}

static void test_tiny_5(void **state)
{
	json_t *j = summarise_file("tiny_pyinstrument_5.1.2.pyisession");
	const json_t *f;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(j, "layout")), "5");
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 54);
	assert_true(fabs(num(j, "sampled_time") - 0.11367693200008944) < EPS);
	assert_true(num(j, "min_interval") == 0.001);
	f = json_array_get(json_object_get(j, "functions"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "function")), "<listcomp>");
	assert_true(fabs(num(f, "self") - 0.098930645999189437) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "self_samples")), 40);
	f = function(j, "main", "/home/user/tiny/tiny_workload.py", 19);
	assert_true(fabs(num(f, "self") - 0.010546326000849149) < EPS);
	f = function(j, "step", "/home/user/tiny/tiny_workload.py", 8);
	assert_string_equal(json_string_value(json_object_get(f, "class")), "Model");
	assert_true(fabs(num(f, "total") - 0.1021285759991315) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "total_samples")), 43);
	/* 10 frame strings (one only in start_call_stack), 8 functions: the
	 * \1l line attribute does not split a function */
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_frames")), 10);
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_functions")), 8);
	json_decref(j);
}

static void test_tiny_4_layouts(void **state)
{
	json_t *j = summarise_file("tiny_pyinstrument_4.3.0.pyisession");
	const json_t *f;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(j, "layout")), "4");
	assert_string_equal(json_string_value(json_object_get(j, "target")),
			    "tiny_workload.py tiny_pyinstrument_4.3.0.pyisession");
	assert_true(json_is_null(json_object_get(j, "min_interval")));
	assert_true(json_is_null(json_object_get(j, "max_interval")));
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 52);
	assert_true(fabs(num(j, "sampled_time") - 0.11213797799996428) < EPS);
	assert_true(num(j, "cpu_time") == 0.111797976);
	f = json_array_get(json_object_get(j, "functions"), 0);
	assert_string_equal(json_string_value(json_object_get(f, "function")), "<listcomp>");
	assert_true(fabs(num(f, "self") - 0.099565922000010687) < EPS);
	assert_null(json_object_get(f, "class"));
	f = function(j, "step", "/home/user/tiny/tiny_workload.py", 8);
	assert_true(fabs(num(f, "total") - 0.10064418899992233) < EPS);
	{
		/* the own-time table stops at the last function with own time */
		struct rs_buf md = RS_BUF_INIT;
		char *own, *tot;

		assert_int_equal(rs_summary_markdown(j, &md), 0);
		own = strstr(md.ptr, "by own time");
		tot = strstr(md.ptr, "by total time");
		assert_non_null(own);
		assert_non_null(tot);
		*tot = '\0';
		assert_non_null(strstr(own, "| 3 | `sorted` | `<built-in>` | 0.001 s | 1.0% |"));
		assert_null(strstr(own, "| 4 |"));
		assert_non_null(strstr(md.ptr, "| Interval | 2.16 ms (mean per sample) |"));
		assert_non_null(strstr(md.ptr, "| Session format | pyinstrument 4.x |"));
		rs_buf_release(&md);
	}
	json_decref(j);

	j = summarise_file("tiny_pyinstrument_4.6.2.pyisession");
	assert_string_equal(json_string_value(json_object_get(j, "layout")), "4");
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 60);
	assert_true(fabs(num(j, "sampled_time") - 0.11224717200002488) < EPS);
	f = function(j, "main", "/home/user/tiny/tiny_workload.py", 19);
	assert_true(fabs(num(f, "self") - 0.019794350999973176) < EPS);
	assert_int_equal(json_integer_value(json_object_get(f, "self_samples")), 19);
	f = function(j, "step", "/home/user/tiny/tiny_workload.py", 8);
	assert_string_equal(json_string_value(json_object_get(f, "class")), "Model");
	assert_true(fabs(num(f, "total") - 0.092452821000051699) < EPS);
	json_decref(j);
}

/* ---- formatting and pieces ---------------------------------------------- */

/* python3 json.dump(indent=2, sort_keys=True): frame_records in the middle */
static void test_indented_same_summary(void **state)
{
	json_t *a = summarise_file("tiny_pyinstrument_5.1.2.pyisession");
	json_t *b = summarise_file("session_tiny_5.1.2_indented.pyisession");

	(void)state;
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
}

/* Put " \r\n\t" around every token outside strings. */
static char *spread_whitespace(const char *in, size_t n, size_t *out_len)
{
	struct rs_buf b = RS_BUF_INIT;
	int in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		char c = in[i];

		if (in_str) {
			assert_int_equal(rs_buf_putc(&b, c), 0);
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == ' ')
			continue;
		if (strchr("]}", c))
			assert_int_equal(rs_buf_puts(&b, "\r\n\t "), 0);
		assert_int_equal(rs_buf_putc(&b, c), 0);
		if (c == '"')
			in_str = 1;
		if (strchr(",:[{", c))
			assert_int_equal(rs_buf_puts(&b, " \t\r\n"), 0);
	}
	return rs_buf_detach(&b, out_len);
}

static void test_whitespace_everywhere(void **state)
{
	size_t n, m;
	char *buf = load("tiny_pyinstrument_4.6.2.pyisession", &n);
	char *spread = spread_whitespace(buf, n, &m);
	json_t *a = summarise_ok(buf, n, 0), *b = summarise_ok(spread, m, SIZE_MAX);

	(void)state;
	assert_true(m > n + 1000);
	assert_true(json_equal(a, b));
	json_decref(a);
	json_decref(b);
	free(buf);
	free(spread);
}

static void test_one_byte_pieces(void **state)
{
	size_t n;
	char *buf = load("real_small_pop1k.pyisession", &n);
	json_t *whole = summarise_ok(buf, n, 0);
	json_t *bytes = summarise_ok(buf, n, 1);
	json_t *random = summarise_ok(buf, n, SIZE_MAX);

	(void)state;
	assert_true(json_equal(whole, bytes));
	assert_true(json_equal(whole, random));
	json_decref(whole);
	json_decref(bytes);
	json_decref(random);
	free(buf);
}

static void test_escapes(void **state)
{
	size_t n;
	char *buf = load("session_escapes.pyisession", &n);
	json_t *j = summarise_ok(buf, n, 0), *k = summarise_ok(buf, n, 1);
	const json_t *f;

	(void)state;
	assert_true(json_equal(j, k));
	assert_string_equal(json_string_value(json_object_get(j, "target")),
			    "t\xc3\xa9st \"q\" \\ / \t\xf0\x9f\x98\x80 caf\xc3\xa9");
	assert_true(num(j, "start_time") == 1500);
	assert_true(json_is_null(json_object_get(j, "cpu_time")));
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 3);
	assert_true(num(j, "sampled_time") == 0.875);
	/* "f\u00e9..." and "f<raw é>...\u00E9..." are one frame; l13/l14 two
	 * frames of one function */
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_frames")), 6);
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_functions")), 5);
	f = function(j, "f\xc3\xa9\"q\\", "/x/caf\xc3\xa9.py", 7);
	assert_string_equal(json_string_value(json_object_get(f, "class")), "K\xc3\xa9");
	assert_true(num(f, "total") == 0.75 && num(f, "self") == 0);
	f = function(j, "g\xf0\x9f\x98\x80", "/x/y.py", 12);
	assert_true(num(f, "self") == 0.75);
	assert_int_equal(json_integer_value(json_object_get(f, "self_samples")), 2);
	f = function(j, "[await]", "", 0);
	assert_true(num(f, "total") == 0.125);
	f = function(j, "lone\xef\xbf\xbd", "/x/z.py", 3); /* lone surrogate -> U+FFFD */
	assert_true(num(f, "self") == 0.125);
	json_decref(j);
	json_decref(k);
	free(buf);
}

/* ---- the parser API ------------------------------------------------------ */

struct counts {
	int frames, samples, headers, header_after_samples;
	int64_t exec_lines[8];
	int hidden;
};

static int count_frame(void *ctx, const struct rs_session_parser *p, uint32_t id,
		       const struct rs_session_frame *f)
{
	struct counts *c = ctx;

	assert_int_equal(id, (uint32_t)c->frames);
	assert_ptr_equal(rs_session_parser_frame(p, id), f);
	if (c->frames < 8)
		c->exec_lines[c->frames] = f->exec_line;
	c->hidden += f->hidden;
	c->frames++;
	return 0;
}

static int count_sample(void *ctx, const struct rs_session_parser *p, const uint32_t *frames,
			size_t depth, double t)
{
	struct counts *c = ctx;
	size_t i;

	for (i = 0; i < depth; i++)
		assert_true(frames[i] < rs_session_parser_frame_count(p));
	c->samples++;
	return 0;
}

static int count_header(void *ctx, const struct rs_session_parser *p,
			const struct rs_session_header *h)
{
	struct counts *c = ctx;

	c->headers++;
	c->header_after_samples = c->samples;
	assert_int_equal(h->layout, 5);
	return 0;
}

static void test_parser_callbacks(void **state)
{
	struct counts c = { 0 };
	struct rs_session_callbacks cb = { &c, count_frame, count_sample, count_header };
	struct rs_session_parser *p;
	const struct rs_session_header *h;
	const struct rs_session_frame *f;
	size_t n;
	char *buf = load("session_escapes.pyisession", &n);

	(void)state;
	assert_int_equal(rs_session_parser_new(&p, &cb), 0);
	assert_int_equal(rs_session_parser_feed(p, buf, n), 0);
	assert_int_equal(rs_session_parser_finish(p), 0);
	assert_int_equal(c.frames, 6);
	assert_int_equal(c.samples, 3);
	assert_int_equal(c.headers, 1);
	assert_int_equal(c.header_after_samples, 3);
	assert_int_equal(c.hidden, 1);
	assert_int_equal(c.exec_lines[0], -1);
	assert_int_equal(c.exec_lines[2], 13);
	assert_int_equal(c.exec_lines[3], 14);
	f = rs_session_parser_frame(p, 2);
	assert_int_equal(f->function_id, rs_session_parser_frame(p, 3)->function_id);
	assert_string_equal(rs_session_parser_file(p, f->file_id), "/x/y.py");
	assert_string_equal(rs_session_parser_function(p, f->function_id)->function, "g\xf0\x9f\x98\x80");
	h = rs_session_parser_header(p);
	assert_true(h->present & RS_SESSION_HAS_SAMPLE_COUNT);
	assert_false(h->present & RS_SESSION_HAS_CPU_TIME);
	assert_int_equal(h->sample_count, 3);
	assert_null(h->program);
	assert_int_equal(rs_session_parser_sample_count(p), 3);
	assert_int_equal(rs_session_parser_offset(p), n);
	rs_session_parser_free(p);
	free(buf);
}

static void test_summary_chain(void **state)
{
	struct counts c = { 0 };
	struct rs_session_callbacks cb = { &c, count_frame, count_sample, count_header };
	struct rs_summary_options opt = { 0 };
	struct rs_summary *s;
	json_t *j;
	size_t n;
	char *buf = load("tiny_pyinstrument_5.1.2.pyisession", &n);

	(void)state;
	opt.chain = &cb;
	assert_int_equal(rs_summary_new(&s, &opt), 0);
	assert_int_equal(rs_summary_json(s, &j), RS_EUSAGE); /* not finished */
	assert_int_equal(rs_summary_feed(s, buf, n), 0);
	assert_int_equal(rs_summary_finish(s), 0);
	assert_int_equal(rs_summary_json(s, &j), 0);
	assert_int_equal(c.samples, 54);
	assert_int_equal(c.frames, 10);
	assert_int_equal(c.headers, 1);
	assert_int_equal(rs_session_parser_frame_count(rs_summary_parser(s)), 10);
	json_decref(j);
	rs_summary_free(s);
	free(buf);
}

/* [T a b a b] 1.0, [T a] 2.0, [] 0.5: recursion and an empty stack */
static void test_recursion_rule(void **state)
{
	const char *in =
		"{\"frame_records\":[[[\"T\\u0000<thread>\\u00001\",\"a\\u0000m.py\\u00001\\u0001l2\","
		"\"b\\u0000m.py\\u00005\",\"a\\u0000m.py\\u00001\\u0001l3\",\"b\\u0000m.py\\u00005\"],1.0],"
		"[[\"T\\u0000<thread>\\u00001\",\"a\\u0000m.py\\u00001\"],2.0],[[],0.5]]}";
	json_t *j = summarise_ok(in, strlen(in), 0);
	const json_t *a = function(j, "a", "m.py", 1), *b = function(j, "b", "m.py", 5);
	const json_t *tree = json_object_get(j, "tree"), *n;

	(void)state;
	assert_true(num(a, "total") == 3.0 && num(a, "self") == 2.0);
	assert_int_equal(json_integer_value(json_object_get(a, "total_samples")), 2);
	assert_true(num(b, "total") == 1.0 && num(b, "self") == 1.0);
	assert_true(num(j, "sampled_time") == 3.5);
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 3);
	/* the tree keeps call paths: root > T > a > b > a > b */
	assert_true(num(tree, "total") == 3.5 && num(tree, "self") == 0.5);
	n = child(child(tree, 0), 0);
	assert_true(num(n, "total") == 3.0 && num(n, "self") == 2.0);
	n = child(child(child(n, 0), 0), 0);
	assert_string_equal(json_string_value(json_object_get(n, "function")), "b");
	assert_true(num(n, "total") == 1.0 && num(n, "self") == 1.0);
	/* pyinstrument 4 order and no target: layout 4 */
	assert_string_equal(json_string_value(json_object_get(j, "layout")), "4");
	assert_true(json_is_null(json_object_get(j, "target")));
	json_decref(j);
}

/* Frames at the same depth whose spellings are prefixes of each other. */
static void test_same_depth_prefixes(void **state)
{
	const char *in =
		"{\"frame_records\":[[[\"x\",\"abc\"],1.0],[[\"x\",\"ab\"],2.0],"
		"[[\"x\",\"abcd\"],4.0],[[\"x\",\"ab\"],8.0],[[\"x\",\"a\\u0062\"],16.0]]}";
	json_t *j = summarise_ok(in, strlen(in), 0);

	(void)state;
	assert_true(num(function(j, "abc", "", 0), "self") == 1.0);
	assert_true(num(function(j, "ab", "", 0), "self") == 26.0);
	assert_true(num(function(j, "abcd", "", 0), "self") == 4.0);
	assert_int_equal(json_integer_value(json_object_get(j, "distinct_frames")), 4);
	json_decref(j);
}

/* Options: a tiny node cap truncates the tree, never the flat figures. */
static void test_options(void **state)
{
	struct rs_summary_options opt = { 0 };
	struct rs_summary *s;
	json_t *j, *ref = summarise_file("tiny_pyinstrument_5.1.2.pyisession");
	const json_t *tree;
	size_t n;
	char *buf = load("tiny_pyinstrument_5.1.2.pyisession", &n);

	(void)state;
	opt.max_nodes = 3;      /* [root], MainThread, <module> */
	opt.top_functions = 2;
	opt.top_files = 1;
	assert_int_equal(rs_summary_new(&s, &opt), 0);
	assert_int_equal(rs_summary_feed(s, buf, n), 0);
	assert_int_equal(rs_summary_finish(s), 0);
	assert_int_equal(rs_summary_json(s, &j), 0);
	assert_true(json_is_true(json_object_get(j, "tree_truncated")));
	assert_null(json_object_get(ref, "tree_truncated"));
	tree = json_object_get(j, "tree");
	assert_true(num(tree, "total") == num(ref, "sampled_time"));
	assert_true(num(child(child(tree, 0), 0), "total") == num(ref, "sampled_time"));
	assert_int_equal(json_array_size(json_object_get(child(child(tree, 0), 0), "children")), 0);
	/* top 2 by self: <listcomp>, main; top 2 by total: MainThread, <module>
	 * and main tie on total, self breaks the tie: main, then MainThread
	 * (first seen). The union has 3. */
	assert_int_equal(json_array_size(json_object_get(j, "functions")), 3);
	function(j, "MainThread", "<thread>", 139802117968576);
	assert_int_equal(json_array_size(json_object_get(j, "files")), 1);
	assert_true(json_equal(json_object_get(j, "sampled_time"), json_object_get(ref, "sampled_time")));
	assert_true(json_equal(json_array_get(json_object_get(j, "functions"), 0),
			       json_array_get(json_object_get(ref, "functions"), 0)));
	json_decref(j);
	rs_summary_free(s);

	/* depth 2: the tree stops at MainThread > <module> */
	memset(&opt, 0, sizeof(opt));
	opt.max_depth = 2;
	assert_int_equal(rs_summary_new(&s, &opt), 0);
	assert_int_equal(rs_summary_feed(s, buf, n), 0);
	assert_int_equal(rs_summary_finish(s), 0);
	assert_int_equal(rs_summary_json(s, &j), 0);
	tree = child(child(json_object_get(j, "tree"), 0), 0);
	assert_string_equal(json_string_value(json_object_get(tree, "function")), "<module>");
	assert_int_equal(json_array_size(json_object_get(tree, "children")), 0);
	assert_true(num(tree, "self") == 0);
	json_decref(j);
	rs_summary_free(s);
	json_decref(ref);
	free(buf);
}

/* ---- errors -------------------------------------------------------------- */

static void test_truncated(void **state)
{
	size_t n, cut;
	char *buf = load("tiny_pyinstrument_5.1.2.pyisession", &n);
	json_t *j;

	(void)state;
	for (cut = 0; cut < n; cut += cut < 300 ? 1 : 7) {
		int err = summarise(buf, cut, cut % 3 ? 0 : 5, &j);

		if (err != RS_ECORRUPT)
			fail_msg("prefix of %zu bytes: got %d (%s)", cut, err, rs_error_message());
	}
	assert_error(summarise(buf, n - 40, 0, &j), RS_ECORRUPT, "truncated session: input ends at byte");
	assert_error(summarise(buf, n - 40, 0, &j), RS_ECORRUPT, "inside frame_records");
	assert_error(summarise(buf, n - 1, 1, &j), RS_ECORRUPT, "truncated");
	free(buf);
}

static void test_not_a_session(void **state)
{
	static const struct {
		const char *in;
		int code;
		const char *msg;
	} cases[] = {
		{ "{\"a\": 1}", RS_ECORRUPT,
		  "not a pyinstrument session: expected key 'frame_records' in the top-level object, which ends at byte 7" },
		{ "[1, 2]", RS_ECORRUPT, "not a pyinstrument session: expected '{' at byte 0" },
		{ "  \x89PNG", RS_ECORRUPT, "expected '{' at byte 2 (a session is a JSON object), found byte 0x89" },
		{ "", RS_ECORRUPT, "not a pyinstrument session: the input is empty" },
		{ "\"frame_records\"", RS_ECORRUPT, "not a pyinstrument session" },
		{ "{\"frame_records\": {}}", RS_ECORRUPT, "key 'frame_records' at byte 18 must be an array, found an object" },
		{ "{\"frame_records\": [], \"duration\": \"x\"}", RS_ECORRUPT, "key 'duration' at byte 34 must be a number" },
		{ "{\"frame_records\": [[\"a\", 1.0]]}", RS_ECORRUPT, "must be [stack, time]" },
		{ "{\"frame_records\": [[[\"a\"]]]}", RS_ECORRUPT, "must be [stack, time]" },
		{ "{\"frame_records\": [[[\"a\"], 1, 2]]}", RS_ECORRUPT, "must be [stack, time]" },
		{ "{\"frame_records\": [[[1], 1]]}", RS_ECORRUPT, "not a pyinstrument session" },
		{ "{\"frame_records\": [[[\"a\"], 1.0],]}", RS_ECORRUPT,
		  "invalid session JSON at byte 32: expected a value, found ']'" },
		{ "{\"frame_records\": [] \"x\": 1}", RS_ECORRUPT, "byte 21: expected ',' or '}'" },
		{ "{\"frame_records\": []} x", RS_ECORRUPT, "after the end of the session object" },
		{ "{\"frame_records\": [[[\"a\\q\"], 1]]}", RS_ECORRUPT, "invalid escape '\\q'" },
		{ "{\"frame_records\": [[[\"a\\u12\"], 1]]}", RS_ECORRUPT, "four hex digits" },
		{ "{\"frame_records\": [[[\"a\tb\"], 1]]}", RS_ECORRUPT, "byte 23: control character 0x09" },
		{ "{\"frame_records\": [[[\"a\xff\"], 1]]}", RS_ECORRUPT, "invalid UTF-8" },
		{ "{\"frame_records\": [[[\"a\xed\xa0\x80\"], 1]]}", RS_ECORRUPT, "invalid UTF-8" },
		{ "{\"frame_records\": [[[\"a\"], 01]]}", RS_ECORRUPT, "malformed number '01'" },
		{ "{\"frame_records\": [[[\"a\"], 1.]]}", RS_ECORRUPT, "malformed number" },
		{ "{\"frame_records\": [[[\"a\"], NaN]]}", RS_ECORRUPT, "invalid session JSON" },
		{ "{\"frame_records\": [[[\"a\"], nul]]}", RS_ECORRUPT, "unknown literal 'nul'" },
		{ "{\"frame_records\": [], \"frame_records\": []}", RS_ECORRUPT, "a second 'frame_records'" },
		{ "{\"frame_records\": [], \"sample_count\": 1.5}", RS_ECORRUPT, "must be a whole number" },
		{ "{\"frame_records\": null}", RS_ECORRUPT, "must be an array, found null" },
		{ "{\"frame_records\": [], \"sys_path\": [1]}", RS_ECORRUPT, "must hold strings" },
		{ "{\"frame_records\": [], \"x\": [1,]}", RS_ECORRUPT, "expected a value, found ']'" },
		{ "{\"frame_records\": [], \"x\": {\"a\" 1}}", RS_ECORRUPT, "expected ':'" },
		{ "{\"frame_records\": [], \"x\": {1: 1}}", RS_ECORRUPT, "expected a key string or '}'" },
		{ "{\"frame_records\": [}", RS_ECORRUPT, "expected a value or ']', found '}'" },
	};
	size_t i;
	json_t *j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = summarise(cases[i].in, strlen(cases[i].in), 0, &j);

		if (err != cases[i].code || !strstr(rs_error_message(), cases[i].msg))
			fail_msg("case %zu '%s': got %d '%s', want %d '%s'", i, cases[i].in, err,
				 rs_error_message(), cases[i].code, cases[i].msg);
		/* the same result when fed a byte at a time */
		err = summarise(cases[i].in, strlen(cases[i].in), 1, &j);
		if (err != cases[i].code || !strstr(rs_error_message(), cases[i].msg))
			fail_msg("case %zu bytewise: got %d '%s'", i, err, rs_error_message());
	}
}

static void test_minimal_and_empty(void **state)
{
	const char *one = "{\"frame_records\":[[[\"a\"],1e-3]],\"unknown\":{\"k\":[true,false,null,-0.5E+2,\"\\\"\"]}}";
	const char *none = "\t{ \"frame_records\" : [ ] }\n";
	struct rs_buf md = RS_BUF_INIT;
	json_t *j;

	(void)state;
	j = summarise_ok(one, strlen(one), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 1);
	assert_true(num(j, "sampled_time") == 0.001);
	assert_non_null(function(j, "a", "", 0));
	json_decref(j);

	j = summarise_ok(none, strlen(none), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 0);
	assert_int_equal(json_array_size(json_object_get(j, "functions")), 0);
	assert_true(json_is_null(json_object_get(j, "duration")));
	assert_int_equal(rs_summary_markdown(j, &md), 0);
	assert_non_null(strstr(md.ptr, "No samples."));
	assert_non_null(strstr(md.ptr, "| Duration | n/a |"));
	rs_buf_release(&md);
	json_decref(j);
}

/*
 * A key given twice: the second value is the one kept, as Python's
 * json.load keeps it. A list given again used to be grown from its freed
 * array (found by fuzz_session: a write through NULL).
 */
static void test_repeated_keys(void **state)
{
	const char *twice = "{\"sys_path\": [\"/a\", \"/b\", \"/c\"], \"sys_prefixes\": [\"/p\"], "
			    "\"frame_records\": [[[\"a\\u0000/b/m.py\\u00001\"], 0.001]], "
			    "\"sys_path\": [\"/d\", \"/e\"], \"sys_prefixes\": [], \"sys_prefixes\": [\"/q\"]}";
	struct rs_session_callbacks cb = { NULL, NULL, NULL, NULL };
	struct rs_session_parser *p;
	const struct rs_session_header *h;

	(void)state;
	assert_int_equal(rs_session_parser_new(&p, &cb), 0);
	assert_int_equal(rs_session_parser_feed(p, twice, strlen(twice)), 0);
	assert_int_equal(rs_session_parser_finish(p), 0);
	h = rs_session_parser_header(p);
	assert_int_equal(h->sys_path_len, 2);
	assert_string_equal(h->sys_path[0], "/d");
	assert_string_equal(h->sys_path[1], "/e");
	assert_int_equal(h->sys_prefixes_len, 1);
	assert_string_equal(h->sys_prefixes[0], "/q");
	assert_int_equal(rs_session_parser_sample_count(p), 1);
	rs_session_parser_free(p);
}

static void test_caps(void **state)
{
	struct rs_buf b = RS_BUF_INIT;
	json_t *j;
	size_t i;

	(void)state;
	/* a frame string over 64 KiB, whole and in pieces */
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\": [[[\""), 0);
	for (i = 0; i < RS_SESSION_MAX_STRING + 10; i++)
		assert_int_equal(rs_buf_putc(&b, 'x'), 0);
	assert_int_equal(rs_buf_puts(&b, "\"], 1]]}"), 0);
	assert_error(summarise(b.ptr, b.len, 0, &j), RS_ETOOBIG, "longer than 65536 bytes");
	assert_error(summarise(b.ptr, b.len, 1000, &j), RS_ETOOBIG, "string at byte 21 is longer");
	/* exactly at the cap is fine */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\": [[[\""), 0);
	for (i = 0; i < RS_SESSION_MAX_STRING; i++)
		assert_int_equal(rs_buf_putc(&b, 'x'), 0);
	assert_int_equal(rs_buf_puts(&b, "\"], 1]]}"), 0);
	assert_int_equal(summarise(b.ptr, b.len, 777, &j), 0);
	json_decref(j);

	/* nesting */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\": [], \"x\": "), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(rs_buf_putc(&b, '['), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(rs_buf_putc(&b, ']'), 0);
	assert_int_equal(rs_buf_putc(&b, '}'), 0);
	assert_error(summarise(b.ptr, b.len, 0, &j), RS_ETOOBIG, "nests deeper than 64");

	/* a number too long */
	rs_buf_clear(&b);
	assert_int_equal(rs_buf_puts(&b, "{\"frame_records\": [[[\"a\"], 1"), 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(rs_buf_putc(&b, '0'), 0);
	assert_int_equal(rs_buf_puts(&b, "]]}"), 0);
	assert_error(summarise(b.ptr, b.len, 0, &j), RS_ECORRUPT, "token too long");
	assert_error(summarise(b.ptr, b.len, 3, &j), RS_ECORRUPT, "token too long");
	rs_buf_release(&b);
}

static void test_sticky_error(void **state)
{
	struct rs_session_parser *p;
	const char *bad = "{\"frame_records\": x";

	(void)state;
	assert_int_equal(rs_session_parser_new(&p, NULL), 0);
	assert_error(rs_session_parser_feed(p, bad, strlen(bad)), RS_ECORRUPT, "byte 18");
	rs_error_clear();
	assert_error(rs_session_parser_feed(p, "[]}", 3), RS_ECORRUPT, "byte 18");
	assert_error(rs_session_parser_finish(p), RS_ECORRUPT, "byte 18");
	rs_session_parser_free(p);
	rs_session_parser_free(NULL);
	rs_summary_free(NULL);
}

/* ---- Markdown ------------------------------------------------------------ */

static void test_markdown(void **state)
{
	json_t *j = summarise_file("real_small_pop1k.pyisession");
	struct rs_buf md = RS_BUF_INIT;
	static const char *const want[] = {
		"## Profile\n",
		"| Duration | 2.401 s |",
		"| CPU time | 2.398 s (99.9% of duration) |",
		"| Samples | 2,373 (2.400 s sampled) |",
		"| Interval | 1 ms |",
		"| Target | `Profile at /tmp/popmodel-run/scripts/run_profile.py:60` |",
		"### Top functions by own time",
		"| 1 | `_tokenize` | `tokenize.py:433` | 0.116 s | 4.8% | 0.264 s | 11.0% |",
		"| 2 | `Pattern.match` | `<built-in>` | 0.097 s | 4.0% |",
		"### Top functions by total time",
		"`popmodel/core.py:339`",
		"| `MainThread` | `<thread>` |",
		"### Top files by own time",
		"| `<built-in>` | 0.458 s | 19.1% |",
		"| `pandas/core/generic.py` | 0.175 s | 7.3% |",
	};
	size_t i, rows = 0;
	const char *p;

	(void)state;
	assert_int_equal(rs_summary_markdown(j, &md), 0);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(md.ptr, want[i]))
			fail_msg("Markdown lacks '%s':\n%s", want[i], md.ptr);
	/* 15 rows in each function table */
	for (p = strstr(md.ptr, "\n| 15 | "); p; p = strstr(p + 1, "\n| 15 | "))
		rows++;
	assert_int_equal(rows, 2);
	assert_null(strstr(md.ptr, "\n| 16 | "));
	assert_int_equal(rs_summary_markdown(json_object_get(j, "samples"), &md), RS_EUSAGE);
	rs_buf_release(&md);
	json_decref(j);
}

static void test_markdown_escapes(void **state)
{
	const char *in =
		"{\"program\": \"a|b`c\", \"frame_records\": [[[\"f|g`h\\u0000/p/q|r.py\\u00003\"], 1.0]]}";
	json_t *j = summarise_ok(in, strlen(in), 0);
	struct rs_buf md = RS_BUF_INIT;

	(void)state;
	assert_int_equal(rs_summary_markdown(j, &md), 0);
	/* a backtick stays one: the fence grows instead */
	assert_non_null(strstr(md.ptr, "| Target | ``a\\|b`c`` |"));
	assert_non_null(strstr(md.ptr, "``f\\|g`h`` | `/p/q\\|r.py:3`"));
	rs_buf_release(&md);
	json_decref(j);
}

/*
 * A page is whole or an error: under any cap too small for it, the
 * Markdown fails with RS_ETOOBIG and leaves the buffer as it was, even
 * when the piece that did not fit left room below the cap (a long footer
 * after a short cell), where a check of the final length alone saw none.
 */
static void test_markdown_cap_never_truncates(void **state)
{
	const char *in =
		"{\"program\": \"a|b`c\", \"frame_records\": [[[\"f|g`h\\u0000/p/q|r.py\\u00003\"], 1.0]]}";
	json_t *j = summarise_ok(in, strlen(in), 0);
	struct rs_buf whole = RS_BUF_INIT, md;
	size_t cap;

	(void)state;
	assert_int_equal(rs_summary_markdown(j, &whole), 0);
	for (cap = 2; cap <= whole.len + 1; cap++) {
		rs_buf_init(&md, cap);
		assert_int_equal(rs_buf_puts(&md, "x"), 0);
		if (cap < whole.len + 1) {
			if (rs_summary_markdown(j, &md) != RS_ETOOBIG)
				fail_msg("cap %zu of %zu: no error, %zu bytes", cap, whole.len + 1, md.len);
			assert_non_null(strstr(rs_error_message(), "exceeds its buffer cap"));
			assert_string_equal(md.ptr, "x");
		} else {
			assert_int_equal(rs_summary_markdown(j, &md), 0);
			assert_string_equal(md.ptr + 1, whole.ptr);
		}
		rs_buf_release(&md);
	}
	rs_buf_release(&whole);
	json_decref(j);
}

/* ---- files and benchmark ------------------------------------------------- */

static void test_summary_file(void **state)
{
	char path[4096];
	const char *dir = getenv("RS_TEST_DATA");
	json_t *j;

	(void)state;
	snprintf(path, sizeof(path), "%s/tiny_pyinstrument_4.6.2.pyisession", dir ? dir : "tests/data");
	assert_int_equal(rs_summary_file(path, NULL, &j), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "samples")), 60);
	json_decref(j);
	assert_int_equal(rs_summary_file("/nonexistent/x.pyisession", NULL, &j), RS_ENOTFOUND);
}

static void bench_real_small(void **state)
{
	const char *env = getenv("RS_SESSION_BENCH");
	int rounds = env ? atoi(env) : 0, i;
	struct timespec a, b, ca, cb;
	size_t n;
	char *buf;
	double secs, cpu;

	(void)state;
	if (rounds <= 0)
		skip();
	buf = load("real_small_pop1k.pyisession", &n);
	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
	for (i = 0; i < rounds; i++)
		json_decref(summarise_ok(buf, n, 1 << 20));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	cpu = (double)(cb.tv_sec - ca.tv_sec) + (double)(cb.tv_nsec - ca.tv_nsec) / 1e9;
	/* CPU time too: on a shared machine the wall clock measures the neighbours */
	printf("bench: %d x %.1f MB summarised in %.3f s wall (%.0f MB/s), %.3f s CPU (%.0f MB/s)\n",
	       rounds, n / 1e6, secs, rounds * (n / 1e6) / secs, cpu, rounds * (n / 1e6) / cpu);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_small_figures),
		cmocka_unit_test(test_tree_pruning),
		cmocka_unit_test(test_tiny_5),
		cmocka_unit_test(test_tiny_4_layouts),
		cmocka_unit_test(test_indented_same_summary),
		cmocka_unit_test(test_whitespace_everywhere),
		cmocka_unit_test(test_one_byte_pieces),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_parser_callbacks),
		cmocka_unit_test(test_summary_chain),
		cmocka_unit_test(test_recursion_rule),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_same_depth_prefixes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_not_a_session),
		cmocka_unit_test(test_minimal_and_empty),
		cmocka_unit_test(test_repeated_keys),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_sticky_error),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_markdown_escapes),
		cmocka_unit_test(test_markdown_cap_never_truncates),
		cmocka_unit_test(test_summary_file),
		cmocka_unit_test(bench_real_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
