/*
 * Fuzz the bounded XML reader (remote/xml.h) that every HTTP backend's
 * listing and error body goes through. Properties besides memory safety:
 * depths stay within the cap and balanced, every text handed out is
 * within the text cap, the document is read the same whether it comes
 * whole or in two pieces, and the first-text lookup hands out C strings.
 * (tests/unit/test_xml.c checks that a DOCTYPE is refused; the corpus has
 * a billion-laughs document and an external entity.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/xml.h"
#include "results/error.h"

struct state {
	unsigned int depth;
	unsigned long events;
};

static int on_open(void *payload, unsigned int depth, const char *name)
{
	struct state *s = payload;

	if (depth != s->depth + 1 || depth > 16 || !*name || strchr(name, ':'))
		abort();
	s->depth = depth;
	s->events = s->events * 31 + depth;
	return 0;
}

static int on_close(void *payload, unsigned int depth, const char *name, const char *text,
		    size_t len)
{
	struct state *s = payload;

	(void)name;
	if (depth != s->depth || len > 256 || strlen(text) != len)
		abort();
	s->depth--;
	s->events = s->events * 31 + len;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state whole = { 0, 0 }, split = { 0, 0 };
	struct rs_xml_handler h = { "the fuzzed answer", on_open, on_close, &whole,
				    1u << 20, 16, 256 };
	struct rs_buf code = RS_BUF_INIT;
	struct rs_xml *x;
	int a, b;

	a = rs_xml_parse((const char *)data, size, &h);
	if (a == 0 && whole.depth != 0)
		abort();
	h.payload = &split;
	if (rs_xml_begin(&x, &h))
		return 0;
	/* a piece's failure stays in x for rs_xml_finish, whose result is compared */
	if (rs_xml_feed(x, (const char *)data, size / 2))
		rs_error_clear();
	if (rs_xml_feed(x, (const char *)data + size / 2, size - size / 2))
		rs_error_clear();
	b = rs_xml_finish(x, 1);
	if ((a == 0) != (b == 0) || (a == 0 && whole.events != split.events))
		abort();
	rs_buf_init(&code, 256);
	if (rs_xml_first_text((const char *)data, size, "Code", &code) == 1 &&
	    strlen(rs_buf_cstr(&code)) != code.len)
		abort();
	rs_buf_release(&code);
	return 0;
}
