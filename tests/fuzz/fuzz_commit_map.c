/*
 * Fuzz the commit map's bucket parser (index/commits/X/Y.jsonl come from
 * clones: untrusted). Whatever the bytes: no crash, no leak; a line found
 * keys the commit asked for, within the caps, its shards newest first,
 * and it serialises to a line that parses back to the same commit and
 * shards. The same bytes read as the branch map's bucket must not crash
 * either (a "commit" line there is just not a branch line).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/branchmap.h"
#include "results/buf.h"
#include "results/error.h"

/* Not assert(): release builds define NDEBUG and the calls must run. */
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s\n", #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const commits[] = {
		"cd00111111111111111111111111111111111111",
		"cd09222222222222222222222222222222222222",
		"CD0011",
		"c",
	};
	struct rs_buf line = RS_BUF_INIT;
	struct rs_map_entry e, back;
	int found = 0, found2 = 0;

	for (size_t c = 0; c < sizeof(commits) / sizeof(commits[0]); c++) {
		/* a refusal is a right answer to hostile input: only what is accepted is checked */
		if (rs_map_find(&e, &found, (const char *)data, size, "fuzz", RS_MAP_COMMITS,
				commits[c])) {
			CHECK(!found);
			rs_error_clear();
			continue;
		}
		if (!found)
			continue;
		CHECK(!strcmp(e.key, commits[c]));
		CHECK(e.count <= RS_BRANCHMAP_MAX_SHARDS);
		for (size_t i = 1; i < e.count; i++) {
			int k = strcmp(e.shards[i - 1].month, e.shards[i].month);

			CHECK(k > 0 || (k == 0 && e.shards[i - 1].seq > e.shards[i].seq));
		}
		for (size_t i = 0; i < e.count; i++)
			CHECK(e.shards[i].seq >= 1 && e.shards[i].seq <= 9999 && e.shards[i].runs >= 1 &&
			      strlen(e.shards[i].month) == 7 && !strchr(e.shards[i].month, '/') &&
			      !strchr(e.shards[i].month, '.'));
		rs_buf_clear(&line);
		CHECK(rs_map_entry_to_line(&line, &e, RS_MAP_COMMITS) == 0);
		CHECK(rs_map_find(&back, &found2, line.ptr, line.len, "back", RS_MAP_COMMITS,
				  commits[c]) == 0);
		CHECK(found2 && back.count == e.count && back.more == e.more);
		for (size_t i = 0; i < e.count; i++)
			CHECK(!strcmp(back.shards[i].month, e.shards[i].month) &&
			      back.shards[i].seq == e.shards[i].seq &&
			      back.shards[i].runs == e.shards[i].runs);
		rs_map_entry_release(&back);
		rs_map_entry_release(&e);
	}
	if (rs_map_find(&e, &found, (const char *)data, size, "fuzz", RS_MAP_BRANCHES, "main"))
		rs_error_clear();
	else if (found)
		rs_map_entry_release(&e);
	rs_buf_release(&line);
	return 0;
}
