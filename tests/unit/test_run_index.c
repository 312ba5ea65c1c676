/*
 * Unit tests of src/runs/runindex.c: line format round trip, ordering,
 * resolving by run id and commit prefix (ambiguity included), bounded
 * loading of monthly shards from a committed tree, README bounds,
 * refusal of malformed lines, the branch map (src/runs/branchmap.c):
 * what a windowed load of one branch reads with it, and a malformed map;
 * and the commit map: its strict bucket parser, what resolving commits
 * and run ids and finding the first profiled commit read with it, and
 * hostile buckets (oversized, malformed, path-like shard names, a folder)
 * refused as corrupt data naming the file.
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

#include "git/commit.h"
#include "git/repo.h"
#include "runs/branchmap.h"
#include "runs/runindex.h"
#include "results/buf.h"
#include "results/error.h"

static void make_entry(struct rs_run_entry *e, const char *id, const char *commit,
		       const char *at, double duration)
{
	static char path[128];

	snprintf(path, sizeof(path), "runs/x/%s", id);
	e->id = (char *)id;
	e->commit = (char *)commit;
	e->branch = (char *)"main";
	e->trigger = (char *)"ci";
	e->recorded_at = (char *)at;
	e->path = path;
	e->verdict = NULL;
	e->metrics = json_pack("{s:f, s:i}", "duration", duration, "samples", 100);
}

static void test_line_round_trip(void **state)
{
	struct rs_run_entry e, back;
	struct rs_buf line = RS_BUF_INIT;

	make_entry(&e, "20261130-093012-ci-abc1234", "abc1234def", "2026-11-30T09:30:12Z", 1.5);
	e.verdict = (char *)"+13% vs c1d2e3f: trace_contacts (new, 4.1 s)";
	assert_int_equal(rs_run_entry_to_line(&line, &e), 0);
	assert_int_equal(line.ptr[line.len - 1], '\n');
	assert_null(memchr(line.ptr, '\n', line.len - 1)); /* one line */
	assert_int_equal(rs_run_entry_parse(&back, line.ptr, line.len - 1), 0);
	assert_string_equal(back.id, e.id);
	assert_string_equal(back.commit, e.commit);
	assert_string_equal(back.path, e.path);
	assert_true(json_number_value(json_object_get(back.metrics, "duration")) == 1.5);
	assert_string_equal(back.verdict, e.verdict);
	rs_run_entry_release(&back);
	json_decref(e.metrics);
	rs_buf_release(&line);
}

static void test_parse_refuses(void **state)
{
	struct rs_run_entry e;
	const char *bad[] = {
		"not json",
		"[1]",
		"{\"id\":\"a\"}",
		"{\"id\":\"a\",\"commit\":\"xyz\",\"branch\":\"m\",\"trigger\":\"t\","
		"\"recorded_at\":\"2026-01-01T00:00:00Z\",\"path\":\"runs/a\"}",
		"{\"id\":\"a\",\"commit\":\"abcd\",\"branch\":\"m\",\"trigger\":\"t\","
		"\"recorded_at\":\"2026-01-01T00:00:00Z\",\"path\":\"../etc\"}",
		"{\"id\":\"a\",\"commit\":\"abcd\",\"branch\":\"m\",\"trigger\":\"t\","
		"\"recorded_at\":\"2026-01-01T00:00:00Z\",\"path\":\"runs/a\",\"metrics\":[]}",
	};
	struct rs_runindex idx;
	const char *shard = "\n{\"id\":\"a\",\"commit\":\"abcd\",\"branch\":\"m\",\"trigger\":\"t\","
			    "\"recorded_at\":\"2026-01-01T00:00:00Z\",\"path\":\"runs/a\"}\nbroken\n";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(rs_run_entry_parse(&e, bad[i], strlen(bad[i])), RS_ECORRUPT);
	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_parse_shard(&idx, shard, strlen(shard), "index/x.jsonl"),
			 RS_ECORRUPT);
	/* the message names the shard and the line */
	assert_non_null(strstr(rs_error_message(), "index/x.jsonl:3"));
	rs_runindex_release(&idx);
}

static void test_order_and_resolve(void **state)
{
	struct rs_runindex idx;
	struct rs_run_entry e;
	const struct rs_run_entry *found;

	rs_runindex_init(&idx);
	/* added out of order; two runs of commit abcd1111 */
	make_entry(&e, "r3", "abcd1111aa", "2026-11-03T00:00:00Z", 3);
	assert_int_equal(rs_runindex_add(&idx, &e), 0);
	json_decref(e.metrics);
	make_entry(&e, "r1", "abcd1111aa", "2026-11-01T00:00:00Z", 1);
	assert_int_equal(rs_runindex_add(&idx, &e), 0);
	json_decref(e.metrics);
	make_entry(&e, "r2", "abce2222bb", "2026-11-02T00:00:00Z", 2);
	assert_int_equal(rs_runindex_add(&idx, &e), 0);
	json_decref(e.metrics);
	assert_int_equal(idx.count, 3);
	assert_string_equal(idx.runs[0].id, "r1");
	assert_string_equal(idx.runs[1].id, "r2");
	assert_string_equal(idx.runs[2].id, "r3");

	assert_int_equal(rs_runindex_resolve(&found, &idx, "r2"), 0);
	assert_string_equal(found->id, "r2");
	/* a commit profiled twice: the latest run */
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abcd1"), 0);
	assert_string_equal(found->id, "r3");
	assert_int_equal(rs_runindex_resolve(&found, &idx, "ABCE"), 0);
	assert_string_equal(found->id, "r2");
	/* ambiguous prefix, unknown commit, too short */
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abc"), RS_ENOTFOUND);
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abcd"), 0);
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abc1"), RS_ENOTFOUND);
	make_entry(&e, "r4", "abcd9999cc", "2026-11-04T00:00:00Z", 4);
	assert_int_equal(rs_runindex_add(&idx, &e), 0);
	json_decref(e.metrics);
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abcd"), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "ambiguous"));
	assert_int_equal(rs_runindex_resolve(&found, &idx, "abcd9"), 0);
	assert_string_equal(found->id, "r4");
	rs_runindex_release(&idx);
}

static void test_readme_bounded(void **state)
{
	struct rs_runindex idx;
	struct rs_run_entry e;
	struct rs_buf md = RS_BUF_INIT;
	char id[32], at[32];
	size_t rows = 0;
	const char *p;

	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_readme(&md, &idx, 20), 0);
	assert_non_null(strstr(md.ptr, "No runs recorded yet"));
	rs_buf_clear(&md);
	for (int i = 0; i < 50; i++) {
		snprintf(id, sizeof(id), "run%02d", i);
		snprintf(at, sizeof(at), "2026-11-%02dT00:00:00Z", 1 + i % 28);
		make_entry(&e, id, "abcdef0123", at, i);
		e.branch = (char *)"feat|x"; /* must not break the table */
		if (i == 49) /* nor a verdict naming <module> or a | */
			e.verdict = (char *)"+13% vs abcdef0: <module>|a_b (new, 4.1 s)";
		assert_int_equal(rs_runindex_add(&idx, &e), 0);
		json_decref(e.metrics);
	}
	assert_int_equal(rs_runindex_readme(&md, &idx, 20), 0);
	for (p = strstr(md.ptr, "/summary.md)"); p; p = strstr(p + 1, "/summary.md)"))
		rows++;
	assert_int_equal(rows, 20);
	assert_non_null(strstr(md.ptr, "feat\\|x"));
	assert_non_null(strstr(md.ptr, "| verdict | summary |"));
	assert_non_null(strstr(md.ptr, "| +13% vs abcdef0: &lt;module&gt;\\|a\\_b (new, 4.1 s) | [run49]"));
	assert_non_null(strstr(md.ptr, "| – | [run48]"));
	assert_non_null(strstr(md.ptr, "Older runs are listed"));
	rs_buf_release(&md);
	rs_runindex_release(&idx);
}

static void test_shard_path(void **state)
{
	struct rs_buf b = RS_BUF_INIT;

	assert_int_equal(rs_runindex_shard_path(&b, "2026-11-30T09:30:12Z"), 0);
	assert_string_equal(b.ptr, "index/2026-11.jsonl");
	rs_buf_clear(&b);
	assert_int_equal(rs_runindex_shard_path(&b, "26-11"), RS_EUSAGE);
	rs_buf_release(&b);
}

/* Shards committed in a real repository, loaded newest month first. */
/* A new git repository in the temporary folder `dir` (a mkdtemp template), opened. */
static struct rs_repo *new_repo(char *dir)
{
	git_repository *g = NULL;
	struct rs_repo *repo = NULL;

	assert_non_null(mkdtemp(dir));
	setenv("HOME", dir, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 0), 0);
	git_repository_free(g);
	assert_int_equal(rs_repo_open(&repo, dir), 0);
	return repo;
}

/* A load of the `want` newest runs (0: all) gives `count`, from `first` to `last` (NULL: any). */
static void expect_load(struct rs_repo *repo, size_t want, size_t count, const char *first,
			const char *last)
{
	struct rs_runindex idx;

	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_load(&idx, repo, NULL, want), 0);
	assert_int_equal(idx.count, count);
	assert_string_equal(idx.runs[0].id, first);
	if (last)
		assert_string_equal(idx.runs[count - 1].id, last);
	rs_runindex_release(&idx);
}

static void test_load_from_tree(void **state)
{
	char dir[] = "/tmp/test_run_index-XXXXXX", cmd[128];
	struct rs_repo *repo;
	struct rs_runindex idx;
	struct rs_buf shard[3] = { RS_BUF_INIT, RS_BUF_INIT, RS_BUF_INIT };
	struct rs_commit_file files[4];
	struct rs_commit_options opts = { .message = "index" };
	const char *months[3] = { "2026-09", "2026-10", "2026-11" };

	repo = new_repo(dir);

	/* empty repository: no runs, no error */
	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_load(&idx, repo, NULL, 0), 0);
	assert_int_equal(idx.count, 0);

	for (int m = 0; m < 3; m++) {
		for (int i = 0; i < 5; i++) {
			struct rs_run_entry e;
			char id[32], at[32], commit[16];

			snprintf(id, sizeof(id), "m%d-r%d", m, i);
			snprintf(at, sizeof(at), "%s-%02dT00:00:00Z", months[m], 10 + i);
			snprintf(commit, sizeof(commit), "%04x%04x", m, i);
			make_entry(&e, id, commit, at, m * 10 + i);
			assert_int_equal(rs_run_entry_to_line(&shard[m], &e), 0);
			json_decref(e.metrics);
		}
		files[m] = (struct rs_commit_file){ .data = shard[m].ptr, .size = shard[m].len };
	}
	files[0].path = "index/2026-09.jsonl";
	files[1].path = "index/2026-10.jsonl";
	files[2].path = "index/2026-11.jsonl";
	files[3] = (struct rs_commit_file){ .path = "index/notes.txt", .data = "x", .size = 1 };
	assert_int_equal(rs_commit_files(repo, files, 4, &opts, NULL, NULL), 0);

	expect_load(repo, 0, 15, "m0-r0", "m2-r4");
	/* bounded: 7 recent runs need the two newest shards only */
	expect_load(repo, 7, 10, "m1-r0", NULL);

	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_load(&idx, repo, "no-such-rev", 0), RS_ENOTFOUND);
	rs_runindex_release(&idx);

	for (int m = 0; m < 3; m++)
		rs_buf_release(&shard[m]);
	rs_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	git_libgit2_shutdown();
}

/*
 * Month folders (further shards) read as far back as a load goes: every
 * run in order when all are asked for, and a bounded load of the newest
 * runs never reads an older month's folder (one whose tree is missing
 * here: a load that listed every folder first would fail on it).
 */
static void test_month_folders_read_as_needed(void **state)
{
	char dir[] = "/tmp/test_run_index-XXXXXX", cmd[512], path[8][40], obj[300];
	const char *months[4] = { "2026-08", "2026-09", "2026-10", "2026-11" };
	struct rs_buf shard[8];
	struct rs_commit_file files[8];
	struct rs_commit_options opts = { .message = "index" };
	struct rs_runindex idx;
	struct rs_repo *repo = new_repo(dir);
	char hex[64] = "";
	FILE *p;

	(void)state;
	/* each month: its first shard (runs 0-1) and a folder with 0002 (runs 2-3) */
	for (int m = 0; m < 4; m++) {
		for (int k = 0; k < 2; k++) {
			int at = m * 2 + k;

			rs_buf_init(&shard[at], 0);
			for (int i = 0; i < 2; i++) {
				struct rs_run_entry e;
				char id[32], when[32], commit[16];

				snprintf(id, sizeof(id), "m%d-r%d", m, k * 2 + i);
				snprintf(when, sizeof(when), "%s-%02dT00:00:00Z", months[m],
					 10 + k * 2 + i);
				snprintf(commit, sizeof(commit), "%04x%04x", m, k * 2 + i);
				make_entry(&e, id, commit, when, 1.0);
				assert_int_equal(rs_run_entry_to_line(&shard[at], &e), 0);
				json_decref(e.metrics);
			}
			if (k == 0)
				snprintf(path[at], sizeof(path[at]), "index/%s.jsonl", months[m]);
			else
				snprintf(path[at], sizeof(path[at]), "index/%s/0002.jsonl", months[m]);
			files[at] = (struct rs_commit_file){ .path = path[at], .data = shard[at].ptr,
							     .size = shard[at].len };
		}
	}
	assert_int_equal(rs_commit_files(repo, files, 8, &opts, NULL, NULL), 0);

	rs_runindex_init(&idx);
	assert_int_equal(rs_runindex_load(&idx, repo, NULL, 0), 0);
	assert_int_equal(idx.count, 16);
	for (size_t i = 0; i < 16; i++) {
		char want[32];

		snprintf(want, sizeof(want), "m%zu-r%zu", i / 4, i % 4);
		assert_string_equal(idx.runs[i].id, want);
	}
	rs_runindex_release(&idx);

	/* the oldest month's folder gone from the object database */
	snprintf(cmd, sizeof(cmd), "cd '%s' && git rev-parse HEAD:index/2026-08", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(hex, sizeof(hex), p));
	pclose(p);
	hex[strcspn(hex, "\n")] = '\0';
	assert_int_equal(strlen(hex), 40);
	snprintf(obj, sizeof(obj), "%s/.git/objects/%.2s/%s", dir, hex, hex + 2);
	assert_int_equal(unlink(obj), 0);
	rs_repo_free(repo); /* nothing of it kept in libgit2's object cache */
	assert_int_equal(rs_repo_open(&repo, dir), 0);

	/* the newest 5 runs: 2026-11 and 2026-10's folder, nothing older read */
	expect_load(repo, 5, 6, "m2-r2", "m3-r3");
	/* every run: the missing folder is reached and named */
	rs_runindex_init(&idx);
	assert_int_not_equal(rs_runindex_load(&idx, repo, NULL, 0), 0);
	assert_non_null(strstr(rs_error_message(), "index/2026-08/"));
	rs_runindex_release(&idx);
	rs_error_clear();

	for (int i = 0; i < 8; i++)
		rs_buf_release(&shard[i]);
	rs_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	git_libgit2_shutdown();
}

/* Append a run of `branch` recorded at `at` to `shard`. */
static void put_run(struct rs_buf *shard, const char *id, const char *branch, const char *at)
{
	struct rs_run_entry e;

	make_entry(&e, id, "abcd1234", at, 1.0);
	e.branch = (char *)branch;
	assert_int_equal(rs_run_entry_to_line(shard, &e), 0);
	json_decref(e.metrics);
}

/* A windowed load of `branch` (NULL: the newest run's) of `runs`: the runs it holds. */
static size_t window_count(struct rs_repo *repo, const char *branch, size_t runs, int *err)
{
	struct rs_runindex idx;
	struct rs_runindex_window w = { runs, branch, !branch };
	size_t n;

	rs_runindex_init(&idx);
	*err = rs_runindex_load_window(&idx, repo, NULL, &w);
	n = idx.count;
	rs_runindex_release(&idx);
	return n;
}

static void test_branch_map(void **state)
{
	char dir[] = "/tmp/test_run_index-XXXXXX", cmd[128];
	struct rs_repo *repo;
	struct rs_buf sep = RS_BUF_INIT, oct = RS_BUF_INIT, nov = RS_BUF_INIT;
	struct rs_map_files map = { NULL, 0, 0 };
	struct rs_commit_file files[16];
	struct rs_commit_options opts = { .message = "index" };
	struct rs_run_entry newest;
	const char *bad = "{\"branch\":\"new\",\"shards\":[[\"2026-1\",1,1]]}\n";
	const char *gone = "{\"run\":\"gone\"}\n";
	size_t n = 0;
	int err;

	(void)state;
	repo = new_repo(dir);

	/* September: 3 runs of "a", 3 of main; October: 4 of main; November: 3 of main */
	for (int i = 0; i < 3; i++) {
		char id[16], at[32];

		snprintf(id, sizeof(id), "a%d", i);
		snprintf(at, sizeof(at), "2026-09-%02dT00:00:00Z", 10 + i);
		put_run(&sep, id, "a", at);
		snprintf(id, sizeof(id), "s%d", i);
		snprintf(at, sizeof(at), "2026-09-%02dT01:00:00Z", 10 + i);
		put_run(&sep, id, "main", at);
		snprintf(id, sizeof(id), "n%d", i);
		snprintf(at, sizeof(at), "2026-11-%02dT01:00:00Z", 10 + i);
		put_run(&nov, id, "main", at);
	}
	for (int i = 0; i < 4; i++) {
		char id[16], at[32];

		snprintf(id, sizeof(id), "o%d", i);
		snprintf(at, sizeof(at), "2026-10-%02dT01:00:00Z", 10 + i);
		put_run(&oct, id, "main", at);
	}
	files[n++] = (struct rs_commit_file){ .path = "index/2026-09.jsonl", .data = sep.ptr, .size = sep.len };
	files[n++] = (struct rs_commit_file){ .path = "index/2026-10.jsonl", .data = oct.ptr, .size = oct.len };
	files[n++] = (struct rs_commit_file){ .path = "index/2026-11.jsonl", .data = nov.ptr, .size = nov.len };
	assert_int_equal(rs_commit_files(repo, files, n, &opts, NULL, NULL), 0);
	/* without a map a branch's window reads every shard */
	assert_int_equal(window_count(repo, "new", 25, &err), 13);
	assert_int_equal(err, 0);

	/* the first run of branch "new", recorded with the map (built from every shard) */
	make_entry(&newest, "new0", "abcd1234", "2026-11-20T00:00:00Z", 1.0);
	newest.branch = (char *)"new";
	assert_int_equal(rs_run_entry_to_line(&nov, &newest), 0);
	assert_int_equal(rs_map_record(&map, repo, &newest, "index/2026-11.jsonl", RS_MAP_BRANCHES), 0);
	json_decref(newest.metrics);
	assert_true(map.count >= 3 && map.count <= 4); /* new's, a's and main's buckets, covered */
	n = 0;
	files[n++] = (struct rs_commit_file){ .path = "index/2026-11.jsonl", .data = nov.ptr, .size = nov.len };
	for (size_t i = 0; i < map.count; i++)
		files[n++] = (struct rs_commit_file){ .path = map.files[i].path.ptr,
						      .data = map.files[i].text.ptr,
						      .size = map.files[i].text.len };
	assert_int_equal(rs_commit_files(repo, files, n, &opts, NULL, NULL), 0);

	/* the newest run's branch has no other run: November alone is read */
	assert_int_equal(window_count(repo, NULL, 25, &err), 4);
	assert_int_equal(err, 0);
	/* "a": November, then September, which the map names; not October */
	assert_int_equal(window_count(repo, "a", 25, &err), 10);
	assert_int_equal(err, 0);
	/* main is in every shard; a branch of no run reads November only */
	assert_int_equal(window_count(repo, "main", 25, &err), 14);
	assert_int_equal(window_count(repo, "nobody", 25, &err), 4);
	assert_int_equal(err, 0);

	/* a malformed bucket is corrupt data, named */
	n = 0;
	for (size_t i = 0; i < map.count; i++)
		if (!strstr(map.files[i].path.ptr, "covered"))
			files[n++] = (struct rs_commit_file){ .path = map.files[i].path.ptr,
							      .data = bad, .size = strlen(bad) };
	assert_int_equal(rs_commit_files(repo, files, n, &opts, NULL, NULL), 0);
	window_count(repo, NULL, 25, &err);
	assert_int_equal(err, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "index/branches/"));

	/* covered.json naming a run of no shard: read as without a map */
	files[0] = (struct rs_commit_file){ .path = "index/branches/covered.json",
					    .data = gone, .size = strlen(gone) };
	assert_int_equal(rs_commit_files(repo, files, 1, &opts, NULL, NULL), 0);
	assert_int_equal(window_count(repo, "new", 25, &err), 14);
	assert_int_equal(err, 0);

	rs_map_files_release(&map);
	rs_buf_release(&sep);
	rs_buf_release(&oct);
	rs_buf_release(&nov);
	rs_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	git_libgit2_shutdown();
}

/* A commit of 40 hex digits: `head` then `fill` repeated. */
static const char *sha(char out[41], const char *head, char fill)
{
	size_t n = strlen(head);

	memcpy(out, head, n);
	memset(out + n, fill, 40 - n);
	out[40] = '\0';
	return out;
}

static void test_commit_map_parse(void **state)
{
	struct rs_map_entry e;
	struct rs_buf big = RS_BUF_INIT, line = RS_BUF_INIT;
	char c1[41], c2[41];
	int found = 0;
	const char *good, *text;

	(void)state;
	sha(c1, "cd00", '1');
	sha(c2, "cd09", '2');
	good = "{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",3,1],"
	       "[\"2026-09\",1,2]]}\n"
	       "{\"commit\":\"cd09222222222222222222222222222222222222\",\"shards\":[[\"2026-10\",2,1]],"
	       "\"more\":true}\n";
	assert_int_equal(rs_map_find(&e, &found, good, strlen(good), "b", RS_MAP_COMMITS, c2), 0);
	assert_true(found);
	assert_string_equal(e.key, c2);
	assert_int_equal(e.count, 1);
	assert_true(e.more);
	assert_string_equal(e.shards[0].month, "2026-10");
	assert_int_equal(e.shards[0].seq, 2);
	/* round trip */
	assert_int_equal(rs_map_entry_to_line(&line, &e, RS_MAP_COMMITS), 0);
	assert_non_null(strstr(good, line.ptr));
	rs_map_entry_release(&e);
	assert_int_equal(rs_map_find(&e, &found, good, strlen(good), "b", RS_MAP_COMMITS, c1), 0);
	assert_true(found && e.count == 2 && !e.more);
	assert_int_equal(e.shards[1].runs, 2);
	rs_map_entry_release(&e);
	/* a commit not there */
	assert_int_equal(rs_map_find(&e, &found, good, strlen(good), "b", RS_MAP_COMMITS,
				     sha(c2, "cd0e", '3')), 0);
	assert_false(found);
	/* a key that is not a commit: bad usage, not data */
	assert_int_equal(rs_map_find(&e, &found, good, strlen(good), "b", RS_MAP_COMMITS, "zz"),
			 RS_EUSAGE);

	/* hostile lines: each refused as corrupt, naming the bucket and the line */
	static const char *const bad[] = {
		/* a path-like shard name */
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"../../x\",1,1]]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11/../../x\",1,1]]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",\"../0002\",1]]}\n",
		/* shard numbers and counts out of range, a shard twice */
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",0,1]]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",10000,1]]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",2,0]]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[[\"2026-11\",2,1],[\"2026-11\",2,1]]}\n",
		/* not hex, of another bucket, out of order, twice */
		"{\"commit\":\"cdxx111111111111111111111111111111111111\",\"shards\":[]}\n",
		"{\"commit\":\"ab00111111111111111111111111111111111111\",\"shards\":[]}\n",
		"{\"commit\":\"cd09222222222222222222222222222222222222\",\"shards\":[]}\n"
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[]}\n"
		"{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[]}\n",
		/* not a line of the map */
		"{\"branch\":\"main\",\"shards\":[]}\n",
		"{\"commit\":\"cd00111111111111111111111111111111111111\"}\n",
		"[1,2,3]\n",
		"{\"commit\":\"cd0",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		text = bad[i];
		assert_int_equal(rs_map_find(&e, &found, text, strlen(text), "index/commits/c/d/0.jsonl",
					     RS_MAP_COMMITS, sha(c2, "cd0f", '9')), RS_ECORRUPT);
		assert_false(found);
		assert_non_null(strstr(rs_error_message(), "index/commits/c/d/0.jsonl:"));
	}
	/* a line over 64 KiB */
	assert_int_equal(rs_buf_puts(&big, "{\"commit\":\"cd00111111111111111111111111111111111111\",\"shards\":[]"), 0);
	while (big.len <= RS_RUNINDEX_MAX_LINE)
		assert_int_equal(rs_buf_puts(&big, "        "), 0);
	assert_int_equal(rs_buf_puts(&big, "}\n"), 0);
	assert_int_equal(rs_map_find(&e, &found, big.ptr, big.len, "index/commits/c/d/0.jsonl",
				     RS_MAP_COMMITS, c1), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "longer than"));
	rs_buf_release(&big);
	rs_buf_release(&line);
}

/* Append a run `id` of `commit` recorded at `at` to `shard`. */
static void put_commit_run(struct rs_buf *shard, const char *id, const char *commit, const char *at)
{
	struct rs_run_entry e;

	make_entry(&e, id, commit, at, 1.0);
	assert_int_equal(rs_run_entry_to_line(shard, &e), 0);
	json_decref(e.metrics);
}

/* Load what resolving `q` needs, resolve it: the runs read, and the run's id (or NULL). */
static size_t resolve_count(struct rs_repo *repo, const char *q, const char **id, int *err)
{
	static char got[64];
	struct rs_runindex idx;
	const struct rs_run_entry *e = NULL;
	size_t n;

	rs_runindex_init(&idx);
	*id = NULL;
	*err = rs_runindex_load_queries(&idx, repo, NULL, &q, 1);
	if (!*err)
		*err = rs_runindex_resolve(&e, &idx, q);
	if (!*err) {
		snprintf(got, sizeof(got), "%s", e->id);
		*id = got;
	}
	n = idx.count;
	rs_runindex_release(&idx);
	return n;
}

/* Commit `path` holding `text` (NULL: `len` bytes of blanks). */
static void put_file(struct rs_repo *repo, const char *path, const char *text, size_t len)
{
	struct rs_commit_file f = { .path = path, .data = text, .size = text ? strlen(text) : len };
	struct rs_commit_options opts = { .message = "map" };
	char *blank = NULL;

	if (!text) {
		blank = malloc(len);
		assert_non_null(blank);
		memset(blank, ' ', len);
		f.data = blank;
	}
	if (rs_commit_files(repo, &f, 1, &opts, NULL, NULL))
		fail_msg("commit of %s: %s", path, rs_error_message());
	free(blank);
}

static void test_commit_map(void **state)
{
	char dir[] = "/tmp/test_run_index-XXXXXX", cmd[128];
	char ab1[41], ab2[41], cd[41], ef[41], n12[41], aa[41], c99[41], ff[41], ee[41];
	struct rs_repo *repo;
	struct rs_buf sep = RS_BUF_INIT, oct = RS_BUF_INIT, nov = RS_BUF_INIT, bucket = RS_BUF_INIT;
	struct rs_map_files map = { NULL, 0, 0 };
	struct rs_commit_file files[16];
	struct rs_commit_options opts = { .message = "index" };
	struct rs_run_entry newest;
	const char *id, *cands[4];
	size_t n = 0, at = 0;
	int err, found;

	(void)state;
	repo = new_repo(dir);
	sha(ab1, "abcd12", '1');
	sha(ab2, "abcd99", '2');
	sha(cd, "cd00aaa", '3');
	sha(ef, "ef", '4');
	sha(n12, "1234", '5');
	sha(aa, "aa00", '6');
	sha(c99, "9999", '7');
	sha(ff, "ffff", '8');
	sha(ee, "eeee", '9');
	/* September: abcd12 (2 runs), abcd99, cd00aaa; October: abcd12, ef x3; November: 1234 x3 */
	put_commit_run(&sep, "20260910-000000-ci-abcd121", ab1, "2026-09-10T00:00:00Z");
	put_commit_run(&sep, "20260911-000000-ci-abcd121", ab1, "2026-09-11T00:00:00Z");
	put_commit_run(&sep, "20260912-000000-ci-abcd992", ab2, "2026-09-12T00:00:00Z");
	put_commit_run(&sep, "20260913-000000-ci-cd00aaa", cd, "2026-09-13T00:00:00Z");
	put_commit_run(&oct, "20261010-000000-ci-abcd121", ab1, "2026-10-10T00:00:00Z");
	for (int i = 0; i < 3; i++) {
		char rid[64], when[32];

		snprintf(rid, sizeof(rid), "20261011-00000%d-ci-ef44444", i);
		snprintf(when, sizeof(when), "2026-10-11T00:00:0%dZ", i);
		put_commit_run(&oct, rid, ef, when);
		snprintf(rid, sizeof(rid), "20261111-00000%d-ci-1234555", i);
		snprintf(when, sizeof(when), "2026-11-11T00:00:0%dZ", i);
		put_commit_run(&nov, rid, n12, when);
	}
	files[n++] = (struct rs_commit_file){ .path = "index/2026-09.jsonl", .data = sep.ptr, .size = sep.len };
	files[n++] = (struct rs_commit_file){ .path = "index/2026-10.jsonl", .data = oct.ptr, .size = oct.len };
	files[n++] = (struct rs_commit_file){ .path = "index/2026-11.jsonl", .data = nov.ptr, .size = nov.len };
	assert_int_equal(rs_commit_files(repo, files, n, &opts, NULL, NULL), 0);
	/* without a map: every shard */
	assert_int_equal(resolve_count(repo, "cd00", &id, &err), 11);
	assert_int_equal(err, 0);
	assert_string_equal(id, "20260913-000000-ci-cd00aaa");

	/* a run of aa00 recorded with the map (built from every shard) */
	make_entry(&newest, "20261120-000000-ci-aa00666", aa, "2026-11-20T00:00:00Z", 1.0);
	assert_int_equal(rs_run_entry_to_line(&nov, &newest), 0);
	assert_int_equal(rs_map_record(&map, repo, &newest, "index/2026-11.jsonl", RS_MAP_COMMITS), 0);
	json_decref(newest.metrics);
	n = 0;
	files[n++] = (struct rs_commit_file){ .path = "index/2026-11.jsonl", .data = nov.ptr, .size = nov.len };
	for (size_t i = 0; i < map.count; i++) {
		assert_non_null(strstr(map.files[i].path.ptr, "index/commits/"));
		files[n++] = (struct rs_commit_file){ .path = map.files[i].path.ptr,
						      .data = map.files[i].text.ptr,
						      .size = map.files[i].text.len };
	}
	assert_int_equal(map.count, 6); /* buckets a/b/c, c/d/0, e/f/4, 1/2/3, a/a/0, covered.json */
	assert_int_equal(rs_commit_files(repo, files, n, &opts, NULL, NULL), 0);

	/* cd00: November (the covered run's), then September, which the map names; not October */
	assert_int_equal(resolve_count(repo, "cd00", &id, &err), 8);
	assert_int_equal(err, 0);
	assert_string_equal(id, "20260913-000000-ci-cd00aaa");
	/* by its run id: its commit's 7 digits name it */
	assert_int_equal(resolve_count(repo, "20260913-000000-ci-cd00aaa", &id, &err), 8);
	assert_string_equal(id, "20260913-000000-ci-cd00aaa");
	/* 1234: November alone; the newest of its three runs */
	assert_int_equal(resolve_count(repo, "1234555", &id, &err), 4);
	assert_string_equal(id, "20261111-000002-ci-1234555");
	/* abcd12's newest run is October's; abcd is ambiguous, as a whole read says */
	assert_int_equal(resolve_count(repo, "ABCD12", &id, &err), 12);
	assert_string_equal(id, "20261010-000000-ci-abcd121");
	resolve_count(repo, "abcd", &id, &err);
	assert_int_equal(err, RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "commit prefix 'abcd' is ambiguous: it matches "
					       "abcd12111111 and abcd99222222"));
	/* a commit never profiled: November alone, and not found */
	assert_int_equal(resolve_count(repo, "ffff", &id, &err), 4);
	assert_int_equal(err, RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "no run of commit 'ffff'"));
	/* a run id not in its commit's shards, and a name of no commit: every shard */
	assert_int_equal(resolve_count(repo, "20260913-000000-ci-cd00bbb", &id, &err), 12);
	assert_int_equal(err, RS_ENOTFOUND);
	assert_int_equal(resolve_count(repo, "nosuchrun", &id, &err), 12);
	assert_int_equal(err, RS_ENOTFOUND);

	/* the first profiled of a list */
	cands[0] = ff;
	cands[1] = cd;
	cands[2] = n12;
	assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 3), 0);
	assert_true(found);
	assert_int_equal(at, 1);
	cands[1] = ee;
	assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 2), 0);
	assert_false(found);
	/* exactly as spelled: an upper-case spelling of a commit is another commit */
	cands[0] = "CD00AAA333333333333333333333333333333333";
	assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 1), 0);
	assert_false(found);
	cands[0] = "xyz";
	assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 1), RS_EUSAGE);
	/* a run recorded since the map (an older results): found in the shards after the covered run */
	put_commit_run(&nov, "20261121-000000-ci-9999777", c99, "2026-11-21T00:00:00Z");
	put_file(repo, "index/2026-11.jsonl", nov.ptr, 0);
	cands[0] = ff;
	cands[1] = c99;
	cands[2] = cd;
	assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 3), 0);
	assert_true(found);
	assert_int_equal(at, 1);
	assert_int_equal(resolve_count(repo, "9999", &id, &err), 5);
	assert_string_equal(id, "20261121-000000-ci-9999777");

	/* hostile buckets: refused as corrupt data, naming the file */
	cands[0] = cd;
	static const char *const hostile[] = {
		"{\"commit\":\"cd00aaa333333333333333333333333333333333\",\"shards\":[[\"../../etc\",1,1]]}\n",
		"{\"commit\":\"cd00aaa333333333333333333333333333333333\",\"shards\":[[\"2026-09\",1,1]]}\n"
		"{\"commit\":\"ab00aaa333333333333333333333333333333333\",\"shards\":[[\"2026-09\",1,1]]}\n",
		"not json\n",
	};
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		put_file(repo, "index/commits/c/d/0.jsonl", hostile[i], 0);
		resolve_count(repo, "cd00", &id, &err);
		assert_int_equal(err, RS_ECORRUPT);
		assert_non_null(strstr(rs_error_message(), "index/commits/c/d/0.jsonl:"));
		assert_int_equal(rs_runindex_first_profiled(&at, &found, repo, NULL, cands, 1),
				 RS_ECORRUPT);
		assert_non_null(strstr(rs_error_message(), "index/commits/c/d/0.jsonl:"));
	}
	/* oversized: refused from the object's size, before it is read */
	put_file(repo, "index/commits/c/d/0.jsonl", NULL, RS_BRANCHMAP_MAX_BUCKET + 1);
	resolve_count(repo, "cd00", &id, &err);
	assert_int_equal(err, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'index/commits/c/d/0.jsonl' is too large"));
	/* a folder where the bucket should be */
	put_file(repo, "index/commits/5/6/0.jsonl/x", "x", 0);
	resolve_count(repo, "5600", &id, &err);
	assert_int_equal(err, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'index/commits/5/6/0.jsonl' is not a file"));
	/* a bucket the tree does not have: no commit of it has a run */
	assert_int_equal(resolve_count(repo, "5555", &id, &err), 5);
	assert_int_equal(err, RS_ENOTFOUND);
	/* covered.json naming a run of no shard: every shard, as without a map */
	put_file(repo, "index/commits/covered.json", "{\"run\":\"gone\"}\n", 0);
	assert_int_equal(resolve_count(repo, "1234", &id, &err), 13);
	assert_int_equal(err, 0);
	/* an oversized covered.json */
	put_file(repo, "index/commits/covered.json", NULL, RS_BRANCHMAP_MAX_COVERED + 1);
	resolve_count(repo, "1234", &id, &err);
	assert_int_equal(err, RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "index/commits/covered.json"));

	rs_map_files_release(&map);
	rs_buf_release(&sep);
	rs_buf_release(&oct);
	rs_buf_release(&nov);
	rs_buf_release(&bucket);
	rs_repo_free(repo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	git_libgit2_shutdown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_round_trip),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_order_and_resolve),
		cmocka_unit_test(test_readme_bounded),
		cmocka_unit_test(test_shard_path),
		cmocka_unit_test(test_load_from_tree),
		cmocka_unit_test(test_month_folders_read_as_needed),
		cmocka_unit_test(test_branch_map),
		cmocka_unit_test(test_commit_map_parse),
		cmocka_unit_test(test_commit_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
