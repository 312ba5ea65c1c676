/*
 * Credentials, region and endpoint for the S3 backend, found the way AWS's
 * own tools (aws-cli, the SDKs) find them, so a machine already set up
 * for `aws s3` needs nothing more:
 *
 * credentials  1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN)
 *              2. profile AWS_PROFILE (or AWS_DEFAULT_PROFILE, or "default")
 *                 in the shared credentials file (AWS_SHARED_CREDENTIALS_FILE,
 *                 default ~/.aws/credentials), section [name]
 *              3. the same profile in the config file (AWS_CONFIG_FILE,
 *                 default ~/.aws/config), section [profile name] or [default]
 * region       1. repository config results.s3.region
 *              2. AWS_REGION, then AWS_DEFAULT_REGION
 *              3. "region" of the profile in the config file
 *              4. us-east-1
 * endpoint     1. repository config results.s3.endpoint
 *              2. AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL
 *              3. "endpoint_url" of the profile in the config file
 *              4. none: AWS itself (https://s3.<region>.amazonaws.com)
 *
 * The repository's own settings come first for region and endpoint
 * because they describe where this repository's bucket is; a user's
 * AWS_REGION for their other work must not send requests elsewhere.
 * Credentials are never read from the repository config: it is easy to
 * commit or share by mistake.
 *
 * Path-style addressing (https://host/bucket/key) is used for a custom
 * endpoint (MinIO, Ceph, s3rver, R2 ...) and virtual-hosted addressing
 * (https://bucket.s3.<region>.amazonaws.com/key) for AWS, unless
 * results.s3.addressing says "path" or "virtual".
 *
 * The INI files are parsed with caps (1 MiB a file, 4 KiB a line); lines
 * indented under a key (aws-cli's nested "s3 =" blocks) are skipped.
 */
#ifndef RS_AWS_CONFIG_H
#define RS_AWS_CONFIG_H

#include "results/error.h"

#include "remote/remote.h"

/* Every string is owned by the struct (rs_aws_config_release). */
struct rs_aws_config {
	char *access_key_id;
	char *secret_access_key; /* never printed */
	char *session_token;     /* NULL without one; never printed */
	char *region;
	char *endpoint;          /* "http://127.0.0.1:4568" without a trailing '/'; NULL for AWS */
	int path_style;          /* 1: https://host/bucket/key */
	/* Where the credentials came from, for messages ("environment", "profile 'x' in '...'"). */
	char *credential_source;
};

/*
 * Resolve everything as described above. `config_get` (and its payload)
 * may be NULL. RS_EAUTH when no credentials are found anywhere (the
 * message says where it looked); RS_EUSAGE for a malformed file or
 * endpoint; `out` is filled only on success and must be released.
 */
RS_MUST_CHECK
int rs_aws_config_load(struct rs_aws_config *out, rs_config_get_fn config_get,
		       void *config_payload);

void rs_aws_config_release(struct rs_aws_config *cfg);

/*
 * Look up `key` in section `section` of the INI file at `path` (exact
 * section name, for example "profile dev"). 0 and a malloc'd value in
 * *out; RS_ENOTFOUND when the file, section or key is missing;
 * RS_EUSAGE for a file over the caps. Exposed for the unit tests.
 */
RS_MUST_CHECK
int rs_aws_ini_get(char **out, const char *path, const char *section,
		   const char *key);

/*
 * The same lookup in `len` bytes of `text` (untrusted; need not be
 * NUL-terminated; at most 1 MiB). Exposed for the fuzz target.
 */
RS_MUST_CHECK
int rs_aws_ini_find(char **out, const char *text, size_t len, const char *section,
		    const char *key);

#endif
