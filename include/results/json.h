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

/*
 * A document built from many keys, with a sticky error (docs/hacking.md,
 * "Writers with many pieces"). json_object_set_new and
 * json_array_append_new return -1 when the value is NULL (its constructor
 * ran out of memory) or the insertion could not allocate; a builder that
 * ignores it writes a document without the key and reports success.
 *
 * rs_json_set puts `v` under `key` of the object `o`, rs_json_append
 * appends it to the array `a`; both take `v` (freed when not inserted) and
 * remember a failure in `b`, after which they only free what they are
 * given. A NULL `v` is taken for a constructor out of memory: strings
 * given to json_string must be UTF-8 and reals finite (json_real refuses
 * NaN), which the caller sees to. rs_json_build_dump then writes `doc`
 * as rs_json_dump does when nothing failed, and returns RS_EGENERIC "out
 * of memory" when something did; it takes `doc` (json_decref) either way.
 */
struct rs_json_build {
	int failed;
};
#define RS_JSON_BUILD_INIT { 0 }

void rs_json_set(struct rs_json_build *b, struct json_t *o, const char *key, struct json_t *v);
void rs_json_append(struct rs_json_build *b, struct json_t *a, struct json_t *v);
RS_MUST_CHECK
int rs_json_build_dump(struct rs_buf *out, struct rs_json_build *b, struct json_t *doc,
		       size_t flags);

#endif
