/*
 * What `results list` needs of the run index beyond results/runs.h
 * (declared in results/record.h): a bounded load, and the entries as one
 * JSON array.
 */
#include "results/record.h"

#include <stdlib.h>

#include "repo/runs.h"

int rs_runs_open_recent(struct rs_runs **out, struct rs_repo *repo, const char *rev,
			size_t want_recent)
{
	struct rs_runs *runs = calloc(1, sizeof(*runs));
	int err;

	if (!runs)
		return rs_error_set(RS_EGENERIC, "out of memory");
	runs->repo = repo;
	rs_runindex_init(&runs->idx);
	err = rs_runindex_load(&runs->idx, repo, rev, want_recent);
	if (err) {
		rs_runs_free(runs);
		return err;
	}
	*out = runs;
	return 0;
}

/* The index entry `e` as a new object, keys in index order; NULL when out of memory. */
static json_t *entry_object(const struct rs_run_entry *e)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O}",
			 "id", e->id, "commit", e->commit,
			 "branch", e->branch, "trigger", e->trigger,
			 "recorded_at", e->recorded_at, "path", e->path,
			 "metrics", e->metrics);
}

int rs_run_entries_json(struct rs_buf *out, const struct rs_run_entry *const *runs, size_t n)
{
	json_t *arr = json_array();
	char *text = NULL;
	int err;

	if (!arr) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *o = entry_object(runs[i]);

		if (!o || json_array_append_new(arr, o) < 0) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
	}
	text = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (!text) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_buf_puts(out, text);
out:
	free(text);
	json_decref(arr);
	return err;
}
