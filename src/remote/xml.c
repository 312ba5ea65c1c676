/*
 * The bounded XML reader on libexpat (see xml.h for the contract).
 *
 * Expat does the tokenising, entity decoding and well-formedness checks;
 * this file adds the caps, the refusal of DTDs, local names and the
 * per-element text. A handler's failure is kept in `err` and stops expat
 * (XML_StopParser), so the first failure is the one reported.
 */
#include "remote/xml.h"

#include "results/error.h"

#include <expat.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define RS_XML_CHUNK (1u << 20) /* XML_Parse takes an int length */

struct rs_xml {
	XML_Parser parser;
	const struct rs_xml_handler *h;
	struct rs_buf text;
	unsigned int depth;
	size_t fed;
	int started; /* a non-blank byte was fed */
	int err;
};

static const char *what(const struct rs_xml *x)
{
	return x->h->what ? x->h->what : "the XML answer";
}

static void fail(struct rs_xml *x, int err)
{
	if (!x->err)
		x->err = err;
	XML_StopParser(x->parser, XML_FALSE);
}

static const char *local_name(const XML_Char *name)
{
	const char *colon = strrchr(name, ':');

	return colon ? colon + 1 : name;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
	struct rs_xml *x = ud;
	unsigned int max = x->h->depth_max ? x->h->depth_max : RS_XML_DEPTH_MAX;
	int err;

	(void)atts;
	if (x->err)
		return;
	if (x->depth >= max) {
		fail(x, rs_error_set(RS_ECORRUPT, "%s nests elements deeper than %u",
				     what(x), max));
		return;
	}
	x->depth++;
	rs_buf_clear(&x->text);
	if (!x->h->open)
		return;
	err = x->h->open(x->h->payload, x->depth, local_name(name));
	if (err)
		fail(x, err);
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
	struct rs_xml *x = ud;
	int err = 0;

	if (x->err)
		return;
	if (x->h->close)
		err = x->h->close(x->h->payload, x->depth, local_name(name),
				  rs_buf_cstr(&x->text), x->text.len);
	x->depth--;
	rs_buf_clear(&x->text);
	if (err)
		fail(x, err);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
	struct rs_xml *x = ud;
	size_t max = x->h->text_max ? x->h->text_max : RS_XML_TEXT_MAX;

	if (x->err || len <= 0)
		return;
	if ((size_t)len > max - x->text.len) {
		fail(x, rs_error_set(RS_ECORRUPT, "%s has a value longer than %zu bytes",
				     what(x), max));
		return;
	}
	if (rs_buf_put(&x->text, s, (size_t)len))
		fail(x, rs_error_set(RS_EGENERIC, "out of memory reading %s", what(x)));
}

/* A DTD could define entities that expand without bound: refuse it. */
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
			       const XML_Char *pubid, int has_internal_subset)
{
	struct rs_xml *x = ud;

	(void)name;
	(void)sysid;
	(void)pubid;
	(void)has_internal_subset;
	fail(x, rs_error_set(RS_ECORRUPT, "%s has a DOCTYPE, which is refused", what(x)));
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param,
				   const XML_Char *value, int value_len, const XML_Char *base,
				   const XML_Char *sysid, const XML_Char *pubid,
				   const XML_Char *notation)
{
	struct rs_xml *x = ud;

	(void)name; (void)is_param; (void)value; (void)value_len;
	(void)base; (void)sysid; (void)pubid; (void)notation;
	fail(x, rs_error_set(RS_ECORRUPT, "%s declares an entity, which is refused", what(x)));
}

int rs_xml_begin(struct rs_xml **out, const struct rs_xml_handler *h)
{
	struct rs_xml *x = calloc(1, sizeof(*x));

	if (!x)
		return rs_error_set(RS_EGENERIC, "out of memory");
	x->parser = XML_ParserCreate(NULL);
	if (!x->parser) {
		free(x);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	x->h = h;
	rs_buf_init(&x->text, (h->text_max ? h->text_max : RS_XML_TEXT_MAX) + 1);
	XML_SetUserData(x->parser, x);
	XML_SetElementHandler(x->parser, on_start, on_end);
	XML_SetCharacterDataHandler(x->parser, on_text);
	XML_SetStartDoctypeDeclHandler(x->parser, on_doctype);
	XML_SetEntityDeclHandler(x->parser, on_entity_decl);
	XML_SetParamEntityParsing(x->parser, XML_PARAM_ENTITY_PARSING_NEVER);
	*out = x;
	return 0;
}

/* Hand p[0..n) to expat; `final` marks the end of the document. */
static int parse(struct rs_xml *x, const char *p, size_t n, int final)
{
	do {
		size_t k = n < RS_XML_CHUNK ? n : RS_XML_CHUNK;
		int last = final && k == n;

		if (XML_Parse(x->parser, p, (int)k, last) != XML_STATUS_OK) {
			if (x->err)
				return x->err;
			x->err = rs_error_set(RS_ECORRUPT, "%s is not well-formed XML "
					      "(line %lu: %s)", what(x),
					      (unsigned long)XML_GetCurrentLineNumber(x->parser),
					      XML_ErrorString(XML_GetErrorCode(x->parser)));
			return x->err;
		}
		p += k;
		n -= k;
	} while (n);
	return 0;
}

int rs_xml_feed(struct rs_xml *x, const char *p, size_t n)
{
	size_t max = x->h->doc_max ? x->h->doc_max : RS_XML_DOC_MAX;

	if (x->err)
		return x->err;
	if (n > max - x->fed) {
		x->err = rs_error_set(RS_ECORRUPT, "%s is larger than %zu bytes", what(x), max);
		return x->err;
	}
	x->fed += n;
	/* Servers that pad an answer (S3 while it assembles) put blanks first. */
	while (!x->started && n && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
		p++;
		n--;
	}
	if (!n)
		return 0;
	x->started = 1;
	return parse(x, p, n, 0);
}

int rs_xml_finish(struct rs_xml *x, int ok)
{
	int err;

	if (!x)
		return 0;
	err = x->err;
	if (ok && !err)
		err = parse(x, "", 0, 1);
	XML_ParserFree(x->parser);
	rs_buf_release(&x->text);
	free(x);
	return err;
}

int rs_xml_parse(const char *p, size_t n, const struct rs_xml_handler *h)
{
	struct rs_xml *x;
	int err;

	err = rs_xml_begin(&x, h);
	if (err)
		return err;
	err = rs_xml_feed(x, p, n);
	if (err) {
		int finished = rs_xml_finish(x, 0); /* frees the reader; says x->err */

		return finished ? finished : err;
	}
	return rs_xml_finish(x, 1);
}

struct first_text {
	const char *name;
	struct rs_buf *out;
	int put_err;
};

#define FOUND 1 /* stops the parse: no error code is positive */

static int first_close(void *payload, unsigned int depth, const char *name,
		       const char *text, size_t len)
{
	struct first_text *f = payload;

	(void)depth;
	if (strcmp(name, f->name))
		return 0;
	f->put_err = rs_buf_put(f->out, text, len);
	return f->put_err ? f->put_err : FOUND;
}

int rs_xml_first_text(const char *p, size_t n, const char *name, struct rs_buf *out)
{
	struct first_text f = { name, out, 0 };
	struct rs_xml_handler h = { "the answer", NULL, first_close, &f, 0, 0, 0 };
	int rc;

	rs_buf_clear(out);
	h.text_max = out->max ? out->max : 0;
	rc = rs_xml_parse(p, n, &h);
	if (rc == FOUND)
		return 1;
	if (f.put_err)
		return f.put_err;
	rs_buf_clear(out);
	return 0;
}
