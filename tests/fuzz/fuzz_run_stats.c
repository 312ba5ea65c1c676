/*
 * Fuzz the stats readers (run-folder files are untrusted): the bytes are
 * read both as a stats JSON object and as a logged-stats CSV. No crash,
 * no leak; the maps stay within their caps.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "runs/stats.h"
#include "results/error.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s\n", #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	json_t *out = json_object();
	FILE *f;

	/* Here and below a refusal is a right answer to hostile input: only
	 * the key cap is checked. */
	if (rs_stats_flatten_json(out, size & 1 ? "p" : NULL, (const char *)data, size, "fuzz"))
		rs_error_clear();
	CHECK(json_object_size(out) <= RS_STATS_MAX_KEYS);
	json_object_clear(out);

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz_run_stats.%ld.csv", (long)getpid());
	f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
		if (rs_stats_read_csv_file(out, "x", path))
			rs_error_clear();
		CHECK(json_object_size(out) <= RS_STATS_MAX_KEYS);
		unlink(path);
	}
	json_decref(out);
	return 0;
}
