/*
 * Unit tests of src/runs/run.c: input validation, run.json and summary.md
 * rendering (escaping of user strings), and recording into a real
 * repository: one commit, the LFS object placed, and on a bad input
 * nothing left behind (no commit, no object, no temporary file).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

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

	strcpy(fx->dir, "/tmp/test_run_record-XXXXXX");
	if (repo_fixture_new(fx->dir, 0, &fx->repo) < 0)
		return -1;
	if (rs_buf_printf(&src, "%s/tiny_pyinstrument_5.1.2.pyisession",
			  data ? data : "tests/data") < 0)
		return -1;
	if (rs_fs_read_file(&bytes, src.ptr, 1 << 20) < 0)
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

static void write_text(const char *dir, const char *name, const char *text)
{
	struct rs_buf p = RS_BUF_INIT;

	assert_int_equal(rs_fs_join(&p, dir, name), 0);
	assert_int_equal(rs_fs_write_file_atomic(p.ptr, text, strlen(text)), 0);
	rs_buf_release(&p);
}

/* Regular files under `dir`, recursively (0 for a missing dir). */
static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	for (de = readdir(d); de; de = readdir(d)) {
		char sub[1024];
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (stat(sub, &st) != 0)
			continue;
		n += S_ISDIR(st.st_mode) ? count_files(sub) : 1;
	}
	closedir(d);
	return n;
}

static void test_validation(void **state)
{
	struct rs_run run;

	rs_run_init(&run);
	assert_int_equal(rs_run_set_commit(&run, "abc123"), RS_EUSAGE);
	assert_int_equal(rs_run_set_commit(&run, "zz3456789012345678901234567890123456789z"), RS_EUSAGE);
	assert_int_equal(rs_run_set_commit(&run, "ABCDEF7890123456789012345678901234567890"), 0);
	assert_string_equal(run.commit, "abcdef7890123456789012345678901234567890");
	assert_int_equal(rs_run_set_trigger(&run, ""), RS_EUSAGE);
	assert_int_equal(rs_run_set_trigger(&run, "a/b"), RS_EUSAGE);
	assert_int_equal(rs_run_set_trigger(&run, "a-b"), RS_EUSAGE);
	assert_int_equal(rs_run_set_trigger(&run, "0123456789012345678901234567890123"), RS_EUSAGE);
	assert_int_equal(rs_run_set_trigger(&run, "nightly_2.x"), 0);
	assert_int_equal(rs_run_set_branch(&run, "a\nb"), RS_EUSAGE);
	assert_int_equal(rs_run_set_branch(&run, "feature/x"), 0);
	assert_int_equal(rs_run_add_meta(&run, "novalue"), RS_EUSAGE);
	assert_int_equal(rs_run_add_meta(&run, "=v"), RS_EUSAGE);
	assert_int_equal(rs_run_add_meta(&run, "a b=v"), RS_EUSAGE);
	assert_int_equal(rs_run_add_meta(&run, "k=v=w"), 0);
	assert_int_equal(rs_run_add_meta(&run, "k=x"), 0);
	assert_string_equal(json_string_value(json_object_get(run.meta, "k")), "x");
	rs_run_set_time(&run, 1796097200);
	assert_string_equal(run.recorded_at, "2026-12-01T03:53:20Z");
	rs_run_release(&run);
}

static void test_render_escapes(void **state)
{
	struct rs_run run;
	struct rs_buf md = RS_BUF_INIT, js = RS_BUF_INIT;
	json_t *doc;

	rs_run_init(&run);
	assert_int_equal(rs_run_set_commit(&run, "abcdef7890123456789012345678901234567890"), 0);
	assert_int_equal(rs_run_set_trigger(&run, "ci"), 0);
	assert_int_equal(rs_run_set_branch(&run, "main"), 0);
	assert_int_equal(rs_run_add_meta(&run, "note=a|b <script>"), 0);
	rs_run_set_time(&run, 0);
	run.id = strdup("19700101-000000-ci-abcdef7");
	run.folder = strdup("runs/1970/01/01/000000-ci-abcdef7");
	/* run.json is written through the typed record, which needs the machine */
	assert_int_equal(rs_run_render_json(&js, &run), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "machine lacks the required key"));
	rs_buf_clear(&js);
	assert_int_equal(rs_run_detect_machine(&run), 0);
	assert_int_equal(rs_run_render_markdown(&md, &run), 0);
	assert_non_null(strstr(md.ptr, "a\\|b &lt;script&gt;"));
	assert_null(strstr(md.ptr, "<script>"));
	assert_non_null(strstr(md.ptr, "--raw")); /* no session: says why */
	assert_int_equal(rs_run_render_json(&js, &run), 0);
	doc = json_loads(js.ptr, 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "format")), 1);
	assert_true(json_is_null(json_object_get(doc, "session")));
	assert_true(json_is_null(json_object_get(doc, "summary")));
	assert_true(json_is_null(json_object_get(doc, "message")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "meta"), "note")),
			    "a|b <script>");
	json_decref(doc);
	rs_buf_release(&md);
	rs_buf_release(&js);
	rs_run_release(&run);
}

static void prepare(struct rs_run *run)
{
	rs_run_init(run);
	assert_int_equal(rs_run_set_commit(run, "abcdef7890123456789012345678901234567890"), 0);
	assert_int_equal(rs_run_set_trigger(run, "ci"), 0);
	assert_int_equal(rs_run_set_branch(run, "main"), 0);
	rs_run_set_time(run, 1796097200);
	assert_int_equal(rs_run_detect_machine(run), 0);
}

static void test_record_one_commit(void **state)
{
	struct fixture *fx = *state;
	struct rs_run run;
	struct rs_buf text = RS_BUF_INIT, objdir = RS_BUF_INIT;
	char head[41];
	git_oid oid;
	git_commit *c = NULL;
	json_t *doc;

	prepare(&run);
	assert_int_equal(rs_run_add_path(&run, fx->repo, fx->session.ptr), 0);
	assert_int_equal(run.main_session, 0);
	assert_non_null(run.summary);
	assert_int_equal(rs_run_record(&run, fx->repo, head), 0);
	assert_string_equal(run.id, "20261201-035320-ci-abcdef7");

	/* the commit is HEAD and has no parent (first commit) */
	assert_int_equal(git_reference_name_to_id(&oid, fx->repo->git, "HEAD"), 0);
	assert_int_equal(git_commit_lookup(&c, fx->repo->git, &oid), 0);
	assert_int_equal(git_commit_parentcount(c), 0);
	git_commit_free(c);

	assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL,
		"runs/2026/12/01/035320-ci-abcdef7/in.pyisession", 1024, &text), 0);
	assert_true(strncmp(text.ptr, "version https://git-lfs.github.com/spec/v1\n", 43) == 0);
	rs_buf_clear(&text);
	assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL,
		"runs/2026/12/01/035320-ci-abcdef7/run.json", 1 << 24, &text), 0);
	doc = json_loadb(text.ptr, text.len, 0, NULL);
	assert_non_null(doc);
	/* tiny_pyinstrument_5.1.2 has 54 samples */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "metrics"),
							    "samples")), 54);
	json_decref(doc);
	rs_buf_clear(&text);
	assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL, "index/2026-12.jsonl",
						1 << 20, &text), 0);
	assert_non_null(strstr(text.ptr, "\"id\":\"20261201-035320-ci-abcdef7\""));
	assert_int_equal(rs_repo_lfs_has(fx->repo, &run.files[0].oid, run.files[0].size), 0);
	assert_int_equal(rs_buf_printf(&objdir, "%s/objects", fx->repo->lfs_dir), 0);
	assert_int_equal(count_files(objdir.ptr), 1);
	rs_buf_clear(&objdir);
	assert_int_equal(rs_buf_printf(&objdir, "%s/tmp", fx->repo->lfs_dir), 0);
	assert_int_equal(count_files(objdir.ptr), 0);
	rs_run_release(&run);

	/* the same second again: a unique id */
	prepare(&run);
	assert_int_equal(rs_run_add_path(&run, fx->repo, fx->session.ptr), 0);
	assert_int_equal(rs_run_record(&run, fx->repo, head), 0);
	assert_string_equal(run.id, "20261201-035320-ci-abcdef7-2");
	rs_run_release(&run);
	rs_buf_release(&text);
	rs_buf_release(&objdir);
}

static void test_bad_input_leaves_nothing(void **state)
{
	struct fixture *fx = *state;
	struct rs_run run;
	struct rs_buf lfs = RS_BUF_INIT, path = RS_BUF_INIT;

	write_text(fx->dir, "notes.txt", "not a session\n");
	write_text(fx->dir, "trunc.pyisession", "{\"frame_records\": [[[\"a\\u0000b\\u00001\"], 0.5]");
	prepare(&run);
	assert_int_equal(rs_run_add_path(&run, fx->repo, fx->session.ptr), 0);
	assert_int_equal(rs_buf_printf(&path, "%s/notes.txt", fx->dir), 0);
	assert_int_equal(rs_run_add_path(&run, fx->repo, path.ptr), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "not a pyinstrument session"));
	rs_buf_clear(&path);
	assert_int_equal(rs_buf_printf(&path, "%s/trunc.pyisession", fx->dir), 0);
	assert_int_equal(rs_run_add_path(&run, fx->repo, path.ptr), RS_ECORRUPT);
	/* the same name twice */
	assert_int_equal(rs_run_add_path(&run, fx->repo, fx->session.ptr), RS_EUSAGE);
	assert_int_equal(run.nfiles, 1);
	rs_run_release(&run); /* the caller gives up */

	assert_int_equal(rs_buf_printf(&lfs, "%s", fx->repo->lfs_dir), 0);
	assert_int_equal(count_files(lfs.ptr), 0);
	{
		git_oid oid;

		assert_true(git_reference_name_to_id(&oid, fx->repo->git, "HEAD") < 0);
	}
	/* --raw takes the same text file */
	prepare(&run);
	run.raw = 1;
	rs_buf_clear(&path);
	assert_int_equal(rs_buf_printf(&path, "%s/notes.txt", fx->dir), 0);
	assert_int_equal(rs_run_add_path(&run, fx->repo, path.ptr), 0);
	assert_string_equal(run.files[0].role, "other");
	assert_int_equal(run.files[0].lfs, 0);
	assert_int_equal(rs_run_record(&run, fx->repo, NULL), 0);
	rs_run_release(&run);
	rs_buf_release(&lfs);
	rs_buf_release(&path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_render_escapes),
		cmocka_unit_test_setup_teardown(test_record_one_commit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input_leaves_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
