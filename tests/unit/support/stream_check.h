/*
 * Drives rs_remote.put_stream the way the store does, for the backends'
 * tests: the upload runs on its own thread while this thread writes the
 * file, so a test can check that bytes go out before the file is
 * complete, that the result is byte-identical, and that a cancel leaves
 * nothing behind.
 */
#ifndef RS_TEST_STREAM_CHECK_H
#define RS_TEST_STREAM_CHECK_H

#include "results/error.h"
#include <stddef.h>
#include <stdint.h>

#include "remote/remote.h"

struct stream_check {
	size_t pause_at;       /* stop writing after this many bytes ... */
	uint64_t want_beyond;  /* ... until the upload has asked for more than
				  this many (0: do not pause) */
	int cancel;            /* cancel after the pause instead of writing
				  the rest and sealing */
	int overlapped;        /* out: the pause ended because the upload
				  moved on, not by the 30 s timeout */
};

/*
 * Write the `n` bytes of `data` into a new file at `path` in 256 KiB
 * pieces, publishing each, while r->put_stream(r, key, ...) runs; then
 * seal (or, with c->cancel, cancel at the pause). Returns put_stream's
 * result.
 */
RS_MUST_CHECK
int stream_check_put(struct rs_remote *r, const char *key, const char *path,
		     const unsigned char *data, size_t n, struct stream_check *c);

/*
 * The whole store over `r`: write `n` random (incompressible) bytes to
 * `dir`/object, store them with rs_store_put_file (so new packs stream
 * through put_stream when the backend has it), fetch them back with
 * rs_store_get_file and compare. 0 when the copy is byte-identical; -1
 * otherwise, with what failed on stderr.
 */
RS_MUST_CHECK
int stream_check_store(struct rs_remote *r, const char *dir, size_t n, unsigned int seed);

#endif
