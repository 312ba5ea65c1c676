/*
 * Recording (src/runs/) never judges a run: the verdict in summary.md and
 * the index line is the one the caller passed (rs_run_set_verdict), so
 * changing `results check`'s defaults cannot change what recording
 * commits. Before the layers were split, rs_run_record ran the check
 * itself and the second identical run got a verdict nobody asked for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "git/repo.h"
#include "runs/run.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

#include "repo_fixture.h"

struct fixture {
	char dir[64];
	struct rs_repo *repo;
	struct rs_buf session; /* path of a copy of a real session */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	const char *data = getenv("RS_TEST_DATA");
	struct rs_buf src = RS_BUF_INIT, bytes = RS_BUF_INIT;

	strcpy(fx->dir, "/tmp/test_run_verdict-XXXXXX");
	if (repo_fixture_new(fx->dir, 0, &fx->repo) < 0)
		return -1;
	if (rs_buf_printf(&src, "%s/real_small_pop1k.pyisession", data ? data : "tests/data") < 0)
		return -1;
	if (rs_fs_read_file(&bytes, src.ptr, 1 << 26) < 0)
		return -1;
	if (rs_buf_printf(&fx->session, "%s/in.pyisession", fx->dir) < 0)
		return -1;
	if (rs_fs_write_file_atomic(fx->session.ptr, bytes.ptr, bytes.len) < 0)
		return -1;
	rs_buf_release(&src);
	rs_buf_release(&bytes);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	rs_buf_release(&fx->session);
	if (repo_fixture_free(fx->dir, fx->repo) < 0)
		return -1;
	free(fx);
	return 0;
}

/* Record the fixture's session at `t` with `verdict` (NULL: none given). */
static void record(struct fixture *fx, time_t t, const char *verdict, struct rs_buf *md,
		   struct rs_buf *index)
{
	struct rs_run run;
	struct rs_buf path = RS_BUF_INIT;

	rs_run_init(&run);
	assert_int_equal(rs_run_set_commit(&run, "abcdef7890123456789012345678901234567890"), 0);
	assert_int_equal(rs_run_set_trigger(&run, "ci"), 0);
	assert_int_equal(rs_run_set_branch(&run, "main"), 0);
	rs_run_set_time(&run, t);
	assert_int_equal(rs_run_detect_machine(&run), 0);
	assert_int_equal(rs_run_add_path(&run, fx->repo, fx->session.ptr), 0);
	assert_int_equal(rs_run_set_verdict(&run, verdict), 0);
	assert_int_equal(rs_run_record(&run, fx->repo, NULL), 0);
	assert_int_equal(rs_buf_printf(&path, "%s/summary.md", run.folder), 0);
	rs_buf_clear(md);
	assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL, path.ptr, 1 << 24, md), 0);
	rs_buf_clear(index);
	assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL, "index/2026-12.jsonl", 1 << 24,
						index), 0);
	rs_buf_release(&path);
	rs_run_release(&run);
}

static void test_no_verdict_unless_given(void **state)
{
	struct fixture *fx = *state;
	struct rs_buf md = RS_BUF_INIT, index = RS_BUF_INIT;

	record(fx, 1796097200, NULL, &md, &index);
	assert_null(strstr(md.ptr, "**Verdict**"));
	/* the same session again, later, same branch: `check` has a baseline
	   now, but recording does not ask it */
	record(fx, 1796097260, NULL, &md, &index);
	assert_null(strstr(md.ptr, "**Verdict**"));
	assert_null(strstr(index.ptr, "\"verdict\""));
	/* a verdict given is written as given, escaped, under the title */
	record(fx, 1796097320, "+5% vs abcdef7 <b>|x", &md, &index);
	assert_non_null(strstr(md.ptr, "\n\n**Verdict** (against the earlier comparable runs): "
				       "+5% vs abcdef7 &lt;b&gt;\\|x\n\n| | |\n"));
	assert_non_null(strstr(index.ptr, "\"verdict\":\"+5% vs abcdef7 <b>|x\""));
	rs_buf_release(&md);
	rs_buf_release(&index);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_verdict_unless_given, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
