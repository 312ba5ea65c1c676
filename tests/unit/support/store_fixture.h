/*
 * The fixture the store-level tests share (test_store, test_store_codec,
 * test_maint): a temporary folder holding a folder remote and a chunk
 * cache, and the small file helpers they all need.
 */
#ifndef RS_TEST_STORE_FIXTURE_H
#define RS_TEST_STORE_FIXTURE_H

#include "results/error.h"
#include <stdint.h>

#include "remote/remote.h"
#include "util/hash.h"

struct store_fixture {
	char dir[256];         /* /tmp/rs-test-<name>-XXXXXX, removed by teardown */
	char remote_dir[300];  /* where the remote's files are on disk */
	char cache_dir[300];   /* <dir>/cache */
	struct rs_remote *remote;
};

/* Create the remote's folder (otherwise the first push does). */
#define STORE_FIXTURE_MKDIR 1
/*
 * With RS_TEST_REMOTE_URL set (tests/e2e/test_maint_remotes.sh), open a
 * fresh prefix of that network remote instead; RS_TEST_REMOTE_ROOT is
 * where its server keeps the files.
 */
#define STORE_FIXTURE_ENV_URL 2

/* cmocka setup/teardown bodies: `*state` receives the fixture. */
int store_fixture_setup(void **state, const char *name, int flags);
int store_fixture_teardown(void **state);

/* SplitMix64: the tests' deterministic pseudo-random bytes. */
uint64_t test_splitmix(uint64_t *state);

/* The SHA-256 and size of the file at `path` (asserts it can be read). */
void test_file_id(const char *path, struct rs_id *oid, uint64_t *size);

/* 1 when the two files hold the same bytes. */
RS_MUST_CHECK
int test_files_equal(const char *a, const char *b);

#endif
