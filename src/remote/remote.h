/*
 * A remote is where the store keeps its immutable, content-addressed files
 * (packs, pack indexes, manifests). The store speaks to it only through
 * this struct of operations; a backend knows nothing of chunks or packs.
 *
 * Keys are relative '/'-separated names made of [A-Za-z0-9._/-]
 * ("packs/<hex>.pack"). Every backend must:
 *  - make a put atomic: a reader sees the whole new content or nothing;
 *  - allow a put of a key that already exists (same content: the store
 *    only writes content-addressed keys, so a retry or a second writer
 *    writes the same bytes);
 *  - allow every operation to be called from several threads at once on
 *    one rs_remote (downloads fetch chunks in parallel);
 *  - never put a credential in an error message.
 * The layout is modelled on libgit2's git_odb_backend.
 */
#ifndef RS_REMOTE_H
#define RS_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "results/error.h"
#include "util/growing.h"

#define RS_REMOTE_VERSION 1

/* Return non-zero from a list callback to stop early (that value is returned). */
typedef int (*rs_remote_list_cb)(const char *key, uint64_t size, void *payload) RS_MUST_CHECK;

/*
 * Looks up a configuration value (for example "results.s3.region") for
 * backends that need more than the URL. Returns a borrowed string or NULL.
 */
typedef const char *(*rs_config_get_fn)(const char *key, void *payload);

struct rs_remote_options {
	rs_config_get_fn config_get; /* may be NULL */
	void *config_payload;
};

/* Every operation that returns an error is RS_MUST_CHECK, through the pointer too. */
struct rs_remote {
	unsigned int version;

	/*
	 * Append bytes [off, off + len) of `key` to `out`; len UINT64_MAX
	 * reads to the end, and then `out->max` must be set (the most the
	 * caller accepts: what the format allows): RS_EUSAGE otherwise (an
	 * assert in debug builds). A backend never accepts more bytes than
	 * asked for, or than out->max allows, from its server: it stops
	 * reading as soon as they pass and fails, naming the server
	 * (display_url) and the key, with RS_ECORRUPT (more than a range
	 * asked for) or RS_ETOOBIG (past out->max). RS_ENOTFOUND when the key does
	 * not exist, RS_ECORRUPT when it is shorter than asked.
	 */
	int (*get)(struct rs_remote *r, const char *key, uint64_t off,
		   uint64_t len, struct rs_buf *out) RS_MUST_CHECK;

	/* Store the local file at `path` under `key`, atomically. */
	int (*put_file)(struct rs_remote *r, const char *key, const char *path) RS_MUST_CHECK;

	/* Store `n` bytes of `p` under `key`, atomically. */
	int (*put_buf)(struct rs_remote *r, const char *key, const void *p, size_t n) RS_MUST_CHECK;

	/*
	 * Optional: NULL when it would gain nothing (a local folder); the
	 * store then waits for the file and uses put_file. Store under `key`
	 * the file that `src` is still writing (util/growing.h): send what is
	 * published, wait for more, and finish once it is sealed, as
	 * atomically as put_file: a reader sees the whole sealed content or
	 * nothing, also when this fails or the writer cancels. The store
	 * calls it on a thread of its own while it goes on writing, so a
	 * pack's upload overlaps its compression.
	 */
	int (*put_stream)(struct rs_remote *r, const char *key, struct rs_growing *src) RS_MUST_CHECK;

	/* 0 and the size when `key` exists; RS_ENOTFOUND when not. */
	int (*stat)(struct rs_remote *r, const char *key, uint64_t *size_out) RS_MUST_CHECK;

	/* Call `cb` for every key that starts with `prefix`, in any order. */
	int (*list)(struct rs_remote *r, const char *prefix,
		    rs_remote_list_cb cb, void *payload) RS_MUST_CHECK;

	/* Remove `key`; RS_ENOTFOUND when it was not there. */
	int (*del)(struct rs_remote *r, const char *key) RS_MUST_CHECK;

	/*
	 * Optional (NULL: nothing to do): remove what killed writers left
	 * behind and nothing else sees, once they are older than the grace
	 * period: temporary files of a folder store, incomplete S3 multipart
	 * uploads. Best effort, also done by the first put of a process;
	 * `results gc` calls it so that a store nobody pushes to is tidied too.
	 */
	void (*tidy)(struct rs_remote *r);

	void (*free)(struct rs_remote *r);

	/* The URL with any credential removed, for messages (owned by the remote). */
	char *display_url;
};

/*
 * The remote kinds this build accepts, for messages and --help texts (one
 * list, so that help never offers what rs_remote_check_url refuses).
 */
#define RS_REMOTE_KINDS \
	"file:///abs/path (or a plain folder path), s3://bucket/prefix, " \
	"azure://account/container/prefix, https://host/path or http://host/path " \
	"(WebDAV; Azure at https://account.blob.core.windows.net/container)"

/*
 * 0 when `url` is one this build could ever use: a known scheme (or a
 * plain path), no control character, and for the network schemes (s3,
 * azure, http, https) a host, a port in 1-65535 when one is given, no
 * space, and no user or password in s3:// and azure:// URLs. RS_EUSAGE
 * otherwise, with a message naming the problem; the message never holds
 * the URL's user, password or query (they may be credentials). Whether
 * the remote answers is not checked here.
 */
RS_MUST_CHECK
int rs_remote_check_url(const char *url);

/*
 * `url` without its "user:password@" part and without any "?query" or
 * "#fragment" (a SAS token is a query), for messages and committed files;
 * appended to `out`.
 */
RS_MUST_CHECK
int rs_remote_url_display(struct rs_buf *out, const char *url);

/*
 * Open the remote named by `url`: "file:///abs/path" or a plain path for a
 * folder, s3://, azure://, http(s)://. The URL is checked first with
 * rs_remote_check_url. The result is the caller's: release it with
 * rs_remote_free.
 * RS_EUSAGE for a URL that names no known backend or is malformed; no
 * error message of this function holds the URL's credentials.
 */
RS_MUST_CHECK
int rs_remote_open(struct rs_remote **out, const char *url,
		   const struct rs_remote_options *opts);

void rs_remote_free(struct rs_remote *r);

/*
 * 0 when `key` is a key as described above: non-empty, relative, at most
 * 512 bytes of [A-Za-z0-9._/-], no "..". RS_EUSAGE otherwise, naming it.
 * Every backend checks keys with it before they reach a path or a URL.
 */
RS_MUST_CHECK
int rs_remote_check_key(const char *key);

/*
 * 0 unless `len` is UINT64_MAX (a read to the end) and `out` has no cap:
 * then RS_EUSAGE naming `key`, and an assert in debug builds. Every
 * backend's get calls it first: a read to the end without a cap would let
 * the remote's bytes grow the buffer without bound.
 */
RS_MUST_CHECK
int rs_remote_check_get(const char *key, uint64_t len, const struct rs_buf *out);

/* Backends (one file each). */
/*
 * A folder; of the settings only results.tmpGracePeriod, the age after
 * which a killed writer's temporary file is removed (util/fs.h): a bad
 * value is RS_EUSAGE here.
 */
RS_MUST_CHECK
int rs_remote_folder_open(struct rs_remote **out, const char *path,
			  const struct rs_remote_options *opts);
/* s3://bucket/prefix; settings as in remote/aws_config.h. */
RS_MUST_CHECK
int rs_remote_s3_open(struct rs_remote **out, const char *url,
		      const struct rs_remote_options *opts);
/*
 * http(s)://host/path: WebDAV (PUT + MOVE, PROPFIND listing); credentials
 * from the environment or git's credential helpers (remote/credential.h).
 */
RS_MUST_CHECK
int rs_remote_webdav_open(struct rs_remote **out, const char *url,
			  const struct rs_remote_options *opts);
/*
 * azure://account/container/prefix or
 * https://account.blob.core.windows.net/container/prefix: Azure Blob
 * storage with SharedKey or SAS (credentials as Azure's tools read them).
 */
RS_MUST_CHECK
int rs_remote_azure_open(struct rs_remote **out, const char *url,
			 const struct rs_remote_options *opts);
/* Whether an https:// URL names an Azure blob endpoint (*.blob.core.*). */
int rs_remote_is_azure_url(const char *url);

#endif
