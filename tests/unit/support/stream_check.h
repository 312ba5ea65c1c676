/*
 * Drives rs_remote.put_stream the way the store does, for the backends'
 * tests: the upload runs on its own thread while this thread writes the
 * file, so a test can check that bytes go out before the file is
 * complete, that the result is byte-identical, and that a cancel leaves
 * nothing behind.
 */
#ifndef RS_TEST_STREAM_CHECK_H
#define RS_TEST_STREAM_CHECK_H

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
int stream_check_put(struct rs_remote *r, const char *key, const char *path,
		     const unsigned char *data, size_t n, struct stream_check *c);

#endif
