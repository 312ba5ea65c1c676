/*
 * The git remote's refs for retention (git/gitremote.h): `git ls-remote`,
 * then `git fetch` of the tips this clone lacks into refs/results/gc/.
 *
 * Why the git program and not libgit2's remote API: Debian's libgit2 1.5
 * cannot fetch into a shallow clone (CI's `--depth 1` checkouts), and it
 * knows neither git's credential helpers nor the http.extraheader that
 * actions/checkout sets; `git` does all of that as the user's own fetch
 * does. Every wait on it has a deadline, its output a cap.
 */
#define _GNU_SOURCE
#include "git/gitremote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "results/buf.h"
#include "util/array.h"

extern char **environ;

#define LS_DEADLINE_S 120     /* listing the refs */
#define FETCH_DEADLINE_S 1800 /* fetching the missing tips */
#define GIT_STDERR_MAX 4096   /* what of git's complaint the message quotes */
#define FETCH_BATCH 256       /* refspecs per `git fetch` */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read what is there on `*fd` into `out` (past `max`: `*over`); EOF closes it. */
static void drain(int *fd, struct rs_buf *out, size_t max, int *over)
{
	char chunk[16384];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(*fd);
		*fd = -1;
		return;
	}
	if (out->len + (size_t)n > max) {
		*over = 1;
		return;
	}
	if (rs_buf_put(out, chunk, (size_t)n))
		*over = 1;
}

/*
 * The environment of the child: `extra` (NULL-terminated; may be NULL),
 * then ours, with prompts for credentials off.
 */
static char **child_env(const char *const *extra)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[k])
		k++;
	env = calloc(n + k + 2, sizeof(*env));
	if (!env)
		return NULL;
	/* First, so that they win over one of the caller's (getenv takes the first). */
	for (size_t i = 0; i < k; i++)
		env[i] = (char *)extra[i];
	env[k] = "GIT_TERMINAL_PROMPT=0";
	memcpy(env + k + 1, environ, n * sizeof(*env));
	return env;
}

int rs_git_run(const char *gitdir_path, const char *const *env_extra, const char *const *args,
	       size_t nargs, struct rs_buf *out, size_t max, int deadline_s, const char *what)
{
	struct rs_buf gitdir = RS_BUF_INIT, errtext = RS_BUF_INIT;
	posix_spawn_file_actions_t fa;
	int opipe[2] = { -1, -1 }, epipe[2] = { -1, -1 }, fa_ready = 0, over = 0, timed_out = 0;
	char **argv = NULL, **env = NULL;
	double end = now_s() + deadline_s;
	pid_t pid = -1;
	size_t k;
	int st = 0, rc, err = 0;

	if (gitdir_path) {
		err = rs_buf_printf(&gitdir, "--git-dir=%s", gitdir_path);
		if (err)
			goto out;
	}
	argv = calloc(nargs + 3, sizeof(*argv));
	env = child_env(env_extra);
	if (!argv || !env || pipe2(opipe, O_CLOEXEC) || pipe2(epipe, O_CLOEXEC)) {
		err = rs_error_errno(RS_EGENERIC, "cannot run 'git %s'", what);
		goto out;
	}
	argv[0] = "git";
	k = 1;
	if (gitdir_path)
		argv[k++] = gitdir.ptr;
	for (size_t i = 0; i < nargs; i++)
		argv[k++] = (char *)args[i];
	if (posix_spawn_file_actions_init(&fa)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	fa_ready = 1;
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, opipe[1], 1);
	posix_spawn_file_actions_adddup2(&fa, epipe[1], 2);
	rc = posix_spawnp(&pid, "git", &fa, NULL, argv, env);
	if (rc) {
		errno = rc;
		pid = -1;
		err = rs_error_errno(RS_EGENERIC, "cannot run 'git %s'", what);
		goto out;
	}
	close(opipe[1]);
	close(epipe[1]);
	opipe[1] = epipe[1] = -1;
	while (opipe[0] >= 0 || epipe[0] >= 0) {
		struct pollfd pf[2] = { { opipe[0], POLLIN, 0 }, { epipe[0], POLLIN, 0 } };
		double left = end - now_s();

		if (left <= 0 || over) {
			timed_out = left <= 0;
			break;
		}
		if (poll(pf, 2, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (opipe[0] >= 0 && pf[0].revents)
			drain(&opipe[0], out, max, &over);
		if (epipe[0] >= 0 && pf[1].revents) {
			int eover = 0;

			drain(&epipe[0], &errtext, GIT_STDERR_MAX, &eover);
			if (eover) /* keep the start of the complaint, drop the rest */
				rs_buf_clear(&errtext);
		}
	}
	if (opipe[0] >= 0 || epipe[0] >= 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	pid = -1;
	if (timed_out) {
		err = rs_error_set(RS_EGENERIC, "'git %s' did not finish within %d s", what, deadline_s);
		goto out;
	}
	if (over) {
		err = rs_error_set(RS_ECORRUPT, "'git %s' answered more than %zu bytes", what, max);
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		/* git's first line says what ("fatal: ... does not appear to be a git repository"). */
		size_t n = strcspn(rs_buf_cstr(&errtext), "\r\n");

		err = rs_error_set(RS_EGENERIC, "'git %s' failed%s%.*s", what, n ? ": " : "", (int)n,
				   rs_buf_cstr(&errtext));
	}
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (fa_ready)
		posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < 2; i++) {
		if (opipe[i] >= 0)
			close(opipe[i]);
		if (epipe[i] >= 0)
			close(epipe[i]);
	}
	free(argv);
	free(env);
	rs_buf_release(&gitdir);
	rs_buf_release(&errtext);
	return err;
}

/* rs_git_run in `gitdir_path` with our environment. */
static int run_git(const char *gitdir_path, const char *const *args, size_t nargs, struct rs_buf *out,
		   size_t max, int deadline_s, const char *what)
{
	return rs_git_run(gitdir_path, NULL, args, nargs, out, max, deadline_s, what);
}

/* The git remote retention asks: the upstream's of HEAD's branch, else "origin"; NULL: none. */
static int pick_remote(char **out, struct rs_repo *r)
{
	struct rs_buf key = RS_BUF_INIT, name = RS_BUF_INIT, url = RS_BUF_INIT;
	git_reference *head = NULL;
	int err = 0;

	*out = NULL;
	if (git_repository_head(&head, r->git) == 0 && git_reference_is_branch(head)) {
		err = rs_buf_printf(&key, "branch.%s.remote", git_reference_shorthand(head));
		if (err)
			goto out;
		if (rs_repo_config_get(r, key.ptr, &name) || !strcmp(name.ptr, ".")) {
			rs_error_clear();
			rs_buf_clear(&name);
		}
	}
	git_error_clear();
	if (!name.len) {
		err = rs_buf_puts(&name, "origin");
		if (err)
			goto out;
	}
	/* It becomes an argument of git: never an option. */
	if (name.ptr[0] == '-') {
		err = rs_error_set(RS_EUSAGE, "the git remote '%s' has a name git would take for an option",
				   name.ptr);
		goto out;
	}
	rs_buf_clear(&key);
	err = rs_buf_printf(&key, "remote.%s.url", name.ptr);
	if (err)
		goto out;
	if (rs_repo_config_get(r, key.ptr, &url)) {
		rs_error_clear(); /* no such git remote: a clone of nothing */
		goto out;
	}
	*out = rs_buf_detach(&name, NULL);
	if (!*out)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	git_reference_free(head);
	rs_buf_release(&key);
	rs_buf_release(&name);
	rs_buf_release(&url);
	return err;
}

void rs_git_refs_release(struct rs_git_refs *refs)
{
	for (size_t i = 0; i < refs->n; i++)
		free(refs->refs[i].name);
	free(refs->refs);
	free(refs->remote);
	memset(refs, 0, sizeof(*refs));
}

/* Drop the refs listed so far (an error leaves only the remote's name). */
static void forget_refs(struct rs_git_refs *refs)
{
	for (size_t i = 0; i < refs->n; i++)
		free(refs->refs[i].name);
	free(refs->refs);
	refs->refs = NULL;
	refs->n = refs->alloc = 0;
}

/* One line of `git ls-remote --refs`: "<hex oid>\t<refname>". */
static int parse_ls_line(struct rs_git_refs *refs, const char *p, size_t len)
{
	struct rs_git_ref *ref;
	const char *tab = memchr(p, '\t', len);
	size_t nlen;
	int valid = 0;

	if (!tab || tab - p != GIT_OID_HEXSZ)
		return rs_error_set(RS_ECORRUPT, "'git ls-remote' answered a line without an object id");
	nlen = len - GIT_OID_HEXSZ - 1;
	if (refs->n >= RS_GIT_REFS_MAX)
		return rs_error_set(RS_ECORRUPT, "the git remote has more than %d refs", RS_GIT_REFS_MAX);
	if (rs_array_grow((void **)&refs->refs, &refs->alloc, refs->n + 1, sizeof(*ref), 16))
		return rs_error_set(RS_EGENERIC, "out of memory");
	ref = &refs->refs[refs->n];
	if (git_oid_fromstrn(&ref->oid, p, GIT_OID_HEXSZ) < 0) {
		git_error_clear();
		return rs_error_set(RS_ECORRUPT, "'git ls-remote' answered a bad object id");
	}
	ref->name = strndup(tab + 1, nlen);
	if (!ref->name)
		return rs_error_set(RS_EGENERIC, "out of memory");
	refs->n++;
	/* The name becomes one of ours (refs/results/gc/...): git's rules, and no oddities. */
	if (strlen(ref->name) != nlen || git_reference_name_is_valid(&valid, ref->name) < 0 || !valid ||
	    (strncmp(ref->name, "refs/heads/", 11) && strncmp(ref->name, "refs/tags/", 10))) {
		git_error_clear();
		return rs_error_set(RS_ECORRUPT, "the git remote names a ref that is not a valid "
				    "branch or tag name");
	}
	return 0;
}

static int parse_ls(struct rs_git_refs *refs, const struct rs_buf *text)
{
	const char *p = text->ptr, *end = text->ptr + text->len;
	int err = 0;

	while (p && p < end && !err) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (len)
			err = parse_ls_line(refs, p, len);
		p = nl ? nl + 1 : NULL;
	}
	return err;
}

/* refs/results/gc/<name without "refs/"> into `out`. */
static int namespace_name(struct rs_buf *out, const char *name)
{
	rs_buf_clear(out);
	return rs_buf_printf(out, "%s%s", RS_GIT_REFS_NAMESPACE, name + 5);
}

/* Whether `name` is one of the listed refs' namespace names. */
static int listed(const struct rs_git_refs *refs, const char *name)
{
	size_t plen = strlen(RS_GIT_REFS_NAMESPACE);

	for (size_t i = 0; i < refs->n; i++)
		if (!strcmp(refs->refs[i].name + 5, name + plen))
			return 1;
	return 0;
}

/*
 * The namespace mirrors the listing: a ref for each listed tip this clone
 * has, none for branches the remote no longer has (so that git's own gc
 * may drop them).
 */
static int mirror_namespace(struct rs_repo *r, const struct rs_git_refs *refs)
{
	struct rs_buf name = RS_BUF_INIT;
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	int err = 0;

	for (size_t i = 0; i < refs->n && !err; i++) {
		err = namespace_name(&name, refs->refs[i].name);
		if (err)
			break;
		if (git_reference_create(&ref, r->git, name.ptr, &refs->refs[i].oid, 1,
					 "results: tip of the git remote, for retention") < 0)
			err = rs_error_set(RS_EGENERIC, "cannot write ref '%s': %s", name.ptr,
					   git_error_last()->message);
		git_reference_free(ref);
		ref = NULL;
	}
	if (err)
		goto out;
	if (git_reference_iterator_glob_new(&it, r->git, RS_GIT_REFS_NAMESPACE "*") < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot list the refs: %s", git_error_last()->message);
		goto out;
	}
	while (!err && git_reference_next(&ref, it) == 0) {
		if (!listed(refs, git_reference_name(ref)) && git_reference_delete(ref) < 0)
			err = rs_error_set(RS_EGENERIC, "cannot delete ref '%s': %s", git_reference_name(ref),
					   git_error_last()->message);
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	rs_buf_release(&name);
	return err;
}

/*
 * Fetch the tips of refs[from..to) that this clone lacks (`missing`
 * marks them), in one `git fetch`, then take the tip as fetched: the ref
 * may have moved since it was listed, and the newer tip is what counts.
 */
static int fetch_batch(struct rs_repo *r, struct rs_git_refs *refs, const unsigned char *missing,
		       size_t from, size_t to)
{
	const char *args[FETCH_BATCH + 8];
	struct rs_buf specs[FETCH_BATCH], name = RS_BUF_INIT, ignored = RS_BUF_INIT;
	size_t nargs = 0, nspecs = 0;
	int err = 0;

	args[nargs++] = "fetch";
	args[nargs++] = "--quiet";
	args[nargs++] = "--no-tags";
	args[nargs++] = "--no-write-fetch-head";
	args[nargs++] = "--no-recurse-submodules";
	/* Depth 1 keeps a shallow clone shallow; a full clone gets the whole
	   history as a plain fetch would (a depth would make it shallow). */
	if (git_repository_is_shallow(r->git) == 1)
		args[nargs++] = "--depth=1";
	args[nargs++] = refs->remote;
	for (size_t i = from; i < to && !err; i++) {
		if (!missing[i])
			continue;
		rs_buf_init(&specs[nspecs], 0);
		err = rs_buf_printf(&specs[nspecs], "+%s:%s%s", refs->refs[i].name, RS_GIT_REFS_NAMESPACE,
				    refs->refs[i].name + 5);
		args[nargs++] = specs[nspecs++].ptr;
	}
	if (!err)
		err = run_git(r->gitdir, args, nargs, &ignored, 1u << 20, FETCH_DEADLINE_S, "fetch");
	for (size_t i = from; i < to && !err; i++) {
		if (!missing[i])
			continue;
		err = namespace_name(&name, refs->refs[i].name);
		if (!err && git_reference_name_to_id(&refs->refs[i].oid, r->git, name.ptr) < 0)
			err = rs_error_set(RS_EGENERIC, "'git fetch' did not bring '%s'", refs->refs[i].name);
		refs->fetched++;
	}
	for (size_t k = 0; k < nspecs; k++)
		rs_buf_release(&specs[k]);
	rs_buf_release(&name);
	rs_buf_release(&ignored);
	git_error_clear();
	return err;
}

/* The listed tips this clone lacks: fetched (`fetch`), or an error. */
static int complete_tips(struct rs_repo *r, struct rs_git_refs *refs, int fetch)
{
	unsigned char *missing = calloc(refs->n + 1, 1);
	git_odb *odb = NULL;
	size_t nmissing = 0, first = 0;
	int err = 0;

	if (!missing)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (git_repository_odb(&odb, r->git) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot open the object database: %s",
				   git_error_last()->message);
		goto out;
	}
	for (size_t i = 0; i < refs->n; i++) {
		missing[i] = !git_odb_exists(odb, &refs->refs[i].oid);
		if (missing[i] && !nmissing++)
			first = i;
	}
	if (nmissing && !fetch) {
		err = rs_error_set(RS_ENOTFOUND, "this clone does not have the tip of '%s' (and %zu more) of "
				   "the git remote '%s', and --no-fetch was given", refs->refs[first].name,
				   nmissing - 1, refs->remote);
		goto out;
	}
	for (size_t from = 0; from < refs->n && nmissing && !err; from += FETCH_BATCH) {
		size_t to = refs->n - from > FETCH_BATCH ? from + FETCH_BATCH : refs->n;

		err = fetch_batch(r, refs, missing, from, to);
	}
out:
	git_odb_free(odb);
	free(missing);
	return err;
}

int rs_git_refs_sync(struct rs_git_refs *out, struct rs_repo *r, int fetch)
{
	const char *ls[] = { "ls-remote", "--refs", "--heads", "--tags", NULL };
	struct rs_buf text = RS_BUF_INIT;
	int err;

	rs_git_refs_release(out);
	err = pick_remote(&out->remote, r);
	if (err || !out->remote)
		return err;
	ls[4] = out->remote;
	err = run_git(r->gitdir, ls, 5, &text, RS_GIT_LS_MAX, LS_DEADLINE_S, "ls-remote");
	if (!err)
		err = parse_ls(out, &text);
	if (!err)
		err = complete_tips(r, out, fetch);
	if (!err && fetch)
		err = mirror_namespace(r, out);
	if (err) {
		forget_refs(out);
		err = rs_error_wrap(err, "cannot see the refs of the git remote '%s'", out->remote);
	}
	rs_buf_release(&text);
	return err;
}

/*
 * The promisor remote of a partial clone into `out`: extensions.partialClone,
 * else the first remote.<name>.promisor that is true (what git writes
 * today). Nonzero when there is none.
 */
static int promisor_remote(git_buf *out, git_config *cfg)
{
	git_config_iterator *it = NULL;
	git_config_entry *e;
	int found = 0, yes;

	if (git_config_get_string_buf(out, cfg, "extensions.partialclone") == 0)
		return 0;
	if (git_config_iterator_glob_new(&it, cfg, "^remote\\..*\\.promisor$") < 0)
		return -1;
	while (!found && git_config_next(&e, it) == 0) {
		size_t len = strlen(e->name);

		if (git_config_parse_bool(&yes, e->value) == 0 && yes && len > 16) {
			git_buf_dispose(out);
			found = git_buf_set(out, e->name + 7, len - 16) == 0;
		}
	}
	git_config_iterator_free(it);
	return found ? 0 : -1;
}

int rs_git_fetch_promised(git_repository *git, const git_oid *id, const char *what)
{
	struct rs_buf answer = RS_BUF_INIT;
	git_config *cfg = NULL;
	git_buf remote = { 0 };
	char hex[GIT_OID_HEXSZ + 1];
	const char *args[] = { "cat-file", "-t", hex };
	int err;

	/* Only a partial clone (git clone --filter) has a remote that promised the object. */
	if (git_repository_config_snapshot(&cfg, git) < 0 || promisor_remote(&remote, cfg)) {
		git_error_clear();
		err = RS_ENOTFOUND;
		goto out;
	}
	git_oid_tostr(hex, sizeof(hex), id);
	/* git fetches what a partial clone lacks from its promisor remote, and keeps it. */
	err = run_git(git_repository_path(git), args, 3, &answer, 64, FETCH_DEADLINE_S, "cat-file");
	if (err)
		err = rs_error_wrap(RS_ERETRY, "'%s' is not in this partial clone and cannot be fetched from its "
				    "git remote '%s' (offline?)", what, remote.ptr);
out:
	git_buf_dispose(&remote);
	git_config_free(cfg);
	rs_buf_release(&answer);
	return err;
}

/*
 * One `git fetch` of the objects ids[at[0..n)] from `remote`, as git's
 * own lazy fetch asks for them (promisor-remote.c): explicit wants, no
 * negotiation (the noop algorithm sends no "have" lines: the clone's
 * commits say nothing of which blobs it lacks), no tags, no FETCH_HEAD,
 * and the filter again so that nothing else comes along.
 */
static int fetch_oids(git_repository *git, const char *remote, const git_oid *ids,
		      const size_t *at, size_t n)
{
	static const char *const head[] = {
		"-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", "--recurse-submodules=no", "--no-auto-gc",
		"--filter=blob:none", "--",
	};
	const size_t nhead = sizeof(head) / sizeof(head[0]);
	struct rs_buf ignored = RS_BUF_INIT;
	const char **args = calloc(nhead + 1 + n, sizeof(*args));
	char (*hex)[GIT_OID_HEXSZ + 1] = calloc(n ? n : 1, sizeof(*hex));
	size_t nargs = 0;
	int err;

	if (!args || !hex) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nhead; i++)
		args[nargs++] = head[i];
	args[nargs++] = remote;
	for (size_t i = 0; i < n; i++) {
		git_oid_tostr(hex[i], sizeof(hex[i]), &ids[at[i]]);
		args[nargs++] = hex[i];
	}
	err = run_git(git_repository_path(git), args, nargs, &ignored, 1u << 20, FETCH_DEADLINE_S,
		      "fetch");
out:
	free(args);
	free(hex);
	rs_buf_release(&ignored);
	return err;
}

int rs_git_fetch_promised_many(git_repository *git, const git_oid *ids, const char *const *what,
			       size_t n, size_t *fetched)
{
	git_config *cfg = NULL;
	git_buf remote = { 0 };
	git_odb *odb = NULL;
	size_t *missing = NULL, nmissing = 0;
	int err = 0;

	if (fetched)
		*fetched = 0;
	if (n == 0)
		goto out;
	if (git_repository_odb(&odb, git) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot open the object database: %s",
				   git_error_last()->message);
		goto out;
	}
	missing = calloc(n, sizeof(*missing));
	if (!missing) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	/* no refresh on a miss (a rescan of the pack folder each): one is made
	   after the fetch */
	for (size_t i = 0; i < n; i++) {
		if (!git_odb_exists_ext(odb, &ids[i], GIT_ODB_LOOKUP_NO_REFRESH))
			missing[nmissing++] = i;
	}
	git_error_clear();
	/* Nothing missing (a full clone, or a partial one that holds them):
	   done, before the config is looked through (libgit2 1.5's glob of
	   config names leaks pcre2's match data at every call). */
	if (nmissing == 0)
		goto out;
	/* Only a partial clone has a remote that promised what it lacks. */
	if (git_repository_config_snapshot(&cfg, git) < 0 || promisor_remote(&remote, cfg)) {
		git_error_clear();
		goto out;
	}
	/* The remote's name comes from the clone's own config: refuse one git
	   would read as an option (it follows "--", but a remote named "-x"
	   is no remote results set up). */
	if (!remote.ptr || !*remote.ptr || remote.ptr[0] == '-') {
		err = rs_error_set(RS_EGENERIC, "the promisor remote of this partial clone ('%s') "
				   "is not a git remote name", remote.ptr ? remote.ptr : "");
		goto out;
	}
	for (size_t from = 0; from < nmissing; from += RS_GIT_FETCH_OIDS_MAX) {
		size_t k = nmissing - from > RS_GIT_FETCH_OIDS_MAX ? RS_GIT_FETCH_OIDS_MAX
								     : nmissing - from;

		err = fetch_oids(git, remote.ptr, ids, missing + from, k);
		if (err) {
			err = rs_error_wrap(RS_ERETRY, "'%s' (and %zu more of the files needed) is not "
					    "in this partial clone and cannot be fetched from its git "
					    "remote '%s' (offline?)", what[missing[from]],
					    nmissing - from - 1, remote.ptr);
			goto out;
		}
		if (fetched)
			*fetched += k;
	}
	/* the new packs are seen once the odb looks again */
	if (nmissing)
		git_odb_refresh(odb);
out:
	free(missing);
	git_odb_free(odb);
	git_buf_dispose(&remote);
	git_config_free(cfg);
	return err;
}

/* "blob:limit=<n>[kmg]" (git's spelling, git_parse_ulong's suffixes) into *out; nonzero for any other filter. */
static int parse_blob_limit(size_t *out, const char *filter)
{
	static const char prefix[] = "blob:limit=";
	unsigned long long n = 0, unit = 1;
	const char *p;

	if (strncmp(filter, prefix, sizeof(prefix) - 1) != 0)
		return -1;
	p = filter + sizeof(prefix) - 1;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (SIZE_MAX - 9) / 10)
			return -1;
		n = n * 10 + (unsigned long long)(*p - '0');
	}
	if (*p == 'k' || *p == 'K')
		unit = 1024;
	else if (*p == 'm' || *p == 'M')
		unit = 1024 * 1024;
	else if (*p == 'g' || *p == 'G')
		unit = 1024 * 1024 * 1024;
	if (unit > 1)
		p++;
	if (*p || n > SIZE_MAX / unit)
		return -1;
	*out = (size_t)(n * unit);
	return 0;
}

size_t rs_git_promised_min_size(git_repository *git)
{
	git_config *cfg = NULL;
	git_buf remote = { 0 }, filter = { 0 };
	struct rs_buf key = RS_BUF_INIT;
	size_t min = 0;

	if (git_repository_config_snapshot(&cfg, git) < 0 || promisor_remote(&remote, cfg))
		goto out;
	if (rs_buf_printf(&key, "remote.%s.partialclonefilter", remote.ptr) != 0) {
		/* out of memory: knowing nothing of the filter is the safe answer */
		rs_error_clear();
		goto out;
	}
	if (git_config_get_string_buf(&filter, cfg, key.ptr) == 0 && parse_blob_limit(&min, filter.ptr))
		min = 0;
out:
	git_error_clear();
	rs_buf_release(&key);
	git_buf_dispose(&filter);
	git_buf_dispose(&remote);
	git_config_free(cfg);
	return min;
}
