/*
 * What `results show` reads (results/store.h): a run's committed summary
 * or record, and whether retention removed its raw session from the
 * remote.
 */
#include <stdio.h>
#include <string.h>

#include "remote/remote.h"
#include "git/repo.h"
#include "runs/run.h"
#include "runs/runindex.h"
#include "runs/runs.h"
#include "results/buf.h"
#include "results/store.h"
#include "store/format.h"
#include "store/maint.h"
#include "util/hash.h"

int rs_show_run_file(struct rs_buf *out, const struct rs_runs *runs,
		     const struct rs_run_entry *e, int json)
{
	struct rs_buf path = RS_BUF_INIT;
	rs_runrec *rec = NULL;
	struct rs_error_saved old;
	size_t start = out->len;
	int err;

	err = rs_buf_printf(&path, "%s/%s", e->path, json ? "run.json" : "summary.md");
	if (err)
		goto out;
	err = rs_repo_read_tree_file(runs->repo, NULL, path.ptr,
				     json ? RS_RUN_MAX_RUN_JSON : RS_RUN_MAX_SUMMARY_MD, out);
	if (err) {
		rs_error_save(&old, err);
		err = rs_error_set(err == RS_ENOTFOUND ? RS_ECORRUPT : err,
				   "run %s is in the index but %s cannot be read: %s", e->id, path.ptr,
				   old.message);
		goto out;
	}
	if (!json)
		goto out;
	/* Decoded before anyone prints it: callers pipe this into JSON tools,
	 * and a record the readers refuse should not look fine here. */
	err = rs_runrec_decode(out->ptr + start, out->len - start, &rec);
	if (err)
		err = rs_error_wrap(err, "run %s: %s", e->id, path.ptr);
out:
	rs_runrec_free(rec);
	rs_buf_release(&path);
	return err;
}

/* The oid of the run's first session stored in LFS, as run.json lists it. */
static int session_oid(struct rs_id *oid, const struct rs_runs *runs, const struct rs_run_entry *e)
{
	rs_runrec *rec = NULL;
	const char *hex = NULL;
	int err;

	err = rs_run_record_read(&rec, NULL, runs->repo, NULL, e);
	if (err)
		return err;
	for (size_t i = 0; i < rec->nfiles && !hex; i++)
		if (!strcmp(rec->files[i].role, "session") && rec->files[i].lfs)
			hex = rec->files[i].oid;
	err = hex ? rs_id_from_hex(oid, hex, strlen(hex))
		  : rs_error_set(RS_ENOTFOUND, "run %s has no session", e->id);
	rs_runrec_free(rec);
	return err;
}

int rs_show_removed_by_retention(struct rs_buf *date, const struct rs_runs *runs,
				 const struct rs_run_entry *e)
{
	struct rs_buf key = RS_BUF_INIT;
	struct rs_remote *remote = NULL;
	struct rs_id oid;
	int removed = 0;

	if (session_oid(&oid, runs, e) || rs_key_manifest(&key, &oid) ||
	    rs_repo_open_remote(runs->repo, &remote, NULL))
		goto out;
	/* only a manifest that is not there: a remote that does not answer
	 * says nothing either way */
	if (remote->stat(remote, key.ptr, NULL) != RS_ENOTFOUND)
		goto out;
	removed = rs_store_removed_date(remote, &oid, date) == 0;
out:
	rs_error_clear();
	rs_remote_free(remote);
	rs_buf_release(&key);
	return removed;
}
