/*
 * Fuzz the LFS pointer parser. Property checked besides memory safety:
 * one valid encoding per pointer, so whatever parses must format back to
 * exactly the input bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "git/pointer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_pointer p = RS_POINTER_INIT;
	struct rs_buf out = RS_BUF_INIT;

	if (rs_pointer_parse(&p, data, size) != 0)
		return 0;
	if (rs_pointer_format(&out, &p) != 0 || out.len != size ||
	    memcmp(out.ptr, data, size) != 0)
		abort();
	rs_pointer_release(&p);
	rs_buf_release(&out);
	return 0;
}
