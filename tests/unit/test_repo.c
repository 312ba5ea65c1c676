/* git/repo.h helpers: URL credentials, LFS endpoints, the local LFS store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <git2.h>

#include "git/repo.h"
#include "results/repo.h"
#include "results/error.h"
#include "util/fs.h"

static void check_strip(const char *in, const char *want)
{
	struct rs_buf out = RS_BUF_INIT;

	assert_int_equal(rs_url_strip_credentials(&out, in), 0);
	assert_string_equal(rs_buf_cstr(&out), want);
	rs_buf_release(&out);
}

static void test_strip_credentials(void **state)
{
	check_strip("https://user:pa@ss@host.example/org/x?sig=SECRET#f", "https://host.example/org/x");
	check_strip("https://host.example/a@b", "https://host.example/a@b");
	check_strip("s3://bucket/prefix", "s3://bucket/prefix");
	check_strip("file:///srv/store", "file:///srv/store");
	check_strip("/srv/store", "/srv/store");
	check_strip("az://acct/container?sv=1&sig=x", "az://acct/container");
}

static void check_endpoint(const char *in, const char *want)
{
	struct rs_buf out = RS_BUF_INIT;

	assert_int_equal(rs_lfs_endpoint(&out, in), 0);
	assert_string_equal(rs_buf_cstr(&out), want);
	rs_buf_release(&out);
}

static void test_lfs_endpoint(void **state)
{
	check_endpoint("https://github.com/org/results.git", "https://github.com/org/results.git/info/lfs");
	check_endpoint("https://github.com/org/results", "https://github.com/org/results.git/info/lfs");
	check_endpoint("https://u:tok@github.com/org/results/", "https://github.com/org/results.git/info/lfs");
	check_endpoint("git@github.com:org/results.git", "https://github.com/org/results.git/info/lfs");
	check_endpoint("ssh://git@github.com:22/org/results", "https://github.com/org/results.git/info/lfs");
	check_endpoint("file:///srv/results.git", "file:///srv/results.git");
	check_endpoint("/srv/results.git", "file:///srv/results.git");
}

static void test_lfs_store_file(void **state)
{
	char dir[] = "/tmp/test_repo-XXXXXX";
	struct rs_buf path = RS_BUF_INIT, obj = RS_BUF_INIT, got = RS_BUF_INIT, cmd = RS_BUF_INIT;
	git_repository *g = NULL;
	struct rs_repo *r = NULL;
	struct rs_id oid, want, other;
	uint64_t size = 0;

	assert_non_null(mkdtemp(dir));
	git_libgit2_init();
	assert_int_equal(git_repository_init(&g, dir, 0), 0);
	git_repository_free(g);
	assert_int_equal(rs_repo_open(&r, dir), 0);
	assert_int_equal(rs_buf_printf(&path, "%s/session", dir), 0);
	assert_int_equal(rs_fs_write_file_atomic(path.ptr, "hello\n", 6), 0);
	rs_sha256(&want, "hello\n", 6);

	/* A wrong expected id places nothing. */
	memset(&other, 1, sizeof(other));
	assert_int_equal(rs_repo_lfs_store_file(r, path.ptr, &other, NULL, NULL), RS_ECORRUPT);
	assert_int_equal(rs_repo_lfs_has(r, &want, 6), RS_ENOTFOUND);

	assert_int_equal(rs_repo_lfs_store_file(r, path.ptr, &want, &oid, &size), 0);
	assert_int_equal(rs_id_cmp(&oid, &want), 0);
	assert_int_equal(size, 6);
	assert_int_equal(rs_repo_lfs_has(r, &oid, 6), 0);
	assert_int_equal(rs_repo_lfs_has(r, &oid, 7), RS_ENOTFOUND);
	assert_int_equal(rs_repo_lfs_object_path(&obj, r, &oid), 0);
	assert_non_null(strstr(obj.ptr, "/.git/lfs/objects/58/91/5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"));
	assert_int_equal(rs_fs_read_file(&got, obj.ptr, 100), 0);
	assert_string_equal(got.ptr, "hello\n");
	/* Again: already there, fine. */
	assert_int_equal(rs_repo_lfs_store_file(r, path.ptr, NULL, NULL, NULL), 0);

	/* Not a results repository until it has a marker or results.remote. */
	assert_int_equal(rs_repo_check_results(r), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "results init"));

	rs_repo_free(r);
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	rs_buf_release(&path);
	rs_buf_release(&obj);
	rs_buf_release(&got);
	git_libgit2_shutdown();
}

/* The resident kilobytes of this process's mappings of pack files; -1 without /proc. */
static long pack_rss_kb(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4096];
	unsigned long lo, hi;
	int in_pack = 0;
	long kb = 0, v;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			/* a mapping: "start-end perms offset dev inode [path]" */
			while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
				line[--n] = '\0';
			in_pack = n > 5 && !strcmp(line + n - 5, ".pack");
		} else if (in_pack && sscanf(line, "Rss: %ld kB", &v) == 1) {
			kb += v;
		}
	}
	fclose(f);
	return kb;
}

/*
 * Reading a whole pack keeps at most RS_REPO_PACK_MAPPED of it (plus the
 * window being read) resident, however large the pack (issue 21: with
 * libgit2's defaults, every page read stayed mapped: the first add at
 * 100,000 runs held 70 MB of its pack).
 */
static void test_pack_mapping_bounded(void **state)
{
	enum { BLOBS = 40, BLOB = 1024 * 1024 };
	char dir[] = "/tmp/test_repo_pack-XXXXXX";
	struct rs_buf cmd = RS_BUF_INIT;
	git_repository *g = NULL;
	git_oid ids[BLOBS];
	unsigned char *data = malloc(BLOB);
	uint64_t x = 0x9e3779b97f4a7c15u;
	long kb;

	(void)state;
	assert_non_null(data);
	if (pack_rss_kb() < 0) {
		free(data);
		skip(); /* no /proc/self/smaps */
	}
	assert_non_null(mkdtemp(dir));
	rs_repo_global_init();
	/* 40 MiB of incompressible blobs, packed by git without deltas */
	assert_int_equal(git_repository_init(&g, dir, 1), 0);
	for (int i = 0; i < BLOBS; i++) {
		for (size_t k = 0; k < BLOB; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			data[k] = (unsigned char)x;
		}
		assert_int_equal(git_blob_create_from_buffer(&ids[i], g, data, BLOB), 0);
	}
	git_repository_free(g);
	g = NULL;
	assert_int_equal(rs_buf_printf(&cmd, "cd '%s' && git pack-objects -q --window=0 objects/pack/pack <<EOF >/dev/null", dir), 0);
	for (int i = 0; i < BLOBS; i++)
		assert_int_equal(rs_buf_printf(&cmd, "\n%s", git_oid_tostr_s(&ids[i])), 0);
	assert_int_equal(rs_buf_puts(&cmd, "\nEOF\ngit prune-packed && "
				     "test -z \"$(find objects -path 'objects/[0-9a-f][0-9a-f]/*')\""), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_clear(&cmd);

	/* every blob read through the library, as shards are */
	assert_int_equal(git_repository_open(&g, dir), 0);
	for (int i = 0; i < BLOBS; i++) {
		git_blob *b = NULL;

		assert_int_equal(rs_repo_blob_capped(&b, g, &ids[i], 2 * BLOB, "blob"), 0);
		assert_int_equal(git_blob_rawsize(b), BLOB);
		git_blob_free(b);
	}
	kb = pack_rss_kb();
	fprintf(stderr, "pack resident after reading 40 MiB: %ld KB\n", kb);
	assert_true(kb <= (long)(RS_REPO_PACK_MAPPED + RS_REPO_PACK_WINDOW) / 1024);
	git_repository_free(g);
	rs_repo_global_shutdown();
	assert_int_equal(rs_buf_printf(&cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd.ptr), 0);
	rs_buf_release(&cmd);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strip_credentials),
		cmocka_unit_test(test_lfs_endpoint),
		cmocka_unit_test(test_lfs_store_file),
		cmocka_unit_test(test_pack_mapping_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
