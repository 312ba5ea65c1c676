/*
 * What encoder and decoder compute alike (codec_internal.h): Python's
 * repr() of a double, its cache, and the table of version 2's streams.
 */
#define _GNU_SOURCE /* qsort_r */
#include "codec/codec_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int codec_v2_streams[V2_COUNT] = {
	SEC_PARAMS, SEC_PREFIX, SEC_SUFFIX, SEC_DICT, SEC_THREADS, SEC_TREE, SEC_SAMPLES, SEC_TIMES, SEC_TESC
};

/*
 * calloc for the tables the codec probes before it writes (hash tables,
 * counts bumped with ++). calloc hands a large block over as untouched
 * pages: the first probe maps the kernel's shared zero page, the first
 * write then copies it and, with the codec's threads running, flushes
 * the other cores' TLBs (an interrupt to each, a VM exit on a guest).
 * In a push of the generated 224 MB session those faults were 6% of the
 * agent's CPU (perf, 2026-12-07). Written with zeros first, each page
 * faults once, for the write. Only for tables the encoder fills: sized
 * by its own parse, or by a base tree already read whole (base places).
 * A table sized by a container's claim stays calloc'd, so that a
 * hostile one refused part way never has its pages resident. Freed with
 * free().
 */
void *codec_zalloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	bytes = n * size;
	p = malloc(bytes > 0 ? bytes : 1);
	if (p)
		memset(p, 0, bytes);
	return p;
}

/*
 * Python's repr() of a finite double: the shortest digit string that
 * reads back to the same double (the closest one among the shortest,
 * which is what a correctly rounded %.*e of that many digits gives), in
 * fixed notation when the decimal exponent is in [-4, 16), else d.ddde-XX.
 * Timing values need 16 or 17 digits, so the search starts there.
 */
/* `%.*e` of x with p digits: its digits (no point) and decimal exponent. */
static void sci_digits(double x, int p, char *digits, int *exp10)
{
	char tmp[48];
	const char *c = tmp;
	int nd = 0;

	snprintf(tmp, sizeof(tmp), "%.*e", p - 1, x);
	if (*c == '-')
		c++;
	for (; *c && *c != 'e'; c++)
		if (*c != '.')
			digits[nd++] = *c;
	*exp10 = atoi(c + 1);
}

/*
 * The 17 correctly rounded digits `d` (exponent e) rounded to p digits,
 * into out and *oe. Rounding twice is exact except when the dropped digits
 * are exactly a half (5, then zeros): then 1 (ask snprintf).
 */
static int round_digits(const char *d, int e, int p, char *out, int *oe)
{
	int i, up;

	memcpy(out, d, (size_t)p);
	*oe = e;
	if (d[p] != '5') {
		up = d[p] > '5';
	} else {
		for (i = p + 1; i < 17 && d[i] == '0'; i++)
			;
		if (i == 17)
			return 1;
		up = 1;
	}
	for (i = p - 1; up && i >= 0; i--) {
		if (out[i] == '9') {
			out[i] = '0';
		} else {
			out[i]++;
			up = 0;
		}
	}
	if (up) { /* 99..9 became 00..0 */
		out[0] = '1';
		(*oe)++;
	}
	return 0;
}

/*
 * The shortest round-tripping digits of finite nonzero x: from 17 (always
 * enough) downwards, each candidate the correctly rounded one, made by
 * rounding the 17 digits as text (one snprintf in all, one strtod per
 * candidate). Leaves the digits in digits[0..*nd) and the decimal
 * exponent of the first one in *exp10.
 */
static inline void shortest_digits(double x, char *digits, int *nd, int *exp10)
{
	char d17[24], cand[48];
	int p, e17;

	sci_digits(x, 17, d17, &e17);
	memcpy(digits, d17, 17);
	*nd = 17;
	*exp10 = e17;
	for (p = 16; p >= 1; p--) {
		char dp[24];
		int ep, k = 0;

		if (round_digits(d17, e17, p, dp, &ep))
			sci_digits(x, p, dp, &ep);
		if (x < 0)
			cand[k++] = '-';
		cand[k++] = dp[0];
		cand[k++] = '.';
		memcpy(cand + k, dp + 1, (size_t)p - 1);
		k += p - 1;
		snprintf(cand + k, sizeof(cand) - (size_t)k, "e%d", ep);
		if (strtod(cand, NULL) != x)
			break;
		memcpy(digits, dp, (size_t)p);
		*nd = p;
		*exp10 = ep;
	}
}

/* Python's repr layout of digits[0..nd) with exponent exp10, from out[n]. */
static inline size_t repr_layout(const char *digits, int nd, int exp10, char *out, size_t n)
{
	int i;

	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 >= 0) {
			for (i = 0; i <= exp10; i++)
				out[n++] = i < nd ? digits[i] : '0';
			out[n++] = '.';
			if (nd > exp10 + 1)
				for (i = exp10 + 1; i < nd; i++)
					out[n++] = digits[i];
			else
				out[n++] = '0';
		} else {
			out[n++] = '0';
			out[n++] = '.';
			for (i = 0; i < -exp10 - 1; i++)
				out[n++] = '0';
			for (i = 0; i < nd; i++)
				out[n++] = digits[i];
		}
	} else {
		out[n++] = digits[0];
		if (nd > 1) {
			out[n++] = '.';
			for (i = 1; i < nd; i++)
				out[n++] = digits[i];
		}
		n += (size_t)snprintf(out + n, 16, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
	return n;
}

size_t codec_py_repr(double x, char *out)
{
	char digits[24];
	int exp10, nd;
	size_t n = 0;

	if (!isfinite(x))
		return (size_t)snprintf(out, 48, "%g", x); /* never equal to JSON text */
	if (x == 0) {
		memcpy(out, signbit(x) ? "-0.0" : "0.0", signbit(x) ? 5 : 4);
		return signbit(x) ? 4 : 3;
	}
	shortest_digits(x, digits, &nd, &exp10);
	if (x < 0)
		out[n++] = '-';
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	n = repr_layout(digits, nd, exp10, out, n);
	out[n] = '\0';
	return n;
}


struct repr_cache *codec_repr_cache_new(void)
{
	void *p;

	if (posix_memalign(&p, 64, sizeof(struct repr_cache)))
		return NULL;
	memset(p, 0, sizeof(struct repr_cache));
	return p;
}

static size_t repr_slot(uint64_t bits)
{
	return (size_t)codec_mix64(bits) & (REPR_CACHE - 1);
}

/* Start fetching the slot where x's text would be. */
void codec_repr_prefetch(const struct repr_cache *c, double x)
{
	uint64_t bits;

	memcpy(&bits, &x, sizeof(bits));
	__builtin_prefetch(&c->slot[repr_slot(bits)]);
}

/* py_repr through the cache; `out` needs 48 bytes. */
size_t codec_py_repr_cached(struct repr_cache *c, double x, char *out)
{
	struct repr_slot *sl;
	uint64_t bits;
	size_t home, at, n;
	int probe;

	memcpy(&bits, &x, sizeof(bits));
	home = at = repr_slot(bits);
	for (probe = 0; probe < REPR_PROBE && c->slot[at].len; probe++) {
		sl = &c->slot[at];
		if (sl->bits == bits) {
			memcpy(out, sl->text, sl->len);
			out[sl->len] = '\0';
			return sl->len;
		}
		at = (at + 1) & (REPR_CACHE - 1);
	}
	if (probe == REPR_PROBE)
		at = home; /* the probe run is full: evict its first */
	c->misses++;
	n = codec_py_repr(x, out);
	if (n <= sizeof(c->slot[0].text)) {
		sl = &c->slot[at];
		sl->bits = bits;
		sl->len = (unsigned char)n;
		memcpy(sl->text, out, n);
	}
	return n;
}

