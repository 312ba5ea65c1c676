/*
 * rs_xml: the one XML reader of the HTTP backends (S3, Azure, WebDAV
 * listings and error bodies), on libexpat.
 *
 * One entity rule for all of them: XML's five predefined entities and
 * numeric character references (decoded to UTF-8 by expat); a document
 * with a DOCTYPE is refused, and so are external and parameter entities,
 * so no answer can expand entities (billion laughs) or make us read a
 * file or URL.
 *
 * Bounded: the document size, the element depth and the text collected
 * for one element each have a cap (struct rs_xml_handler; 0 takes the
 * default). Going past one fails with RS_ECORRUPT, as does XML that is
 * not well-formed, including a document cut off before its root closes.
 *
 * The handler sees elements by local name (a namespace prefix such as
 * WebDAV's "D:" is dropped) and depth (the root is 1). `close` gets the
 * character data of the element since its last child opened: for a leaf
 * element, its whole text. A callback's non-zero return stops the parse
 * and is returned unchanged.
 *
 * Streaming: rs_xml_begin, any number of rs_xml_feed, rs_xml_finish (the
 * document may arrive in pieces); rs_xml_parse does all three at once.
 */
#ifndef RS_XML_H
#define RS_XML_H

#include "results/error.h"
#include <stddef.h>

#include "results/buf.h"

#define RS_XML_DOC_MAX (32u << 20)
#define RS_XML_DEPTH_MAX 64u
#define RS_XML_TEXT_MAX (8u << 10)

struct rs_xml_handler {
	const char *what; /* names the document in messages: "the PROPFIND answer" */
	int (*open)(void *payload, unsigned int depth, const char *name) RS_MUST_CHECK;
	int (*close)(void *payload, unsigned int depth, const char *name,
		     const char *text, size_t len) RS_MUST_CHECK;
	void *payload;
	size_t doc_max;          /* 0: RS_XML_DOC_MAX */
	unsigned int depth_max;  /* 0: RS_XML_DEPTH_MAX */
	size_t text_max;         /* 0: RS_XML_TEXT_MAX */
};

struct rs_xml;

/* Start a document. `h` is borrowed until rs_xml_finish. */
RS_MUST_CHECK
int rs_xml_begin(struct rs_xml **out, const struct rs_xml_handler *h);
/* Parse the next `n` bytes. On failure the reader is spent: finish it. */
RS_MUST_CHECK
int rs_xml_feed(struct rs_xml *x, const char *p, size_t n);
/* The end of the document (`ok`: no earlier failure); frees the reader. */
RS_MUST_CHECK
int rs_xml_finish(struct rs_xml *x, int ok);

/* The whole document p[0..n) at once. */
RS_MUST_CHECK
int rs_xml_parse(const char *p, size_t n, const struct rs_xml_handler *h);

/*
 * The text of the first element named `name` (local name, exact case),
 * into `out` (cleared first). 1 when found, 0 when not (also when the
 * document is cut off or broken after it: error bodies are read capped),
 * or a negative code when `out` cannot hold it.
 */
RS_MUST_CHECK
int rs_xml_first_text(const char *p, size_t n, const char *name, struct rs_buf *out);

#endif
