/*
 * Fuzz target for the session parser and the summary built on it.
 *
 * Besides "no crash, no leak, no undefined behaviour", it checks the
 * property the push parser promises: feeding the input whole, in two
 * pieces split at an input-chosen point, or a byte at a time gives the
 * same result (same error code, or equal summaries).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/summary.h"
#include "results/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run(const uint8_t *data, size_t size, size_t split, int bytewise, json_t **out)
{
	struct rs_summary *s = NULL;
	size_t i;
	int err;

	*out = NULL;
	err = rs_summary_new(&s, NULL);
	if (err)
		return err;
	if (bytewise) {
		for (i = 0; i < size && !err; i++)
			err = rs_summary_feed(s, data + i, 1);
	} else {
		err = rs_summary_feed(s, data, split);
		if (!err)
			err = rs_summary_feed(s, data + split, size - split);
	}
	if (!err)
		err = rs_summary_finish(s);
	if (!err)
		err = rs_summary_json(s, out);
	rs_summary_free(s);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *whole, *split, *bytes;
	int e1, e2, e3;
	size_t at = size ? (size_t)data[size - 1] * 131 % (size + 1) : 0;

	if (size > (1u << 20))
		return 0;
	e1 = run(data, size, size, 0, &whole);
	e2 = run(data, size, at, 0, &split);
	e3 = size <= 65536 ? run(data, size, 0, 1, &bytes) : (bytes = NULL, e1);
	if (e1 != e2 || e1 != e3)
		abort();
	if (!e1) {
		struct rs_buf md = RS_BUF_INIT;

		if (!json_equal(whole, split) || (bytes && !json_equal(whole, bytes)))
			abort();
		if (rs_summary_markdown(whole, &md))
			abort();
		rs_buf_release(&md);
	}
	json_decref(whole);
	json_decref(split);
	json_decref(bytes);
	return 0;
}
