/*
 * An output file a user named (`-o FILE`, `--html FILE`, `open -o`):
 * written to a temporary file beside FILE and renamed over it, so that a
 * symbolic link at FILE is replaced, never written through (a link
 * planted at a predictable name cannot make results overwrite what it
 * points to), and a reader never sees half a page.
 */
#ifndef RESULTS_OUTPUT_H
#define RESULTS_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "results/buf.h"
#include "results/error.h"

struct rs_output {
	FILE *f;          /* write here between open and commit (borrowed) */
	struct rs_buf tmp; /* the temporary file's name */
	char *path;       /* FILE */
};

#define RS_OUTPUT_INIT { NULL, RS_BUF_INIT, NULL }

/* Flags of rs_output_commit. */
#define RS_OUTPUT_REPLACE 1u /* replace FILE (a file or a link) if it exists */

/*
 * Create the temporary file beside `path` and open o->f on it. On error
 * nothing is left behind; rs_output_release is still safe.
 */
RS_MUST_CHECK
int rs_output_open(struct rs_output *o, const char *path);

/*
 * Flush and sync what was written, close o->f and rename the temporary
 * file to FILE. Without RS_OUTPUT_REPLACE an existing FILE (even a
 * dangling link) is left alone: RS_EEXISTS. On any error the temporary
 * file is removed.
 */
RS_MUST_CHECK
int rs_output_commit(struct rs_output *o, unsigned flags);

/* Close and remove an uncommitted temporary file; free `o`'s names. */
void rs_output_release(struct rs_output *o);

/* The `n` bytes of `p` as FILE, by the steps above. */
RS_MUST_CHECK
int rs_output_write_file(const char *path, const void *p, size_t n, unsigned flags);

#endif
