/*
 * store/backend.h: the store refuses a remote backend built against
 * another RS_REMOTE_VERSION before calling any of its operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "remote/remote.h"
#include "store/backend.h"
#include "store/maint.h"
#include "store/store.h"
#include "results/error.h"

static int calls;

static int fake_list(struct rs_remote *r, const char *prefix, rs_remote_list_cb cb, void *payload)
{
	(void)r;
	(void)prefix;
	(void)cb;
	(void)payload;
	calls++;
	return 0;
}

static void fake_remote(struct rs_remote *r, unsigned version)
{
	memset(r, 0, sizeof(*r));
	r->version = version;
	r->list = fake_list;
	r->display_url = "fake://store";
}

static void test_version(void **state)
{
	struct rs_remote r;
	struct rs_store *s = NULL;
	struct rs_store_census c;

	(void)state;
	fake_remote(&r, RS_REMOTE_VERSION);
	assert_int_equal(rs_store_check_backend(&r), 0);
	assert_int_equal(rs_store_open(&s, &r, NULL), 0);
	rs_store_free(s);
	s = NULL;

	fake_remote(&r, RS_REMOTE_VERSION + 1);
	assert_int_equal(rs_store_check_backend(&r), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "'fake://store'"));
	assert_non_null(strstr(rs_error_message(), "interface version 2, this build needs version 1"));
	assert_int_equal(rs_store_open(&s, &r, NULL), RS_EUSAGE);
	assert_null(s);
	/* gc and verify start with a census: refused there too, before any call. */
	memset(&c, 0, sizeof(c));
	calls = 0;
	assert_int_equal(rs_store_census_take(&c, &r), RS_EUSAGE);
	assert_int_equal(calls, 0);
	rs_store_census_release(&c);
	/* Version 0: a struct nobody filled in. */
	fake_remote(&r, 0);
	assert_int_equal(rs_store_open(&s, &r, NULL), RS_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
