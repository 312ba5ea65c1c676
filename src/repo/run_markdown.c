/*
 * summary.md: a run's page as GitHub shows it (who, what, the machine,
 * the files, stats and meta tables, and the session's own summary).
 */
#include "repo/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repo/run_internal.h"
#include "results/error.h"

/*
 * A table cell from an untrusted string: no '|' (column break), no
 * newline (row break), and no raw '<' so that GitHub does not render
 * HTML someone smuggled into a --meta value.
 */
static int md_cell(struct rs_buf *out, const char *s)
{
	int err = 0;

	for (; *s && !err; s++) {
		switch (*s) {
		case '|': err = rs_buf_puts(out, "\\|"); break;
		case '<': err = rs_buf_puts(out, "&lt;"); break;
		case '>': err = rs_buf_puts(out, "&gt;"); break;
		case '&': err = rs_buf_puts(out, "&amp;"); break;
		case '\n': case '\r': case '\t': err = rs_buf_putc(out, ' '); break;
		default: err = rs_buf_putc(out, *s);
		}
	}
	return err;
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

static int md_map(struct rs_buf *out, const char *title, const char *col, json_t *map)
{
	const char *k;
	json_t *v;
	int err;

	if (json_object_size(map) == 0)
		return 0;
	err = rs_buf_printf(out, "\n## %s\n\n| %s | value |\n|---|---:|\n", title, col);
	/* Sorted for a stable page: jansson iterates in hash order. */
	{
		size_t n = json_object_size(map), i = 0;
		const char **keys = calloc(n, sizeof(*keys));

		if (!keys)
			return rs_error_set(RS_EGENERIC, "out of memory");
		json_object_foreach(map, k, v)
			keys[i++] = k;
		qsort(keys, n, sizeof(*keys), rs_run_cmp_str);
		for (i = 0; i < n && !err; i++) {
			err = rs_buf_puts(out, "| ");
			if (!err) err = md_cell(out, keys[i]);
			if (!err) err = rs_buf_puts(out, " | ");
			if (!err) err = md_value(out, json_object_get(map, keys[i]));
			if (!err) err = rs_buf_puts(out, " |\n");
		}
		free(keys);
	}
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

int rs_run_render_markdown(struct rs_buf *out, const struct rs_run *run)
{
	char machine[1024], size[32];
	int err;

	snprintf(machine, sizeof(machine), "%s (%s, %s, %s × %lld)",
		 str_of(run->machine, "hostname") ? str_of(run->machine, "hostname") : "?",
		 str_of(run->machine, "os") ? str_of(run->machine, "os") : "?",
		 str_of(run->machine, "arch") ? str_of(run->machine, "arch") : "?",
		 str_of(run->machine, "cpu_model") ? str_of(run->machine, "cpu_model") : "?",
		 (long long)json_integer_value(json_object_get(run->machine, "cpus")));
	err = rs_buf_printf(out, "# Profiling run %s\n\n| | |\n|---|---|\n", run->id);
	if (!err) err = rs_buf_printf(out, "| Profiled commit | `%s` |\n", run->commit);
	if (!err) err = md_row(out, "Branch", run->branch);
	if (!err) err = md_row(out, "Trigger", run->trigger);
	if (!err) err = md_row(out, "Recorded (UTC)", run->recorded_at);
	if (!err) err = md_row(out, "Machine", machine);
	if (!err && str_of(run->machine, "runner"))
		err = md_row(out, "Runner", str_of(run->machine, "runner"));
	if (!err && run->message)
		err = md_row(out, "Message", run->message);
	if (!err && run->main_session >= 0)
		err = md_row(out, "Session", run->files[run->main_session].name);
	if (err)
		return err;
	if (run->session_md)
		err = rs_buf_printf(out, "\n%s", run->session_md);
	else
		err = rs_buf_puts(out, "\n_No session summary: the files were stored with "
				  "`--raw`._\n");
	if (!err) err = md_map(out, "Stats", "stat", run->stats);
	if (!err) err = md_map(out, "Arguments", "argument", run->args);
	if (!err) err = md_map(out, "Metadata", "key", run->meta);
	if (!err && run->nfiles)
		err = rs_buf_puts(out, "\n## Files\n\n| file | role | size | stored |\n"
				  "|---|---|---:|---|\n");
	for (size_t i = 0; i < run->nfiles && !err; i++) {
		const struct rs_run_file *f = &run->files[i];

		human_size(size, sizeof(size), f->size);
		err = rs_buf_puts(out, "| ");
		if (!err && f->lfs) err = md_cell(out, f->name);
		else if (!err) {
			err = rs_buf_puts(out, "[");
			if (!err) err = md_cell(out, f->name);
			if (!err) err = rs_buf_printf(out, "](%s)", f->name);
		}
		if (!err)
			err = rs_buf_printf(out, " | %s | %s | %s |\n", f->role, size,
					    f->lfs ? "Git LFS (`results fetch`)" : "in git");
	}
	return err;
}
