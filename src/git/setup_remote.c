/*
 * results/setup.h: which remote and which repository `results init` sets
 * up, before setup.c writes anything.
 */
#include "results/setup.h"

#include "remote/remote.h"
#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"

/* Refuse a URL no backend understands; anything else is doctor's business. */
static int check_remote_url(const char *url)
{
	struct rs_remote *rem = NULL;
	int err = rs_remote_open(&rem, url, NULL);

	rs_remote_free(rem);
	if (err == RS_EUSAGE)
		return err;
	rs_error_clear();
	return 0;
}

/* `url` without credentials, appended to `out`, after check_remote_url. */
static int checked_shown(struct rs_buf *shown, const char *url)
{
	int err = check_remote_url(url);

	if (err)
		return err;
	return rs_url_strip_credentials(shown, url);
}

/*
 * --remote against `current` (the committed remote, else this clone's).
 * A --remote that differs from the committed one is refused unless
 * `change` says the move is meant: it names both and the commit that set
 * the committed one, so that a CI job whose configured remote no longer
 * matches what someone committed fails instead of following either.
 */
static int take_remote_arg(struct rs_repo *r, const char *remote_arg, const char *current,
			   int committed, int change, struct rs_buf *url, struct rs_buf *old)
{
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT, by = RS_BUF_INIT, where = RS_BUF_INIT;
	int err = 0;

	if (current && !rs_url_same_remote(current, remote_arg)) {
		err = rs_url_strip_credentials(&a, current);
		if (err)
			goto out;
		err = rs_url_strip_credentials(&b, remote_arg);
		if (err)
			goto out;
		if (!change) {
			if (!committed)
				err = rs_buf_puts(&by, "results.remote of this clone");
			else if (rs_repo_remote_set_by(r, &where) == 0)
				err = rs_buf_printf(&by, "set in " RS_REPO_MARKER " by %s", where.ptr);
			else
				err = rs_buf_puts(&by, "committed in " RS_REPO_MARKER);
			rs_error_clear();
			if (err)
				goto out;
			err = rs_error_set(RS_EUSAGE, "this repository's remote is '%s' (%s), --remote "
					   "names '%s': check that; to move it, run 'results init "
					   "--change-remote --remote %s'; to take it, run 'results "
					   "init' without --remote", a.ptr, by.ptr, b.ptr, b.ptr);
			goto out;
		}
		err = rs_buf_puts(old, a.ptr);
		if (err)
			goto out;
	}
	err = rs_buf_puts(url, remote_arg);
out:
	rs_buf_release(&a);
	rs_buf_release(&b);
	rs_buf_release(&by);
	rs_buf_release(&where);
	return err;
}

/*
 * A bare init with a committed remote: a fresh clone (no results.remote)
 * takes it; a set-up clone keeps its remote when the committed one is
 * still the one it was set up for (its results.remote, or the committed
 * one when results.remote names another store: a mirror set by hand
 * goes back to the committed remote), and refuses a committed change it
 * has not followed unless `follow` (--follow-remote).
 */
static int take_committed(struct rs_repo *r, const struct rs_buf *committed,
			  const struct rs_buf *local, int follow, struct rs_buf *url,
			  struct rs_buf *old)
{
	int err;

	if (!local->len)
		return rs_buf_puts(url, committed->ptr);
	if (!follow && rs_repo_remote_moved(r, committed->ptr, local->ptr))
		return rs_repo_remote_moved_error(r, RS_EUSAGE, committed->ptr, local->ptr);
	if (!rs_url_same_remote(local->ptr, committed->ptr)) {
		err = rs_url_strip_credentials(old, local->ptr);
		if (err)
			return err;
	}
	return rs_buf_puts(url, old->len ? committed->ptr : local->ptr);
}

int rs_setup_choose_remote(struct rs_repo *r, const struct rs_setup_choice *how,
			   struct rs_buf *url, struct rs_buf *shown, struct rs_buf *old,
			   struct rs_buf *set_by)
{
	struct rs_buf committed = RS_BUF_INIT, local = RS_BUF_INIT;
	const char *current;
	int err;

	err = rs_repo_committed_remote(r, &committed);
	if (err && err != RS_ENOTFOUND)
		goto out;
	if (rs_repo_config_get(r, RS_REPO_REMOTE_KEY, &local) != 0)
		rs_buf_clear(&local);
	rs_error_clear();
	current = committed.len ? committed.ptr : local.len ? local.ptr : NULL;
	if (how->remote_arg)
		err = take_remote_arg(r, how->remote_arg, current, committed.len > 0, how->change,
				      url, old);
	else if (committed.len)
		err = take_committed(r, &committed, &local, how->follow, url, old);
	else if (local.len)
		err = rs_buf_puts(url, local.ptr);
	else
		err = rs_error_set(RS_EUSAGE, "no remote known for this repository: run "
				   "'results init --remote URL' (for example "
				   "file:///srv/results-store)");
	if (err)
		goto out;
	err = checked_shown(shown, url->ptr);
	/* Which commit set the remote this clone now takes from .results.json. */
	if (err == 0 && !how->remote_arg && committed.len && rs_url_same_remote(url->ptr, committed.ptr) &&
	    rs_repo_remote_set_by(r, set_by) != 0) {
		rs_buf_clear(set_by);
		rs_error_clear();
	}
out:
	rs_buf_release(&committed);
	rs_buf_release(&local);
	return err;
}

int rs_setup_global_target(struct rs_repo *r, const char *repo_arg, const char *remote_arg,
			   struct rs_buf *endpoint, struct rs_buf *url, struct rs_buf *shown)
{
	struct rs_buf repo_url = RS_BUF_INIT;
	int err;

	if (repo_arg)
		err = rs_buf_puts(&repo_url, repo_arg);
	else if (rs_repo_config_get(r, "remote.origin.url", &repo_url) == 0)
		err = 0; /* Not git_remote_lookup: it leaks pcre2 match data (libgit2 1.5). */
	else
		err = rs_error_set(RS_EUSAGE, "this clone has no 'origin': give --repo GIT-URL");
	if (err)
		goto out;
	err = remote_arg ? rs_buf_puts(url, remote_arg) : rs_repo_remote_url(r, url, NULL);
	if (err == RS_ENOTFOUND)
		err = rs_error_set(RS_EUSAGE, "no remote known: give --remote URL");
	if (err)
		goto out;
	err = check_remote_url(url->ptr);
	if (err)
		goto out;
	/* "https://host/org/": a prefix, which git-lfs matches the way git
	   matches http.<url>.* keys, covering every repository below it. */
	if (repo_url.len && repo_url.ptr[repo_url.len - 1] == '/')
		err = rs_url_strip_credentials(endpoint, repo_url.ptr);
	else
		err = rs_lfs_endpoint(endpoint, repo_url.ptr);
	if (err)
		goto out;
	err = rs_url_strip_credentials(shown, url->ptr);
out:
	rs_buf_release(&repo_url);
	return err;
}
