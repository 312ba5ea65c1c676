/*
 * Allocation-failure injection: the session parser (the summary), the
 * session codec (encode and decode), the store's format parsers
 * (manifest, index), the run record's builder and encoder, the
 * writers of the committed index lines (a run's line, a branch map's
 * line), the JSON of `compare`, `compare --deep`, `check` and `trend
 * --all-metrics` (rs_render_diff, rs_render_deep, rs_check_run and
 * rs_render_check, rs_trend_build and rs_render_trend), the change
 * points, an index entry's run document,
 * and a whole store put and get on a folder remote are
 * run again and again with the Nth allocation failing, N = 1, 2, ...
 * until a run completes without reaching N. Every run must either
 * succeed with the right result (a fallback is allowed: the codec may
 * decline, the store then takes the generic path) or return an error
 * whose message says memory ran out; none may crash, and under
 * AddressSanitizer none may leak (LeakSanitizer checks at exit).
 *
 * The allocator is wrapped at link time (tests/CMakeLists.txt links this
 * test with -Wl,--wrap=malloc and the others below), so every allocation
 * of the library's own code is counted, whichever thread makes it;
 * jansson's go through json_set_alloc_funcs. zstd's and libc's internal
 * ones are not counted. The number of distinct call sites whose failure
 * was exercised is printed at the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/check.h"
#include "analysis/culprit.h"
#include "analysis/deep.h"
#include "analysis/diff.h"
#include "analysis/render.h"
#include "analysis/series.h"
#include "codec/session_codec.h"
#include "remote/remote.h"
#include "runrec/runrec.h"
#include "runs/branchmap.h"
#include "runs/runindex.h"
#include "runs/runs.h"
#include "results/buf.h"
#include "results/error.h"
#include "session/summary.h"
#include "store/format.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/hash.h"

#include "store_fixture.h"

/* ---- the counting allocator ---------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_realpath(const char *path, char *resolved);

static atomic_long oom_count;   /* allocations since the run was armed */
static atomic_long oom_fail_at; /* fail this one (1-based); 0: never */
static atomic_int oom_hit;      /* the failure was injected in this run */

#define SITES_MAX 8192
static void *sites[SITES_MAX]; /* distinct callers whose failure was injected */
static size_t nsites;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_site(void *caller)
{
	size_t i;

	pthread_mutex_lock(&sites_lock);
	for (i = 0; i < nsites && sites[i] != caller; i++)
		;
	if (i == nsites && nsites < SITES_MAX)
		sites[nsites++] = caller;
	pthread_mutex_unlock(&sites_lock);
}

/* Whether this allocation is the one to fail; `caller` is recorded if so. */
static int fail_now(void *caller)
{
	long at = atomic_load(&oom_fail_at);

	if (!at || atomic_fetch_add(&oom_count, 1) + 1 != at)
		return 0;
	atomic_store(&oom_hit, 1);
	note_site(caller);
	errno = ENOMEM;
	return 1;
}

void *__wrap_malloc(size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_strndup(s, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? ENOMEM : __real_posix_memalign(p, align, n);
}

char *__wrap_realpath(const char *path, char *resolved)
{
	/* Only realpath(path, NULL) allocates. */
	if (!resolved && fail_now(__builtin_return_address(0)))
		return NULL;
	return __real_realpath(path, resolved);
}

static void *json_counted_malloc(size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __real_malloc(n);
}

static void json_counted_free(void *p)
{
	free(p);
}

/* ---- the driver ---------------------------------------------------------- */

/*
 * One operation under test: 0 and its result checked (the callee
 * asserts), or the error it returned. `ctx` is the test's.
 */
typedef int (*oom_op)(void *ctx);

struct oom_tally {
	const char *what;
	long runs, failed, recovered; /* recovered: an injected failure, yet success */
};

/*
 * Run `op` with allocation N failing for N = 1, 2, ... until a run ends
 * before reaching N (then it must have succeeded). Each failed run must
 * return a negative code and say "memory" (out of memory); what else it
 * says is printed when it does not. The counts are added to `t`.
 */
static void oom_runs(struct oom_tally *t, oom_op op, void *ctx, long max_runs)
{
	const char *what = t->what;
	long n;

	for (n = 1; n <= max_runs; n++) {
		int err, hit;

		rs_error_clear();
		atomic_store(&oom_count, 0);
		atomic_store(&oom_hit, 0);
		atomic_store(&oom_fail_at, n);
		err = op(ctx);
		atomic_store(&oom_fail_at, 0);
		hit = atomic_load(&oom_hit);
		if (!hit) {
			if (err)
				fail_msg("%s: no allocation failed, yet: %s", what, rs_error_message());
			break;
		}
		t->runs++;
		if (!err) {
			t->recovered++;
			continue;
		}
		t->failed++;
		if (err >= 0 || !*rs_error_message())
			fail_msg("%s: allocation %ld failed: code %d and no message", what, n, err);
		if (!strstr(rs_error_message(), "memory"))
			fail_msg("%s: allocation %ld failed, the error does not say so: '%s'", what, n,
				 rs_error_message());
	}
	if (n > max_runs)
		fail_msg("%s: still allocating after %ld runs", what, max_runs);
}

static void oom_print(const struct oom_tally *t)
{
	print_message("%s: %ld allocations failed one at a time (%ld errors, %ld recovered)\n",
		      t->what, t->runs, t->failed, t->recovered);
}

/* oom_runs over one operation, and its counts printed. */
static void oom_loop(const char *what, oom_op op, void *ctx, long max_runs)
{
	struct oom_tally t = { what, 0, 0, 0 };

	oom_runs(&t, op, ctx, max_runs);
	oom_print(&t);
}

static void data_path(char *out, size_t n, const char *name)
{
	const char *dir = getenv("RS_TEST_DATA");

	assert_non_null(dir);
	snprintf(out, n, "%s/%s", dir, name);
}

#define SESSION "tiny_pyinstrument_5.1.2.pyisession"

/* ---- the session parser -------------------------------------------------- */

struct summary_case {
	char path[512];
	json_t *want;
};

static int summary_op(void *ctx)
{
	struct summary_case *c = ctx;
	json_t *got = NULL;
	int err = rs_summary_file(c->path, NULL, &got);

	if (err)
		return err;
	atomic_store(&oom_fail_at, 0); /* the check itself must not fail */
	assert_true(json_equal(got, c->want));
	json_decref(got);
	return 0;
}

static void test_session_parser(void **state)
{
	struct summary_case c;

	(void)state;
	data_path(c.path, sizeof(c.path), SESSION);
	assert_int_equal(rs_summary_file(c.path, NULL, &c.want), 0);
	oom_loop("session summary", summary_op, &c, 100000);
	json_decref(c.want);
}

/* ---- the codec ----------------------------------------------------------- */

struct codec_case {
	char path[512];
	struct rs_id oid;
	uint64_t size;
	struct rs_buf session, container;
};

static int encode_op(void *ctx)
{
	struct codec_case *c = ctx;
	struct rs_buf out = RS_BUF_INIT;
	int applies = 0, err;

	err = rs_codec_encode_file(&out, &applies, c->path, c->size, &c->oid, NULL, NULL);
	atomic_store(&oom_fail_at, 0);
	if (!err && applies) {
		assert_int_equal(out.len, c->container.len);
		assert_memory_equal(out.ptr, c->container.ptr, out.len);
	}
	rs_buf_release(&out);
	return err;
}

static int collect(void *ctx, const void *p, size_t n)
{
	return rs_buf_put(ctx, p, n);
}

static int decode_op(void *ctx)
{
	struct codec_case *c = ctx;
	struct rs_buf out = RS_BUF_INIT;
	int err;

	err = rs_codec_decode((const unsigned char *)c->container.ptr, c->container.len, c->size,
			      collect, &out);
	atomic_store(&oom_fail_at, 0);
	if (!err) {
		assert_int_equal(out.len, c->session.len);
		assert_memory_equal(out.ptr, c->session.ptr, out.len);
	}
	rs_buf_release(&out);
	return err;
}

static void codec_case_init(struct codec_case *c)
{
	int applies = 0;

	memset(c, 0, sizeof(*c));
	data_path(c->path, sizeof(c->path), SESSION);
	test_file_id(c->path, &c->oid, &c->size);
	assert_int_equal(rs_fs_read_file(&c->session, c->path, 1u << 30), 0);
	assert_int_equal(rs_codec_encode_file(&c->container, &applies, c->path, c->size, &c->oid,
					      NULL, NULL), 0);
	assert_int_equal(applies, 1);
}

static void codec_case_release(struct codec_case *c)
{
	rs_buf_release(&c->session);
	rs_buf_release(&c->container);
}

static void test_codec_encode(void **state)
{
	struct codec_case c;

	(void)state;
	codec_case_init(&c);
	oom_loop("codec encode", encode_op, &c, 100000);
	codec_case_release(&c);
}

static void test_codec_decode(void **state)
{
	struct codec_case c;

	(void)state;
	codec_case_init(&c);
	oom_loop("codec decode", decode_op, &c, 100000);
	codec_case_release(&c);
}

/* ---- the store ----------------------------------------------------------- */

struct store_case {
	struct store_fixture *f;
	char path[512];
	struct rs_id oid;
	uint64_t size;
	int round;
	struct rs_buf manifest, idx;
	struct rs_id pack;
};

/* A put into a fresh folder remote and cache, opened inside the run. */
static int put_op(void *ctx)
{
	struct store_case *c = ctx;
	struct rs_store_options o = { 0 };
	struct rs_remote *remote = NULL;
	struct rs_store *s = NULL;
	char dir[600], cache[600];
	int err;

	c->round++;
	snprintf(dir, sizeof(dir), "%s/put-%d", c->f->dir, c->round);
	snprintf(cache, sizeof(cache), "%s/cache-%d", c->f->dir, c->round);
	o.cache_dir = cache;
	o.threads = 2;
	err = rs_remote_folder_open(&remote, dir, NULL);
	if (err)
		return err;
	err = rs_store_open(&s, remote, &o);
	if (!err)
		err = rs_store_put_file(s, &c->oid, c->size, c->path, NULL, NULL, NULL);
	rs_store_free(s);
	rs_remote_free(remote);
	return err;
}

/* A get from the fixture's remote (pushed once beforehand) into a fresh file. */
static int get_op(void *ctx)
{
	struct store_case *c = ctx;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	char dest[600];
	int err;

	c->round++;
	snprintf(dest, sizeof(dest), "%s/got-%d", c->f->dir, c->round);
	o.threads = 2;
	err = rs_store_open(&s, c->f->remote, &o);
	if (!err)
		err = rs_store_get_file(s, &c->oid, c->size, dest, NULL, NULL);
	rs_store_free(s);
	atomic_store(&oom_fail_at, 0);
	if (!err)
		assert_true(test_files_equal(c->path, dest));
	else
		assert_int_equal(access(dest, F_OK), -1); /* nothing left behind */
	unlink(dest);
	return err;
}

static int manifest_op(void *ctx)
{
	struct store_case *c = ctx;
	struct rs_manifest m;
	int err;

	memset(&m, 0, sizeof(m));
	err = rs_manifest_parse(&m, &c->oid, (const unsigned char *)c->manifest.ptr, c->manifest.len);
	atomic_store(&oom_fail_at, 0);
	if (!err) {
		assert_int_equal(m.size, c->size);
		rs_manifest_release(&m);
	}
	return err;
}

static int idx_op(void *ctx)
{
	struct store_case *c = ctx;
	struct rs_chunk_ref *refs = NULL;
	size_t n = 0;
	int err;

	err = rs_idx_parse(&refs, &n, &c->pack, (const unsigned char *)c->idx.ptr, c->idx.len);
	atomic_store(&oom_fail_at, 0);
	if (!err)
		assert_true(n > 0);
	free(refs);
	return err;
}

static int setup(void **state)
{
	return store_fixture_setup(state, "oom", STORE_FIXTURE_MKDIR);
}

static int teardown(void **state)
{
	return store_fixture_teardown(state);
}

/* `c` for the session, pushed once without injection to the fixture's remote. */
static void store_case_init(struct store_case *c, struct store_fixture *f)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;

	memset(c, 0, sizeof(*c));
	c->f = f;
	data_path(c->path, sizeof(c->path), SESSION);
	test_file_id(c->path, &c->oid, &c->size);
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_put_file(s, &c->oid, c->size, c->path, NULL, NULL, NULL), 0);
	rs_store_free(s);
}

static void test_store_put(void **state)
{
	struct store_case c;

	store_case_init(&c, *state);
	oom_loop("store put", put_op, &c, 100000);
}

static void test_store_get(void **state)
{
	struct store_case c;

	store_case_init(&c, *state);
	oom_loop("store get", get_op, &c, 100000);
}

static void test_store_format_parsers(void **state)
{
	struct store_case c;
	struct rs_buf key = RS_BUF_INIT, list = RS_BUF_INIT;
	char hex[RS_ID_HEXSZ + 1], path[900];
	FILE *ls;

	store_case_init(&c, *state);
	rs_buf_init(&c.manifest, 1u << 24);
	rs_buf_init(&c.idx, 1u << 24);
	assert_int_equal(rs_key_manifest(&key, &c.oid), 0);
	assert_int_equal(c.f->remote->get(c.f->remote, key.ptr, 0, UINT64_MAX, &c.manifest), 0);
	/* The one pack of the push: its .idx is the one file in packs/ ending so. */
	snprintf(path, sizeof(path), "ls %s/packs | sed -n 's/\\.idx$//p'", c.f->remote_dir);
	ls = popen(path, "r");
	assert_non_null(ls);
	assert_non_null(fgets(hex, sizeof(hex), ls));
	assert_int_equal(pclose(ls), 0);
	assert_int_equal(rs_id_from_hex(&c.pack, hex, RS_ID_HEXSZ), 0);
	assert_int_equal(rs_key_idx(&key, &c.pack), 0);
	assert_int_equal(c.f->remote->get(c.f->remote, key.ptr, 0, UINT64_MAX, &c.idx), 0);
	oom_loop("manifest parse", manifest_op, &c, 100000);
	oom_loop("index parse", idx_op, &c, 100000);
	rs_buf_release(&key);
	rs_buf_release(&list);
	rs_buf_release(&c.manifest);
	rs_buf_release(&c.idx);
}

/* ---- the run record: builder and encoder --------------------------------- */

/*
 * A record with every part the builder makes (as the analysis tests
 * build their runs), then encoded: each failure must leave a record that
 * frees whole, and an encoding that succeeded must decode.
 */
static int build_op(void *ctx)
{
	struct rs_runrec_value v = { .kind = RS_RUNREC_REAL, .d = 10 };
	struct rs_runrec_value s = { .kind = RS_RUNREC_STRING, .s = "x" };
	struct rs_runrec_function f = { "step", "sim.py", 40, "Model", 6, 9.5, 6000, 9500 };
	struct rs_runrec_summary *sum = NULL;
	struct rs_runrec_node *node = NULL;
	struct rs_buf text = RS_BUF_INIT;
	rs_runrec *rec = NULL, *back = NULL;
	int err;

	(void)ctx;
	err = rs_runrec_new(&rec);
	if (err)
		return err;
	err = rs_runrec_set_string(&rec->id, "r1");
	if (err)
		goto out;
	err = rs_runrec_map_set(&rec->metrics, "duration", &v);
	if (err)
		goto out;
	err = rs_runrec_map_set(&rec->metrics, "cpu_time", &v);
	if (err)
		goto out;
	err = rs_runrec_map_set(&rec->stats, "label", &s);
	if (err)
		goto out;
	err = rs_runrec_summary_new(&sum);
	if (err)
		goto out;
	rec->summary = sum;
	err = rs_runrec_add_function(sum, &f);
	if (err)
		goto out;
	err = rs_runrec_node_add(&sum->tree, "main", "run.py", 1, 10, 0.5, &node);
	if (err)
		goto out;
	err = rs_runrec_node_add(node, "step", "sim.py", 40, 9.5, 6, NULL);
	if (err)
		goto out;
	err = rs_runrec_add_more_row(sum, "tiny", "sim.py", 90, 10, 10);
	if (err)
		goto out;
	err = rs_runrec_encode(&text, rec);
	if (err)
		goto out;
	/* what was written must be whole: decoded without failures (jansson's
	 * parser reports a failed allocation as a syntax error) */
	atomic_store(&oom_fail_at, 0);
	if (rs_runrec_decode(text.ptr, text.len, &back) != 0)
		fail_msg("an encoded record does not decode: %s\n%s", rs_error_message(), text.ptr);
	assert_string_equal(back->summary->more.rows[0].function, "tiny");
	assert_string_equal(back->summary->tree.children[0].children[0].function, "step");
out:
	rs_runrec_free(back);
	rs_runrec_free(rec);
	rs_buf_release(&text);
	return err;
}

static void test_run_record_build_encode(void **state)
{
	(void)state;
	oom_loop("run record build and encode", build_op, NULL, 100000);
}

/* ---- the index lines: what `results add` commits ------------------------ */

/*
 * A line that is written must be the line: jansson 2.14 drops a key whose
 * write failed and still reports success (akheron/jansson#655), so each
 * line written under an injected failure is compared, byte for byte, with
 * the one written without. Whether a key's write is the one that grows
 * the text depends on the lengths before it, so the lines are written for
 * branch names of 1 to 32 bytes.
 */
#define LINE_BRANCHES 32

struct line_case {
	struct rs_run_entry run;
	struct rs_map_entry branch;
	struct rs_buf want;
};

static int run_line_op(void *ctx)
{
	struct line_case *c = ctx;
	struct rs_buf line = RS_BUF_INIT;
	int err;

	err = rs_run_entry_to_line(&line, &c->run);
	if (err)
		goto out;
	atomic_store(&oom_fail_at, 0);
	if (strcmp(line.ptr, c->want.ptr))
		fail_msg("an index line written under a failed allocation is not the line:\n"
			 "%s\nwanted:\n%s", line.ptr, c->want.ptr);
out:
	rs_buf_release(&line);
	return err;
}

static int branch_line_op(void *ctx)
{
	struct line_case *c = ctx;
	struct rs_buf line = RS_BUF_INIT;
	int err;

	err = rs_map_entry_to_line(&line, &c->branch, RS_MAP_BRANCHES);
	if (err)
		goto out;
	atomic_store(&oom_fail_at, 0);
	if (strcmp(line.ptr, c->want.ptr))
		fail_msg("a branch map line written under a failed allocation is not the line:\n"
			 "%s\nwanted:\n%s", line.ptr, c->want.ptr);
out:
	rs_buf_release(&line);
	return err;
}

static void test_index_lines(void **state)
{
	struct rs_map_shard shards[] = { { "2026-11", 2, 128 }, { "2026-10", 1, 40 } };
	struct oom_tally run_t = { "run index line", 0, 0, 0 };
	struct oom_tally branch_t = { "branch map line", 0, 0, 0 };
	char branch[LINE_BRANCHES + 1] = "";
	struct line_case c = { 0 };

	(void)state;
	c.run.id = "20261130-093012-push-abc1234";
	c.run.commit = "abc1234def5678abc1234def5678abc1234def56";
	c.run.branch = branch;
	c.run.trigger = "push";
	c.run.recorded_at = "2026-11-30T09:30:12Z";
	c.run.path = "runs/2026/11/20261130-093012-push-abc1234";
	c.run.verdict = "+13% vs c1d2e3f: new call g -> f (4.1 s)";
	c.run.metrics = json_pack("{s:f, s:f, s:i}", "duration", 12.25, "cpu_time", 11.5,
				  "peak_rss", (json_int_t)123456789);
	assert_non_null(c.run.metrics);
	c.branch.key = branch;
	c.branch.shards = shards;
	c.branch.count = 2;
	c.branch.more = 1;
	for (size_t len = 1; len <= LINE_BRANCHES; len++) {
		branch[len - 1] = 'b';
		rs_buf_clear(&c.want);
		assert_int_equal(rs_run_entry_to_line(&c.want, &c.run), 0);
		oom_runs(&run_t, run_line_op, &c, 100000);
		rs_buf_clear(&c.want);
		assert_int_equal(rs_map_entry_to_line(&c.want, &c.branch, RS_MAP_BRANCHES), 0);
		oom_runs(&branch_t, branch_line_op, &c, 100000);
	}
	oom_print(&run_t);
	oom_print(&branch_t);
	json_decref(c.run.metrics);
	rs_buf_release(&c.want);
}

/* ---- compare's JSON: the diff and the deep diff ---------------------------- */

/*
 * `results compare --format json` (and --deep): the document is built
 * with jansson's constructors, then written. A key whose value or whose
 * insertion failed to allocate must make the rendering an error, never a
 * document without the key, so each document written under an injected
 * failure is compared, byte for byte, with the one written without.
 */
struct render_case {
	struct rs_diff diff;
	struct rs_deep_diff deep;
	struct rs_buf want;
};

/*
 * Fail unless `got` is `want`, showing where they part (cmocka cuts a
 * long message: a whole document would hide the place).
 */
static void same_document(const char *what, const char *got, const char *want)
{
	size_t at = 0, from;

	atomic_store(&oom_fail_at, 0);
	while (got[at] && got[at] == want[at])
		at++;
	if (!got[at] && !want[at])
		return;
	from = at > 120 ? at - 120 : 0;
	fail_msg("%s written under a failed allocation is not the document; at byte %zu it has\n"
		 "%.240s\nwhere the document has\n%.240s", what, at, got + from, want + from);
}

static int render_check(const struct render_case *c, const struct rs_buf *got, const char *what)
{
	same_document(what, got->ptr, c->want.ptr);
	return 0;
}

static int diff_json_op(void *ctx)
{
	struct render_case *c = ctx;
	struct rs_buf got = RS_BUF_INIT;
	int err;

	err = rs_render_diff(&got, &c->diff, RS_FORMAT_JSON, 0);
	if (!err)
		err = render_check(c, &got, "compare's JSON");
	rs_buf_release(&got);
	return err;
}

static int deep_json_op(void *ctx)
{
	struct render_case *c = ctx;
	struct rs_buf got = RS_BUF_INIT;
	int err;

	err = rs_render_deep(&got, &c->deep, RS_FORMAT_JSON, 0);
	if (!err)
		err = render_check(c, &got, "compare --deep's JSON");
	rs_buf_release(&got);
	return err;
}

static void test_compare_json(void **state)
{
	struct rs_metric_delta metrics[] = {
		{ "duration", 10, 12.5, 2.5, 0.25, 0 },
		{ "mem.peak_mb", 0, 40, 40, NAN, 0 },
		{ "duration/months", 0.5, 0.625, 0.125, 0.25, 1 },
	};
	struct rs_func_delta funcs[] = {
		{ .change = RS_FUNC_NEW, .function = "trace_contacts", .file = "sim/contacts.py",
		  .line = 88, .head_self = 2, .head_total = 2.5, .head_self_share = 0.16,
		  .head_total_share = 0.2, .own = 1, .base_below = 0.005 },
		{ .change = RS_FUNC_RENAMED, .function = "apply", .old_function = "apply_event",
		  .file = "sim/events.py", .line = 12, .base_self = 1, .head_self = 1.25,
		  .base_total = 3, .head_total = 3.5, .base_self_share = 0.1,
		  .head_self_share = 0.1, .base_total_share = 0.3, .head_total_share = 0.28,
		  .own = 1, .probable = 1 },
		{ .change = RS_FUNC_CHANGED, .function = "MainThread", .file = "<thread>",
		  .line = 140233, .base_total = 10, .head_total = 12.5, .base_total_share = 1,
		  .head_total_share = 1, .root = 1, .wrapper = 1 },
	};
	struct rs_culprit culprit[] = {
		{ RS_CULPRIT_NEW_CALL, "trace_contacts", "sim/contacts.py", 88, "apply", 2.5, 2.5,
		  0, 0.2, 1, "run > apply > trace_contacts" },
		{ RS_CULPRIT_OWN_BODY, "apply", "sim/events.py", 12, NULL, 0.25, 1.25, 1, 0.02, 1,
		  NULL },
	};
	struct rs_culprits culprits = { culprit, 2, 2.5, 0, 0 };
	struct rs_path_delta paths[] = {
		{ "MainThread (<thread>) > run (sim.py)", 2, 3, 10, 12.5, 0, 0 },
		{ "MainThread (<thread>) > run (sim.py) > trace_contacts (sim/contacts.py)", 3, 14,
		  0, 2.5, 0, 2 },
	};
	struct rs_deep_func new_funcs[] = { { "trace_contacts (sim/contacts.py)", 2.5 } };
	struct render_case c = { 0 };

	(void)state;
	c.diff.base_id = "20261129-101500-push-c1d2e3f";
	c.diff.head_id = "20261130-093012-push-abc1234";
	c.diff.base_commit = "c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0";
	c.diff.head_commit = "abc1234def5678abc1234def5678abc1234def56";
	c.diff.workload_key = "months";
	c.diff.base_workload = 20;
	c.diff.head_workload = 20;
	c.diff.metrics = metrics;
	c.diff.n_metrics = sizeof(metrics) / sizeof(metrics[0]);
	c.diff.funcs = funcs;
	c.diff.n_funcs = sizeof(funcs) / sizeof(funcs[0]);
	c.diff.n_uncompared = 4;
	c.diff.n_below = 1;
	c.diff.culprits = &culprits;
	c.deep.base_time = 10;
	c.deep.head_time = 12.5;
	c.deep.paths = paths;
	c.deep.n_paths = sizeof(paths) / sizeof(paths[0]);
	c.deep.new_funcs = new_funcs;
	c.deep.n_new = 1;
	c.deep.n_renamed = 1;

	assert_int_equal(rs_render_diff(&c.want, &c.diff, RS_FORMAT_JSON, 0), 0);
	assert_non_null(strstr(c.want.ptr, "\"culprits_from\": \"summaries\""));
	oom_loop("compare's JSON", diff_json_op, &c, 100000);
	rs_buf_clear(&c.want);
	assert_int_equal(rs_render_deep(&c.want, &c.deep, RS_FORMAT_JSON, 0), 0);
	assert_non_null(strstr(c.want.ptr, "\"renames_applied\": 1"));
	oom_loop("compare --deep's JSON", deep_json_op, &c, 100000);
	rs_buf_release(&c.want);
}

/*
 * `results trend --all-metrics --format json` over three runs, built and
 * written with each allocation failing: a metric left out of the set of
 * names, or a key of the document, would be a shorter document written
 * as a success, so each one written is compared with the one written
 * without a failure.
 */
struct trend_case {
	rs_runrec *recs[3];
	struct rs_trend_run runs[3];
	struct rs_buf want;
};

static int trend_json_op(void *ctx)
{
	static const char *const names[] = { "duration" };
	struct trend_case *c = ctx;
	struct rs_trend_opts o = { .metrics = names, .n_metrics = 1, .all_metrics = 1 };
	struct rs_trend *t = NULL;
	struct rs_buf got = RS_BUF_INIT;
	int err;

	err = rs_trend_build(&t, c->runs, 3, &o);
	if (err)
		goto out;
	err = rs_render_trend(&got, t, RS_FORMAT_JSON);
	if (err)
		goto out;
	same_document("trend's JSON", got.ptr, c->want.ptr);
out:
	rs_trend_free(t);
	rs_buf_release(&got);
	return err;
}

static void test_trend_json(void **state)
{
	static const char *const metrics[] = { "duration", "cpu_time", "mem.peak_mb", "io.read_mb" };
	char id[32], commit[41], when[32];
	struct trend_case c = { 0 };

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rs_runrec_new(&c.recs[i]), 0);
		snprintf(id, sizeof(id), "2026112%d-093012-push-abc123%d", i, i);
		snprintf(commit, sizeof(commit), "abc123%d%033d", i, i);
		snprintf(when, sizeof(when), "2026-11-2%dT09:30:12Z", i);
		assert_int_equal(rs_runrec_set_string(&c.recs[i]->id, id), 0);
		assert_int_equal(rs_runrec_set_string(&c.recs[i]->commit, commit), 0);
		assert_int_equal(rs_runrec_set_string(&c.recs[i]->recorded_at, when), 0);
		/* each run a metric more: the later names are seen in later runs */
		for (int m = 0; m < 2 + i; m++) {
			struct rs_runrec_value v = { .kind = RS_RUNREC_REAL, .d = 10 + i + m };

			assert_int_equal(rs_runrec_map_set(&c.recs[i]->metrics, metrics[m], &v), 0);
		}
		c.runs[i].rec = c.recs[i];
	}
	{
		static const char *const names[] = { "duration" };
		struct rs_trend_opts o = { .metrics = names, .n_metrics = 1, .all_metrics = 1 };
		struct rs_trend *t = NULL;

		assert_int_equal(rs_trend_build(&t, c.runs, 3, &o), 0);
		assert_int_equal(rs_render_trend(&c.want, t, RS_FORMAT_JSON), 0);
		rs_trend_free(t);
	}
	assert_non_null(strstr(c.want.ptr, "\"name\": \"io.read_mb\""));
	oom_loop("trend's JSON", trend_json_op, &c, 100000);
	for (int i = 0; i < 3; i++)
		rs_runrec_free(c.recs[i]);
	rs_buf_release(&c.want);
}

/*
 * `results check --format json`: a head that got slower against three
 * earlier runs, checked and written with each allocation failing; each
 * document written must be the one written without a failure.
 */
struct check_case {
	rs_runrec *head, *hist[3];
	struct rs_buf want;
};

static rs_runrec *check_record(const char *id, const char *commit, double duration,
			       double births)
{
	struct rs_runrec_function fns[] = {
		{ "main", "model/run.py", 1, NULL, 0.5, duration, 500, (int64_t)(duration * 1000) },
		{ "step", "model/sim.py", 40, NULL, 6, duration - 1, 6000,
		  (int64_t)((duration - 1) * 1000) },
		{ "apply_births", "model/births.py", 12, NULL, births, births,
		  (int64_t)(births * 1000), (int64_t)(births * 1000) },
	};
	struct rs_runrec_value d = { .kind = RS_RUNREC_REAL, .d = duration };
	struct rs_runrec_value c = { .kind = RS_RUNREC_REAL, .d = duration * 0.98 };
	struct rs_runrec_summary *sum = NULL;
	rs_runrec *r = NULL;

	assert_int_equal(rs_runrec_new(&r), 0);
	assert_int_equal(rs_runrec_set_string(&r->id, id), 0);
	assert_int_equal(rs_runrec_set_string(&r->commit, commit), 0);
	assert_int_equal(rs_runrec_set_string(&r->branch, "main"), 0);
	assert_int_equal(rs_runrec_set_string(&r->recorded_at, "2026-11-30T09:30:12Z"), 0);
	assert_int_equal(rs_runrec_set_string(&r->machine.runner, "ci-1"), 0);
	assert_int_equal(rs_runrec_map_set(&r->metrics, "duration", &d), 0);
	assert_int_equal(rs_runrec_map_set(&r->metrics, "cpu_time", &c), 0);
	assert_int_equal(rs_runrec_summary_new(&sum), 0);
	r->summary = sum;
	sum->duration.present = 1;
	sum->duration.v = duration;
	sum->samples = (int64_t)(duration * 1000);
	sum->sampled_time = duration;
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(rs_runrec_add_function(sum, &fns[i]), 0);
	sum->distinct_functions = 3;
	return r;
}

static int check_write(struct rs_buf *out, const struct check_case *c)
{
	struct rs_check_result *r = NULL;
	int err;

	err = rs_check_run(&r, c->head, (const rs_runrec *const *)c->hist, 3, NULL);
	if (!err)
		err = rs_render_check(out, r, RS_FORMAT_JSON);
	rs_check_free(r);
	return err;
}

static int check_json_op(void *ctx)
{
	struct check_case *c = ctx;
	struct rs_buf got = RS_BUF_INIT;
	int err;

	err = check_write(&got, c);
	if (!err)
		same_document("check's JSON", got.ptr, c->want.ptr);
	rs_buf_release(&got);
	return err;
}

static void test_check_json(void **state)
{
	struct check_case c = { 0 };

	(void)state;
	c.hist[0] = check_record("r3", "c2", 10, 3.5);
	c.hist[1] = check_record("r2", "c1", 10.1, 3.5);
	c.hist[2] = check_record("r1", "c0", 9.9, 3.5);
	c.head = check_record("r4", "c3", 12, 5.5);
	assert_int_equal(check_write(&c.want, &c), 0);
	assert_non_null(strstr(c.want.ptr, "\"regressed\": true"));
	assert_non_null(strstr(c.want.ptr, "\"diff\": {"));
	oom_loop("check's JSON", check_json_op, &c, 100000);
	rs_runrec_free(c.head);
	for (int i = 0; i < 3; i++)
		rs_runrec_free(c.hist[i]);
	rs_buf_release(&c.want);
}

/*
 * The change points (trend) and the largest step (`results find`): a
 * failed allocation is an error, never an answer of no step (find said
 * "fewer than two runs") or of steps the noise test would not keep.
 */
static int changepoint_op(void *ctx)
{
	static const double v[] = { 10, 10.2, 9.9, 10.1, 12, 12.1, 11.9, 12.2 };
	size_t at = 0, cps[8], n = 0;
	int err;

	(void)ctx;
	err = rs_changepoint_best(&at, v, 8, NULL, NULL);
	if (err)
		return err;
	err = rs_changepoints(&n, v, 8, 0.05, cps, 8);
	if (err)
		return err;
	atomic_store(&oom_fail_at, 0);
	assert_int_equal(at, 4);
	assert_int_equal(n, 1);
	assert_int_equal(cps[0], 4);
	return 0;
}

static void test_changepoints(void **state)
{
	(void)state;
	oom_loop("change points", changepoint_op, NULL, 100000);
}

/*
 * An index entry as a run document (`results list --format json`, the
 * pages): an object that is made must have every key of the entry.
 */
static int entry_object_op(void *ctx)
{
	const struct rs_run_entry *e = ctx;
	json_t *o = rs_run_entry_object(e);

	if (!o)
		return RS_EGENERIC; /* the message is set */
	atomic_store(&oom_fail_at, 0);
	if (json_object_size(o) != 7 || !json_object_get(o, "metrics") ||
	    strcmp(json_string_value(json_object_get(o, "path")), e->path))
		fail_msg("an index entry's object made under a failed allocation lacks a key (%zu)",
			 json_object_size(o));
	json_decref(o);
	return 0;
}

static void test_run_entry_object(void **state)
{
	struct rs_run_entry e = { 0 };

	(void)state;
	e.id = "20261130-093012-push-abc1234";
	e.commit = "abc1234def5678abc1234def5678abc1234def56";
	e.branch = "main";
	e.trigger = "push";
	e.recorded_at = "2026-11-30T09:30:12Z";
	e.path = "runs/2026/11/20261130-093012-push-abc1234";
	e.metrics = json_pack("{s:f}", "duration", 12.25);
	assert_non_null(e.metrics);
	oom_loop("index entry object", entry_object_op, &e, 100000);
	json_decref(e.metrics);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session_parser),
		cmocka_unit_test(test_codec_encode),
		cmocka_unit_test(test_codec_decode),
		cmocka_unit_test(test_run_record_build_encode),
		cmocka_unit_test(test_index_lines),
		cmocka_unit_test(test_compare_json),
		cmocka_unit_test(test_check_json),
		cmocka_unit_test(test_trend_json),
		cmocka_unit_test(test_changepoints),
		cmocka_unit_test(test_run_entry_object),
		cmocka_unit_test_setup_teardown(test_store_format_parsers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_put, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_get, setup, teardown),
	};
	int failed;

	json_set_alloc_funcs(json_counted_malloc, json_counted_free);
	failed = cmocka_run_group_tests(tests, NULL, NULL);
	print_message("distinct allocation call sites whose failure was exercised: %zu\n", nsites);
	return failed;
}
