/*
 * The HTTP backends against real servers on loopback, through the remote
 * interface only: nginx WebDAV (plain, HTTPS with a CA made for the run,
 * basic/bearer auth, git credential helpers), the fault-injecting proxy
 * (503 then recovery, and giving up), and azurite for Azure Blob storage.
 *
 * The servers are started with the scripts in tests/servers and stopped afterwards;
 * they need scripts/install-deps.sh (nginx, dav-ext, node, azurite).
 * Pure helpers (URL redaction, encoding, credential parsing) are tested
 * first, without a server.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/credential.h"
#include "remote/http_transport.h"
#include "remote/remote.h"
#include "remote/s3.h"
#include "server_script.h"
#include "stream_check.h"
#include "results/error.h"
#include "util/hex.h"
#include "util/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define RS_TEST_DEV_KEY \
	"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

/* remote.h: a get to the end needs a capped buffer. */
#define GET_BUF_INIT { NULL, 0, 0, 64u << 20 }

static char source_dir[2048];
static char work_dir[1024];

static void stop_server(const char *script, const char *sub)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "bash %s/tests/servers/%s stop %s/%s",
		 source_dir, script, work_dir, sub);
	if (system(cmd) != 0)
		fprintf(stderr, "stopping %s failed\n", script);
}

static void clear_auth_env(void)
{
	unsetenv("RESULTS_HTTP_TOKEN");
	unsetenv("RESULTS_HTTP_USER");
	unsetenv("RESULTS_HTTP_PASSWORD");
	unsetenv("RESULTS_CA_BUNDLE");
	unsetenv("AZURE_STORAGE_CONNECTION_STRING");
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
}

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/rs-http-test-XXXXXX";
	char cfg[4200];
	FILE *f;

	(void)state;
	test_source_dir(source_dir, sizeof(source_dir));
	assert_non_null(mkdtemp(tmpl));
	snprintf(work_dir, sizeof(work_dir), "%s", tmpl);
	/* No user or system git config (credential helpers), no prompts. */
	snprintf(cfg, sizeof(cfg), "%s/gitconfig", work_dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fclose(f);
	setenv("GIT_CONFIG_GLOBAL", cfg, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_TERMINAL_PROMPT", "0", 1);
	setenv("RESULTS_HTTP_RETRY_BASE_MS", "20", 1);
	clear_auth_env();
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[4200];

	(void)state;
	/* A failed assertion skips a test's own stop: stop everything here. */
	stop_server("webdav.sh", "dav");
	stop_server("webdav.sh", "davs");
	stop_server("webdav.sh", "davr");
	stop_server("fault-proxy.sh", "proxy1");
	stop_server("fault-proxy.sh", "proxy2");
	stop_server("fault-proxy.sh", "proxy3");
	stop_server("fault-proxy.sh", "proxy4");
	stop_server("fault-proxy.sh", "proxy5");
	stop_server("fault-proxy.sh", "proxy6");
	stop_server("webdav.sh", "davt");
	stop_server("azurite.sh", "azurite");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", work_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", work_dir);
	return 0;
}

/* ---- pure helpers ---- */

static void test_redact_url(void **state)
{
	struct rs_buf b = GET_BUF_INIT;

	(void)state;
	assert_int_equal(rs_http_redact_url(&b, "https://user:secret@host:8443/a/b?sig=XYZ&se=1"), 0);
	assert_string_equal(rs_buf_cstr(&b), "https://host:8443/a/b");
	rs_buf_clear(&b);
	assert_int_equal(rs_http_redact_url(&b, "http://h/p@x"), 0);
	assert_string_equal(rs_buf_cstr(&b), "http://h/p@x");
	rs_buf_clear(&b);
	assert_int_equal(rs_http_redact_url(&b, "https://a@b@host"), 0);
	assert_string_equal(rs_buf_cstr(&b), "https://host");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_encode_str(&b, "a b/c~d%e", RS_SLASH_KEEP), 0);
	assert_string_equal(rs_buf_cstr(&b), "a%20b/c~d%25e");
	rs_buf_clear(&b);
	assert_int_equal(rs_percent_encode_str(&b, "a/b", RS_SLASH_ENCODE), 0);
	assert_string_equal(rs_buf_cstr(&b), "a%2Fb");
	rs_buf_release(&b);
}

static void test_credential_parse(void **state)
{
	struct rs_credential c;
	struct rs_buf b = GET_BUF_INIT;
	const char answer[] = "protocol=https\nhost=h\nusername=bob\npassword=s3cr=t\n\nignored=1\n";

	(void)state;
	rs_credential_init(&c);
	assert_int_equal(rs_credential_from_url(&c, "https://al%40ice@example.org:8443/dav/store"), 0);
	assert_string_equal(c.protocol, "https");
	assert_string_equal(c.host, "example.org:8443");
	assert_string_equal(c.path, "dav/store");
	assert_string_equal(c.username, "al@ice");
	assert_null(c.password);
	assert_int_equal(rs_credential_parse(&c, answer, sizeof(answer) - 1), 0);
	assert_string_equal(c.username, "bob");
	assert_string_equal(c.password, "s3cr=t");
	assert_int_equal(rs_credential_describe(&b, &c, 0), 0);
	assert_string_equal(rs_buf_cstr(&b),
			    "protocol=https\nhost=example.org:8443\npath=dav/store\nusername=bob\n\n");
	assert_int_equal(rs_credential_parse(&c, "nonsense\n", 9), RS_ECORRUPT);
	rs_credential_release(&c);
	rs_buf_release(&b);

	rs_credential_init(&c);
	assert_int_equal(rs_credential_from_url(&c, "not a url"), RS_EUSAGE);
	rs_credential_release(&c);
}

/* ---- the conformance suite, for any remote ---- */

static void fill_random(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

struct listing {
	char keys[64][128];
	uint64_t sizes[64];
	int n;
	int stop_after;
};

static int collect(const char *key, uint64_t size, void *payload)
{
	struct listing *l = payload;

	if (l->n < 64) {
		snprintf(l->keys[l->n], sizeof(l->keys[0]), "%s", key);
		l->sizes[l->n] = size;
		l->n++;
	}
	if (l->stop_after && l->n >= l->stop_after)
		return 42;
	return 0;
}

static int listing_has(const struct listing *l, const char *key, uint64_t size)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->keys[i], key))
			return l->sizes[i] == size;
	return 0;
}

struct par_get {
	struct rs_remote *r;
	const unsigned char *expect;
	size_t size;
	int index;
	int failures;
};

static void *par_get_main(void *arg)
{
	struct par_get *g = arg;
	struct rs_buf b = GET_BUF_INIT;
	int round;

	for (round = 0; round < 8; round++) {
		uint64_t off = (uint64_t)((g->index * 7919 + round * 104729) %
					  (g->size - 4096));
		uint64_t len = 4096 + (uint64_t)round * 1000;

		if (off + len > g->size)
			len = g->size - off;
		rs_buf_clear(&b);
		if (g->r->get(g->r, "packs/big.pack", off, len, &b) ||
		    b.len != len || memcmp(b.ptr, g->expect + off, len))
			g->failures++;
	}
	rs_buf_release(&b);
	return NULL;
}

/* The whole of `key`, read into the empty `b`, is the n bytes at `data`. */
static void assert_get_is(struct rs_remote *r, const char *key, struct rs_buf *b, const void *data, size_t n)
{
	assert_int_equal(r->get(r, key, 0, UINT64_MAX, b), 0);
	assert_int_equal(b->len, n);
	assert_memory_equal(b->ptr, data, n);
}

/*
 * put_stream: bytes go out while the file is still being written (the
 * upload asks for more than 1 MiB before the writer goes past 2 MiB),
 * the result is byte-identical, a file sealed before anything went out
 * works too, and a cancelled upload leaves nothing at its key.
 */
static void run_stream_checks(struct rs_remote *r, const unsigned char *data, size_t n)
{
	struct stream_check grow = { 2u << 20, 1u << 20, 0, 0 };
	struct stream_check small = { 0, 0, 0, 0 };
	struct stream_check cancel = { 2u << 20, 1u << 20, 1, 0 };
	struct rs_buf b = GET_BUF_INIT;
	char path[4200];
	uint64_t size = 0;

	assert_true(n > (3u << 20));
	assert_non_null(r->put_stream);
	snprintf(path, sizeof(path), "%s/stream.bin", work_dir);
	assert_int_equal(stream_check_put(r, "packs/stream.pack", path, data, n, &grow), 0);
	assert_true(grow.overlapped);
	assert_int_equal(r->stat(r, "packs/stream.pack", &size), 0);
	assert_int_equal(size, n);
	assert_get_is(r, "packs/stream.pack", &b, data, n);
	rs_buf_clear(&b);

	assert_int_equal(stream_check_put(r, "packs/stream-small.pack", path, data, 1000, &small), 0);
	assert_get_is(r, "packs/stream-small.pack", &b, data, 1000);

	assert_int_not_equal(stream_check_put(r, "packs/stream-cancel.pack", path, data, n, &cancel), 0);
	assert_true(cancel.overlapped);
	assert_int_equal(r->stat(r, "packs/stream-cancel.pack", &size), RS_ENOTFOUND);

	assert_int_equal(r->del(r, "packs/stream.pack"), 0);
	assert_int_equal(r->del(r, "packs/stream-small.pack"), 0);
	rs_buf_release(&b);
}

static void run_suite(struct rs_remote *r)
{
	enum { SMALL = 100 * 1024, BIG = 3 * 1024 * 1024 + 17 };
	unsigned char *small = malloc(SMALL), *big = malloc(BIG);
	struct rs_buf b = GET_BUF_INIT;
	struct listing l;
	char path[4200];
	pthread_t th[8];
	struct par_get pg[8];
	uint64_t size = 0;
	FILE *f;
	int i;

	assert_non_null(small);
	assert_non_null(big);
	fill_random(small, SMALL, 1);
	fill_random(big, BIG, 2);

	/* Missing keys. */
	assert_int_equal(r->stat(r, "packs/none.pack", &size), RS_ENOTFOUND);
	assert_int_equal(r->get(r, "packs/none.pack", 0, UINT64_MAX, &b), RS_ENOTFOUND);
	assert_int_equal(r->del(r, "packs/none.pack"), RS_ENOTFOUND);
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "packs/", collect, &l), 0);
	assert_int_equal(l.n, 0);

	/* Buffers, files, overwrite with the same bytes, empty objects. */
	assert_int_equal(r->put_buf(r, "packs/small.pack", small, SMALL), 0);
	assert_int_equal(r->put_buf(r, "packs/small.pack", small, SMALL), 0);
	assert_int_equal(r->put_buf(r, "manifests/empty", "", 0), 0);
	snprintf(path, sizeof(path), "%s/big.bin", work_dir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(big, 1, BIG, f), BIG);
	fclose(f);
	assert_int_equal(r->put_file(r, "packs/big.pack", path), 0);

	assert_int_equal(r->stat(r, "packs/small.pack", &size), 0);
	assert_int_equal(size, SMALL);
	assert_int_equal(r->stat(r, "packs/big.pack", &size), 0);
	assert_int_equal(size, BIG);
	assert_int_equal(r->stat(r, "manifests/empty", &size), 0);
	assert_int_equal(size, 0);
	/* Only asking whether it exists (lfs-agent does that for FORMAT). */
	assert_int_equal(r->stat(r, "manifests/empty", NULL), 0);
	assert_int_equal(r->stat(r, "manifests/none", NULL), RS_ENOTFOUND);

	/* Whole, ranged, to-the-end and out-of-range reads; appends to out. */
	assert_int_equal(rs_buf_puts(&b, "xy"), 0);
	assert_int_equal(r->get(r, "packs/big.pack", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, BIG + 2);
	assert_memory_equal(b.ptr + 2, big, BIG);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/small.pack", 1000, 5000, &b), 0);
	assert_int_equal(b.len, 5000);
	assert_memory_equal(b.ptr, small + 1000, 5000);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/small.pack", SMALL - 10, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.ptr, small + SMALL - 10, 10);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/small.pack", SMALL - 10, 20, &b), RS_ECORRUPT);
	assert_int_equal(b.len, 0);
	assert_int_equal(r->get(r, "packs/small.pack", SMALL + 5, 20, &b), RS_ECORRUPT);
	assert_int_equal(r->get(r, "manifests/empty", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 0);

	/* Many threads reading ranges of one object at once. */
	for (i = 0; i < 8; i++) {
		pg[i].r = r;
		pg[i].expect = big;
		pg[i].size = BIG;
		pg[i].index = i;
		pg[i].failures = 0;
		assert_int_equal(pthread_create(&th[i], NULL, par_get_main, &pg[i]), 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(pg[i].failures, 0);
	}

	/* Listings by prefix, with sizes, and stopping early. */
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "packs/", collect, &l), 0);
	assert_int_equal(l.n, 2);
	assert_true(listing_has(&l, "packs/small.pack", SMALL));
	assert_true(listing_has(&l, "packs/big.pack", BIG));
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "", collect, &l), 0);
	assert_int_equal(l.n, 3);
	assert_true(listing_has(&l, "manifests/empty", 0));
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "packs/sm", collect, &l), 0);
	assert_int_equal(l.n, 1);
	assert_true(listing_has(&l, "packs/small.pack", SMALL));
	memset(&l, 0, sizeof(l));
	l.stop_after = 1;
	assert_int_equal(r->list(r, "", collect, &l), 42);
	assert_int_equal(l.n, 1);

	/* Delete. */
	assert_int_equal(r->del(r, "packs/small.pack"), 0);
	assert_int_equal(r->stat(r, "packs/small.pack", &size), RS_ENOTFOUND);
	assert_int_equal(r->del(r, "packs/small.pack"), RS_ENOTFOUND);
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "packs/", collect, &l), 0);
	assert_int_equal(l.n, 1);

	/* Bad keys never reach the server. */
	assert_int_equal(r->put_buf(r, "../escape", "x", 1), RS_EUSAGE);
	assert_int_equal(r->stat(r, "/abs", &size), RS_EUSAGE);

	run_stream_checks(r, big, BIG);
	/* The whole store through it: put (streaming its pack), then get. */
	assert_int_equal(stream_check_store(r, work_dir, 5u << 20, 4), 0);

	rs_buf_release(&b);
	free(small);
	free(big);
}

/* ---- WebDAV ---- */

static void test_webdav_plain(void **state)
{
	struct rs_remote *r = NULL;

	(void)state;
	assert_int_equal(test_run_server_script("bash %s/tests/servers/webdav.sh start %s/dav",
					   source_dir, work_dir), 0);
	assert_int_equal(rs_remote_open(&r, getenv("RS_WEBDAV_URL"), NULL), 0);
	assert_string_equal(r->display_url, getenv("RS_WEBDAV_URL"));
	run_suite(r);
	rs_remote_free(r);
	stop_server("webdav.sh", "dav");
}

/* Whether any file under `dir` has a name that contains `needle`. */
static int tree_has(const char *dir, const char *needle)
{
	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "find '%s' -name '*%s*' | grep -q .", dir, needle);
	return system(cmd) == 0;
}

static void test_webdav_https_auth(void **state)
{
	struct rs_remote *r = NULL;
	struct rs_buf url = RS_BUF_INIT;
	char store[4300], cfg[4300];
	const char *base;
	FILE *f;
	int err;

	(void)state;
	assert_int_equal(test_run_server_script("bash %s/tests/servers/webdav.sh start %s/davs "
					   "--https --user alice:wonder --token t0ken",
					   source_dir, work_dir), 0);
	base = getenv("RS_WEBDAV_URL");
	assert_int_equal(strncmp(base, "https://", 8), 0);

	/* No CA: verification fails, and says what to do. */
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	err = r->put_buf(r, "packs/a", "abc", 3);
	assert_int_equal(err, RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "certificate"));
	assert_non_null(strstr(rs_error_message(), "RESULTS_CA_BUNDLE"));
	rs_remote_free(r);

	/* The CA, but no credentials anywhere: 401 and a clear message. */
	setenv("RESULTS_CA_BUNDLE", getenv("RS_WEBDAV_CA"), 1);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	err = r->put_buf(r, "packs/a", "abc", 3);
	assert_int_equal(err, RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "credential"));
	rs_remote_free(r);

	/* A wrong password: refused, not retried, nothing written. */
	setenv("RESULTS_HTTP_USER", "alice", 1);
	setenv("RESULTS_HTTP_PASSWORD", "not-the-password", 1);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	err = r->put_buf(r, "manifests/m1", "abc", 3);
	assert_int_equal(err, RS_EAUTH);
	assert_null(strstr(rs_error_message(), "not-the-password"));
	assert_false(tree_has(getenv("RS_WEBDAV_ROOT"), "m1"));
	rs_remote_free(r);

	/* Basic from the environment: the full suite over TLS. */
	setenv("RESULTS_HTTP_PASSWORD", "wonder", 1);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	run_suite(r);
	rs_remote_free(r);
	unsetenv("RESULTS_HTTP_USER");
	unsetenv("RESULTS_HTTP_PASSWORD");

	/* User and password in the URL (discouraged, but git allows it): used, never shown. */
	rs_buf_clear(&url);
	assert_int_equal(rs_buf_printf(&url, "https://alice:wonder@%s", base + 8), 0);
	assert_int_equal(rs_remote_open(&r, rs_buf_cstr(&url), NULL), 0);
	assert_string_equal(r->display_url, base);
	assert_int_equal(r->put_buf(r, "manifests/inurl", "abc", 3), 0);
	rs_remote_free(r);
	rs_buf_clear(&url);
	assert_int_equal(rs_buf_printf(&url, "https://alice:wrong-in-url@%s", base + 8), 0);
	assert_int_equal(rs_remote_open(&r, rs_buf_cstr(&url), NULL), 0);
	assert_int_equal(r->put_buf(r, "manifests/inurl2", "abc", 3), RS_EAUTH);
	assert_null(strstr(rs_error_message(), "wrong-in-url"));
	assert_non_null(strstr(rs_error_message(), "written in the remote URL"));
	rs_remote_free(r);
	rs_buf_clear(&url);

	/* A bearer token. */
	setenv("RESULTS_HTTP_TOKEN", "t0ken", 1);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	assert_int_equal(r->put_buf(r, "manifests/tok", "abc", 3), 0);
	rs_remote_free(r);
	setenv("RESULTS_HTTP_TOKEN", "wrong", 1);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	assert_int_equal(r->put_buf(r, "manifests/tok2", "abc", 3), RS_EAUTH);
	assert_null(strstr(rs_error_message(), "wrong"));
	rs_remote_free(r);
	unsetenv("RESULTS_HTTP_TOKEN");

	/*
	 * git's credential helper: a store file with the right password is
	 * used; one with a wrong password is rejected, and git's "store"
	 * helper then forgets it.
	 */
	snprintf(store, sizeof(store), "%s/cred-store", work_dir);
	snprintf(cfg, sizeof(cfg), "%s/gitconfig", work_dir);
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f, "[credential]\n\thelper = store --file=%s\n", store);
	fclose(f);
	f = fopen(store, "w");
	assert_non_null(f);
	/* git-credential-store keys on protocol://host[:port] */
	assert_int_equal(rs_buf_puts(&url, base), 0);
	{
		char *slash = strchr(url.ptr + 8, '/');

		*slash = '\0';
		fprintf(f, "https://alice:wonder@%s\n", url.ptr + 8);
	}
	fclose(f);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	assert_int_equal(r->put_buf(r, "manifests/helper", "abc", 3), 0);
	rs_remote_free(r);

	f = fopen(store, "w");
	assert_non_null(f);
	fprintf(f, "https://alice:bad@%s\n", url.ptr + 8);
	fclose(f);
	assert_int_equal(rs_remote_open(&r, base, NULL), 0);
	assert_int_equal(r->put_buf(r, "manifests/helper2", "abc", 3), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "rejected"));
	rs_remote_free(r);
	{
		struct stat st;

		assert_int_equal(stat(store, &st), 0);
		assert_int_equal(st.st_size, 0); /* the bad entry was erased */
	}

	/*
	 * Several processes needing the password at once (git-lfs runs
	 * concurrent agents) ask the helper one after another, never
	 * together: the helper logs start/end around a pause.
	 */
	{
		char helper[1200], log[1200], line[64], expect = 's';
		pid_t pids[4];
		int i, status, nlines = 0;

		snprintf(helper, sizeof(helper), "%s/helper.sh", work_dir);
		snprintf(log, sizeof(log), "%s/helper.log", work_dir);
		f = fopen(helper, "w");
		assert_non_null(f);
		fprintf(f, "#!/bin/sh\n[ \"$1\" = get ] || exit 0\ncat >/dev/null\n"
			"echo start >>'%s'\nsleep 0.3\necho end >>'%s'\n"
			"printf 'username=alice\\npassword=wonder\\n'\n", log, log);
		fclose(f);
		chmod(helper, 0755);
		f = fopen(cfg, "w");
		assert_non_null(f);
		fprintf(f, "[credential]\n\thelper = %s\n", helper);
		fclose(f);
		setenv("XDG_RUNTIME_DIR", work_dir, 1);
		for (i = 0; i < 4; i++) {
			pids[i] = fork();
			assert_true(pids[i] >= 0);
			if (pids[i] == 0) {
				char key[32];
				int e;

				snprintf(key, sizeof(key), "manifests/proc%d", i);
				e = rs_remote_open(&r, base, NULL);
				if (!e)
					e = r->put_buf(r, key, "abc", 3);
				_exit(e ? 1 : 0);
			}
		}
		for (i = 0; i < 4; i++) {
			assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
		unsetenv("XDG_RUNTIME_DIR");
		f = fopen(log, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			assert_int_equal(line[0], expect); /* start, end, start, end ... */
			expect = expect == 's' ? 'e' : 's';
			nlines++;
		}
		fclose(f);
		assert_int_equal(nlines, 8);
	}
	f = fopen(cfg, "w");
	assert_non_null(f);
	fclose(f);

	rs_buf_release(&url);
	unsetenv("RESULTS_CA_BUNDLE");
	stop_server("webdav.sh", "davs");
}

static int count_lines_with(const char *file, const char *needle)
{
	char line[1024];
	FILE *f = fopen(file, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}

/*
 * Start the fault proxy in work_dir/`sub` in front of the WebDAV server
 * with `opts` (fault-proxy.sh's options) and open a remote through it, at
 * the WebDAV URL's `path`.
 */
static struct rs_remote *open_via_proxy(const char *sub, const char *opts, const char *path)
{
	struct rs_remote *r = NULL;
	struct rs_buf url = RS_BUF_INIT;

	assert_int_equal(test_run_server_script("bash %s/tests/servers/fault-proxy.sh start %s/%s "
					   "--target %s %s", source_dir, work_dir, sub,
					   getenv("RS_WEBDAV_URL"), opts), 0);
	assert_int_equal(rs_buf_printf(&url, "%s%s", getenv("RS_PROXY_URL"), path), 0);
	assert_int_equal(rs_remote_open(&r, rs_buf_cstr(&url), NULL), 0);
	rs_buf_release(&url);
	return r;
}

static void test_webdav_retry(void **state)
{
	struct rs_remote *r = NULL;
	struct rs_buf b = GET_BUF_INIT;
	char log[4300];
	const char *path;
	int err;

	(void)state;
	assert_int_equal(test_run_server_script("bash %s/tests/servers/webdav.sh start %s/davr",
					   source_dir, work_dir), 0);
	path = strstr(getenv("RS_WEBDAV_URL") + 8, "/");

	/* Three 503s, then the real server: every operation gets through. */
	setenv("RESULTS_HTTP_RETRIES", "5", 1);
	r = open_via_proxy("proxy1", "--fail 3", path);
	assert_int_equal(r->put_buf(r, "packs/p1", "hello", 5), 0);
	assert_int_equal(r->get(r, "packs/p1", 1, 3, &b), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.ptr, "ell", 3);
	rs_remote_free(r);
	stop_server("fault-proxy.sh", "proxy1");
	snprintf(log, sizeof(log), "%s/proxy1/proxy.log", work_dir);
	assert_int_equal(count_lines_with(log, "-> 503"), 3);

	/* Connection resets are retried too. */
	r = open_via_proxy("proxy2", "--fail 2 --reset", path);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/p1", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 5);
	rs_remote_free(r);
	stop_server("fault-proxy.sh", "proxy2");

	/* A server that keeps failing: bounded, RS_ERETRY, says 503. */
	setenv("RESULTS_HTTP_RETRIES", "3", 1);
	r = open_via_proxy("proxy3", "--fail 1000", path);
	err = r->put_buf(r, "packs/p2", "hello", 5);
	assert_int_equal(err, RS_ERETRY);
	assert_non_null(strstr(rs_error_message(), "503"));
	rs_remote_free(r);
	stop_server("fault-proxy.sh", "proxy3");
	snprintf(log, sizeof(log), "%s/proxy3/proxy.log", work_dir);
	assert_int_equal(count_lines_with(log, "-> 503"), 3);
	unsetenv("RESULTS_HTTP_RETRIES");

	/*
	 * A server that wants a Content-Length (411 to a chunked PUT): a
	 * streamed pack goes up whole once complete, and the remote does not
	 * try chunked again.
	 */
	{
		enum { N = 3 * 1024 * 1024 + 5 };
		unsigned char *data = malloc(N);
		struct stream_check c = { 0, 0, 0, 0 };
		char spath[4300];

		assert_non_null(data);
		fill_random(data, N, 6);
		snprintf(spath, sizeof(spath), "%s/stream411.bin", work_dir);
		r = open_via_proxy("proxy6", "--no-chunked", path);
		assert_int_equal(stream_check_put(r, "packs/s411", spath, data, N, &c), 0);
		assert_int_equal(stream_check_put(r, "packs/s411b", spath, data, 1000, &c), 0);
		rs_buf_clear(&b);
		assert_get_is(r, "packs/s411", &b, data, N);
		rs_remote_free(r);
		stop_server("fault-proxy.sh", "proxy6");
		snprintf(log, sizeof(log), "%s/proxy6/proxy.log", work_dir);
		assert_int_equal(count_lines_with(log, "-> 411"), 1);

		/*
		 * One that answers 201 to a chunked body but stores none of it:
		 * the size check catches it and the plain PUT follows.
		 */
		r = open_via_proxy("proxy6", "--empty-chunked", path);
		assert_int_equal(stream_check_put(r, "packs/s0", spath, data, N, &c), 0);
		rs_buf_clear(&b);
		assert_get_is(r, "packs/s0", &b, data, N);
		rs_remote_free(r);
		stop_server("fault-proxy.sh", "proxy6");
		assert_int_equal(count_lines_with(log, "body dropped"), 1);
		assert_false(tree_has(getenv("RS_WEBDAV_ROOT"), ".tmp-"));
		free(data);
	}

	/*
	 * libcurl's proxy variables are honoured: the fault proxy (failing
	 * nothing) also works as a forward proxy, and logs what went through.
	 */
	assert_int_equal(test_run_server_script("bash %s/tests/servers/fault-proxy.sh start %s/proxy4 "
					   "--target %s", source_dir, work_dir,
					   getenv("RS_WEBDAV_URL")), 0);
	setenv("http_proxy", getenv("RS_PROXY_URL"), 1);
	unsetenv("no_proxy");
	unsetenv("NO_PROXY");
	assert_int_equal(rs_remote_open(&r, getenv("RS_WEBDAV_URL"), NULL), 0);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/p1", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 5);
	rs_remote_free(r);
	unsetenv("http_proxy");
	stop_server("fault-proxy.sh", "proxy4");
	snprintf(log, sizeof(log), "%s/proxy4/proxy.log", work_dir);
	assert_true(count_lines_with(log, "packs/p1 -> forward") >= 1);

	rs_buf_release(&b);
	stop_server("webdav.sh", "davr");
}

/* ---- Azure (azurite) ---- */

static const char *small_blocks_config(const char *key, void *payload)
{
	(void)payload;
	/* Blocks of 256 KiB above 1 MiB, so the 3 MiB object takes 13 blocks. */
	if (!strcmp(key, "results.azure.singleputmax"))
		return "1048576";
	if (!strcmp(key, "results.azure.blocksize"))
		return "262144";
	if (!strcmp(key, "results.azure.endpoint"))
		return getenv("RS_TEST_AZURE_ENDPOINT");
	return NULL;
}

static int count_keys(struct rs_remote *r, const char *prefix)
{
	struct listing l;

	memset(&l, 0, sizeof(l));
	if (r->list(r, prefix, collect, &l))
		return -1;
	return l.n;
}

/*
 * An account SAS made here with OpenSSL directly (the 2015-04-05 string
 * to sign: account, sp, ss, srt, st, se, sip, spr, sv, each + "\n").
 */
static void make_account_sas(struct rs_buf *out, const char *account, const char *key_b64)
{
	unsigned char key[64], mac[32], sig[64];
	unsigned int maclen = 0;
	struct rs_buf sts = RS_BUF_INIT;
	int klen;

	klen = EVP_DecodeBlock(key, (const unsigned char *)key_b64, (int)strlen(key_b64)) - 2;
	assert_int_equal(klen, 64);
	assert_int_equal(rs_buf_printf(&sts, "%s\nrwdlac\nb\nsco\n\n2099-01-01T00:00:00Z\n\n\n2020-10-02\n", account), 0);
	assert_non_null(HMAC(EVP_sha256(), key, klen, (unsigned char *)sts.ptr, sts.len, mac, &maclen));
	EVP_EncodeBlock(sig, mac, (int)maclen);
	assert_int_equal(rs_buf_puts(out, "sv=2020-10-02&ss=b&srt=sco&sp=rwdlac&se=2099-01-01T00%3A00%3A00Z&sig="), 0);
	assert_int_equal(rs_percent_encode_str(out, (const char *)sig, RS_SLASH_ENCODE), 0);
	rs_buf_release(&sts);
}

static void test_azure(void **state)
{
	struct rs_remote_options opts = { small_blocks_config, NULL };
	struct rs_remote *r = NULL;
	struct rs_buf cs = RS_BUF_INIT, sas = RS_BUF_INIT, b = GET_BUF_INIT, u = RS_BUF_INIT;
	uint64_t size;
	int err;

	(void)state;
	clear_auth_env();
	assert_int_equal(test_run_server_script("bash %s/tests/servers/azurite.sh start %s/azurite",
					   source_dir, work_dir), 0);

	/* azurite's development connection string, as printed, just works. */
	setenv("AZURE_STORAGE_CONNECTION_STRING", getenv("RS_AZURITE_CONNECTION_STRING"), 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/team/store", &opts), 0);
	assert_null(strstr(r->display_url, "Eby8"));
	run_suite(r);
	rs_remote_free(r);

	/*
	 * A stream into a container that is not there yet: whichever block
	 * thread meets ContainerNotFound creates it (both may), then retries.
	 */
	{
		enum { N = 3 * 1024 * 1024 + 5 };
		struct stream_check grow = { 2u << 20, 1u << 20, 0, 0 };
		unsigned char *data = malloc(N);
		char path[4200];

		assert_non_null(data);
		fill_random(data, N, 7);
		snprintf(path, sizeof(path), "%s/stream-fresh.bin", work_dir);
		assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/freshstream", &opts), 0);
		assert_int_equal(stream_check_put(r, "packs/fresh.pack", path, data, N, &grow), 0);
		assert_get_is(r, "packs/fresh.pack", &b, data, N);
		assert_int_equal(r->del(r, "packs/fresh.pack"), 0);
		rs_buf_clear(&b);
		rs_remote_free(r);
		free(data);
	}

	/*
	 * The same for a whole put in blocks (put_blocks: above singleputmax,
	 * 256 KiB blocks on four threads, ThreadSanitizer's case too): every
	 * worker's first block meets ContainerNotFound, the one error kept is
	 * that, the container is made and the upload starts again.
	 */
	{
		enum { N = 3 * 256 * 1024 * 2 + 9 };
		unsigned char *data = malloc(N);

		assert_non_null(data);
		fill_random(data, N, 8);
		assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/freshblocks", &opts), 0);
		assert_int_equal(r->put_buf(r, "packs/blocks.pack", data, N), 0);
		assert_get_is(r, "packs/blocks.pack", &b, data, N);
		rs_buf_clear(&b);
		rs_remote_free(r);
		free(data);
	}

	/* A wrong key: refused with a clear message, nothing written. */
	assert_int_equal(rs_buf_printf(&cs, "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
		      "AccountKey=%s;BlobEndpoint=%s;",
		      "AAAAvdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
		      getenv("RS_AZURITE_ENDPOINT")), 0);
	setenv("AZURE_STORAGE_CONNECTION_STRING", rs_buf_cstr(&cs), 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/wrongkey", &opts), 0);
	err = r->put_buf(r, "manifests/m1", "abc", 3);
	assert_int_equal(err, RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "403"));
	assert_non_null(strstr(rs_error_message(), "check the key"));
	assert_null(strstr(rs_error_message(), "AAAAvdM02"));
	{
		/* in blocks: every worker is refused at once, one error returned */
		enum { N = 2 * 1024 * 1024 };
		unsigned char *data = malloc(N);

		assert_non_null(data);
		fill_random(data, N, 9);
		err = r->put_buf(r, "packs/refused.pack", data, N);
		assert_int_equal(err, RS_EAUTH);
		assert_non_null(strstr(rs_error_message(), "packs/refused.pack"));
		assert_non_null(strstr(rs_error_message(), "403"));
		free(data);
	}
	rs_remote_free(r);
	setenv("AZURE_STORAGE_CONNECTION_STRING", getenv("RS_AZURITE_CONNECTION_STRING"), 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/wrongkey", &opts), 0);
	assert_int_equal(count_keys(r, ""), 0);
	rs_remote_free(r);
	unsetenv("AZURE_STORAGE_CONNECTION_STRING");

	/* AZURE_STORAGE_ACCOUNT + AZURE_STORAGE_KEY and the blob-endpoint URL form. */
	setenv("AZURE_STORAGE_ACCOUNT", "devstoreaccount1", 1);
	setenv("AZURE_STORAGE_KEY", RS_TEST_DEV_KEY, 1);
	setenv("RS_TEST_AZURE_ENDPOINT", getenv("RS_AZURITE_ENDPOINT"), 1);
	assert_int_equal(rs_remote_open(&r, "https://devstoreaccount1.blob.core.windows.net/results/team/store",
					&opts), 0);
	assert_int_equal(r->stat(r, "packs/big.pack", &size), 0);
	assert_int_equal(size, 3 * 1024 * 1024 + 17);
	rs_remote_free(r);
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_STORAGE_KEY");

	/* A SAS token (no key at all): reads and writes; a bad one is refused. */
	make_account_sas(&sas, "devstoreaccount1", RS_TEST_DEV_KEY);
	setenv("AZURE_STORAGE_SAS_TOKEN", rs_buf_cstr(&sas), 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/team/store", &opts), 0);
	assert_null(strstr(r->display_url, "sig="));
	assert_int_equal(r->get(r, "manifests/empty", 0, UINT64_MAX, &b), 0);
	assert_int_equal(r->put_buf(r, "manifests/sas", "sas!", 4), 0);
	assert_int_equal(r->stat(r, "manifests/sas", &size), 0);
	assert_int_equal(size, 4);
	rs_remote_free(r);
	rs_buf_clear(&sas);
	make_account_sas(&sas, "devstoreaccount1",
			 "AAAAvdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");
	setenv("AZURE_STORAGE_SAS_TOKEN", rs_buf_cstr(&sas), 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/team/store", &opts), 0);
	err = r->put_buf(r, "manifests/sas2", "sas!", 4);
	assert_int_equal(err, RS_EAUTH);
	assert_null(strstr(rs_error_message(), "sig="));
	rs_remote_free(r);
	unsetenv("AZURE_STORAGE_SAS_TOKEN");

	/* 503s in front of azurite: retried with fresh signatures. */
	assert_int_equal(rs_buf_printf(&u, "bash %s/tests/servers/fault-proxy.sh start %s/proxy1 --target %s --fail 3",
		      source_dir, work_dir, getenv("RS_AZURITE_ENDPOINT")), 0);
	assert_int_equal(test_run_server_script("%s", rs_buf_cstr(&u)), 0);
	rs_buf_clear(&u);
	assert_int_equal(rs_buf_printf(&u, "%s/devstoreaccount1", getenv("RS_PROXY_URL")), 0);
	setenv("RS_TEST_AZURE_ENDPOINT", rs_buf_cstr(&u), 1);
	setenv("AZURE_STORAGE_KEY", RS_TEST_DEV_KEY, 1);
	assert_int_equal(rs_remote_open(&r, "azure://devstoreaccount1/results/flaky", &opts), 0);
	assert_int_equal(r->put_buf(r, "packs/x", "flaky", 5), 0);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/x", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 5);
	rs_remote_free(r);
	stop_server("fault-proxy.sh", "proxy1");
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("RS_TEST_AZURE_ENDPOINT");

	rs_buf_release(&cs);
	rs_buf_release(&sas);
	rs_buf_release(&b);
	rs_buf_release(&u);
	stop_server("azurite.sh", "azurite");
}

/*
 * The transport's status handling, with the fault proxy answering a
 * chosen status (and body) to every request: which codes come back, what
 * the message says, and how many tries were made (4xx never retried).
 */
/* The same with the backend's error rules (`errors`, may be NULL). */
static void check_status_with(const struct rs_http_errors *errors, const char *status_args,
			      int want_err, const char *want_text, int want_requests)
{
	struct rs_http_options opts;
	struct rs_http *http = NULL;
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT, body = RS_BUF_INIT;
	char log[1200], marker[16];
	int err;

	assert_int_equal(test_run_server_script("bash %s/tests/servers/fault-proxy.sh start %s/proxy5 "
					   "--target %s --fail 1000 %s", source_dir, work_dir,
					   getenv("RS_WEBDAV_URL"), status_args), 0);
	assert_int_equal(rs_buf_printf(&url, "%s/store/x", getenv("RS_PROXY_URL")), 0);
	memset(&opts, 0, sizeof(opts));
	opts.errors = errors;
	assert_int_equal(rs_http_new(&http, &opts), 0);
	rs_http_request_init(&req, "GET", rs_buf_cstr(&url));
	rs_http_response_init(&resp);
	req.response_body = &body;
	err = rs_http_perform(http, &req, &resp);
	assert_int_equal(err, want_err);
	if (!strstr(rs_error_message(), want_text))
		fail_msg("'%s' does not say '%s'", rs_error_message(), want_text);
	assert_int_equal(body.len, 0); /* an error body never reaches the caller */
	assert_int_equal(resp.attempts, want_requests);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	rs_http_free(http);
	stop_server("fault-proxy.sh", "proxy5");
	snprintf(log, sizeof(log), "%s/proxy5/proxy.log", work_dir);
	snprintf(marker, sizeof(marker), "-> %.3s", status_args + 9);
	assert_int_equal(count_lines_with(log, marker), want_requests);
	rs_buf_release(&url);
	rs_buf_release(&body);
}

/* A status through the transport with S3's error rules. */
static void check_status(const char *status_args, int want_err, const char *want_text,
			 int want_requests)
{
	check_status_with(&rs_s3_http_errors, status_args, want_err, want_text, want_requests);
}

static void test_transport_status(void **state)
{
	struct rs_http *http = NULL;
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT, body = RS_BUF_INIT;
	char path[1200];
	FILE *f;

	(void)state;
	assert_int_equal(test_run_server_script("bash %s/tests/servers/webdav.sh start %s/davt",
					   source_dir, work_dir), 0);
	setenv("RESULTS_HTTP_RETRIES", "3", 1);
	check_status("--status 403", RS_EAUTH, "403 access denied - check the key", 1);
	check_status("--status 403 --body '<Error><Code>RequestTimeTooSkewed</Code></Error>'",
		     RS_EAUTH, "clock skew", 1);
	check_status("--status 403 --body '<Error><Code>SignatureDoesNotMatch</Code></Error>'",
		     RS_EAUTH, "signature was refused - check the key", 1);
	check_status("--status 404 --body '<Error><Code>NoSuchBucket</Code></Error>'",
		     RS_EREMOTE, "no such bucket", 1);
	check_status("--status 404", RS_ENOTFOUND, "404 not found", 1);
	/* The transport knows statuses only: S3's codes are S3's rules. */
	check_status_with(NULL, "--status 404 --body '<Error><Code>NoSuchBucket</Code></Error>'",
			  RS_ENOTFOUND, "/store/x: 404 not found (NoSuchBucket)", 1);
	check_status("--status 401", RS_EAUTH, "401", 1);
	check_status("--status 400", RS_EGENERIC, "400 bad request", 1);
	check_status("--status 429", RS_ERETRY, "429 too many requests", 3);
	check_status("--status 500", RS_ERETRY, "gave up after 3 tries", 3);

	/* Two 503s then the object: only the object's bytes reach the caller. */
	snprintf(path, sizeof(path), "%s/store", getenv("RS_WEBDAV_ROOT"));
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/store/x", getenv("RS_WEBDAV_ROOT"));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("the object", f);
	fclose(f);
	assert_int_equal(test_run_server_script("bash %s/tests/servers/fault-proxy.sh start %s/proxy5 "
					   "--target %s --fail 2", source_dir, work_dir,
					   getenv("RS_WEBDAV_URL")), 0);
	assert_int_equal(rs_buf_printf(&url, "%s/store/x", getenv("RS_PROXY_URL")), 0);
	assert_int_equal(rs_http_new(&http, NULL), 0);
	rs_http_request_init(&req, "GET", rs_buf_cstr(&url));
	rs_http_response_init(&resp);
	assert_int_equal(rs_buf_puts(&body, "kept:"), 0);
	req.response_body = &body;
	assert_int_equal(rs_http_perform(http, &req, &resp), 0);
	assert_string_equal(rs_buf_cstr(&body), "kept:the object");
	assert_int_equal(resp.status, 200);
	assert_int_equal(resp.attempts, 3);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	rs_http_free(http);
	stop_server("fault-proxy.sh", "proxy5");

	unsetenv("RESULTS_HTTP_RETRIES");
	rs_buf_release(&url);
	rs_buf_release(&body);
	stop_server("webdav.sh", "davt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact_url),
		cmocka_unit_test(test_credential_parse),
		cmocka_unit_test(test_webdav_plain),
		cmocka_unit_test(test_webdav_https_auth),
		cmocka_unit_test(test_webdav_retry),
		cmocka_unit_test(test_transport_status),
		cmocka_unit_test(test_azure),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
