/*
 * The readers of the WebDAV and Azure listings, exposed for tests (and
 * fuzzing) only; backends call them internally. Both go through the one
 * XML reader (remote/xml.h, on libexpat, with its entity rule and caps),
 * read exactly `n` bytes of `xml`, keep every value under a size cap, and
 * fail with RS_ECORRUPT on input they cannot read (not well-formed, cut
 * off, a DOCTYPE, another root element). A callback's non-zero return
 * stops the scan and is returned.
 */
#ifndef RS_HTTP_PARSE_H
#define RS_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "results/error.h"

/* One <response> of a WebDAV multistatus (PROPFIND) answer. */
struct rs_dav_entry {
	const char *href; /* entity-decoded, still percent-encoded; borrowed */
	uint64_t size;    /* <getcontentlength>, when has_size */
	int has_size;
	int collection;   /* <resourcetype><collection/> */
};

typedef int (*rs_dav_entry_fn)(const struct rs_dav_entry *e, void *payload) RS_MUST_CHECK;

RS_MUST_CHECK
int rs_webdav_parse_multistatus(const char *xml, size_t n, rs_dav_entry_fn fn,
				void *payload);

/* One <Blob> of an Azure List Blobs (EnumerationResults) page. */
struct rs_azure_blob {
	const char *name; /* entity-decoded; borrowed */
	uint64_t size;    /* <Content-Length>, when has_size */
	int has_size;
};

typedef int (*rs_azure_blob_fn)(const struct rs_azure_blob *b, void *payload) RS_MUST_CHECK;

/* `next_marker` receives <NextMarker> (cleared first; empty on the last page). */
RS_MUST_CHECK
int rs_azure_parse_blob_list(const char *xml, size_t n, rs_azure_blob_fn fn,
			     void *payload, struct rs_buf *next_marker);

#endif
