/*
 * Fuzz the run record decoder (run.json comes from clones: untrusted).
 * Whatever the bytes: no crash, no leak; a decoded record encodes, and
 * its encoding decodes to a record that encodes to the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/buf.h"
#include "results/error.h"
#include "runrec/runrec.h"

/* Not assert(): release builds define NDEBUG and the calls must run. */
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "check failed: %s\n", #c); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_buf once = RS_BUF_INIT, twice = RS_BUF_INIT;
	rs_runrec *rec = NULL, *again = NULL;

	/* a refusal is a right answer to hostile input: only what is accepted is checked */
	if (rs_runrec_decode((const char *)data, size, &rec)) {
		rs_error_clear();
		CHECK(rec == NULL);
		return 0;
	}
	CHECK(rec->format >= 1 && rec->format <= RS_RUNREC_FORMAT);
	CHECK(rec->id && rec->commit && rec->branch && rec->trigger && rec->recorded_at);
	for (size_t i = 0; rec->summary && rec->summary->has_calls && i < rec->summary->calls.nrows; i++)
		CHECK(rec->summary->calls.rows[i].caller <
		      rec->summary->nfunctions + rec->summary->more.nrows);
	CHECK(rs_runrec_encode(&once, rec) == 0);
	CHECK(rs_runrec_decode(once.ptr, once.len, &again) == 0);
	CHECK(rs_runrec_encode(&twice, again) == 0);
	CHECK(once.len == twice.len && memcmp(once.ptr, twice.ptr, once.len) == 0);
	rs_runrec_free(rec);
	rs_runrec_free(again);
	rs_buf_release(&once);
	rs_buf_release(&twice);
	return 0;
}
