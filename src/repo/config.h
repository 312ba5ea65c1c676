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

#include <git2.h>

#include "remote/remote.h"

struct rs_config;

/*
 * Snapshot the config of `repo` (NULL: the global and system config, as
 * git reads them outside a repository). The object is the caller's
 * (rs_config_free).
 */
int rs_config_open(struct rs_config **out, git_repository *repo);
void rs_config_free(struct rs_config *c);

/* The value of `key`, borrowed from the snapshot; NULL when unset. */
const char *rs_config_get(const struct rs_config *c, const char *key);

/*
 * Options for rs_remote_open whose config_get reads `c`: `c` must outlive
 * the remote opened with them.
 */
void rs_config_remote_options(struct rs_remote_options *out, struct rs_config *c);

#endif
