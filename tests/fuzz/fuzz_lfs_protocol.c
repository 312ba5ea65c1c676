/* Request lines from git-lfs: parse, and never crash or leak on garbage. */
#include <stdint.h>
#include <stdlib.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rs_lfs_message msg;

	if (rs_lfs_parse(&msg, (const char *)data, size) == 0) {
		if ((msg.event == RS_LFS_UPLOAD && !msg.path) ||
		    ((msg.event == RS_LFS_UPLOAD || msg.event == RS_LFS_DOWNLOAD) &&
		     msg.oid_hex[64] != '\0'))
			abort();
		rs_lfs_message_release(&msg);
	}
	return 0;
}
