/* LFS pointer parsing and formatting (git/pointer.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "git/pointer.h"
#include "results/error.h"

#define OID "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393"
#define VER "version https://git-lfs.github.com/spec/v1\n"

static const char canonical[] = VER "oid sha256:" OID "\nsize 12345\n";

static int parse(struct rs_pointer *p, const char *s)
{
	return rs_pointer_parse(p, s, strlen(s));
}

static void test_parse_canonical(void **state)
{
	struct rs_pointer p = RS_POINTER_INIT;
	struct rs_buf out = RS_BUF_INIT;
	char hex[RS_ID_HEXSZ + 1];

	assert_int_equal(parse(&p, canonical), 0);
	rs_id_to_hex(hex, &p.oid);
	assert_string_equal(hex, OID);
	assert_int_equal(p.size, 12345);
	assert_int_equal(p.nextra, 0);
	assert_int_equal(rs_pointer_format(&out, &p), 0);
	assert_string_equal(out.ptr, canonical);
	assert_true(rs_pointer_looks_like(canonical, strlen(canonical)));
	rs_pointer_release(&p);
	rs_buf_release(&out);
}

static void test_unknown_keys_kept_in_order(void **state)
{
	const char *s = VER "ext-0-foo sha256:abc\noid sha256:" OID "\nother x y\nsize 0\nzz 1\n";
	struct rs_pointer p = RS_POINTER_INIT;
	struct rs_buf out = RS_BUF_INIT;

	assert_int_equal(parse(&p, s), 0);
	assert_int_equal(p.size, 0);
	assert_int_equal(p.nextra, 3);
	assert_string_equal(p.extra[0].key, "ext-0-foo");
	assert_string_equal(p.extra[1].key, "other");
	assert_string_equal(p.extra[1].value, "x y");
	assert_string_equal(p.extra[2].key, "zz");
	assert_int_equal(rs_pointer_format(&out, &p), 0);
	assert_string_equal(out.ptr, s);
	rs_pointer_release(&p);
	rs_buf_release(&out);
}

static void test_rejects_non_canonical(void **state)
{
	static const char *bad[] = {
		"",
		"hello world\n",
		VER "oid sha256:" OID "\nsize 12345",            /* no final newline */
		VER "size 12345\noid sha256:" OID "\n",           /* unsorted */
		VER "oid sha256:" OID "\noid sha256:" OID "\nsize 1\n", /* repeated */
		VER "oid sha256:" OID "\n",                       /* no size */
		VER "size 1\n",                                   /* no oid */
		VER "oid sha256:4D7A214614AB2935C943F9E0FF69D22EADBB8F32B1258DAAA5E2CA24D17E2393\nsize 1\n",
		VER "oid sha1:" OID "\nsize 1\n",
		VER "oid sha256:" OID "0\nsize 1\n",
		VER "oid sha256:" OID "\nsize 012\n",             /* leading zero */
		VER "oid sha256:" OID "\nsize -1\n",
		VER "oid sha256:" OID "\nsize 9223372036854775808\n", /* > INT64_MAX */
		VER "oid sha256:" OID "\nsize 1 \n",
		"version https://git-lfs.github.com/spec/v1\r\noid sha256:" OID "\r\nsize 1\r\n",
		VER "oid sha256:" OID "\r\nsize 1\n",
		VER "Key x\noid sha256:" OID "\nsize 1\n",        /* upper-case key */
		VER "a \noid sha256:" OID "\nsize 1\n",           /* empty value */
		VER "\noid sha256:" OID "\nsize 1\n",             /* empty line */
		VER "oid sha256:" OID "\nsize 1\nversion x\n",
		VER "oid sha256:" OID "\nsize 1\n\n",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct rs_pointer p = RS_POINTER_INIT;

		if (parse(&p, bad[i]) != RS_ECORRUPT)
			fail_msg("accepted bad pointer #%zu", i);
	}
}

static void test_size_cap(void **state)
{
	struct rs_buf s = RS_BUF_INIT;
	struct rs_pointer p = RS_POINTER_INIT;

	/* A valid shape padded to exactly 1024 bytes with an unknown key. */
	assert_int_equal(rs_buf_puts(&s, VER "oid sha256:" OID "\nsize 1\nzz "), 0);
	while (s.len < RS_POINTER_MAX - 1)
		assert_int_equal(rs_buf_putc(&s, 'x'), 0);
	assert_int_equal(rs_buf_putc(&s, '\n'), 0);
	assert_int_equal(s.len, RS_POINTER_MAX);
	assert_int_equal(rs_pointer_parse(&p, s.ptr, s.len), RS_ECORRUPT);
	/* One byte shorter is fine. */
	s.len -= 2;
	s.ptr[s.len] = '\n';
	s.len++;
	assert_int_equal(rs_pointer_parse(&p, s.ptr, s.len), 0);
	rs_pointer_release(&p);
	rs_buf_release(&s);
}

static void test_format_checks_extras(void **state)
{
	struct rs_pointer_kv kv[2] = { { (char *)"zz", (char *)"1" }, { (char *)"aa", (char *)"2" } };
	struct rs_pointer p = RS_POINTER_INIT;
	struct rs_buf out = RS_BUF_INIT;
	struct rs_id id;

	memset(&id, 0xab, sizeof(id));
	rs_pointer_init(&p, &id, 7);
	p.extra = kv;
	p.nextra = 2;
	assert_int_equal(rs_pointer_format(&out, &p), RS_EUSAGE); /* unsorted */
	assert_int_equal(out.len, 0);
	kv[1].key = (char *)"size";
	assert_int_equal(rs_pointer_format(&out, &p), RS_EUSAGE); /* reserved */
	p.nextra = 1;
	assert_int_equal(rs_pointer_format(&out, &p), 0);
	assert_string_equal(out.ptr, VER "oid sha256:abababababababababababababababababababababababababababababababab\nsize 7\nzz 1\n");
	rs_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_canonical),
		cmocka_unit_test(test_unknown_keys_kept_in_order),
		cmocka_unit_test(test_rejects_non_canonical),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_format_checks_extras),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
