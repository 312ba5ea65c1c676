/* git/note.h: one line at a time to the program's callback. */
#include "git/note.h"

#include <stdarg.h>

#include "results/buf.h"

void rs_note(const struct rs_notes *n, const char *fmt, ...)
{
	struct rs_buf line = RS_BUF_INIT;
	va_list ap;
	int err;

	if (!n->fn)
		return;
	va_start(ap, fmt);
	err = rs_buf_vprintf(&line, fmt, ap);
	va_end(ap);
	if (!err)
		n->fn(line.ptr, n->payload);
	rs_buf_release(&line);
}
