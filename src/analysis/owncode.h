/*
 * Which code is the project's own: the frames a regression report leads
 * with. pyinstrument records each frame's file; a project names its code
 * in the committed results config (.results.json, key "own_code": a list
 * of path fragments such as "src/popmodel/" or module names such as
 * "popmodel"). Without such a list, own code is every real file that is
 * not under site-packages or dist-packages nor in the standard library
 * (".../lib/pythonX.Y/..."), and not a pseudo-file such as "<built-in>",
 * "<thread>" or "<frozen importlib._bootstrap>".
 */
#ifndef RS_ANALYSIS_OWNCODE_H
#define RS_ANALYSIS_OWNCODE_H

#include "results/error.h"

#include <jansson.h>
#include <stddef.h>

struct rs_owncode {
	const char *const *specs; /* borrowed; NULL or empty: the default rule */
	size_t n_specs;
};

/*
 * Whether `file` is the project's own code under `oc` (NULL: the
 * default rule). A spec containing '/' matches when it occurs in the
 * path; any other spec is a module name and matches a path component
 * "<name>/" or a file "<name>.py".
 */
int rs_owncode_match(const struct rs_owncode *oc, const char *file);

/*
 * Read the "own_code" list of a parsed .results.json (borrowed strings
 * kept in `specs`, at most `max`). Returns how many were taken; entries
 * that are not non-empty strings are skipped.
 */
size_t rs_owncode_from_config(const json_t *config, const char **specs, size_t max);

#endif
