#define _GNU_SOURCE /* memmem */
#include "remote/remote.h"
#include "results/error.h"

#include <assert.h>
#include <string.h>

/* The parts of a scheme://authority URL (pointers into it). */
struct url_parts {
	const char *scheme_end; /* the "://" */
	const char *auth;       /* after "://" */
	const char *auth_end;   /* first '/', '?' or '#' after auth */
	const char *at;         /* the last '@' of the authority, or NULL */
	const char *query;      /* the first '?' or '#', or NULL */
};

/*
 * Split `url` when it starts with a scheme ([A-Za-z][A-Za-z0-9+.-]*://);
 * 0 when it does not (a plain path, even one holding "://" further on).
 */
static int url_split(const char *url, struct url_parts *u)
{
	const char *p;

	memset(u, 0, sizeof(*u));
	if (!(('a' <= *url && *url <= 'z') || ('A' <= *url && *url <= 'Z')))
		return 0;
	for (p = url; *p && strncmp(p, "://", 3) != 0; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-", *p))
			return 0;
	if (!*p)
		return 0;
	u->scheme_end = p;
	u->auth = p + 3;
	u->auth_end = u->auth + strcspn(u->auth, "/?#");
	/* The last '@' ends the userinfo: a password may hold '@'. */
	for (p = u->auth; p < u->auth_end; p++)
		if (*p == '@')
			u->at = p;
	p = u->auth + strcspn(u->auth, "?#");
	u->query = *p ? p : NULL;
	return 1;
}

int rs_remote_url_display(struct rs_buf *out, const char *url)
{
	struct url_parts u;
	const char *end = url + strcspn(url, "?#");
	int err;

	if (!url_split(url, &u))
		return rs_buf_put(out, url, (size_t)(end - url));
	err = rs_buf_put(out, url, (size_t)(u.auth - url));
	if (err == 0) {
		const char *host = u.at ? u.at + 1 : u.auth;

		err = rs_buf_put(out, host, (size_t)(end - host));
	}
	return err;
}

static int scheme_is(const struct url_parts *u, const char *url, const char *name)
{
	size_t n = (size_t)(u->scheme_end - url);

	return strlen(name) == n && strncmp(url, name, n) == 0;
}

/* The host (a name, or an IPv6 address in brackets) and the port, if any, of `u`. */
static int check_authority(const struct url_parts *u, const char *url)
{
	const char *p, *host = u->at ? u->at + 1 : u->auth, *host_end = u->auth_end;
	const char *port = NULL;
	unsigned long val = 0;

	if (*host == '[') {
		p = memchr(host, ']', (size_t)(host_end - host));
		if (!p)
			return rs_error_set(RS_EUSAGE, "the remote URL's host has '[' without ']'");
		if (p + 1 < host_end && p[1] != ':')
			return rs_error_set(RS_EUSAGE, "the remote URL has text after its host's ']'");
		port = p + 1 < host_end ? p + 2 : NULL;
		host_end = p + 1;
	} else {
		p = memchr(host, ':', (size_t)(host_end - host));
		if (p) {
			port = p + 1;
			host_end = p;
		}
	}
	if (host_end == host || (host_end - host == 2 && *host == '['))
		return rs_error_set(RS_EUSAGE, "the remote URL names no host (%.*s://HOST/...)",
				    (int)(u->scheme_end - url), url);
	if (!port)
		return 0;
	for (p = port; p < u->auth_end && p - port < 6; p++) {
		if (*p < '0' || *p > '9')
			break;
		val = val * 10 + (unsigned long)(*p - '0');
	}
	if (p == port || p != u->auth_end || val < 1 || val > 65535)
		return rs_error_set(RS_EUSAGE, "the remote URL's port '%.*s' is not a port "
				    "number (1 to 65535)",
				    (int)(u->auth_end - port > 12 ? 12 : u->auth_end - port), port);
	return 0;
}

int rs_remote_check_url(const char *url)
{
	struct url_parts u;
	const char *p;

	if (!url || !*url)
		return rs_error_set(RS_EUSAGE, "no remote given: set 'git config results.remote <url>' "
				    "or pass --remote");
	for (p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return rs_error_set(RS_EUSAGE, "the remote URL holds a control character (byte "
					    "0x%02x at offset %zu); type it again", (unsigned char)*p,
					    (size_t)(p - url));
	if (!url_split(url, &u))
		return 0; /* a folder path: any name the file system takes */
	if (scheme_is(&u, url, "file"))
		return 0; /* rs_remote_open checks the absolute path */
	if (!scheme_is(&u, url, "s3") && !scheme_is(&u, url, "azure") &&
	    !scheme_is(&u, url, "http") && !scheme_is(&u, url, "https"))
		return rs_error_set(RS_EUSAGE, "'%.*s://' is not a remote kind this build knows; it "
				    "knows %s%s", (int)(u.scheme_end - url), url, RS_REMOTE_KINDS,
				    scheme_is(&u, url, "az") ? " (for Azure write azure://)" : "");
	if (strchr(url, ' '))
		return rs_error_set(RS_EUSAGE, "the remote URL holds a space, which no %.*s:// remote "
				    "can use; write it as %%20 or choose another name",
				    (int)(u.scheme_end - url), url);
	if (u.at && scheme_is(&u, url, "s3"))
		return rs_error_set(RS_EUSAGE, "an s3:// URL takes no user name or password: give "
				    "credentials as AWS tools read them (AWS_ACCESS_KEY_ID and "
				    "AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials)");
	if (u.at && scheme_is(&u, url, "azure"))
		return rs_error_set(RS_EUSAGE, "an azure:// URL takes no user name or password: give "
				    "credentials as Azure tools read them (AZURE_STORAGE_KEY, "
				    "AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_SAS_TOKEN)");
	return check_authority(&u, url);
}

/*
 * A backend's message may quote the URL it was given: take out what may be
 * a credential (the "user:password@" part and the query) before anyone
 * prints it.
 */
static void scrub_message(const char *url)
{
	struct url_parts u;
	const char *secret[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 };
	struct rs_buf msg = RS_BUF_INIT;
	const char *m, *hit;
	int code = rs_error_last(), i, any = 0, err = 0;

	if (!url_split(url, &u))
		return;
	if (u.at) {
		secret[0] = u.auth;
		len[0] = (size_t)(u.at + 1 - u.auth);
	}
	if (u.query && u.query[1]) {
		secret[1] = u.query;
		len[1] = strcspn(u.query + 1, "#") + 1;
	}
	m = rs_error_message();
	for (i = 0; i < 2; i++)
		if (secret[i] && len[i] > 1 && memmem(m, strlen(m), secret[i], len[i]))
			any = 1;
	if (!any)
		return;
	while (*m) {
		const char *first = NULL;
		int which = -1;

		for (i = 0; i < 2; i++) {
			if (!secret[i] || len[i] < 2)
				continue;
			hit = memmem(m, strlen(m), secret[i], len[i]);
			if (hit && (!first || hit < first)) {
				first = hit;
				which = i;
			}
		}
		if (!first) {
			err = rs_buf_puts(&msg, m);
			break;
		}
		err = rs_buf_put(&msg, m, (size_t)(first - m));
		if (err)
			break;
		err = rs_buf_puts(&msg, which == 0 ? "" : "?<hidden>");
		if (err)
			break;
		m = first + len[which];
	}
	/*
	 * Out of memory: the failed put has overwritten the message `m` was
	 * reading, and msg holds only part of it; say what is known without
	 * quoting the URL.
	 */
	if (err)
		rs_error_set(code, "the remote URL is not valid (and there was no memory to "
			     "say more without quoting its credential)");
	else
		rs_error_set(code, "%s", msg.ptr ? msg.ptr : "the remote URL is not valid");
	rs_buf_release(&msg);
}

/*
 * Pick a backend by the URL's scheme. A plain path (absolute or relative)
 * is a folder, like git's own local remotes.
 */
int rs_remote_open(struct rs_remote **out, const char *url,
		   const struct rs_remote_options *opts)
{
	int err;

	err = rs_remote_check_url(url);
	if (err)
		return err;
	if (!strncmp(url, "file://", 7)) {
		if (url[7] != '/')
			return rs_error_set(RS_EUSAGE, "'%s' is not a file URL with an absolute path (file:///abs/path)", url);
		return rs_remote_folder_open(out, url + 7, opts);
	}
	if (!strncmp(url, "s3://", 5))
		err = rs_remote_s3_open(out, url, opts);
	else if (!strncmp(url, "azure://", 8) || rs_remote_is_azure_url(url))
		err = rs_remote_azure_open(out, url, opts);
	else if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
		err = rs_remote_webdav_open(out, url, opts);
	else
		return rs_remote_folder_open(out, url, opts);
	if (err)
		scrub_message(url);
	return err;
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
