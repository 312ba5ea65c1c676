/*
 * The XML scanners of the HTTP backends (remote/http_parse.h): answers as
 * nginx, Apache and azurite send them, malformed and oversized answers,
 * and a deterministic mutation loop (truncations, flipped and inserted
 * bytes) that must never crash or read out of bounds (run it under
 * RS_SANITIZE=ON to have that checked).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/http_parse.h"
#include "remote/s3.h"
#include "results/error.h"

struct seen {
	char items[16][512];
	uint64_t sizes[16];
	int flags[16]; /* dav: collection | has_size << 1; azure: has_size */
	int n;
	int stop_at;
};

static int on_dav(const struct rs_dav_entry *e, void *payload)
{
	struct seen *s = payload;

	if (s->n < 16) {
		snprintf(s->items[s->n], sizeof(s->items[0]), "%s", e->href);
		s->sizes[s->n] = e->size;
		s->flags[s->n] = e->collection | e->has_size << 1;
		s->n++;
	}
	return s->stop_at && s->n == s->stop_at ? 7 : 0;
}

static int on_blob(const struct rs_azure_blob *b, void *payload)
{
	struct seen *s = payload;

	if (s->n < 16) {
		snprintf(s->items[s->n], sizeof(s->items[0]), "%s", b->name);
		s->sizes[s->n] = b->size;
		s->flags[s->n] = b->has_size;
		s->n++;
	}
	return 0;
}

static const char nginx_answer[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n"
	"<D:multistatus xmlns:D=\"DAV:\">\n"
	"<D:response>\n<D:href>/store/packs/</D:href>\n<D:propstat>\n<D:prop>\n"
	"<D:resourcetype><D:collection/></D:resourcetype>\n</D:prop>\n"
	"<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n"
	"<D:response>\n<D:href>/store/packs/ab.pack</D:href>\n<D:propstat>\n<D:prop>\n"
	"<D:getcontentlength>12345</D:getcontentlength>\n"
	"<D:resourcetype></D:resourcetype>\n</D:prop>\n"
	"<D:status>HTTP/1.1 200 OK</D:status>\n</D:propstat>\n</D:response>\n"
	"</D:multistatus>\n";

/* Apache mod_dav style: other prefixes, absolute URLs, a 404 propstat. */
static const char apache_answer[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	"<!-- a comment <with> brackets -->\n"
	"<multistatus xmlns=\"DAV:\" xmlns:lp1=\"DAV:\">"
	"<response><href>http://h:8080/dav/a%20b&amp;c</href>"
	"<propstat><prop><lp1:resourcetype/><lp1:getcontentlength> 42 </lp1:getcontentlength>"
	"</prop><status>HTTP/1.1 200 OK</status></propstat>"
	"<propstat><prop><getcontenttype/></prop><status>HTTP/1.1 404 Not Found</status></propstat>"
	"</response>"
	"<response><href>/dav/sub/</href><propstat><prop><lp1:resourcetype><lp1:collection/>"
	"</lp1:resourcetype><getcontentlength/></prop></propstat></response>"
	"</multistatus>";

/* A multistatus document parsed into a fresh `s`, which must work. */
static void parse_dav(const char *doc, size_t n, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(rs_webdav_parse_multistatus(doc, n, on_dav, s), 0);
}

static void test_multistatus(void **state)
{
	struct seen s;

	(void)state;
	parse_dav(nginx_answer, sizeof(nginx_answer) - 1, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.items[0], "/store/packs/");
	assert_int_equal(s.flags[0], 1);
	assert_string_equal(s.items[1], "/store/packs/ab.pack");
	assert_int_equal(s.flags[1], 2);
	assert_int_equal(s.sizes[1], 12345);

	parse_dav(apache_answer, sizeof(apache_answer) - 1, &s);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.items[0], "http://h:8080/dav/a%20b&c");
	assert_int_equal(s.flags[0], 2);
	assert_int_equal(s.sizes[0], 42);
	assert_string_equal(s.items[1], "/dav/sub/");
	assert_int_equal(s.flags[1], 1); /* empty getcontentlength: no size */

	/* A callback's non-zero return stops the scan and comes back. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	assert_int_equal(rs_webdav_parse_multistatus(nginx_answer, sizeof(nginx_answer) - 1,
						     on_dav, &s), 7);
	assert_int_equal(s.n, 1);
}

static void test_multistatus_bad(void **state)
{
	static const char *const bad[] = {
		"<D:multistatus><D:response><D:href>/x",          /* cut off */
		"<D:multistatus><D:response><D:hre",              /* unterminated tag */
		"<!-- never closed <D:response>",                 /* comment */
		"<response><href>/a&bogus;</href></response>",      /* unknown entity */
		"<response><href>/a&amp</href></response>",         /* entity without ';' */
	};
	struct rs_buf big = RS_BUF_INIT;
	struct seen s;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&s, 0, sizeof(s));
		assert_int_equal(rs_webdav_parse_multistatus(bad[i], strlen(bad[i]), on_dav, &s),
				 RS_ECORRUPT);
		assert_int_equal(s.n, 0);
	}
	/* An href past the cap is refused, not truncated. */
	assert_int_equal(rs_buf_puts(&big, "<response><href>/"), 0);
	for (i = 0; i < 5000; i++)
		assert_int_equal(rs_buf_putc(&big, 'a'), 0);
	assert_int_equal(rs_buf_puts(&big, "</href></response>"), 0);
	memset(&s, 0, sizeof(s));
	assert_int_not_equal(rs_webdav_parse_multistatus(big.ptr, big.len, on_dav, &s), 0);
	assert_int_equal(s.n, 0);
	rs_buf_release(&big);

	/* Not a multistatus at all. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(rs_webdav_parse_multistatus("hello", 5, on_dav, &s), RS_ECORRUPT);
	assert_int_equal(s.n, 0);
}

static const char azure_page[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
	"<EnumerationResults ServiceEndpoint=\"http://127.0.0.1:1/devstoreaccount1\" "
	"ContainerName=\"results\"><Prefix>team/</Prefix><Marker/><MaxResults>2</MaxResults>"
	"<Blobs><Blob><Name>team/packs/a.pack</Name><Properties>"
	"<Creation-Time>Mon, 30 Nov 2026 09:43:09 GMT</Creation-Time>"
	"<Content-Length>3145745</Content-Length><Content-Type>application/octet-stream"
	"</Content-Type><BlobType>BlockBlob</BlobType></Properties></Blob>"
	"<Blob><Name>team/a&amp;b</Name><Properties><Content-Length>0</Content-Length>"
	"</Properties><Metadata /></Blob>"
	"<Blob><Name>team/nosize</Name><Properties></Properties></Blob></Blobs>"
	"<NextMarker>2!88!MDAwMDI0IXRlYW0vYSZi</NextMarker></EnumerationResults>";

static void test_blob_list(void **state)
{
	struct rs_buf marker = RS_BUF_INIT;
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(rs_azure_parse_blob_list(azure_page, sizeof(azure_page) - 1, on_blob,
						  &s, &marker), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.items[0], "team/packs/a.pack");
	assert_int_equal(s.sizes[0], 3145745);
	assert_int_equal(s.flags[0], 1);
	assert_string_equal(s.items[1], "team/a&b");
	assert_int_equal(s.sizes[1], 0);
	assert_int_equal(s.flags[1], 1);
	assert_string_equal(s.items[2], "team/nosize");
	assert_int_equal(s.flags[2], 0);
	assert_string_equal(rs_buf_cstr(&marker), "2!88!MDAwMDI0IXRlYW0vYSZi");

	/* The last page: an empty <NextMarker/> clears the marker. */
	memset(&s, 0, sizeof(s));
	{
		static const char last[] =
			"<EnumerationResults><Blobs></Blobs><NextMarker/></EnumerationResults>";

		assert_int_equal(rs_azure_parse_blob_list(last, sizeof(last) - 1, on_blob, &s,
							  &marker), 0);
	}
	assert_int_equal(marker.len, 0);

	assert_int_equal(rs_azure_parse_blob_list("<Blobs><Blob><Name>x", 20, on_blob, &s, &marker),
			 RS_ECORRUPT);
	assert_int_equal(rs_azure_parse_blob_list("<Blobs><Blob><Name", 18, on_blob, &s, &marker),
			 RS_ECORRUPT);
	assert_int_equal(rs_azure_parse_blob_list("<Blob><Name>&lt</Name></Blob></EnumerationResults>",
						  50, on_blob, &s, &marker), RS_ECORRUPT);
	rs_buf_release(&marker);
}

static int on_key(const char *key, uint64_t size, void *payload)
{
	struct seen *s = payload;

	if (s->n < 16) {
		snprintf(s->items[s->n], sizeof(s->items[0]), "%s", key);
		s->sizes[s->n] = size;
		s->n++;
	}
	return 0;
}

/*
 * One entity rule for the three backends: the five predefined entities
 * and numeric references, in every listing; a DOCTYPE (which could define
 * entities that expand a billion times) is refused by every one.
 */
static void test_one_entity_rule(void **state)
{
	static const char dav[] =
		"<D:multistatus xmlns:D=\"DAV:\"><D:response><D:href>/s/&#x41;&#66;&amp;&lt;&gt;"
		"&quot;&apos;</D:href></D:response></D:multistatus>";
	static const char blobs[] =
		"<EnumerationResults><Blobs><Blob><Name>/s/&#x41;&#66;&amp;&lt;&gt;&quot;&apos;"
		"</Name></Blob></Blobs></EnumerationResults>";
	static const char keys[] =
		"<ListBucketResult><Contents><Key>/s/&#x41;&#66;&amp;&lt;&gt;&quot;&apos;</Key>"
		"<Size>1</Size></Contents></ListBucketResult>";
	static const char laughs[] =
		"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
		"<!ENTITY lol2 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">]>";
	struct rs_buf marker = RS_BUF_INIT, doc = RS_BUF_INIT, token = RS_BUF_INIT;
	struct seen s;
	int truncated;

	(void)state;
	parse_dav(dav, sizeof(dav) - 1, &s);
	assert_int_equal(rs_azure_parse_blob_list(blobs, sizeof(blobs) - 1, on_blob, &s,
						  &marker), 0);
	assert_int_equal(rs_s3_list_page_parse(keys, sizeof(keys) - 1, "/s/", on_key, &s,
					       &token, &truncated), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.items[0], "/s/AB&<>\"'");
	assert_string_equal(s.items[1], "/s/AB&<>\"'");
	assert_string_equal(s.items[2], "AB&<>\"'");

	memset(&s, 0, sizeof(s));
	assert_int_equal(rs_buf_printf(&doc, "%s<D:multistatus><D:response><D:href>&lol2;</D:href></D:response>"
		      "</D:multistatus>", laughs), 0);
	assert_int_equal(rs_webdav_parse_multistatus(doc.ptr, doc.len, on_dav, &s), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "DOCTYPE"));
	rs_buf_clear(&doc);
	assert_int_equal(rs_buf_printf(&doc, "%s<EnumerationResults><Blobs><Blob><Name>&lol2;</Name></Blob>"
		      "</Blobs></EnumerationResults>", laughs), 0);
	assert_int_equal(rs_azure_parse_blob_list(doc.ptr, doc.len, on_blob, &s, &marker),
			 RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "DOCTYPE"));
	rs_buf_clear(&doc);
	assert_int_equal(rs_buf_printf(&doc, "%s<ListBucketResult><Contents><Key>/s/&lol2;</Key><Size>1</Size>"
		      "</Contents></ListBucketResult>", laughs), 0);
	assert_int_equal(rs_s3_list_page_parse(doc.ptr, doc.len, "/s/", on_key, &s, &token,
					       &truncated), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "DOCTYPE"));
	assert_int_equal(s.n, 0);
	rs_buf_release(&doc);
	rs_buf_release(&marker);
	rs_buf_release(&token);
}

static int count_only(const struct rs_dav_entry *e, void *payload)
{
	(void)e;
	++*(int *)payload;
	return 0;
}

static int count_blob(const struct rs_azure_blob *b, void *payload)
{
	(void)b;
	++*(int *)payload;
	return 0;
}

/*
 * Mutations of the sample answers. The parsers get a NUL-terminated copy
 * of exactly the mutated length in a buffer of that size, so any read
 * past it is caught by AddressSanitizer.
 */
static void test_mutations(void **state)
{
	static const char *const seeds[] = { nginx_answer, apache_answer, azure_page };
	static const char alphabet[] = "<>/&;:!-?\"= \nDa#x0";
	struct rs_buf marker = RS_BUF_INIT;
	uint32_t rng = 12345;
	int iter, count;

	(void)state;
	for (iter = 0; iter < 30000; iter++) {
		const char *seed = seeds[iter % 3];
		size_t n = strlen(seed), i, k;
		char *doc;

		rng = rng * 1664525u + 1013904223u;
		if (rng % 4 == 0)
			n = (rng >> 8) % (n + 1); /* truncate */
		doc = malloc(n + 1);
		assert_non_null(doc);
		memcpy(doc, seed, n);
		doc[n] = '\0';
		for (k = 0; n && k < 1 + (rng >> 20) % 6; k++) {
			rng = rng * 1664525u + 1013904223u;
			i = (rng >> 4) % n;
			doc[i] = alphabet[(rng >> 16) % (sizeof(alphabet) - 1)];
		}
		count = 0;
		/* Mangled documents: refused or parsed, either is right; what
		 * is checked is that neither crashes nor overruns. */
		if (rs_webdav_parse_multistatus(doc, n, count_only, &count))
			rs_error_clear();
		if (rs_azure_parse_blob_list(doc, n, count_blob, &count, &marker))
			rs_error_clear();
		free(doc);
	}
	rs_buf_release(&marker);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multistatus),
		cmocka_unit_test(test_multistatus_bad),
		cmocka_unit_test(test_blob_list),
		cmocka_unit_test(test_one_entity_rule),
		cmocka_unit_test(test_mutations),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
