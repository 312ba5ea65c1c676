/*
 * results: git config read once (conventions: results/repo.h).
 *
 * A snapshot of a repository's config (all levels, local winning:
 * rs_repo_config), or of the user's and the system's when there is no
 * repository (rs_config_open_default: lfs-agent uploading from outside a
 * clone). One implementation for the CLI and lfs-agent: remote backends
 * read their extra settings (region, endpoint, CA file) through
 * rs_config_remote_options. Every string handed out is borrowed from the
 * snapshot, valid until it is freed. Reading is safe from several threads
 * at once.
 */
#ifndef RESULTS_CONFIG_H
#define RESULTS_CONFIG_H

#include "results/error.h"

struct rs_config;
struct rs_remote_options;

/* Snapshot the global and system config, as git reads them outside a repository. */
RS_MUST_CHECK
int rs_config_open_default(struct rs_config **out);

/* Free a snapshot from rs_config_open_default (never rs_repo_config's). */
void rs_config_free(struct rs_config *c);

/* The value of `key`, borrowed from the snapshot; NULL when unset (or `c` is NULL). */
const char *rs_config_get(const struct rs_config *c, const char *key);

/*
 * Fill `out` (remote/remote.h) so that rs_remote_open's backends read
 * their settings from `c` (may be NULL: every key unset). `c` must
 * outlive the remote opened with them.
 */
void rs_config_remote_options(struct rs_remote_options *out, struct rs_config *c);

#endif
