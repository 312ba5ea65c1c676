/*
 * A URL's query string as sorted name/value pairs: what both request
 * signers canonicalise (SigV4: encoded pairs sorted; Azure Shared Key:
 * decoded pairs with lower-case names sorted). Written once here; each
 * signer then joins the pairs its own way.
 */
#ifndef RS_QUERY_H
#define RS_QUERY_H

#include "results/error.h"

#include <stddef.h>

struct rs_query_pair {
	char *name;
	char *value; /* "" for a name without '=' */
};

struct rs_query {
	struct rs_query_pair *pairs;
	size_t n;
};

#define RS_QUERY_INIT { NULL, 0 }

enum {
	RS_QUERY_PLUS_IS_SPACE = 1, /* decode '+' as ' ' (form encoding) */
	RS_QUERY_LOWER_NAMES = 2,   /* lower-case every name */
	RS_QUERY_ENCODE = 4,        /* re-encode both (util/hex.h, '/' too) before sorting */
};

/*
 * Split `query` (without '?'; it ends at NUL or '#') at '&' into pairs,
 * percent-decoded, transformed as `flags` say, and sorted by name, then
 * value (byte order). Empty pairs ("a=1&&b=2") carry nothing and are
 * left out. RS_EUSAGE when there are more than `max` pairs. `out` is the
 * caller's (RS_QUERY_INIT); release it with rs_query_release, also after
 * a failure.
 */
RS_MUST_CHECK
int rs_query_parse(struct rs_query *out, const char *query, unsigned int flags, size_t max);
void rs_query_release(struct rs_query *q);

#endif
