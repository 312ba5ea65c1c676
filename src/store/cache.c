/*
 * The local cache's folders: see cache.h.
 */
#include "store/cache.h"

#include <stdlib.h>
#include <string.h>

#include "results/error.h"
#include "util/hash.h"

int rs_store_cache_root(struct rs_buf *out)
{
	const char *env = getenv("RESULTS_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"),
		   *home = getenv("HOME");

	if (env && *env)
		return rs_buf_puts(out, env);
	if (xdg && *xdg)
		return rs_buf_printf(out, "%s/results", xdg);
	if (home && *home)
		return rs_buf_printf(out, "%s/.cache/results", home);
	return rs_error_set(RS_ENOTFOUND, "no cache folder: none of RESULTS_CACHE_DIR, "
			    "XDG_CACHE_HOME and HOME is set");
}

int rs_store_cache_folder(struct rs_buf *out, const char *root, const char *display_url)
{
	struct rs_id h;
	char hex[RS_ID_HEXSZ + 1];

	rs_sha256(&h, display_url, strlen(display_url));
	rs_id_to_hex(hex, &h);
	return rs_buf_printf(out, "%s/%.16s", root, hex);
}
