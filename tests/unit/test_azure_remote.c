/*
 * The Azure backend's block uploads through the remote interface, against
 * azurite on loopback (tests/servers/azurite.sh; it checks SharedKey
 * signatures). A put of more than results.azure.singleputmax bytes goes
 * as Put Block requests from results.azure.threads worker threads, then
 * one Put Block List (src/remote/azure.c, put_blocks): the pushes of
 * tests/e2e/test_remote_azure.sh stream their packs instead
 * (put_stream), so this suite is what runs those workers, also under
 * ThreadSanitizer (tests/tsan-tests.txt):
 *  - put_buf and put_file of objects of many small blocks on four
 *    threads, into a container that does not exist yet (every worker's
 *    first block fails, the container is made, the upload starts again),
 *    read back whole and by range;
 *  - an overwrite with other bytes and another block count;
 *  - a refused key: every worker fails at once, and the one error
 *    returned says the credentials were refused.
 *
 * azurite is started by the suite and stopped at its end; without it the
 * suite fails (never a skip).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/remote.h"
#include "results/buf.h"
#include "results/error.h"

#include "server_script.h"

/* remote.h: a get to the end needs a capped buffer. */
#define GET_BUF_INIT { NULL, 0, 0, 16u << 20 }

static char source_dir[2048];
static char work_dir[1024];
static char good_cs[1024];
static int server_up;

/* Small blocks, so that a few hundred KiB make dozens of them on four threads. */
static const char *config(const char *key, void *payload)
{
	(void)payload;
	if (!strcmp(key, "results.azure.singleputmax"))
		return "16384";
	if (!strcmp(key, "results.azure.blocksize"))
		return "4096";
	if (!strcmp(key, "results.azure.threads"))
		return "4";
	return NULL;
}

static const struct rs_remote_options options = { config, NULL };

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/rs-azure-test-XXXXXX";
	const char *cs;
	int err;

	(void)state;
	test_source_dir(source_dir, sizeof(source_dir));
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(work_dir, sizeof(work_dir), "%s", tmpl);
	unsetenv("RS_AZURITE_CONNECTION_STRING");
	err = test_run_server_script("bash '%s/tests/servers/azurite.sh' start '%s/azurite'",
				     source_dir, work_dir);
	cs = getenv("RS_AZURITE_CONNECTION_STRING");
	if (err || !cs || strlen(cs) >= sizeof(good_cs)) {
		/* A suite whose server cannot start fails: it is never skipped. */
		fprintf(stderr, "test_azure_remote: azurite did not start (in %s/azurite; "
				"scripts/install-deps.sh installs it)\n", work_dir);
		return -1;
	}
	snprintf(good_cs, sizeof(good_cs), "%s", cs);
	setenv("AZURE_STORAGE_CONNECTION_STRING", good_cs, 1);
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
	setenv("RESULTS_HTTP_RETRY_BASE_MS", "10", 1);
	server_up = 1;
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[2 * sizeof(source_dir) + 3 * sizeof(work_dir) + 128];

	(void)state;
	if (!work_dir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/servers/azurite.sh' stop '%s/azurite'; rm -rf '%s'",
		 source_dir, work_dir, work_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Never a skip: without its server the suite fails (group_setup already did). */
static void need_server(void)
{
	if (!server_up)
		fail_msg("azurite is not running");
}

static struct rs_remote *open_store(const char *url)
{
	struct rs_remote *r = NULL;

	if (rs_remote_open(&r, url, &options))
		fail_msg("open %s: %s", url, rs_error_message());
	return r;
}

static void fill_pattern(unsigned char *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

/* `key` holds exactly the n bytes of p: stat, a whole get and a ranged one. */
static void assert_holds(struct rs_remote *r, const char *key, const unsigned char *p, size_t n)
{
	struct rs_buf b = GET_BUF_INIT;
	uint64_t size = 0;

	assert_int_equal(r->stat(r, key, &size), 0);
	assert_int_equal(size, n);
	assert_int_equal(r->get(r, key, 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.ptr, p, n);
	rs_buf_clear(&b);
	/* a range across a block boundary */
	assert_int_equal(r->get(r, key, 4000, 200, &b), 0);
	assert_int_equal(b.len, 200);
	assert_memory_equal(b.ptr, p + 4000, 200);
	rs_buf_release(&b);
}

static void test_put_buf_in_blocks(void **state)
{
	size_t n = 200003, m = 70001; /* 49 blocks and a short one; then 18 */
	unsigned char *p = malloc(n), *q = malloc(m);
	struct rs_remote *r;

	(void)state;
	need_server();
	assert_non_null(p);
	assert_non_null(q);
	fill_pattern(p, n, 1);
	fill_pattern(q, m, 2);
	/* a container no put has made yet: the first blocks all fail */
	r = open_store("azure://devstoreaccount1/blocks1/team/store");
	assert_int_equal(r->put_buf(r, "packs/aa.pack", p, n), 0);
	assert_holds(r, "packs/aa.pack", p, n);
	/* another put over it: the blob is the new bytes only */
	assert_int_equal(r->put_buf(r, "packs/aa.pack", q, m), 0);
	assert_holds(r, "packs/aa.pack", q, m);
	assert_int_equal(r->del(r, "packs/aa.pack"), 0);
	assert_int_equal(r->stat(r, "packs/aa.pack", NULL), RS_ENOTFOUND);
	rs_remote_free(r);
	free(p);
	free(q);
}

static void test_put_file_in_blocks(void **state)
{
	size_t n = 150001;
	unsigned char *p = malloc(n);
	char path[1100];
	struct rs_remote *r;
	FILE *f;

	(void)state;
	need_server();
	assert_non_null(p);
	fill_pattern(p, n, 3);
	snprintf(path, sizeof(path), "%s/object", work_dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	r = open_store("azure://devstoreaccount1/blocks2/store");
	assert_int_equal(r->put_file(r, "objects/bb", path), 0);
	assert_holds(r, "objects/bb", p, n);
	rs_remote_free(r);
	unlink(path);
	free(p);
}

static void test_refused_key(void **state)
{
	char bad[1100], *k;
	size_t n = 100000;
	unsigned char *p = malloc(n);
	struct rs_remote *r;
	int err;

	(void)state;
	need_server();
	assert_non_null(p);
	fill_pattern(p, n, 4);
	/* the development account with another (well-formed) key */
	snprintf(bad, sizeof(bad), "%s", good_cs);
	k = strstr(bad, "AccountKey=");
	assert_non_null(k);
	k += strlen("AccountKey=");
	assert_true(k[0] != 'A');
	k[0] = 'A';
	setenv("AZURE_STORAGE_CONNECTION_STRING", bad, 1);
	r = open_store("azure://devstoreaccount1/blocks3/store");
	err = r->put_buf(r, "packs/cc.pack", p, n);
	setenv("AZURE_STORAGE_CONNECTION_STRING", good_cs, 1);
	assert_int_equal(err, RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "packs/cc.pack"));
	rs_remote_free(r);
	/* nothing of it shows with the right key */
	r = open_store("azure://devstoreaccount1/blocks3/store");
	assert_int_equal(r->stat(r, "packs/cc.pack", NULL), RS_ENOTFOUND);
	rs_remote_free(r);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_buf_in_blocks),
		cmocka_unit_test(test_put_file_in_blocks),
		cmocka_unit_test(test_refused_key),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
