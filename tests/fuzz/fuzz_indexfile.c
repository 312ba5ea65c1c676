/*
 * Fuzz the .git/index reader of the splicer (git/indexfile.h): the index
 * of a clone is bytes anyone with write access to it made. Whatever the
 * bytes: no crash, no leak, no read out of bounds; look-ups of a few
 * paths answer; and an index that was accepted, spliced with an edit,
 * is read back accepted, with the edited entry where it belongs.
 *
 * The bytes go to a file (the reader maps a file) beside a cone-mode
 * .git/info/sparse-checkout of top-level files, as `results clone`
 * writes it, so that sparse indexes take the cone path too.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/indexfile.h"
#include "results/error.h"

/* Not assert(): release builds define NDEBUG and the calls must run. */
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s\n", #c); abort(); } } while (0)

static char dir[64], index_path[96];

static void write_all(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	CHECK(f != NULL);
	CHECK(fwrite(p, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

static void clean_up(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/info/sparse-checkout", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/info", dir);
	rmdir(path);
	unlink(index_path);
	rmdir(dir);
}

static void set_up(void)
{
	char path[128];

	if (dir[0])
		return;
	snprintf(dir, sizeof(dir), "/tmp/rs-fuzz-index.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/info", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/info/sparse-checkout", dir);
	write_all(path, "/*\n!/*/\n", 8);
	snprintf(index_path, sizeof(index_path), "%s/index", dir);
	atexit(clean_up);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = { "README.md", "runs/2026/12/01/a/run.json",
					     "index/2026-12.jsonl", "a", "" };
	struct rs_index_file *f = NULL;
	struct rs_index_edit e;
	size_t n;
	int err;

	set_up();
	write_all(index_path, data, size);
	if (rs_index_file_open(&f, index_path, 1) != 0) {
		/* refused: a right answer to hostile bytes, and the lock is given back */
		rs_error_clear();
		CHECK(access(index_path, F_OK) == 0);
		return 0;
	}
	n = rs_index_file_count(f);
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		git_oid id;
		uint32_t mode;
		size_t dlen = 0;

		(void)rs_index_file_find(f, paths[i], &id, &mode);
		if (rs_index_file_where(f, paths[i], &dlen, &id) != 0)
			rs_error_clear();
		CHECK(dlen <= strlen(paths[i]));
	}
	memset(&e, 0, sizeof(e));
	e.path = "README.md";
	e.mode = GIT_FILEMODE_BLOB;
	e.id.id[0] = 1;
	err = rs_index_file_commit(f, &e, 1, NULL);
	rs_index_file_free(f);
	f = NULL;
	if (err) {
		rs_error_clear(); /* unmerged there, or too big: the index is as it was */
		return 0;
	}
	/* what was written is read back, README.md's entry the edit's */
	CHECK(rs_index_file_open(&f, index_path, 0) == 0);
	CHECK(rs_index_file_count(f) >= n);
	{
		git_oid id;
		uint32_t mode = 0;

		CHECK(rs_index_file_find(f, "README.md", &id, &mode) == 1);
		CHECK(id.id[0] == 1 && mode == GIT_FILEMODE_BLOB);
	}
	rs_index_file_free(f);
	return 0;
}
