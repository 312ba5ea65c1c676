/*
 * Fuzz the XML scanners of the HTTP backends (remote/http_parse.h): a
 * WebDAV server's PROPFIND answer and an Azure List Blobs page are
 * untrusted input. Properties besides memory safety: every entry handed
 * out is a NUL-terminated string within the caps (href 4 KiB, blob name
 * 2 KiB), and the next marker stays under its 4 KiB cap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remote/http_parse.h"
#include "results/error.h"

static int on_dav(const struct rs_dav_entry *e, void *payload)
{
	(void)payload;
	if (strlen(e->href) > 4096)
		abort();
	return 0;
}

static int on_blob(const struct rs_azure_blob *b, void *payload)
{
	(void)payload;
	if (strlen(b->name) > 2048)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The backends hand the scanners an rs_buf: NUL-terminated at size. */
	char *doc = malloc(size + 1);
	struct rs_buf marker = RS_BUF_INIT;

	if (!doc)
		return 0;
	memcpy(doc, data, size);
	doc[size] = '\0';
	rs_buf_init(&marker, 4096);
	/* A refusal is a right answer to hostile input: what is checked is
	 * that neither scanner crashes nor overruns, and the marker's cap. */
	if (rs_webdav_parse_multistatus(doc, size, on_dav, NULL))
		rs_error_clear();
	if (rs_azure_parse_blob_list(doc, size, on_blob, NULL, &marker))
		rs_error_clear();
	if (marker.len > 4096)
		abort();
	rs_buf_release(&marker);
	free(doc);
	return 0;
}
