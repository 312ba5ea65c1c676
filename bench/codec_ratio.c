/*
 * codec_ratio: encode sessions with the session codec (store transform 1),
 * prove and time it, and print raw/container ratios.
 *
 * usage: codec_ratio FILE...
 *
 * For each file: raw bytes, container bytes, raw/container, records,
 * distinct frames, tree nodes, times kept as text, encode seconds (parse +
 * build + proof) and decode seconds (rebuild + SHA-256). With more than
 * one file it also prints the container of all files after the first
 * against the first (how much a following run costs). Exits 1 when a
 * file declines or does not rebuild byte for byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/session_codec.h"
#include "results/error.h"
#include "util/hash.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct sink {
	struct rs_sha256 *h;
	unsigned long long n;
};

static int sink_write(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;

	rs_sha256_update(s->h, p, n);
	s->n += n;
	return 0;
}

int main(int argc, char **argv)
{
	int i, status = 0, series = getenv("CODEC_SERIES") != NULL;
	struct rs_codec_dict dict;
	struct rs_buf base = RS_BUF_INIT, block = RS_BUF_INIT;
	unsigned long long total = 0, first = 0;

	memset(&dict, 0, sizeof(dict));
	if (argc < 2) {
		fprintf(stderr, "usage: codec_ratio FILE...\n");
		return 2;
	}
	printf("%-40s %12s %10s %8s %8s %6s %8s %6s %7s %7s\n", "file", "raw", "container", "ratio",
	       "records", "frames", "nodes", "text", "enc_s", "dec_s");
	for (i = 1; i < argc; i++) {
		struct rs_buf out = RS_BUF_INIT;
		struct rs_codec_stats st;
		struct rs_id oid, got;
		struct sink sk = { NULL, 0 };
		unsigned long long size = 0;
		double t0, t1, t2;
		int applies = 0, err;
		FILE *f = fopen(argv[i], "rb");

		if (!f || fseek(f, 0, SEEK_END) || (size = (unsigned long long)ftell(f), 0)) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			return 2;
		}
		fclose(f);
		if (rs_digest_file("sha256", argv[i], 0, size, oid.id, NULL) != 0) {
			fprintf(stderr, "cannot hash %s: %s\n", argv[i], rs_error_message());
			return 2;
		}
		t0 = now();
		dict.base = (unsigned char *)base.ptr;
		dict.base_len = base.len;
		rs_buf_clear(&dict.next);
		err = rs_codec_encode_file(&out, &applies, argv[i], size, &oid, series ? &dict : NULL, &st);
		t1 = now();
		if (err || !applies) {
			printf("%-40s declined: %s\n", argv[i], err ? rs_error_message() : st.declined);
			status = 1;
			rs_buf_release(&out);
			continue;
		}
		sk.h = rs_sha256_new();
		err = rs_codec_decode((unsigned char *)out.ptr, out.len, size, sink_write, &sk);
		rs_sha256_final(sk.h, &got);
		rs_sha256_free(sk.h);
		t2 = now();
		if (err || sk.n != size || rs_id_cmp(&got, &oid)) {
			printf("%-40s does not rebuild: %s\n", argv[i], err ? rs_error_message() : "hash differs");
			status = 1;
		}
		printf("%-40s %12llu %10zu %8.1f %8llu %6llu %8llu %6llu %7.3f %7.3f\n", argv[i], size, out.len,
		       (double)size / (double)out.len, (unsigned long long)st.records,
		       (unsigned long long)st.frames, (unsigned long long)st.nodes,
		       (unsigned long long)st.times_verbatim, t1 - t0, t2 - t1);
		if (series) {
			/* What a store adds for this run: the first block is free when it repeats. */
			int shared = block.len == dict.block_len && !memcmp(block.ptr, out.ptr, block.len);
			unsigned long long cost = out.len - (shared ? dict.block_len : 0);

			total += cost;
			if (i == 1)
				first = cost;
			printf("    series: block %llu bytes %s, this run adds %llu, all so far %llu = %.2f x the first\n",
			       (unsigned long long)dict.block_len, shared ? "shared" : "new", cost, total,
			       (double)total / (double)first);
			rs_buf_clear(&block);
			rs_buf_clear(&base);
			if (rs_buf_put(&block, out.ptr, dict.block_len) ||
			    rs_buf_put(&base, dict.next.ptr, dict.next.len)) {
				fprintf(stderr, "codec_ratio: %s\n", rs_error_message());
				return 1;
			}
		}
		if (getenv("CODEC_DUMP")) {
			/* the container, for a fuzz corpus: one marker byte, then the bytes */
			char name[4096];
			const char *slash = strrchr(argv[i], '/');
			FILE *d;

			snprintf(name, sizeof(name), "%s/container_%s", getenv("CODEC_DUMP"), slash ? slash + 1 : argv[i]);
			d = fopen(name, "wb");
			if (d) {
				fputc(1, d);
				fputc((int)(size / 16384 + 1 > 255 ? 255 : size / 16384 + 1), d);
				fwrite(out.ptr, 1, out.len, d);
				fclose(d);
			}
		}
		if (getenv("CODEC_SECTIONS")) {
			/*
			 * the base block (16-byte header, one stream; version 5: two, the
			 * base tree second), the main header (24), nine streams (version 2)
			 */
			static const char *names4[] = { "base", "params", "prefix", "suffix", "dict", "threads",
							"tree", "samples", "times", "tesc" };
			static const char *names5[] = { "base", "basetree", "params", "prefix", "suffix", "dict",
							"threads", "tree", "samples", "times", "tesc" };
			int v5 = out.len >= 16 && (unsigned char)out.ptr[8] >= 5;
			const char **names = v5 ? names5 : names4;
			int nk = v5 ? 11 : 10, last_base = v5 ? 1 : 0;
			size_t pos = 16;
			int k;

			for (k = 0; k < nk && pos + 24 <= out.len; k++) {
				const unsigned char *h = (const unsigned char *)out.ptr + pos;
				unsigned long long raw = 0, stored = 0;
				int b;

				for (b = 7; b >= 0; b--) {
					raw = raw << 8 | h[b];
					stored = stored << 8 | h[8 + b];
				}
				printf("    %-8s raw %10llu stored %8llu\n", names[k], raw, stored);
				pos += 24 + stored + (k == last_base ? 24 : 0);
			}
			/* the clock: modelled times it did not explain, and its grid changes */
			printf("    clock    residuals %llu grid changes %llu\n",
			       (unsigned long long)st.times_residual, (unsigned long long)st.grid_changes);
		}
		rs_buf_release(&out);
	}
	rs_buf_release(&dict.next);
	rs_buf_release(&base);
	rs_buf_release(&block);
	return status;
}
