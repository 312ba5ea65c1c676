/*
 * Fuzz the S3 ListMultipartUploads page parser (remote/s3.h): the answer
 * is untrusted input, and what it names gets aborted. Properties besides
 * memory safety: every key and upload id handed to the callback is a
 * non-empty C string within its cap, and a truncated page comes with a
 * key marker.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/s3.h"
#include "results/error.h"

static int check_upload(const char *key, const char *id, int64_t initiated, void *payload)
{
	(void)initiated;
	(void)payload;
	if (strlen(key) > 1024 || !*id || strlen(id) > 1023)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_buf key = RS_BUF_INIT, id = RS_BUF_INIT;
	int truncated = 0;

	rs_buf_init(&key, 1025);
	rs_buf_init(&id, 1024);
	if (rs_s3_uploads_page_parse((const char *)data, size, check_upload, NULL, &key, &id,
				     &truncated) == 0 && truncated && key.len == 0)
		abort();
	rs_buf_release(&key);
	rs_buf_release(&id);
	return 0;
}
