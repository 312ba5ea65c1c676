/*
 * Azure Blob storage: SharedKey request signing and the account settings
 * read the way Azure's own tools read them.
 *
 * SharedKey ("Authorize with Shared Key", Storage REST API, versions
 * 2009-09-19 and later): the Authorization header is
 *   SharedKey <account>:base64(HMAC-SHA256(base64decode(key), StringToSign))
 * where StringToSign is the verb, eleven standard header values (each
 * followed by "\n", Content-Length empty when zero), the canonicalized
 * x-ms-* headers and the canonicalized resource. See azure_sign.c.
 */
#ifndef RS_AZURE_SIGN_H
#define RS_AZURE_SIGN_H

#include <time.h>

#include "remote/http_transport.h"
#include "results/buf.h"

#define RS_AZURE_VERSION "2021-12-02" /* x-ms-version sent with every request */

/* The well-known key of azurite's (and the old emulator's) dev account. */
#define RS_AZURE_DEV_ACCOUNT "devstoreaccount1"
#define RS_AZURE_DEV_KEY \
	"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

/*
 * What a connection string or the environment says. All strings owned
 * by the struct; rs_azure_account_release wipes the secrets.
 */
struct rs_azure_account {
	char *name;          /* AccountName */
	char *key;           /* AccountKey (base64) */
	char *sas;           /* SharedAccessSignature, without a leading '?' */
	char *blob_endpoint; /* BlobEndpoint, no trailing '/' */
	char *protocol;      /* DefaultEndpointsProtocol: "https" or "http" */
	char *suffix;        /* EndpointSuffix ("core.windows.net") */
};

void rs_azure_account_init(struct rs_azure_account *a);
void rs_azure_account_release(struct rs_azure_account *a);

/*
 * Parse an Azure Storage connection string ("Key=Value;Key=Value", keys
 * case-insensitive, values may contain '='). UseDevelopmentStorage=true
 * means azurite's account at http://127.0.0.1:10000/devstoreaccount1.
 * Unknown keys are ignored. RS_EUSAGE for a malformed string; the message
 * never quotes a value.
 */
RS_MUST_CHECK
int rs_azure_connection_string_parse(struct rs_azure_account *a, const char *s);

/*
 * Build the SharedKey StringToSign of `req` for `account` into `out`.
 * The request must already carry its x-ms-date and x-ms-version headers.
 */
RS_MUST_CHECK
int rs_azure_string_to_sign(struct rs_buf *out, const struct rs_http_request *req,
			    const char *account);

/*
 * "SharedKey <account>:<signature>" for `string_to_sign` into `out`.
 * RS_EUSAGE when `key_b64` is not base64.
 */
RS_MUST_CHECK
int rs_azure_authorization(struct rs_buf *out, const char *string_to_sign,
			   const char *account, const char *key_b64);

/* RFC 1123 date for x-ms-date ("Mon, 30 Nov 2026 09:00:00 GMT"). */
void rs_azure_date(char out[32], time_t t);

/*
 * The signer for rs_http: adds x-ms-date (now), x-ms-version and the
 * Authorization header. `payload` is a struct rs_azure_signer.
 */
struct rs_azure_signer {
	const char *account; /* borrowed */
	const char *key;     /* borrowed, base64 */
};

RS_MUST_CHECK
int rs_azure_sign(struct rs_http_request *req, void *payload);

#endif
