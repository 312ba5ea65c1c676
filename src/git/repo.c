/*
 * Opening the results repository and the few facts every command needs
 * about it: its config, its committed marker file, its remote and its
 * local LFS object store (.git/lfs/objects, laid out as git-lfs does so
 * that git-lfs and we share it).
 */
#include "git/repo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "git/gitremote.h"
#include "results/error.h"
#include "util/fs.h"

static int git_fail(int code, const char *what)
{
	const git_error *e = git_error_last();

	return rs_error_set(code, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}

static char *dup_str(const char *s)
{
	size_t n = strlen(s);
	char *p = malloc(n + 1);

	if (p)
		memcpy(p, s, n + 1);
	return p;
}

/*
 * libgit2 reads a pack through windows it maps; by default (64-bit) a
 * window is 1 GiB and windows stay mapped up to 8 GiB, so every page a
 * process touches in a pack stays in its resident set until it exits. A
 * command reading every index shard (the first add building the commit
 * map, list --json --limit 0) touched 70 MB of a 324 MB pack at 100,000
 * runs, growing with the history (issue 21, docs/benchmarks.md). Small
 * windows, of which the least recently used are unmapped past a bound,
 * keep that bounded whatever the pack holds; the pages stay in the page
 * cache, so reading them again costs a mapping, not a disk read.
 */
void rs_repo_global_init(void)
{
	git_libgit2_init();
	/* best effort: a libgit2 refusing them maps packs as before */
	(void)git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, (size_t)RS_REPO_PACK_WINDOW);
	(void)git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)RS_REPO_PACK_MAPPED);
}

void rs_repo_global_shutdown(void)
{
	git_libgit2_shutdown();
}

void rs_repo_libgit2_version(int *major, int *minor, int *rev)
{
	git_libgit2_version(major, minor, rev);
}

int rs_repo_open(struct rs_repo **out, const char *path)
{
	return rs_repo_open_ext(out, path, 0);
}

int rs_repo_open_ext(struct rs_repo **out, const char *path, unsigned flags)
{
	struct rs_repo *r = NULL;
	struct rs_buf lfs = RS_BUF_INIT;
	int err, gerr;

	r = calloc(1, sizeof(*r));
	if (!r)
		return rs_error_set(RS_EGENERIC, "out of memory");
	gerr = git_repository_open_ext(&r->git, path ? path : ".", 0, NULL);
	if (gerr == GIT_ENOTFOUND) {
		err = rs_error_set(RS_ENOTFOUND,
				   "not a results repository (no git repository here); "
				   "run results inside a clone of one");
		goto out;
	}
	if (gerr < 0) {
		err = git_fail(RS_EGENERIC, "cannot open the git repository");
		goto out;
	}
	if (git_repository_is_bare(r->git) && !(flags & RS_REPO_OPEN_BARE)) {
		err = rs_error_set(RS_ENOTFOUND,
				   "not a results repository: '%s' is bare; run results in a clone "
				   "with a working tree", git_repository_path(r->git));
		goto out;
	}
	/* git-lfs's lfs.storage moves the object store; relative to the git dir. */
	r->lfs_dir = NULL;
	{
		struct rs_buf storage = RS_BUF_INIT;

		if (rs_repo_config_get(r, "lfs.storage", &storage) == 0 && storage.len)
			err = storage.ptr[0] == '/' ? rs_buf_puts(&lfs, storage.ptr)
			      : rs_buf_printf(&lfs, "%s%s", git_repository_commondir(r->git),
					      storage.ptr);
		else
			err = rs_buf_printf(&lfs, "%slfs", git_repository_commondir(r->git));
		rs_buf_release(&storage);
		if (err == 0)
			rs_error_clear(); /* lfs.storage unset is no error */
	}
	if (err)
		goto out;
	while (lfs.len > 1 && lfs.ptr[lfs.len - 1] == '/')
		lfs.ptr[--lfs.len] = '\0';
	r->workdir = git_repository_is_bare(r->git) ? NULL
						    : dup_str(git_repository_workdir(r->git));
	r->gitdir = dup_str(git_repository_commondir(r->git));
	r->lfs_dir = rs_buf_detach(&lfs, NULL);
	if ((!r->workdir && !git_repository_is_bare(r->git)) || !r->gitdir || !r->lfs_dir) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	*out = r;
	r = NULL;
	err = 0;
out:
	rs_buf_release(&lfs);
	rs_repo_free(r);
	return err;
}

void rs_repo_free(struct rs_repo *r)
{
	if (!r)
		return;
	rs_config_free(r->config);
	git_repository_free(r->git);
	free(r->workdir);
	free(r->gitdir);
	free(r->lfs_dir);
	free(r);
}

int rs_repo_config_get(struct rs_repo *r, const char *key, struct rs_buf *out)
{
	git_config *cfg = NULL;
	git_buf val = { 0 };
	int gerr, err;

	if (git_repository_config(&cfg, r->git) < 0)
		return git_fail(RS_EGENERIC, "cannot read the git config");
	gerr = git_config_get_string_buf(&val, cfg, key);
	if (gerr == GIT_ENOTFOUND)
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not set in the git config", key);
	else if (gerr < 0)
		err = git_fail(RS_EGENERIC, "cannot read the git config");
	else
		err = rs_buf_puts(out, val.ptr);
	git_buf_dispose(&val);
	git_config_free(cfg);
	return err;
}

int rs_repo_tree_file_id(git_oid *out, git_tree *tree, const char *path, const char *rev)
{
	git_tree_entry *entry = NULL;
	int err;

	/* each folder on the way read within its cap; one past it is said (RS_ECORRUPT) */
	err = rs_repo_tree_entry_bypath(&entry, tree, path);
	if (err == RS_ENOTFOUND)
		return rs_error_set(RS_ENOTFOUND, "no file '%s' in %s", path, rev);
	if (err)
		return err;
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not a file in %s", path, rev);
	else
		git_oid_cpy(out, git_tree_entry_id(entry));
	git_tree_entry_free(entry);
	return err;
}

int rs_repo_read_tree_file(struct rs_repo *r, const char *rev, const char *path,
			   size_t max, struct rs_buf *out)
{
	git_tree *tree = NULL;
	git_blob *blob = NULL;
	git_oid id;
	int err;

	/* RS_ENOTFOUND "no revision 'HEAD'" when unborn; each object read within its cap */
	err = rs_repo_rev_tree(&tree, r->git, rev);
	if (err)
		goto out;
	err = rs_repo_tree_file_id(&id, tree, path, rev ? rev : "HEAD");
	if (err)
		goto out;
	/* the size from the object's header: a blob past the cap is never read */
	err = rs_repo_blob_capped(&blob, r->git, &id, max, path);
	if (err)
		goto out;
	err = rs_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
out:
	git_blob_free(blob);
	git_tree_free(tree);
	return err;
}

/*
 * The headers read last, by id: an id names its content, so its type and
 * size never change, and a command that reads the same trees again (an
 * add reads index/ for its verdict, its two maps and its README) reads
 * each header once instead of walking its delta chain through the pack
 * again. The cap is judged on
 * every lookup, from the size kept. Missing objects are not kept (a
 * fetch may bring them). Per thread: nothing is shared.
 */
#define HEADER_SLOTS 512
struct header_slot {
	git_oid id;
	size_t len;
	git_object_t type; /* 0: empty */
};
static _Thread_local struct header_slot header_cache[HEADER_SLOTS];

static struct header_slot *header_slot(const git_oid *id)
{
	/* the id is a hash: its first bytes spread the slots evenly */
	return &header_cache[(id->id[0] | (unsigned)id->id[1] << 8) % HEADER_SLOTS];
}

int rs_repo_read_header(size_t *len, git_object_t *type, git_odb *odb, const git_oid *id)
{
	struct header_slot *s = header_slot(id);
	int gerr;

	if (s->type > 0 && git_oid_equal(&s->id, id)) {
		*len = s->len;
		*type = s->type;
		return 0;
	}
	gerr = git_odb_read_header(len, type, odb, id);
	if (gerr == 0) {
		git_oid_cpy(&s->id, id);
		s->len = *len;
		s->type = *type;
	}
	return gerr;
}

int rs_repo_blob_size(size_t *out, git_repository *git, const git_oid *id, const char *what)
{
	git_odb *odb = NULL;
	git_object_t type;
	size_t len;
	int gerr;

	if (git_repository_odb(&odb, git) < 0)
		return git_fail(RS_EGENERIC, "cannot open the object database");
	gerr = rs_repo_read_header(&len, &type, odb, id);
	if (gerr == GIT_ENOTFOUND) {
		/* A partial clone: fetched on demand, then seen once the odb looks again. */
		int err = rs_git_fetch_promised(git, id, what);

		if (err == RS_ENOTFOUND) {
			git_error_set_str(GIT_ERROR_ODB, "object not found");
		} else if (err) {
			git_odb_free(odb);
			return err;
		} else {
			git_odb_refresh(odb);
			gerr = rs_repo_read_header(&len, &type, odb, id);
		}
	}
	git_odb_free(odb);
	if (gerr < 0)
		return git_fail(RS_ECORRUPT, "cannot read a committed file");
	if (type != GIT_OBJECT_BLOB)
		return rs_error_set(RS_ECORRUPT, "'%s' is not a file", what);
	*out = len;
	return 0;
}

int rs_repo_blob_capped(git_blob **out, git_repository *git, const git_oid *id, size_t max,
			const char *what)
{
	size_t len = 0;
	int err;

	*out = NULL;
	err = rs_repo_blob_size(&len, git, id, what);
	if (err)
		return err;
	/* A committed file past the cap of its kind is bad data, not a usage error. */
	if (len > max)
		return rs_error_set(RS_ECORRUPT, "'%s' is too large (%zu bytes, limit %zu)", what,
				    len, max);
	if (git_blob_lookup(out, git, id) < 0)
		return git_fail(RS_EGENERIC, "cannot read a blob");
	return 0;
}

int rs_repo_read_marker(struct rs_repo *r, const char *rev, json_t **out)
{
	struct rs_buf text = RS_BUF_INIT;
	json_t *root = NULL;
	json_error_t jerr;
	int err;

	*out = NULL;
	err = rs_repo_read_tree_file(r, rev, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &text);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	root = json_loadb(text.ptr, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(root)) {
		json_decref(root);
		err = rs_error_set(RS_ECORRUPT, "'%s' is not a JSON object: %s", RS_REPO_MARKER,
				   jerr.text);
		goto out;
	}
	*out = root;
out:
	rs_buf_release(&text);
	return err;
}

int rs_repo_committed_remote(struct rs_repo *r, struct rs_buf *out)
{
	struct rs_buf text = RS_BUF_INIT;
	int err;

	err = rs_repo_read_tree_file(r, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &text);
	if (err == 0)
		err = rs_repo_marker_remote(text.ptr, text.len, out);
	rs_buf_release(&text);
	return err;
}

int rs_repo_marker_remote(const char *text, size_t len, struct rs_buf *out)
{
	json_t *root = NULL, *remote;
	json_error_t jerr;
	int err;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root || !json_is_object(root)) {
		err = rs_error_set(RS_ECORRUPT, "%s is not a JSON object: %s", RS_REPO_MARKER,
				   jerr.text);
		goto out;
	}
	remote = json_object_get(root, "remote");
	if (!json_is_string(remote) || json_string_length(remote) == 0) {
		err = rs_error_set(RS_ENOTFOUND, "%s names no remote", RS_REPO_MARKER);
		goto out;
	}
	err = rs_buf_puts(out, json_string_value(remote));
out:
	json_decref(root);
	return err;
}

int rs_repo_check_results(struct rs_repo *r)
{
	struct rs_buf tmp = RS_BUF_INIT;
	git_tree *head = NULL;
	git_tree_entry *index = NULL;
	int err;

	err = rs_repo_read_tree_file(r, NULL, RS_REPO_MARKER, RS_REPO_MARKER_MAX, &tmp);
	if (err == RS_ENOTFOUND)
		err = rs_repo_config_get(r, RS_REPO_REMOTE_KEY, &tmp);
	/* an index/ folder in HEAD makes one too (rs_repo_read_tree_file read HEAD's tree) */
	if (err == RS_ENOTFOUND && rs_repo_rev_tree(&head, r->git, NULL) == 0 &&
	    git_tree_entry_bypath(&index, head, "index") == 0 &&
	    git_tree_entry_type(index) == GIT_OBJECT_TREE)
		err = 0;
	git_error_clear();
	if (err == RS_ENOTFOUND || err == RS_EUSAGE || err == RS_ETOOBIG)
		err = rs_error_set(RS_ENOTFOUND,
				   "not a results repository: no %s and no %s in '%s'; "
				   "run 'results init --remote URL' to make it one",
				   RS_REPO_MARKER, RS_REPO_REMOTE_KEY, r->workdir);
	git_tree_entry_free(index);
	git_tree_free(head);
	rs_buf_release(&tmp);
	return err;
}

int rs_repo_remote_url(struct rs_repo *r, struct rs_buf *out, int *from_config)
{
	int err;

	err = rs_repo_config_get(r, RS_REPO_REMOTE_KEY, out);
	if (err == 0 && out->len > 0) {
		if (from_config)
			*from_config = 1;
		return 0;
	}
	if (err && err != RS_ENOTFOUND)
		return err;
	err = rs_repo_committed_remote(r, out);
	if (err == 0 && from_config)
		*from_config = 0;
	if (err == RS_ENOTFOUND)
		return rs_error_set(RS_ENOTFOUND,
				    "no remote configured: set it with 'results init --remote URL'");
	return err;
}

/* `url` shown without credentials and trailing '/', for comparing remotes. */
static int remote_key(struct rs_buf *out, const char *url)
{
	int err = rs_remote_url_display(out, url);

	while (err == 0 && out->len > 1 && out->ptr[out->len - 1] == '/')
		out->ptr[--out->len] = '\0';
	return err;
}

int rs_url_same_remote(const char *a, const char *b)
{
	struct rs_buf ka = RS_BUF_INIT, kb = RS_BUF_INIT;
	int same;

	same = remote_key(&ka, a) == 0 && remote_key(&kb, b) == 0 && strcmp(ka.ptr, kb.ptr) == 0;
	rs_buf_release(&ka);
	rs_buf_release(&kb);
	return same;
}

/*
 * Does the lfs.<pattern>.* key apply to `endpoint`, and how well? git-lfs
 * matches these keys the way git matches http.<url>.*: the same URL, or a
 * prefix of it that ends at a '/' boundary. Returns the length matched
 * (longer wins), 0 when it does not apply.
 */
static size_t url_match(const char *pattern, const char *endpoint)
{
	size_t n = strlen(pattern);

	while (n > 1 && pattern[n - 1] == '/')
		n--;
	if (strncmp(pattern, endpoint, n) != 0)
		return 0;
	if (endpoint[n] != '\0' && endpoint[n] != '/')
		return 0;
	return n;
}

/* The config files git-lfs reads that libgit2 1.5 may not: GIT_CONFIG_GLOBAL. */
static git_config *extra_global_config(void)
{
	const char *env = getenv("GIT_CONFIG_GLOBAL");
	git_config *cfg = NULL;

	if (!env || !*env || access(env, R_OK) != 0)
		return NULL;
	if (git_config_open_ondisk(&cfg, env) < 0) {
		git_error_clear();
		return NULL;
	}
	return cfg;
}

/* The value of `key` in the first of `cfgs` that has it, appended; `*found` 1 if found. */
static int cfgs_get(git_config *const *cfgs, size_t n, const char *key, struct rs_buf *out,
		    int *found)
{
	git_buf val = { 0 };
	size_t i;
	int err;

	*found = 0;
	for (i = 0; i < n; i++) {
		if (cfgs[i] && git_config_get_string_buf(&val, cfgs[i], key) == 0) {
			err = rs_buf_puts(out, val.ptr);
			git_buf_dispose(&val);
			*found = 1;
			return err;
		}
	}
	git_error_clear();
	return 0;
}

/* The best-matching lfs.<url>.standalonetransferagent for `endpoint`, appended. */
static int agent_for_endpoint(git_config *const *cfgs, size_t n, const char *endpoint,
			      struct rs_buf *out)
{
	static const char suffix[] = ".standalonetransferagent";
	git_config_iterator *it = NULL;
	git_config_entry *e;
	size_t i, best = 0;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		/* Not git_config_iterator_glob_new: its regex leaks pcre2 match
		   data (libgit2 1.5 with Debian's pcre2), as git_remote_lookup does. */
		if (!cfgs[i] || git_config_iterator_new(&it, cfgs[i]) < 0)
			continue;
		while (!err && git_config_next(&e, it) == 0) {
			size_t klen = strlen(e->name), m;
			char *pattern;

			if (klen <= 4 + sizeof(suffix) - 1 || !e->value ||
			    strncmp(e->name, "lfs.", 4) != 0 ||
			    strcmp(e->name + klen - (sizeof(suffix) - 1), suffix) != 0)
				continue;
			pattern = strndup(e->name + 4, klen - 4 - (sizeof(suffix) - 1));
			m = pattern ? url_match(pattern, endpoint) : 0;
			free(pattern);
			if (m > best) {
				best = m;
				rs_buf_clear(out);
				err = rs_buf_puts(out, e->value);
			}
		}
		git_config_iterator_free(it);
		it = NULL;
		if (best)
			break; /* the first config holding a match wins, as levels do */
	}
	git_error_clear();
	return err;
}

/*
 * The LFS endpoint git-lfs uses for the default remote, appended to `out`
 * (nothing when none can be told): lfs.url, remote.origin.lfsurl, lfs.url
 * of the working tree's .lfsconfig (opened into cfgs[2]), else derived
 * from remote.origin.url.
 */
static int lfs_endpoint_of(git_config **cfgs, const char *workdir, struct rs_buf *out)
{
	struct rs_buf path = RS_BUF_INIT, val = RS_BUF_INIT;
	int found, err;

	err = cfgs_get(cfgs, 2, "lfs.url", out, &found);
	if (!err && !found)
		err = cfgs_get(cfgs, 2, "remote.origin.lfsurl", out, &found);
	if (err || found)
		goto out;
	err = rs_buf_printf(&path, "%s.lfsconfig", workdir);
	if (err)
		goto out;
	if (rs_fs_exists(path.ptr) && git_config_open_ondisk(&cfgs[2], path.ptr) < 0)
		cfgs[2] = NULL;
	err = cfgs_get(&cfgs[2], 1, "lfs.url", out, &found);
	if (err || found)
		goto out;
	err = cfgs_get(cfgs, 2, "remote.origin.url", &val, &found);
	if (err || !found)
		goto out;
	if (rs_lfs_endpoint(out, val.ptr) != 0) {
		rs_buf_clear(out); /* a URL git-lfs derives nothing from: no endpoint */
		rs_error_clear();
	}
out:
	rs_buf_release(&path);
	rs_buf_release(&val);
	return err;
}

int rs_repo_transfer_agent(struct rs_repo *r, struct rs_buf *name_out,
			   struct rs_buf *path_out, struct rs_buf *endpoint_out)
{
	git_config *cfgs[3] = { NULL, NULL, NULL };
	struct rs_buf endpoint = RS_BUF_INIT, name = RS_BUF_INIT, key = RS_BUF_INIT;
	int found, err;

	if (git_repository_config_snapshot(&cfgs[0], r->git) < 0) {
		err = git_fail(RS_EGENERIC, "cannot read the git config");
		goto out;
	}
	cfgs[1] = extra_global_config();
	err = lfs_endpoint_of(cfgs, r->workdir, &endpoint);
	if (err)
		goto out;
	if (endpoint.len) {
		err = agent_for_endpoint(cfgs, 2, endpoint.ptr, &name);
		if (err)
			goto out;
	}
	if (!name.len) {
		err = cfgs_get(cfgs, 2, "lfs.standalonetransferagent", &name, &found);
		if (err)
			goto out;
	}
	if (endpoint.len) {
		err = rs_url_strip_credentials(endpoint_out, endpoint.ptr);
		if (err)
			goto out;
	}
	if (name.len) {
		err = rs_buf_printf(&key, "lfs.customtransfer.%s.path", name.ptr);
		if (!err)
			err = cfgs_get(cfgs, 2, key.ptr, path_out, &found);
		if (!err)
			err = rs_buf_puts(name_out, name.ptr);
	}
out:
	git_config_free(cfgs[0]);
	git_config_free(cfgs[1]);
	git_config_free(cfgs[2]);
	rs_buf_release(&endpoint);
	rs_buf_release(&name);
	rs_buf_release(&key);
	return err;
}

int rs_repo_check_transfer(struct rs_repo *r)
{
	struct rs_buf name = RS_BUF_INIT, path = RS_BUF_INIT, val = RS_BUF_INIT;
	const char *base;
	int err;

	err = rs_repo_transfer_agent(r, &name, &path, &val);
	if (err)
		goto out;
	if (!name.len) {
		err = rs_error_set(RS_EGENERIC, "git-lfs in this clone would send sessions %s%s%s, not "
				   "through lfs-agent to the results store (no "
				   "lfs.standalonetransferagent): run 'results init' first",
				   val.len ? "to '" : "to the git host's own LFS server",
				   val.len ? val.ptr : "", val.len ? "' (the git host's own LFS server)" : "");
		goto out;
	}
	if (path.len == 0) {
		err = rs_error_set(RS_EGENERIC, "git-lfs in this clone uses the transfer agent '%s' but "
				   "'lfs.customtransfer.%s.path' is not set: run 'results init'",
				   name.ptr, name.ptr);
		goto out;
	}
	base = strrchr(path.ptr, '/');
	base = base ? base + 1 : path.ptr;
	if (strncmp(base, "lfs-agent", 9) != 0) {
		err = rs_error_set(RS_EGENERIC, "git-lfs in this clone transfers through '%s' (agent "
				   "'%s'), not lfs-agent: run 'results init'", path.ptr, name.ptr);
		goto out;
	}
out:
	rs_buf_release(&val);
	rs_buf_release(&name);
	rs_buf_release(&path);
	return err;
}

const char *rs_repo_workdir(const struct rs_repo *r)
{
	return r->workdir;
}

struct rs_config *rs_repo_config(struct rs_repo *r)
{
	if (!r->config && rs_config_open(&r->config, r->git) != 0)
		r->config = NULL;
	return r->config;
}

int rs_repo_open_remote(struct rs_repo *r, struct rs_remote **out,
			struct rs_buf *url_out)
{
	struct rs_buf url = RS_BUF_INIT;
	struct rs_remote_options opts;
	int err;

	err = rs_repo_check_remote(r);
	if (err == 0)
		err = rs_repo_remote_url(r, &url, NULL);
	if (err)
		goto out;
	if (!rs_repo_config(r)) {
		err = RS_EGENERIC; /* rs_config_open's message */
		goto out;
	}
	rs_config_remote_options(&opts, r->config);
	err = rs_remote_open(out, url.ptr, &opts);
	if (err == 0 && url_out)
		err = rs_buf_puts(url_out, url.ptr);
out:
	rs_buf_release(&url);
	return err;
}

int rs_url_strip_credentials(struct rs_buf *out, const char *url)
{
	return rs_remote_url_display(out, url);
}

int rs_repo_lfs_object_path(struct rs_buf *out, const struct rs_repo *r,
			    const struct rs_id *oid)
{
	char hex[RS_ID_HEXSZ + 1];

	rs_id_to_hex(hex, oid);
	return rs_buf_printf(out, "%s/objects/%.2s/%.2s/%s", r->lfs_dir, hex, hex + 2, hex);
}

int rs_repo_lfs_has(const struct rs_repo *r, const struct rs_id *oid, uint64_t size)
{
	struct rs_buf path = RS_BUF_INIT;
	struct stat st;
	int err;

	err = rs_repo_lfs_object_path(&path, r, oid);
	if (err == 0 && (stat(path.ptr, &st) != 0 || !S_ISREG(st.st_mode) ||
			 (uint64_t)st.st_size != size))
		err = rs_error_set(RS_ENOTFOUND, "the object is not in the local LFS store");
	rs_buf_release(&path);
	return err;
}

/* "<dir>/results-<pid>-<n>-<time>": the one spelling of our temporary names. */
static int tmp_name_in(struct rs_buf *out, const char *dir)
{
	static unsigned int counter;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return rs_buf_printf(out, "%s/results-%ld-%u-%lx%09ld", dir, (long)getpid(),
			     __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED),
			     (unsigned long)ts.tv_sec, ts.tv_nsec);
}

int rs_repo_lfs_tmp_dir(struct rs_buf *out, const struct rs_repo *r)
{
	size_t len = out->len;
	int err;

	err = rs_buf_printf(out, "%s/tmp", r->lfs_dir);
	if (err == 0)
		err = rs_fs_mkdir_p(out->ptr + len, 0755);
	return err;
}

int rs_repo_lfs_tmp_path(struct rs_buf *out, const struct rs_repo *r)
{
	struct rs_buf dir = RS_BUF_INIT;
	int err;

	err = rs_repo_lfs_tmp_dir(&dir, r);
	if (err == 0)
		err = tmp_name_in(out, dir.ptr);
	rs_buf_release(&dir);
	return err;
}

int rs_repo_state_path(struct rs_buf *out, const struct rs_repo *r, const char *leaf)
{
	struct rs_buf dir = RS_BUF_INIT;
	int err;

	err = rs_buf_printf(&dir, "%sresults", git_repository_path(r->git));
	if (err == 0)
		err = rs_fs_mkdir_p(dir.ptr, 0755);
	if (err == 0)
		err = rs_buf_printf(out, "%s/%s", dir.ptr, leaf);
	rs_buf_release(&dir);
	return err;
}

/*
 * The working tree and .git/results/tmp on one file system? Compared on
 * the folder that will hold `final_path`: a rename between two file
 * systems is no rename, and a nested mount inside the working tree is
 * possible.
 */
static int same_fs(const char *dir_a, const char *final_path)
{
	struct stat a, b;
	char *dir = dup_str(final_path), *slash;
	int same;

	if (!dir)
		return 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	same = stat(dir_a, &a) == 0 && stat(slash ? dir : ".", &b) == 0 && a.st_dev == b.st_dev;
	free(dir);
	return same;
}

int rs_repo_tmpfile_for(const struct rs_repo *r, const char *final_path,
			struct rs_buf *tmp_out, int *fd_out)
{
	struct rs_buf dir = RS_BUF_INIT;
	int err, fd;

	err = rs_repo_state_path(&dir, r, "tmp");
	if (err == 0)
		err = rs_fs_mkdir_p(dir.ptr, 0755);
	if (err)
		goto out;
	if (!same_fs(dir.ptr, final_path)) {
		/* Unusual layout (a git dir on another disk): beside the file. */
		err = rs_fs_tmpfile_near(tmp_out, final_path, fd_out);
		goto out;
	}
	rs_buf_clear(tmp_out);
	err = tmp_name_in(tmp_out, dir.ptr);
	if (err)
		goto out;
	/* 0666 less the umask, as for any new file; callers chmod when they care. */
	fd = open(tmp_out->ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot create '%s'", tmp_out->ptr);
		goto out;
	}
	*fd_out = fd;
out:
	rs_buf_release(&dir);
	return err;
}

/*
 * Ours: "results-" then [0-9a-f-] (rs_repo_lfs_tmp_path's names and
 * lfs-agent's results-<oid>), optionally the ".tmp-XXXXXX" that
 * rs_fs_tmpfile_near adds. git-lfs's own temporaries never match.
 */
static int is_our_tmp(const char *name, const void *arg)
{
	const char *p = name + 8;
	size_t n;

	(void)arg;
	if (strncmp(name, "results-", 8) != 0)
		return 0;
	n = strspn(p, "0123456789abcdef-");
	if (n == 0)
		return 0;
	p += n;
	if (!*p)
		return 1;
	if (strncmp(p, ".tmp-", 5) != 0 || strlen(p + 5) != 6)
		return 0;
	return strspn(p + 5, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 6;
}

/* "<oid hex>.tmp-XXXXXX" for the object named by `arg` (its hex name). */
static int is_partial_object(const char *name, const void *arg)
{
	const char *hex = arg;
	size_t n = strlen(hex);

	return strncmp(name, hex, n) == 0 && strncmp(name + n, ".tmp-", 5) == 0 &&
	       strlen(name + n + 5) == 6;
}

/* results.tmpGracePeriod in seconds (rs_fs_parse_grace), the default when unset. */
int rs_repo_tmp_grace(struct rs_repo *r, long *out)
{
	struct rs_buf val = RS_BUF_INIT;
	int set = rs_repo_config_get(r, RS_TMP_GRACE_KEY, &val) == 0;
	long grace;
	int err;

	rs_error_clear(); /* unset is fine: the default applies */
	err = rs_fs_parse_grace(set ? rs_buf_cstr(&val) : NULL, &grace);
	if (!err)
		*out = grace;
	rs_buf_release(&val);
	return err;
}

int rs_repo_clean_stale_tmp(struct rs_repo *r, unsigned *removed_out)
{
	struct rs_buf dir = RS_BUF_INIT;
	long grace;
	unsigned removed = 0;
	int err;

	err = rs_repo_tmp_grace(r, &grace);
	if (err)
		goto out;
	err = rs_buf_printf(&dir, "%s/tmp", r->lfs_dir);
	if (err)
		goto out;
	removed += rs_fs_remove_stale_with(dir.ptr, is_our_tmp, NULL, grace);
	rs_buf_clear(&dir);
	err = rs_buf_printf(&dir, "%sresults/tmp", git_repository_path(r->git));
	if (err)
		goto out;
	removed += rs_fs_remove_stale_with(dir.ptr, is_our_tmp, NULL, grace);
	if (removed_out)
		*removed_out = removed;
out:
	rs_buf_release(&dir);
	return err;
}

int rs_repo_lfs_adopt(struct rs_repo *r, const char *tmp, const struct rs_id *oid)
{
	struct rs_buf path = RS_BUF_INIT;
	char *slash;
	int err;

	err = rs_repo_lfs_object_path(&path, r, oid);
	if (err)
		goto out;
	err = rs_fs_mkdir_parent(path.ptr, 0755);
	if (err)
		goto out;
	if (rename(tmp, path.ptr) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot move an object into '%s'", path.ptr);
		goto out;
	}
	err = rs_fs_fsync_parent(path.ptr);
	if (err == 0) {
		/* Older versions downloaded beside the object: a killed fetch
		   left "<oid>.tmp-XXXXXX" there. Now that the object is whole,
		   its stale partial copies go. */
		long grace;

		slash = strrchr(path.ptr, '/');
		*slash = '\0';
		if (rs_repo_tmp_grace(r, &grace) == 0)
			rs_fs_remove_stale_with(path.ptr, is_partial_object, slash + 1, grace);
		*slash = '/';
		rs_error_clear();
	}
out:
	if (err)
		unlink(tmp);
	rs_buf_release(&path);
	return err;
}

/* Copy `in` (the file `src`) to `fd`, hashing on the way: its oid and size. */
static int copy_hashing(int in, int fd, const char *src, struct rs_id *oid, uint64_t *size)
{
	unsigned char *chunk = malloc(1 << 20);
	struct rs_sha256 *h = rs_sha256_new();
	int err = 0;

	*size = 0;
	if (!chunk || !h) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(in, chunk, 1 << 20);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", src);
			goto out;
		}
		if (n == 0)
			break;
		rs_sha256_update(h, chunk, (size_t)n);
		*size += (uint64_t)n;
		err = rs_fs_write_all(fd, chunk, (size_t)n);
		if (err)
			goto out;
	}
	rs_sha256_final(h, oid);
out:
	free(chunk);
	rs_sha256_free(h);
	return err;
}

int rs_repo_lfs_store_file(struct rs_repo *r, const char *src,
			   const struct rs_id *expect, struct rs_id *oid_out,
			   uint64_t *size_out)
{
	struct rs_buf tmp = RS_BUF_INIT;
	struct rs_id oid;
	uint64_t size = 0;
	int in = -1, fd = -1, err;
	char hex[RS_ID_HEXSZ + 1];

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				     "cannot open '%s'", src);
		goto out;
	}
	err = rs_repo_lfs_tmp_path(&tmp, r);
	if (err)
		goto out;
	fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot create '%s'", tmp.ptr);
		goto out;
	}
	err = copy_hashing(in, fd, src, &oid, &size);
	if (err)
		goto out;
	if (expect && rs_id_cmp(expect, &oid) != 0) {
		rs_id_to_hex(hex, expect);
		err = rs_error_set(RS_ECORRUPT, "'%s' does not match object %s", src, hex);
		goto out;
	}
	if (rs_repo_lfs_has(r, &oid, size) != 0) {
		if (fsync(fd) != 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot fsync '%s'", tmp.ptr);
			goto out;
		}
		close(fd);
		fd = -1;
		err = rs_repo_lfs_adopt(r, tmp.ptr, &oid);
		if (err)
			goto out;
	}
	rs_error_clear();
	if (oid_out)
		*oid_out = oid;
	if (size_out)
		*size_out = size;
out:
	rs_fs_drop_tmp(fd, tmp.ptr);
	if (in >= 0)
		close(in);
	rs_buf_release(&tmp);
	return err;
}

/* "path" or "path.git" + "/info/lfs", as git-lfs appends it. */
static int put_lfs_suffix(struct rs_buf *out, const char *path, size_t n)
{
	int err;

	while (n > 0 && path[n - 1] == '/')
		n--;
	err = rs_buf_put(out, path, n);
	if (err == 0 && !(n >= 4 && memcmp(path + n - 4, ".git", 4) == 0))
		err = rs_buf_puts(out, ".git");
	if (err == 0)
		err = rs_buf_puts(out, "/info/lfs");
	return err;
}

int rs_lfs_endpoint(struct rs_buf *out, const char *url)
{
	struct rs_buf clean = RS_BUF_INIT;
	const char *scheme = strstr(url, "://");
	const char *host, *slash, *colon, *at;
	char abs[4096];
	int err;

	if (strncmp(url, "file://", 7) == 0)
		return rs_buf_puts(out, url);
	if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0) {
		err = rs_url_strip_credentials(&clean, url);
		if (err == 0)
			err = put_lfs_suffix(out, clean.ptr, clean.len);
		rs_buf_release(&clean);
		return err;
	}
	if (scheme) {
		/* ssh://[user@]host[:port]/path, git://host/path */
		host = scheme + 3;
		slash = host + strcspn(host, "/");
		at = memchr(host, '@', (size_t)(slash - host));
		if (at)
			host = at + 1;
		colon = memchr(host, ':', (size_t)(slash - host));
		err = rs_buf_puts(out, "https://");
		if (err == 0)
			err = rs_buf_put(out, host, (size_t)((colon ? colon : slash) - host));
		if (err == 0)
			err = put_lfs_suffix(out, slash, strlen(slash));
		return err;
	}
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon && (!slash || colon < slash)) {
		/* scp-like [user@]host:path */
		host = url;
		at = memchr(url, '@', (size_t)(colon - url));
		if (at)
			host = at + 1;
		err = rs_buf_puts(out, "https://");
		if (err == 0)
			err = rs_buf_put(out, host, (size_t)(colon - host));
		if (err == 0)
			err = rs_buf_putc(out, '/');
		if (err == 0)
			err = put_lfs_suffix(out, colon + 1 + (colon[1] == '/'),
					     strlen(colon + 1 + (colon[1] == '/')));
		return err;
	}
	/* A local path: git-lfs reports it as a file:// URL of the absolute path. */
	if (url[0] != '/') {
		if (!realpath(url, abs))
			return rs_error_errno(RS_EUSAGE, "cannot resolve '%s'", url);
		url = abs;
	}
	return rs_buf_printf(out, "file://%s", url);
}
