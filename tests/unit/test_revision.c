/*
 * git/revision.c: revisions resolved through header-checked caps
 * (rs_repo_rev_commit, rs_repo_rev_tree, rs_repo_commit_capped,
 * rs_repo_tree_capped, rs_repo_peel_commit). Every accepted form is
 * checked against what `git rev-parse` answers for the same repository.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <git2.h>

#include "git/repo.h"
#include "results/error.h"
#include "repo_fixture.h"

/* git of the fixture's own HOME; its identity and settings in setup's environment */
#define GIT "git"

struct fixture {
	char dir[64];
	struct rs_repo *repo;
};

/* `cmd` run in the repository, its first line of output in `out` (may be NULL). */
static void sh(struct fixture *f, char *out, size_t size, const char *fmt, ...)
{
	char cmd[4096], line[256] = "";
	va_list ap;
	FILE *p;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", f->dir);
	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	while (fgetc(p) != EOF)
		;
	n = pclose(p);
	if (n != 0)
		fail_msg("%s: exit %d", cmd, n);
	line[strcspn(line, "\n")] = '\0';
	if (out)
		snprintf(out, size, "%s", line);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/test_revision-XXXXXX");
	setenv("GIT_AUTHOR_NAME", "t", 1);
	setenv("GIT_AUTHOR_EMAIL", "t@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "t", 1);
	setenv("GIT_COMMITTER_EMAIL", "t@example.com", 1);
	setenv("GIT_CONFIG_COUNT", "1", 1);
	setenv("GIT_CONFIG_KEY_0", "advice.nestedTag", 1);
	setenv("GIT_CONFIG_VALUE_0", "false", 1);
	if (repo_fixture_new(f->dir, 0, &f->repo) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int err = repo_fixture_free(f->dir, f->repo);

	free(f);
	return err;
}

/*
 * A history with a merge: c1 - c2 - c3 - merge (c3 first, s1 second),
 * s1 branched from c2; tags: v1 (light, c2), a1 (annotated, c3), aa (an
 * annotated tag of a1), tb (annotated, of a blob), tt (light, of a tree).
 */
static void make_history(struct fixture *f)
{
	sh(f, NULL, 0, "echo 1 >f && " GIT " add f && " GIT " commit -qm c1 && "
	   "echo 2 >f && " GIT " commit -qam c2 && " GIT " tag v1 && "
	   GIT " checkout -qb side && echo s >s && " GIT " add s && " GIT " commit -qm s1 && "
	   GIT " checkout -q - && echo 3 >f && " GIT " commit -qam c3 && " GIT " tag -a -m a a1 && "
	   GIT " tag -a -m aa aa a1 && " GIT " merge -q --no-ff -m merge side && "
	   GIT " tag -a -m b tb \"$(git rev-parse HEAD:f)\" && " GIT " tag tt HEAD^{tree}");
}

/* What rs_repo_rev_commit answers for `rev` is what git rev-parse REV^{commit} does. */
static void same_commit(struct fixture *f, const char *rev, const char *git_rev)
{
	char want[64], got[GIT_OID_HEXSZ + 1];
	git_oid id;

	sh(f, want, sizeof(want), "git rev-parse --verify -q '%s^{commit}'", git_rev ? git_rev : rev);
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, rev), 0);
	git_oid_tostr(got, sizeof(got), &id);
	if (strcmp(want, got) != 0)
		fail_msg("'%s': %s, git says %s", rev ? rev : "(NULL)", got, want);
}

/* ... and rs_repo_rev_tree what git rev-parse REV^{tree} does. */
static void same_tree(struct fixture *f, const char *rev)
{
	char want[64], got[GIT_OID_HEXSZ + 1];
	git_tree *tree = NULL;

	sh(f, want, sizeof(want), "git rev-parse --verify -q '%s^{tree}'", rev);
	assert_int_equal(rs_repo_rev_tree(&tree, f->repo->git, rev), 0);
	git_oid_tostr(got, sizeof(got), git_tree_id(tree));
	git_tree_free(tree);
	if (strcmp(want, got) != 0)
		fail_msg("'%s': tree %s, git says %s", rev, got, want);
}

static void expect_error(struct fixture *f, const char *rev, int code, const char *needle)
{
	git_tree *tree = (git_tree *)1;
	git_oid id;

	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, rev), code);
	if (!strstr(rs_error_message(), needle))
		fail_msg("'%s': '%s' does not say '%s'", rev, rs_error_message(), needle);
	assert_int_equal(rs_repo_rev_tree(&tree, f->repo->git, rev), code);
	assert_null(tree);
	rs_error_clear();
}

static void test_forms(void **state)
{
	struct fixture *f = *state;
	static const char *const forms[] = {
		"HEAD", "@", "HEAD~1", "HEAD~", "HEAD~2", "HEAD~3", "HEAD^", "HEAD^1", "HEAD^2",
		"HEAD^0", "HEAD^^", "HEAD^2~1", "HEAD~1^1", "@~2", "side", "refs/heads/side",
		"v1", "refs/tags/v1", "a1", "aa", "a1~1", "aa^{commit}", "aa^{commit}~1",
		"HEAD^{commit}", "HEAD~0", "side^0",
	};
	char hex[64], cmd[64];

	make_history(f);
	same_commit(f, NULL, "HEAD");
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		same_commit(f, forms[i], NULL);
		same_tree(f, forms[i]);
	}
	/* ids: whole, and unique prefixes of 4 and 12 digits */
	sh(f, hex, sizeof(hex), "git rev-parse HEAD~2");
	same_commit(f, hex, NULL);
	snprintf(cmd, sizeof(cmd), "%.12s", hex);
	same_commit(f, cmd, NULL);
	sh(f, hex, sizeof(hex), "git rev-parse --short=4 HEAD~3");
	same_commit(f, hex, NULL);
	same_tree(f, hex);
	/* trees: ^{tree}, a tree's own id, a tag of a tree */
	same_tree(f, "HEAD^{tree}");
	same_tree(f, "HEAD~1^{tree}");
	same_tree(f, "aa^{tree}");
	same_tree(f, "tt");
	sh(f, hex, sizeof(hex), "git rev-parse HEAD~1^{tree}");
	same_tree(f, hex);
	/* the main branch by its name, whatever libgit2 called it */
	sh(f, hex, sizeof(hex), "git symbolic-ref --short HEAD");
	same_commit(f, hex, NULL);
}

static void test_not_found(void **state)
{
	struct fixture *f = *state;

	make_history(f);
	expect_error(f, "no-such-rev", RS_ENOTFOUND, "no revision 'no-such-rev'");
	expect_error(f, "HEAD~4", RS_ENOTFOUND, "no revision 'HEAD~4'");
	expect_error(f, "HEAD~400", RS_ENOTFOUND, "no revision 'HEAD~400'");
	expect_error(f, "HEAD^3", RS_ENOTFOUND, "no revision 'HEAD^3'");
	expect_error(f, "HEAD~1^2", RS_ENOTFOUND, "no revision 'HEAD~1^2'");
	expect_error(f, "0000000000000000000000000000000000000000", RS_ENOTFOUND, "no revision");
	expect_error(f, "deadbeefdeadbeef", RS_ENOTFOUND, "no revision 'deadbeefdeadbeef'");
	expect_error(f, "abc", RS_ENOTFOUND, "no revision 'abc'"); /* too short a prefix */
	expect_error(f, "no such", RS_ENOTFOUND, "no revision 'no such'");
}

/* An unborn HEAD names nothing, as git_revparse_single said: every caller's "no runs yet". */
static void test_unborn(void **state)
{
	struct fixture *f = *state;
	struct rs_buf text = RS_BUF_INIT;

	expect_error(f, NULL, RS_ENOTFOUND, "no revision 'HEAD'");
	expect_error(f, "HEAD", RS_ENOTFOUND, "no revision 'HEAD'");
	expect_error(f, "HEAD~1", RS_ENOTFOUND, "no revision 'HEAD~1'");
	assert_int_equal(rs_repo_read_tree_file(f->repo, NULL, ".results.json", 100, &text),
			 RS_ENOTFOUND);
	assert_string_equal(rs_error_message(), "no revision 'HEAD'");
	rs_error_clear();
	rs_buf_release(&text);
}

/* Forms git reads and results does not: refused by name, never handed to libgit2. */
static void test_refused_forms(void **state)
{
	struct fixture *f = *state;
	static const char *const forms[] = {
		"HEAD:f", ":f", ":/c1", "HEAD@{1}", "@{-1}", "main@{upstream}", "HEAD~1..HEAD",
		"HEAD...side", "^HEAD", "", "~1", "HEAD^{blob}", "HEAD^{}", "HEAD^{/c1}",
		"HEAD^{tree}~1", "HEAD^{tree}^{tree}", "HEAD^!", "HEAD^@", "HEAD^-", "HEAD~1x",
		"HEAD^{commit", "HEAD~1234567890",
	};

	make_history(f);
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char quoted[64];

		snprintf(quoted, sizeof(quoted), "'%s'", forms[i]);
		expect_error(f, forms[i], RS_EUSAGE, quoted);
	}
	expect_error(f, "HEAD:f", RS_EUSAGE, "is not a form results reads: give HEAD, a branch");
	expect_error(f, "HEAD~1234567890", RS_EUSAGE, "more than 9 digits");
}

/* Objects of the wrong type: a tag of a blob, a blob's id, a tree for a commit. */
static void test_wrong_types(void **state)
{
	struct fixture *f = *state;
	char blob[64], tree[64];
	git_oid id, bid;
	git_commit *c = NULL;
	git_tree *t = NULL;

	make_history(f);
	expect_error(f, "tb", RS_ECORRUPT, "is a blob, not a");
	expect_error(f, "tb^{commit}", RS_ECORRUPT, "is a blob, not a commit");
	sh(f, blob, sizeof(blob), "git rev-parse HEAD:f");
	expect_error(f, blob, RS_ECORRUPT, "is a blob, not a");
	/* a tree is a tree, not a commit */
	sh(f, tree, sizeof(tree), "git rev-parse HEAD^{tree}");
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, tree), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "is a tree, not a commit"));
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, "tt"), RS_ECORRUPT);
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, "HEAD^{tree}"), RS_ECORRUPT);
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, "tt~1"), RS_ECORRUPT);
	/* the capped readers say so too */
	assert_int_equal(git_oid_fromstr(&bid, blob), 0);
	assert_int_equal(rs_repo_commit_capped(&c, f->repo->git, &bid, "x"), RS_ECORRUPT);
	assert_null(c);
	assert_int_equal(rs_repo_tree_capped(&t, f->repo->git, &bid, "x"), RS_ECORRUPT);
	assert_null(t);
	assert_int_equal(git_oid_fromstr(&bid, tree), 0);
	assert_int_equal(rs_repo_tree_capped(&t, f->repo->git, &bid, "x"), 0);
	git_tree_free(t);
	/* a ref's target that is no commit: rs_repo_peel_commit's "no runs" as before */
	assert_int_equal(rs_repo_peel_commit(&id, f->repo->git, &bid), RS_ENOTFOUND);
	rs_error_clear();
}

/* Two objects whose ids share their first 4 hex digits: that prefix is ambiguous. */
static void test_ambiguous_prefix(void **state)
{
	struct fixture *f = *state;
	static unsigned short first[4096];
	char text[32], hex[GIT_OID_HEXSZ + 1], prefix[8] = "";
	git_oid id;
	git_tree *tree = NULL;

	make_history(f);
	/* the birthday bound: 4096 blobs meet in 16 bits almost surely (deterministic contents) */
	for (unsigned i = 0; i < 4096 && !prefix[0]; i++) {
		snprintf(text, sizeof(text), "blob %u\n", i);
		assert_int_equal(git_blob_create_from_buffer(&id, f->repo->git, text, strlen(text)), 0);
		first[i] = (unsigned short)(id.id[0] << 8 | id.id[1]);
		for (unsigned k = 0; k < i; k++)
			if (first[k] == first[i])
				git_oid_tostr(prefix, 5, &id);
	}
	assert_true(prefix[0] != '\0');
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, prefix), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "is ambiguous"));
	assert_int_equal(rs_repo_rev_tree(&tree, f->repo->git, prefix), RS_EUSAGE);
	/* a longer prefix of a commit stays unique */
	sh(f, hex, sizeof(hex), "git rev-parse HEAD");
	hex[16] = '\0';
	same_commit(f, hex, NULL);
	rs_error_clear();
}

/* A raw object of `type` and `size` bytes ('x' after `head`) written, its id in `hex`. */
static void write_raw(struct fixture *f, git_object_t type, const char *head, size_t size,
		      char *hex)
{
	git_odb *odb = NULL;
	char *buf = malloc(size);
	size_t n = strlen(head);
	git_oid id;

	assert_non_null(buf);
	memset(buf, 'x', size);
	memcpy(buf, head, n);
	assert_int_equal(git_repository_odb(&odb, f->repo->git), 0);
	assert_int_equal(git_odb_write(&id, odb, buf, size, type), 0);
	git_odb_free(odb);
	free(buf);
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &id);
}

/* A small commit of `tree` on `parent` made HEAD, its id in `hex`. */
static void write_commit(struct fixture *f, const char *tree, const char *parent, char *hex)
{
	char text[256];
	git_odb *odb = NULL;
	git_oid id;

	snprintf(text, sizeof(text), "tree %s\nparent %s\nauthor t <t@x> 1 +0000\n"
		 "committer t <t@x> 1 +0000\n\non top\n", tree, parent);
	assert_int_equal(git_repository_odb(&odb, f->repo->git), 0);
	assert_int_equal(git_odb_write(&id, odb, text, strlen(text), GIT_OBJECT_COMMIT), 0);
	git_odb_free(odb);
	git_oid_tostr(hex, GIT_OID_HEXSZ + 1, &id);
	sh(f, NULL, 0, "git update-ref HEAD %s", hex);
}

/* A HEAD commit past RS_REPO_REF_OBJECT_MAX, a tree past RS_REPO_TREE_MAX: refused, named. */
static void test_caps(void **state)
{
	struct fixture *f = *state;
	char tree[64], big[GIT_OID_HEXSZ + 1], head[256], parent[64], top[GIT_OID_HEXSZ + 1];
	struct rs_buf text = RS_BUF_INIT;
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_oid id;

	make_history(f);
	sh(f, tree, sizeof(tree), "git rev-parse HEAD^{tree}");
	sh(f, parent, sizeof(parent), "git rev-parse HEAD");
	snprintf(head, sizeof(head), "tree %s\nparent %s\nauthor t <t@x> 1 +0000\n"
		 "committer t <t@x> 1 +0000\n\n", tree, parent);
	write_raw(f, GIT_OBJECT_COMMIT, head, RS_REPO_REF_OBJECT_MAX + 1, big);
	sh(f, NULL, 0, "git update-ref HEAD %s", big);
	expect_error(f, "HEAD", RS_ECORRUPT, "is too large");
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, NULL), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), big));
	assert_non_null(strstr(rs_error_message(), "revision 'HEAD': the commit"));
	/* by every reader of HEAD's files, and by the capped reader */
	assert_int_equal(rs_repo_read_tree_file(f->repo, NULL, "f", 100, &text), RS_ECORRUPT);
	assert_int_equal(git_oid_fromstr(&id, big), 0);
	assert_int_equal(rs_repo_commit_capped(&c, f->repo->git, &id, "HEAD"), RS_ECORRUPT);
	assert_null(c);
	/* a ref naming it: not "no commit" (no runs) but a commit that is not read */
	assert_int_equal(rs_repo_peel_commit(&id, f->repo->git, &id), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "the ref's target: the commit"));
	assert_non_null(strstr(rs_error_message(), "is too large"));
	/* reached through a parent step: a small commit on top of it */
	write_commit(f, tree, big, top);
	same_commit(f, "HEAD", NULL);
	expect_error(f, "HEAD~1", RS_ECORRUPT, "is too large");
	expect_error(f, "HEAD^", RS_ECORRUPT, "is too large");
	expect_error(f, "HEAD~2", RS_ECORRUPT, "is too large"); /* its parent is never read */
	expect_error(f, "side^2", RS_ENOTFOUND, "no revision"); /* untouched: side is fine */
	same_commit(f, "side", NULL);

	/* a commit within the cap whose tree is past RS_REPO_TREE_MAX */
	write_raw(f, GIT_OBJECT_TREE, "100644 f", RS_REPO_TREE_MAX + 1, big);
	write_commit(f, big, parent, top);
	same_commit(f, "HEAD", NULL); /* the commit itself is fine */
	assert_int_equal(rs_repo_rev_tree(&t, f->repo->git, "HEAD"), RS_ECORRUPT);
	assert_null(t);
	assert_non_null(strstr(rs_error_message(), "the tree"));
	assert_non_null(strstr(rs_error_message(), "is too large"));
	assert_non_null(strstr(rs_error_message(), big));
	assert_int_equal(rs_repo_rev_tree(&t, f->repo->git, "HEAD^{tree}"), RS_ECORRUPT);
	assert_int_equal(git_oid_fromstr(&id, big), 0);
	assert_int_equal(rs_repo_tree_capped(&t, f->repo->git, &id, "x"), RS_ECORRUPT);
	assert_int_equal(rs_repo_read_tree_file(f->repo, NULL, "f", 100, &text), RS_ECORRUPT);
	same_tree(f, "HEAD~1"); /* its parent's tree is read */
	rs_buf_release(&text);
	rs_error_clear();
}

/*
 * Headers are read once per id (rs_repo_read_header): a second look at a
 * tree or file whose object has since gone still has its type and size,
 * and each caller's cap is judged again on that size.
 */
static void test_header_cache(void **state)
{
	struct fixture *f = *state;
	char hex[GIT_OID_HEXSZ + 1], path[256];
	git_odb *odb = NULL;
	git_blob *blob = NULL;
	git_object_t type;
	size_t len = 0;
	git_oid id;

	write_raw(f, GIT_OBJECT_BLOB, "cached", 5000, hex);
	assert_int_equal(git_oid_fromstr(&id, hex), 0);
	assert_int_equal(git_repository_odb(&odb, f->repo->git), 0);
	assert_int_equal(rs_repo_read_header(&len, &type, odb, &id), 0);
	assert_int_equal(len, 5000);
	assert_int_equal(type, GIT_OBJECT_BLOB);
	/* the loose object removed: its header comes from the cache */
	snprintf(path, sizeof(path), "%s/.git/objects/%.2s/%s", f->dir, hex, hex + 2);
	assert_int_equal(unlink(path), 0);
	len = 0;
	assert_int_equal(rs_repo_read_header(&len, &type, odb, &id), 0);
	assert_int_equal(len, 5000);
	assert_int_equal(rs_repo_blob_size(&len, f->repo->git, &id, "f"), 0);
	assert_int_equal(len, 5000);
	/* a smaller cap than the size kept still refuses, before any read */
	assert_int_equal(rs_repo_blob_capped(&blob, f->repo->git, &id, 4999, "f"), RS_ECORRUPT);
	assert_null(blob);
	assert_non_null(strstr(rs_error_message(), "is too large (5000 bytes, limit 4999)"));
	/* a missing object is not kept: absent both times */
	memset(&id, 0x5a, sizeof(id));
	assert_int_equal(rs_repo_read_header(&len, &type, odb, &id), GIT_ENOTFOUND);
	assert_int_equal(rs_repo_read_header(&len, &type, odb, &id), GIT_ENOTFOUND);
	git_odb_free(odb);
	git_error_clear();
	rs_error_clear();
}

/* Tags of tags: RS_REPO_PEEL_DEPTH followed, one more refused by name. */
static void test_tag_depth(void **state)
{
	struct fixture *f = *state;
	git_oid id, tag;
	char name[16], hex[64];

	make_history(f);
	sh(f, NULL, 0, GIT " tag -a -m t t1 HEAD");
	for (int i = 2; i <= RS_REPO_PEEL_DEPTH + 1; i++)
		sh(f, NULL, 0, GIT " tag -a -m t t%d t%d", i, i - 1);
	snprintf(name, sizeof(name), "t%d", RS_REPO_PEEL_DEPTH);
	same_commit(f, name, NULL);
	snprintf(name, sizeof(name), "t%d", RS_REPO_PEEL_DEPTH + 1);
	assert_int_equal(rs_repo_rev_commit(&id, f->repo->git, name), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "tags of tags more than 16 deep"));
	sh(f, hex, sizeof(hex), "git rev-parse %s", name);
	assert_int_equal(git_oid_fromstr(&tag, hex), 0);
	assert_int_equal(rs_repo_peel_commit(&id, f->repo->git, &tag), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "tags of tags more than 16 deep"));
	rs_error_clear();
}

/* Paths below a tree: as git_tree_entry_bypath, each folder on the way within its cap. */
static void test_bypath(void **state)
{
	struct fixture *f = *state;
	char want[64], big[GIT_OID_HEXSZ + 1], hex[64];
	git_tree_entry *e = (git_tree_entry *)1;
	git_treebuilder *tb = NULL;
	git_tree *root = NULL;
	git_oid id, blob;

	sh(f, NULL, 0, "mkdir -p a/b && echo x >a/b/c && echo y >a/d && " GIT " add a && "
	   GIT " commit -qm nested");
	assert_int_equal(rs_repo_rev_tree(&root, f->repo->git, NULL), 0);
	assert_int_equal(rs_repo_tree_entry_bypath(&e, root, "a/b/c"), 0);
	sh(f, want, sizeof(want), "git rev-parse HEAD:a/b/c");
	assert_string_equal(git_oid_tostr_s(git_tree_entry_id(e)), want);
	git_tree_entry_free(e);
	assert_int_equal(rs_repo_tree_entry_bypath(&e, root, "a/b/"), 0);
	assert_int_equal(git_tree_entry_type(e), GIT_OBJECT_TREE);
	git_tree_entry_free(e);
	assert_int_equal(rs_repo_tree_entry_bypath(&e, root, "a"), 0);
	git_tree_entry_free(e);
	/* what git_tree_entry_bypath does not find either */
	static const char *const none[] = { "a/x", "a/b/c/d", "a/d/", "x", "a//b", "", "/a", "a/d/e" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		git_tree_entry *g = NULL;

		assert_int_not_equal(git_tree_entry_bypath(&g, root, none[i]), 0);
		git_error_clear();
		assert_int_equal(rs_repo_tree_entry_bypath(&e, root, none[i]), RS_ENOTFOUND);
		assert_null(e);
	}
	git_tree_free(root);
	root = NULL;

	/* a folder on the way past RS_REPO_TREE_MAX: named, never read */
	write_raw(f, GIT_OBJECT_TREE, "100644 f", RS_REPO_TREE_MAX + 1, big);
	assert_int_equal(git_oid_fromstr(&id, big), 0);
	sh(f, hex, sizeof(hex), "git rev-parse HEAD:a/d");
	assert_int_equal(git_oid_fromstr(&blob, hex), 0);
	assert_int_equal(git_treebuilder_new(&tb, f->repo->git, NULL), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "runs", &id, GIT_FILEMODE_TREE), 0);
	assert_int_equal(git_treebuilder_insert(NULL, tb, "f", &blob, GIT_FILEMODE_BLOB), 0);
	assert_int_equal(git_treebuilder_write(&id, tb), 0);
	git_treebuilder_free(tb);
	assert_int_equal(git_tree_lookup(&root, f->repo->git, &id), 0);
	assert_int_equal(rs_repo_tree_entry_bypath(&e, root, "runs/2026/x/run.json"), RS_ECORRUPT);
	assert_null(e);
	assert_non_null(strstr(rs_error_message(), "runs: the tree"));
	assert_non_null(strstr(rs_error_message(), "is too large"));
	assert_int_equal(rs_repo_tree_file_id(&id, root, "runs/2026/x/run.json", "HEAD"), RS_ECORRUPT);
	/* the entry itself is only named: its tree is not read */
	assert_int_equal(rs_repo_tree_entry_bypath(&e, root, "runs"), 0);
	git_tree_entry_free(e);
	assert_int_equal(rs_repo_tree_file_id(&id, root, "f", "HEAD"), 0);
	git_tree_free(root);
	rs_error_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unborn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ambiguous_prefix, setup, teardown),
		cmocka_unit_test_setup_teardown(test_caps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tag_depth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bypath, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
