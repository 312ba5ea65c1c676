/*
 * The store on its remote, for programs (results/store.h): one object that
 * owns both, so that a program never handles the remote interface or the
 * store's own types.
 */
#include "results/store.h"

#include <stdlib.h>
#include <string.h>

#include "remote/remote.h"
#include "ops/objstore.h"
#include "git/repo.h"
#include "results/buf.h"
#include "results/config.h"
#include "store/cache.h"
#include "util/fs.h"

int rs_objstore_wrap(struct rs_objstore **out, struct rs_remote *remote,
		     const struct rs_objstore_options *opts, long tmp_grace)
{
	struct rs_store_options sopts = { 0 };
	struct rs_buf cache = RS_BUF_INIT;
	struct rs_objstore *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		rs_remote_free(remote);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	s->remote = remote;
	if (opts) {
		sopts.zstd_level = opts->zstd_level;
		sopts.threads = opts->threads;
	}
	sopts.tmp_grace = tmp_grace;
	/* No cache folder is no error: the store then dedups within a push only. */
	if (opts && opts->use_cache && rs_store_cache_root(&cache) == 0)
		sopts.cache_dir = cache.ptr;
	rs_error_clear();
	err = rs_store_open(&s->store, s->remote, &sopts);
	rs_buf_release(&cache);
	if (err) {
		rs_objstore_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int rs_objstore_open_url(struct rs_objstore **out, const char *url, struct rs_config *config,
			 const struct rs_objstore_options *opts)
{
	struct rs_remote_options ropts;
	struct rs_remote *remote = NULL;
	long grace;
	int err;

	/* One grace period for the store's cache, a folder remote and the downloads. */
	err = rs_fs_parse_grace(config ? rs_config_get(config, RS_TMP_GRACE_KEY) : NULL, &grace);
	if (err)
		return err;
	/* Backends read extra settings (region, endpoint, CA file) from git config. */
	rs_config_remote_options(&ropts, config);
	err = rs_remote_open(&remote, url, &ropts);
	if (err)
		return rs_error_wrap(err, "results remote");
	return rs_objstore_wrap(out, remote, opts, grace);
}

void rs_objstore_free(struct rs_objstore *s)
{
	if (!s)
		return;
	rs_store_free(s->store);
	rs_remote_free(s->remote);
	free(s);
}

const char *rs_objstore_display_url(const struct rs_objstore *s)
{
	return s->remote->display_url;
}

int rs_objstore_check_format(struct rs_objstore *s)
{
	return rs_store_check_format(s->store);
}

static int parse_oid(struct rs_id *oid, const char *oid_hex)
{
	int err = rs_id_from_hex(oid, oid_hex, strlen(oid_hex));

	if (err)
		return rs_error_set(RS_EUSAGE, "bad oid '%.70s': %s", oid_hex, rs_error_message());
	return 0;
}

int rs_objstore_put(struct rs_objstore *s, const char *oid_hex, uint64_t size, const char *path,
		    rs_objstore_progress_fn progress, void *payload,
		    struct rs_objstore_put_stats *stats)
{
	struct rs_store_put_stats st = { 0 };
	struct rs_id oid;
	int err;

	err = parse_oid(&oid, oid_hex);
	if (err)
		return err;
	err = rs_store_put_file(s->store, &oid, size, path, progress, payload, &st);
	if (err)
		return err;
	if (stats) {
		stats->chunks = st.chunks;
		stats->chunks_new = st.chunks_new;
		stats->bytes_raw = st.bytes_raw;
		stats->bytes_stored = st.bytes_stored;
		stats->already_present = st.already_present;
	}
	return 0;
}

int rs_objstore_get(struct rs_objstore *s, const char *oid_hex, uint64_t size, const char *dest,
		    rs_objstore_progress_fn progress, void *payload)
{
	struct rs_id oid;
	int err;

	err = parse_oid(&oid, oid_hex);
	if (err)
		return err;
	/* git-lfs hashes every download it is given (results/store.h) */
	return rs_store_get_file_flags(s->store, &oid, size, dest, RS_GET_CALLER_HASHES, progress,
				       payload);
}

#define DOWNLOAD_PREFIX "results-"

/*
 * Our downloads in git-lfs's tmp folder: "results-<oid>" once complete
 * (git-lfs moves it away at once) and "results-<oid>.tmp-XXXXXX" while
 * being written. One older than the grace period is a killed agent's.
 */
static int is_download_name(const char *name)
{
	size_t n = strlen(DOWNLOAD_PREFIX);

	return !strncmp(name, DOWNLOAD_PREFIX, n) && strlen(name) >= n + RS_OID_HEXSZ &&
	       (name[n + RS_OID_HEXSZ] == '\0' || rs_fs_is_tmp_name(name));
}

int rs_objstore_download_dir(struct rs_buf *out, struct rs_repo *r)
{
	size_t start = out->len;
	long grace;
	int err;

	err = rs_repo_tmp_grace(r, &grace);
	if (err)
		return err;
	/* git-lfs renames downloads into its object store: write them beside it. */
	err = rs_repo_lfs_tmp_dir(out, r);
	if (err)
		return err;
	/* What killed agents left there: see is_download_name. */
	rs_fs_remove_stale(out->ptr + start, is_download_name, grace);
	return 0;
}

int rs_objstore_download_path(struct rs_buf *out, const char *dir, const char *oid_hex)
{
	return rs_buf_printf(out, "%s/" DOWNLOAD_PREFIX "%s", dir, oid_hex);
}
