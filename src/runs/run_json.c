/*
 * run.json: a run's metrics and its layout on disk (one line per key,
 * deeper levels compact, keys sorted).
 */
#include "runs/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/run_internal.h"
#include "runs/stats.h"
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
			json_object_set_new(o, "oid", json_string(hex));
		}
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * run.json layout: fully indented JSON is twice the size of compact JSON
 * (the call tree is deep), and every clone carries every run.json; fully
 * compact JSON is one unreadable line. So: one line per key at the top
 * level and inside "summary", one line per entry of the summary's
 * "functions" and "files" lists, everything deeper compact. Keys sorted.
 */
static int dump_compact(struct rs_buf *out, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
			     JSON_REAL_PRECISION(15));
	int err;

	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_buf_puts(out, s);
	free(s);
	return err;
}

static int dump_layered(struct rs_buf *out, const json_t *o, int depth)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t n = json_object_size(o), i = 0;
	int err = 0;

	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return rs_error_set(RS_EGENERIC, "out of memory");
	json_object_foreach((json_t *)o, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), rs_run_cmp_str);
	err = rs_buf_puts(out, "{");
	for (i = 0; i < n && !err; i++) {
		json_t *key = json_string(keys[i]);

		v = json_object_get(o, keys[i]);
		err = rs_buf_printf(out, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
		if (!err)
			err = key ? dump_compact(out, key) : rs_error_set(RS_EGENERIC, "out of memory");
		json_decref(key);
		if (!err)
			err = rs_buf_puts(out, ": ");
		if (err)
			break;
		if (depth == 0 && strcmp(keys[i], "summary") == 0 && json_is_object(v)) {
			err = dump_layered(out, v, depth + 1);
		} else if (depth == 1 && json_is_array(v) && json_array_size(v) &&
			   (strcmp(keys[i], "functions") == 0 || strcmp(keys[i], "files") == 0)) {
			size_t j;
			json_t *e;

			err = rs_buf_puts(out, "[");
			json_array_foreach(v, j, e) {
				if (!err)
					err = rs_buf_printf(out, "%s\n%*s", j ? "," : "",
							    2 * (depth + 2), "");
				if (!err)
					err = dump_compact(out, e);
			}
			if (!err)
				err = rs_buf_printf(out, "\n%*s]", 2 * (depth + 1), "");
		} else {
			err = dump_compact(out, v);
		}
	}
	if (!err)
		err = rs_buf_printf(out, "\n%*s}", 2 * depth, "");
	free(keys);
	return err;
}

int rs_run_render_json(struct rs_buf *out, const struct rs_run *run)
{
	json_t *o = NULL, *session = json_null(), *metrics = rs_run_metrics(run);
	json_t *files = files_json(run);
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
	if (!run->message)
		json_object_set_new(o, "message", json_null());
	err = dump_layered(out, o, 0);
	if (!err)
		err = rs_buf_putc(out, '\n');
out:
	json_decref(o);
	json_decref(metrics);
	json_decref(files);
	json_decref(session);
	return err;
}
