/*
 * Fuzz the branch map's bucket parser (index/branches/X/Y.jsonl come from
 * clones: untrusted). Whatever the bytes: no crash, no leak; a line found
 * is within the caps, its shards newest first, and it serialises to a
 * line that parses back to the same branch and shards.
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
	static const char *const branches[] = { "main", "pr/1", "a" };
	struct rs_buf line = RS_BUF_INIT;

	for (size_t b = 0; b < sizeof(branches) / sizeof(branches[0]); b++) {
		struct rs_map_entry e, back;
		int found = 0, found2 = 0;

		/* a refusal is a right answer to hostile input: only what is accepted is checked */
		if (rs_map_find(&e, &found, (const char *)data, size, "fuzz", RS_MAP_BRANCHES,
				branches[b])) {
			CHECK(!found);
			rs_error_clear();
			continue;
		}
		if (!found)
			continue;
		CHECK(!strcmp(e.key, branches[b]));
		CHECK(e.count <= RS_BRANCHMAP_MAX_SHARDS);
		for (size_t i = 1; i < e.count; i++) {
			int c = strcmp(e.shards[i - 1].month, e.shards[i].month);

			CHECK(c > 0 || (c == 0 && e.shards[i - 1].seq > e.shards[i].seq));
		}
		rs_buf_clear(&line);
		CHECK(rs_map_entry_to_line(&line, &e, RS_MAP_BRANCHES) == 0);
		CHECK(rs_map_find(&back, &found2, line.ptr, line.len, "back", RS_MAP_BRANCHES,
				  branches[b]) == 0);
		CHECK(found2 && back.count == e.count && back.more == e.more);
		for (size_t i = 0; i < e.count; i++)
			CHECK(!strcmp(back.shards[i].month, e.shards[i].month) &&
			      back.shards[i].seq == e.shards[i].seq &&
			      back.shards[i].runs == e.shards[i].runs);
		rs_map_entry_release(&back);
		rs_map_entry_release(&e);
	}
	rs_buf_release(&line);
	return 0;
}
