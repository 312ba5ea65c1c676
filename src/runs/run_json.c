/*
 * run.json: a run's metrics, and its object handed to the typed run
 * record (src/runrec), whose encoder writes the bytes.
 */
#include "runs/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/run_internal.h"
#include "runs/stats.h"
#include "runrec/runrec_json.h"
#include "session/phases.h"
#include "results/error.h"

static int set_number_from(json_t *metrics, const char *name, json_t *summary,
			   const char *key)
{
	json_t *v = json_object_get(summary, key);

	if (!json_is_number(v))
		return 0;
	if (json_object_set(metrics, name, v) < 0)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

json_t *rs_run_metrics(const struct rs_run *run)
{
	json_t *m = json_object();

	if (!m)
		return NULL;
	/* Stats first so that the session's own figures win a name clash. */
	if (rs_stats_numbers(m, run->stats) ||
	    (run->summary &&
	     (set_number_from(m, "duration", run->summary, "duration") ||
	      set_number_from(m, "cpu_time", run->summary, "cpu_time") ||
	      set_number_from(m, "samples", run->summary, "samples") ||
	      set_number_from(m, "sampled_time", run->summary, "sampled_time"))) ||
	    (run->phases && rs_phases_metrics(run->phases, m))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

static json_t *files_json(const struct rs_run *run)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < run->nfiles; i++) {
		const struct rs_run_file *f = &run->files[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:b}", "path", f->name,
				      "role", f->role, "size", (json_int_t)f->size,
				      "lfs", f->lfs);
		char hex[RS_ID_HEXSZ + 1];

		if (o && f->lfs) {
			rs_id_to_hex(hex, &f->oid);
			if (json_object_set_new(o, "oid", json_string(hex)) != 0) {
				json_decref(o);
				o = NULL; /* out of memory: not a file without its oid */
			}
		}
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int rs_run_render_json(struct rs_buf *out, const struct rs_run *run)
{
	json_t *o = NULL, *session = json_null(), *metrics = rs_run_metrics(run);
	json_t *files = files_json(run);
	rs_runrec *rec = NULL;
	int err = 0;

	if (!metrics || !files) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (run->main_session >= 0) {
		const struct rs_run_file *f = &run->files[run->main_session];
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, &f->oid);
		session = json_pack("{s:s, s:s, s:I}", "path", f->name, "oid", hex,
				    "size", (json_int_t)f->size);
	}
	if (!session) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s?, s:O, s:O, s:O, s:O, s:o,"
		      " s:o, s:o, s:O}",
		      "format", RS_RUN_FORMAT, "id", run->id, "commit", run->commit,
		      "branch", run->branch, "trigger", run->trigger,
		      "recorded_at", run->recorded_at, "message", run->message,
		      "machine", run->machine, "meta", run->meta, "stats", run->stats,
		      "args", run->args, "metrics", metrics,
		      "files", files, "session", session,
		      "summary", run->summary ? run->summary : json_null());
	if (o && run->phases && json_object_set(o, "phases", run->phases) != 0) {
		json_decref(o);
		o = NULL;
	}
	/* json_pack steals the "o" references even when it fails. */
	metrics = files = session = NULL;
	if (!o) {
		err = rs_error_set(RS_EUSAGE, "incomplete run (commit, branch, trigger, id)");
		goto out;
	}
	if (!run->message && json_object_set_new(o, "message", json_null()) != 0) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	/* through the typed record: what add writes is what readers decode */
	err = rs_runrec_from_json(o, &rec);
	if (!err)
		err = rs_runrec_encode(out, rec);
out:
	rs_runrec_free(rec);
	json_decref(o);
	json_decref(metrics);
	json_decref(files);
	json_decref(session);
	return err;
}
