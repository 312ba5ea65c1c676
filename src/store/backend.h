/*
 * The store's side of the remote interface's version (RS_REMOTE_VERSION,
 * remote/remote.h): a backend fills rs_remote.version with the version
 * of the header it was built against, and the store refuses a backend
 * built against another one before it calls any of its operations, as
 * libgit2 does with its odb backends. The struct's layout (which function
 * pointer sits where, what each one promises) is what the number names.
 */
#ifndef RS_STORE_BACKEND_H
#define RS_STORE_BACKEND_H

#include "results/error.h"

#include "remote/remote.h"

/*
 * 0 when `remote` speaks this build's RS_REMOTE_VERSION. RS_EUSAGE
 * otherwise, with a message naming the remote and both versions.
 * Called by rs_store_open and rs_store_census_take, the entry points
 * through which the store starts using a remote.
 */
RS_MUST_CHECK
int rs_store_check_backend(const struct rs_remote *remote);

#endif
