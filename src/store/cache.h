/*
 * Where a writer keeps its local cache of a remote's pack indexes (the
 * chunk index, docs/store-format.md "The local chunk index"): one rule
 * for every program that opens a store.
 */
#ifndef RS_STORE_CACHE_H
#define RS_STORE_CACHE_H

#include "results/buf.h"

/*
 * The root of the cache, appended to `out`: $RESULTS_CACHE_DIR, else
 * $XDG_CACHE_HOME/results, else $HOME/.cache/results (empty variables
 * count as unset). RS_ENOTFOUND when none of them is set: the store then
 * works without a cache (rs_store_options.cache_dir NULL).
 */
RS_MUST_CHECK
int rs_store_cache_root(struct rs_buf *out);

/*
 * The cache folder of one remote under `root`: "<root>/<h>", where <h> is
 * the first 16 hex digits of the SHA-256 of `display_url`, the remote's
 * URL without user, password or ?query (rs_remote.display_url), so that
 * changing a credential keeps the cache. Appended to `out`.
 */
RS_MUST_CHECK
int rs_store_cache_folder(struct rs_buf *out, const char *root, const char *display_url);

#endif
