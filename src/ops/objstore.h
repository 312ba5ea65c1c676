/*
 * The library's side of results/store.h's struct rs_objstore: the store and
 * the remote it owns, for the ops layer's own commands (fetch, verify).
 */
#ifndef RS_REPO_OBJSTORE_H
#define RS_REPO_OBJSTORE_H

#include "results/store.h"
#include "store/store.h"

struct rs_objstore {
	struct rs_remote *remote; /* owned */
	struct rs_store *store;   /* owned, on `remote` */
};

/*
 * Open the store on `remote`, which the new object owns from now on (it
 * is freed on failure too). `tmp_grace`: results.tmpGracePeriod in
 * seconds, for the store's temporary files.
 */
RS_MUST_CHECK int rs_objstore_wrap(struct rs_objstore **out, struct rs_remote *remote,
				   const struct rs_objstore_options *opts, long tmp_grace);

#endif
