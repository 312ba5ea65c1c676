/*
 * results: recording one profiling run as one commit (`results add`), and
 * what `results list` shows of the runs recorded (conventions:
 * results/repo.h).
 *
 * A struct rs_record is one run being recorded, opaque: the caller sets
 * who, what and when, adds the files, and commits it. Nothing is visible
 * in the repository until rs_record_commit: on any error before, no
 * commit and no working-tree file is left, and rs_record_free removes the
 * temporary copies. docs/run-format.md describes the files of a run.
 *
 *     rs_record_new(&rec);
 *     rs_record_set_commit(rec, sha);  ... rs_record_set_time(rec, now);
 *     rs_record_detect_machine(rec);
 *     rs_record_add_path(rec, repo, path);      for each file or folder
 *     rs_record_preview_json(&json, rec, repo); rs_report_add_verdict(...);
 *     rs_record_set_verdict(rec, verdict);      optional (results/report.h)
 *     rs_record_commit(rec, repo, commit_hex);
 *     printf("%s %s\n", rs_record_id(rec), rs_record_folder(rec));
 *     rs_record_free(rec);
 */
#ifndef RESULTS_RECORD_H
#define RESULTS_RECORD_H

#include <stddef.h>
#include <time.h>

#include "results/error.h"

struct rs_buf;
struct rs_repo;
struct rs_run_entry;
struct rs_runs;

/* One run being recorded; the caller's (rs_record_free). */
struct rs_record;

RS_MUST_CHECK int rs_record_new(struct rs_record **out);
/* Frees the record and removes its temporary LFS copies not yet placed. */
void rs_record_free(struct rs_record *rec);

/*
 * The profiled commit: 40 or 64 hex digits (kept lower case). RS_EUSAGE
 * otherwise: a short sha cannot be resolved here, the profiled repository
 * is elsewhere.
 */
RS_MUST_CHECK int rs_record_set_commit(struct rs_record *rec, const char *sha);
/* What started the run: 1..32 of [A-Za-z0-9._] (part of folder names). RS_EUSAGE. */
RS_MUST_CHECK int rs_record_set_trigger(struct rs_record *rec, const char *trigger);
/* The profiled branch: non-empty, no control characters, <= 255 bytes. RS_EUSAGE. */
RS_MUST_CHECK int rs_record_set_branch(struct rs_record *rec, const char *branch);
/* "KEY=VALUE" metadata (KEY: 1..64 of [A-Za-z0-9._-]); a repeated KEY replaces. */
RS_MUST_CHECK int rs_record_add_meta(struct rs_record *rec, const char *key_value);
/* A note kept in run.json, summary.md and the commit message (copied). */
RS_MUST_CHECK int rs_record_set_message(struct rs_record *rec, const char *message);
/* Store the files without parsing them (no summary). */
void rs_record_set_raw(struct rs_record *rec, int raw);
/* The recording time, UTC seconds. */
void rs_record_set_time(struct rs_record *rec, time_t t);

/*
 * The branch of the profiled checkout, when it can be seen: `path` (a
 * session file or run folder) lies in a git working tree other than
 * `repo` whose HEAD is a branch at the record's commit (set first). The
 * branch's short name is appended to `out`; RS_ENOTFOUND otherwise.
 */
RS_MUST_CHECK int rs_record_profiled_branch(struct rs_buf *out, const struct rs_record *rec,
					    const struct rs_repo *repo, const char *path);

/* Describe this machine (host, os, arch, cpu, runner from $RUNNER_NAME). */
RS_MUST_CHECK int rs_record_detect_machine(struct rs_record *rec);

/* A --stats FILE.json: a JSON object, nested keys joined by '.'. */
RS_MUST_CHECK int rs_record_add_stats_file(struct rs_record *rec, const char *path);

/*
 * A session file, another single file, or a run folder (its regular
 * files, not recursing). A file that is not a session is refused
 * (RS_ECORRUPT) unless the record is raw or its name marks it as stats,
 * args, logged stats or HTML; RS_ENOTFOUND for a missing path, RS_EUSAGE
 * for two files of the same name or a symbolic link inside a folder. The
 * first session added is the run's main one. Each file is read once.
 */
RS_MUST_CHECK int rs_record_add_path(struct rs_record *rec, struct rs_repo *repo,
				     const char *path);

/*
 * run.json as rs_record_commit would write it now (the id chosen against
 * HEAD's tree), appended to `out`: what a caller judges the run from
 * before it is recorded (rs_report_add_verdict, results/report.h).
 */
RS_MUST_CHECK int rs_record_preview_json(struct rs_buf *out, struct rs_record *rec,
					 struct rs_repo *repo);

/*
 * The run's one-line verdict against the earlier comparable runs, as the
 * caller judged it (copied; NULL: none). Recording never judges a run by
 * itself: the verdict goes into summary.md and the index line as given.
 */
RS_MUST_CHECK int rs_record_set_verdict(struct rs_record *rec, const char *verdict);

/*
 * Record the run as one commit on top of HEAD: its folder (run.json,
 * summary.md, sessions as LFS pointers, the other files), the index
 * shard and README.md. The sessions go into the local LFS store.
 * `commit_hex` (41 bytes, may be NULL) receives the new commit. On error
 * nothing is committed; RS_ERETRY when another commit moved the branch
 * meanwhile (running again succeeds).
 */
RS_MUST_CHECK int rs_record_commit(struct rs_record *rec, struct rs_repo *repo,
				   char *commit_hex);

/* After rs_record_commit: the run's id and folder (borrowed). */
const char *rs_record_id(const struct rs_record *rec);
const char *rs_record_folder(const struct rs_record *rec);

/*
 * The run's main session: its file name (borrowed) and size; RS_ENOTFOUND
 * when the run has none (raw, or no session among its files).
 */
RS_MUST_CHECK int rs_record_session(const struct rs_record *rec, const char **name,
				    unsigned long long *size);

#endif
