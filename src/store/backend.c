/*
 * Refusing a remote backend built against another interface version:
 * see backend.h.
 */
#include "store/backend.h"

#include "results/error.h"

int rs_store_check_backend(const struct rs_remote *remote)
{
	if (remote->version == RS_REMOTE_VERSION)
		return 0;
	return rs_error_set(RS_EUSAGE, "the backend of the remote '%s' implements remote "
			    "interface version %u, this build needs version %u: rebuild the "
			    "backend against this version of results",
			    remote->display_url ? remote->display_url : "?", remote->version,
			    (unsigned)RS_REMOTE_VERSION);
}
