/*
 * Git config snapshots: see config.h.
 */
#include "git/config.h"

#include <stdlib.h>

#include "results/error.h"

struct rs_config {
	git_config *snapshot;
};

int rs_config_open(struct rs_config **out, git_repository *repo)
{
	struct rs_config *c;
	git_config *all = NULL;
	int gerr;

	c = calloc(1, sizeof(*c));
	if (!c)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (repo) {
		gerr = git_repository_config_snapshot(&c->snapshot, repo);
	} else {
		gerr = git_config_open_default(&all);
		if (gerr == 0)
			gerr = git_config_snapshot(&c->snapshot, all);
		git_config_free(all);
	}
	if (gerr < 0) {
		const git_error *e = git_error_last();

		free(c);
		return rs_error_set(RS_EGENERIC, "cannot read the git config: %s",
				    e && e->message ? e->message : "libgit2 error");
	}
	*out = c;
	return 0;
}

int rs_config_open_default(struct rs_config **out)
{
	return rs_config_open(out, NULL);
}

void rs_config_free(struct rs_config *c)
{
	if (!c)
		return;
	git_config_free(c->snapshot);
	free(c);
}

const char *rs_config_get(const struct rs_config *c, const char *key)
{
	const char *val = NULL;

	/* No config is all unset, without calling libgit2 (it may not be
	   initialised in a program that opened no repository). */
	if (!c || !c->snapshot)
		return NULL;
	if (git_config_get_string(&val, c->snapshot, key) < 0) {
		git_error_clear();
		return NULL;
	}
	return val;
}

static const char *remote_config_get(const char *key, void *payload)
{
	return rs_config_get(payload, key);
}

void rs_config_remote_options(struct rs_remote_options *out, struct rs_config *c)
{
	out->config_get = remote_config_get;
	out->config_payload = c;
}
