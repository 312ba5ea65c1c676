/*
 * results: setting a clone (or this machine) up for results: what
 * `results init` does, as library calls (conventions: results/repo.h):
 * the choice of the remote (rs_setup_choose_remote, rs_setup_global_target)
 * and the set-up itself. The CLI keeps the options, where the installation's
 * files are, and the messages (src/cli/cmd_init.c).
 *
 * Per clone, what git-lfs cannot take from committed files (.lfsconfig may
 * never name a program) goes in the local git config: the standalone
 * transfer agent RS_SETUP_AGENT = the given lfs-agent, and results.remote,
 * which the agent reads itself. What every clone should share is committed
 * in one commit of its own: .gitattributes (from the template, only if the
 * repository has none), .lfsconfig (fetchexclude of sessions, only if
 * none) and .results.json naming the remote without credentials, so that
 * in a later clone a bare `results init` suffices. Hooks are copied from
 * the installation's hooks/ folder.
 *
 * Every step compares before it writes, so a second run changes nothing.
 */
#ifndef RESULTS_SETUP_H
#define RESULTS_SETUP_H

#include <stddef.h>

#include "results/error.h"

struct rs_buf;
struct rs_repo;

/* The name of the transfer agent a clone is set up with. */
#define RS_SETUP_AGENT "results"

/* The hooks results installs, in the order it installs them. */
extern const char *const rs_setup_hook_names[4];
#define RS_SETUP_HOOKS 4

/*
 * Where one of the installation's files is ("hooks/pre-push",
 * ".gitattributes.template"): only the program knows where it was
 * installed. Appends the path to `out`; RS_ENOTFOUND with a message when
 * there is none.
 */
typedef int (*rs_setup_find_fn)(struct rs_buf *out, const char *rel, void *payload) RS_MUST_CHECK;

struct rs_setup_options {
	const char *url;        /* results.remote for this clone (may hold credentials) */
	const char *agent_path; /* absolute path of lfs-agent */
	/* Commit a marker naming `url` even over a committed one (a move to
	   another remote, `results init --change-remote`). */
	int move_marker;
	rs_setup_find_fn find_resource; /* required */
	/* Called for each hook left alone because it is neither ours nor
	   git-lfs's (chaining to it is the user's to decide); may be NULL. */
	void (*hook_kept)(const char *hook_path, const char *ours_path, void *payload);
	void *payload;          /* for find_resource and hook_kept */
};

/* Which step of rs_repo_setup_clone failed. */
enum rs_setup_step {
	RS_SETUP_STEP_PREPARE, /* the files to commit, or the local git config */
	RS_SETUP_STEP_COMMIT,  /* the commit (nothing later was done) */
	RS_SETUP_STEP_HOOKS,   /* the hooks (everything else is set up) */
};

struct rs_setup_report {
	int config_changes;        /* git config keys set (0: already set) */
	int committed;             /* 1 when a commit was made */
	char commit_hex[41];       /* that commit, or HEAD when none was */
	const char *files[3];      /* the files in it (static strings) */
	size_t nfiles;
	int hooks_installed;
	int hooks_kept;            /* left alone (see hook_kept) */
	enum rs_setup_step failed; /* on error: where */
};

/*
 * Set the clone `r` up for `opts->url` as described on top. `report` is
 * the caller's, filled in as far as the set-up went (its strings are
 * static); on error report->failed says which step failed (the message is
 * set). Returns 0 or the failing step's code.
 */
RS_MUST_CHECK
int rs_repo_setup_clone(struct rs_repo *r, const struct rs_setup_options *opts,
			struct rs_setup_report *report);

/*
 * Machine-wide (`results init --global`): git-lfs looks up
 * lfs.<endpoint>.standalonetransferagent for the endpoint of the
 * repository being cloned, so each repository gets its own agent name
 * (RS_SETUP_AGENT-<first 8 hex digits of the endpoint's SHA-256>) whose
 * args carry `--remote url`: a plain clone has no results.remote of its
 * own yet. Written to GIT_CONFIG_GLOBAL as git honours it (libgit2 1.5
 * does not), else the global config libgit2 finds, else ~/.gitconfig.
 * The agent name, the config file and the number of keys changed are
 * returned (`name_out`, `path_out` appended).
 */
RS_MUST_CHECK
int rs_setup_global(const char *endpoint, const char *url, const char *agent_path,
		    struct rs_buf *name_out, struct rs_buf *path_out, int *changes);

/*
 * Where git runs this clone's hooks from: core.hooksPath (relative to the
 * working tree), else <common git dir>/hooks; appended to `out`.
 */
RS_MUST_CHECK
int rs_repo_hooks_dir(struct rs_buf *out, struct rs_repo *r);

/* What `results init` was asked for (rs_setup_choose_remote). */
struct rs_setup_choice {
	const char *remote_arg; /* --remote URL, or NULL */
	int change;             /* --change-remote: --remote may move the committed remote */
	int follow;             /* --follow-remote: take a committed change of remote */
};

/*
 * Which remote `results init` sets the clone `r` up for.
 * `how->remote_arg` must name the committed remote (or, without a
 * marker, this clone's results.remote) unless `how->change` says the move
 * is meant: otherwise RS_EUSAGE with a message naming both, the commit
 * that set the committed one, and how to move or keep it. Without
 * `remote_arg`: a fresh clone (no results.remote) takes the committed
 * remote; a set-up clone keeps its URL when it names the committed store
 * (it may carry credentials), and refuses, RS_EUSAGE naming both remotes
 * and the commit and author that changed it, a committed change of
 * remote it has not followed (rs_repo_check_remote's test) unless
 * `how->follow`. RS_EUSAGE as well when no remote is known at all, and
 * for a URL no backend understands. Appended: `url` (what to configure,
 * credentials and all), `shown` (it without credentials), `old` (the
 * remote replaced, without credentials; nothing when none was) and
 * `set_by` (when the remote comes from .results.json: the commit that
 * set it there, "commit <12 hex> by <name> <<email>> on <date>:
 * "<subject>"", made safe for a terminal; nothing when unknown).
 */
RS_MUST_CHECK
int rs_setup_choose_remote(struct rs_repo *r, const struct rs_setup_choice *how,
			   struct rs_buf *url, struct rs_buf *shown, struct rs_buf *old,
			   struct rs_buf *set_by);

/*
 * What rs_setup_global is given by `results init --global`: the LFS
 * endpoint of `repo_arg` (NULL: remote.origin.url of `r`), or a URL
 * ending in '/' as a prefix covering every repository below it, without
 * credentials; and the store's URL, `remote_arg` (NULL: `r`'s remote,
 * rs_repo_remote_url), with `shown`, it without credentials. `r` may be
 * NULL when both are given. RS_EUSAGE, with a message naming the option
 * to give, when `r` has no origin or no remote, or for a URL no backend
 * understands.
 */
RS_MUST_CHECK
int rs_setup_global_target(struct rs_repo *r, const char *repo_arg, const char *remote_arg,
			   struct rs_buf *endpoint, struct rs_buf *url, struct rs_buf *shown);

/* What `results clone` makes (rs_setup_clone). */
struct rs_setup_clone_options {
	const char *url;    /* the results repository's git URL (a local folder: file://) */
	const char *dir;    /* the clone's folder; NULL: the URL's last component, without .git */
	const char *branch; /* the branch to check out; NULL: the remote's HEAD */
	unsigned depth;     /* commits of history to fetch; 0: all */
	int full;           /* every file (but the sessions) and a whole work tree */
};

/*
 * Make the developer clone of a results repository with git (see
 * src/git/devclone.c for why each choice): `git clone --depth=<depth>
 * --filter=blob:limit=1k --no-checkout`, a sparse work tree without
 * runs/ (core.sparseCheckout, .git/info/sparse-checkout), then its
 * checkout; with `full`, a plain `git clone` (`--depth` if given).
 * Sessions are never downloaded (GIT_LFS_SKIP_SMUDGE). The clone is not
 * set up for results: that is rs_repo_setup_clone's, in it. The folder
 * made is appended to `dir_out`. RS_EUSAGE for a URL, folder or branch
 * git would read as an option, or no folder name to take from the URL;
 * RS_EGENERIC when git fails (the message quotes git's first line: an
 * existing folder, an unreachable URL, a host that does not allow
 * filters).
 */
RS_MUST_CHECK
int rs_setup_clone(const struct rs_setup_clone_options *o, struct rs_buf *dir_out);

/*
 * Turn the clone whose work tree is `dir` into the layout rs_setup_clone
 * makes (`results init --sparse`): a cone-mode sparse checkout of the
 * files at the top, without runs/ and index/, and git's sparse index,
 * so that `results add` splices a .git/index of a few entries instead of
 * rewriting three entries a run (docs/benchmarks.md, issue 21). The
 * settings and .git/info/sparse-checkout are written as devclone.c says,
 * then `git read-tree -m -u HEAD` (HEAD must exist) takes the folders out
 * of the work tree and collapses them in the index. First, unless
 * `checked` says the caller ran rs_setup_sparse_check and changed nothing
 * of the user's since, that check. Running it again changes nothing;
 * `*changed` (may be NULL) is set to whether a setting or the patterns
 * were not so yet. RS_EGENERIC when git fails (its first line quoted).
 */
RS_MUST_CHECK
int rs_setup_sparse(const char *dir, int checked, int *changed);

/*
 * Whether rs_setup_sparse may run in the work tree `dir` without losing
 * anything: RS_EUSAGE naming the first paths when the work tree has any
 * uncommitted change to a tracked file (the read-tree of HEAD resets the
 * index: a staged change would go, and the run folders' files leave the
 * work tree), or an untracked file under runs/ or index/. Writes nothing.
 */
RS_MUST_CHECK
int rs_setup_sparse_check(const char *dir);

#endif
