/*
 * A local file that one thread appends to while another reads what is
 * already in it: the store writes a pack and a backend uploads the same
 * pack at the same time (rs_remote.put_stream), so the upload overlaps
 * the compression instead of following it.
 *
 * This is only the handshake. The writer appends to the file at `path`
 * itself, then publishes how many bytes from the start are written and
 * will not change; at the end it seals the file (the size is final) or
 * cancels. Readers open the file themselves, read only published bytes,
 * and wait for more. Thread-safe: one writer, any number of readers.
 */
#ifndef RS_GROWING_H
#define RS_GROWING_H

#include "results/error.h"

#include <stdint.h>

struct rs_growing;

/* `path` is copied. The result is the caller's (rs_growing_free). */
RS_MUST_CHECK
int rs_growing_new(struct rs_growing **out, const char *path);
void rs_growing_free(struct rs_growing *g);

const char *rs_growing_path(const struct rs_growing *g);

/* Writer: bytes [0, size) are in the file and final. Never shrinks. */
void rs_growing_publish(struct rs_growing *g, uint64_t size);
/* Writer: the file is complete at `size` bytes. */
void rs_growing_seal(struct rs_growing *g, uint64_t size);
/* Writer: give up; every wait, now or later, fails. */
void rs_growing_cancel(struct rs_growing *g);

/*
 * Reader: wait until at least `want` bytes are published or the file is
 * sealed. Sets *avail to the bytes published and *sealed to whether that
 * is the whole file (both also when it fails). RS_EGENERIC ("cancelled")
 * once the writer cancels.
 */
RS_MUST_CHECK
int rs_growing_wait(struct rs_growing *g, uint64_t want, uint64_t *avail,
		    int *sealed);

/*
 * The most any reader has waited for so far: a reader asks for more only
 * once it has sent or claimed what it had, so this tells how far the
 * upload has got, give or take the block in flight (for tests that check
 * the overlap). A wait for
 * UINT64_MAX (the whole file, whatever its size) does not count.
 */
uint64_t rs_growing_wanted(struct rs_growing *g);

#endif
