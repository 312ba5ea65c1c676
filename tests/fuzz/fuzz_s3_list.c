/*
 * Fuzz the S3 ListObjectsV2 page parser (remote/s3.h): S3's answer is
 * untrusted input. Properties besides memory safety: every key handed to
 * the callback is a C string that had the prefix stripped, and a
 * truncated page comes with a non-empty token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/s3.h"
#include "results/error.h"

static int check_key(const char *key, uint64_t size, void *payload)
{
	(void)size;
	(void)payload;
	if (!*key || strlen(key) > 1024)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_buf token = RS_BUF_INIT;
	int truncated = 0;

	rs_buf_init(&token, 4096);
	if (rs_s3_list_page_parse((const char *)data, size, "team/store/", check_key, NULL,
				  &token, &truncated) == 0 && truncated && token.len == 0)
		abort();
	rs_buf_release(&token);
	return 0;
}
