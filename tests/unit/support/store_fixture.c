#include "store_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/buf.h"
#include "util/fs.h"

int store_fixture_setup(void **state, const char *name, int flags)
{
	struct store_fixture *f = calloc(1, sizeof(*f));
	const char *url = flags & STORE_FIXTURE_ENV_URL ? getenv("RS_TEST_REMOTE_URL") : NULL;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/rs-test-%s-XXXXXX", name);
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->cache_dir, sizeof(f->cache_dir), "%s/cache", f->dir);
	if (url) {
		char full[900];
		const char *sub = strrchr(f->dir, '/') + 1;

		snprintf(full, sizeof(full), "%s/%s", url, sub);
		snprintf(f->remote_dir, sizeof(f->remote_dir), "%s/%s", getenv("RS_TEST_REMOTE_ROOT"), sub);
		assert_int_equal(rs_remote_open(&f->remote, full, NULL), 0);
	} else {
		snprintf(f->remote_dir, sizeof(f->remote_dir), "%s/remote", f->dir);
		if (flags & STORE_FIXTURE_MKDIR)
			assert_int_equal(rs_fs_mkdir_p(f->remote_dir, 0755), 0);
		assert_int_equal(rs_remote_open(&f->remote, f->remote_dir, NULL), 0);
	}
	*state = f;
	return 0;
}

int store_fixture_teardown(void **state)
{
	struct store_fixture *f = *state;
	char cmd[400];

	rs_remote_free(f->remote);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

uint64_t test_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void test_file_id(const char *path, struct rs_id *oid, uint64_t *size)
{
	struct rs_buf b = RS_BUF_INIT;

	assert_int_equal(rs_fs_read_file(&b, path, 1u << 30), 0);
	rs_sha256(oid, b.ptr, b.len);
	*size = b.len;
	rs_buf_release(&b);
}

int test_files_equal(const char *a, const char *b)
{
	struct rs_buf x = RS_BUF_INIT, y = RS_BUF_INIT;
	int same;

	assert_int_equal(rs_fs_read_file(&x, a, 1u << 30), 0);
	assert_int_equal(rs_fs_read_file(&y, b, 1u << 30), 0);
	same = x.len == y.len && !memcmp(x.ptr, y.ptr, x.len);
	rs_buf_release(&x);
	rs_buf_release(&y);
	return same;
}
