/*
 * The run record and jansson, for the layer that records runs (repo):
 * it builds a run's pieces as JSON (the session summary, the phases, the
 * machine) and writes them through the typed record, so that what `add`
 * commits is exactly what rs_runrec_decode reads. Analysis needs it
 * only for the summaries it makes itself from whole sessions (compare
 * --deep), which it reads through the same typed summary.
 */
#ifndef RS_RUNREC_RUNREC_JSON_H
#define RS_RUNREC_RUNREC_JSON_H

#include <jansson.h>

#include "runrec/runrec.h"

/*
 * Decode the run.json object `o` (borrowed) as rs_runrec_decode does
 * after parsing. The record is the caller's (rs_runrec_free).
 */
RS_MUST_CHECK int rs_runrec_from_json(const json_t *o, rs_runrec **out);

/*
 * The numbers of the object `o` (borrowed), as "metrics" is decoded, into
 * `out` (empty before; the record it belongs to frees it, also after a
 * failure). `where` names the object in messages.
 */
RS_MUST_CHECK int rs_runrec_metrics_from_json(struct rs_runrec_map *out, const json_t *o,
					      const char *where);

/*
 * Decode a session summary object `o` (borrowed; session/summary.h's
 * schema, run.json's "summary") as rs_runrec_decode decodes a run's:
 * the same checks, the same messages. The summary is the caller's
 * (rs_runrec_summary_free).
 */
RS_MUST_CHECK int rs_runrec_summary_from_json(const json_t *o, struct rs_runrec_summary **out);

/*
 * The run.json object of `rec`: the caller's reference. RS_EUSAGE naming
 * the key for a record that lacks a required string (rs_runrec_encode);
 * RS_EGENERIC out of memory.
 */
RS_MUST_CHECK int rs_runrec_to_json(const rs_runrec *rec, json_t **out);

#endif
