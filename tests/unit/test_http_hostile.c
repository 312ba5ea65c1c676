/*
 * The HTTP backends (WebDAV, S3, Azure) against a hostile server on
 * loopback (tests/servers/hostile-server.js): endless and oversized
 * bodies, a Content-Length larger than the range, a server that ignores
 * Range, one that drips two bytes a second or never answers, an endless
 * error page, listings whose continuation tokens cycle or never end, an
 * endless PROPFIND, and stale S3 multipart uploads. Each case checks the
 * error code, that the message names the server and what it did, and
 * where it matters that memory (peak RSS) and time stayed bounded.
 *
 * The server cannot start: the suite fails (it is never skipped).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "remote/credential.h"
#include "remote/http_transport.h"
#include "remote/remote.h"
#include "remote/s3.h"
#include "results/error.h"

#include "server_script.h"

#define MIB (1024u * 1024u)
#define RSS_LIMIT_KB (64L * 1024) /* peak RSS may grow at most this much */

static char source_dir[2048];
static char work_dir[1024];
static char base_url[256];   /* http://127.0.0.1:PORT */
static char azure_ep[600];   /* base_url/devstoreaccount1 */
static const char *cfg_timeout = "10";
static const char *cfg_min_speed;
static const char *cfg_abort_after;

static const char *config(const char *key, void *payload)
{
	(void)payload;
	if (!strcmp(key, "results.s3.endpoint"))
		return base_url;
	if (!strcmp(key, "results.s3.region"))
		return "us-east-1";
	if (!strcmp(key, "results.azure.endpoint"))
		return azure_ep;
	if (!strcmp(key, "results.http.timeout"))
		return cfg_timeout;
	if (!strcmp(key, "results.http.minSpeed"))
		return cfg_min_speed;
	if (!strcmp(key, "results.s3.abortUploadsAfter"))
		return cfg_abort_after;
	return NULL;
}

static int group_setup(void **state)
{
	char tmpl[] = "/tmp/rs-hostile-test-XXXXXX";
	const char *url;
	int err;

	(void)state;
	test_source_dir(source_dir, sizeof(source_dir));
	assert_non_null(mkdtemp(tmpl));
	snprintf(work_dir, sizeof(work_dir), "%s", tmpl);
	unsetenv("RS_HOSTILE_URL");
	err = test_run_server_script("bash '%s/tests/servers/hostile-server.sh' start '%s/srv' --lifetime 300",
				     source_dir, work_dir);
	url = getenv("RS_HOSTILE_URL");
	if (err || !url) {
		/* Not a skip: a suite whose server cannot start fails. */
		fprintf(stderr, "the hostile server did not start (in %s/srv)\n", work_dir);
		return -1;
	}
	snprintf(base_url, sizeof(base_url), "%.200s", url);
	snprintf(azure_ep, sizeof(azure_ep), "%s/devstoreaccount1", base_url);
	setenv("RESULTS_HTTP_RETRY_BASE_MS", "20", 1);
	setenv("RESULTS_HTTP_RETRIES", "1", 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDHOSTILETEST", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "hostile-test-secret", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_ENDPOINT_URL_S3");
	unsetenv("AZURE_STORAGE_CONNECTION_STRING");
	unsetenv("AZURE_STORAGE_KEY");
	unsetenv("AZURE_STORAGE_ACCOUNT");
	unsetenv("AZURE_STORAGE_SAS_TOKEN");
	unsetenv("RESULTS_HTTP_TOKEN");
	unsetenv("RESULTS_HTTP_USER");
	unsetenv("RESULTS_HTTP_PASSWORD");
	unsetenv("RESULTS_HTTP_TIMEOUT");
	unsetenv("RESULTS_HTTP_MIN_SPEED");
	unsetenv("RESULTS_HTTP_LOW_SPEED_TIME");
	unsetenv("RESULTS_HTTP_LIST_MAX_PAGES");
	return 0;
}

static int group_teardown(void **state)
{
	char cmd[4200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "bash '%s/tests/servers/hostile-server.sh' stop '%s/srv'; "
		 "rm -rf '%s'", source_dir, work_dir, work_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot clean up %s\n", work_dir);
	return 0;
}

static int test_setup(void **state)
{
	(void)state;
	cfg_timeout = "10";
	cfg_min_speed = NULL;
	cfg_abort_after = NULL;
	rs_error_clear();
	return 0;
}

enum backend { DAV, S3, AZURE };

static struct rs_remote *open_mode(enum backend b, const char *mode)
{
	struct rs_remote_options opts = { config, NULL };
	struct rs_remote *r = NULL;
	char url[1024];

	if (b == DAV)
		snprintf(url, sizeof(url), "%s/%s/store", base_url, mode);
	else if (b == S3)
		snprintf(url, sizeof(url), "s3://%s/store", mode);
	else
		snprintf(url, sizeof(url), "azure://devstoreaccount1/%s/store", mode);
	if (rs_remote_open(&r, url, &opts) != 0)
		fail_msg("cannot open '%s': %s", url, rs_error_message());
	return r;
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The message says `what`, and names the server as "server '<display url>'". */
static void assert_message(const struct rs_remote *r, const char *what)
{
	char server[600];
	const char *msg = rs_error_message();

	snprintf(server, sizeof(server), "server '%s'", r->display_url);
	if (getenv("RS_TEST_VERBOSE"))
		fprintf(stderr, "message: %s\n", msg);
	if (!strstr(msg, server) || !strstr(msg, what))
		fail_msg("message '%s' lacks \"%s\" or \"%s\"", msg, server, what);
}

/* ---- bodies ---- */

static void test_endless_body_to_the_end(void **state)
{
	static const enum backend all[] = { DAV, S3, AZURE };
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct rs_remote *r = open_mode(all[i], "endless");
		struct rs_buf b = { NULL, 0, 0, MIB };
		long rss0 = peak_rss_kb();

		assert_int_equal(r->get(r, "manifests/aa", 0, UINT64_MAX, &b), RS_ECORRUPT);
		assert_message(r, "sent more than the 1 MiB allowed for 'manifests/aa'");
		assert_int_equal(b.len, 0);
		assert_true(peak_rss_kb() - rss0 < RSS_LIMIT_KB);
		rs_buf_release(&b);
		rs_remote_free(r);
	}
}

#ifdef NDEBUG
/* The contract of remote.h: a get to the end needs a cap (an assert in debug builds). */
static void test_get_to_the_end_needs_a_cap(void **state)
{
	struct rs_remote *r = open_mode(DAV, "endless");
	struct rs_buf b = RS_BUF_INIT;

	(void)state;
	assert_int_equal(r->get(r, "manifests/aa", 0, UINT64_MAX, &b), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "needs a capped buffer"));
	rs_buf_release(&b);
	rs_remote_free(r);
}
#endif

/* An endless 200 to a ranged GET: the slice is kept, then we hang up. */
static void test_endless_body_for_a_range(void **state)
{
	struct rs_remote *r = open_mode(DAV, "endless");
	struct rs_buf b = RS_BUF_INIT; /* no cap: the range alone must bound it */
	long rss0 = peak_rss_kb();

	(void)state;
	assert_int_equal(r->get(r, "packs/p.pack", 10, 4096, &b), 0);
	assert_int_equal(b.len, 4096);
	assert_int_equal(b.ptr[0], 'x');
	assert_true(peak_rss_kb() - rss0 < RSS_LIMIT_KB);
	rs_buf_release(&b);
	rs_remote_free(r);
}

static void test_oversized_range_answer(void **state)
{
	static const enum backend all[] = { DAV, S3, AZURE };
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct rs_remote *r = open_mode(all[i], "oversize");
		struct rs_buf b = RS_BUF_INIT;
		long rss0 = peak_rss_kb();

		assert_int_equal(r->get(r, "packs/p.pack", 0, 4096, &b), RS_ECORRUPT);
		assert_message(r, "sent more than the 4096 bytes asked for 'packs/p.pack'");
		assert_int_equal(b.len, 0);
		assert_true(peak_rss_kb() - rss0 < RSS_LIMIT_KB);
		rs_buf_release(&b);
		rs_remote_free(r);
	}
}

static void test_content_length_past_the_range(void **state)
{
	struct rs_remote *r = open_mode(S3, "biglength");
	struct rs_buf b = RS_BUF_INIT;
	char what[200];

	(void)state;
	assert_int_equal(r->get(r, "packs/p.pack", 100, 4096, &b), RS_ECORRUPT);
	snprintf(what, sizeof(what), "announced %u bytes (Content-Length) for 'packs/p.pack', "
		 "more than the 4096 bytes asked for", 4096 + 16 * MIB);
	assert_message(r, what);
	assert_int_equal(b.len, 0);
	rs_buf_release(&b);
	rs_remote_free(r);
}

static unsigned char pattern(size_t i)
{
	return (unsigned char)((i * 7 + (i >> 11)) & 255);
}

/* A server that ignores Range: the right slice, without keeping the rest. */
static void test_range_ignored(void **state)
{
	struct rs_remote *r = open_mode(DAV, "ignorerange");
	struct rs_buf b = RS_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(r->get(r, "packs/p.pack", 5000, 3000, &b), 0);
	assert_int_equal(b.len, 3000);
	for (i = 0; i < 3000; i++)
		assert_int_equal((unsigned char)b.ptr[i], pattern(5000 + i));
	rs_buf_release(&b);
	b.max = MIB;
	assert_int_equal(r->get(r, "packs/p.pack", 8 * MIB - 10, UINT64_MAX, &b), 0);
	assert_int_equal(b.len, 10);
	for (i = 0; i < 10; i++)
		assert_int_equal((unsigned char)b.ptr[i], pattern(8 * MIB - 10 + i));
	rs_buf_clear(&b);
	/* The whole 8 MiB object into a 1 MiB buffer: refused on its length. */
	assert_int_equal(r->get(r, "packs/p.pack", 0, UINT64_MAX, &b), RS_ECORRUPT);
	assert_message(r, "announced 8388608 bytes (Content-Length) for 'packs/p.pack', more "
		       "than the 1048576 bytes allowed");
	rs_buf_release(&b);
	rs_remote_free(r);
}

/* How many bytes the server sent on its last endless body, from its log. */
static long long last_sent(void)
{
	char path[1200], line[512];
	long long sent = -1;
	FILE *f;
	int tries;

	snprintf(path, sizeof(path), "%s/srv/hostile.log", work_dir);
	for (tries = 0; tries < 100 && sent < 0; tries++) {
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "SENT ", 5))
				sent = atoll(line + 5);
		fclose(f);
		if (sent < 0)
			usleep(50000);
	}
	return sent;
}

static void truncate_log(void)
{
	char path[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/srv/hostile.log", work_dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_endless_error_body(void **state)
{
	struct rs_remote *r = open_mode(S3, "errendless");
	struct rs_buf b = RS_BUF_INIT;
	long long sent;

	(void)state;
	truncate_log();
	assert_int_equal(r->get(r, "packs/p.pack", 0, 100, &b), RS_EAUTH);
	assert_non_null(strstr(rs_error_message(), "AccessDenied"));
	rs_remote_free(r);
	rs_buf_release(&b);
	/* We hung up after 64 KiB: what went out is what the socket buffers held. */
	sent = last_sent();
	assert_true(sent >= 0);
	if (sent > 64LL * MIB)
		fail_msg("the client read %lld bytes of an error page", sent);
}

/* ---- time ---- */

static void test_drip(void **state)
{
	struct rs_remote *r;
	struct rs_buf b = { NULL, 0, 0, MIB };
	double t0;

	(void)state;
	cfg_timeout = "2";
	r = open_mode(DAV, "drip");
	t0 = now_s();
	assert_int_equal(r->get(r, "packs/d.pack", 0, UINT64_MAX, &b), RS_ERETRY);
	assert_true(now_s() - t0 < 8);
	assert_message(r, " for 'packs/d.pack' (below the 16 KiB/s floor); check the server "
		       "or, on a slow link, lower results.http.minSpeed");
	assert_non_null(strstr(rs_error_message(), " sent "));
	rs_buf_release(&b);
	rs_remote_free(r);
}

/* Never answering, with 5 tries: the deadline covers them all. */
static void test_silent(void **state)
{
	static const enum backend all[] = { DAV, S3, AZURE };
	size_t i;

	(void)state;
	setenv("RESULTS_HTTP_RETRIES", "5", 1);
	cfg_timeout = "2";
	for (i = 0; i < 3; i++) {
		struct rs_remote *r = open_mode(all[i], "silent");
		struct rs_buf b = RS_BUF_INIT;
		double t0 = now_s();

		assert_int_equal(r->get(r, "packs/s.pack", 0, 4096, &b), RS_ERETRY);
		if (now_s() - t0 > 6)
			fail_msg("a silent server held a get for %.1f s", now_s() - t0);
		assert_message(r, "'packs/s.pack'");
		assert_non_null(strstr(rs_error_message(), "results.http."));
		rs_buf_release(&b);
		rs_remote_free(r);
	}
	setenv("RESULTS_HTTP_RETRIES", "1", 1);
	/* One try: the wait for a first byte (2 s, the timeout's) ends it. */
	{
		struct rs_remote *r = open_mode(DAV, "silent");
		struct rs_buf b = RS_BUF_INIT;

		assert_int_equal(r->get(r, "packs/s.pack", 0, 4096, &b), RS_ERETRY);
		assert_message(r, "'packs/s.pack'");
		assert_non_null(strstr(rs_error_message(), "raise results.http.timeout"));
		rs_buf_release(&b);
		rs_remote_free(r);
	}
}

/*
 * A listener whose accept queue is full: connects hang (Linux drops the
 * SYNs), so the request's deadline, not the server, ends the last try.
 * Returns the socket; its port in *port. Two connections fill a backlog
 * of 0 (the kernel allows backlog + 1); they are kept open in fill[].
 */
static int full_listener(int *port, int fill[2])
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s, 0), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	for (int i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fill[i] >= 0);
		(void)connect(fill[i], (struct sockaddr *)&a, sizeof(a));
	}
	usleep(100000); /* the handshakes of the two complete */
	return s;
}

/*
 * A deadline that runs out while a later try is still connecting is the
 * deadline's doing: the message names it (results.http.timeout), not a
 * server that "did not accept a connection" for longer than it waited.
 * With one try, the connect timeout itself ends it and is said so.
 */
static void test_deadline_during_connect(void **state)
{
	struct rs_remote_options opts = { config, NULL };
	struct rs_remote *r = NULL;
	struct rs_buf b = RS_BUF_INIT;
	char url[256];
	int port, fill[2], s = full_listener(&port, fill);

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x/store", port);
	cfg_timeout = "1";
	setenv("RESULTS_HTTP_RETRIES", "5", 1);
	assert_int_equal(rs_remote_open(&r, url, &opts), 0);
	assert_int_equal(r->get(r, "packs/c.pack", 0, 4096, &b), RS_ERETRY);
	assert_message(r, "within its deadline of 1 s");
	assert_non_null(strstr(rs_error_message(), "raise results.http.timeout"));
	assert_null(strstr(rs_error_message(), "did not accept"));
	rs_remote_free(r);
	rs_buf_release(&b);
	/* One try: its connect timeout (1 s) comes before the deadline (1.25 s). */
	setenv("RESULTS_HTTP_RETRIES", "1", 1);
	assert_int_equal(rs_remote_open(&r, url, &opts), 0);
	assert_int_equal(r->get(r, "packs/c.pack", 0, 4096, &b), RS_ERETRY);
	assert_message(r, "did not accept a connection within 1 s");
	rs_remote_free(r);
	rs_buf_release(&b);
	close(fill[0]);
	close(fill[1]);
	close(s);
}

static void test_bad_settings(void **state)
{
	struct rs_remote_options opts = { config, NULL };
	struct rs_remote *r = NULL;
	char url[1024];

	(void)state;
	snprintf(url, sizeof(url), "%s/x/store", base_url);
	cfg_timeout = "soon";
	assert_int_equal(rs_remote_open(&r, url, &opts), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "results.http.timeout is 'soon'"));
	cfg_timeout = "10";
	cfg_min_speed = "0";
	assert_int_equal(rs_remote_open(&r, url, &opts), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "results.http.minSpeed is '0'"));
	cfg_min_speed = "64k";
	assert_int_equal(rs_remote_open(&r, url, &opts), 0);
	rs_remote_free(r);
}

/* ---- listings ---- */

static int count_keys(const char *key, uint64_t size, void *payload)
{
	unsigned long *n = payload;

	(void)key;
	(void)size;
	/* Bounded even when the guard is missing: stop the test, do not hang. */
	return ++*n > 2000 ? 99 : 0;
}

static void test_cycling_tokens(void **state)
{
	static const enum backend all[] = { S3, AZURE };
	static const char *modes[] = { "s3cycle", "azcycle" };
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct rs_remote *r = open_mode(all[i], modes[i]);
		unsigned long n = 0;

		assert_int_equal(r->list(r, "packs/", count_keys, &n), RS_ECORRUPT);
		assert_message(r, "sent a continuation token it had sent before, at page 3");
		assert_non_null(strstr(rs_error_message(), "its listing loops"));
		assert_int_equal(n, 3); /* the keys of page 3 came before its token */
		rs_remote_free(r);
	}
}

static void test_endless_listing(void **state)
{
	struct rs_remote *r = open_mode(S3, "s3endless");
	unsigned long n = 0;

	(void)state;
	setenv("RESULTS_HTTP_LIST_MAX_PAGES", "20", 1);
	assert_int_equal(r->list(r, "packs/", count_keys, &n), RS_ECORRUPT);
	unsetenv("RESULTS_HTTP_LIST_MAX_PAGES");
	assert_message(r, "did not end the listing of 'store/packs/' after 20 pages");
	assert_int_equal(n, 21);
	rs_remote_free(r);
}

static void test_huge_propfind(void **state)
{
	struct rs_remote *r = open_mode(DAV, "davhuge");
	unsigned long n = 0;
	long rss0 = peak_rss_kb();

	(void)state;
	assert_int_equal(r->list(r, "packs/", count_keys, &n), RS_ETOOBIG);
	assert_message(r, "sent more than the 16 MiB allowed for 'packs/'");
	assert_true(peak_rss_kb() - rss0 < RSS_LIMIT_KB);
	rs_remote_free(r);
}

/* ---- stale multipart uploads ---- */

struct upload_seen {
	char keys[4][64];
	char ids[4][64];
	int64_t when[4];
	int n;
};

static int on_upload(const char *key, const char *id, int64_t initiated, void *payload)
{
	struct upload_seen *u = payload;

	assert_true(u->n < 4);
	snprintf(u->keys[u->n], sizeof(u->keys[0]), "%s", key);
	snprintf(u->ids[u->n], sizeof(u->ids[0]), "%s", id);
	u->when[u->n++] = initiated;
	return 0;
}

static void test_uploads_parse(void **state)
{
	static const char page[] =
		"<?xml version=\"1.0\"?><ListMultipartUploadsResult xmlns=\"x\">"
		"<Bucket>b</Bucket><IsTruncated>true</IsTruncated>"
		"<NextKeyMarker>p/packs/b&amp;c</NextKeyMarker><NextUploadIdMarker>id2</NextUploadIdMarker>"
		"<Upload><Key>p/packs/a.pack</Key><UploadId>id+1/x</UploadId>"
		"<Initiated>2026-11-28T10:00:00.000Z</Initiated></Upload>"
		"<Upload><Initiated>1970-01-02T00:00:01Z</Initiated><Key>p/packs/b&amp;c</Key>"
		"<UploadId>id2</UploadId></Upload></ListMultipartUploadsResult>";
	static const char bad[] =
		"<ListMultipartUploadsResult><Upload><Key>k</Key><UploadId>i</UploadId>"
		"<Initiated>yesterday</Initiated></Upload></ListMultipartUploadsResult>";
	struct upload_seen u;
	struct rs_buf nk = RS_BUF_INIT, ni = RS_BUF_INIT;
	int truncated = 0;

	(void)state;
	memset(&u, 0, sizeof(u));
	assert_int_equal(rs_s3_uploads_page_parse(page, sizeof(page) - 1, on_upload, &u, &nk, &ni,
						  &truncated), 0);
	assert_int_equal(u.n, 2);
	assert_string_equal(u.keys[0], "p/packs/a.pack");
	assert_string_equal(u.ids[0], "id+1/x");
	assert_int_equal(u.when[0], 1795860000);
	assert_string_equal(u.keys[1], "p/packs/b&c");
	assert_int_equal(u.when[1], 86401);
	assert_true(truncated);
	assert_string_equal(rs_buf_cstr(&nk), "p/packs/b&c");
	assert_string_equal(rs_buf_cstr(&ni), "id2");
	assert_int_equal(rs_s3_uploads_page_parse(bad, sizeof(bad) - 1, on_upload, &u, &nk, &ni,
						  &truncated), RS_ECORRUPT);
	assert_int_equal(rs_s3_uploads_page_parse("<html/>", 7, on_upload, &u, &nk, &ni,
						  &truncated), RS_ECORRUPT);
	rs_buf_release(&nk);
	rs_buf_release(&ni);
}

static int log_has(const char *needle)
{
	char path[1200], line[1024];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/srv/hostile.log", work_dir);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

static void test_stale_uploads_aborted(void **state)
{
	struct rs_remote *r;

	(void)state;
	truncate_log();
	r = open_mode(S3, "mpu");
	assert_int_equal(r->put_buf(r, "manifests/m1", "hi", 2), 0);
	assert_int_equal(r->put_buf(r, "manifests/m2", "hi", 2), 0);
	rs_remote_free(r);
	assert_true(log_has("GET /mpu?uploads&prefix=store%2F"));
	assert_true(log_has("ABORT /mpu/store/packs/old.pack old-1"));
	assert_true(log_has("ABORT /mpu/store/packs/old2.pack old+2/x"));
	assert_false(log_has("fresh-1"));
	assert_false(log_has("other/"));

	/* Turned off: no listing, no abort. */
	truncate_log();
	cfg_abort_after = "0";
	r = open_mode(S3, "mpu");
	assert_int_equal(r->put_buf(r, "manifests/m3", "hi", 2), 0);
	rs_remote_free(r);
	assert_false(log_has("uploads"));
	assert_false(log_has("ABORT"));
}

/* ---- the credential lock ---- */

static int dir_has(const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	assert_non_null(d);
	for (e = readdir(d); e; e = readdir(d))
		if (strstr(e->d_name, needle))
			found = 1;
	closedir(d);
	return found;
}

static void test_credential_lock_is_private(void **state)
{
	char shared[1200], home[1200], priv[1200], lock[1400], cfg[1200], cmd[4000];
	struct rs_buf path = RS_BUF_INIT;
	struct rs_remote *r;
	struct rs_buf b = RS_BUF_INIT;
	struct stat st;
	int fd, fd2;
	double t0;

	(void)state;
	snprintf(shared, sizeof(shared), "%s/shared", work_dir);
	snprintf(home, sizeof(home), "%s/home", work_dir);
	snprintf(priv, sizeof(priv), "%s/run", work_dir);
	snprintf(cfg, sizeof(cfg), "%s/gitconfig", work_dir);
	assert_int_equal(mkdir(shared, 0777), 0);
	assert_int_equal(chmod(shared, 01777), 0);
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(mkdir(priv, 0700), 0);
	fclose(fopen(cfg, "w"));
	setenv("GIT_CONFIG_GLOBAL", cfg, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_TERMINAL_PROMPT", "0", 1);
	setenv("XDG_RUNTIME_DIR", shared, 1); /* like /tmp: open to everyone */
	setenv("HOME", home, 1);

	/* A 401 takes the lock before asking git: never in the shared folder. */
	r = open_mode(DAV, "auth401");
	assert_int_equal(r->get(r, "packs/a.pack", 0, 10, &b), RS_EAUTH);
	rs_remote_free(r);
	assert_false(dir_has(shared, "results"));
	snprintf(lock, sizeof(lock), "%s/.cache/results/credential.lock", home);
	assert_int_equal(stat(lock, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	snprintf(lock, sizeof(lock), "%s/.cache/results", home);
	assert_int_equal(stat(lock, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	/* A private XDG_RUNTIME_DIR is used. */
	setenv("XDG_RUNTIME_DIR", priv, 1);
	assert_int_equal(rs_credential_lock_path(&path), 0);
	snprintf(lock, sizeof(lock), "%s/results/credential.lock", priv);
	assert_string_equal(rs_buf_cstr(&path), lock);

	/* Held elsewhere: the wait has a deadline. */
	fd = rs_credential_lock_take(1000);
	assert_true(fd >= 0);
	t0 = now_s();
	fd2 = rs_credential_lock_take(200);
	assert_int_equal(fd2, -1);
	assert_true(now_s() - t0 < 2);
	rs_credential_lock_release(fd);
	fd2 = rs_credential_lock_take(200);
	assert_true(fd2 >= 0);
	rs_credential_lock_release(fd2);

	/* A folder open to others, or a symlink, is refused. */
	snprintf(lock, sizeof(lock), "%s/results", priv);
	assert_int_equal(chmod(lock, 0777), 0);
	assert_int_equal(rs_credential_lock_path(&path), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "is not a private folder"));
	assert_int_equal(rs_credential_lock_take(100), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/results' && ln -s '%s' '%s/results'", priv, shared,
		 priv);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(rs_credential_lock_path(&path), RS_EUSAGE);
	assert_int_equal(rs_credential_lock_take(100), -1);
	assert_false(dir_has(shared, "lock"));

	unsetenv("XDG_RUNTIME_DIR");
	rs_buf_release(&path);
	rs_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_endless_body_to_the_end, test_setup),
#ifdef NDEBUG
		cmocka_unit_test_setup(test_get_to_the_end_needs_a_cap, test_setup),
#endif
		cmocka_unit_test_setup(test_endless_body_for_a_range, test_setup),
		cmocka_unit_test_setup(test_oversized_range_answer, test_setup),
		cmocka_unit_test_setup(test_content_length_past_the_range, test_setup),
		cmocka_unit_test_setup(test_range_ignored, test_setup),
		cmocka_unit_test_setup(test_endless_error_body, test_setup),
		cmocka_unit_test_setup(test_drip, test_setup),
		cmocka_unit_test_setup(test_silent, test_setup),
		cmocka_unit_test_setup(test_deadline_during_connect, test_setup),
		cmocka_unit_test_setup(test_bad_settings, test_setup),
		cmocka_unit_test_setup(test_cycling_tokens, test_setup),
		cmocka_unit_test_setup(test_endless_listing, test_setup),
		cmocka_unit_test_setup(test_huge_propfind, test_setup),
		cmocka_unit_test_setup(test_uploads_parse, test_setup),
		cmocka_unit_test_setup(test_stale_uploads_aborted, test_setup),
		cmocka_unit_test_setup(test_credential_lock_is_private, test_setup),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
