/*
 * Unit tests of the session generator's building blocks that the end-to-end
 * test cannot reach: Python float repr on values far from the ones a run
 * produces (exponents, subnormals, integers), the IEEE-only math and the
 * PRNG streams that make output identical on every machine.
 *
 * The generator is a single program (tests/gen/gen_session.c, the target
 * gen-session), so it is compiled into this test with its main() renamed.
 */
#define _GNU_SOURCE /* before any header: gen_session.c uses qsort_r */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define main gen_session_main
#include "../gen/gen_session.c"
#undef main

static void expect_repr(double v, const char *want)
{
	char buf[48];
	size_t n = py_float_repr(v, buf);
	assert_string_equal(buf, want);
	assert_int_equal(n, strlen(want));
}

/* Expected strings are Python 3.11's repr() of the same doubles. */
static void test_float_repr_matches_python(void **state)
{
	(void)state;
	expect_repr(0.0, "0.0");
	expect_repr(1.0, "1.0");
	expect_repr(100.0, "100.0");
	expect_repr(0.1, "0.1");
	expect_repr(0.001, "0.001");
	expect_repr(0.0001, "0.0001");
	expect_repr(0.00001, "1e-05");
	expect_repr(0.000015, "1.5e-05");
	expect_repr(2.5, "2.5");
	expect_repr(123.456, "123.456");
	expect_repr(1e15, "1000000000000000.0");
	expect_repr(1e16, "1e+16");
	expect_repr(1.5e16, "1.5e+16");
	expect_repr(1e22, "1e+22");
	expect_repr(123456789012345678.0, "1.2345678901234568e+17");
	expect_repr(-0.5, "-0.5");
	expect_repr(5e-324, "5e-324");
	expect_repr(1.7976931348623157e308, "1.7976931348623157e+308");
	expect_repr(0.1 + 0.2, "0.30000000000000004");
	expect_repr(1796028654.0114212, "1796028654.0114212");
	expect_repr(0.0010107030000199302, "0.0010107030000199302");
	expect_repr(2.4007604122161865, "2.4007604122161865");
	expect_repr(2.397825454, "2.397825454");
	expect_repr(9007199254740993.0, "9007199254740992.0");
}

/* Every interval a run writes must read back to the same double: check a
 * long stretch of real generator deltas round-trip through strtod. */
static void test_interval_reprs_round_trip(void **state)
{
	(void)state;
	int64_t ns = (int64_t)(734.25 * 1e9);
	double last = (double)ns / 1e9;
	struct rng r;
	rng_seed(&r, 42, 4);
	for (int i = 0; i < 200000; i++) {
		ns += 1000000 + (int64_t)(rng_normal(&r) * 500.0);
		double t = (double)ns / 1e9, d = t - last;
		last = t;
		char buf[48];
		py_float_repr(d, buf);
		assert_true(strtod(buf, NULL) == d);
		/* shortest: one significant digit fewer must not round-trip */
		int digits = 0, leading = 1;
		for (const char *c = buf; *c && *c != 'e'; c++) {
			if (*c >= '1' && *c <= '9')
				leading = 0;
			digits += !leading && *c >= '0' && *c <= '9';
		}
		assert_true(digits >= 1 && digits <= 17);
		if (digits > 1) {
			char shorter[48];
			snprintf(shorter, sizeof shorter, "%.*e", digits - 2, d);
			assert_true(strtod(shorter, NULL) != d);
		}
	}
}

static void test_math_is_close_enough(void **state)
{
	(void)state;
	/* accuracy only needs to be good enough for distributions; what
	 * matters is that these use no libm */
	double xs[] = {1e-9, 0.001, 0.5, 1.0, 2.0, 10.0, 12345.678};
	for (size_t i = 0; i < sizeof xs / sizeof *xs; i++) {
		double l = g_log(xs[i]);
		double back = g_exp(l);
		assert_true(back > xs[i] * (1 - 1e-12) && back < xs[i] * (1 + 1e-12));
	}
	assert_true(g_log(1.0) == 0.0);
	assert_true(g_sqrt(16.0) == 4.0);
	assert_true(g_sqrt(2.0) * g_sqrt(2.0) > 1.9999999999 && g_sqrt(2.0) * g_sqrt(2.0) < 2.0000000001);
	assert_true(g_exp(-800) == 0.0);
}

/* The output of every test depends on these exact streams: a change to the
 * PRNG (or to how streams are derived) changes every generated file. */
static void test_prng_streams_are_stable(void **state)
{
	(void)state;
	struct rng a, b, c;
	rng_seed(&a, 1, 2);
	rng_seed(&b, 1, 2);
	rng_seed(&c, 1, 3);
	uint64_t first = rng_next(&a);
	assert_true(first == rng_next(&b));
	assert_true(first != rng_next(&c));
	/* uniform draws stay in range and cover it */
	uint32_t seen = 0;
	for (int i = 0; i < 10000; i++) {
		uint32_t v = rng_below(&a, 32);
		assert_true(v < 32);
		seen |= 1u << v;
		double u = rng_unit(&a);
		assert_true(u >= 0.0 && u < 1.0);
	}
	assert_true(seen == 0xffffffffu);
	/* Poisson mean, small and large lambda */
	double sum = 0;
	for (int i = 0; i < 20000; i++)
		sum += rng_poisson(&a, 3.0);
	assert_true(sum / 20000 > 2.9 && sum / 20000 < 3.1);
	sum = 0;
	for (int i = 0; i < 20000; i++)
		sum += rng_poisson(&a, 100.0);
	assert_true(sum / 20000 > 99 && sum / 20000 < 101);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_float_repr_matches_python),
		cmocka_unit_test(test_interval_reprs_round_trip),
		cmocka_unit_test(test_math_is_close_enough),
		cmocka_unit_test(test_prng_streams_are_stable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
