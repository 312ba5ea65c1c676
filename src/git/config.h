/*
 * Git config read once: a snapshot of the repository's config (all
 * levels, local winning), or of the user's and the system's when there is
 * no repository (lfs-agent uploading from outside a clone).
 *
 * One implementation for the CLI (rs_repo_open_remote) and lfs-agent: the
 * backends read their extra settings (region, endpoint, CA file) through
 * rs_config_remote_options, and every string handed out is borrowed from
 * the snapshot, valid until rs_config_free. Reading is safe from several
 * threads at once (libgit2 locks a snapshot's values).
 */
#ifndef RS_REPO_CONFIG_H
#define RS_REPO_CONFIG_H

#include "results/error.h"

#include <git2.h>

#include "remote/remote.h"
#include "results/config.h"

/*
 * Snapshot the config of `repo` (NULL: as rs_config_open_default). The
 * object is the caller's (rs_config_free). The rest of the interface is
 * results/config.h.
 */
RS_MUST_CHECK
int rs_config_open(struct rs_config **out, git_repository *repo);

#endif
