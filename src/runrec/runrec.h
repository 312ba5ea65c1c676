/*
 * rs_runrec: one run record (a run's run.json, docs/run-format.md) as a
 * typed, versioned struct, decoded once where it is read and encoded
 * where `results add` writes it.
 *
 *   rs_runrec *rec;
 *   if (rs_runrec_decode(text, len, &rec)) ... rs_error_message() ...
 *   rec->summary ? rec->summary->functions[0].self : 0 ...
 *   rs_runrec_encode(&out, rec);         -- the bytes of run.json
 *   rs_runrec_free(rec);
 *
 * A record made in memory instead starts from rs_runrec_new (see
 * "Building a record" below).
 *
 * The decoder is strict where the old readers were permissive: a key the
 * format requires and the record lacks (a renamed key, a truncated
 * record) fails, naming the key with its place ("summary.functions[3]
 * lacks 'self'"); a known key of the wrong type fails, naming it; a
 * record of a format newer than RS_RUNREC_FORMAT fails with RS_ENEWER,
 * naming both versions. Keys the format made optional over time (runs
 * recorded before phases, before the calls table...) are listed in one
 * table (runrec.c, `keys[]`) and appear here with a presence flag
 * (`has_*`) or as a NULL pointer, said member by member. Keys this build
 * does not know are ignored: a newer writer may add keys without a new
 * format number only when older readers may ignore them.
 *
 * Every string is NUL-terminated and owned by the record (a JSON string
 * holding a NUL byte is refused). Maps (meta, stats, args, metrics,
 * phase totals) are sorted by name, as run.json writes them.
 */
#ifndef RS_RUNREC_RUNREC_H
#define RS_RUNREC_RUNREC_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "results/error.h"

/* The format this build writes and the newest it reads. */
#define RS_RUNREC_FORMAT 1
/* The largest run.json decoded (the repository's read cap is the same). */
#define RS_RUNREC_MAX_BYTES (64u * 1024 * 1024)
/* Levels of summary.tree below its root (the summary keeps 40 by default). */
#define RS_RUNREC_MAX_TREE_DEPTH 256
/* The layout of summary.calls rows this build reads (see session/summary.h). */
#define RS_RUNREC_CALLS_VERSION 1

/* A scalar of a map: an integer, a real, a string (run.json keeps the
 * distinction between 3 and 3.0, so encoding gives back the same bytes). */
enum rs_runrec_kind {
	RS_RUNREC_INT = 1,
	RS_RUNREC_REAL,
	RS_RUNREC_STRING,
};

struct rs_runrec_value {
	enum rs_runrec_kind kind;
	int64_t i;        /* RS_RUNREC_INT */
	double d;         /* RS_RUNREC_INT and RS_RUNREC_REAL: the number */
	char *s;          /* RS_RUNREC_STRING */
};

struct rs_runrec_pair {
	char *name;
	struct rs_runrec_value value;
};

/* name -> value, sorted by name (strcmp), names unique. */
struct rs_runrec_map {
	struct rs_runrec_pair *items;
	size_t n;
};

/* A header figure of the session that pyinstrument may leave out (null). */
struct rs_runrec_opt {
	int present;
	double v;
	int64_t i;        /* the integer, for sample_count */
};

struct rs_runrec_machine {
	char *hostname, *os, *arch, *cpu_model;  /* NULL: null (not known) */
	int64_t cpus;                            /* 0: not known */
	char *runner;                            /* NULL: null (not a CI runner) */
};

/* One stored file of the run ("files"). */
struct rs_runrec_file {
	char *path;       /* relative to the run folder (not yet checked as a name) */
	char *role;       /* session, stats, args, logged-stats, html, other */
	int64_t size;
	int lfs;
	char *oid;        /* 64 hex digits when lfs, else NULL */
};

/* The main session ("session"). */
struct rs_runrec_session {
	char *path;
	char *oid;
	int64_t size;
};

/* summary.functions: the top functions by own and by total time. */
struct rs_runrec_function {
	char *function, *file;
	int64_t line;
	char *class_name;              /* "class": NULL when the session did not know it */
	double self, total;            /* seconds */
	int64_t self_samples, total_samples;
};

/* summary.files: the top files by own time. */
struct rs_runrec_file_time {
	char *file;
	double self, total;
};

/* summary.more_functions.rows: [function, file index, line, self us, total us]. */
struct rs_runrec_more_row {
	char *function;
	size_t file;                   /* index into more_functions.files, checked */
	int64_t line;
	int64_t self_us, total_us;
};

struct rs_runrec_more {
	double floor;                  /* share of the sampled time */
	char **files;
	size_t nfiles;
	struct rs_runrec_more_row *rows;
	size_t nrows;
};

/* summary.calls.rows: [caller, callee, total us, self us]; the functions by
 * their index into functions followed by more_functions.rows (checked). */
struct rs_runrec_call {
	size_t caller, callee;
	int64_t total_us, self_us;
};

struct rs_runrec_calls {
	int64_t version;               /* RS_RUNREC_CALLS_VERSION */
	double floor;
	struct rs_runrec_call *rows;
	size_t nrows;
};

/* A node of the pruned call tree. */
struct rs_runrec_node {
	char *function, *file;
	int64_t line;
	double total, self;
	struct rs_runrec_node *children;
	size_t nchildren;
};

/* "summary": the main session's summary (session/summary.h's schema). */
struct rs_runrec_summary {
	char *layout;                  /* "5" or "4"; NULL: absent (older runs) */
	struct rs_runrec_opt start_time, duration, cpu_time, min_interval, max_interval,
		sample_count;
	char *target;                  /* NULL: null or absent */
	int64_t samples;
	double sampled_time;
	int64_t distinct_frames, distinct_functions;
	char **sys_path;
	size_t nsys_path;
	struct rs_runrec_function *functions;
	size_t nfunctions;
	struct rs_runrec_file_time *files;
	size_t nfiles;
	struct rs_runrec_node tree;
	int tree_truncated;            /* optional key; 0 when absent */
	int has_more;
	struct rs_runrec_more more;    /* "more_functions" */
	char *ran;                     /* NULL: absent (unknown, not "nothing ran") */
	int has_calls;
	struct rs_runrec_calls calls;
};

/* "phases" (session/phases.h's schema). */
struct rs_runrec_phases {
	char *source;                  /* "config" or "default" */
	char *under;                   /* NULL: absent */
	char **names;
	size_t nnames;
	char **specs;                  /* has_specs: config only */
	size_t nspecs;
	int has_specs;
	struct rs_runrec_map totals;   /* name -> seconds */
	double other, sampled;
	int paths_truncated;           /* optional key; 0 when absent */
	double slice;                  /* timeline.slice */
	double *rows;                  /* timeline.rows, nrows x (nnames + 2) */
	size_t nrows;
};

struct rs_runrec {
	int64_t format;
	char *id, *commit, *branch, *trigger, *recorded_at;
	char *message;                 /* NULL: null */
	struct rs_runrec_machine machine;
	struct rs_runrec_map meta;     /* strings */
	struct rs_runrec_map stats;    /* numbers and strings */
	struct rs_runrec_map args;     /* numbers and strings */
	struct rs_runrec_map metrics;  /* numbers */
	struct rs_runrec_file *files;
	size_t nfiles;
	int has_session;               /* 0: null (--raw) */
	struct rs_runrec_session session;
	int has_phases;                /* 0: absent (--raw, runs before phases) */
	struct rs_runrec_phases phases;
	struct rs_runrec_summary *summary;  /* NULL: null (--raw) */
};

typedef struct rs_runrec rs_runrec;

/*
 * Decode the `len` bytes at `json` (what a capped read returned; they
 * need no NUL) into a new record, the caller's (rs_runrec_free), written
 * only on success. RS_ETOOBIG above RS_RUNREC_MAX_BYTES; RS_ENEWER for a
 * format above RS_RUNREC_FORMAT; RS_ECORRUPT for text that is not a JSON
 * object, a missing required key, a key of the wrong type, an index out
 * of range, a tree deeper than RS_RUNREC_MAX_TREE_DEPTH (each message
 * names the key); RS_EGENERIC out of memory.
 */
RS_MUST_CHECK int rs_runrec_decode(const char *json, size_t len, rs_runrec **out);

/*
 * Append run.json's bytes for `rec` to `out`: keys sorted, one line per
 * top-level key and per key of "summary", one line per entry of
 * summary.functions and summary.files, deeper values compact, reals with
 * 15 significant digits, a final newline. Decoding them gives `rec` back.
 * RS_EUSAGE, naming the key, for a record that lacks a required string
 * (id, commit, branch, trigger, recorded_at, a file's path, role or
 * LFS oid, the session's path or oid, summary.layout, a function's name
 * or file...): what it writes always decodes. RS_EGENERIC out of memory.
 */
RS_MUST_CHECK int rs_runrec_encode(struct rs_buf *out, const rs_runrec *rec);

void rs_runrec_free(rs_runrec *rec);

/* Free a summary decoded alone (runrec_json.h); NULL is a no-op. */
void rs_runrec_summary_free(struct rs_runrec_summary *s);

/* The value of `name` in `map` (borrowed), or NULL. Binary search. */
const struct rs_runrec_value *rs_runrec_map_get(const struct rs_runrec_map *map,
						const char *name);

/*
 * Building a record in memory (runrec_build.c): for code that makes a
 * record instead of decoding one, and for the tests, which so never
 * spell run.json's keys. Start from rs_runrec_new (and
 * rs_runrec_summary_new for rec->summary), then set members directly
 * (numbers, flags) or through the functions below (strings and lists,
 * which the record owns). What these build encodes as it is
 * (rs_runrec_encode) and decodes back to an equal record; a record
 * decoded from run.json may be changed with them too. Every string is
 * copied. Each returns 0 or RS_EGENERIC out of memory, the record then
 * as it was.
 *
 * Cost: the record keeps no capacities (the decoder allocates each list
 * to its size), so each append reallocates its list: fine for the few
 * hundred rows a summary keeps, not for building millions.
 */

/*
 * A new record, the caller's (rs_runrec_free), holding what the smallest
 * run.json decodes to: format RS_RUNREC_FORMAT; id, commit, branch,
 * trigger and recorded_at "" (set them); message and the machine's
 * strings null, cpus 0; empty meta, stats, args and metrics; no files;
 * session null, no phases, summary null.
 */
RS_MUST_CHECK int rs_runrec_new(rs_runrec **out);

/*
 * A new summary, the caller's until it is attached as rec->summary
 * (rs_runrec_summary_free): layout "5" (today's), every header figure
 * null, target null, counts and sampled_time 0, no sys_path, functions
 * or files, a call tree of its root alone ("[root]", file "", times 0),
 * none of the optional parts (tree_truncated, more_functions, ran,
 * calls). A caller that lists every function sets distinct_functions to
 * the rows it added (the analysis reads fewer as truncated lists).
 */
RS_MUST_CHECK int rs_runrec_summary_new(struct rs_runrec_summary **out);

/*
 * Replace the string member `*field` of a record (id, machine.runner,
 * summary->target, a function's class_name...) by a copy of `value`, the
 * old one freed; NULL writes null (absent), where the member allows it.
 */
RS_MUST_CHECK int rs_runrec_set_string(char **field, const char *value);

/*
 * Set `name` in `map` (meta, stats, args, metrics, phase totals) to a
 * copy of `value`, replacing the entry of that name or inserting one
 * where the sort order puts it. Only the members of its kind are kept,
 * as the decoder fills them: for RS_RUNREC_INT `d` is taken from `i`;
 * `i` is 0 for the others, `d` 0 for a string.
 */
RS_MUST_CHECK int rs_runrec_map_set(struct rs_runrec_map *map, const char *name,
				    const struct rs_runrec_value *value);

/* Append a copy of `f` (its strings copied; class_name may be NULL) to s->functions. */
RS_MUST_CHECK int rs_runrec_add_function(struct rs_runrec_summary *s,
					 const struct rs_runrec_function *f);

/*
 * Append a child without children to the tree node `parent` (the
 * summary's `tree` or a node below it). *out, when `out` is not NULL:
 * the new child, borrowed, to add its own children to; it moves when
 * `parent` gets its next child (take its children first, or find it
 * again as parent->children[i]). Deeper than RS_RUNREC_MAX_TREE_DEPTH
 * encodes, but does not decode.
 */
RS_MUST_CHECK int rs_runrec_node_add(struct rs_runrec_node *parent, const char *function,
				     const char *file, int64_t line, double total, double self,
				     struct rs_runrec_node **out);

/*
 * Append a row to s->more (the compact list, summary.more_functions;
 * sets has_more): `function` of `file` (added to more.files unless it is
 * there), first line `line`, own and total time in microseconds.
 */
RS_MUST_CHECK int rs_runrec_add_more_row(struct rs_runrec_summary *s, const char *function,
					 const char *file, int64_t line, int64_t self_us,
					 int64_t total_us);

/*
 * The optional keys, as "scope.key" ("phases", "summary.calls",
 * "summary.functions[].class"...): `*n` entries, borrowed, static. For
 * tests and the documentation; the decoder reads the same table.
 */
const char *const *rs_runrec_optional_keys(size_t *n);

#endif
