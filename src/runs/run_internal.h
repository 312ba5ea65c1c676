/*
 * Internal to the run module (run.c, run_intake.c, run_copy.c,
 * run_json.c, run_markdown.c; machine.c needs none of it): what those
 * files share, and nothing else includes.
 */
#ifndef RS_RUN_INTERNAL_H
#define RS_RUN_INTERNAL_H

#include "results/error.h"

#include "git/repo.h"
#include "runs/run.h"
#include "session/summary.h"

/* Frees one file's memory and removes its temporary LFS copy, if any. */
void rs_run_file_release(struct rs_run_file *f);

/* qsort comparator for an array of C strings. */
int rs_run_cmp_str(const void *a, const void *b);

/*
 * Read `path` (open as `in`) once: hash it, copy it to a new temporary
 * file under .git/lfs/tmp and, when `pass` is given, feed it to that
 * summary (and so to its session parser). On success f->oid, f->size,
 * f->tmp and f->blob (the pointer) are set; on failure the temporary file
 * is gone. (run_copy.c)
 */
RS_MUST_CHECK
int rs_run_copy_to_lfs(struct rs_repo *repo, struct rs_run_file *f, int in,
		       const char *path, struct rs_summary *pass);

#endif
