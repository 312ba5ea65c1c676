/*
 * The encoder's search for the clock's phase (codec_find_phase, in
 * src/codec/session_encode.c): its fast steps (sums of grid steps, a mask
 * and a comparison) must choose exactly the phase that the slow steps
 * through time_code and phase_code choose, the one container version 2
 * and 3 store, on every kind of run: a clock followed to its end, a
 * reading missed (the search then tries every candidate until the
 * budget), times that fit no clock, times kept as text in between, long
 * times on a coarse grid (where the fast steps give way to the slow ones),
 * and budgets that end the search part way. The times are made as
 * pyinstrument makes them: differences of two readings of a nanosecond
 * clock, each a double on the grid 2^-s.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"

/* A small deterministic generator (xorshift64*), so that a failure repeats. */
static uint64_t rnd(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * UINT64_C(2685821657736338717);
}

enum clock_kind {
	CLOCK_FOLLOWED, /* every time a difference of two readings */
	CLOCK_MISSED,   /* one reading missed part way: one grid step off */
	CLOCK_NONE,     /* grid steps drawn at random: no phase explains many */
};

/*
 * `nrec` times on the grid 2^-s: readings x0 + whole nanoseconds near
 * `interval` ns apart, each time the difference of two readings' grid
 * values (what a double difference of perf_counter() readings is), every
 * `verbatim_every`-th record marked as kept as text (0: none).
 */
/* An encoder state with room for `nrec` records' times, none kept as text. */
static void alloc_times(struct enc *e, uint64_t nrec)
{
	memset(e, 0, sizeof(*e));
	e->nrecords = nrec;
	e->rec_time = calloc(nrec + 1, sizeof(*e->rec_time));
	e->rec_verbatim = calloc(nrec + 1, 1);
	assert_non_null(e->rec_time);
	assert_non_null(e->rec_verbatim);
}

static void make_times(struct enc *e, uint64_t nrec, int s, int64_t x0, int64_t interval,
		       enum clock_kind kind, uint64_t verbatim_every, uint64_t seed)
{
	uint64_t st = seed | 1, r;
	int64_t x = x0;

	alloc_times(e, nrec);
	for (r = 0; r < nrec; r++) {
		int64_t n = interval + (int64_t)(rnd(&st) % 4000), m;

		m = grid_of_ns(x + n, s) - grid_of_ns(x, s);
		if (kind == CLOCK_MISSED && r == nrec / 2)
			m++;
		if (kind == CLOCK_NONE)
			m += (int64_t)(rnd(&st) % 7) - 3;
		x += n;
		e->rec_time[r] = ldexp((double)m, -s);
		e->rec_verbatim[r] = verbatim_every && r % verbatim_every == verbatim_every - 1;
	}
}

static void free_times(struct enc *e)
{
	free(e->rec_time);
	free(e->rec_verbatim);
}

/* The fast search and the reference agree; the phase found is returned. */
static int64_t both_agree(const struct enc *e, int s, uint64_t budget)
{
	int64_t fast = -1, slow = -1;

	assert_int_equal(codec_find_phase(e, s, budget, 0, &fast), 0);
	assert_int_equal(codec_find_phase(e, s, budget, 1, &slow), 0);
	if (fast != slow)
		fail_msg("s %d, budget %llu: the fast search found phase %lld, the reference %lld", s,
			 (unsigned long long)budget, (long long)fast - 1, (long long)slow - 1);
	return fast;
}

/*
 * A clock followed to its end: the phase found must explain every time
 * (checked through phase_next: it is the reading x0 started at, mod the
 * period, or one that reads the same on the grid).
 */
static void test_followed_clock(void **state)
{
	static const int grids[] = { 40, 41, 43, 30, 47 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
		struct enc e;
		int64_t x0 = 1000 + (int64_t)i * 7919, phase;

		make_times(&e, 3000, grids[i], x0, 1000000, CLOCK_FOLLOWED, i == 2 ? 97 : 0, 42 + i);
		phase = both_agree(&e, grids[i], PHASE_BUDGET);
		assert_true(phase >= 1 && phase - 1 <= x0 % CLOCK_PERIOD);
		free_times(&e);
	}
}

/*
 * A reading missed half way: no candidate explains every time, so the
 * search runs until its budget, the generated 224 MB session's case
 * (budgets that stop it at different candidates, including part way
 * through the first ones).
 */
static void test_missed_reading(void **state)
{
	static const uint64_t budgets[] = { 1, 500, 123457, 1000000, 3000000 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		struct enc e;

		make_times(&e, 400, 43, 5000 + (int64_t)i, 1000000, CLOCK_MISSED, i == 3 ? 13 : 0, 7 + i);
		assert_true(both_agree(&e, 43, budgets[i]) >= 1);
		free_times(&e);
	}
}

/*
 * A clock that passes powers of two of seconds, as a CI runner's does a
 * few minutes after it booted: each reading the double (x / 1e9) that
 * perf_counter() gives, so that the grid coarsens at 1 s and 2 s (2^-53,
 * 2^-52, then 2^-51). No phase explains the times on the first grid
 * alone; the search must stop at the run's own phase (which explains
 * every time with the grid changes), well before the budget that a
 * missed reading spends, and the fast steps agree with the reference.
 * `x0` the first reading in nanoseconds.
 */
static void make_crossing_times(struct enc *e, uint64_t nrec, int64_t x0, uint64_t seed)
{
	uint64_t st = seed | 1, r;
	int64_t x = x0;

	alloc_times(e, nrec);
	for (r = 0; r < nrec; r++) {
		int64_t n = 1000000 + (int64_t)(rnd(&st) % 200000) - 50000;

		e->rec_time[r] = (double)(x + n) / 1e9 - (double)x / 1e9;
		x += n;
	}
}

static void test_clock_passing_powers_of_two(void **state)
{
	/* 500 and 1018 periods, and a reading past each: they cross 1 s (and 2 s), and 2 s */
	static const int64_t starts[] = { INT64_C(976562500) + 1000, INT64_C(976562500) + 1953124,
					  INT64_C(1988281250) + 777 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		struct enc e;
		int64_t phase;
		uint64_t budget;

		make_crossing_times(&e, 1200, starts[i], 21 + i);
		phase = both_agree(&e, i < 2 ? 53 : 52, i == 1 ? PHASE_BUDGET : 40 * 1200);
		/* budgets that end the search before, at and after the walks with changes */
		for (budget = 1; budget < 8000; budget = budget * 3 + 7)
			(void)both_agree(&e, i < 2 ? 53 : 52, budget);
		/* the first reading's, or one before it that reads the same on the grid */
		if (phase < 1 || phase - 1 > starts[i] % CLOCK_PERIOD)
			fail_msg("start %lld: phase %lld, past the first reading's %lld", (long long)starts[i],
				 (long long)phase - 1, (long long)(starts[i] % CLOCK_PERIOD));
		free_times(&e);
	}
}

/* Times that fit no clock, and a run of times all kept as text. */
static void test_no_clock(void **state)
{
	struct enc e;

	(void)state;
	make_times(&e, 200, 42, 77, 1000000, CLOCK_NONE, 0, 99);
	both_agree(&e, 42, 2000000);
	free_times(&e);
	make_times(&e, 50, 42, 77, 1000000, CLOCK_FOLLOWED, 1, 5);
	assert_int_equal(both_agree(&e, 42, PHASE_BUDGET), 0);
	free_times(&e);
}

/*
 * Grids from the finest (62) to the coarsest the search takes (9), and
 * long times on coarse grids, where the nanoseconds a time spans could
 * pass phase_code's 2^50 and the fast steps must give way.
 */
static void test_grids_and_long_times(void **state)
{
	static const struct {
		int s;
		int64_t interval;
	} cases[] = { { 62, 1000 }, { 55, 200000 }, { 51, 1000000 }, { 52, 1000000 }, { 29, 1000000 },
		      { 20, 1000000 }, { 9, 1000000 }, { 12, INT64_C(1) << 49 }, { 20, INT64_C(1) << 50 },
		      { 9, (INT64_C(1) << 50) - 3000 } };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct enc e;

		make_times(&e, 300, cases[i].s, 3 + (int64_t)i * 1001, cases[i].interval,
			   i % 2 ? CLOCK_MISSED : CLOCK_FOLLOWED, 0, 11 + i);
		both_agree(&e, cases[i].s, 1500000);
		free_times(&e);
	}
}

/* m with m CLOCK_PERIOD = v (mod 2^(s-9)), 0 < m <= 2^(s-9). */
static int64_t grid_steps_with_residue(uint64_t v, int s)
{
	uint64_t inv = CLOCK_PERIOD, mask = (UINT64_C(1) << (s - 9)) - 1, m;
	int i;

	for (i = 0; i < 6; i++) /* Newton's iteration: the inverse of an odd number mod 2^64 */
		inv *= 2 - CLOCK_PERIOD * inv;
	m = (v * inv) & mask;
	return (int64_t)(m ? m : mask + 1);
}

/*
 * The first time sets the grid reading after phase 0 exactly at the edge
 * of what a whole nanosecond can read: the nanosecond y with |y 2^(s-9) -
 * m CLOCK_PERIOD| = CLOCK_PERIOD / 2 still reads m (the reference takes
 * it, so phase 0 explains every time: the rest follow the clock from y),
 * one grid step further none does. The fast steps' comparison must put
 * the edge in the same place.
 */
static void test_edge_of_a_reading(void **state)
{
	static const int grids[] = { 43, 40, 35, 31 };
	size_t i;
	int edge;

	(void)state;
	for (i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
		for (edge = 0; edge < 2; edge++) {
			int s = grids[i];
			struct enc e;
			int64_t m = grid_steps_with_residue(CLOCK_PERIOD / 2 + (uint64_t)edge, s), y, phase;
			uint64_t r;

			make_times(&e, 200, s, 0, 1000000, CLOCK_FOLLOWED, 0, 5 + i);
			e.rec_time[0] = ldexp((double)m, -s);
			y = ns_of_grid(m, s); /* the nearest nanosecond: the one at the edge */
			for (r = 1; r < e.nrecords; r++) {
				int64_t n = 1000000 + (int64_t)(r * 7919 % 4000);

				e.rec_time[r] = ldexp((double)(grid_of_ns(y + n, s) - grid_of_ns(y, s)), -s);
				y += n;
			}
			phase = both_agree(&e, s, PHASE_BUDGET);
			if (!edge)
				assert_int_equal(phase, 1);
			else
				assert_true(phase != 1);
			free_times(&e);
		}
	}
}

/*
 * Every budget from 1 to 3,000 records on a run the search cannot follow
 * to its end: where the search stops depends on how the steps are
 * counted (every record up to the one that fails, texts included), and
 * so, now and then, does the phase.
 */
static void test_every_small_budget(void **state)
{
	struct enc e;
	uint64_t budget;
	int64_t seen = 0, phase;
	int changes = 0;

	(void)state;
	make_times(&e, 60, 43, 300, 1000000, CLOCK_MISSED, 7, 17);
	e.rec_verbatim[0] = 1; /* so that every candidate costs a step */
	for (budget = 1; budget <= 3000; budget++) {
		phase = both_agree(&e, 43, budget);
		changes += phase != seen;
		seen = phase;
	}
	if (changes < 3)
		fail_msg("the phase changed %d times over the budgets", changes);
	free_times(&e);
}

/*
 * Times whose nanoseconds lie at 2^50, the most phase_code takes, on
 * every grid: there the fast steps must leave the verdict to the slow
 * ones.
 */
static void test_times_at_the_nanosecond_limit(void **state)
{
	int s, d;

	(void)state;
	for (s = 9; s <= 62; s++) {
		for (d = -2; d <= 2; d++) {
			struct enc e;
			int64_t m = (int64_t)(((unsigned __int128)1 << (41 + s)) / CLOCK_PERIOD) + d;

			if (m < 1 || m >= INT64_C(1) << 53)
				continue;
			make_times(&e, 3, s, 0, 1000000, CLOCK_FOLLOWED, 0, 3);
			e.rec_time[0] = e.rec_time[2] = ldexp((double)m, -s);
			both_agree(&e, s, 200000);
			free_times(&e);
		}
	}
}

/*
 * grid_of_ns takes a 64-bit division where it can, and phase_next a
 * 64-bit remainder: both must give what the 128-bit arithmetic gives, at
 * the edges of where they switch (n 2^(s-9) near 2^64, sums near
 * INT64_MAX), for negative nanoseconds and on every grid.
 */
static void test_grid_arithmetic(void **state)
{
	uint64_t st = 12345;
	int s, i;

	(void)state;
	for (s = 1; s <= 62; s++) {
		for (i = 0; i < 4000; i++) {
			uint64_t r = rnd(&st);
			int64_t n;

			switch (i % 5) {
			case 0: /* near where the 64-bit path ends */
				n = s >= 9 ? (int64_t)((UINT64_MAX >> (s - 9)) - (r % 3000000)) : (int64_t)r;
				break;
			case 1: n = (int64_t)(r >> (r % 64)); break;
			case 2: n = -(int64_t)(r >> (1 + r % 63)); break;
			case 3: n = (int64_t)(r % 10000000000ull); break;
			default: n = (int64_t)(r % 4000); break;
			}
			if (grid_of_ns(n, s) != grid_of_ns_wide(n, s))
				fail_msg("grid_of_ns(%lld, %d): %lld, the 128-bit division %lld", (long long)n, s,
					 (long long)grid_of_ns(n, s), (long long)grid_of_ns_wide(n, s));
		}
	}
	for (i = 0; i < 100000; i++) {
		uint64_t r = rnd(&st);
		int64_t x = (int64_t)(r % CLOCK_PERIOD), n = (int64_t)(rnd(&st) >> (r % 64));

		if (i % 3 == 1)
			n = INT64_MAX - (int64_t)(r % 4000000);
		if (i % 3 == 2)
			n = -n;
		if (phase_next(x, n) != (int64_t)(((__int128)x + n) % CLOCK_PERIOD))
			fail_msg("phase_next(%lld, %lld)", (long long)x, (long long)n);
	}
}

/* Outside 9..62 neither looks: no phase. */
static void test_grid_out_of_range(void **state)
{
	struct enc e;
	int64_t phase = -1;

	(void)state;
	make_times(&e, 10, 8, 0, 1000000, CLOCK_FOLLOWED, 0, 3);
	assert_int_equal(codec_find_phase(&e, 8, PHASE_BUDGET, 0, &phase), 0);
	assert_int_equal(phase, 0);
	free_times(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_followed_clock),
		cmocka_unit_test(test_missed_reading),
		cmocka_unit_test(test_no_clock),
		cmocka_unit_test(test_clock_passing_powers_of_two),
		cmocka_unit_test(test_grids_and_long_times),
		cmocka_unit_test(test_edge_of_a_reading),
		cmocka_unit_test(test_every_small_budget),
		cmocka_unit_test(test_times_at_the_nanosecond_limit),
		cmocka_unit_test(test_grid_arithmetic),
		cmocka_unit_test(test_grid_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
