/*
 * summary.md: a run's page as GitHub shows it (who, what, the machine,
 * the files, stats and meta tables, and the session's own summary).
 */
#include "runs/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/run_internal.h"
#include "results/error.h"
#include "results/escape.h"
#include "util/hex.h"

/*
 * Every string of a run (branch, message, --meta keys and values, file
 * names) is untrusted: a table cell goes through rs_escape_md_text.
 */
static int md_cell(struct rs_buf *out, const char *s)
{
	return rs_escape_md_text(out, s);
}

static int md_value(struct rs_buf *out, json_t *v)
{
	char tmp[64];

	if (json_is_string(v))
		return md_cell(out, json_string_value(v));
	if (json_is_integer(v))
		return rs_buf_printf(out, "%lld", (long long)json_integer_value(v));
	if (json_is_real(v)) {
		snprintf(tmp, sizeof(tmp), "%.6g", json_real_value(v));
		return rs_buf_puts(out, tmp);
	}
	return rs_buf_puts(out, "–");
}

static int md_row(struct rs_buf *out, const char *label, const char *value)
{
	int err = rs_buf_printf(out, "| %s | ", label);

	if (!err)
		err = md_cell(out, value ? value : "–");
	if (!err)
		err = rs_buf_puts(out, " |\n");
	return err;
}

/* One "| key | value |" row of a map's table. */
static int md_map_row(struct rs_buf *out, const char *key, json_t *value)
{
	int err = rs_buf_puts(out, "| ");

	if (err)
		return err;
	err = md_cell(out, key);
	if (err)
		return err;
	err = rs_buf_puts(out, " | ");
	if (err)
		return err;
	err = md_value(out, value);
	if (err)
		return err;
	return rs_buf_puts(out, " |\n");
}

static int md_map(struct rs_buf *out, const char *title, const char *col, json_t *map)
{
	size_t n = json_object_size(map), i = 0;
	const char **keys;
	const char *k;
	json_t *v;
	int err;

	if (n == 0)
		return 0;
	err = rs_buf_printf(out, "\n## %s\n\n| %s | value |\n|---|---:|\n", title, col);
	if (err)
		return err;
	/* Sorted for a stable page: jansson iterates in hash order. */
	keys = calloc(n, sizeof(*keys));
	if (!keys)
		return rs_error_set(RS_EGENERIC, "out of memory");
	json_object_foreach(map, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), rs_run_cmp_str);
	for (i = 0; i < n && !err; i++)
		err = md_map_row(out, keys[i], json_object_get(map, keys[i]));
	free(keys);
	return err;
}

static const char *str_of(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void human_size(char *out, size_t n, uint64_t size)
{
	if (size >= 1024 * 1024)
		snprintf(out, n, "%.1f MiB", (double)size / (1024.0 * 1024.0));
	else if (size >= 1024)
		snprintf(out, n, "%.1f KiB", (double)size / 1024.0);
	else
		snprintf(out, n, "%llu B", (unsigned long long)size);
}

/* The table of who, what and when on top of the page. */
static int md_header(struct rs_buf *out, const struct rs_run *run)
{
	const char *runner = str_of(run->machine, "runner");
	char machine[1024];
	int err;

	snprintf(machine, sizeof(machine), "%s (%s, %s, %s × %lld)",
		 str_of(run->machine, "hostname") ? str_of(run->machine, "hostname") : "?",
		 str_of(run->machine, "os") ? str_of(run->machine, "os") : "?",
		 str_of(run->machine, "arch") ? str_of(run->machine, "arch") : "?",
		 str_of(run->machine, "cpu_model") ? str_of(run->machine, "cpu_model") : "?",
		 (long long)json_integer_value(json_object_get(run->machine, "cpus")));
	err = rs_buf_puts(out, "# Profiling run ");
	if (!err)
		err = rs_escape_md_text(out, run->id);
	if (!err)
		err = rs_buf_puts(out, "\n\n| | |\n|---|---|\n| Profiled commit | ");
	if (!err)
		err = rs_escape_md_code(out, run->commit, RS_ESCAPE_IN_TABLE);
	if (!err)
		err = rs_buf_puts(out, " |\n");
	if (err)
		return err;
	err = md_row(out, "Branch", run->branch);
	if (err)
		return err;
	err = md_row(out, "Trigger", run->trigger);
	if (err)
		return err;
	err = md_row(out, "Recorded (UTC)", run->recorded_at);
	if (err)
		return err;
	err = md_row(out, "Machine", machine);
	if (!err && runner)
		err = md_row(out, "Runner", runner);
	if (!err && run->message)
		err = md_row(out, "Message", run->message);
	if (!err && run->main_session >= 0)
		err = md_row(out, "Session", run->files[run->main_session].name);
	return err;
}

/* One row of the files table: a link to a file in git, the name of an LFS one. */
static int md_file_row(struct rs_buf *out, const struct rs_run_file *f)
{
	char size[32];
	int err;

	human_size(size, sizeof(size), f->size);
	err = rs_buf_puts(out, f->lfs ? "| " : "| [");
	if (err)
		return err;
	err = md_cell(out, f->name);
	if (err)
		return err;
	if (!f->lfs) {
		/* percent-encoded: no ')', space or scheme ends the link early */
		err = rs_buf_puts(out, "](");
		if (!err)
			err = rs_percent_encode_str(out, f->name, RS_SLASH_KEEP);
		if (!err)
			err = rs_buf_putc(out, ')');
		if (err)
			return err;
	}
	return rs_buf_printf(out, " | %s | %s | %s |\n", f->role, size,
			     f->lfs ? "Git LFS (`results fetch`)" : "in git");
}

int rs_run_render_markdown(struct rs_buf *out, const struct rs_run *run)
{
	int err = md_header(out, run);

	if (err)
		return err;
	if (run->session_md)
		err = rs_buf_printf(out, "\n%s", run->session_md);
	else
		err = rs_buf_puts(out, "\n_No session summary: the files were stored with "
				  "`--raw`._\n");
	if (err)
		return err;
	err = md_map(out, "Stats", "stat", run->stats);
	if (err)
		return err;
	err = md_map(out, "Arguments", "argument", run->args);
	if (err)
		return err;
	err = md_map(out, "Metadata", "key", run->meta);
	if (!err && run->nfiles)
		err = rs_buf_puts(out, "\n## Files\n\n| file | role | size | stored |\n"
				  "|---|---|---:|---|\n");
	for (size_t i = 0; i < run->nfiles && !err; i++)
		err = md_file_row(out, &run->files[i]);
	return err;
}
