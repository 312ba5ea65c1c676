/*
 * A committed change of remote (.results.json's "remote"): which commit
 * made it, and whether this clone has followed it (git/repo.h:
 * rs_repo_remote_moved, rs_repo_remote_set_by, rs_repo_check_remote).
 *
 * Anyone who can push to the results repository can commit another
 * remote; following it would send every clone's next sessions to a store
 * of theirs. So a clone keeps the remote it was set up for, and every
 * message about a change names the commit and its author, which is what
 * a reader needs to judge it.
 */
#include <string.h>
#include <time.h>

#include <git2.h>

#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"

/* How far back the commit that set the remote is looked for. */
#define WALK_MAX 200000

/*
 * The blob id of RS_REPO_MARKER in `c`; RS_ENOTFOUND when it has none (or
 * its tree is past RS_REPO_TREE_MAX: never read).
 */
static int marker_blob(struct rs_repo *r, git_oid *out, git_commit *c)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	int err = RS_ENOTFOUND;

	if (rs_repo_tree_capped(&tree, r->git, git_commit_tree_id(c), "a commit's tree") == 0 &&
	    git_tree_entry_bypath(&e, tree, RS_REPO_MARKER) == 0 &&
	    git_tree_entry_type(e) == GIT_OBJECT_BLOB) {
		git_oid_cpy(out, git_tree_entry_id(e));
		err = 0;
	}
	git_error_clear();
	rs_error_clear();
	git_tree_entry_free(e);
	git_tree_free(tree);
	return err;
}

/* Does the marker blob `id` name the same store as `remote`? */
static int blob_names(struct rs_repo *r, const git_oid *id, const char *remote)
{
	struct rs_buf url = RS_BUF_INIT;
	git_blob *blob = NULL;
	int same = 0;

	/* The size from the header first: an oversized marker is never read (and names no store). */
	if (rs_repo_blob_capped(&blob, r->git, id, RS_REPO_MARKER_MAX, RS_REPO_MARKER) == 0 &&
	    rs_repo_marker_remote(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob), &url) == 0)
		same = rs_url_same_remote(url.ptr, remote);
	git_error_clear();
	rs_error_clear();
	git_blob_free(blob);
	rs_buf_release(&url);
	return same;
}

/*
 * The parent of `c` that already named `remote` (its marker blob `*blob`
 * updated), or NULL when none did: `c` made the change. `*cut` is set
 * when a parent is missing (a shallow clone's history stops there).
 */
static git_commit *parent_naming(struct rs_repo *r, git_commit *c, git_oid *blob,
				 const char *remote, int *cut)
{
	unsigned int i, n = git_commit_parentcount(c);
	git_commit *p;
	git_oid pb;

	for (i = 0; i < n; i++) {
		/* read within its cap (git/repo.h); a parent not there is a shallow clone's end */
		if (rs_repo_commit_capped(&p, r->git, git_commit_parent_id(c, i), "a parent") != 0) {
			git_error_clear();
			rs_error_clear();
			*cut = 1;
			continue;
		}
		if (marker_blob(r, &pb, p) == 0 &&
		    (git_oid_equal(&pb, blob) || blob_names(r, &pb, remote))) {
			git_oid_cpy(blob, &pb);
			return p;
		}
		git_commit_free(p);
	}
	return NULL;
}

/* `s` (at most `max` bytes of it) for one terminal line: control bytes as '?'. */
static int put_line_text(struct rs_buf *out, const char *s, size_t max)
{
	int err = 0;

	for (size_t i = 0; err == 0 && s[i] && s[i] != '\n' && i < max; i++) {
		unsigned char ch = (unsigned char)s[i];

		err = rs_buf_putc(out, ch < 0x20 || ch == 0x7f ? '?' : (char)ch);
	}
	return err;
}

/* "commit <12 hex> by <name> <<email>> on <date>: "<subject>"" (untrusted text made safe). */
static int describe(struct rs_buf *out, git_commit *c, int cut)
{
	const git_signature *a = git_commit_author(c);
	char hex[GIT_OID_HEXSZ + 1], day[16] = "?";
	time_t when = (time_t)a->when.time;
	struct tm tm;
	int err;

	git_oid_tostr(hex, sizeof(hex), git_commit_id(c));
	if (gmtime_r(&when, &tm))
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	err = rs_buf_printf(out, "commit %.12s by ", hex);
	if (err == 0)
		err = put_line_text(out, a->name ? a->name : "?", 200);
	if (err == 0)
		err = rs_buf_puts(out, " <");
	if (err == 0)
		err = put_line_text(out, a->email ? a->email : "?", 200);
	if (err == 0)
		err = rs_buf_printf(out, "> on %s: \"", day);
	if (err == 0)
		err = put_line_text(out, git_commit_summary(c) ? git_commit_summary(c) : "", 72);
	if (err == 0)
		err = rs_buf_putc(out, '"');
	if (err == 0 && cut)
		err = rs_buf_puts(out, " (or an earlier commit: this clone's history stops there)");
	return err;
}

int rs_repo_remote_set_by(struct rs_repo *r, struct rs_buf *out)
{
	struct rs_buf remote = RS_BUF_INIT;
	git_commit *c = NULL, *p;
	git_oid head, blob;
	int err, cut = 0;

	err = rs_repo_committed_remote(r, &remote);
	if (err)
		goto out;
	if (rs_repo_rev_commit(&head, r->git, NULL) != 0 ||
	    rs_repo_commit_capped(&c, r->git, &head, "HEAD") != 0 || marker_blob(r, &blob, c) != 0) {
		git_error_clear();
		err = rs_error_set(RS_ENOTFOUND, "no commit names the remote");
		goto out;
	}
	for (long steps = 0;; steps++) {
		if (steps == WALK_MAX) {
			cut = 1; /* not found within reach: say so */
			break;
		}
		cut = 0;
		p = parent_naming(r, c, &blob, remote.ptr, &cut);
		if (!p)
			break;
		git_commit_free(c);
		c = p;
	}
	err = describe(out, c, cut);
out:
	git_commit_free(c);
	rs_buf_release(&remote);
	return err;
}

int rs_repo_remote_moved(struct rs_repo *r, const char *committed, const char *local)
{
	struct rs_buf followed = RS_BUF_INIT;
	int have, moved;

	/* The committed remote this clone was set up for: while it is still
	   the committed one, a results.remote set by hand (a mirror, a
	   proxy) is this clone's choice, not a change it missed. */
	have = rs_repo_config_get(r, RS_REPO_FOLLOWED_KEY, &followed) == 0 && followed.len > 0;
	rs_error_clear();
	moved = !rs_url_same_remote(committed, have ? followed.ptr : local);
	rs_buf_release(&followed);
	return moved;
}

int rs_repo_remote_moved_error(struct rs_repo *r, int code, const char *committed,
			       const char *local)
{
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT, by = RS_BUF_INIT;
	int err;

	err = rs_url_strip_credentials(&a, committed);
	if (err == 0)
		err = rs_url_strip_credentials(&b, local);
	if (err == 0 && rs_repo_remote_set_by(r, &by) != 0) {
		rs_buf_clear(&by);
		err = rs_buf_puts(&by, "a commit this clone cannot name");
	}
	if (err == 0)
		err = rs_error_set(code, "the committed remote is '%s' (set in %s by %s), this "
				   "clone uses '%s' and keeps it: check that commit; to follow it, "
				   "run 'results init --follow-remote'; to keep '%s', run 'results "
				   "init --change-remote --remote %s' and push", a.ptr,
				   RS_REPO_MARKER, by.ptr, b.ptr, b.ptr, b.ptr);
	rs_buf_release(&a);
	rs_buf_release(&b);
	rs_buf_release(&by);
	return err;
}

int rs_repo_check_remote(struct rs_repo *r)
{
	struct rs_buf committed = RS_BUF_INIT, local = RS_BUF_INIT;
	int err;

	err = rs_repo_committed_remote(r, &committed);
	if (err == 0)
		err = rs_repo_config_get(r, RS_REPO_REMOTE_KEY, &local);
	if (err == RS_ENOTFOUND || (err == 0 && local.len == 0)) {
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	if (rs_repo_remote_moved(r, committed.ptr, local.ptr))
		err = rs_repo_remote_moved_error(r, RS_EGENERIC, committed.ptr, local.ptr);
out:
	rs_buf_release(&committed);
	rs_buf_release(&local);
	return err;
}

int rs_repo_check_remote_arg(struct rs_repo *r, const char *url)
{
	struct rs_buf committed = RS_BUF_INIT;
	int err;

	err = rs_repo_committed_remote(r, &committed);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err == 0 && !rs_url_same_remote(committed.ptr, url))
		err = rs_repo_remote_moved_error(r, RS_EUSAGE, committed.ptr, url);
out:
	rs_buf_release(&committed);
	return err;
}
