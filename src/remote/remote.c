#include "remote/remote.h"
#include "util/error.h"

#include <assert.h>
#include <string.h>

/*
 * Pick a backend by the URL's scheme. A plain path (absolute or relative)
 * is a folder, like git's own local remotes.
 */
int rs_remote_open(struct rs_remote **out, const char *url,
		   const struct rs_remote_options *opts)
{
	(void)opts;
	if (!url || !*url)
		return rs_error_set(RS_EUSAGE, "no remote given: set 'git config results.remote <url>' or pass --remote");
	if (!strncmp(url, "file://", 7)) {
		if (url[7] != '/')
			return rs_error_set(RS_EUSAGE, "'%s' is not a file URL with an absolute path (file:///abs/path)", url);
		return rs_remote_folder_open(out, url + 7);
	}
	if (!strncmp(url, "s3://", 5))
		return rs_remote_s3_open(out, url, opts);
	if (!strncmp(url, "azure://", 8) || rs_remote_is_azure_url(url))
		return rs_remote_azure_open(out, url, opts);
	if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
		return rs_remote_webdav_open(out, url, opts);
	if (strstr(url, "://"))
		return rs_error_set(RS_EUSAGE, "'%.*s' is not a remote kind this build knows (file://, or a path)",
				    (int)(strstr(url, "://") - url + 3), url);
	return rs_remote_folder_open(out, url);
}

void rs_remote_free(struct rs_remote *r)
{
	if (r)
		r->free(r);
}

int rs_remote_check_key(const char *key)
{
	const char *p;

	if (!*key || *key == '/' || strlen(key) > 512 || strstr(key, ".."))
		return rs_error_set(RS_EUSAGE, "bad store key '%.80s'", key);
	for (p = key; *p; p++)
		if (!(('a' <= *p && *p <= 'z') || ('A' <= *p && *p <= 'Z') ||
		      ('0' <= *p && *p <= '9') || *p == '.' || *p == '_' ||
		      *p == '-' || *p == '/'))
			return rs_error_set(RS_EUSAGE, "bad store key '%.80s'", key);
	return 0;
}

int rs_remote_check_get(const char *key, uint64_t len, const struct rs_buf *out)
{
	if (len != UINT64_MAX || out->max)
		return 0;
	assert(!"a get to the end needs out->max (remote.h)");
	return rs_error_set(RS_EUSAGE, "internal: reading '%.80s' to the end needs a capped "
			    "buffer", key);
}
