/*
 * results: the store of LFS objects on a remote, for programs (the results
 * CLI and lfs-agent): opening it, moving an object in and out as the agent
 * does, and what verify, gc, fetch, show and doctor find out about it.
 * docs/store-format.md describes the bytes, docs/architecture.md the
 * layers. Conventions as in results/repo.h: 0 or a negative RS_E* code
 * with a message, never prints; objects the library allocates are freed
 * with their _free function (NULL is fine); `const char *` results are
 * borrowed from the object that gave them; results are appended to the
 * caller's `struct rs_buf`.
 *
 * Every type here is opaque. An object id (oid) is passed as its 64
 * lower-case hex digits (RS_OID_HEXSZ), the form git-lfs and the pointer
 * files use.
 */
#ifndef RESULTS_STORE_H
#define RESULTS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "results/error.h"

struct rs_buf;
struct rs_config;
struct rs_repo;
struct rs_runs;
struct rs_run_entry;

/* The length of an oid in hex digits. */
#define RS_OID_HEXSZ 64

/* ---- The store on its remote ---------------------------------------- */

/* A results store and the remote it lives on (both owned). */
struct rs_objstore;

struct rs_objstore_options {
	int zstd_level; /* 0: the store's default */
	int threads;    /* worker threads for one object; 0: one per core */
	/* 1: keep the chunk index of the remote in the user's cache folder
	   ($RESULTS_CACHE_DIR, $XDG_CACHE_HOME/results, ~/.cache/results;
	   none of them set: no cache), so that later pushes of other
	   processes deduplicate against it. */
	int use_cache;
};

/*
 * Open the store at `url`. Backends read their extra settings (region,
 * endpoint, CA file) from `config` (may be NULL: all unset), which must
 * outlive the store. A remote that cannot be opened fails with a message
 * starting "results remote: ". `opts` may be NULL (defaults, no cache).
 */
RS_MUST_CHECK int rs_objstore_open_url(struct rs_objstore **out, const char *url,
				       struct rs_config *config,
				       const struct rs_objstore_options *opts);
void rs_objstore_free(struct rs_objstore *s);

/* The remote's URL without credentials, for messages (borrowed). */
const char *rs_objstore_display_url(const struct rs_objstore *s);

/*
 * Read the remote's FORMAT file: 0 when it names this format,
 * RS_ENOTFOUND when the remote holds no store yet (the message says it
 * is probably a mistyped remote; the first upload writes it), RS_ENEWER
 * for a newer format ("results-store N", N above this build's),
 * RS_EFORMAT for another FORMAT text, RS_ETOOBIG for one past its cap,
 * and the remote's error when it does not answer.
 */
RS_MUST_CHECK int rs_objstore_check_format(struct rs_objstore *s);

/*
 * Progress of one transfer: `done` of `total` bytes, called from the
 * calling thread. A non-zero return aborts the transfer with that value.
 */
typedef int (*rs_objstore_progress_fn)(uint64_t done, uint64_t total, void *payload) RS_MUST_CHECK;

/* What an upload did. */
struct rs_objstore_put_stats {
	uint64_t chunks;      /* chunks in the object */
	uint64_t chunks_new;  /* chunks written to new packs */
	uint64_t bytes_raw;   /* the object's size */
	uint64_t bytes_stored; /* compressed bytes written to new packs */
	int already_present;  /* the object was there: nothing was sent */
};

/*
 * Store the file at `path` as object `oid_hex` of `size` bytes (a git-lfs
 * upload): read once, hashed on the way; nothing is committed unless its
 * SHA-256 and size match (RS_ECORRUPT). `progress` and `stats` may be
 * NULL. Safe in several processes at once, and to retry.
 */
RS_MUST_CHECK int rs_objstore_put(struct rs_objstore *s, const char *oid_hex, uint64_t size,
				  const char *path, rs_objstore_progress_fn progress,
				  void *payload, struct rs_objstore_put_stats *stats);

/*
 * Reassemble object `oid_hex` of `size` bytes (UINT64_MAX: any) into the
 * new file `dest` (a git-lfs download). Every chunk and the object's size
 * are checked before `dest` appears: on error no file is left there.
 * RS_ENOTFOUND when the remote has no such object, RS_ECORRUPT when its
 * stored bytes are damaged. The whole file is not hashed: git-lfs checks
 * every download of a custom agent against its oid (tq/custom.go,
 * VerifyFileHash) before it moves it into its object store; a caller
 * that is not git-lfs must check it, or use results fetch.
 */
RS_MUST_CHECK int rs_objstore_get(struct rs_objstore *s, const char *oid_hex, uint64_t size,
				  const char *dest, rs_objstore_progress_fn progress,
				  void *payload);

/*
 * Where lfs-agent writes the download of `oid_hex` in the repository `r`
 * (opened bare or not): <git-lfs's tmp folder>/results-<oid>, on the file
 * system of .git/lfs/objects, where git-lfs renames it. Appended to
 * `out` by rs_objstore_download_path; rs_objstore_download_dir appends
 * the folder, and removes the downloads that killed agents left there
 * (older than the stale-file grace period: call it once per process).
 */
RS_MUST_CHECK int rs_objstore_download_dir(struct rs_buf *out, struct rs_repo *r);
RS_MUST_CHECK int rs_objstore_download_path(struct rs_buf *out, const char *dir,
					    const char *oid_hex);

/* ---- A survey: what the refs need and what the remote holds --------- */

/*
 * The remote of a repository, the retention plan of its refs (which raw
 * sessions every branch, tag and remote-tracking branch still needs) and
 * the census of what the remote holds: what verify and gc start from.
 */
struct rs_survey;

/* Which step of rs_survey_open failed (the message says what). */
enum rs_survey_step {
	RS_SURVEY_REMOTE, /* opening the remote: "cannot open the remote: ..."
			     (RS_ENOTFOUND: no remote configured) */
	RS_SURVEY_PLAN,   /* reading the runs and retention policy of the refs */
	RS_SURVEY_CENSUS, /* listing the remote: "cannot list the remote '...': ..." */
};

/* Which runs a survey reads (docs/retention.md, "Which refs count"). */
enum rs_survey_scope {
	RS_SURVEY_HEAD,         /* the runs of HEAD alone */
	RS_SURVEY_REFS,         /* of every branch and tag of the git remote, as it has
				   them now (tips this clone lacks are fetched into
				   refs/results/gc/), and of every ref of this clone */
	RS_SURVEY_REFS_NOFETCH, /* the same, fetching nothing: a tip this clone
				   lacks is a doubt */
};

/*
 * Survey `repo` (borrowed; it must outlive the survey) as of `now` (unix
 * seconds), reading the runs `scope` says. On error `*failed` says which
 * step failed. What could not be read or asked (the git remote, a ref's
 * policy, a run's record) is not an error but a doubt
 * (rs_survey_doubts): gc then deletes nothing, verify verifies the rest.
 */
RS_MUST_CHECK int rs_survey_open(struct rs_survey **out, struct rs_repo *repo, int64_t now,
				 enum rs_survey_scope scope, enum rs_survey_step *failed);
void rs_survey_free(struct rs_survey *s);

const char *rs_survey_display_url(const struct rs_survey *s);

/*
 * Why gc may delete nothing: one line (each ending in '\n') per ref,
 * file or remote that could not be read, saying what and how to proceed;
 * "" when there is no doubt. `*code` (may be NULL) gets the first one's
 * RS_E* code (RS_ERETRY: the git remote could not be asked). Borrowed.
 */
const char *rs_survey_doubts(const struct rs_survey *s, int *code);

/* How many of the doubts hide runs (an index or a run's record unreadable): verify cannot check those. */
size_t rs_survey_unread(const struct rs_survey *s);

/*
 * What the policies keep by default, one line each ('\n'): refs without
 * a policy, runs of an unknown age. Borrowed; "" when none.
 */
const char *rs_survey_notes(const struct rs_survey *s);

/*
 * The refs read: `*remote_refs` of the git remote `*remote_name` (NULL: the
 * clone has none, or it was not asked) and `*local_refs` of this clone
 * whose commits no remote ref has.
 */
void rs_survey_refs(const struct rs_survey *s, const char **remote_name, size_t *remote_refs,
		    size_t *local_refs);

/* 1 when some run has a session but the remote holds no store at all. */
int rs_survey_remote_empty(const struct rs_survey *s);

/* ---- verify ------------------------------------------------------- */

/*
 * Check every object the survey's runs name (each once): shallow, its
 * manifest and the packs it names are listed; `deep`, every chunk read
 * and every object hashed. An error means the remote could not be asked
 * ("cannot read from the remote '...': ...").
 */
RS_MUST_CHECK int rs_verify_check(struct rs_survey *s, int deep);

/* Which step of rs_verify_repair failed. */
enum rs_repair_step {
	RS_REPAIR_QUARANTINE, /* "cannot quarantine pack ...: ..." */
	RS_REPAIR_CENSUS,     /* listing the remote again */
};

/*
 * After a deep rs_verify_check: quarantine the damaged packs, push again
 * every damaged, missing or incomplete object this clone holds, re-point
 * the others at good copies of their chunks. An object counts as
 * restored (its row "ok") only once it is read back as a reader reads it
 * and hashes to its oid; objects verify found "newer" are never touched.
 * `note` gets one line (no newline) per action and per object that no
 * clone here can restore, as it happens.
 */
RS_MUST_CHECK int rs_verify_repair(struct rs_survey *s,
				   void (*note)(const char *line, void *payload), void *payload,
				   enum rs_repair_step *failed);

/* One line of the verify report: a (run, object) of the survey. */
struct rs_verify_row {
	const char *state;  /* "ok", "missing", "removed", "incomplete", "damaged",
			       "newer" (written by a newer results: upgrade, never damage) */
	const char *run_id;
	const char *oid_hex;
	const char *why;    /* what is wrong ("" when ok or unknown) */
};

struct rs_verify_totals {
	size_t runs, objects;
	size_t ok, removed, missing, incomplete, damaged, newer;
	size_t restored, lost; /* by rs_verify_repair */
	/* Objects still damaged, and still missing or incomplete, now (after
	   rs_verify_repair: what it could not restore). */
	size_t left_damaged, left_missing;
};

size_t rs_verify_rows(const struct rs_survey *s);
/* Row `i` (< rs_verify_rows), its strings borrowed from `s`. */
void rs_verify_row(const struct rs_survey *s, size_t i, struct rs_verify_row *row);
void rs_verify_totals(const struct rs_survey *s, struct rs_verify_totals *out);

/* ---- gc ----------------------------------------------------------- */

/*
 * Who judges which runs keep_flagged keeps: calls keep(run_id, payload)
 * for every run to keep and sets *flagged. gc does not judge runs itself
 * (the check is a report, above it): programs pass rs_report_flagged
 * (results/report.h).
 */
typedef int rs_gc_flagger_fn(struct rs_repo *repo,
			     void (*keep)(const char *run_id, void *payload), void *payload,
			     size_t *flagged);

/*
 * When the committed policy says keep_flagged: keep the raw sessions of
 * every run `flagger` names (rs_report_flagged: every run of HEAD's
 * history that `results check` flags, and the baselines it was judged
 * against). `*applied` says whether the policy asks for it, `*flagged`
 * how many runs were flagged.
 */
RS_MUST_CHECK int rs_gc_keep_flagged(struct rs_survey *s, rs_gc_flagger_fn *flagger,
				     int *applied, size_t *flagged);

/*
 * The shortest grace period gc accepts without being forced: it must be
 * longer than any push (a pack is clocked, marked and swept a grace
 * period apart each), and a grace of seconds would defeat the clocks'
 * purpose. The protocol does not rely on it for safety (docs/retention.md).
 */
#define RS_GC_GRACE_MIN 3600

struct rs_gc_settings {
	int dry_run;    /* count, write nothing */
	int64_t now;    /* unix seconds */
	int64_t grace;  /* seconds a pack must be seen unused before it goes */
	double repack;  /* repack packs less used than this share (0: never) */
};

struct rs_gc_totals {
	size_t runs, refs;             /* of the survey (refs: of the git remote) */
	size_t local_refs;             /* refs of this clone only */
	size_t dropped_runs;           /* sessions picked for removal */
	uint64_t dropped_bytes;        /* their sizes */
	size_t manifests_removed;      /* set aside now (trash/, reversible) */
	size_t manifests_touched;      /* kept: a push relies on them */
	size_t manifests_restored;     /* brought back: kept again, or a push relies on them */
	size_t manifests_confirmed;    /* set aside a grace period ago: deleted now */
	size_t manifests_pending;      /* set aside, within the grace period */
	size_t packs, packs_started, packs_marked, packs_rescued, packs_swept;
	size_t packs_waiting, packs_repacked, packs_spared;
	uint64_t bytes_swept, bytes_unreferenced, bytes_repacked;
	uint64_t bytes_pending;        /* held only by sessions on their way out */
};

/*
 * Remove from the remote the raw sessions no ref's retention keeps
 * (`picked` is told of each as it is chosen), tidy what killed writers
 * left, then collect the packs nothing references with the mark / grace
 * / sweep protocol (docs/store-format.md). Safe while others push, and
 * idempotent: an error loses nothing, run it again. A survey with doubts
 * (rs_survey_doubts) is refused whole: RS_E* of the first doubt, nothing
 * written.
 */
RS_MUST_CHECK int rs_gc_run(struct rs_survey *s, const struct rs_gc_settings *settings,
			    void (*picked)(const char *run_id, const char *recorded_at,
					   void *payload),
			    void *payload, struct rs_gc_totals *totals);

/* ---- fetch: a run's sessions out of the store into place ----------- */

/* One `results fetch`: the repository, where the files go, the store. */
struct rs_fetch;

/*
 * Fetch into `repo` (borrowed), or with `outdir` (borrowed; NULL: none)
 * into outdir/<run id>/<file>, leaving the repository alone.
 */
RS_MUST_CHECK int rs_fetch_new(struct rs_fetch **out, struct rs_repo *repo, const char *outdir);
void rs_fetch_free(struct rs_fetch *f);

/* One session put in place. */
struct rs_fetched {
	const char *path;           /* where the user finds it: the file in the outdir,
				       the work-tree file, or the local LFS object */
	const char *worktree_rel;   /* without an outdir: its path in the work tree */
	const char *object_path;    /* without an outdir: the local LFS object */
	int checked_out;            /* the work-tree file holds the content */
	const char *checkout_error; /* why it could not be checked out, else NULL
				       (not fatal: the object is in place) */
	uint64_t size;
};

/* What a failed rs_fetch_run was doing (the message says what failed). */
enum rs_fetch_stage {
	RS_FETCH_RUN,      /* the run's record and pointers; RS_ENOTFOUND: no session */
	RS_FETCH_FOLLOW,   /* the committed remote is not the one this clone uses */
	RS_FETCH_OPEN,     /* opening the remote (RS_ENOTFOUND: none configured) */
	RS_FETCH_REMOTE,   /* the remote does not answer or holds no store;
			      RS_ENEWER: a newer store; RS_EFORMAT,
			      RS_ETOOBIG: not a FORMAT this build reads */
	RS_FETCH_DOWNLOAD, /* the object: RS_ENOTFOUND missing, RS_ECORRUPT damaged */
	RS_FETCH_LOCAL,    /* writing here */
};

/*
 * Fetch the session files of run `e` of `runs`: every file of role
 * "session" stored in LFS that run.json lists (else its "session"), read
 * as pointers from the committed tree (the pointer is the authority on
 * oid and size). An object missing locally is downloaded and verified
 * (the store is opened on first need); one already there is copied with
 * a hash check. Without an outdir the object goes into .git/lfs/objects
 * and replaces its pointer in the work tree. `placed` is told of each
 * file. On error, rs_fetch_stage says where it failed.
 */
RS_MUST_CHECK int rs_fetch_run(struct rs_fetch *f, const struct rs_runs *runs,
			       const struct rs_run_entry *e,
			       void (*placed)(const struct rs_fetched *file, void *payload),
			       void *payload);
enum rs_fetch_stage rs_fetch_stage(const struct rs_fetch *f);

/* ---- show ---------------------------------------------------------- */

/*
 * The committed summary.md of run `e` (`json`: its run.json, checked to
 * be a JSON object), appended to `out` as committed. RS_ECORRUPT when
 * the index names the run but the file is missing or not what it
 * should be.
 */
RS_MUST_CHECK int rs_show_run_file(struct rs_buf *out, const struct rs_runs *runs,
				   const struct rs_run_entry *e, int json);

/*
 * 1, and the date ("2026-12-01") appended to `date`, when the remote
 * answers and says the run's raw session was removed by retention; 0
 * otherwise, and nothing said (no remote, no answer, present, missing
 * for another reason).
 */
int rs_show_removed_by_retention(struct rs_buf *date, const struct rs_runs *runs,
				 const struct rs_run_entry *e);

/* ---- doctor -------------------------------------------------------- */

enum rs_doctor_level { RS_DOCTOR_OK, RS_DOCTOR_WARN, RS_DOCTOR_FAIL };

/* What a failed check means (the program maps it to an exit status). */
enum rs_doctor_kind {
	RS_DOCTOR_SETUP,    /* the set-up is incomplete */
	RS_DOCTOR_NOT_REPO, /* not a results repository */
	RS_DOCTOR_REMOTE,   /* the remote does not answer */
	RS_DOCTOR_MISSING,  /* a newest run's session is not on the remote */
	RS_DOCTOR_NEWER,    /* the store was written by a newer results: upgrade */
};

struct rs_doctor_options {
	/* One line per check, in order (required). */
	void (*say)(enum rs_doctor_level level, enum rs_doctor_kind kind, const char *line,
		    void *payload);
	/* 0 when `prog arg` runs and exits 0 (required: only programs run programs). */
	int (*runs_ok)(const char *prog, const char *arg, void *payload);
	/* 1 when `name` is an executable on PATH (required). */
	int (*on_path)(const char *name, void *payload);
	void *payload;
};

/*
 * Check the set-up of the repository around `path` (NULL: the current
 * directory) for results: the repository, its remote and whether it
 * answers, the transfer agent, git-lfs, the hooks, the committed
 * .gitattributes and .lfsconfig, and the newest runs' sessions on the
 * remote. Reads only. Every finding, failures included, goes to
 * `opts->say`.
 */
void rs_doctor_run(const char *path, const struct rs_doctor_options *opts);

/* ---- repository upkeep ---------------------------------------------- */

/* Which step of rs_repo_repair failed. */
enum rs_repo_repair_step {
	RS_REPO_REPAIR_COMMIT, /* finishing or undoing a killed commit */
	RS_REPO_REPAIR_TMP,    /* removing stale temporary files */
};

/*
 * What every command that writes to the repository does first: finish or
 * undo a commit a killed results process left half done (a sentence for
 * the user appended to `note` when it did), and remove the temporary
 * files killed processes left behind.
 */
RS_MUST_CHECK int rs_repo_repair(struct rs_repo *r, struct rs_buf *note,
				 enum rs_repo_repair_step *failed);

#endif
