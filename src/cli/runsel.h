/*
 * Run selection shared by the analysis commands (compare, check, trend,
 * find, site, export): open the results repository and its whole run
 * index, resolve a run or commit, read a run's committed run.json.
 *
 * Every function that returns an int returns an RS_EXIT_* status and has
 * already printed "results: ..." when it is not RS_EXIT_OK, so commands
 * can simply pass it on.
 */
#ifndef RS_CLI_RUNSEL_H
#define RS_CLI_RUNSEL_H

#include <jansson.h>

#include "repo/repo.h"
#include "repo/runindex.h"
#include "results/buf.h"

struct rs_runsel {
	struct rs_repo *repo;     /* owned */
	struct rs_runindex idx;   /* every run, oldest first */
};

int rs_runsel_open(struct rs_runsel *s);
void rs_runsel_close(struct rs_runsel *s);

/* A run id or a profiled commit (prefix); *out is borrowed from s. */
int rs_runsel_resolve(const struct rs_run_entry **out, struct rs_runsel *s,
		      const char *query);

/* Position of `e` in s->idx.runs. */
size_t rs_runsel_pos(const struct rs_runsel *s, const struct rs_run_entry *e);

/*
 * The committed run.json of `e` (caller's reference), with "path" set to
 * the run folder so that renderers can link to it.
 */
int rs_runsel_load(json_t **out, struct rs_runsel *s, const struct rs_run_entry *e);

/*
 * The local LFS object holding the run's main session, appended to
 * `path`; when the local store lacks it, `results fetch` (this program,
 * as a child process: one download path) brings it first.
 */
int rs_runsel_session_path(struct rs_buf *path, struct rs_runsel *s,
			   const struct rs_run_entry *e);

/*
 * The newest `limit` runs on `branch` (NULL: any branch), newest first:
 * `*out` is a new array of `limit` slots (the caller frees it), its
 * entries borrowed from s; `*n` says how many are set.
 */
int rs_runsel_newest(const struct rs_run_entry ***out, size_t *n, const struct rs_runsel *s,
		     const char *branch, size_t limit);

/* An index entry as a JSON object shaped like run.json (caller's). */
json_t *rs_runsel_entry_json(const struct rs_run_entry *e);

/*
 * The committed results config (.results.json in HEAD) as a JSON object
 * (caller's); an empty object when there is none or it does not parse,
 * so that analysis settings in it (e.g. "own_code") stay optional.
 */
json_t *rs_runsel_config(struct rs_runsel *s);

/* Write `b` to `path` ("-" or NULL: stdout). */
int rs_runsel_write(const char *path, const struct rs_buf *b);

/* "5", "5%", "0.5" -> 0.05, 0.05, 0.005 (a percentage). */
int rs_runsel_parse_pct(const char *s, double *out);

/* A positive decimal count. */
int rs_runsel_parse_count(const char *s, size_t *out);

#endif
