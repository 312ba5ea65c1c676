/*
 * results: how reports are written (enum rs_format) and a session
 * exported for flame-graph tools (results export). Part of the reports'
 * interface (results/report.h includes it); this part lives in the
 * analysis layer, below the reports (docs/architecture.md), so that
 * analysis can name it without including the layer above.
 */
#ifndef RESULTS_FORMAT_H
#define RESULTS_FORMAT_H

#include <stdio.h>

#include "results/error.h"

/* How a report is written. */
enum rs_format {
	RS_FORMAT_TEXT = 0,
	RS_FORMAT_MARKDOWN,
	RS_FORMAT_JSON,
};

/* "text", "markdown" (or "md"), "json". RS_EUSAGE otherwise. */
RS_MUST_CHECK
int rs_format_parse(enum rs_format *out, const char *name);

enum rs_export_format {
	RS_EXPORT_COLLAPSED = 0,   /* "frame;frame;frame weight" lines */
	RS_EXPORT_SPEEDSCOPE,      /* speedscope's JSON file format */
};

/* "collapsed", "speedscope"; RS_EUSAGE otherwise. */
RS_MUST_CHECK
int rs_export_format_parse(enum rs_export_format *out, const char *name);

/*
 * Read the session at `session_path` and write it to `out` in `fmt`;
 * `name` labels the profile. RS_ENOTFOUND (no file), RS_ECORRUPT,
 * RS_EUSAGE or RS_EGENERIC (I/O).
 */
RS_MUST_CHECK
int rs_export_session(FILE *out, const char *session_path, enum rs_export_format fmt,
		      const char *name);

#endif
