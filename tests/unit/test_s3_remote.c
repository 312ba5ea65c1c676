/*
 * The S3 backend through the remote interface, against s3rver on loopback
 * behind tests/servers/s3-verify-proxy.js, which recomputes every
 * signature with @smithy/signature-v4 and refuses mismatches. So every
 * request below (ranged GETs, PUTs, multipart with its query strings,
 * paged listings with base64 continuation tokens, DELETE) is also a
 * cross-check of our SigV4 against the AWS SDK's signer.
 *
 * The servers are started by tests/servers/s3-servers.sh (node needed)
 * and stopped at the end. The test also compares our Authorization
 * header with the one tests/servers/s3-sign.js computes for the same
 * requests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <cmocka.h>

#include "remote/remote.h"
#include "remote/sigv4.h"
#include "stream_check.h"
#include "results/buf.h"
#include "results/error.h"

/* remote.h: a get to the end needs a capped buffer. */
#define GET_BUF_INIT { NULL, 0, 0, 64u << 20 }

static char state_dir[64] = "";
static char servers_dir[1024];
static char verify_url[128], skewed_url[128], failpart_url[128], failpart_log[256];
static char signed_url[128], signed_log[256];
static char s3rver_url[128];
static int servers_up;

static void read_env_line(const char *line, const char *name, char *out, size_t n)
{
	size_t l = strlen(name);

	if (!strncmp(line, name, l) && line[l] == '=') {
		const char *v = line + l + 1;
		size_t vl = strcspn(v, "\n");

		/* A value longer than its buffer is a broken set-up: keep it
		 * empty (the tests then fail saying the server is missing)
		 * rather than use a cut URL. */
		if (vl >= n)
			vl = 0;
		memcpy(out, v, vl);
		out[vl] = '\0';
	}
}

static int group_setup(void **state)
{
	const char *data = getenv("RS_TEST_DATA");
	char cmd[2048], path[256], line[512];
	FILE *f;

	(void)state;
	if (!data || system("command -v node >/dev/null 2>&1") != 0) {
		/* A suite whose server cannot start fails: it is never skipped. */
		fprintf(stderr, "test_s3_remote: node or RS_TEST_DATA missing; "
				"run scripts/install-deps.sh and ctest\n");
		return -1;
	}
	/* RS_TEST_DATA is <source>/tests/data, which need not exist. */
	snprintf(servers_dir, sizeof(servers_dir), "%s", data);
	if (strrchr(servers_dir, '/'))
		*strrchr(servers_dir, '/') = '\0';
	snprintf(servers_dir + strlen(servers_dir), sizeof(servers_dir) - strlen(servers_dir),
		 "/servers");
	snprintf(state_dir, sizeof(state_dir), "/tmp/rs-s3test-XXXXXX");
	if (!mkdtemp(state_dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "S3_TEST_BUCKETS='results-test' bash '%s/s3-servers.sh' start '%s' >/dev/null",
		 servers_dir, state_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_s3_remote: could not start the S3 test servers\n");
		snprintf(cmd, sizeof(cmd), "bash '%s/s3-servers.sh' stop '%s'; rm -rf '%s'",
			 servers_dir, state_dir, state_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "test_s3_remote: cannot clean up '%s'\n", state_dir);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/env", state_dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "test_s3_remote: the S3 test servers wrote no '%s'\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		read_env_line(line, "S3_VERIFY_URL", verify_url, sizeof(verify_url));
		read_env_line(line, "S3_SKEWED_URL", skewed_url, sizeof(skewed_url));
		read_env_line(line, "S3_FAILPART_URL", failpart_url, sizeof(failpart_url));
		read_env_line(line, "S3_FAILPART_LOG", failpart_log, sizeof(failpart_log));
		read_env_line(line, "S3_SIGNED_URL", signed_url, sizeof(signed_url));
		read_env_line(line, "S3_SIGNED_LOG", signed_log, sizeof(signed_log));
		read_env_line(line, "S3RVER_URL", s3rver_url, sizeof(s3rver_url));
	}
	fclose(f);
	servers_up = 1;
	/* Keep the developer's own AWS settings out of the test. */
	setenv("HOME", state_dir, 1);
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	setenv("RESULTS_HTTP_RETRY_BASE_MS", "10", 1);
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[2048];

	(void)state;
	if (state_dir[0]) {
		snprintf(cmd, sizeof(cmd), "bash '%s/s3-servers.sh' stop '%s'; rm -rf '%s'",
			 servers_dir, state_dir, state_dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* Never a skip: without its servers the suite fails (group_setup already did). */
#define NEED_SERVERS() do { if (!servers_up) fail_msg("the S3 test servers are not running"); } while (0)

/* Open s3://bucket/prefix at `endpoint` with the given secret. */
static int open_s3(struct rs_remote **r, const char *endpoint, const char *url,
		   const char *key_id, const char *secret)
{
	setenv("AWS_ENDPOINT_URL", endpoint, 1);
	setenv("AWS_ACCESS_KEY_ID", key_id, 1);
	setenv("AWS_SECRET_ACCESS_KEY", secret, 1);
	return rs_remote_open(r, url, NULL);
}

static struct rs_remote *open_good(const char *prefix_url)
{
	struct rs_remote *r = NULL;

	if (open_s3(&r, verify_url, prefix_url, "S3RVER", "S3RVER"))
		fail_msg("open: %s", rs_error_message());
	return r;
}

static void fill_pattern(unsigned char *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
}

static void test_open_urls(void **state)
{
	struct rs_remote *r = NULL;

	(void)state;
	NEED_SERVERS();
	assert_int_equal(open_s3(&r, verify_url, "s3://x", "S3RVER", "S3RVER"), RS_EUSAGE);
	assert_int_equal(open_s3(&r, verify_url, "s3://bucket?x/p", "S3RVER", "S3RVER"), RS_EUSAGE);
	assert_int_equal(open_s3(&r, verify_url, "s3://bucket/a/../b", "S3RVER", "S3RVER"), RS_EUSAGE);
	assert_int_equal(open_s3(&r, "ftp://x", "s3://bucket/p", "S3RVER", "S3RVER"), RS_EUSAGE);
	assert_int_equal(open_s3(&r, verify_url, "s3://results-test//a//b/", "S3RVER", "S3RVER"), 0);
	assert_string_equal(r->display_url, "s3://results-test/a/b");
	rs_remote_free(r);
}

static void test_put_get_stat_del(void **state)
{
	struct rs_remote *r;
	struct rs_buf b = GET_BUF_INIT;
	const char *text = "0123456789abcdefghij";
	uint64_t size = 0;

	(void)state;
	NEED_SERVERS();
	r = open_good("s3://results-test/t1/store");
	assert_int_equal(r->put_buf(r, "packs/aa.pack", text, 20), 0);
	assert_int_equal(r->stat(r, "packs/aa.pack", &size), 0);
	assert_int_equal(size, 20);

	assert_int_equal(r->get(r, "packs/aa.pack", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 20);
	assert_memory_equal(b.ptr, text, 20);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/aa.pack", 5, 4, &b), 0);
	assert_int_equal(b.len, 4);
	assert_string_equal(b.ptr, "5678");
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/aa.pack", 15, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.ptr, "fghij");
	rs_buf_clear(&b);
	/* The tail from exactly the end is empty, not an error. */
	assert_int_equal(r->get(r, "packs/aa.pack", 20, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(r->get(r, "packs/aa.pack", 18, 5, &b), RS_ECORRUPT);
	assert_int_equal(b.len, 0);
	assert_int_equal(r->get(r, "packs/aa.pack", 30, UINT64_MAX, &b), RS_ECORRUPT);
	assert_int_equal(r->get(r, "packs/none.pack", 0, UINT64_MAX, &b), RS_ENOTFOUND);
	assert_int_equal(r->stat(r, "packs/none.pack", &size), RS_ENOTFOUND);
	assert_int_equal(r->get(r, "../escape", 0, 1, &b), RS_EUSAGE);

	/* Appends after what the buffer holds. */
	assert_int_equal(rs_buf_puts(&b, "head:"), 0);
	assert_int_equal(r->get(r, "packs/aa.pack", 0, 3, &b), 0);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.ptr, "head:012");

	/* Overwrite with the same key is allowed; empty objects too. */
	assert_int_equal(r->put_buf(r, "packs/aa.pack", text, 20), 0);
	assert_int_equal(r->put_buf(r, "empty", "", 0), 0);
	assert_int_equal(r->stat(r, "empty", &size), 0);
	assert_int_equal(size, 0);

	assert_int_equal(r->del(r, "packs/aa.pack"), 0);
	assert_int_equal(r->stat(r, "packs/aa.pack", &size), RS_ENOTFOUND);
	assert_int_equal(r->del(r, "packs/aa.pack"), RS_ENOTFOUND);
	rs_buf_release(&b);
	rs_remote_free(r);
}

struct listed {
	char keys[16][64];
	uint64_t sizes[16];
	int n;
};

static int collect(const char *key, uint64_t size, void *payload)
{
	struct listed *l = payload;

	if (l->n == 16)
		return 99;
	snprintf(l->keys[l->n], sizeof(l->keys[0]), "%s", key);
	l->sizes[l->n++] = size;
	return 0;
}

static int has_key(const struct listed *l, const char *key, uint64_t size)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->keys[i], key) && l->sizes[i] == size)
			return 1;
	return 0;
}

static void test_list_pages(void **state)
{
	struct rs_remote *r, *other;
	struct listed l;
	char key[64];
	int i;

	(void)state;
	NEED_SERVERS();
	r = open_good("s3://results-test/t2");
	other = open_good("s3://results-test/t2x");
	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "packs/p%d.pack", i);
		assert_int_equal(r->put_buf(r, key, "xxxxxxxxxx", (size_t)i + 1), 0);
	}
	assert_int_equal(r->put_buf(r, "manifests/m1", "m", 1), 0);
	/* A sibling prefix that starts the same must not leak in. */
	assert_int_equal(other->put_buf(other, "packs/leak.pack", "l", 1), 0);

	/* Two keys a page: three pages and two continuation tokens. */
	setenv("RESULTS_S3_LIST_MAX_KEYS", "2", 1);
	memset(&l, 0, sizeof(l));
	if (r->list(r, "packs/", collect, &l))
		fail_msg("list: %s", rs_error_message());
	assert_int_equal(l.n, 5);
	for (i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "packs/p%d.pack", i);
		assert_true(has_key(&l, key, (uint64_t)i + 1));
	}
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "", collect, &l), 0);
	assert_int_equal(l.n, 6);
	assert_true(has_key(&l, "manifests/m1", 1));
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "nothing/", collect, &l), 0);
	assert_int_equal(l.n, 0);
	unsetenv("RESULTS_S3_LIST_MAX_KEYS");

	/* A callback's non-zero value stops the walk and comes back. */
	l.n = 16;
	assert_int_equal(r->list(r, "packs/", collect, &l), 99);
	rs_remote_free(r);
	rs_remote_free(other);
}

/* n pattern bytes of `seed`, returned (free them) and written to the
 * state folder's file `name` (its path in `path`, pn bytes). */
static unsigned char *pattern_file(char *path, size_t pn, const char *name, size_t n, uint32_t seed)
{
	unsigned char *data = malloc(n);
	FILE *f;

	assert_non_null(data);
	fill_pattern(data, n, seed);
	snprintf(path, pn, "%s/%s", state_dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	fclose(f);
	return data;
}

static void test_multipart(void **state)
{
	struct rs_remote *r;
	struct rs_buf b = GET_BUF_INIT;
	size_t n = 21u << 20; /* 8 + 8 + 5 MiB parts */
	unsigned char *data;
	char path[128];
	uint64_t size = 0;

	(void)state;
	NEED_SERVERS();
	data = pattern_file(path, sizeof(path), "big.bin", n, 7);

	r = open_good("s3://results-test/t3");
	assert_int_equal(r->put_file(r, "packs/big.pack", path), 0);
	assert_int_equal(r->stat(r, "packs/big.pack", &size), 0);
	assert_int_equal(size, n);
	/* Ranges across the part boundaries. */
	assert_int_equal(r->get(r, "packs/big.pack", (8u << 20) - 100, 200, &b), 0);
	assert_memory_equal(b.ptr, data + (8u << 20) - 100, 200);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/big.pack", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, n);
	assert_memory_equal(b.ptr, data, n);
	rs_buf_clear(&b);

	/* The same bytes from memory. */
	assert_int_equal(r->put_buf(r, "packs/big2.pack", data, n), 0);
	assert_int_equal(r->get(r, "packs/big2.pack", n - 10, 10, &b), 0);
	assert_memory_equal(b.ptr, data + n - 10, 10);
	rs_buf_release(&b);
	rs_remote_free(r);
	free(data);
}

/* Lines of a proxy's request log that contain both `a` and `b`. */
static int log_count(const char *file, const char *a, const char *b)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(file, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && strstr(line, b);
	fclose(f);
	return n;
}

/* Whether the logging proxy saw an AbortMultipartUpload of `name`. */
static int failpart_saw_abort(const char *name)
{
	char line[512], want[128];
	int saw = 0;
	FILE *f = fopen(failpart_log, "r");

	assert_non_null(f);
	snprintf(want, sizeof(want), "%s?uploadId=", name);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "DELETE ", 7) && strstr(line, want))
			saw = 1;
	fclose(f);
	return saw;
}

static void test_multipart_failure_leaves_nothing(void **state)
{
	struct rs_remote *r = NULL, *good;
	char path[128];
	size_t n = 17u << 20;
	uint64_t size;

	(void)state;
	NEED_SERVERS();
	free(pattern_file(path, sizeof(path), "fail.bin", n, 9));

	assert_int_equal(open_s3(&r, failpart_url, "s3://results-test/t4", "S3RVER", "S3RVER"), 0);
	assert_int_equal(r->put_file(r, "packs/half.pack", path), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "part 2"));
	rs_remote_free(r);

	good = open_good("s3://results-test/t4");
	assert_int_equal(good->stat(good, "packs/half.pack", &size), RS_ENOTFOUND);
	rs_remote_free(good);
	/* The upload was aborted (s3rver cannot, but the request was made). */
	assert_true(failpart_saw_abort("half.pack"));
}

/*
 * put_stream: parts go out while the file is still being written (part 1
 * of 5 MiB is done before the writer goes past 7 MiB), the result is
 * byte-identical (also when the file ends on a part boundary), a file
 * sealed before its first part is full is one PUT, and a cancelled upload
 * is aborted and leaves nothing.
 */
static void test_stream(void **state)
{
	struct stream_check grow = { 7u << 20, 5u << 20, 0, 0 };
	struct stream_check plain = { 0, 0, 0, 0 };
	struct stream_check cancel = { 7u << 20, 5u << 20, 1, 0 };
	struct stream_check signd = { 7u << 20, 5u << 20, 0, 0 };
	size_t sizes[] = { (12u << 20) + 123, 10u << 20, 4000 };
	size_t n = 12u << 20, i;
	unsigned char *data = malloc(n + 123);
	struct rs_buf b = GET_BUF_INIT;
	struct rs_remote *r;
	char path[128];
	uint64_t size = 0;

	(void)state;
	NEED_SERVERS();
	assert_non_null(data);
	fill_pattern(data, n + 123, 11);
	snprintf(path, sizeof(path), "%s/stream.bin", state_dir);
	r = open_good("s3://results-test/t9");
	assert_non_null(r->put_stream);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct stream_check *c = sizes[i] > (7u << 20) ? &grow : &plain;

		assert_int_equal(stream_check_put(r, "packs/s.pack", path, data, sizes[i], c), 0);
		if (c == &grow)
			assert_true(grow.overlapped);
		assert_int_equal(r->stat(r, "packs/s.pack", &size), 0);
		assert_int_equal(size, sizes[i]);
		rs_buf_clear(&b);
		assert_int_equal(r->get(r, "packs/s.pack", 0, UINT64_MAX, &b), 0);
		assert_int_equal(b.len, sizes[i]);
		assert_memory_equal(b.ptr, data, sizes[i]);
	}
	rs_remote_free(r);

	/* Cancelled after a part went out: aborted (seen by the logging proxy). */
	assert_int_equal(open_s3(&r, failpart_url, "s3://results-test/t9", "S3RVER", "S3RVER"), 0);
	assert_int_not_equal(stream_check_put(r, "packs/c.pack", path, data, n, &cancel), 0);
	assert_true(cancel.overlapped);
	assert_int_equal(r->stat(r, "packs/c.pack", &size), RS_ENOTFOUND);
	rs_remote_free(r);
	assert_true(failpart_saw_abort("c.pack"));

	/*
	 * A store that refuses unsigned bodies: the first streamed part is
	 * refused and sent again signed; every later part goes signed at once.
	 */
	assert_int_equal(open_s3(&r, signed_url, "s3://results-test/t9", "S3RVER", "S3RVER"), 0);
	assert_int_equal(stream_check_put(r, "packs/signed.pack", path, data, n + 123, &signd), 0);
	assert_true(signd.overlapped);
	rs_buf_clear(&b);
	assert_int_equal(r->get(r, "packs/signed.pack", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, n + 123);
	assert_memory_equal(b.ptr, data, n + 123);
	rs_remote_free(r);
	assert_int_equal(log_count(signed_log, "signed.pack?partNumber=", " 403"), 1);
	assert_int_equal(log_count(signed_log, "signed.pack?partNumber=", " 200"), 3);

	/* The whole store: a 13 MiB incompressible object, its pack streamed in parts. */
	r = open_good("s3://results-test/t10");
	assert_int_equal(stream_check_store(r, state_dir, (13u << 20) + 7, 3), 0);
	rs_remote_free(r);
	rs_buf_release(&b);
	free(data);
}

static void test_auth_errors(void **state)
{
	struct rs_remote *r = NULL;
	struct rs_buf b = GET_BUF_INIT;
	const char *secret = "NOT-THE-S3RVER-SECRET-xyz";

	(void)state;
	NEED_SERVERS();
	/* Wrong secret: the verifying proxy refuses the signature. */
	assert_int_equal(open_s3(&r, verify_url, "s3://results-test/t5", "S3RVER", secret), 0);
	assert_int_equal(r->put_buf(r, "packs/x.pack", "abc", 3), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "SignatureDoesNotMatch"));
	assert_non_null(strstr(rs_error_message(), "check the key"));
	assert_null(strstr(rs_error_message(), secret));
	assert_int_equal(r->get(r, "packs/x.pack", 0, 1, &b), RS_EAUTH);
	rs_remote_free(r);

	/* Unknown key id. */
	assert_int_equal(open_s3(&r, verify_url, "s3://results-test/t5", "AKIDUNKNOWN", "S3RVER"), 0);
	assert_int_equal(r->put_buf(r, "packs/x.pack", "abc", 3), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "unknown access key id"));
	rs_remote_free(r);

	/* Clock skew: the server's clock is an hour ahead. */
	assert_int_equal(open_s3(&r, skewed_url, "s3://results-test/t5", "S3RVER", "S3RVER"), 0);
	assert_int_equal(r->put_buf(r, "packs/x.pack", "abc", 3), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "clock skew"));
	rs_remote_free(r);

	/* No such bucket (s3rver answers this one itself). */
	assert_int_equal(open_s3(&r, verify_url, "s3://no-such-bucket/t5", "S3RVER", "S3RVER"), 0);
	assert_int_equal(r->put_buf(r, "packs/x.pack", "abc", 3), RS_EREMOTE);
	assert_non_null(strstr(rs_error_message(), "no such bucket"));
	rs_remote_free(r);

	/* Nothing of the refused puts is there. */
	r = open_good("s3://results-test/t5");
	assert_int_equal(r->stat(r, "packs/x.pack", NULL), RS_ENOTFOUND);
	rs_remote_free(r);
	rs_buf_release(&b);
}

/* Temporary credentials: the token is sent and signed (the proxy checks). */
static void test_session_token(void **state)
{
	struct rs_remote *r;
	struct rs_buf b = GET_BUF_INIT;

	(void)state;
	NEED_SERVERS();
	setenv("AWS_SESSION_TOKEN", "FQoGZXIvYXdzEXAMPLE+/token==", 1);
	r = open_good("s3://results-test/t8");
	if (r->put_buf(r, "packs/t.pack", "token", 5))
		fail_msg("put with a session token: %s", rs_error_message());
	assert_int_equal(r->get(r, "packs/t.pack", 0, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.ptr, "token");
	rs_remote_free(r);
	unsetenv("AWS_SESSION_TOKEN");
	rs_buf_release(&b);
}

static const char *virtual_config(const char *key, void *payload)
{
	(void)payload;
	return strcmp(key, "results.s3.addressing") ? NULL : "virtual";
}

/*
 * Virtual-hosted addressing, as on AWS: the bucket is in the host name
 * (results-test.s3.localhost, which curl resolves to loopback) and in the
 * signed Host header; s3rver (--service-endpoint localhost) reads it
 * from there. The verifying proxy checks the signature over that host.
 */
static void test_virtual_hosted(void **state)
{
	struct rs_remote_options opts = { virtual_config, NULL };
	struct rs_remote *r = NULL, *path_style;
	struct rs_buf b = GET_BUF_INIT;
	char endpoint[160];
	struct listed l;

	(void)state;
	NEED_SERVERS();
	snprintf(endpoint, sizeof(endpoint), "http://s3.localhost:%s",
		 strrchr(verify_url, ':') + 1);
	setenv("AWS_ENDPOINT_URL", endpoint, 1);
	setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
	if (rs_remote_open(&r, "s3://results-test/t7", &opts))
		fail_msg("open: %s", rs_error_message());
	if (r->put_buf(r, "packs/v.pack", "virtual", 7))
		fail_msg("put: %s", rs_error_message());
	assert_int_equal(r->get(r, "packs/v.pack", 1, 3, &b), 0);
	assert_int_equal(b.len, 3);
	assert_string_equal(b.ptr, "irt");
	memset(&l, 0, sizeof(l));
	assert_int_equal(r->list(r, "packs/", collect, &l), 0);
	assert_int_equal(l.n, 1);
	assert_true(has_key(&l, "packs/v.pack", 7));
	rs_remote_free(r);
	/* The same object, seen path-style. */
	path_style = open_good("s3://results-test/t7");
	assert_int_equal(path_style->stat(path_style, "packs/v.pack", NULL), 0);
	rs_remote_free(path_style);
	rs_buf_release(&b);
}

struct reader {
	struct rs_remote *r;
	const unsigned char *data;
	int failures;
};

static void *read_ranges(void *arg)
{
	struct reader *rd = arg;
	struct rs_buf b = GET_BUF_INIT;
	int i;

	for (i = 0; i < 20; i++) {
		uint64_t off = (uint64_t)(i * 37) % 900;

		rs_buf_clear(&b);
		if (rd->r->get(rd->r, "packs/conc.pack", off, 100, &b) || b.len != 100 ||
		    memcmp(b.ptr, rd->data + off, 100))
			rd->failures++;
	}
	rs_buf_release(&b);
	return NULL;
}

static void test_concurrent_reads(void **state)
{
	unsigned char data[1000];
	struct reader rd[4];
	pthread_t t[4];
	struct rs_remote *r;
	int i;

	(void)state;
	NEED_SERVERS();
	fill_pattern(data, sizeof(data), 3);
	r = open_good("s3://results-test/t6");
	assert_int_equal(r->put_buf(r, "packs/conc.pack", data, sizeof(data)), 0);
	for (i = 0; i < 4; i++) {
		rd[i].r = r;
		rd[i].data = data;
		rd[i].failures = 0;
		assert_int_equal(pthread_create(&t[i], NULL, read_ranges, &rd[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(rd[i].failures, 0);
	}
	rs_remote_free(r);
}

/*
 * Our signer and @smithy/signature-v4 sign the same requests the same
 * way, including a session token, a key that needs encoding and a query
 * with characters that need encoding.
 */
static void compare_with_smithy(const char *method, const char *path, const char *query,
				const char *range, const char *token)
{
	struct rs_sigv4_credentials cred = { "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token };
	struct rs_sigv4_header hdr[1] = { { "range", range } };
	struct rs_sigv4_request req = {
		.method = method, .host = "127.0.0.1:9000", .path = path, .query = query,
		.headers = hdr, .nheaders = range ? 1 : 0,
		.payload_sha256 = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
		.content_sha256_header = 1, .region = "eu-west-3", .service = "s3",
	};
	struct rs_sigv4_result res;
	char cmd[4096], out[1024], *theirs;
	FILE *p;
	size_t n;

	rs_sigv4_result_init(&res);
	assert_int_equal(rs_sigv4_sign(&res, &req, &cred, 1700000000), 0);
	snprintf(cmd, sizeof(cmd),
		 "echo '{\"method\":\"%s\",\"host\":\"127.0.0.1:9000\",\"path\":\"%s\","
		 "\"query\":\"%s\",\"headers\":{%s%s%s},\"payloadHash\":\"%s\","
		 "\"region\":\"eu-west-3\",\"service\":\"s3\",\"time\":1700000000,"
		 "\"accessKeyId\":\"%s\",\"secretAccessKey\":\"%s\",\"sessionToken\":\"%s\"}' "
		 "| node '%s/s3-sign.js'",
		 method, path, query ? query : "", range ? "\"range\":\"" : "",
		 range ? range : "", range ? "\"" : "", req.payload_sha256,
		 cred.access_key_id, cred.secret_access_key, token ? token : "", servers_dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	theirs = strstr(out, "AWS4-HMAC-SHA256");
	assert_non_null(theirs);
	theirs[strcspn(theirs, "\"")] = '\0';
	assert_string_equal(res.authorization.ptr, theirs);
	rs_sigv4_result_release(&res);
}

static void test_signer_matches_smithy(void **state)
{
	(void)state;
	NEED_SERVERS();
	compare_with_smithy("GET", "/results-test/packs/a.pack", NULL, "bytes=0-99", NULL);
	compare_with_smithy("PUT", "/results-test/dir/na%20me%2Bx.pack", NULL, NULL, "SESSIONTOKEN/abc+=");
	compare_with_smithy("GET", "/results-test",
			    "list-type=2&prefix=t2%2Fpacks%2F&continuation-token=YWJj%2B%2F%3D%3D&max-keys=2",
			    NULL, NULL);
	compare_with_smithy("POST", "/results-test/k", "uploads", NULL, NULL);
	compare_with_smithy("PUT", "/results-test/k", "uploadId=abc&partNumber=10", NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_urls),
		cmocka_unit_test(test_put_get_stat_del),
		cmocka_unit_test(test_list_pages),
		cmocka_unit_test(test_multipart),
		cmocka_unit_test(test_multipart_failure_leaves_nothing),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_auth_errors),
		cmocka_unit_test(test_concurrent_reads),
		cmocka_unit_test(test_virtual_hosted),
		cmocka_unit_test(test_session_token),
		cmocka_unit_test(test_signer_matches_smithy),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
