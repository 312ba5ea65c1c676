/*
 * Fuzz the run index parser (index/YYYY-MM.jsonl shards come from clones:
 * untrusted). Whatever the bytes: no crash, no leak; a parsed index is
 * sorted, every entry serialises to one line that parses back to the same
 * id, and resolving and the README work on it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/runindex.h"
#include "results/buf.h"
#include "results/error.h"

/* Not assert(): release builds define NDEBUG and the calls must run. */
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s\n", #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_runindex idx;
	struct rs_buf line = RS_BUF_INIT, md = RS_BUF_INIT;
	const struct rs_run_entry *e;
	char query[16];
	size_t qn = size < sizeof(query) - 1 ? size : sizeof(query) - 1;

	rs_runindex_init(&idx);
	/* Here and below a refusal is a right answer to hostile input: only
	 * what is accepted is checked. */
	if (rs_runindex_parse_shard(&idx, (const char *)data, size, "fuzz"))
		rs_error_clear();
	for (size_t i = 0; i < idx.count; i++) {
		struct rs_run_entry back;

		if (i)
			CHECK(strcmp(idx.runs[i - 1].recorded_at, idx.runs[i].recorded_at) <= 0);
		rs_buf_clear(&line);
		CHECK(rs_run_entry_to_line(&line, &idx.runs[i]) == 0);
		CHECK(memchr(line.ptr, '\n', line.len - 1) == NULL);
		CHECK(rs_run_entry_parse(&back, line.ptr, line.len - 1) == 0);
		CHECK(strcmp(back.id, idx.runs[i].id) == 0);
		rs_run_entry_release(&back);
	}
	/* the first bytes as a query: a run id or a commit prefix */
	memcpy(query, data, qn);
	query[qn] = '\0';
	if (rs_runindex_resolve(&e, &idx, query))
		rs_error_clear();
	if (idx.count && rs_runindex_resolve(&e, &idx, idx.runs[0].commit))
		rs_error_clear();
	if (rs_runindex_readme(&md, &idx, 20))
		rs_error_clear();
	rs_buf_release(&line);
	rs_buf_release(&md);
	rs_runindex_release(&idx);
	return 0;
}
