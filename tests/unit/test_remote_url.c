/* remote/remote.h: which remote URLs are usable, and that no message of
   rs_remote_open quotes a URL's credentials. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "remote/remote.h"
#include "git/repo.h"
#include "results/error.h"

static void ok(const char *url)
{
	if (rs_remote_check_url(url) != 0)
		fail_msg("'%s' refused: %s", url, rs_error_message());
}

/* Refused with RS_EUSAGE and a message holding `want`. */
static void refused(const char *url, const char *want)
{
	int err = rs_remote_check_url(url);

	if (err != RS_EUSAGE)
		fail_msg("'%s' gave %d, want RS_EUSAGE", url ? url : "(null)", err);
	if (!strstr(rs_error_message(), want))
		fail_msg("'%s': message '%s' lacks '%s'", url ? url : "(null)",
			 rs_error_message(), want);
}

static void test_usable(void **state)
{
	(void)state;
	ok("file:///srv/results-store");
	ok("/srv/my results");              /* a folder path may hold spaces */
	ok("relative/store");
	ok("./a://b");                      /* a path, not a scheme */
	ok("s3://bucket/prefix");
	ok("azure://account/container/prefix");
	ok("https://host.example/store");
	ok("http://127.0.0.1:8080/store");
	ok("https://host.example:65535/store");
	ok("https://[::1]:8443/store");
	ok("https://[::1]/store");
	ok("https://user:pa@ss@host.example/store");  /* WebDAV takes userinfo */
	ok("https://acct.blob.core.windows.net/c/p?sv=1&sig=x");
}

static void test_unusable(void **state)
{
	(void)state;
	refused(NULL, "no remote given");
	refused("", "no remote given");
	refused("https://host:99999/x", "port '99999' is not a port number");
	refused("https://host:0/x", "port '0' is not a port number");
	refused("https://host:/x", "port '' is not a port number");
	refused("https://host:123456789/x", "is not a port number");
	refused("https://host:8x/x", "port '8x'");
	refused("https://[::1]:0/x", "port '0'");
	refused("https://[::1/x", "'[' without ']'");
	refused("https://host/a b", "holds a space");
	refused("https://host/a\tb", "control character (byte 0x09 at offset 14)");
	refused("/srv/a\nb", "control character");
	refused("https:///x", "names no host");
	refused("https://user:pw@/x", "names no host");
	refused("s3:///prefix", "names no host");
	refused("s3://key:secret@bucket/x", "s3:// URL takes no user name or password");
	refused("azure://k:secret@acct/c", "azure:// URL takes no user name or password");
	refused("ftp://host/x", "'ftp://' is not a remote kind this build knows");
	refused("az://acct/c", "for Azure write azure://");
	refused("HTTPS://host/x", "'HTTPS://' is not a remote kind");
}

/* The unknown-scheme message lists every scheme rs_remote_check_url takes. */
static void test_kinds_listed(void **state)
{
	static const char *const schemes[] = { "file://", "s3://", "azure://", "https://",
					       "http://" };
	size_t i;

	(void)state;
	refused("gopher://x/y", "is not a remote kind");
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		assert_non_null(strstr(rs_error_message(), schemes[i]));
	assert_null(strstr(rs_error_message(), "az://a"));
}

/* No message of a refused or failed open quotes userinfo or query. */
static void test_open_hides_credentials(void **state)
{
	static const char *const urls[] = {
		"s3://AKID:pw-s3cr3t@bucket/x",
		"s3://bad_bucket!/x?sig=sig-s3cr3t",
		"azure://acct/?sig=sig-s3cr3t",
		"https://u:pw-s3cr3t@host:99999/x",
		"https://u:pw-s3cr3t@host/x?sig=sig-s3cr3t",
	};
	struct rs_remote *r = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		assert_int_not_equal(rs_remote_open(&r, urls[i], NULL), 0);
		if (strstr(rs_error_message(), "s3cr3t"))
			fail_msg("'%s': message '%s' shows a credential", urls[i], rs_error_message());
	}
}

static void check_display(const char *in, const char *want)
{
	struct rs_buf out = RS_BUF_INIT;

	assert_int_equal(rs_remote_url_display(&out, in), 0);
	assert_string_equal(rs_buf_cstr(&out), want);
	rs_buf_release(&out);
}

static void test_display(void **state)
{
	(void)state;
	check_display("https://user:pa@ss@host.example/org/x?sig=S#f", "https://host.example/org/x");
	check_display("https://host.example/a@b", "https://host.example/a@b");
	check_display("azure://acct/c/p?sv=1&sig=S", "azure://acct/c/p");
	check_display("/srv/a@b/store", "/srv/a@b/store");
}

/* The committed remote and this clone's: the same store, credentials aside. */
static void test_same_remote(void **state)
{
	(void)state;
	assert_true(rs_url_same_remote("https://u:pw@host/store", "https://host/store/"));
	assert_true(rs_url_same_remote("azure://acct/c/p?sig=x", "azure://acct/c/p"));
	assert_true(rs_url_same_remote("/srv/store/", "/srv/store"));
	assert_false(rs_url_same_remote("file:///srv/store", "file:///srv/stroe"));
	assert_false(rs_url_same_remote("s3://bucket/a", "s3://bucket/b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usable),
		cmocka_unit_test(test_unusable),
		cmocka_unit_test(test_kinds_listed),
		cmocka_unit_test(test_open_hides_credentials),
		cmocka_unit_test(test_display),
		cmocka_unit_test(test_same_remote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
