/*
 * JSON text: jansson's encoder with every failure reported.
 *
 * jansson 2.14 ignores the result of writing an object's key
 * (akheron/jansson#655, do_dump in dump.c): after one failed allocation
 * json_dumps can return a document that lacks a key, or is not JSON at
 * all ('"trigger":"push",":"2026-11-30T09:30:12Z"'), and report success;
 * json_dumpb, json_dumpf and json_dump_file write the same. Every JSON
 * text the library and the programs write (run.json, the index lines,
 * the reports, lfs-agent's replies) goes through rs_json_dump instead,
 * so that it is either whole or an error.
 */
#ifndef RESULTS_JSON_H
#define RESULTS_JSON_H

#include <stddef.h>

#include "results/buf.h"
#include "results/error.h"

struct json_t; /* jansson's json_t (<jansson.h>) */

/*
 * Append `v` encoded with jansson's `flags` (JSON_COMPACT, JSON_INDENT(n),
 * JSON_SORT_KEYS, ... as json_dumps takes them, for the same bytes) to
 * `out`; no newline is added. `v` NULL, what a jansson constructor gives
 * when it runs out of memory, is reported as that. `v` must be an object
 * or an array unless `flags` has JSON_ENCODE_ANY.
 *
 * Returns 0; the buffer's error (out of memory, RS_ETOOBIG past its cap);
 * or RS_EGENERIC "out of memory" when jansson's own allocations fail. On
 * error `out` holds what it held before.
 */
RS_MUST_CHECK
int rs_json_dump(struct rs_buf *out, const struct json_t *v, size_t flags);

#endif
