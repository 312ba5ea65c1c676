/* Chunk boundaries: bounds respected, deterministic, and local to an edit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store/chunker.h"
#include "util/hash.h"

#define MIN (4u * 1024)
#define AVG (16u * 1024)
#define MAX (64u * 1024)

/* Text-like pseudo-random bytes: a small alphabet, like session JSON. */
static unsigned char *make_input(size_t n, uint64_t seed)
{
	static const char alphabet[] = "abcdefghijklmnop_/.0123456789\\u, []\"";
	unsigned char *p = malloc(n);
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (unsigned char)alphabet[(seed >> 33) % (sizeof(alphabet) - 1)];
	}
	return p;
}

/* Cut `p` into chunks; return their count and fill ids (up to cap). */
static size_t cut_all(const struct rs_chunker *c, const unsigned char *p, size_t n,
		      struct rs_id *ids, size_t cap, size_t *lens)
{
	size_t off = 0, k = 0;

	while (off < n) {
		size_t avail = n - off < c->max_size ? n - off : c->max_size;
		size_t len = rs_chunker_next(c, p + off, avail);

		assert_true(len >= 1 && len <= avail);
		if (k < cap) {
			rs_sha256(&ids[k], p + off, len);
			lens[k] = len;
		}
		k++;
		off += len;
	}
	return k;
}

static void test_bounds_and_average(void **state)
{
	struct rs_chunker c;
	size_t n = 8u << 20, off = 0, count = 0;
	unsigned char *p = make_input(n, 1);

	(void)state;
	assert_int_equal(rs_chunker_init(&c, MIN, AVG, MAX), 0);
	while (off < n) {
		size_t avail = n - off < MAX ? n - off : MAX;
		size_t len = rs_chunker_next(&c, p + off, avail);

		if (off + len < n)
			assert_true(len >= MIN && len <= MAX);
		off += len;
		count++;
	}
	/* Normalized chunking keeps the mean near the target (within 2x). */
	assert_true(n / count > AVG / 2 && n / count < AVG * 2);
	free(p);
}

static void test_rejects_bad_sizes(void **state)
{
	struct rs_chunker c;

	(void)state;
	assert_int_not_equal(rs_chunker_init(&c, MIN, 3000, MAX), 0);    /* not a power of two */
	assert_int_not_equal(rs_chunker_init(&c, MAX * 2, AVG, MAX), 0);  /* min > max */
	assert_int_not_equal(rs_chunker_init(&c, MIN, AVG, AVG / 2), 0); /* max < avg */
}

static size_t shared_chunks(const struct rs_id *a, size_t na, const struct rs_id *b, size_t nb)
{
	size_t i, j, shared = 0;

	for (i = 0; i < na; i++)
		for (j = 0; j < nb; j++)
			if (!rs_id_cmp(&a[i], &b[j])) {
				shared++;
				break;
			}
	return shared;
}

/* Frees the two inputs of a comparison and their chunk ids and lengths. */
static void free_inputs(unsigned char *a, unsigned char *b, struct rs_id *ia, struct rs_id *ib, size_t *la,
			size_t *lb)
{
	free(a);
	free(b);
	free(ia);
	free(ib);
	free(la);
	free(lb);
}

static void test_insertion_changes_only_nearby_chunks(void **state)
{
	enum { CAP = 4096 };
	struct rs_chunker c;
	size_t n = 4u << 20, ins = 100, at = n / 2, na, nb, shared;
	unsigned char *a = make_input(n, 7), *b = malloc(n + ins);
	struct rs_id *ia = calloc(CAP, sizeof(*ia)), *ib = calloc(CAP, sizeof(*ib));
	size_t *la = calloc(CAP, sizeof(size_t)), *lb = calloc(CAP, sizeof(size_t));

	(void)state;
	assert_int_equal(rs_chunker_init(&c, MIN, AVG, MAX), 0);
	memcpy(b, a, at);
	memset(b + at, 'X', ins);
	memcpy(b + at + ins, a + at, n - at);
	na = cut_all(&c, a, n, ia, CAP, la);
	nb = cut_all(&c, b, n + ins, ib, CAP, lb);
	assert_true(na < CAP && nb < CAP);
	shared = shared_chunks(ia, na, ib, nb);
	print_message("insertion: %zu of %zu chunks shared\n", shared, na);
	/* All but the chunks touching the insertion survive (allow 3 lost). */
	assert_true(shared + 3 >= na);
	assert_true(shared < na); /* and the insertion did change something */

	/*
	 * Cutting the first 1000 bytes: the first chunk changes and, because
	 * normalized chunking's mask depends on the distance from the last
	 * cut, the next cut or two may land elsewhere before they resync.
	 */
	nb = cut_all(&c, a + 1000, n - 1000, ib, CAP, lb);
	shared = shared_chunks(ia, na, ib, nb);
	print_message("deletion: %zu of %zu chunks shared\n", shared, na);
	assert_true(shared + 5 >= na);
	free_inputs(a, b, ia, ib, la, lb);
}

/* The store's regime: the mask is set below the minimum size. */
static void test_insertion_with_mask_below_min(void **state)
{
	enum { CAP = 4096 };
	struct rs_chunker c;
	size_t n = 8u << 20, na, nb, shared;
	unsigned char *a = make_input(n, 21), *b = malloc(n + 1);
	struct rs_id *ia = calloc(CAP, sizeof(*ia)), *ib = calloc(CAP, sizeof(*ib));
	size_t *la = calloc(CAP, sizeof(size_t)), *lb = calloc(CAP, sizeof(size_t));

	(void)state;
	assert_int_equal(rs_chunker_init(&c, 48u * 1024, 1024, 256u * 1024), 0);
	memcpy(b, a, n / 3);
	b[n / 3] = '!';
	memcpy(b + n / 3 + 1, a + n / 3, n - n / 3);
	na = cut_all(&c, a, n, ia, CAP, la);
	nb = cut_all(&c, b, n + 1, ib, CAP, lb);
	shared = shared_chunks(ia, na, ib, nb);
	print_message("mask below min: %zu of %zu chunks shared\n", shared, na);
	assert_true(shared + 5 >= na);
	assert_true(shared < na);
	free_inputs(a, b, ia, ib, la, lb);
}

static void test_deterministic_and_short_input(void **state)
{
	struct rs_chunker c;
	unsigned char *p = make_input(MAX, 3);

	(void)state;
	assert_int_equal(rs_chunker_init(&c, MIN, AVG, MAX), 0);
	assert_int_equal(rs_chunker_next(&c, p, MAX), rs_chunker_next(&c, p, MAX));
	assert_int_equal(rs_chunker_next(&c, p, 10), 10);   /* shorter than min: whole */
	assert_int_equal(rs_chunker_next(&c, p, MIN), MIN);
	free(p);
}

/*
 * A prefix gives the same cut, or its own length when the cut lies beyond
 * it: the store cuts what it has read and reads on only in that case.
 */
static void test_prefix_gives_the_same_cut(void **state)
{
	struct rs_chunker c;
	unsigned char *p = make_input(MAX, 5);
	size_t full, k;

	(void)state;
	assert_int_equal(rs_chunker_init(&c, MIN, AVG, MAX), 0);
	memset(p + MAX / 2, 0, MAX / 2); /* no cut in zeros: some calls reach max_size */
	for (size_t start = 0; start < MAX; start += MAX / 16) {
		full = rs_chunker_next(&c, p + start, MAX - start);
		for (k = 1; k <= MAX - start; k += k < 2 * MIN ? 97 : 1021)
			assert_int_equal(rs_chunker_next(&c, p + start, k), k < full ? k : full);
	}
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_and_average),
		cmocka_unit_test(test_rejects_bad_sizes),
		cmocka_unit_test(test_insertion_changes_only_nearby_chunks),
		cmocka_unit_test(test_insertion_with_mask_below_min),
		cmocka_unit_test(test_deterministic_and_short_input),
		cmocka_unit_test(test_prefix_gives_the_same_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
