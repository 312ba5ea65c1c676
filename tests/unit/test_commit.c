/* One-commit writes through libgit2 (git/commit.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "git/commit.h"
#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

#include "repo_fixture.h"

struct fixture {
	char dir[64];
	struct rs_repo *repo;
};

/* `path` is not in the work tree. */
static void assert_absent(struct fixture *fx, const char *path)
{
	struct rs_buf full = RS_BUF_INIT;

	assert_int_equal(rs_buf_printf(&full, "%s/%s", fx->dir, path), 0);
	assert_false(rs_fs_exists(full.ptr));
	rs_buf_release(&full);
}

/* `path` in the work tree written with `text`. */
static void write_worktree(struct fixture *fx, const char *path, const char *text)
{
	struct rs_buf full = RS_BUF_INIT;

	assert_int_equal(rs_buf_printf(&full, "%s/%s", fx->dir, path), 0);
	assert_int_equal(rs_fs_write_file_atomic(full.ptr, text, strlen(text)), 0);
	rs_buf_release(&full);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/test_commit-XXXXXX");
	/* Never read the user's global config. */
	if (repo_fixture_new(fx->dir, REPO_FIXTURE_SEARCH_PATH, &fx->repo) < 0)
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (repo_fixture_free(fx->dir, fx->repo) < 0)
		return -1;
	free(fx);
	return 0;
}

static void head_hex(struct fixture *fx, char *out)
{
	git_oid id;

	if (git_reference_name_to_id(&id, fx->repo->git, "HEAD") < 0)
		strcpy(out, "none");
	else
		git_oid_tostr(out, GIT_OID_HEXSZ + 1, &id);
}

static void assert_file(struct fixture *fx, const char *path, const char *want)
{
	struct rs_buf full = RS_BUF_INIT, got = RS_BUF_INIT;

	assert_int_equal(rs_buf_printf(&full, "%s/%s", fx->dir, path), 0);
	assert_int_equal(rs_fs_read_file(&got, full.ptr, 1 << 20), 0);
	assert_string_equal(got.ptr, want);
	rs_buf_release(&full);
	rs_buf_release(&got);
}

static void assert_tree_file(struct fixture *fx, const char *path, const char *want)
{
	struct rs_buf got = RS_BUF_INIT;

	if (!want) {
		assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL, path, 1 << 20, &got),
				 RS_ENOTFOUND);
	} else {
		assert_int_equal(rs_repo_read_tree_file(fx->repo, NULL, path, 1 << 20, &got), 0);
		assert_string_equal(got.ptr, want);
	}
	rs_buf_release(&got);
}

/* Number of paths `git status` would report (untracked included). */
static size_t status_count(struct fixture *fx)
{
	git_status_list *list = NULL;
	git_status_options opts;
	size_t n;

	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);

	opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
	assert_int_equal(git_status_list_new(&list, fx->repo->git, &opts), 0);
	n = git_status_list_entrycount(list);
	git_status_list_free(list);
	return n;
}

static size_t parent_count(struct fixture *fx)
{
	git_commit *c = NULL;
	git_oid id;
	size_t n;

	assert_int_equal(git_reference_name_to_id(&id, fx->repo->git, "HEAD"), 0);
	assert_int_equal(git_commit_lookup(&c, fx->repo->git, &id), 0);
	n = git_commit_parentcount(c);
	git_commit_free(c);
	return n;
}

static int commit2(struct fixture *fx, const char *p1, const char *d1, const char *p2,
		   const char *d2, char *hex, int *changed)
{
	struct rs_commit_file f[2] = {
		{ p1, d1, d1 ? strlen(d1) : 0, 0, d1 == NULL },
		{ p2, d2, d2 ? strlen(d2) : 0, 0, d2 == NULL },
	};
	struct rs_commit_options o = { "test commit\n\nbody", NULL, NULL, 0 };

	return rs_commit_files(fx->repo, f, p2 ? 2 : 1, &o, hex, changed);
}

static void test_first_commit_on_unborn_branch(void **state)
{
	struct fixture *fx = *state;
	char hex[GIT_OID_HEXSZ + 1], head[GIT_OID_HEXSZ + 1];
	int changed = -1;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", "runs/2026/x/run.json", "{}\n",
				 hex, &changed), 0);
	assert_int_equal(changed, 1);
	head_hex(fx, head);
	assert_string_equal(hex, head);
	assert_int_equal(parent_count(fx), 0);
	assert_tree_file(fx, "a.txt", "alpha\n");
	assert_tree_file(fx, "runs/2026/x/run.json", "{}\n");
	assert_file(fx, "a.txt", "alpha\n");
	assert_file(fx, "runs/2026/x/run.json", "{}\n");
	assert_int_equal(status_count(fx), 0);
}

static void test_replace_add_remove_and_noop(void **state)
{
	struct fixture *fx = *state;
	char first[GIT_OID_HEXSZ + 1], hex[GIT_OID_HEXSZ + 1], head[GIT_OID_HEXSZ + 1];
	int changed = -1;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", "b.txt", "beta\n", first, NULL), 0);
	assert_int_equal(commit2(fx, "a.txt", "alpha 2\n", "dir/c.txt", "gamma\n", hex,
				 &changed), 0);
	assert_int_equal(changed, 1);
	assert_string_not_equal(hex, first);
	assert_int_equal(parent_count(fx), 1);
	assert_tree_file(fx, "a.txt", "alpha 2\n");
	assert_tree_file(fx, "b.txt", "beta\n");
	assert_file(fx, "a.txt", "alpha 2\n");
	assert_int_equal(status_count(fx), 0);

	/* The same content again: no commit. */
	head_hex(fx, head);
	assert_int_equal(commit2(fx, "a.txt", "alpha 2\n", NULL, NULL, hex, &changed), 0);
	assert_int_equal(changed, 0);
	assert_string_equal(hex, head);

	/* Remove. */
	assert_int_equal(commit2(fx, "b.txt", NULL, "nothing-here", NULL, hex, &changed), 0);
	assert_int_equal(changed, 1);
	assert_tree_file(fx, "b.txt", NULL);
	assert_absent(fx, "b.txt");
	assert_int_equal(status_count(fx), 0);
}

static void test_other_staged_changes_stay_out(void **state)
{
	struct fixture *fx = *state;
	git_index *index = NULL;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	write_worktree(fx, "staged.txt", "s\n");
	assert_int_equal(git_repository_index(&index, fx->repo->git), 0);
	assert_int_equal(git_index_add_bypath(index, "staged.txt"), 0);
	assert_int_equal(git_index_write(index), 0);
	git_index_free(index);

	assert_int_equal(commit2(fx, "b.txt", "beta\n", NULL, NULL, NULL, NULL), 0);
	assert_tree_file(fx, "staged.txt", NULL);
	assert_tree_file(fx, "b.txt", "beta\n");
	/* staged.txt is still staged, nothing else differs. */
	assert_int_equal(status_count(fx), 1);
}

static void test_refuses_to_overwrite_local_changes(void **state)
{
	struct fixture *fx = *state;
	char before[GIT_OID_HEXSZ + 1], after[GIT_OID_HEXSZ + 1];

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	write_worktree(fx, "a.txt", "mine\n");
	head_hex(fx, before);
	assert_int_equal(commit2(fx, "new.txt", "n\n", "a.txt", "theirs\n", NULL, NULL),
			 RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "a.txt"));
	head_hex(fx, after);
	assert_string_equal(before, after);
	assert_file(fx, "a.txt", "mine\n");
	assert_absent(fx, "new.txt");

	/* An untracked file in the way is refused too. */
	write_worktree(fx, "untracked.txt", "u\n");
	assert_int_equal(commit2(fx, "untracked.txt", "x\n", NULL, NULL, NULL, NULL),
			 RS_EUSAGE);
	/* ...unless it already holds the new content. */
	assert_int_equal(commit2(fx, "untracked.txt", "u\n", NULL, NULL, NULL, NULL), 0);
}

static void test_bad_paths(void **state)
{
	struct fixture *fx = *state;
	/* the last four passed commit.c's own check before util/path's */
	static const char *bad[] = { "", "/abs", "../up", "a/../b", ".git/config", "a/.GIT/x",
				     "a//b", "a/", "./a", "a/.git./x", "git~1/x", "a/b\x1b[2J",
				     "a\\b" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(commit2(fx, bad[i], "x", NULL, NULL, NULL, NULL), RS_EUSAGE);
	assert_int_equal(commit2(fx, "same", "x", "same", "y", NULL, NULL), RS_EUSAGE);
	assert_int_equal(status_count(fx), 0);
}

/*
 * A symlink where a folder of a committed path should be (a hostile tree
 * checked out, or planted): the commit is refused and nothing is written
 * through it. commit.c made the parent folders with mkdir -p, which
 * followed the link and wrote the file into its target.
 */
static void test_symlinked_folder_is_not_followed(void **state)
{
	struct fixture *fx = *state;
	char outside[80], link[128], victim[128];
	struct stat st;

	snprintf(outside, sizeof(outside), "%s-outside", fx->dir);
	assert_int_equal(mkdir(outside, 0755), 0);
	snprintf(link, sizeof(link), "%s/runs", fx->dir);
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(commit2(fx, "runs/x/run.json", "{}\n", NULL, NULL, NULL, NULL),
			 RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "symbolic link"));
	snprintf(victim, sizeof(victim), "%s/x", outside);
	assert_int_not_equal(lstat(victim, &st), 0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(outside), 0);
}

/* A locked branch ref (another writer in the middle of an update): nothing changes. */
static void test_locked_branch_changes_nothing(void **state)
{
	struct fixture *fx = *state;
	char before[GIT_OID_HEXSZ + 1], after[GIT_OID_HEXSZ + 1];
	struct rs_buf lock = RS_BUF_INIT;
	git_reference *head = NULL;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(git_repository_head(&head, fx->repo->git), 0);
	assert_int_equal(rs_buf_printf(&lock, "%s/.git/%s.lock", fx->dir, git_reference_name(head)), 0);
	git_reference_free(head);
	assert_int_equal(rs_fs_write_file_atomic(lock.ptr, "", 0), 0);
	head_hex(fx, before);
	assert_int_equal(commit2(fx, "a.txt", "changed\n", "new/b.txt", "b\n", NULL, NULL),
			 RS_ERETRY);
	head_hex(fx, after);
	assert_string_equal(before, after);
	assert_file(fx, "a.txt", "alpha\n");
	assert_absent(fx, "new/b.txt");
	unlink(lock.ptr);
	assert_int_equal(status_count(fx), 0); /* a.txt untouched; no stray files */
	rs_buf_release(&lock);
}

/*
 * A stray .git/index.lock: the index cannot be written. The branch is
 * moved last, so nothing is committed, the working tree is put back and
 * the message names the lock (before: the branch had moved, and the caller
 * deleted the LFS objects the new commit referred to).
 */
static void test_index_lock_commits_nothing(void **state)
{
	struct fixture *fx = *state;
	char hex[GIT_OID_HEXSZ + 1], before[GIT_OID_HEXSZ + 1], after[GIT_OID_HEXSZ + 1];
	struct rs_buf lock = RS_BUF_INIT;
	int changed = -1;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	head_hex(fx, before);
	assert_int_equal(rs_buf_printf(&lock, "%s/.git/index.lock", fx->dir), 0);
	assert_int_equal(rs_fs_write_file_atomic(lock.ptr, "", 0), 0);
	assert_int_equal(commit2(fx, "a.txt", "changed\n", "b/b.txt", "beta\n", hex, &changed),
			 RS_ERETRY);
	assert_int_equal(changed, 0);
	assert_non_null(strstr(rs_error_message(), "index.lock' exists"));
	assert_non_null(strstr(rs_error_message(), "remove that file"));
	head_hex(fx, after);
	assert_string_equal(before, after);
	assert_file(fx, "a.txt", "alpha\n");
	assert_absent(fx, "b"); /* not even the folder */
	unlink(lock.ptr);
	assert_int_equal(status_count(fx), 0);

	/* Any earlier error: changed is 0. */
	assert_int_equal(commit2(fx, "../x", "x", NULL, NULL, NULL, &changed), RS_EUSAGE);
	assert_int_equal(changed, 0);
	rs_buf_release(&lock);
}

/* The pid of a process that has exited (and been reaped). */
static long dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return (long)pid;
}

/* The branch HEAD names (libgit2's default, whatever it is). */
static void branch_name(struct fixture *fx, char *out, size_t n)
{
	git_reference *head = NULL;

	assert_int_equal(git_reference_lookup(&head, fx->repo->git, "HEAD"), 0);
	snprintf(out, n, "%s", git_reference_symbolic_target(head));
	git_reference_free(head);
}

static void write_journal(struct fixture *fx, long pid, const char *old_hex, const char *new_hex)
{
	char branch[256];

	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	char host[256] = "";

	gethostname(host, sizeof(host) - 1);
	assert_int_equal(rs_buf_printf(&path, "%s/.git/results", fx->dir), 0);
	assert_int_equal(rs_fs_mkdir_p(path.ptr, 0755), 0);
	assert_int_equal(rs_buf_puts(&path, "/commit-journal"), 0);
	assert_int_equal(rs_buf_printf(&text, "results commit journal 1\npid %ld\nstart 1\nhost %s\n", pid, host), 0);
	branch_name(fx, branch, sizeof(branch));
	if (new_hex)
		assert_int_equal(rs_buf_printf(&text, "ref %s\nold %s\nnew %s\n", branch, old_hex, new_hex), 0);
	assert_int_equal(rs_fs_write_file_atomic(path.ptr, text.ptr, text.len), 0);
	rs_buf_release(&path);
	rs_buf_release(&text);
}

static int journal_exists(struct fixture *fx)
{
	struct rs_buf path = RS_BUF_INIT;
	int e;

	assert_int_equal(rs_buf_printf(&path, "%s/.git/results/commit-journal", fx->dir), 0);
	e = rs_fs_exists(path.ptr);
	rs_buf_release(&path);
	return e;
}

static void unstage_and_delete(struct fixture *fx, const char *path)
{
	git_index *index = NULL;
	struct rs_buf full = RS_BUF_INIT;

	assert_int_equal(git_repository_index(&index, fx->repo->git), 0);
	assert_int_equal(git_index_read(index, 1), 0);
	assert_int_equal(git_index_remove(index, path, 0), 0);
	assert_int_equal(git_index_write(index), 0);
	git_index_free(index);
	assert_int_equal(rs_buf_printf(&full, "%s/%s", fx->dir, path), 0);
	unlink(full.ptr);
	rs_buf_release(&full);
}

/*
 * A process killed after the branch moved but before the index and work
 * tree were written (the old order): the journal lets recovery finish
 * the checkout, so `git status` is clean and nothing shows as deleted.
 */
static void test_recover_finishes_a_moved_branch(void **state)
{
	struct fixture *fx = *state;
	char c1[GIT_OID_HEXSZ + 1], c2[GIT_OID_HEXSZ + 1];
	struct rs_buf note = RS_BUF_INIT;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	head_hex(fx, c1);
	assert_int_equal(commit2(fx, "run/b.txt", "beta\n", NULL, NULL, c2, NULL), 0);
	unstage_and_delete(fx, "run/b.txt");
	assert_int_equal(status_count(fx), 1); /* b.txt: deleted in the index */
	write_journal(fx, dead_pid(), c1, c2);
	assert_int_equal(rs_commit_recover(fx->repo, &note), 0);
	assert_non_null(strstr(note.ptr, "finished an interrupted 'results add'"));
	assert_file(fx, "run/b.txt", "beta\n");
	assert_int_equal(status_count(fx), 0);
	assert_false(journal_exists(fx));
	rs_buf_release(&note);
}

/* Killed before the branch moved: recovery takes the files out again. */
static void test_recover_undoes_an_unmoved_branch(void **state)
{
	struct fixture *fx = *state;
	char c1[GIT_OID_HEXSZ + 1], c2[GIT_OID_HEXSZ + 1];
	struct rs_buf note = RS_BUF_INIT;
	char branch[256];
	git_oid id;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	head_hex(fx, c1);
	assert_int_equal(commit2(fx, "a.txt", "changed\n", "run/b.txt", "beta\n", c2, NULL), 0);
	branch_name(fx, branch, sizeof(branch));
	/* The branch back where it was; index and work tree as the commit left them. */
	assert_int_equal(git_oid_fromstr(&id, c1), 0);
	{
		git_reference *ref = NULL;

		assert_int_equal(git_reference_create(&ref, fx->repo->git, branch,
						      &id, 1, NULL), 0);
		git_reference_free(ref);
	}
	assert_true(status_count(fx) > 0);
	write_journal(fx, dead_pid(), c1, c2);
	assert_int_equal(rs_commit_recover(fx->repo, &note), 0);
	assert_non_null(strstr(note.ptr, "undid an interrupted 'results add'"));
	assert_file(fx, "a.txt", "alpha\n");
	assert_absent(fx, "run");
	assert_int_equal(status_count(fx), 0);
	assert_false(journal_exists(fx));
	rs_buf_release(&note);
}

/*
 * A live journal owner (this very process) is left alone, and a commit
 * meanwhile is refused with RS_ERETRY naming it; a dead owner's journal
 * without intent is simply removed by the next commit.
 */
static void test_journal_is_a_lock(void **state)
{
	struct fixture *fx = *state;
	struct rs_buf note = RS_BUF_INIT, path = RS_BUF_INIT, text = RS_BUF_INIT;
	unsigned long long start = 0;
	char host[256] = "", *p;
	int field;

	assert_int_equal(commit2(fx, "a.txt", "alpha\n", NULL, NULL, NULL, NULL), 0);
	/* Our own start time, as the journal records it. */
	{
		char buf[1024];
		FILE *f = fopen("/proc/self/stat", "r");
		size_t n;

		assert_non_null(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		assert_int_equal(rs_buf_puts(&text, buf), 0);
	}
	p = strrchr(text.ptr, ')') + 1;
	for (field = 3; field < 22; field++)
		p = strchr(p + 1, ' ');
	start = strtoull(p + 1, NULL, 10);
	gethostname(host, sizeof(host) - 1);
	assert_int_equal(rs_buf_printf(&path, "%s/.git/results", fx->dir), 0);
	assert_int_equal(rs_fs_mkdir_p(path.ptr, 0755), 0);
	assert_int_equal(rs_buf_puts(&path, "/commit-journal"), 0);
	rs_buf_clear(&text);
	assert_int_equal(rs_buf_printf(&text, "results commit journal 1\npid %ld\nstart %llu\nhost %s\n",
		      (long)getpid(), start, host), 0);
	assert_int_equal(rs_fs_write_file_atomic(path.ptr, text.ptr, text.len), 0);
	assert_int_equal(rs_commit_recover(fx->repo, &note), 0);
	assert_int_equal(note.len, 0);
	assert_true(journal_exists(fx));
	assert_int_equal(commit2(fx, "b.txt", "beta\n", NULL, NULL, NULL, NULL), RS_ERETRY);
	assert_non_null(strstr(rs_error_message(), "another results command"));
	assert_tree_file(fx, "b.txt", NULL);

	write_journal(fx, dead_pid(), NULL, NULL);
	assert_int_equal(commit2(fx, "b.txt", "beta\n", NULL, NULL, NULL, NULL), 0);
	assert_false(journal_exists(fx));
	/* A damaged journal (a power cut) blocks nobody either. */
	assert_int_equal(rs_fs_write_file_atomic(path.ptr, "garbage", 7), 0);
	assert_int_equal(commit2(fx, "c.txt", "gamma\n", NULL, NULL, NULL, NULL), 0);
	assert_tree_file(fx, "b.txt", "beta\n");
	assert_false(journal_exists(fx));
	assert_int_equal(status_count(fx), 0);
	rs_buf_release(&note);
	rs_buf_release(&path);
	rs_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_first_commit_on_unborn_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symlinked_folder_is_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replace_add_remove_and_noop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_staged_changes_stay_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_to_overwrite_local_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_branch_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_index_lock_commits_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_finishes_a_moved_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_undoes_an_unmoved_branch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_is_a_lock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
