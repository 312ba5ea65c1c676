/*
 * The Azure Blob storage backend: azure://account/container/prefix or
 * https://account.blob.core.windows.net/container/prefix[?sas].
 *
 * Requests (Blob service REST API, x-ms-version RS_AZURE_VERSION):
 *   stat  Get Blob Properties (HEAD)          list  List Blobs, prefix + marker paging
 *   get   Get Blob with Range                 del   Delete Blob
 *   put   Put Blob up to results.azure.singleputmax bytes (default 64 MiB),
 *         else Put Block from several threads (results.azure.threads, 4) in
 *         blocks of results.azure.blocksize (8 MiB) and one Put Block List.
 *   put_stream  a pack still being written: Put Block as it grows, two
 *         in flight, then Put Block List (or Put Blob when it is small).
 * Both ways are atomic on Azure: a blob becomes visible, whole, when Put
 * Blob or Put Block List commits it; uncommitted blocks of an upload that
 * died are invisible and Azure discards them after a week.
 *
 * A missing container is an empty store: stat/get say "not found", list
 * lists nothing, and the first put creates the container (with the
 * account key; a SAS for one container cannot, and then the put fails
 * with Azure's own message).
 *
 * Credentials, as Azure's tools read them (first match wins):
 *   a SAS in the URL's query string;
 *   AZURE_STORAGE_CONNECTION_STRING (AccountName, AccountKey,
 *     SharedAccessSignature, BlobEndpoint, DefaultEndpointsProtocol,
 *     EndpointSuffix, UseDevelopmentStorage) when its AccountName is the
 *     URL's account;
 *   AZURE_STORAGE_KEY (with AZURE_STORAGE_ACCOUNT, when set, naming the
 *     same account);
 *   AZURE_STORAGE_SAS_TOKEN;
 *   none: anonymous, for public containers.
 * Endpoint: config results.azure.endpoint (emulators, sovereign clouds),
 * else the connection string's BlobEndpoint, else the https:// URL's host,
 * else <protocol>://<account>.blob.<suffix or core.windows.net>.
 * So azurite's development connection string and azure://devstoreaccount1/c
 * just work.
 */
#include "remote/remote.h"
#include "remote/azure_sign.h"
#include "remote/http_parse.h"
#include "remote/http_transport.h"
#include "remote/xml.h"

#include "results/error.h"
#include "util/hex.h"

#include <openssl/evp.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define AZURE_LIST_PAGE_MAX (16u * 1024 * 1024)
#define AZURE_MAX_BLOCKS 50000
#define AZURE_MAX_THREADS 32
#define AZURE_STREAM_BLOCK_MIN (1u << 20) /* a growing file's smallest block */

struct azure_remote {
	struct rs_remote parent;
	struct rs_http *http;
	char *container_url; /* endpoint/container, no trailing '/' */
	char *prefix;        /* "" or "a/b/" */
	char *sas;           /* query string without '?', or NULL */
	char *account;
	char *key;           /* base64, or NULL */
	struct rs_azure_signer signer;
	uint64_t single_put_max;
	uint64_t block_size;
	int threads;
};

/* ---- helpers ---- */

/*
 * container_url [/ prefix+key] [? query] [& sas]. `key` NULL for the
 * container itself; `query` may be NULL.
 */
static int build_url(const struct azure_remote *a, struct rs_buf *out,
		     const char *key, const char *query)
{
	int err = rs_buf_puts(out, a->container_url);
	int q = 0;

	if (!err && key) {
		err = rs_buf_putc(out, '/');
		if (!err)
			err = rs_percent_encode_str(out, a->prefix, RS_SLASH_KEEP);
		if (!err)
			err = rs_percent_encode_str(out, key, RS_SLASH_KEEP);
	}
	if (!err && query && *query) {
		err = rs_buf_printf(out, "?%s", query);
		q = 1;
	}
	if (!err && a->sas)
		err = rs_buf_printf(out, "%c%s", q ? '&' : '?', a->sas);
	return err;
}

static int is_container_missing(const struct rs_http_response *resp)
{
	return !strcmp(resp->error_code, "ContainerNotFound");
}

/* The request's signer: SharedKey with a key, else only the version. */
static int azure_version_only(struct rs_http_request *req, void *payload)
{
	(void)payload;
	return rs_http_request_set_header(req, "x-ms-version", RS_AZURE_VERSION);
}

/* The error codes Azure Storage names, and what they mean here. */
static const struct rs_http_error_rule azure_error_rules[] = {
	{ NULL, "Request date header too old", RS_EAUTH,
	  RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  "clock skew - this machine's clock differs too much from the server's; "
	  "check the system time" },
	{ "ContainerNotFound", NULL, RS_EUSAGE, 0,
	  "no such container - create it or check the remote URL" },
	{ "AuthenticationFailed", NULL, RS_EAUTH, RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  "the signature was refused - check the key" },
	{ "AuthorizationFailure", NULL, RS_EAUTH, RS_HTTP_SAY_STATUS_TEXT | RS_HTTP_SAY_CODE,
	  "the signature was refused - check the key" },
};

static const struct rs_http_errors azure_errors = {
	"x-ms-error-code", azure_error_rules,
	sizeof(azure_error_rules) / sizeof(azure_error_rules[0]),
};

static int perform(struct azure_remote *a, struct rs_http_request *req,
		   struct rs_http_response *resp)
{
	int err = rs_http_perform(a->http, req, resp);

	if (err == RS_EAUTH && !a->key && !a->sas)
		err = rs_error_wrap(err, "no Azure credentials were found (set "
				    "AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY "
				    "or AZURE_STORAGE_SAS_TOKEN)");
	return err;
}

/* ---- stat / get / del ---- */

/*
 * One request on the blob `key` with no body either way (HEAD, DELETE).
 * A 404 is RS_ENOTFOUND, said for this store; with `say_container`, the
 * message says when the container itself is missing.
 */
static int blob_request(struct azure_remote *a, const char *method, const char *key,
			struct rs_http_response *resp, int say_container)
{
	struct rs_http_request req;
	struct rs_buf url = RS_BUF_INIT;
	int err;

	rs_http_request_init(&req, method, NULL);
	err = rs_remote_check_key(key);
	if (err)
		goto out;
	err = build_url(a, &url, key, NULL);
	if (err)
		goto out;
	req.url = rs_buf_cstr(&url);
	err = perform(a, &req, resp);
	if ((err == RS_ENOTFOUND || err == RS_EUSAGE) && resp->status == 404)
		err = rs_error_set(RS_ENOTFOUND, "'%s' is not in the store at %s%s",
				   key, a->parent.display_url,
				   say_container && is_container_missing(resp) ?
				   " (the container does not exist yet)" : "");
out:
	rs_buf_release(&url);
	rs_http_request_release(&req);
	return err;
}

static int azure_stat(struct rs_remote *r, const char *key, uint64_t *size_out)
{
	struct rs_http_response resp;
	uint64_t size;
	int err;

	rs_http_response_init(&resp);
	err = blob_request((struct azure_remote *)r, "HEAD", key, &resp, 1);
	if (err)
		goto out;
	err = rs_http_response_content_length(&resp, key, r->display_url, &size);
	if (!err && size_out)
		*size_out = size; /* callers may only ask whether it exists */
out:
	rs_http_response_release(&resp);
	return err;
}

static int azure_get_url(struct rs_remote *r, const char *key, struct rs_buf *out)
{
	return build_url((struct azure_remote *)r, out, key, NULL);
}

/* A missing container reads as a missing blob: the key is not there. */
static int azure_get_perform(struct rs_remote *r, struct rs_http_request *req,
			     struct rs_http_response *resp)
{
	int err = perform((struct azure_remote *)r, req, resp);

	return err == RS_EUSAGE && resp->status == 404 ? RS_ENOTFOUND : err;
}

static int azure_get(struct rs_remote *r, const char *key, uint64_t off,
		     uint64_t len, struct rs_buf *out)
{
	static const struct rs_http_get_ops ops = { azure_get_url, azure_get_perform };

	return rs_http_get_range(r, &ops, key, off, len, out);
}

static int azure_del(struct rs_remote *r, const char *key)
{
	struct rs_http_response resp;
	int err;

	rs_http_response_init(&resp);
	err = blob_request((struct azure_remote *)r, "DELETE", key, &resp, 0);
	rs_http_response_release(&resp);
	return err;
}

/* ---- put ---- */

static int create_container(struct azure_remote *a)
{
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf url = RS_BUF_INIT;
	int err;

	rs_http_request_init(&req, "PUT", NULL);
	rs_http_response_init(&resp);
	err = build_url(a, &url, NULL, "restype=container");
	if (err)
		goto out;
	req.url = rs_buf_cstr(&url);
	rs_http_request_set_body_mem(&req, "", 0);
	err = perform(a, &req, &resp);
	if (err && resp.status == 409) /* ContainerAlreadyExists: a race, fine */
		err = 0;
	if (err)
		rs_error_wrap(err, "cannot create the container at %s",
			      a->parent.display_url);
out:
	rs_buf_release(&url);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	return err;
}

/* One Put Blob of a whole body (memory or file region), atomically. */
static int put_blob(struct azure_remote *a, const char *key,
		    struct rs_http_request *req, struct rs_http_response *resp)
{
	struct rs_buf url = RS_BUF_INIT;
	int err = build_url(a, &url, key, NULL);

	if (!err)
		err = rs_http_request_set_header(req, "x-ms-blob-type", "BlockBlob");
	if (!err)
		err = rs_http_request_set_header(req, "Content-Type",
						 "application/octet-stream");
	if (!err) {
		req->url = rs_buf_cstr(&url);
		err = perform(a, req, resp);
		req->url = NULL;
	}
	rs_buf_release(&url);
	return err;
}

struct block_job {
	struct azure_remote *a;
	const char *key;
	const char *path;      /* file source, or */
	const unsigned char *mem; /* memory source */
	uint64_t size;
	uint64_t block_size;
	uint32_t nblocks;

	pthread_mutex_t lock;
	uint32_t next;
	int err;
	struct rs_error_saved saved; /* its message: threads have their own slots */
	int container_missing;
};

/* Block ids must all have the same length: base64 of "rsblk-%06u". */
static void block_id(char out[32], uint32_t i)
{
	char raw[13];

	snprintf(raw, sizeof(raw), "rsblk-%06u", (unsigned int)(i % 1000000));
	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)raw, 12);
}

/*
 * Put Block i: bytes [off, off + len) of the file at `path` (or of `mem`).
 * *container_missing says whether it failed for want of the container.
 */
static int put_block(struct azure_remote *a, const char *key, uint32_t i,
		     const char *path, const unsigned char *mem, uint64_t off,
		     uint64_t len, int *container_missing)
{
	struct rs_buf url = RS_BUF_INIT, q = RS_BUF_INIT;
	struct rs_http_request req;
	struct rs_http_response resp;
	char id[32];
	int err;

	block_id(id, i);
	err = rs_buf_puts(&q, "comp=block&blockid=");
	if (!err)
		err = rs_percent_encode_str(&q, id, RS_SLASH_ENCODE);
	if (!err)
		err = build_url(a, &url, key, rs_buf_cstr(&q));
	rs_http_request_init(&req, "PUT", rs_buf_cstr(&url));
	rs_http_response_init(&resp);
	if (path)
		rs_http_request_set_body_file(&req, path, off, len);
	else
		rs_http_request_set_body_mem(&req, mem + off, (size_t)len);
	if (!err)
		err = perform(a, &req, &resp);
	if (err)
		*container_missing = is_container_missing(&resp);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	rs_buf_release(&url);
	rs_buf_release(&q);
	return err;
}

static void *block_worker(void *arg)
{
	struct block_job *job = arg;

	for (;;) {
		uint32_t i;
		uint64_t off, len;
		int err, missing;

		pthread_mutex_lock(&job->lock);
		if (job->err || job->next == job->nblocks) {
			pthread_mutex_unlock(&job->lock);
			break;
		}
		i = job->next++;
		pthread_mutex_unlock(&job->lock);

		off = (uint64_t)i * job->block_size;
		len = job->size - off < job->block_size ? job->size - off : job->block_size;
		missing = 0;
		err = put_block(job->a, job->key, i, job->path, job->mem, off, len, &missing);
		if (err) {
			pthread_mutex_lock(&job->lock);
			if (!job->err) {
				job->err = err;
				job->container_missing = missing;
				rs_error_save(&job->saved, err);
			}
			pthread_mutex_unlock(&job->lock);
		}
	}
	return NULL;
}

/* Put Block List of blocks 0..nblocks-1: the blob appears, whole, only now. */
static int commit_blocks(struct azure_remote *a, const char *key, uint32_t nblocks,
			 int *container_missing)
{
	struct rs_http_request req;
	struct rs_http_response resp;
	struct rs_buf body = RS_BUF_INIT, url = RS_BUF_INIT;
	uint32_t b;
	int err;

	rs_http_request_init(&req, "PUT", NULL);
	rs_http_response_init(&resp);
	err = rs_buf_puts(&body, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<BlockList>");
	for (b = 0; !err && b < nblocks; b++) {
		char id[32];

		block_id(id, b);
		err = rs_buf_printf(&body, "<Latest>%s</Latest>", id);
	}
	if (!err)
		err = rs_buf_puts(&body, "</BlockList>\n");
	if (!err)
		err = build_url(a, &url, key, "comp=blocklist");
	if (!err)
		err = rs_http_request_set_header(&req, "x-ms-blob-content-type",
						 "application/octet-stream");
	if (!err)
		err = rs_http_request_set_header(&req, "Content-Type",
						 "application/xml; charset=utf-8");
	if (!err) {
		req.url = rs_buf_cstr(&url);
		rs_http_request_set_body_mem(&req, body.ptr, body.len);
		err = perform(a, &req, &resp);
		if (err)
			*container_missing = is_container_missing(&resp);
	}
	rs_buf_release(&body);
	rs_buf_release(&url);
	rs_http_request_release(&req);
	rs_http_response_release(&resp);
	return err;
}

/*
 * Upload in blocks from several threads, then commit the list. Returns
 * 1 in *container_missing when the container was not there.
 */
static int put_blocks(struct azure_remote *a, const char *key, const char *path,
		      const void *mem, uint64_t size, int *container_missing)
{
	struct block_job job;
	pthread_t th[AZURE_MAX_THREADS];
	int nth, started = 0, i;

	memset(&job, 0, sizeof(job));
	job.a = a;
	job.key = key;
	job.path = path;
	job.mem = mem;
	job.size = size;
	job.block_size = a->block_size;
	/* Azure allows 50,000 blocks: grow the blocks for huge files. */
	while ((size + job.block_size - 1) / job.block_size > AZURE_MAX_BLOCKS)
		job.block_size *= 2;
	job.nblocks = (uint32_t)((size + job.block_size - 1) / job.block_size);
	pthread_mutex_init(&job.lock, NULL);

	nth = a->threads < (int)job.nblocks ? a->threads : (int)job.nblocks;
	for (i = 0; i < nth; i++) {
		if (pthread_create(&th[i], NULL, block_worker, &job))
			break;
		started++;
	}
	if (!started)
		block_worker(&job); /* no threads to be had: do it here */
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&job.lock);
	if (job.err) {
		*container_missing = job.container_missing;
		return rs_error_restore(&job.saved);
	}

	return commit_blocks(a, key, job.nblocks, container_missing);
}

static int azure_put(struct azure_remote *a, const char *key, const char *path,
		     const void *mem, uint64_t size)
{
	int err, attempt;

	err = rs_remote_check_key(key);
	for (attempt = 0; !err && attempt < 2; attempt++) {
		int missing = 0;

		if (size <= a->single_put_max) {
			struct rs_http_request req;
			struct rs_http_response resp;

			rs_http_request_init(&req, "PUT", NULL);
			rs_http_response_init(&resp);
			if (path)
				rs_http_request_set_body_file(&req, path, 0, size);
			else
				rs_http_request_set_body_mem(&req, mem, (size_t)size);
			err = put_blob(a, key, &req, &resp);
			missing = err && is_container_missing(&resp);
			rs_http_request_release(&req);
			rs_http_response_release(&resp);
		} else {
			err = put_blocks(a, key, path, mem, size, &missing);
		}
		if (!err || !missing || attempt)
			break;
		/* First put into a container that is not there yet. */
		err = create_container(a);
	}
	if (err)
		rs_error_wrap(err, "cannot store '%s' at %s", key, a->parent.display_url);
	return err;
}

static int azure_put_buf(struct rs_remote *r, const char *key, const void *p,
			 size_t n)
{
	return azure_put((struct azure_remote *)r, key, NULL, n ? p : "", n);
}

static int azure_put_file(struct rs_remote *r, const char *key, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot stat '%s'", path);
	return azure_put((struct azure_remote *)r, key, path, NULL,
			 (uint64_t)st.st_size);
}

/*
 * What the two threads of azure_put_stream share. `lock` guards every
 * field from `off` on; the others are set before the threads start.
 */
struct stream_job {
	struct azure_remote *a;
	const char *key;
	struct rs_growing *g;
	const char *path;
	uint64_t least;        /* the smallest block but the last */

	pthread_mutex_t lock;
	uint64_t off;          /* the next byte to claim */
	uint32_t n;            /* blocks claimed, ids 0..n-1 in byte order */
	int single;            /* sealed before any block: one Put Blob */
	uint64_t single_size;
	int err;               /* the first failure, with its message */
	struct rs_error_saved saved;
};

/* Keep the first failure and this thread's message for it; lock held. */
static void stream_job_fail(struct stream_job *s, int err)
{
	if (s->err)
		return;
	s->err = err;
	rs_error_save(&s->saved, err);
}

/*
 * Put Block i of a stream, [off, off + len). The first put into a container
 * that is not there yet makes it and tries again. Both threads may get
 * there; the second create is a 409 that create_container takes for success.
 */
static int put_stream_block(struct stream_job *s, uint32_t i, uint64_t off, uint64_t len,
			    int *made_container)
{
	int err, missing = 0;

	err = put_block(s->a, s->key, i, s->path, NULL, off, len, &missing);
	if (!err || !missing || *made_container)
		return err;
	*made_container = 1;
	err = create_container(s->a);
	if (err)
		return err;
	return put_block(s->a, s->key, i, s->path, NULL, off, len, &missing);
}

/*
 * One of azure_put_stream's two uploaders: wait until `least` bytes past
 * the next unclaimed one are published (or the file is sealed), claim
 * them as the next block under the lock, Put Block, repeat. A thread that
 * finds its bytes claimed by the other while it waited waits further on.
 * It stops at the first failure (its own or the other's, seen at its next
 * claim), when all of a sealed file is claimed, or when the file turns
 * out small enough for one Put Blob (left to the caller). A thread
 * blocked in rs_growing_wait after the other failed wakes when the writer
 * publishes more, seals or cancels, which the writer always does.
 */
static void *stream_worker(void *arg)
{
	struct stream_job *s = arg;
	struct azure_remote *a = s->a;
	int made_container = 0;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		uint64_t off = s->off, avail = 0, len;
		uint32_t i;
		int err, sealed = 0;

		if (s->err || s->single)
			break;
		pthread_mutex_unlock(&s->lock);
		err = rs_growing_wait(s->g, off + s->least, &avail, &sealed);
		pthread_mutex_lock(&s->lock);
		if (err) {
			stream_job_fail(s, err);
			break;
		}
		if (s->err || s->single)
			break;
		if (s->off != off)
			continue; /* the other thread took these bytes */
		if (sealed && s->n == 0 && avail <= a->single_put_max) {
			s->single = 1;
			s->single_size = avail;
			break;
		}
		if (avail == off) /* sealed, and every byte is claimed */
			break;
		if (s->n == AZURE_MAX_BLOCKS) {
			stream_job_fail(s, rs_error_set(RS_EUSAGE, "'%s' needs more than "
							"Azure's %d blocks", s->key,
							AZURE_MAX_BLOCKS));
			break;
		}
		i = s->n++;
		len = avail - off < a->block_size ? avail - off : a->block_size;
		s->off = off + len;
		pthread_mutex_unlock(&s->lock);

		err = put_stream_block(s, i, off, len, &made_container);
		pthread_mutex_lock(&s->lock);
		if (err) {
			stream_job_fail(s, err);
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * A pack while it is being written: a Put Block for whatever the file has
 * gained (at least AZURE_STREAM_BLOCK_MIN or the block size if smaller,
 * at most the block size) as it comes, then a Put Block List once it is
 * sealed. Azure has no minimum block size, so the blocks follow the
 * writer's pace. Two Put Blocks are in flight at a time (this thread and
 * one helper, stream_worker), so a round trip and the server's time per
 * request no longer sit between one block and the next; the blocks are
 * claimed in order under a lock, so their ids 0..n-1 are in byte order,
 * as Put Block List needs them. Without a helper thread this thread does
 * it all, one block at a time. A file sealed before any block went out is
 * one Put Blob. Uncommitted blocks never show (Azure drops them after a
 * week), so a failure or a cancel leaves nothing at `key`; a failure is
 * returned once both threads have stopped, which may be when the writer
 * seals or cancels.
 */
static int azure_put_stream(struct rs_remote *r, const char *key, struct rs_growing *g)
{
	struct azure_remote *a = (struct azure_remote *)r;
	struct stream_job s;
	pthread_t helper;
	int err, missing = 0, helped;

	err = rs_remote_check_key(key);
	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	s.a = a;
	s.key = key;
	s.g = g;
	s.path = rs_growing_path(g);
	s.least = a->block_size < AZURE_STREAM_BLOCK_MIN ? a->block_size
							 : AZURE_STREAM_BLOCK_MIN;
	pthread_mutex_init(&s.lock, NULL);
	helped = !pthread_create(&helper, NULL, stream_worker, &s);
	stream_worker(&s);
	if (helped)
		pthread_join(helper, NULL);
	pthread_mutex_destroy(&s.lock);

	if (s.err)
		err = rs_error_restore(&s.saved);
	else if (s.single)
		return azure_put(a, key, s.path, NULL, s.single_size);
	else
		err = commit_blocks(a, key, s.n, &missing);
	if (err)
		rs_error_wrap(err, "cannot store '%s' at %s", key, a->parent.display_url);
	return err;
}

/* ---- list ---- */

struct list_state {
	struct azure_remote *a;
	const char *prefix;
	rs_remote_list_cb cb;
	void *payload;
	struct rs_buf marker;
};

/* The reading of one EnumerationResults page. */
struct blob_page {
	rs_azure_blob_fn fn;
	void *payload;
	struct rs_buf name, *next_marker;
	uint64_t size;
	int in_blob, has_size;
};

static int blob_open(void *payload, unsigned int depth, const char *name)
{
	struct blob_page *bp = payload;

	if (depth == 1 && strcmp(name, "EnumerationResults"))
		return rs_error_set(RS_ECORRUPT, "the List Blobs answer is not "
				    "EnumerationResults XML");
	if (!strcmp(name, "Blob")) {
		bp->in_blob = 1;
		bp->has_size = 0;
		bp->size = 0;
		rs_buf_clear(&bp->name);
	}
	return 0;
}

static int blob_close(void *payload, unsigned int depth, const char *name,
		      const char *text, size_t len)
{
	struct blob_page *bp = payload;
	struct rs_azure_blob b;
	char *e;

	(void)depth;
	if (bp->in_blob && !strcmp(name, "Name")) {
		rs_buf_clear(&bp->name);
		return rs_buf_put(&bp->name, text, len);
	}
	if (bp->in_blob && !strcmp(name, "Content-Length")) {
		bp->size = strtoull(text, &e, 10);
		bp->has_size = e != text && !*e;
		return 0;
	}
	if (!strcmp(name, "NextMarker")) {
		rs_buf_clear(bp->next_marker);
		return rs_buf_put(bp->next_marker, text, len);
	}
	if (!strcmp(name, "Blob") && bp->in_blob) {
		bp->in_blob = 0;
		b.name = rs_buf_cstr(&bp->name);
		b.size = bp->size;
		b.has_size = bp->has_size;
		return bp->fn(&b, bp->payload);
	}
	return 0;
}

/*
 * Read one EnumerationResults page: call back for every <Blob> (its
 * <Name> and <Content-Length>) and keep <NextMarker>. Values are capped at
 * 2 KiB (blob names are at most 1024 characters); a page cut off before
 * its root closes is refused, as it would silently drop keys.
 */
int rs_azure_parse_blob_list(const char *xml, size_t n, rs_azure_blob_fn fn,
			     void *payload, struct rs_buf *next_marker)
{
	struct blob_page bp;
	struct rs_xml_handler h = { "the List Blobs answer", blob_open, blob_close, &bp,
				    AZURE_LIST_PAGE_MAX, 0, 2048 };
	int err;

	memset(&bp, 0, sizeof(bp));
	bp.fn = fn;
	bp.payload = payload;
	bp.next_marker = next_marker;
	rs_buf_init(&bp.name, 2048);
	rs_buf_clear(next_marker);
	err = rs_xml_parse(xml, n, &h);
	if (err)
		rs_buf_clear(next_marker);
	rs_buf_release(&bp.name);
	return err;
}

/* Turn a blob name into a store key and pass it on when it matches. */
static int on_blob(const struct rs_azure_blob *b, void *payload)
{
	struct list_state *st = payload;
	size_t plen = strlen(st->a->prefix);
	const char *k = b->name;

	if (strncmp(k, st->a->prefix, plen))
		return 0;
	k += plen;
	if (strncmp(k, st->prefix, strlen(st->prefix)))
		return 0;
	if (rs_remote_check_key(k)) {
		rs_error_clear();
		return 0; /* not one of ours */
	}
	if (!b->has_size)
		return rs_error_set(RS_ECORRUPT, "List Blobs: no size for '%s'", k);
	return st->cb(k, b->size, st->payload);
}

/* "&<name><value>" with the value percent-encoded, '/' too; nothing for "". */
static int put_param(struct rs_buf *q, const char *name, const struct rs_buf *value)
{
	int err;

	if (!value->len)
		return 0;
	err = rs_buf_puts(q, name);
	if (err)
		return err;
	return rs_percent_encode_str(q, rs_buf_cstr(value), RS_SLASH_ENCODE);
}

/* One List Blobs request: the full prefix, and the marker to go on from. */
static int list_url(struct azure_remote *a, struct rs_buf *url, const struct rs_buf *full,
		    const struct rs_buf *marker)
{
	struct rs_buf q = RS_BUF_INIT;
	int err;

	rs_buf_clear(url);
	err = rs_buf_puts(&q, "restype=container&comp=list&maxresults=5000");
	if (err)
		goto out;
	err = put_param(&q, "&prefix=", full);
	if (err)
		goto out;
	err = put_param(&q, "&marker=", marker);
	if (err)
		goto out;
	err = build_url(a, url, NULL, rs_buf_cstr(&q));
out:
	rs_buf_release(&q);
	return err;
}

static int azure_list(struct rs_remote *r, const char *prefix,
		      rs_remote_list_cb cb, void *payload)
{
	struct azure_remote *a = (struct azure_remote *)r;
	struct list_state st;
	struct rs_buf url = RS_BUF_INIT, body = RS_BUF_INIT, full = RS_BUF_INIT;
	struct rs_http_pages pages = RS_HTTP_PAGES_INIT;
	int err = 0;

	if (*prefix && rs_remote_check_key(prefix))
		return rs_error_set(RS_EUSAGE, "bad list prefix '%.80s'", prefix);
	memset(&st, 0, sizeof(st));
	st.a = a;
	st.prefix = prefix;
	st.cb = cb;
	st.payload = payload;
	rs_buf_init(&st.marker, 4096);
	rs_buf_init(&body, AZURE_LIST_PAGE_MAX);
	err = rs_buf_printf(&full, "%s%s", a->prefix, prefix);
	do {
		struct rs_http_request req;
		struct rs_http_response resp;

		rs_buf_clear(&body);
		if (!err)
			err = list_url(a, &url, &full, &st.marker);
		if (err)
			break;
		rs_http_request_init(&req, "GET", rs_buf_cstr(&url));
		rs_http_response_init(&resp);
		req.response_body = &body;
		req.what = full.len ? rs_buf_cstr(&full) : "/";
		err = perform(a, &req, &resp);
		if (err && resp.status == 404 && is_container_missing(&resp))
			err = 0; /* no container yet: an empty store */
		else if (!err)
			err = rs_azure_parse_blob_list(rs_buf_cstr(&body), body.len,
						       on_blob, &st, &st.marker);
		else
			st.marker.len = 0;
		rs_http_request_release(&req);
		rs_http_response_release(&resp);
		/* A marker seen before (A -> B -> A) would loop forever. */
		if (!err)
			err = rs_http_pages_next(&pages, rs_buf_cstr(&st.marker), st.marker.len,
						 r->display_url, full.len ? rs_buf_cstr(&full) : "/");
	} while (!err && st.marker.len);
	rs_http_pages_release(&pages);
	rs_buf_release(&st.marker);
	rs_buf_release(&url);
	rs_buf_release(&body);
	rs_buf_release(&full);
	return err;
}

/* ---- open ---- */

static void azure_free(struct rs_remote *r)
{
	struct azure_remote *a = (struct azure_remote *)r;

	if (!a)
		return;
	rs_http_free(a->http);
	free(a->container_url);
	free(a->prefix);
	free(a->account);
	if (a->sas) {
		memset(a->sas, 0, strlen(a->sas));
		free(a->sas);
	}
	if (a->key) {
		memset(a->key, 0, strlen(a->key));
		free(a->key);
	}
	free(r->display_url);
	free(a);
}

static const char *config(const struct rs_remote_options *opts, const char *key)
{
	if (!opts || !opts->config_get)
		return NULL;
	return opts->config_get(key, opts->config_payload);
}

static uint64_t config_size(const struct rs_remote_options *opts, const char *key,
			    uint64_t def, uint64_t lo, uint64_t hi)
{
	const char *v = config(opts, key);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return def;
	n = strtoull(v, &end, 10);
	if (*end == 'k' || *end == 'K')
		n <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		n <<= 20, end++;
	if (*end || n < lo || n > hi)
		return def;
	return n;
}

int rs_remote_is_azure_url(const char *url)
{
	const char *host, *host_end, *b;

	if (strncmp(url, "https://", 8) && strncmp(url, "http://", 7))
		return 0;
	host = strstr(url, "://") + 3;
	host_end = host + strcspn(host, "/?#:");
	b = strstr(host, ".blob.core.");
	return b && b < host_end;
}

/* What an Azure remote URL names besides the account (a->account). */
struct azure_url {
	char *container;
	char *https_endpoint; /* https://account.blob.core.../ form: its endpoint */
	char *sas;            /* a SAS token as the URL's query (a secret) */
	struct rs_buf prefix; /* "" or "dir/sub/" */
};

static void azure_url_release(struct azure_url *u)
{
	free(u->container);
	free(u->https_endpoint);
	if (u->sas) {
		memset(u->sas, 0, strlen(u->sas));
		free(u->sas);
	}
	rs_buf_release(&u->prefix);
}

/* The prefix p[0..n) without slashes at either end, with one after it. */
static int url_prefix(struct rs_buf *prefix, const char *p, const char *pend)
{
	int err;

	while (p < pend && *p == '/')
		p++;
	while (pend > p && pend[-1] == '/')
		pend--;
	if (pend == p)
		return 0;
	err = rs_buf_put(prefix, p, (size_t)(pend - p));
	if (!err)
		err = rs_buf_putc(prefix, '/');
	if (!err && rs_remote_check_key(rs_buf_cstr(prefix)))
		err = rs_error_set(RS_EUSAGE, "the Azure URL's prefix may only hold "
				   "[A-Za-z0-9._/-]");
	return err;
}

/*
 * Read azure://account/container/prefix or
 * https://account.blob.core.windows.net/container/prefix[?sas] into
 * a->account and `u`.
 */
static int parse_url(struct azure_remote *a, const char *url, struct azure_url *u)
{
	const char *query = strchr(url, '?'), *rest, *slash, *host;
	size_t n;

	if (!strncmp(url, "azure://", 8)) {
		rest = url + 8;
		slash = strchr(rest, '/');
		if (!slash || slash == rest)
			return rs_error_set(RS_EUSAGE, "an Azure remote is "
					    "azure://account/container[/prefix]");
		a->account = strndup(rest, (size_t)(slash - rest));
		rest = slash + 1;
	} else if (rs_remote_is_azure_url(url)) {
		host = strstr(url, "://") + 3;
		slash = strchr(host, '/');
		if (!slash || (query && query < slash))
			return rs_error_set(RS_EUSAGE, "an Azure blob URL needs a container: "
					    "https://account.blob.core.windows.net/container");
		a->account = strndup(host, strcspn(host, "."));
		u->https_endpoint = strndup(url, (size_t)(slash - url));
		rest = slash + 1;
	} else {
		return rs_error_set(RS_EUSAGE, "not an Azure URL");
	}
	if (!a->account || !*a->account)
		return rs_error_set(RS_EUSAGE, "the Azure URL names no account");
	n = query ? (size_t)(query - rest) : strlen(rest);
	slash = memchr(rest, '/', n);
	u->container = strndup(rest, slash ? (size_t)(slash - rest) : n);
	if (!u->container || !*u->container)
		return rs_error_set(RS_EUSAGE, "the Azure URL names no container");
	if (query && query[1])
		u->sas = strdup(query + 1);
	return slash ? url_prefix(&u->prefix, slash + 1, rest + n) : 0;
}

/*
 * AZURE_STORAGE_KEY (when AZURE_STORAGE_ACCOUNT is unset or this account),
 * else AZURE_STORAGE_SAS_TOKEN, else none.
 */
static int credentials_from_env(struct azure_remote *a)
{
	const char *key = getenv("AZURE_STORAGE_KEY");
	const char *account = getenv("AZURE_STORAGE_ACCOUNT");
	const char *sas = getenv("AZURE_STORAGE_SAS_TOKEN");

	if (key && *key && (!account || !strcmp(account, a->account))) {
		a->key = strdup(key);
		if (!a->key)
			return rs_error_set(RS_EGENERIC, "out of memory");
	} else if (sas && *sas) {
		a->sas = strdup(sas[0] == '?' ? sas + 1 : sas);
		if (!a->sas)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/*
 * The credential, first found: a SAS in the URL, the connection string's
 * key or SAS (when it names this account), AZURE_STORAGE_KEY (when
 * AZURE_STORAGE_ACCOUNT is unset or this account), AZURE_STORAGE_SAS_TOKEN.
 * None is fine: a public container. `*use_conn` says whether the
 * connection string is this account's (its endpoint counts then too).
 */
static int pick_credentials(struct azure_remote *a, struct azure_url *u,
			    struct rs_azure_account *conn, int *use_conn)
{
	const char *cs = getenv("AZURE_STORAGE_CONNECTION_STRING");
	int err;

	*use_conn = 0;
	if (cs && *cs) {
		err = rs_azure_connection_string_parse(conn, cs);
		if (err)
			return rs_error_wrap(err, "AZURE_STORAGE_CONNECTION_STRING");
		*use_conn = conn->name && !strcmp(conn->name, a->account);
	}
	if (u->sas) {
		a->sas = u->sas;
		u->sas = NULL;
	} else if (*use_conn && conn->key) {
		a->key = strdup(conn->key);
		if (!a->key)
			return rs_error_set(RS_EGENERIC, "out of memory");
	} else if (*use_conn && conn->sas) {
		a->sas = strdup(conn->sas);
		if (!a->sas)
			return rs_error_set(RS_EGENERIC, "out of memory");
	} else {
		return credentials_from_env(a);
	}
	return 0;
}

/*
 * The blob endpoint (results.azure.endpoint, the connection string's,
 * the https URL's, else https://account.blob.core.windows.net) and from
 * it a->container_url, a->prefix and the display URL.
 */
static int set_urls(struct azure_remote *a, const struct rs_remote_options *opts,
		    const struct rs_azure_account *conn, int use_conn, struct azure_url *u)
{
	struct rs_buf endpoint = RS_BUF_INIT, buf = RS_BUF_INIT;
	const char *env = config(opts, "results.azure.endpoint");
	int err;

	if (env && *env)
		err = rs_buf_puts(&endpoint, env);
	else if (use_conn && conn->blob_endpoint)
		err = rs_buf_puts(&endpoint, conn->blob_endpoint);
	else if (u->https_endpoint)
		err = rs_buf_puts(&endpoint, u->https_endpoint);
	else
		err = rs_buf_printf(&endpoint, "%s://%s.blob.%s",
				    use_conn && conn->protocol ? conn->protocol : "https",
				    a->account,
				    use_conn && conn->suffix ? conn->suffix : "core.windows.net");
	if (err)
		goto out;
	while (endpoint.len && endpoint.ptr[endpoint.len - 1] == '/')
		endpoint.ptr[--endpoint.len] = '\0';
	if (strncmp(endpoint.ptr, "http://", 7) && strncmp(endpoint.ptr, "https://", 8)) {
		err = rs_error_set(RS_EUSAGE, "the Azure blob endpoint must be an http(s) URL");
		goto out;
	}
	err = rs_buf_printf(&buf, "%s/%s", endpoint.ptr, u->container);
	if (err)
		goto out;
	a->container_url = rs_buf_detach(&buf, NULL);
	a->prefix = rs_buf_detach(&u->prefix, NULL);
	err = rs_http_redact_url(&buf, a->container_url);
	if (!err && *a->prefix)
		err = rs_buf_printf(&buf, "/%.*s", (int)strlen(a->prefix) - 1, a->prefix);
	if (err)
		goto out;
	a->parent.display_url = rs_buf_detach(&buf, NULL);
	if (!a->container_url || !a->prefix || !a->parent.display_url)
		err = rs_error_set(RS_EGENERIC, "out of memory");
out:
	rs_buf_release(&endpoint);
	rs_buf_release(&buf);
	return err;
}

/* The sizes from git config and the transport, signing when there is a key. */
static int open_transport(struct azure_remote *a, const struct rs_remote_options *opts)
{
	struct rs_http_options hopts;
	struct rs_buf t = RS_BUF_INIT;
	int err;

	a->single_put_max = config_size(opts, "results.azure.singleputmax",
					64u << 20, 0, 5000ull << 20);
	a->block_size = config_size(opts, "results.azure.blocksize", 8u << 20,
				    1u << 10, 4000ull << 20);
	a->threads = (int)config_size(opts, "results.azure.threads", 4, 1,
				      AZURE_MAX_THREADS);
	memset(&hopts, 0, sizeof(hopts));
	if (opts) {
		hopts.config_get = opts->config_get;
		hopts.config_payload = opts->config_payload;
	}
	hopts.server = a->parent.display_url;
	hopts.errors = &azure_errors;
	hopts.sign = azure_version_only;
	if (a->key) {
		a->signer.account = a->account;
		a->signer.key = a->key;
		hopts.sign = rs_azure_sign;
		hopts.sign_payload = &a->signer;
		/* Catch a malformed key now, not on the first request. */
		err = rs_azure_authorization(&t, "", a->account, a->key);
		rs_buf_release(&t);
		if (err)
			return rs_error_wrap(err, "%s", a->parent.display_url);
	}
	return rs_http_new(&a->http, &hopts);
}

int rs_remote_azure_open(struct rs_remote **out, const char *url,
			 const struct rs_remote_options *opts)
{
	struct azure_remote *a;
	struct rs_azure_account conn;
	struct azure_url u;
	int err, use_conn = 0;

	a = calloc(1, sizeof(*a));
	if (!a)
		return rs_error_set(RS_EGENERIC, "out of memory");
	a->parent.version = RS_REMOTE_VERSION;
	a->parent.get = azure_get;
	a->parent.put_file = azure_put_file;
	a->parent.put_stream = azure_put_stream;
	a->parent.put_buf = azure_put_buf;
	a->parent.stat = azure_stat;
	a->parent.list = azure_list;
	a->parent.del = azure_del;
	a->parent.free = azure_free;

	rs_azure_account_init(&conn);
	memset(&u, 0, sizeof(u));
	err = parse_url(a, url, &u);
	if (!err)
		err = pick_credentials(a, &u, &conn, &use_conn);
	if (!err)
		err = set_urls(a, opts, &conn, use_conn, &u);
	if (!err)
		err = open_transport(a, opts);
	rs_azure_account_release(&conn);
	azure_url_release(&u);
	if (err) {
		azure_free(&a->parent);
		return err;
	}
	*out = &a->parent;
	return 0;
}
