/*
 * One recorded profiling run: gathering its files, building run.json and
 * summary.md, and committing it (with the index and README) as ONE commit.
 *
 * Layout (docs/run-format.md):
 *   runs/YYYY/MM/DD/HHMMSS-<trigger>-<sha7>/    (UTC time of recording)
 *     run.json, summary.md, <session>.pyisession (LFS pointer), other files
 * run id: "YYYYMMDD-HHMMSS-<trigger>-<sha7>", with "-2", "-3"... appended in
 * the rare case that the same commit is recorded twice in one second with
 * the same trigger.
 *
 * The flow of `results add`:
 *   rs_run_init(); rs_run_set_*();           who, what, when
 *   rs_run_add_path() for each argument       reads each file ONCE: a
 *       session is parsed, hashed and copied into .git/lfs/tmp in the same
 *       pass; small files are kept in memory; large ones go to .git/lfs/tmp
 *   rs_run_record()                           renders run.json, summary.md,
 *       the index shard and README, places the LFS objects and commits.
 *   rs_run_release()                          removes whatever temporary
 *       files are left (all of them, when anything failed before).
 * Nothing is visible in the repository until rs_run_record's commit: an
 * error at any step leaves no commit and no work-tree file; an error
 * after the LFS objects were placed (the commit itself failing) leaves
 * them in .git/lfs/objects, unreferenced (they are never deleted: another
 * commit may refer to the same object). A kill is covered by the commit
 * journal (git/commit.h).
 *
 * Ownership: struct rs_run is the caller's (init/release); everything it
 * points to belongs to it.
 */
#ifndef RS_RUN_H
#define RS_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>

#include "git/repo.h"
#include "runs/runindex.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/hash.h"
#include "runrec/runrec.h"

/* run.json's format and read cap are the run record's (src/runrec). */
#define RS_RUN_FORMAT RS_RUNREC_FORMAT

/* Stats and args files are read whole: at most this size. */
#define RS_RUN_SMALL_FILE (1024u * 1024)
/*
 * Sessions go to LFS as pointers; every other file of a run is committed
 * as it is, up to this size (git hosts warn at 50 MB and GitHub refuses
 * 100 MB). Only sessions in LFS: .lfsconfig keeps exactly those out of
 * clones, and any other LFS file would need attributes of its own and a
 * download at every clone.
 */
#define RS_RUN_BLOB_MAX (50u * 1024 * 1024)
/* Files of one run (a run folder is small by nature; refuse a wrong dir). */
#define RS_RUN_MAX_FILES 256
/* Markdown rows of the function and file tables in summary.md. */
#define RS_RUN_TOP 15
/* README table length. */
#define RS_RUN_README_ROWS 20
/* Caps on committed files read back (untrusted: they come from a clone). */
#define RS_RUN_MAX_RUN_JSON RS_RUNREC_MAX_BYTES
#define RS_RUN_MAX_SUMMARY_MD (16u * 1024 * 1024)

struct rs_run_file {
	char *name;        /* path relative to the run folder (a base name) */
	const char *role;  /* "session", "stats", "args", "logged-stats", "html", "other" */
	uint64_t size;     /* size of the file itself */
	int lfs;           /* committed as a pointer */
	struct rs_id oid;  /* the LFS oid when lfs */
	struct rs_buf blob;/* the committed bytes: the file, or its pointer */
	char *tmp;         /* LFS copy under .git/lfs/tmp not yet placed; owned */
	int placed;        /* rs_run_record placed a new object (kept on failure) */
};

struct rs_run {
	char *commit;      /* full profiled sha, lower case */
	char *branch;
	char *trigger;
	char *message;     /* may be NULL */
	time_t recorded;   /* UTC seconds */
	char recorded_at[32];  /* ISO 8601 "YYYY-MM-DDTHH:MM:SSZ" */
	char *id;          /* set by rs_run_record (needs the tree for uniqueness) */
	char *folder;      /* "runs/YYYY/MM/DD/HHMMSS-<trigger>-<sha7>[-N]" */
	int raw;           /* --raw: store files, parse nothing */

	json_t *machine;   /* object */
	json_t *meta;      /* object KEY -> "VALUE" */
	json_t *stats;     /* object name -> number|string */
	json_t *args;      /* object: flattened *.args.json */
	json_t *summary;   /* the main session's summary JSON, or NULL */
	json_t *phases;    /* the main session's phases and timeline (session/phases.h), or NULL */
	char *session_md;  /* the session summary rendered as Markdown, or NULL */
	int main_session;  /* index into files of the main session, -1: none */
	char *verdict;     /* against the earlier comparable runs (verdict.h), or NULL */

	struct rs_run_file *files;
	size_t nfiles;
};

void rs_run_init(struct rs_run *run);
/* Frees everything and removes temporary LFS copies not yet placed. */
void rs_run_release(struct rs_run *run);

/*
 * Check and set the profiled commit (40 or 64 hex digits, stored lower
 * case). RS_EUSAGE otherwise: a short sha cannot be resolved here, since
 * the profiled repository is elsewhere.
 */
RS_MUST_CHECK
int rs_run_set_commit(struct rs_run *run, const char *sha);

/* Trigger: 1..32 of [A-Za-z0-9._], it is part of folder names. RS_EUSAGE. */
RS_MUST_CHECK
int rs_run_set_trigger(struct rs_run *run, const char *trigger);

/* Branch: any non-empty string without control characters, <= 255 bytes. */
RS_MUST_CHECK
int rs_run_set_branch(struct rs_run *run, const char *branch);

/*
 * The branch of the profiled repository, when it can be seen: if `path`
 * (a session file or run folder) lies inside a git working tree other
 * than `repo`, whose HEAD is a branch pointing at run->commit, that
 * branch's short name is appended to `out` and 0 returned. RS_ENOTFOUND
 * otherwise (no such repository, another commit, a detached HEAD). Needs
 * rs_run_set_commit first.
 */
RS_MUST_CHECK
int rs_run_profiled_branch(struct rs_buf *out, const struct rs_run *run,
			   const struct rs_repo *repo, const char *path);

/* "KEY=VALUE" (KEY: 1..64 of [A-Za-z0-9._-]); a repeated KEY replaces. */
RS_MUST_CHECK
int rs_run_add_meta(struct rs_run *run, const char *key_value);

/* Recording time (UTC seconds); also fills recorded_at. */
void rs_run_set_time(struct rs_run *run, time_t t);

/*
 * Describe this machine: hostname, os (uname sysname and release), arch,
 * cpu_model (from /proc/cpuinfo), cpus (online), runner (env RUNNER_NAME,
 * null when unset). Replaces run->machine.
 */
RS_MUST_CHECK
int rs_run_detect_machine(struct rs_run *run);

/*
 * Add a --stats FILE.json: its flattened values go into run->stats
 * (replacing same names).
 */
RS_MUST_CHECK
int rs_run_add_stats_file(struct rs_run *run, const char *path);

/*
 * Add a command-line argument: a session file, another single file, or a
 * run folder (its regular files, not recursing; dot files skipped).
 *
 * A file given directly whose name does not mark it as stats, args,
 * logged-stats or html is taken to be a session and must parse as one,
 * unless --raw (RS_ECORRUPT with a message saying so; use --raw to store
 * it as an opaque file). In a folder, *.pyisession files must parse as
 * sessions (unless --raw) and other files are stored as they are.
 *
 * Symbolic links: one named on the command line (file or folder) is
 * followed, the user chose it; one inside a run folder is refused
 * (RS_EUSAGE naming it) and never read through, even if it appears
 * between listing and opening (O_NOFOLLOW); a link loop is RS_EUSAGE.
 * FIFOs and devices in a folder are skipped, never opened.
 *
 * Sessions are read once: the bytes go to the parser, the SHA-256 and a
 * copy under .git/lfs/tmp in the same pass. The first session added is
 * the main one: its summary goes into run.json and summary.md.
 * Stats files are read into run->stats, args into run->args.
 * RS_EUSAGE for two files of the same name, RS_ENOTFOUND for a missing
 * path.
 */
RS_MUST_CHECK
int rs_run_add_path(struct rs_run *run, struct rs_repo *repo, const char *path);

/*
 * The metrics of run.json and the index: duration, cpu_time, samples,
 * sampled_time from the summary, plus every numeric stat. A new object
 * (caller's).
 */
json_t *rs_run_metrics(const struct rs_run *run);

/* run.json (format 1), pretty-printed with sorted keys. */
RS_MUST_CHECK
int rs_run_render_json(struct rs_buf *out, const struct rs_run *run);

/* summary.md: header figures, metadata, the session summary, stats. */
RS_MUST_CHECK
int rs_run_render_markdown(struct rs_buf *out, const struct rs_run *run);

/* The index entry of this run (caller releases with rs_run_entry_release). */
RS_MUST_CHECK
int rs_run_index_entry(struct rs_run_entry *out, const struct rs_run *run);

/*
 * Record the run as one commit on top of HEAD: chooses the id and folder
 * (unique in HEAD's tree), renders run.json and summary.md, appends the
 * run to the current month's index shard, rewrites README.md, places the
 * LFS objects and commits. On any error nothing is committed; the LFS
 * objects placed stay (see above). `commit_hex_out` (>= 41
 * bytes, may be NULL) receives the new commit of the results repository.
 */
RS_MUST_CHECK
int rs_run_record(struct rs_run *run, struct rs_repo *repo, char *commit_hex_out);

#endif
