/*
 * results/store.h's struct rs_objstore, as lfs-agent uses it: open a store
 * by URL, put and get an object named by its hex oid, the download names.
 * Only public headers, except util/hash.h to compute the test object's oid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "results/buf.h"
#include "results/error.h"
#include "results/store.h"
#include "util/hash.h"

struct fx {
	char dir[64];
	char url[128], src[128], dest[128];
	char oid[RS_OID_HEXSZ + 1];
	size_t size;
};

static int setup(void **state)
{
	static const char content[] = "not a session: stored as it is, transform 0\n";
	struct fx *fx = calloc(1, sizeof(*fx));
	struct rs_id id;
	FILE *f;

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/rs-objstore-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->url, sizeof(fx->url), "file://%s/store", fx->dir);
	snprintf(fx->src, sizeof(fx->src), "%s/object", fx->dir);
	snprintf(fx->dest, sizeof(fx->dest), "%s/back", fx->dir);
	f = fopen(fx->src, "wb");
	assert_non_null(f);
	fx->size = sizeof(content) - 1;
	assert_int_equal(fwrite(content, 1, fx->size, f), fx->size);
	fclose(f);
	rs_sha256(&id, content, fx->size);
	rs_id_to_hex(fx->oid, &id);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

static void read_all(const char *path, struct rs_buf *out)
{
	char block[256];
	size_t n;
	FILE *f = fopen(path, "rb");

	assert_non_null(f);
	while ((n = fread(block, 1, sizeof(block), f)) > 0)
		assert_int_equal(rs_buf_put(out, block, n), 0);
	fclose(f);
}

static void test_put_get(void **state)
{
	struct fx *fx = *state;
	struct rs_objstore *s = NULL;
	struct rs_objstore_put_stats st;
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT;

	assert_int_equal(rs_objstore_open_url(&s, fx->url, NULL, NULL), 0);
	assert_non_null(strstr(rs_objstore_display_url(s), "/store"));
	/* Nothing pushed yet: the one "no store here" message. */
	assert_int_equal(rs_objstore_check_format(s), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "holds no results store"));
	assert_int_equal(rs_objstore_get(s, fx->oid, fx->size, fx->dest, NULL, NULL), RS_ENOTFOUND);
	assert_int_equal(access(fx->dest, F_OK), -1);

	assert_int_equal(rs_objstore_put(s, fx->oid, fx->size, fx->src, NULL, NULL, &st), 0);
	assert_int_equal(st.bytes_raw, fx->size);
	assert_int_equal(st.chunks, 1);
	assert_int_equal(st.already_present, 0);
	assert_int_equal(rs_objstore_put(s, fx->oid, fx->size, fx->src, NULL, NULL, &st), 0);
	assert_int_equal(st.already_present, 1);
	rs_objstore_free(s);

	/* A second process: FORMAT is there now, the object comes back whole. */
	assert_int_equal(rs_objstore_open_url(&s, fx->url, NULL, NULL), 0);
	assert_int_equal(rs_objstore_check_format(s), 0);
	assert_int_equal(rs_objstore_get(s, fx->oid, fx->size, fx->dest, NULL, NULL), 0);
	read_all(fx->src, &a);
	read_all(fx->dest, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	rs_objstore_free(s);
	rs_buf_release(&a);
	rs_buf_release(&b);
}

static void test_wrong_content(void **state)
{
	struct fx *fx = *state;
	struct rs_objstore *s = NULL;
	char other[RS_OID_HEXSZ + 1];

	memcpy(other, fx->oid, sizeof(other));
	other[0] = other[0] == '0' ? '1' : '0';
	assert_int_equal(rs_objstore_open_url(&s, fx->url, NULL, NULL), 0);
	/* The file is not the object it is said to be: nothing is committed. */
	assert_int_equal(rs_objstore_put(s, other, fx->size, fx->src, NULL, NULL, NULL),
			 RS_ECORRUPT);
	assert_int_equal(rs_objstore_get(s, other, fx->size, fx->dest, NULL, NULL), RS_ENOTFOUND);
	rs_objstore_free(s);
}

static void test_bad_oid(void **state)
{
	struct fx *fx = *state;
	struct rs_objstore *s = NULL;
	char upper[RS_OID_HEXSZ + 1];

	assert_int_equal(rs_objstore_open_url(&s, fx->url, NULL, NULL), 0);
	assert_int_equal(rs_objstore_put(s, "abc", fx->size, fx->src, NULL, NULL, NULL), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "bad oid 'abc'"));
	memset(upper, 'A', RS_OID_HEXSZ);
	upper[RS_OID_HEXSZ] = '\0';
	assert_int_equal(rs_objstore_get(s, upper, fx->size, fx->dest, NULL, NULL), RS_EUSAGE);
	assert_int_equal(access(fx->dest, F_OK), -1);
	rs_objstore_free(s);
}

static void test_bad_url(void **state)
{
	struct rs_objstore *s = NULL;

	(void)state;
	assert_int_not_equal(rs_objstore_open_url(&s, "gopher://example.org/x", NULL, NULL), 0);
	assert_null(s);
	assert_int_equal(strncmp(rs_error_message(), "results remote: ", 16), 0);
	rs_objstore_free(NULL);
}

static void test_download_path(void **state)
{
	struct rs_buf out = RS_BUF_INIT;
	struct fx *fx = *state;

	assert_int_equal(rs_objstore_download_path(&out, "/repo/.git/lfs/tmp", fx->oid), 0);
	assert_int_equal(strncmp(out.ptr, "/repo/.git/lfs/tmp/results-", 27), 0);
	assert_string_equal(out.ptr + 27, fx->oid);
	rs_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_put_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_oid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_url, setup, teardown),
		cmocka_unit_test_setup_teardown(test_download_path, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
