/*
 * Internals of the S3 backend (s3.c) that are worth testing on their own.
 * The backend itself is opened through remote.h (rs_remote_s3_open).
 */
#ifndef RS_S3_H
#define RS_S3_H

#include <stddef.h>
#include <stdint.h>

#include "remote/http_transport.h"
#include "remote/remote.h"
#include "results/buf.h"

/*
 * Parse one ListObjectsV2 response page (untrusted: `len` bytes of `xml`,
 * which need not be NUL-terminated). For every <Contents> whose decoded
 * <Key> starts with `strip_prefix`, call `cb` with the rest of the key and
 * its <Size>; keys outside the prefix are skipped. *truncated says whether
 * more pages follow; then `next_token` (cleared first; its cap bounds the
 * token) holds the decoded <NextContinuationToken>.
 * Returns 0, RS_ECORRUPT for malformed XML (no message prefix: the caller
 * adds the remote's name), a buffer cap's RS_EUSAGE, or the callback's
 * non-zero value unchanged.
 */
RS_MUST_CHECK
int rs_s3_list_page_parse(const char *xml, size_t len, const char *strip_prefix,
			  rs_remote_list_cb cb, void *payload,
			  struct rs_buf *next_token, int *truncated);

/* One in-progress multipart upload: its full key, id, start (Unix time). */
typedef int (*rs_s3_upload_cb)(const char *key, const char *upload_id, int64_t initiated,
			       void *payload) RS_MUST_CHECK;

/*
 * Parse one ListMultipartUploads response page (untrusted, as above): call
 * `cb` for every <Upload> with its decoded <Key>, <UploadId> and
 * <Initiated> time. *truncated says whether more pages follow; then
 * `next_key` / `next_id` (cleared first, capped) hold <NextKeyMarker> and
 * <NextUploadIdMarker>. RS_ECORRUPT for malformed XML, or the callback's
 * non-zero value unchanged.
 */
RS_MUST_CHECK
int rs_s3_uploads_page_parse(const char *xml, size_t len, rs_s3_upload_cb cb, void *payload,
			     struct rs_buf *next_key, struct rs_buf *next_id, int *truncated);

/* The error codes S3 names and what they mean (the transport's rules). */
extern const struct rs_http_errors rs_s3_http_errors;

#endif
