/*
 * The WebDAV backend: the store's files on any HTTP server that speaks
 * WebDAV (RFC 4918) - nginx with its dav modules, Apache mod_dav, many
 * hosted file services. Keys map to URLs under the remote's base URL.
 *
 * Atomic puts: a PUT writes to "<key>.tmp-<random>" in the key's own
 * collection, then MOVE (Overwrite: T) renames it to the key. RFC 4918
 * does not promise that a PUT is atomic (nginx and Apache write to a
 * temporary file and rename, others may not), but a MOVE within one
 * collection is a rename on every file-system backed server. When the
 * server's own PUT is known to be atomic, results.webdav.directput=true
 * saves the extra round trip. Listings skip the temporary names.
 *
 * Collections: many servers (nginx among them) refuse a PUT whose parent
 * collection is missing, nginx with a 500. So before the first PUT into a
 * collection the backend makes it with MKCOL (405 means it exists; 409
 * means its parent is missing, which is then made first) and remembers it,
 * so this costs one request per collection and process.
 *
 * Listing: PROPFIND with Depth: 1 on the collection that holds the prefix
 * (packs/ and manifests/ are flat), recursing into sub-collections that
 * can hold matching keys. Depth: infinity is refused by many servers.
 * The multistatus answer is parsed with a small bounded scanner that only
 * looks at <response>, <href>, <getcontentlength> and <collection>.
 *
 * Credentials: see credential.h. A first 401 fetches credentials from git's
 * helpers (once per remote, shared by every thread) and the request is
 * repeated; credentials that then work are approved, refused ones rejected.
 *
 * Threads: every operation may run on several threads at once; the HTTP
 * transport gives each concurrent caller its own pooled connection.
 */
#include "remote/remote.h"
#include "remote/credential.h"
#include "remote/http_parse.h"
#include "remote/http_transport.h"
#include "remote/xml.h"

#include "results/error.h"
#include "util/hex.h"

#include <openssl/rand.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define WEBDAV_LIST_MAX (16u * 1024 * 1024) /* one PROPFIND answer: ~60000 entries */
#define WEBDAV_LIST_DEPTH 8
#define WEBDAV_HREF_MAX 4096
#define WEBDAV_COLLECTIONS_MAX 1024

enum cred_source {
	CRED_NONE,   /* nothing yet; a 401 asks git's helpers */
	CRED_URL,    /* user (and maybe password) written in the URL */
	CRED_ENV,    /* RESULTS_HTTP_*: never sent to helpers */
	CRED_HELPER, /* from git credential fill */
};

struct webdav_remote {
	struct rs_remote parent;
	struct rs_http *http;
	char *base;      /* scheme://host[:port]/path/ (no userinfo, ends in '/') */
	char *base_path; /* decoded path part of base, ends in '/' */
	int direct_put;

	pthread_mutex_t lock; /* guards everything below */
	int no_chunked;       /* the server refused a chunked PUT */
	struct rs_credential cred;
	enum cred_source source;
	unsigned int cred_gen; /* bumped whenever cred changes */
	int approved;
	char *collections[WEBDAV_COLLECTIONS_MAX]; /* known to exist */
	size_t ncollections;
};

/* ---- small helpers ---- */

static int key_url(const struct webdav_remote *w, const char *key,
		   struct rs_buf *out)
{
	int err = rs_buf_puts(out, w->base);

	return err ? err : rs_percent_encode_str(out, key, RS_SLASH_KEEP);
}

/* ---- requests with credentials ---- */

struct cred_snapshot {
	char *username;
	char *password;
	char *token;
	unsigned int gen;
	enum cred_source source;
};

static void snapshot_release(struct cred_snapshot *s)
{
	struct rs_credential c;

	/* Reuse credential.c's wiping free for the secrets. */
	rs_credential_init(&c);
	c.username = s->username;
	c.password = s->password;
	c.token = s->token;
	rs_credential_release(&c);
	memset(s, 0, sizeof(*s));
}

/* A copy of `v` (NULL for NULL); *err is set to RS_EGENERIC when out of memory. */
static char *dup_or_null(const char *v, int *err)
{
	char *copy;

	if (!v)
		return NULL;
	copy = strdup(v);
	if (!copy)
		*err = RS_EGENERIC;
	return copy;
}

static int snapshot_take(struct webdav_remote *w, struct cred_snapshot *s)
{
	int err = 0;

	memset(s, 0, sizeof(*s));
	pthread_mutex_lock(&w->lock);
	s->gen = w->cred_gen;
	s->source = w->source;
	s->username = dup_or_null(w->cred.username, &err);
	s->password = dup_or_null(w->cred.password, &err);
	s->token = dup_or_null(w->cred.token, &err);
	pthread_mutex_unlock(&w->lock);
	if (err) {
		snapshot_release(s);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/*
 * git-lfs starts up to lfs.concurrenttransfers agents at once, and each
 * would ask for the same password. A per-user lock file serialises
 * "fill, try, approve" across processes: the next process's fill then
 * finds the approved password in the user's helper (cache, store, a
 * keychain) instead of prompting again. It lives in a private per-user
 * folder (credential.h). Best effort: without the lock (an unsafe folder,
 * or a holder stuck past the wait's deadline) everything still works,
 * only unordered.
 */
#define CRED_LOCK_WAIT_MS (5L * 60 * 1000) /* a user may take a while to type */

static int cred_lock_take(void)
{
	return rs_credential_lock_take(CRED_LOCK_WAIT_MS);
}

static void cred_lock_release(int *fd)
{
	rs_credential_lock_release(*fd);
	*fd = -1;
}

/*
 * After a 401 with the credentials of generation `gen`: get new ones,
 * unless another thread already did. Returns 0 when the request should be
 * tried again, else an error explaining why not. `*lock_fd` (the
 * cross-process lock, or -1) is released unless a fill happened.
 */
static int refresh_credentials(struct webdav_remote *w, unsigned int gen,
			       int *lock_fd)
{
	int err = 0, filled = 0;

	pthread_mutex_lock(&w->lock);
	if (w->cred_gen != gen)
		goto out; /* someone else refreshed meanwhile: just retry */
	switch (w->source) {
	case CRED_ENV:
		err = rs_error_set(RS_EAUTH, "%s: the server refused the credentials "
				   "from RESULTS_HTTP_TOKEN / RESULTS_HTTP_USER and "
				   "RESULTS_HTTP_PASSWORD", w->parent.display_url);
		goto out;
	case CRED_HELPER:
		rs_credential_reject(&w->cred);
		err = rs_error_set(RS_EAUTH, "%s: the server refused the username "
				   "and password from git's credential helper (now "
				   "rejected, so the next attempt asks again)",
				   w->parent.display_url);
		memset(w->cred.password, 0, strlen(w->cred.password));
		free(w->cred.password);
		w->cred.password = NULL;
		w->source = CRED_NONE;
		w->cred_gen++;
		goto out;
	case CRED_URL:
		if (w->cred.password) {
			err = rs_error_set(RS_EAUTH, "%s: the server refused the "
					   "password written in the remote URL",
					   w->parent.display_url);
			goto out;
		}
		/* A user name alone: ask the helpers for the password. */
		__attribute__((fallthrough));
	case CRED_NONE:
		err = rs_credential_fill(&w->cred);
		if (err) {
			rs_error_wrap(err, "%s needs credentials", w->parent.display_url);
			goto out;
		}
		w->source = CRED_HELPER;
		w->approved = 0;
		w->cred_gen++;
		filled = 1;
		break;
	}
out:
	pthread_mutex_unlock(&w->lock);
	/* The lock stays with a fill until its retried request has answered. */
	if (!filled)
		cred_lock_release(lock_fd);
	return err;
}

static void approve_once(struct webdav_remote *w, unsigned int gen)
{
	pthread_mutex_lock(&w->lock);
	if (w->source == CRED_HELPER && w->cred_gen == gen && !w->approved) {
		rs_credential_approve(&w->cred);
		w->approved = 1;
	}
	pthread_mutex_unlock(&w->lock);
}

/*
 * Perform `req` with the remote's credentials, asking git's credential
 * helpers on a 401 (at most twice: a fill, then a refill after another
 * thread's refresh). `resp` is the caller's and always filled in.
 */
static int dav_perform(struct webdav_remote *w, struct rs_http_request *req,
		       struct rs_http_response *resp)
{
	struct cred_snapshot s;
	struct rs_buf bearer = RS_BUF_INIT;
	int err = 0, round, lock_fd = -1;

	memset(&s, 0, sizeof(s));
	for (round = 0; round < 3; round++) {
		snapshot_release(&s);
		err = snapshot_take(w, &s);
		if (err)
			break;
		req->username = NULL;
		req->password = NULL;
		if (s.token) {
			rs_buf_clear(&bearer);
			err = rs_buf_printf(&bearer, "Bearer %s", s.token);
			if (!err)
				err = rs_http_request_set_header(req, "Authorization",
								 rs_buf_cstr(&bearer));
			if (err)
				break;
		} else if (s.username && s.password) {
			req->username = s.username;
			req->password = s.password;
		}
		err = rs_http_perform(w->http, req, resp);
		if (!err && s.source == CRED_HELPER)
			approve_once(w, s.gen);
		cred_lock_release(&lock_fd); /* approved (or refused): next process */
		if (err != RS_EAUTH || resp->status != 401)
			break;
		/*
		 * Taken before the mutex, never while holding it: a thread
		 * waiting for the file lock must not block the holder.
		 */
		lock_fd = cred_lock_take();
		err = refresh_credentials(w, s.gen, &lock_fd);
		if (err)
			break;
	}
	cred_lock_release(&lock_fd);
	req->username = NULL;
	req->password = NULL;
	if (bearer.ptr)
		memset(bearer.ptr, 0, bearer.alloc);
	rs_buf_release(&bearer);
	/* The Authorization header holds the token: never keep it. */
	rs_http_request_unset_header(req, "Authorization");
	snapshot_release(&s);
	return err;
}

/* One request without a body into `body` (may be NULL). */
static int dav_simple(struct webdav_remote *w, const char *method,
		      const char *url, struct rs_buf *body,
		      struct rs_http_response *resp)
{
	struct rs_http_request req;
	int err;

	rs_http_request_init(&req, method, url);
	req.response_body = body;
	err = dav_perform(w, &req, resp);
	rs_http_request_release(&req);
	return err;
}

/* ---- collections ---- */

static int collection_known(struct webdav_remote *w, const char *url)
{
	size_t i;
	int found = 0;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < w->ncollections && !found; i++)
		found = !strcmp(w->collections[i], url);
	pthread_mutex_unlock(&w->lock);
	return found;
}

static void collection_remember(struct webdav_remote *w, const char *url)
{
	char *copy;

	if (collection_known(w, url))
		return;
	copy = strdup(url);
	if (!copy)
		return; /* only a cache */
	pthread_mutex_lock(&w->lock);
	if (w->ncollections < WEBDAV_COLLECTIONS_MAX)
		w->collections[w->ncollections++] = copy;
	else
		free(copy);
	pthread_mutex_unlock(&w->lock);
}

/*
 * MKCOL `url` (ends in '/'), making missing parents first when the server
 * answers 409. `depth` bounds the climb.
 */
static int mkcol(struct webdav_remote *w, const char *url, int depth)
{
	struct rs_http_response resp;
	struct rs_buf parent = RS_BUF_INIT;
	const char *host_end, *slash;
	int err, attempt;

	if (collection_known(w, url))
		return 0;
	rs_http_response_init(&resp);
	for (attempt = 0; attempt < 2; attempt++) {
		err = dav_simple(w, "MKCOL", url, NULL, &resp);
		/* 405: it exists already (RFC 4918, 9.3.1). */
		if (!err || resp.status == 405 || resp.status == 301) {
			err = 0;
			collection_remember(w, url);
			break;
		}
		if (resp.status == 403) {
			/*
			 * Some servers forbid MKCOL where a collection already
			 * exists (a share's root): go on, the PUT will tell.
			 */
			err = 0;
			break;
		}
		if (resp.status != 409 || attempt == 1 || depth <= 0)
			break;
		/* The parent is missing: make it, then try again. */
		host_end = strstr(url, "://");
		host_end = host_end ? strchr(host_end + 3, '/') : NULL;
		slash = NULL;
		if (host_end) {
			const char *p;

			for (p = host_end; p < url + strlen(url) - 1; p++)
				if (*p == '/')
					slash = p;
		}
		if (!slash || slash == host_end)
			break;
		rs_buf_clear(&parent);
		err = rs_buf_put(&parent, url, (size_t)(slash - url + 1));
		if (!err)
			err = mkcol(w, rs_buf_cstr(&parent), depth - 1);
		if (err)
			break;
	}
	if (err && err != RS_EAUTH)
		err = rs_error_wrap(err, "cannot create the collection");
	rs_buf_release(&parent);
	rs_http_response_release(&resp);
	return err;
}

/* Make sure the collection that will hold `key` exists. */
static int ensure_parent(struct webdav_remote *w, const char *key)
{
	struct rs_buf url = RS_BUF_INIT;
	const char *slash = strrchr(key, '/');
	int err = rs_buf_puts(&url, w->base);

	if (!err && slash) {
		struct rs_buf dir = RS_BUF_INIT;

		err = rs_buf_put(&dir, key, (size_t)(slash - key + 1));
		if (!err)
			err = rs_percent_encode_str(&url, rs_buf_cstr(&dir), RS_SLASH_KEEP);
		rs_buf_release(&dir);
	}
	if (!err)
		err = mkcol(w, rs_buf_cstr(&url), 32);
	rs_buf_release(&url);
	return err;
}

/* ---- operations ---- */

/*
 * One request on `key` with no body either way (HEAD, DELETE); a 404 is
 * RS_ENOTFOUND, said for this store.
 */
static int key_request(struct webdav_remote *w, const char *method, const char *key,
		       struct rs_http_response *resp)
{
	struct rs_buf url = RS_BUF_INIT;
	int err;

	err = rs_remote_check_key(key);
	if (err)
		goto out;
	err = key_url(w, key, &url);
	if (err)
		goto out;
	err = dav_simple(w, method, rs_buf_cstr(&url), NULL, resp);
	if (err == RS_ENOTFOUND)
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at %s",
				   key, w->parent.display_url);
out:
	rs_buf_release(&url);
	return err;
}

static int webdav_stat(struct rs_remote *r, const char *key, uint64_t *size_out)
{
	struct rs_http_response resp;
	uint64_t size;
	int err;

	rs_http_response_init(&resp);
	err = key_request((struct webdav_remote *)r, "HEAD", key, &resp);
	if (!err)
		err = rs_http_response_content_length(&resp, key, r->display_url, &size);
	if (!err && size_out)
		*size_out = size; /* callers may only ask whether it exists */
	rs_http_response_release(&resp);
	return err;
}

static int webdav_get_url(struct rs_remote *r, const char *key, struct rs_buf *out)
{
	return key_url((struct webdav_remote *)r, key, out);
}

static int webdav_get_perform(struct rs_remote *r, struct rs_http_request *req,
			      struct rs_http_response *resp)
{
	return dav_perform((struct webdav_remote *)r, req, resp);
}

static int webdav_get(struct rs_remote *r, const char *key, uint64_t off,
		      uint64_t len, struct rs_buf *out)
{
	static const struct rs_http_get_ops ops = { webdav_get_url, webdav_get_perform };

	return rs_http_get_range(r, &ops, key, off, len, out);
}

/*
 * After a chunked PUT, ask for the size the server stored: some servers
 * (Apache passing the body to PHP-FPM, for one) answer 201 to a chunked
 * body and store nothing of it. RS_ECORRUPT when the size is not the
 * body's; other bodies have a Content-Length and are not checked.
 */
static int check_stored_size(struct webdav_remote *w, const struct rs_http_request *req,
			     const char *url)
{
	struct rs_http_response resp;
	uint64_t size = 0;
	int err;

	if (req->body_kind != RS_HTTP_BODY_STREAM)
		return 0;
	rs_http_response_init(&resp);
	err = dav_simple(w, "HEAD", url, NULL, &resp);
	if (!err)
		err = rs_http_response_content_length(&resp, "the upload", w->parent.display_url, &size);
	if (!err && size != req->body_len)
		err = rs_error_set(RS_ECORRUPT, "%s stored %llu of the %llu bytes of a chunked PUT: "
				   "it does not take chunked bodies", w->parent.display_url,
				   (unsigned long long)size, (unsigned long long)req->body_len);
	rs_http_response_release(&resp);
	return err;
}

/* "<url>.tmp-<16 random hex digits>": where a PUT goes before its MOVE. */
static int tmp_url(struct rs_buf *tmp, const struct rs_buf *url)
{
	unsigned char rnd[8];
	size_t i;
	int err;

	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		return rs_error_set(RS_EGENERIC, "no random bytes for a temporary name");
	err = rs_buf_printf(tmp, "%s.tmp-", rs_buf_cstr(url));
	for (i = 0; !err && i < sizeof(rnd); i++)
		err = rs_buf_printf(tmp, "%02x", rnd[i]);
	return err;
}

/* Best effort: do not leave the temporary file behind; the message stays the caller's. */
static void remove_tmp(struct webdav_remote *w, const char *tmp, int err)
{
	struct rs_http_response dresp;
	struct rs_error_saved saved;

	rs_error_save(&saved, err);
	rs_http_response_init(&dresp);
	if (dav_simple(w, "DELETE", tmp, NULL, &dresp))
		rs_error_clear(); /* ignored: the message is put back below */
	rs_http_response_release(&dresp);
	rs_error_restore(&saved);
}

/* MOVE the temporary file over the key, overwriting it. */
static int move_into_place(struct webdav_remote *w, const char *key, const char *tmp,
			   const char *url, uint64_t body_len)
{
	struct rs_http_request mv;
	struct rs_http_response resp;
	uint64_t size;
	int err;

	rs_http_request_init(&mv, "MOVE", tmp);
	rs_http_response_init(&resp);
	err = rs_http_request_set_header(&mv, "Destination", url);
	if (!err)
		err = rs_http_request_set_header(&mv, "Overwrite", "T");
	if (!err)
		err = dav_perform(w, &mv, &resp);
	if (err == RS_ENOTFOUND &&
	    !webdav_stat(&w->parent, key, &size) && size == body_len) {
		/*
		 * A retried MOVE whose first try went through but whose answer
		 * was lost finds its source gone; the key is in place.
		 */
		err = 0;
	}
	rs_http_request_release(&mv);
	rs_http_response_release(&resp);
	return err;
}

/*
 * PUT the body of `req` to a temporary name next to `key` and MOVE it
 * over the key (or PUT straight to the key with direct_put). *put_status
 * is the PUT's HTTP status (0 when it was not sent or got none).
 */
static int webdav_put(struct webdav_remote *w, const char *key,
		      struct rs_http_request *req, long *put_status)
{
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT, tmp = RS_BUF_INIT;
	int err;

	*put_status = 0;
	rs_http_response_init(&resp);
	err = rs_remote_check_key(key);
	if (!err)
		err = ensure_parent(w, key);
	if (err)
		goto out;
	err = key_url(w, key, &url);
	if (err)
		goto out;
	if (!w->direct_put) {
		err = tmp_url(&tmp, &url);
		if (err)
			goto out;
	}
	req->url = rs_buf_cstr(w->direct_put ? &url : &tmp);
	err = dav_perform(w, req, &resp);
	*put_status = resp.status;
	if (err)
		goto out;
	err = check_stored_size(w, req, req->url);
	if (!err && !w->direct_put)
		err = move_into_place(w, key, rs_buf_cstr(&tmp), rs_buf_cstr(&url),
				      req->body_len);
	if (err && !w->direct_put)
		remove_tmp(w, rs_buf_cstr(&tmp), err);
out:
	if (err)
		rs_error_wrap(err, "cannot store '%s' at %s", key, w->parent.display_url);
	req->url = NULL;
	rs_buf_release(&url);
	rs_buf_release(&tmp);
	rs_http_response_release(&resp);
	return err;
}

/* webdav_put of bytes the server is to take as they are. */
static int put_octets(struct webdav_remote *w, const char *key, struct rs_http_request *req,
		      long *status)
{
	int err = rs_http_request_set_header(req, "Content-Type", "application/octet-stream");

	if (err)
		return err;
	return webdav_put(w, key, req, status);
}

static int webdav_put_buf(struct rs_remote *r, const char *key, const void *p,
			  size_t n)
{
	struct rs_http_request req;
	long status;
	int err;

	rs_http_request_init(&req, "PUT", NULL);
	rs_http_request_set_body_mem(&req, p, n);
	err = put_octets((struct webdav_remote *)r, key, &req, &status);
	rs_http_request_release(&req);
	return err;
}

static int webdav_put_file(struct rs_remote *r, const char *key, const char *path)
{
	struct rs_http_request req;
	struct stat st;
	long status;
	int err;

	if (stat(path, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	rs_http_request_init(&req, "PUT", NULL);
	rs_http_request_set_body_file(&req, path, 0, (uint64_t)st.st_size);
	err = put_octets((struct webdav_remote *)r, key, &req, &status);
	rs_http_request_release(&req);
	return err;
}

/*
 * A pack while it is being written: one chunked PUT that sends the bytes
 * as they come. A server that wants the length first (411 Length
 * Required, 501 or a bare 400 for a chunked body), or that says it
 * stored something else than was sent (check_stored_size), gets a plain
 * PUT once the file is complete, and this remote does not try chunked
 * again (a 400 for another reason comes back from that PUT too).
 */
static int webdav_put_stream(struct rs_remote *r, const char *key,
			     struct rs_growing *g)
{
	struct webdav_remote *w = (struct webdav_remote *)r;
	struct rs_http_request req;
	uint64_t avail;
	long status = 0;
	int err, sealed, no_chunked;

	pthread_mutex_lock(&w->lock);
	no_chunked = w->no_chunked;
	pthread_mutex_unlock(&w->lock);
	if (!no_chunked) {
		rs_http_request_init(&req, "PUT", NULL);
		rs_http_request_set_body_stream(&req, g);
		err = put_octets(w, key, &req, &status);
		rs_http_request_release(&req);
		if (!err || (err != RS_ECORRUPT && status != 400 && status != 411 && status != 501))
			return err;
		pthread_mutex_lock(&w->lock);
		w->no_chunked = 1;
		pthread_mutex_unlock(&w->lock);
		rs_error_clear();
	}
	err = rs_growing_wait(g, UINT64_MAX, &avail, &sealed);
	return err ? err : webdav_put_file(r, key, rs_growing_path(g));
}

static int webdav_del(struct rs_remote *r, const char *key)
{
	struct rs_http_response resp;
	int err;

	rs_http_response_init(&resp);
	err = key_request((struct webdav_remote *)r, "DELETE", key, &resp);
	rs_http_response_release(&resp);
	return err;
}

/* ---- PROPFIND listing ---- */

/* The reading of one multistatus answer. */
struct dav_page {
	rs_dav_entry_fn fn;
	void *payload;
	struct rs_buf href;
	uint64_t size;
	int in_response, has_size, collection;
};

/* Element names match without their prefix and case (servers differ). */
static int dav_open(void *payload, unsigned int depth, const char *name)
{
	struct dav_page *d = payload;

	if (depth == 1 && strcasecmp(name, "multistatus"))
		return rs_error_set(RS_ECORRUPT, "the PROPFIND answer is not a multistatus");
	if (!strcasecmp(name, "response")) {
		d->in_response = 1;
		rs_buf_clear(&d->href);
		d->size = 0;
		d->has_size = 0;
		d->collection = 0;
	} else if (d->in_response && !strcasecmp(name, "collection")) {
		d->collection = 1;
	}
	return 0;
}

static int dav_close(void *payload, unsigned int depth, const char *name,
		     const char *text, size_t len)
{
	struct dav_page *d = payload;
	struct rs_dav_entry e;
	char *num_end;

	(void)depth;
	if (!d->in_response)
		return 0;
	if (!strcasecmp(name, "href")) {
		rs_buf_clear(&d->href);
		return rs_buf_put(&d->href, text, len);
	}
	if (!strcasecmp(name, "getcontentlength")) {
		while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r')
			text++;
		d->size = strtoull(text, &num_end, 10);
		d->has_size = num_end != text;
		return 0;
	}
	if (!strcasecmp(name, "response")) {
		d->in_response = 0;
		e.href = rs_buf_cstr(&d->href);
		e.size = d->size;
		e.has_size = d->has_size;
		e.collection = d->collection;
		return d->fn(&e, d->payload);
	}
	return 0;
}

/*
 * Read a multistatus document and call `fn` for every <response>.
 * Bounded: `n` bytes, hrefs up to WEBDAV_HREF_MAX.
 */
int rs_webdav_parse_multistatus(const char *xml, size_t n, rs_dav_entry_fn fn,
				void *payload)
{
	struct dav_page d;
	struct rs_xml_handler h = { "the PROPFIND answer", dav_open, dav_close, &d,
				    WEBDAV_LIST_MAX, 0, WEBDAV_HREF_MAX };
	int err;

	memset(&d, 0, sizeof(d));
	d.fn = fn;
	d.payload = payload;
	rs_buf_init(&d.href, WEBDAV_HREF_MAX);
	err = rs_xml_parse(xml, n, &h);
	rs_buf_release(&d.href);
	return err;
}

struct list_ctx {
	struct webdav_remote *w;
	const char *prefix;      /* the caller's prefix */
	const char *collection;  /* key prefix of the collection listed ("" or "packs/") */
	const char *coll_path;   /* its decoded URL path, ends in '/' */
	rs_remote_list_cb cb;
	void *payload;
	int depth;
	int stop;                /* the caller's non-zero return */
};

static int list_collection(struct webdav_remote *w, const char *collection,
			   const char *prefix, rs_remote_list_cb cb,
			   void *payload, int depth);

static int valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 255 || (n <= 2 && s[0] == '.'))
		return 0;
	for (i = 0; i < n; i++)
		if (!(('a' <= s[i] && s[i] <= 'z') || ('A' <= s[i] && s[i] <= 'Z') ||
		      ('0' <= s[i] && s[i] <= '9') || s[i] == '.' || s[i] == '_' ||
		      s[i] == '-'))
			return 0;
	return 1;
}

/*
 * The name of a direct child of the listed collection in an href, or
 * *nlen = 0 when the entry is not one (the collection itself, a deeper
 * path, a name the store does not use). *name points into `path`, the
 * decoded path.
 */
static int child_name(const struct list_ctx *ctx, const char *h, struct rs_buf *path,
		      const char **name, size_t *nlen)
{
	size_t plen, clen = strlen(ctx->coll_path);
	int err;

	*nlen = 0;
	/* An href is an absolute URL or an absolute path. */
	if (!strncasecmp(h, "http://", 7) || !strncasecmp(h, "https://", 8)) {
		h = strstr(h, "://") + 3;
		h = strchr(h, '/');
		if (!h)
			return 0;
	}
	err = rs_percent_decode(path, h, strcspn(h, "?#"), 0);
	if (err)
		return err;
	plen = path->len;
	while (plen && path->ptr[plen - 1] == '/')
		plen--;
	/* Only direct children of the collection listed; skips itself. */
	if (plen <= clen || strncmp(path->ptr, ctx->coll_path, clen))
		return 0;
	if (memchr(path->ptr + clen, '/', plen - clen) || !valid_name(path->ptr + clen, plen - clen))
		return 0;
	*name = path->ptr + clen;
	*nlen = plen - clen;
	return 0;
}

/* A sub-collection `key`: recurse only when it can hold matching keys. */
static int descend(struct list_ctx *ctx, struct rs_buf *key)
{
	size_t pl = strlen(ctx->prefix);
	int err = rs_buf_putc(key, '/');

	if (err || ctx->depth <= 0 || strncmp(key->ptr, ctx->prefix, pl < key->len ? pl : key->len))
		return err;
	err = list_collection(ctx->w, key->ptr, ctx->prefix, ctx->cb, ctx->payload,
			      ctx->depth - 1);
	if (err > 0) {
		ctx->stop = err;
		err = 1;
	}
	return err;
}

static int on_entry(const struct rs_dav_entry *e, void *payload)
{
	struct list_ctx *ctx = payload;
	struct rs_buf path = RS_BUF_INIT, key = RS_BUF_INIT;
	const char *name = NULL;
	size_t nlen;
	int err;

	err = child_name(ctx, e->href, &path, &name, &nlen);
	if (err || !nlen)
		goto out;
	err = rs_buf_printf(&key, "%s%.*s", ctx->collection, (int)nlen, name);
	if (err)
		goto out;
	if (e->collection) {
		err = descend(ctx, &key);
		goto out;
	}
	if (strstr(key.ptr, ".tmp-"))
		goto out; /* a put in progress (or one that died) */
	if (strncmp(key.ptr, ctx->prefix, strlen(ctx->prefix)))
		goto out;
	if (!e->has_size) {
		err = rs_error_set(RS_ECORRUPT, "PROPFIND %s: no size for '%s'",
				   ctx->w->parent.display_url, key.ptr);
		goto out;
	}
	err = ctx->cb(key.ptr, e->size, ctx->payload);
	if (err) {
		ctx->stop = err;
		err = 1; /* ends the scan; list_collection returns ctx->stop */
	}
out:
	rs_buf_release(&path);
	rs_buf_release(&key);
	return err;
}

static const char propfind_body[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	"<propfind xmlns=\"DAV:\"><prop><resourcetype/><getcontentlength/>"
	"</prop></propfind>\n";

static int list_collection(struct webdav_remote *w, const char *collection,
			   const char *prefix, rs_remote_list_cb cb,
			   void *payload, int depth)
{
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT, body = RS_BUF_INIT, coll_path = RS_BUF_INIT;
	struct list_ctx ctx;
	int err;

	rs_buf_init(&body, WEBDAV_LIST_MAX);
	rs_http_request_init(&req, "PROPFIND", NULL);
	rs_http_response_init(&resp);
	err = rs_buf_puts(&url, w->base);
	if (!err)
		err = rs_percent_encode_str(&url, collection, RS_SLASH_KEEP);
	if (!err)
		err = rs_buf_printf(&coll_path, "%s%s", w->base_path, collection);
	if (!err)
		err = rs_http_request_set_header(&req, "Depth", "1");
	if (!err)
		err = rs_http_request_set_header(&req, "Content-Type",
						 "application/xml; charset=utf-8");
	if (err)
		goto out;
	req.url = rs_buf_cstr(&url);
	rs_http_request_set_body_mem(&req, propfind_body, sizeof(propfind_body) - 1);
	req.response_body = &body;
	req.what = *collection ? collection : "/";
	err = dav_perform(w, &req, &resp);
	if (err == RS_ENOTFOUND) {
		err = 0; /* nothing stored under this collection yet */
		goto out;
	}
	if (err)
		goto out;
	if (resp.status != 207) {
		err = rs_error_set(RS_EGENERIC, "PROPFIND %s: answered %ld, not 207 "
				   "Multi-Status: is this a WebDAV server?",
				   rs_buf_cstr(&url), resp.status);
		goto out;
	}
	memset(&ctx, 0, sizeof(ctx));
	ctx.w = w;
	ctx.prefix = prefix;
	ctx.collection = collection;
	ctx.coll_path = rs_buf_cstr(&coll_path);
	ctx.cb = cb;
	ctx.payload = payload;
	ctx.depth = depth;
	err = rs_webdav_parse_multistatus(rs_buf_cstr(&body), body.len, on_entry, &ctx);
	if (ctx.stop)
		err = ctx.stop;
out:
	rs_buf_release(&url);
	rs_buf_release(&body);
	rs_buf_release(&coll_path);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	return err;
}

static int webdav_list(struct rs_remote *r, const char *prefix,
		       rs_remote_list_cb cb, void *payload)
{
	struct webdav_remote *w = (struct webdav_remote *)r;
	const char *slash = strrchr(prefix, '/');
	struct rs_buf coll = RS_BUF_INIT;
	int err = 0;

	if (*prefix && rs_remote_check_key(prefix))
		return rs_error_set(RS_EUSAGE, "bad list prefix '%.80s'", prefix);
	if (slash)
		err = rs_buf_put(&coll, prefix, (size_t)(slash - prefix + 1));
	if (!err)
		err = list_collection(w, rs_buf_cstr(&coll), prefix, cb, payload,
				      WEBDAV_LIST_DEPTH);
	rs_buf_release(&coll);
	return err;
}

static void webdav_free(struct rs_remote *r)
{
	struct webdav_remote *w = (struct webdav_remote *)r;
	size_t i;

	if (!w)
		return;
	rs_http_free(w->http);
	for (i = 0; i < w->ncollections; i++)
		free(w->collections[i]);
	rs_credential_release(&w->cred);
	pthread_mutex_destroy(&w->lock);
	free(w->base);
	free(w->base_path);
	free(r->display_url);
	free(w);
}

static const char *config(const struct rs_remote_options *opts, const char *key)
{
	if (!opts || !opts->config_get)
		return NULL;
	return opts->config_get(key, opts->config_payload);
}

static int config_true(const char *v)
{
	return v && (!strcasecmp(v, "true") || !strcasecmp(v, "yes") ||
		     !strcasecmp(v, "on") || !strcmp(v, "1"));
}

static struct webdav_remote *webdav_new(void)
{
	struct webdav_remote *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	w->parent.version = RS_REMOTE_VERSION;
	w->parent.get = webdav_get;
	w->parent.put_file = webdav_put_file;
	w->parent.put_buf = webdav_put_buf;
	w->parent.put_stream = webdav_put_stream;
	w->parent.stat = webdav_stat;
	w->parent.list = webdav_list;
	w->parent.del = webdav_del;
	w->parent.free = webdav_free;
	return w;
}

/*
 * The base URL without userinfo, ending in exactly one '/'; its decoded
 * path; and the display URL (no userinfo, no trailing '/').
 */
static int set_base(struct webdav_remote *w, const char *url)
{
	struct rs_buf base = RS_BUF_INIT, path = RS_BUF_INIT;
	const char *sep, *p;
	int err;

	err = rs_http_redact_url(&base, url);
	if (err)
		goto out;
	while (base.len && base.ptr[base.len - 1] == '/')
		base.len--;
	base.ptr[base.len] = '\0';
	w->parent.display_url = strdup(rs_buf_cstr(&base));
	err = rs_buf_putc(&base, '/');
	if (err)
		goto out;
	sep = strstr(base.ptr, "://") + 3;
	p = strchr(sep, '/');
	if (!p || p == sep) {
		err = rs_error_set(RS_EUSAGE, "'%s' has no host", w->parent.display_url);
		goto out;
	}
	err = rs_percent_decode(&path, p, strlen(p), 0);
	if (err)
		goto out;
	w->base = rs_buf_detach(&base, NULL);
	w->base_path = rs_buf_detach(&path, NULL);
	if (!w->parent.display_url || !w->base || !w->base_path)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	rs_buf_release(&base);
	rs_buf_release(&path);
	return err;
}

int rs_remote_webdav_open(struct rs_remote **out, const char *url,
			  const struct rs_remote_options *opts)
{
	struct webdav_remote *w;
	struct rs_http_options hopts;
	int err;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return rs_error_set(RS_EUSAGE, "not an http(s) URL");
	if (strpbrk(url, "?#"))
		return rs_error_set(RS_EUSAGE, "a WebDAV remote URL takes no query "
				    "or fragment");
	w = webdav_new();
	if (!w)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = set_base(w, url);
	if (err)
		goto out;
	err = rs_credential_from_url(&w->cred, url);
	if (err)
		goto out;
	if (w->cred.username)
		w->source = CRED_URL;
	if (rs_credential_from_env(&w->cred))
		w->source = CRED_ENV;
	w->direct_put = config_true(config(opts, "results.webdav.directput"));

	memset(&hopts, 0, sizeof(hopts));
	if (opts) {
		hopts.config_get = opts->config_get;
		hopts.config_payload = opts->config_payload;
	}
	hopts.server = w->parent.display_url;
	err = rs_http_new(&w->http, &hopts);
	if (err)
		goto out;
	*out = &w->parent;
out:
	if (err)
		webdav_free(&w->parent);
	return err;
}
