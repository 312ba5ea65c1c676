/*
 * Revisions and the commits, tags and trees they name, read through caps
 * (git/repo.h: rs_repo_rev_commit, rs_repo_rev_tree, rs_repo_peel_commit,
 * rs_repo_commit_capped, rs_repo_tree_capped, rs_repo_tree_entry_bypath).
 *
 * libgit2's git_revparse_single and git_object_peel read every object of
 * a chain whole before looking at it: a results repository whose HEAD is
 * a 1 GB commit object (a valid header and a huge message), or whose
 * commit names a 1 GB tree, would cost that much memory in every command.
 * Here each object's type and size come from its header first
 * (git_odb_read_header reads a loose object's first bytes, a packed one's
 * entry header), and only commits and tags within RS_REPO_REF_OBJECT_MAX
 * and trees within RS_REPO_TREE_MAX are read. Names resolve through ref
 * files and the object database's index alone (git_reference_dwim,
 * git_odb_exists_prefix), which read no object.
 *
 * The grammar is the part of gitrevisions(7) that results and its users
 * need (repo.h lists it); anything else is refused by name rather than
 * handed to libgit2, which would read it uncapped.
 */
#include <string.h>

#include <git2.h>

#include "git/repo.h"
#include "results/buf.h"
#include "results/error.h"

/* Digits of a ~N or ^N read at most: a billion steps is no history. */
#define REV_COUNT_DIGITS 9
/* Bytes of a revision quoted in messages. */
#define REV_QUOTE "%.200s"

static const char *libgit2_message(void)
{
	const git_error *e = git_error_last();

	return e && e->message ? e->message : "libgit2 error";
}

/*
 * The type of `id` in *type, from its header alone. A commit or tag
 * larger than RS_REPO_REF_OBJECT_MAX and a tree larger than
 * RS_REPO_TREE_MAX are RS_ECORRUPT naming `what` and the object; blobs
 * are never read here, so their size is not judged. RS_ENOTFOUND when
 * the object is missing.
 */
static int checked_header(git_object_t *type, git_odb *odb, const git_oid *id, const char *what)
{
	size_t len = 0, max;
	int gerr;

	gerr = rs_repo_read_header(&len, type, odb, id);
	if (gerr == GIT_ENOTFOUND) {
		git_error_clear();
		return rs_error_set(RS_ENOTFOUND, "%s: no object %s", what, git_oid_tostr_s(id));
	}
	if (gerr < 0)
		return rs_error_set(RS_ECORRUPT, "%s: cannot read the object %s: %s", what,
				    git_oid_tostr_s(id), libgit2_message());
	if (*type == GIT_OBJECT_BLOB)
		return 0;
	max = *type == GIT_OBJECT_TREE ? RS_REPO_TREE_MAX : RS_REPO_REF_OBJECT_MAX;
	if (len > max)
		return rs_error_set(RS_ECORRUPT, "%s: the %s %s is too large (%zu bytes, limit %zu)",
				    what, git_object_type2string(*type), git_oid_tostr_s(id), len, max);
	return 0;
}

static int wrong_type(const char *what, const git_oid *id, git_object_t type, git_object_t want)
{
	return rs_error_set(RS_ECORRUPT, "%s: %s is a %s, not a %s", what, git_oid_tostr_s(id),
			    git_object_type2string(type), git_object_type2string(want));
}

/*
 * `*at` peeled in place to an object of type `want` (a commit, or a tree:
 * a commit peels to its tree) through annotated tags, at most
 * RS_REPO_PEEL_DEPTH of them. Every object's header is checked before it
 * is read, the last one's too, so that what comes out is within its cap.
 * `*end` (may be NULL) is the type of the last object looked at, whose
 * header was read (GIT_OBJECT_INVALID when it is missing).
 */
static int peel_checked(git_oid *at, git_repository *git, git_odb *odb, git_object_t want,
			const char *what, git_object_t *end)
{
	for (int depth = 0;; depth++) {
		git_object_t type = GIT_OBJECT_INVALID;
		git_tag *tag = NULL;
		git_commit *commit = NULL;
		int err;

		err = checked_header(&type, odb, at, what);
		if (end)
			*end = err == RS_ENOTFOUND ? GIT_OBJECT_INVALID : type;
		if (err)
			return err;
		if (type == want)
			return 0;
		if (type == GIT_OBJECT_TAG && depth >= RS_REPO_PEEL_DEPTH)
			return rs_error_set(RS_ECORRUPT, "%s: tags of tags more than %d deep", what,
					    RS_REPO_PEEL_DEPTH);
		if (type == GIT_OBJECT_TAG) {
			if (git_tag_lookup(&tag, git, at) < 0)
				return rs_error_set(RS_ECORRUPT, "%s: cannot read the tag %s: %s", what,
						    git_oid_tostr_s(at), libgit2_message());
			/* the target's id only: git_tag_target would read the target whole */
			git_oid_cpy(at, git_tag_target_id(tag));
			git_tag_free(tag);
			continue;
		}
		if (type == GIT_OBJECT_COMMIT && want == GIT_OBJECT_TREE) {
			if (git_commit_lookup(&commit, git, at) < 0)
				return rs_error_set(RS_ECORRUPT, "%s: cannot read the commit %s: %s",
						    what, git_oid_tostr_s(at), libgit2_message());
			git_oid_cpy(at, git_commit_tree_id(commit));
			git_commit_free(commit);
			continue;
		}
		return wrong_type(what, at, type, want);
	}
}

int rs_repo_peel_commit(git_oid *out, git_repository *git, const git_oid *id)
{
	git_object_t end = GIT_OBJECT_INVALID;
	git_odb *odb = NULL;
	git_oid at;
	int err;

	if (git_repository_odb(&odb, git) < 0)
		return rs_error_set(RS_EGENERIC, "cannot open the object database: %s",
				    libgit2_message());
	git_oid_cpy(&at, id);
	err = peel_checked(&at, git, odb, GIT_OBJECT_COMMIT, "the ref's target", &end);
	git_odb_free(odb);
	git_error_clear();
	/* a blob, a tree or nothing at the end: no commit; a commit or tag refused: said */
	if (err && (end == GIT_OBJECT_INVALID || end == GIT_OBJECT_BLOB || end == GIT_OBJECT_TREE))
		return rs_error_set(RS_ENOTFOUND, "%s names no commit", git_oid_tostr_s(id));
	if (err)
		return err;
	git_oid_cpy(out, &at);
	return 0;
}

/* The object `id` of type `want` in *out, its header checked first (checked_header). */
static int lookup_capped(git_object **out, git_repository *git, const git_oid *id,
			 git_object_t want, const char *what)
{
	git_odb *odb = NULL;
	git_object_t type;
	int err;

	*out = NULL;
	if (git_repository_odb(&odb, git) < 0)
		return rs_error_set(RS_EGENERIC, "cannot open the object database: %s",
				    libgit2_message());
	err = checked_header(&type, odb, id, what);
	if (err)
		goto out;
	if (type != want) {
		err = wrong_type(what, id, type, want);
		goto out;
	}
	if (git_object_lookup(out, git, id, want) < 0) {
		*out = NULL;
		err = rs_error_set(RS_ECORRUPT, "%s: cannot read the %s %s: %s", what,
				   git_object_type2string(want), git_oid_tostr_s(id), libgit2_message());
	}
out:
	git_odb_free(odb);
	return err;
}

int rs_repo_commit_capped(git_commit **out, git_repository *git, const git_oid *id,
			  const char *what)
{
	return lookup_capped((git_object **)out, git, id, GIT_OBJECT_COMMIT, what);
}

int rs_repo_tree_capped(git_tree **out, git_repository *git, const git_oid *id, const char *what)
{
	return lookup_capped((git_object **)out, git, id, GIT_OBJECT_TREE, what);
}

int rs_repo_tree_entry_bypath(git_tree_entry **out, const git_tree *root, const char *path)
{
	git_repository *git = git_tree_owner(root);
	struct rs_buf folder = RS_BUF_INIT;
	const git_tree *at = root;
	git_tree *sub = NULL;
	const char *p = path;
	int err = 0;

	*out = NULL;
	for (;;) {
		size_t n = strcspn(p, "/");
		const git_tree_entry *e;

		err = rs_buf_put(&folder, p, n);
		if (err)
			break;
		e = n ? git_tree_entry_byname(at, folder.ptr + folder.len - n) : NULL;
		if (!e) {
			err = rs_error_set(RS_ENOTFOUND, "no '%s'", path);
			break;
		}
		if (p[n] == '\0' || (p[n] == '/' && p[n + 1] == '\0' &&
				     git_tree_entry_type(e) == GIT_OBJECT_TREE)) {
			/* the last component ("a/" only as a folder, as git_tree_entry_bypath) */
			if (git_tree_entry_dup(out, e) < 0) {
				*out = NULL;
				err = rs_error_set(RS_EGENERIC, "out of memory");
			}
			break;
		}
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			err = rs_error_set(RS_ENOTFOUND, "no '%s'", path);
			break;
		}
		/* a folder on the way: read within RS_REPO_TREE_MAX, named as far as it goes */
		git_tree_free(sub);
		sub = NULL;
		err = rs_repo_tree_capped(&sub, git, git_tree_entry_id(e), folder.ptr);
		if (err)
			break;
		err = rs_buf_putc(&folder, '/');
		if (err)
			break;
		at = sub;
		p += n + 1;
	}
	git_tree_free(sub);
	rs_buf_release(&folder);
	return err;
}

static int is_hex(const char *s, size_t n)
{
	return strspn(s, "0123456789abcdefABCDEF") >= n;
}

static int unread_form(const char *rev)
{
	return rs_error_set(RS_EUSAGE, "revision '" REV_QUOTE "' is not a form results reads: give "
			    "HEAD, a branch, tag or ref, a commit id or a unique prefix of one (4 "
			    "or more hex digits), optionally followed by ~N, ^N, ^{commit} or "
			    "^{tree}", rev);
}

/*
 * The id NAME (a revision's part before its first '~' or '^') names, in
 * *out, as libgit2 and git look it up: a full object id that exists,
 * then a ref (git_reference_dwim's rules, symbolic refs followed), then a
 * unique prefix of an object id. No object is read: the caller peels
 * the id it gets. RS_ENOTFOUND when nothing matches (an unborn HEAD too).
 */
static int resolve_name(git_oid *out, git_repository *git, git_odb *odb, const char *name,
			const char *rev)
{
	git_reference *ref = NULL, *direct = NULL;
	size_t n = strlen(name);
	git_oid prefix;
	int gerr, err = 0;

	if (n == GIT_OID_HEXSZ && is_hex(name, n) && git_oid_fromstr(out, name) == 0 &&
	    git_odb_exists(odb, out))
		goto out;
	gerr = git_reference_dwim(&ref, git, name);
	if (gerr == 0)
		gerr = git_reference_resolve(&direct, ref);
	if (gerr == 0) {
		git_oid_cpy(out, git_reference_target(direct));
		goto out;
	}
	if (gerr != GIT_ENOTFOUND && gerr != GIT_EINVALIDSPEC && gerr != GIT_EUNBORNBRANCH) {
		err = rs_error_set(RS_EGENERIC, "revision '" REV_QUOTE "': cannot read its ref: %s",
				   rev, libgit2_message());
		goto out;
	}
	git_error_clear();
	gerr = GIT_ENOTFOUND;
	if (n >= GIT_OID_MINPREFIXLEN && n < GIT_OID_HEXSZ && is_hex(name, n) &&
	    git_oid_fromstrn(&prefix, name, n) == 0)
		gerr = git_odb_exists_prefix(out, odb, &prefix, n);
	git_error_clear();
	if (gerr == GIT_EAMBIGUOUS)
		err = rs_error_set(RS_EUSAGE, "revision '" REV_QUOTE "' is ambiguous: more than one "
				   "object id starts with '%s'; give more of it", rev, name);
	else if (gerr < 0)
		err = rs_error_set(RS_ENOTFOUND, "no revision '" REV_QUOTE "'", rev);
out:
	git_reference_free(direct);
	git_reference_free(ref);
	return err;
}

/* The N of a "~N" or "^N" at *p (none: 1), *p moved past it. */
static int parse_count(unsigned long *out, const char **p, const char *rev)
{
	size_t n = strspn(*p, "0123456789");

	*out = 1;
	if (n == 0)
		return 0;
	if (n > REV_COUNT_DIGITS)
		return rs_error_set(RS_EUSAGE, "revision '" REV_QUOTE "': a count of more than %d "
				    "digits", rev, REV_COUNT_DIGITS);
	*out = 0;
	for (size_t i = 0; i < n; i++)
		*out = *out * 10 + (unsigned long)((*p)[i] - '0');
	*p += n;
	return 0;
}

/*
 * `*at` moved to its `nth` parent (1-based; 0: the commit itself), each
 * commit's header checked before it is read; `steps` times (a "~N" is N
 * first-parent steps). RS_ENOTFOUND when a parent is not there (a root
 * commit, a shallow clone's boundary).
 */
static int walk_parents(git_oid *at, git_repository *git, git_odb *odb, unsigned long nth,
			unsigned long steps, const char *what)
{
	git_commit *commit = NULL;
	const git_oid *parent;
	int err = 0;

	for (unsigned long i = 0; i < steps; i++) {
		err = peel_checked(at, git, odb, GIT_OBJECT_COMMIT, what, NULL);
		if (err || nth == 0)
			break;
		if (git_commit_lookup(&commit, git, at) < 0) {
			err = rs_error_set(RS_ECORRUPT, "%s: cannot read the commit %s: %s", what,
					   git_oid_tostr_s(at), libgit2_message());
			break;
		}
		parent = nth <= git_commit_parentcount(commit) ?
			 git_commit_parent_id(commit, (unsigned int)(nth - 1)) : NULL;
		if (parent)
			git_oid_cpy(at, parent);
		git_commit_free(commit);
		commit = NULL;
		if (!parent) {
			err = rs_error_set(RS_ENOTFOUND, "%s: no parent %lu", what, nth);
			break;
		}
	}
	return err;
}

/*
 * The id of the object of type `want` (a commit or a tree) that `rev`
 * names, every object on the way read only after its header passed the
 * cap of its type (repo.h: rs_repo_rev_commit).
 */
static int rev_resolve(git_oid *out, git_repository *git, const char *rev, git_object_t want)
{
	struct rs_buf name = RS_BUF_INIT, what = RS_BUF_INIT;
	git_odb *odb = NULL;
	const char *p;
	git_oid at;
	size_t n;
	int err, last = 0;

	if (!rev)
		rev = "HEAD";
	n = strcspn(rev, "~^");
	/* "A:path", ":/text", "@{...}", "A..B", "^A" (and "" ) are not read here */
	if (n == 0 || strchr(rev, ':') || strstr(rev, "@{") || strstr(rev, ".."))
		return unread_form(rev);
	err = rs_buf_printf(&what, "revision '" REV_QUOTE "'", rev);
	if (err)
		goto out;
	err = n == 1 && rev[0] == '@' ? rs_buf_puts(&name, "HEAD") : rs_buf_put(&name, rev, n);
	if (err)
		goto out;
	if (git_repository_odb(&odb, git) < 0) {
		err = rs_error_set(RS_EGENERIC, "cannot open the object database: %s",
				   libgit2_message());
		goto out;
	}
	err = resolve_name(&at, git, odb, name.ptr, rev);
	for (p = rev + n; !err && *p;) {
		unsigned long count;
		char op = *p++;

		/* ^{tree} ends a revision; a suffix is '~' or '^' */
		if (last || (op != '~' && op != '^')) {
			err = unread_form(rev);
			break;
		}
		if (op == '^' && *p == '{') {
			if (strncmp(p, "{commit}", 8) == 0) {
				p += 8;
				err = peel_checked(&at, git, odb, GIT_OBJECT_COMMIT, what.ptr, NULL);
			} else if (strncmp(p, "{tree}", 6) == 0) {
				p += 6;
				last = 1;
				err = peel_checked(&at, git, odb, GIT_OBJECT_TREE, what.ptr, NULL);
			} else {
				err = unread_form(rev);
			}
			continue;
		}
		err = parse_count(&count, &p, rev);
		if (err)
			break;
		if (op == '~')
			err = walk_parents(&at, git, odb, 1, count, what.ptr);
		else
			err = walk_parents(&at, git, odb, count, 1, what.ptr);
	}
	if (err == 0)
		err = peel_checked(&at, git, odb, want, what.ptr, NULL);
	if (err == RS_ENOTFOUND) /* one message for every way of naming nothing, as before */
		err = rs_error_set(RS_ENOTFOUND, "no revision '" REV_QUOTE "'", rev);
	if (err == 0)
		git_oid_cpy(out, &at);
out:
	git_odb_free(odb);
	rs_buf_release(&name);
	rs_buf_release(&what);
	return err;
}

int rs_repo_rev_commit(git_oid *out, git_repository *git, const char *rev)
{
	return rev_resolve(out, git, rev, GIT_OBJECT_COMMIT);
}

int rs_repo_rev_tree(git_tree **out, git_repository *git, const char *rev)
{
	git_oid id;
	int err;

	*out = NULL;
	err = rev_resolve(&id, git, rev, GIT_OBJECT_TREE);
	if (err)
		return err;
	/* its header was checked against RS_REPO_TREE_MAX by rev_resolve */
	if (git_tree_lookup(out, git, &id) < 0) {
		*out = NULL;
		return rs_error_set(RS_ECORRUPT, "revision '" REV_QUOTE "': cannot read the tree %s: %s",
				    rev ? rev : "HEAD", git_oid_tostr_s(&id), libgit2_message());
	}
	return 0;
}
