/*
 * Renderers. Text is for a terminal (fixed columns; the program writes it
 * through rs_escape_term), Markdown for GitHub (tables; every name from a
 * run or a session through results/escape.h, a function name as a code
 * span so that "__init__", "<lambda>" or "a`b|<img>" shows as it is and
 * nothing else), JSON is built with jansson so
 * that escaping and number formatting are right by construction (NaN,
 * which JSON lacks, becomes null).
 */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/render.h"
#include "analysis/culprit.h"
#include "results/error.h"
#include "results/escape.h"
#include "results/json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int rs_format_parse(enum rs_format *out, const char *name)
{
	if (!strcmp(name, "text"))
		*out = RS_FORMAT_TEXT;
	else if (!strcmp(name, "markdown") || !strcmp(name, "md"))
		*out = RS_FORMAT_MARKDOWN;
	else if (!strcmp(name, "json"))
		*out = RS_FORMAT_JSON;
	else
		return rs_error_set(RS_EUSAGE,
				    "unknown format '%s' (use text, markdown or json)", name);
	return 0;
}

/*
 * An untrusted name (a function, a run id, a workload key): a code span
 * in Markdown (`flags`: RS_ESCAPE_IN_TABLE in a table cell), as it is in
 * text, which the program writes through rs_escape_term.
 */
static int put_code(struct rs_buf *out, const char *s, int md, unsigned flags)
{
	return md ? rs_escape_md_code(out, s, flags) : rs_buf_puts(out, s ? s : "");
}

/* Untrusted prose (an accept message, a verdict): Markdown text, or as it is. */
static int put_text(struct rs_buf *out, const char *s, int md)
{
	return md ? rs_escape_md_text(out, s) : rs_buf_puts(out, s ? s : "");
}

/* `before`, put_code(`s`), `after`. */
static int put_code_between(struct rs_buf *out, const char *before, const char *s,
			    const char *after, int md)
{
	int err = rs_buf_puts(out, before);

	if (!err)
		err = put_code(out, s, md, 0);
	if (!err)
		err = rs_buf_puts(out, after);
	return err;
}

/* `before`, put_text(`s`), `after`. */
static int put_text_between(struct rs_buf *out, const char *before, const char *s,
			    const char *after, int md)
{
	int err = rs_buf_puts(out, before);

	if (!err)
		err = put_text(out, s, md);
	if (!err)
		err = rs_buf_puts(out, after);
	return err;
}

/* Digits of a non-negative integer-valued double with ',' every three. */
static int grouped(struct rs_buf *out, double v)
{
	char digits[40];
	size_t n, i;
	int err;

	snprintf(digits, sizeof(digits), "%.0f", v);
	n = strlen(digits);
	for (i = 0; i < n; i++) {
		err = rs_buf_putc(out, digits[i]);
		if (err)
			return err;
		if ((n - i - 1) % 3 == 0 && i + 1 < n) {
			err = rs_buf_putc(out, ',');
			if (err)
				return err;
		}
	}
	return 0;
}

int rs_render_number(struct rs_buf *out, double v)
{
	double a = fabs(v);
	int err;

	if (isnan(v) || isinf(v))
		return rs_buf_puts(out, "-");
	if (a >= 1e15)
		return rs_buf_printf(out, "%.4g", v);
	if (v < 0) {
		err = rs_buf_putc(out, '-');
		if (err)
			return err;
	}
	if (a == floor(a) && a >= 1000)
		return grouped(out, a);
	if (a >= 9999.5) { /* 12,345.7 */
		double whole = floor(a);
		int tenth = (int)floor((a - whole) * 10 + 0.5);

		if (tenth == 10) {
			whole += 1;
			tenth = 0;
		}
		err = grouped(out, whole);
		if (err)
			return err;
		return rs_buf_printf(out, ".%d", tenth);
	}
	if (a >= 1000) /* 1,234.5 -> 1,235: four significant digits */
		return grouped(out, floor(a + 0.5));
	if (a > 0 && a < 1e-3)
		return rs_buf_printf(out, "%.3g", a);
	return rs_buf_printf(out, "%.4g", a);
}

/*
 * Seconds in the unit that reads best: "1.23 s", "12.3 ms", "1 ms" (not
 * "1e+03 us": the unit is chosen after rounding to three digits),
 * "1,234 s" for long runs.
 */
int rs_render_seconds(struct rs_buf *out, double s)
{
	double a = fabs(s);
	int err;

	if (isnan(s))
		return rs_buf_puts(out, "-");
	if (a == 0)
		return rs_buf_puts(out, "0 s");
	if (a >= 999.5) {
		err = rs_render_number(out, floor(s + 0.5));
		if (err)
			return err;
		return rs_buf_puts(out, " s");
	}
	if (a >= 0.9995)
		return rs_buf_printf(out, "%.3g s", s);
	if (a >= 0.9995e-3)
		return rs_buf_printf(out, "%.3g ms", s * 1e3);
	if (a >= 0.9995e-6)
		return rs_buf_printf(out, "%.3g us", s * 1e6);
	return rs_buf_printf(out, "%.3g ns", s * 1e9);
}

int rs_render_seconds_after(struct rs_buf *out, const char *before, double seconds)
{
	int err;

	err = rs_buf_puts(out, before);
	if (err)
		return err;
	return rs_render_seconds(out, seconds);
}

static int is_time_name(const char *name)
{
	size_t n = strlen(name);
	const char *slash = strchr(name, '/');
	size_t stem = slash ? (size_t)(slash - name) : n;

	if ((stem == 8 && !strncmp(name, "duration", 8)) ||
	    (stem == 8 && !strncmp(name, "cpu_time", 8)) ||
	    (stem == 12 && !strncmp(name, "sampled_time", 12)))
		return 1;
	return n > 5 && !strcmp(name + n - 5, "_time");
}

int rs_render_metric_value(struct rs_buf *out, const char *name, double v)
{
	if (isnan(v))
		return rs_buf_puts(out, "-");
	if (is_time_name(name))
		return rs_render_seconds(out, v);
	return rs_render_number(out, v);
}

static int render_change(struct rs_buf *out, const char *name, double abs, double rel)
{
	int err;

	if (is_time_name(name)) {
		err = rs_buf_puts(out, abs >= 0 ? "+" : "");
		if (err)
			return err;
		err = rs_render_seconds(out, abs);
		if (err)
			return err;
	} else {
		err = rs_buf_puts(out, abs >= 0 ? "+" : "");
		if (err)
			return err;
		err = rs_render_number(out, abs);
		if (err)
			return err;
	}
	if (isnan(rel))
		return 0;
	return rs_buf_printf(out, " (%+.1f%%)", rel * 100);
}

static const char *short_sha(const char *sha, char buf[8])
{
	snprintf(buf, 8, "%s", sha ? sha : "");
	return buf;
}

/* Pad a cell to `w` columns (text output; bytes, names are ASCII). */
static int pad(struct rs_buf *out, const char *s, size_t w)
{
	size_t n = strlen(s);
	int err;

	err = rs_buf_puts(out, s);
	if (err)
		return err;
	while (n++ < w) {
		err = rs_buf_putc(out, ' ');
		if (err)
			return err;
	}
	return rs_buf_putc(out, ' ');
}

/*
 * The JSON documents (compare, check, trend) are built key by key through
 * one rs_json_build each (results/json.h, a sticky error): a value or an
 * insertion that fails to allocate makes the document an error when it is
 * written, never a document without the key. Reals go through num_or_null,
 * as json_real refuses NaN and infinities (such a NULL would read as out
 * of memory). Names and paths come from decoded records and sessions,
 * which jansson and the parser checked as UTF-8.
 */
static json_t *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static const char *change_name(enum rs_func_change c)
{
	switch (c) {
	case RS_FUNC_NEW: return "new";
	case RS_FUNC_VANISHED: return "vanished";
	case RS_FUNC_RENAMED: return "renamed";
	default: return "changed";
	}
}

static json_t *func_json(struct rs_json_build *b, const struct rs_func_delta *f)
{
	json_t *o = json_object();

	rs_json_set(b, o, "change", json_string(change_name(f->change)));
	rs_json_set(b, o, "function", json_string(f->function));
	if (f->old_function)
		rs_json_set(b, o, "old_function", json_string(f->old_function));
	rs_json_set(b, o, "file", json_string(f->file));
	rs_json_set(b, o, "line", json_integer(strcmp(f->file, "<thread>") ? f->line : 0));
	rs_json_set(b, o, "base_self", num_or_null(f->base_self));
	rs_json_set(b, o, "head_self", num_or_null(f->head_self));
	rs_json_set(b, o, "base_total", num_or_null(f->base_total));
	rs_json_set(b, o, "head_total", num_or_null(f->head_total));
	rs_json_set(b, o, "base_self_share", num_or_null(f->base_self_share));
	rs_json_set(b, o, "head_self_share", num_or_null(f->head_self_share));
	rs_json_set(b, o, "base_total_share", num_or_null(f->base_total_share));
	rs_json_set(b, o, "head_total_share", num_or_null(f->head_total_share));
	rs_json_set(b, o, "own_code", json_boolean(f->own));
	if (f->base_below > 0)
		rs_json_set(b, o, "base_below", num_or_null(f->base_below));
	if (f->head_below > 0)
		rs_json_set(b, o, "head_below", num_or_null(f->head_below));
	if (f->probable)
		rs_json_set(b, o, "probable", json_true());
	if (f->root)
		rs_json_set(b, o, "root", json_true());
	if (f->wrapper)
		rs_json_set(b, o, "wrapper", json_true());
	return o;
}

static json_t *culprits_json(struct rs_json_build *b, const struct rs_culprits *cs);

static json_t *diff_json(struct rs_json_build *b, const struct rs_diff *d)
{
	json_t *o = json_object(), *ms = json_array(), *fs = json_array();
	size_t i;

	rs_json_set(b, o, "base", json_string(d->base_id));
	rs_json_set(b, o, "head", json_string(d->head_id));
	rs_json_set(b, o, "base_commit", json_string(d->base_commit));
	rs_json_set(b, o, "head_commit", json_string(d->head_commit));
	if (d->workload_key) {
		json_t *w = json_object();

		rs_json_set(b, w, "key", json_string(d->workload_key));
		rs_json_set(b, w, "base", num_or_null(d->base_workload));
		rs_json_set(b, w, "head", num_or_null(d->head_workload));
		rs_json_set(b, o, "workload", w);
	}
	for (i = 0; i < d->n_metrics && !b->failed; i++) {
		const struct rs_metric_delta *m = &d->metrics[i];
		json_t *j = json_object();

		rs_json_set(b, j, "name", json_string(m->name));
		rs_json_set(b, j, "base", num_or_null(m->base));
		rs_json_set(b, j, "head", num_or_null(m->head));
		rs_json_set(b, j, "abs", num_or_null(m->abs));
		rs_json_set(b, j, "rel", num_or_null(m->rel));
		rs_json_set(b, j, "normalised", json_boolean(m->normalised));
		rs_json_append(b, ms, j);
	}
	for (i = 0; i < d->n_funcs && !b->failed; i++)
		rs_json_append(b, fs, func_json(b, &d->funcs[i]));
	rs_json_set(b, o, "uncompared_functions", json_integer((json_int_t)d->n_uncompared));
	rs_json_set(b, o, "below_floor_functions", json_integer((json_int_t)d->n_below));
	/* who is blamed, and from what: the stored summaries or (compare
	 * --deep) the sessions' whole call trees */
	rs_json_set(b, o, "culprits", culprits_json(b, d->culprits));
	rs_json_set(b, o, "culprits_from", json_string(d->culprits && d->culprits->from_sessions
							    ? "sessions" : "summaries"));
	rs_json_set(b, o, "metrics", ms);
	rs_json_set(b, o, "functions", fs);
	return o;
}

/* Write `j` (taken) built through `b`: "out of memory" if any of it failed. */
static int dump_json(struct rs_buf *out, struct rs_json_build *b, json_t *j)
{
	int err;

	err = rs_json_build_dump(out, b, j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	if (err)
		return err;
	return rs_buf_putc(out, '\n');
}

/* "name (file:line)" or, for a rename, "old -> new (file:line)". A
 * thread's root frame has its thread id as "line", new every run: it is
 * shown as "MainThread (<thread>)". */
static int func_label(struct rs_buf *out, const struct rs_func_delta *f, int md,
		      unsigned flags)
{
	const char *file = strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file;
	int err;

	if (!strcmp(f->file, "<thread>")) {
		if (md) {
			err = rs_escape_md_code(out, f->function, flags);
			if (err)
				return err;
			err = rs_buf_putc(out, ' ');
			if (err)
				return err;
			return rs_escape_md_text(out, f->file);
		}
		return rs_buf_printf(out, "%s (%s)", f->function, f->file);
	}

	if (md) {
		if (f->old_function) {
			err = rs_escape_md_code(out, f->old_function, flags);
			if (err)
				return err;
			err = rs_buf_puts(out, " → ");
			if (err)
				return err;
		}
		err = rs_escape_md_code(out, f->function, flags);
		if (err)
			return err;
		err = rs_buf_putc(out, ' ');
		if (err)
			return err;
		err = rs_escape_md_text(out, file);
		if (err)
			return err;
		return rs_buf_printf(out, ":%ld%s", f->line, f->probable ? " (probably)" : "");
	}
	if (f->old_function) {
		err = rs_buf_printf(out, "%s -> ", f->old_function);
		if (err)
			return err;
	}
	return rs_buf_printf(out, "%s (%s:%ld)%s", f->function, file, f->line,
			     f->probable ? " (probably)" : "");
}

/*
 * A figure that was not stored: below the floor, "<31.1 ms" (the floor's
 * time in that run), or "<0.1%" of the run when that time is unknown.
 * Never 0: the function ran.
 */
static int below_cell(struct rs_buf *out, double share, double max)
{
	int err;

	if (!(max > 0))
		return rs_buf_printf(out, "<%.2g%%", share * 100);
	err = rs_buf_putc(out, '<');
	if (err)
		return err;
	return rs_render_seconds(out, max);
}

/*
 * The change of a row with a side below the floor: the range it lies in,
 * "-58.2 ms..-27.1 ms", since the unstored side was between 0 and the
 * floor's time.
 */
static int below_change(struct rs_buf *out, const struct rs_func_delta *f, double b, double h)
{
	double lo, hi;
	int err;

	if (f->head_below > 0) {
		lo = -b;
		hi = f->head_max - b;
	} else {
		lo = h - f->base_max;
		hi = h;
	}
	err = rs_buf_puts(out, lo > 0 ? "+" : "");
	if (!err)
		err = rs_render_seconds(out, lo);
	if (!err)
		err = rs_buf_puts(out, hi > 0 ? "..+" : "..");
	if (!err)
		err = rs_render_seconds(out, hi);
	return err;
}

/* "6.1% -> 6.5%"; a side below the floor (`*_below` > 0) as "<0.1%". */
static int share_cell(struct rs_buf *out, double base, double head, double base_below,
		      double head_below)
{
	int err;

	err = base_below > 0 ? rs_buf_printf(out, "<%.2g%%", base_below * 100)
			     : rs_buf_printf(out, "%.1f%%", base * 100);
	if (!err)
		err = rs_buf_puts(out, " -> ");
	if (!err)
		err = head_below > 0 ? rs_buf_printf(out, "<%.2g%%", head_below * 100)
				     : rs_buf_printf(out, "%.1f%%", head * 100);
	return err;
}

/*
 * One row of a function table. by_total: 0 own time (total time
 * alongside), 1 total time, 2 total time with own time alongside (new and
 * vanished functions: own time says little of library-heavy code).
 */
static int func_row(struct rs_buf *out, const struct rs_func_delta *f, int md,
		    int by_total)
{
	struct rs_buf cell = RS_BUF_INIT;
	double b = by_total ? f->base_total : f->base_self;
	double h = by_total ? f->head_total : f->head_self;
	double bs = by_total ? f->base_total_share : f->base_self_share;
	double hs = by_total ? f->head_total_share : f->head_self_share;
	double rel = b > 0 ? (h - b) / b : NAN;
	int err;

	err = func_label(&cell, f, md, RS_ESCAPE_IN_TABLE);
	if (err)
		goto out;
	if (md)
		err = rs_buf_printf(out, "| %s | ", cell.ptr);
	else
		err = rs_buf_puts(out, "  ");
	if (!err && !md)
		err = pad(out, cell.ptr, 52);
	if (err)
		goto out;
	rs_buf_clear(&cell);
	err = f->change == RS_FUNC_NEW ? rs_buf_puts(&cell, "-")
	      : f->base_below > 0      ? below_cell(&cell, f->base_below, f->base_max)
				       : rs_render_seconds(&cell, b);
	if (!err)
		err = md ? rs_buf_printf(out, "%s | ", cell.ptr) : pad(out, cell.ptr, 10);
	rs_buf_clear(&cell);
	if (!err)
		err = f->change == RS_FUNC_VANISHED ? rs_buf_puts(&cell, "-")
		      : f->head_below > 0 ? below_cell(&cell, f->head_below, f->head_max)
					  : rs_render_seconds(&cell, h);
	if (!err)
		err = md ? rs_buf_printf(out, "%s | ", cell.ptr) : pad(out, cell.ptr, 10);
	rs_buf_clear(&cell);
	if (!err && (f->base_below > 0 || f->head_below > 0) && (f->base_max > 0 || f->head_max > 0))
		err = below_change(&cell, f, b, h);
	else if (!err)
		err = render_change(&cell, "duration", h - b, rel);
	if (!err)
		err = md ? rs_buf_printf(out, "%s | ", cell.ptr) : pad(out, cell.ptr, 22);
	rs_buf_clear(&cell);
	if (!err)
		err = share_cell(&cell, bs, hs, f->base_below, f->head_below);
	if (!err && by_total != 1) {
		/* own-time rows also say how much ran below the function, and
		 * total-time rows of new functions how much was their own */
		double other = by_total ? (f->change == RS_FUNC_VANISHED ? f->base_self : f->head_self)
					: (f->change == RS_FUNC_VANISHED ? f->base_total : f->head_total);

		err = md ? rs_buf_printf(out, "%s | ", cell.ptr) : pad(out, cell.ptr, 16);
		rs_buf_clear(&cell);
		if (!err)
			err = rs_render_seconds(&cell, other);
	}
	if (!err)
		err = md ? rs_buf_printf(out, "%s |\n", cell.ptr)
			 : rs_buf_printf(out, "%s\n", cell.ptr);
out:
	rs_buf_release(&cell);
	return err;
}

static int func_header(struct rs_buf *out, int md, const char *title, int by_total)
{
	const char *what = by_total ? "total time" : "own time";
	const char *other = by_total == 2 ? "own time" : by_total ? NULL : "total time";
	char share[48];
	int err;

	snprintf(share, sizeof(share), "%s, share of the run", what);
	if (md && !other)
		return rs_buf_printf(out, "\n**%s**\n\n| function | base %s | head %s | change | %s |\n"
				     "|---|---:|---:|---:|---:|\n", title, what, what, share);
	if (md)
		return rs_buf_printf(out, "\n**%s**\n\n| function | base %s | head %s | change | %s | %s |\n"
				     "|---|---:|---:|---:|---:|---:|\n", title, what, what, share, other);
	err = rs_buf_printf(out, "\n%s\n  ", title);
	if (err)
		return err;
	err = pad(out, "function", 52);
	if (err)
		return err;
	err = pad(out, by_total ? "base total" : "base own", 10);
	if (err)
		return err;
	err = pad(out, by_total ? "head total" : "head own", 10);
	if (err)
		return err;
	err = pad(out, "change", 22);
	if (err)
		return err;
	if (!other)
		return rs_buf_puts(out, "share of run\n");
	err = pad(out, "share of run", 16);
	if (err)
		return err;
	return rs_buf_printf(out, "%s\n", other);
}

/* New and vanished functions smaller than this are counted, not listed. */
#define SMALL_SHARE 0.005

/* Indexes into d->funcs (`ctx`), largest change of total time first. */
static int cmp_total(const void *a, const void *b, void *ctx)
{
	const struct rs_diff *d = ctx;
	const struct rs_func_delta *x = &d->funcs[*(const size_t *)a];
	const struct rs_func_delta *y = &d->funcs[*(const size_t *)b];
	double dx = fabs(x->head_total - x->base_total);
	double dy = fabs(y->head_total - y->base_total);

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* One section of function rows: those of kind `kind` (or changed and
 * renamed ones with a real change when kind < 0), at most `top`. */
static int func_section(struct rs_buf *out, const struct rs_diff *d, int md,
			size_t top, int kind, int by_total, const char *title)
{
	size_t *order, n = 0, small = 0, i;
	int err = 0;

	order = malloc((d->n_funcs ? d->n_funcs : 1) * sizeof(*order));
	if (!order)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < d->n_funcs; i++) {
		const struct rs_func_delta *f = &d->funcs[i];

		/* total time: root frames and callers whose change is that of
		 * a function below them say nothing new; they are counted */
		if (by_total == 1 && (f->root || f->wrapper))
			continue;
		/* new and vanished: the small ones come and go with the
		 * simulated events; they are counted below, not listed */
		if ((kind == RS_FUNC_NEW || kind == RS_FUNC_VANISHED) && (int)f->change == kind &&
		    fmax(f->base_total_share, f->head_total_share) < SMALL_SHARE) {
			small++;
			continue;
		}
		if (kind >= 0 ? (int)f->change == kind
			      : (f->change == RS_FUNC_CHANGED || f->change == RS_FUNC_RENAMED))
			order[n++] = i;
	}
	if (by_total)
		qsort_r(order, n, sizeof(*order), cmp_total, (void *)d);
	if (n) {
		err = func_header(out, md, title, by_total);
		for (i = 0; !err && i < n && i < top; i++)
			err = func_row(out, &d->funcs[order[i]], md, by_total);
		if (!err && n > top)
			err = rs_buf_printf(out, md ? "\n%zu more not shown.\n" : "  ... %zu more\n",
					    n - top);
		if (!err && small)
			err = rs_buf_printf(out, md ? "\n_And %zu small function%s (under %g%% of the run each)._\n"
						    : "  ... and %zu small function%s (under %g%% of the run each)\n",
					    small, small == 1 ? "" : "s", SMALL_SHARE * 100);
		if (!err && by_total == 1) {
			size_t roots = 0;

			for (i = 0; i < d->n_funcs; i++)
				roots += d->funcs[i].root;
			if (roots || d->n_wrappers)
				err = rs_buf_printf(out, md ? "\n_Left out: %zu root frame%s (90%% or more of both runs) "
							      "and %zu caller%s whose change is that of a function they call._\n"
							    : "  (left out: %zu root frame%s, 90%% or more of both runs, "
							      "and %zu caller%s whose change is that of a function they call)\n",
						    roots, roots == 1 ? "" : "s", d->n_wrappers,
						    d->n_wrappers == 1 ? "" : "s");
		}
	}
	if (!err && !n && small)
		err = rs_buf_printf(out, md ? "\n_%zu small function%s (under %g%% of the run each) ran only in the %s run._\n"
					    : "\n%zu small function%s (under %g%% of the run each) ran only in the %s run\n",
				    small, small == 1 ? "" : "s", SMALL_SHARE * 100,
				    kind == RS_FUNC_NEW ? "head" : "base");
	free(order);
	return err;
}


/*
 * One responsible frame: "name (file:line): total 0 s -> 4.1 s (+4.1 s),
 * own 13.0 ms, new function, own code".
 */
static int explain_line(struct rs_buf *out, const struct rs_func_delta *f, int md)
{
	int err;

	err = rs_buf_puts(out, md ? "- " : "  ");
	if (err)
		return err;
	err = func_label(out, f, md, 0);
	if (err)
		return err;
	err = rs_buf_puts(out, ": total time ");
	if (err)
		return err;
	if (f->change == RS_FUNC_NEW) {
		err = rs_buf_puts(out, "-");
		if (err)
			return err;
	} else if (f->base_below > 0) {
		err = rs_buf_printf(out, "below %.2g%%", f->base_below * 100);
		if (err)
			return err;
	} else {
		err = rs_render_seconds(out, f->base_total);
		if (err)
			return err;
	}
	err = rs_buf_puts(out, md ? " → " : " -> ");
	if (err)
		return err;
	err = rs_render_seconds(out, f->head_total);
	if (err)
		return err;
	err = rs_buf_puts(out, " (");
	if (err)
		return err;
	err = render_change(out, "duration", f->head_total - f->base_total, NAN);
	if (err)
		return err;
	/* every share says what it is of: the growth as a share of the head
	 * run's time, then the function's total as a share of it */
	{
		double run = f->head_total_share > 0 ? f->head_total / f->head_total_share : 0;

		err = rs_buf_printf(out, " = %.1f%% of the head run; total %.1f%% of the head run), own time ",
				    run > 0 ? (f->head_total - f->base_total) / run * 100 : 0,
				    f->head_total_share * 100);
	}
	if (err)
		return err;
	err = rs_render_seconds(out, f->head_self);
	if (err)
		return err;
	if (f->change == RS_FUNC_NEW) {
		err = rs_buf_puts(out, ", new function");
		if (err)
			return err;
	}
	if (f->change == RS_FUNC_RENAMED) {
		err = rs_buf_puts(out, ", renamed");
		if (err)
			return err;
	}
	return rs_buf_puts(out, f->own ? ", own code\n" : ", library\n");
}

/* The growth of duration (per unit of workload when normalised). */
static double duration_growth(const struct rs_diff *d, double *wb, double *wh)
{
	const struct rs_metric_delta *m = rs_diff_metric(d, "duration");

	*wb = *wh = 1;
	if (d->workload_key && d->base_workload > 0 && d->head_workload > 0) {
		*wb = d->base_workload;
		*wh = d->head_workload;
	}
	return m ? m->head / *wh - m->base / *wb : 0;
}

/*
 * A culprit in one line: "new call A -> B (4.13 s)", "slower wherever it
 * is called, 31 callers: F (+1.9 s)", "slower in its own body: F (+1.2 s)".
 * `md`: names as code spans.
 */
static int culprit_title(struct rs_buf *out, const struct rs_culprit *x, int md)
{
	int err;

	if (x->kind == RS_CULPRIT_NEW_CALL) {
		/* one code span for "caller -> function", as the text shows it */
		struct rs_buf pair;

		rs_buf_init(&pair, 0);
		err = rs_buf_printf(&pair, "%s -> %s", x->caller ? x->caller : "",
				    x->function ? x->function : "");
		if (!err)
			err = rs_buf_puts(out, "new call ");
		if (!err)
			err = put_code(out, pair.ptr, md, 0);
		rs_buf_release(&pair);
	} else if (x->kind == RS_CULPRIT_EVERYWHERE) {
		err = rs_buf_printf(out, "%s, %zu callers: ", rs_culprit_case_name(x->kind),
				    x->n_callers);
		if (!err)
			err = put_code(out, x->function, md, 0);
	} else {
		err = rs_buf_printf(out, "%s: ", rs_culprit_case_name(x->kind));
		if (!err)
			err = put_code(out, x->function, md, 0);
	}
	if (!err)
		err = rs_buf_puts(out, " (");
	if (err)
		return err;
	if (x->kind == RS_CULPRIT_NEW_CALL)
		err = rs_render_seconds(out, x->growth);
	else
		err = render_change(out, "duration", x->growth, NAN);
	if (err)
		return err;
	return rs_buf_puts(out, ")");
}

/* The culprits, each with its figures and call path. */
static int culprit_section(struct rs_buf *out, const struct rs_culprits *cs, int md)
{
	int err;

	if (cs->from_sessions)
		err = rs_buf_puts(out, md ? "\n**Culprits** (where the added time appears, by calling context, "
					    "from the sessions' whole call trees):\n\n"
					  : "\nculprits (where the added time appears, by calling context, "
					    "from the sessions' whole call trees):\n");
	else
		err = rs_buf_puts(out, md ? "\n**Culprits** (where the added time appears, by calling context):\n\n"
					  : "\nculprits (where the added time appears, by calling context):\n");
	for (size_t i = 0; !err && i < cs->n; i++) {
		const struct rs_culprit *x = &cs->c[i];

		err = rs_buf_puts(out, md ? "- " : "  ");
		if (!err)
			err = culprit_title(out, x, md);
		if (!err)
			err = rs_buf_printf(out, ", %.1f%% of the run's sampled time", x->share * 100);
		if (!err && x->kind != RS_CULPRIT_NEW_CALL) {
			err = rs_buf_puts(out, "; its total time ");
			if (!err)
				err = rs_render_seconds(out, x->base_total);
			if (!err)
				err = rs_buf_puts(out, md ? " → " : " -> ");
			if (!err)
				err = rs_render_seconds(out, x->head_total);
		}
		if (!err && x->path) {
			err = rs_buf_puts(out, md ? "\n  call path: " : "\n      call path: ");
			if (!err)
				err = put_code(out, x->path, md, 0);
			if (!err)
				err = rs_buf_puts(out, "\n");
		} else if (!err)
			err = rs_buf_puts(out, "\n");
	}
	if (!err && cs->from_tree)
		err = rs_buf_puts(out, md ? "\n_A run was recorded before call tables were stored: "
					    "calls above 0.5% of a run only._\n"
					  : "  (a run was recorded before call tables were stored: "
					    "calls above 0.5% of a run only)\n");
	return err;
}

static json_t *culprits_json(struct rs_json_build *b, const struct rs_culprits *cs)
{
	json_t *a = json_array();

	for (size_t i = 0; cs && i < cs->n && !b->failed; i++) {
		const struct rs_culprit *x = &cs->c[i];
		json_t *o = json_object();

		rs_json_set(b, o, "case", json_string(rs_culprit_case_name(x->kind)));
		rs_json_set(b, o, "function", json_string(x->function));
		rs_json_set(b, o, "file", json_string(x->file));
		rs_json_set(b, o, "line", json_integer(x->line));
		rs_json_set(b, o, "caller", x->caller ? json_string(x->caller) : json_null());
		rs_json_set(b, o, "growth", num_or_null(x->growth));
		rs_json_set(b, o, "growth_share", num_or_null(x->share));
		rs_json_set(b, o, "base_total", num_or_null(x->base_total));
		rs_json_set(b, o, "head_total", num_or_null(x->head_total));
		rs_json_set(b, o, "callers", json_integer((json_int_t)x->n_callers));
		rs_json_set(b, o, "path", x->path ? json_string(x->path) : json_null());
		rs_json_append(b, a, o);
	}
	return a;
}

/* compare: which frames explain a longer run, when it is longer. */
static int explain_section(struct rs_buf *out, const struct rs_diff *d, int md)
{
	size_t idx[5], n, i;
	double wb, wh, grow = duration_growth(d, &wb, &wh);
	const struct rs_metric_delta *m = rs_diff_metric(d, "duration");
	int err;

	if (!m || !(grow > 0) || !(m->base > 0) || grow * wb < 0.02 * m->base)
		return 0;
	if (d->culprits && d->culprits->n)
		return culprit_section(out, d->culprits, md);
	n = rs_diff_explain(d, wb, wh, grow / 5, idx, 5);
	if (!n)
		return 0;
	err = rs_buf_puts(out, md ? "\n**Where the added time went** (total time, the project's own code first)\n\n"
				  : "\nwhere the added time went (total time, own code first):\n");
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		err = explain_line(out, &d->funcs[idx[i]], md);
		if (err)
			return err;
	}
	return 0;
}

static int metrics_table(struct rs_buf *out, const struct rs_diff *d, int md)
{
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT, c = RS_BUF_INIT;
	size_t i;
	int err = 0;

	if (md)
		err = rs_buf_puts(out, "| metric | base | head | change |\n|---|---:|---:|---:|\n");
	else
		err = rs_buf_printf(out, "  %-28s %-12s %-12s %s\n", "metric", "base", "head",
				    "change");
	for (i = 0; !err && i < d->n_metrics; i++) {
		const struct rs_metric_delta *m = &d->metrics[i];

		rs_buf_clear(&a);
		rs_buf_clear(&b);
		rs_buf_clear(&c);
		err = rs_render_metric_value(&a, m->name, m->base);
		if (err)
			break;
		err = rs_render_metric_value(&b, m->name, m->head);
		if (err)
			break;
		err = render_change(&c, m->name, m->abs, m->rel);
		if (err)
			break;
		if (md) {
			err = rs_buf_puts(out, "| ");
			if (!err)
				err = rs_escape_md_text(out, m->name);
			if (!err)
				err = rs_buf_printf(out, " | %s | %s | %s |\n", a.ptr, b.ptr, c.ptr);
		} else {
			err = rs_buf_printf(out, "  %-28s %-12s %-12s %s\n", m->name, a.ptr,
					    b.ptr, c.ptr);
		}
	}
	rs_buf_release(&a);
	rs_buf_release(&b);
	rs_buf_release(&c);
	return err;
}

static int render_diff_body(struct rs_buf *out, const struct rs_diff *d, int md,
			    size_t top)
{
	int err;

	err = metrics_table(out, d, md);
	if (err)
		return err;
	err = explain_section(out, d, md);
	if (err)
		return err;
	err = func_section(out, d, md, top, RS_FUNC_RENAMED, 0,
			   "Renamed functions (same file and first line, or nearby with a similar time)");
	if (err)
		return err;
	err = func_section(out, d, md, top, RS_FUNC_NEW, 2, "New functions");
	if (err)
		return err;
	err = func_section(out, d, md, top, RS_FUNC_VANISHED, 2, "Vanished functions");
	if (err)
		return err;
	err = func_section(out, d, md, top, -1, 0, "Largest changes in own time");
	if (err)
		return err;
	err = func_section(out, d, md, top, -1, 1, "Largest changes in total time");
	if (err)
		return err;
	if (d->n_below) {
		err = rs_buf_printf(out, md ? "\n_%zu function%s ran in both runs but below the stored floor "
					      "in one (shown as <N ms, the floor's time in that run, its change as the "
					      "range it lies in): compared with that bound, never called new, never 0._\n"
					    : "\n%zu function%s ran in both runs but below the stored floor in one "
					      "(shown as <N ms, the floor's time in that run, its change as the range "
					      "it lies in): compared with that bound, never called new, never 0\n",
				    d->n_below, d->n_below == 1 ? "" : "s");
		if (err)
			return err;
	}
	if (d->n_uncompared) {
		err = rs_buf_printf(out, md ? "\n_%zu small functions are in only one run's stored top list "
					      "and are not compared._\n"
					    : "\n%zu small functions are in only one run's stored top list "
					      "and are not compared\n", d->n_uncompared);
		if (err)
			return err;
	}
	return 0;
}

int rs_render_diff(struct rs_buf *out, const struct rs_diff *d,
		   enum rs_format fmt, size_t top)
{
	char s1[8], s2[8];
	int md = fmt == RS_FORMAT_MARKDOWN;
	int err;

	if (!top)
		top = 10;
	if (fmt == RS_FORMAT_JSON) {
		struct rs_json_build b = RS_JSON_BUILD_INIT;

		return dump_json(out, &b, diff_json(&b, d));
	}
	if (md) {
		err = rs_buf_printf(out, "### Profile comparison: `%s` → `%s`\n\n",
				    short_sha(d->base_commit, s1), short_sha(d->head_commit, s2));
		if (err)
			return err;
		err = put_code_between(out, "Base run ", d->base_id, ", ", md);
		if (!err)
			err = put_code_between(out, "head run ", d->head_id, ".", md);
		if (err)
			return err;
	} else {
		err = rs_buf_printf(out, "compare %s (%s) -> %s (%s)", d->base_id,
				    short_sha(d->base_commit, s1), d->head_id,
				    short_sha(d->head_commit, s2));
		if (err)
			return err;
	}
	if (d->workload_key) {
		err = put_code_between(out, md ? " Workload " : "\nworkload ", d->workload_key, ": ", md);
		if (err)
			return err;
		err = rs_render_number(out, d->base_workload);
		if (err)
			return err;
		err = rs_buf_puts(out, md ? " → " : " -> ");
		if (err)
			return err;
		err = rs_render_number(out, d->head_workload);
		if (err)
			return err;
		err = rs_buf_puts(out, md ? "; time metrics are also shown per unit.\n\n"
					  : " (time metrics also shown per unit)\n\n");
		if (err)
			return err;
	} else {
		err = rs_buf_puts(out, "\n\n");
		if (err)
			return err;
	}
	return render_diff_body(out, d, md, top);
}

/* ---- check ---- */

/* One gated metric of a check, as JSON. */
static json_t *check_metric_json(struct rs_json_build *b, const struct rs_check_metric *m)
{
	json_t *j = json_object();

	rs_json_set(b, j, "name", json_string(m->name));
	rs_json_set(b, j, "base", num_or_null(m->base));
	rs_json_set(b, j, "head", num_or_null(m->head));
	rs_json_set(b, j, "rel", num_or_null(m->rel));
	rs_json_set(b, j, "band", num_or_null(m->band));
	rs_json_set(b, j, "baseline_runs", json_integer((json_int_t)m->n_base));
	rs_json_set(b, j, "gating", json_boolean(m->gating));
	rs_json_set(b, j, "regressed", json_boolean(m->regressed));
	rs_json_set(b, j, "improved", json_boolean(m->improved));
	return j;
}

/* What the check left out or was told, into `o` (after "verdict", in this order). */
static void check_json_notes(struct rs_json_build *b, json_t *o, const struct rs_check_result *r)
{
	rs_json_set(b, o, "other_config_runs", json_integer((json_int_t)r->n_other_config));
	if (r->n_other_config)
		rs_json_set(b, o, "other_config", json_string(r->other_config));
	rs_json_set(b, o, "duplicate_runs", json_integer((json_int_t)r->n_duplicates));
	rs_json_set(b, o, "duplicate_of", r->duplicate_of ? json_string(r->duplicate_of)
							       : json_null());
	rs_json_set(b, o, "accepted", r->accepted ? json_string(r->accepted) : json_null());
	rs_json_set(b, o, "accepted_regression", json_boolean(r->accepted_regression));
	if (r->baseline_accepted)
		rs_json_set(b, o, "baseline_accepted", json_string(r->baseline_accepted));
	if (r->same_workload)
		rs_json_set(b, o, "same_workload", json_string(r->same_workload));
}

/* The machine check and the function-level findings, into `o` (noise.h). */
static void check_json_noise(struct rs_json_build *b, json_t *o, const struct rs_check_result *r)
{
	json_t *m = json_object(), *fs = json_array(), *sv = json_array();

	rs_json_set(b, m, "slower", json_boolean(r->machine_slower));
	rs_json_set(b, m, "factor", r->machine_slower ? num_or_null(r->machine_factor)
							    : json_null());
	rs_json_set(b, m, "wall_distorted", json_boolean(r->wall_distorted));
	rs_json_set(b, m, "wall_cpu_head", num_or_null(r->wall_cpu_head));
	rs_json_set(b, m, "wall_cpu_base", num_or_null(r->wall_cpu_base));
	rs_json_set(b, m, "wall_left_out", json_integer((json_int_t)r->n_wall_left_out));
	rs_json_set(b, o, "machine", m);
	rs_json_set(b, o, "gating", r->gating ? json_string(r->gating) : json_null());
	rs_json_set(b, o, "function_warning", json_boolean(r->function_warning));
	for (size_t i = 0; i < r->n_findings && !b->failed; i++) {
		const struct rs_noise_finding *f = &r->findings[i];
		json_t *j = func_json(b, &r->diff->funcs[f->func]);

		rs_json_set(b, j, "base_share", num_or_null(f->base_share));
		rs_json_set(b, j, "head_share", num_or_null(f->head_share));
		rs_json_set(b, j, "z", num_or_null(f->z));
		rs_json_set(b, j, "delta", num_or_null(f->delta));
		rs_json_append(b, fs, j);
	}
	rs_json_set(b, o, "functions_beyond_noise", fs);
	for (size_t i = 0; i < r->n_saved && !b->failed; i++)
		rs_json_append(b, sv, func_json(b, &r->diff->funcs[r->saved[i]]));
	rs_json_set(b, o, "saved", sv);
}

static json_t *check_json(struct rs_json_build *b, const struct rs_check_result *r)
{
	json_t *o = json_object(), *ms = json_array(), *fs = json_array(),
	       *bs = json_array();
	size_t i;

	rs_json_set(b, o, "regressed", json_boolean(r->regressed));
	rs_json_set(b, o, "head", json_string(r->head_id));
	rs_json_set(b, o, "head_commit", json_string(r->head_commit));
	rs_json_set(b, o, "baseline_commit",
			    r->baseline_commit ? json_string(r->baseline_commit) : json_null());
	for (i = 0; i < r->n_baseline && !b->failed; i++)
		rs_json_append(b, bs, json_string(r->baseline_ids[i]));
	rs_json_set(b, o, "baseline", bs);
	rs_json_set(b, o, "threshold", num_or_null(r->threshold));
	rs_json_set(b, o, "other_machine_runs", json_integer((json_int_t)r->n_other_machine));
	rs_json_set(b, o, "noise_runs", json_integer((json_int_t)r->n_noise_runs));
	rs_json_set(b, o, "workload", r->workload_key ? json_string(r->workload_key)
							   : json_null());
	rs_json_set(b, o, "comparable", json_boolean(r->n_baseline > 0));
	{
		struct rs_buf v = RS_BUF_INIT;

		/* the verdict's buffer failing to grow is the document's failure */
		if (rs_render_verdict(&v, r))
			b->failed = 1;
		else
			rs_json_set(b, o, "verdict", json_string(v.ptr));
		rs_buf_release(&v);
	}
	check_json_notes(b, o, r);
	check_json_noise(b, o, r);
	for (i = 0; i < r->n_metrics && !b->failed; i++)
		rs_json_append(b, ms, check_metric_json(b, &r->metrics[i]));
	rs_json_set(b, o, "metrics", ms);
	for (i = 0; i < r->n_responsible && !b->failed; i++)
		rs_json_append(b, fs, func_json(b, &r->diff->funcs[r->responsible[i]]));
	rs_json_set(b, o, "responsible", fs);
	rs_json_set(b, o, "culprits", culprits_json(b, r->diff ? r->diff->culprits : NULL));
	if (r->diff)
		rs_json_set(b, o, "diff", diff_json(b, r->diff));
	return o;
}

static const char *verdict(const struct rs_check_metric *m, int accepted, int machine)
{
	if (m->regressed && m->gating && accepted)
		return "slower (accepted)";
	if (m->regressed && machine)
		return "slower (the machine)";
	if (m->regressed)
		return m->gating ? "REGRESSED" : "slower (not gating)";
	if (m->improved)
		return "faster";
	return "ok";
}

/* A metric's relative change in the check, as "+110%", or "?" when not judged. */
static int check_pct(struct rs_buf *out, const struct rs_check_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].name, name) && !isnan(r->metrics[i].rel))
			return rs_buf_printf(out, "%+.0f%%", r->metrics[i].rel * 100);
	return rs_buf_puts(out, "?");
}

/* "the machine was slower (wall +110%, CPU +4%, all functions x2.2)" */
static int render_machine(struct rs_buf *out, const struct rs_check_result *r)
{
	int err;

	err = rs_buf_puts(out, "the machine was slower (wall ");
	if (!err)
		err = check_pct(out, r, "duration");
	if (!err)
		err = rs_buf_puts(out, ", CPU ");
	if (!err)
		err = check_pct(out, r, "cpu_time");
	if (!err)
		err = rs_buf_printf(out, ", all functions x%.2g)", r->machine_factor);
	return err;
}

/* "Name (-1.2 s)" for where a faster run saved time, or a function beyond its noise. */
static int render_named_change(struct rs_buf *out, const struct rs_func_delta *f)
{
	int err;

	err = rs_buf_printf(out, "%s (", f->function);
	if (!err)
		err = render_change(out, "duration", f->head_total - f->base_total, NAN);
	if (!err)
		err = rs_buf_puts(out, ")");
	return err;
}

/*
 * The verdict's tail when nothing regressed: the machine, where a faster
 * run saved time, a function beyond its noise, or "no regression"; and
 * which metric decided when wall time was distorted.
 */
static int verdict_quiet(struct rs_buf *out, const struct rs_check_result *r)
{
	int err;

	if (r->machine_slower) {
		err = rs_buf_puts(out, ": ");
		if (!err)
			err = render_machine(out, r);
	} else if (r->n_saved) {
		err = rs_buf_puts(out, ": faster: ");
		if (!err)
			err = render_named_change(out, &r->diff->funcs[r->saved[0]]);
	} else if (r->function_warning) {
		err = rs_buf_puts(out, r->regressed ? ": REGRESSION of a function beyond its noise: "
					   : ": no regression; a function beyond its noise: ");
		for (size_t i = 0; !err && i < r->n_findings; i++)
			if (r->findings[i].head_share > r->findings[i].base_share) {
				err = render_named_change(out, &r->diff->funcs[r->findings[i].func]);
				break;
			}
	} else {
		err = rs_buf_puts(out, r->accepted_regression ? ": accepted"
				       : r->regressed ? ": regressed" : ": no regression");
	}
	return err;
}

int rs_render_verdict(struct rs_buf *out, const struct rs_check_result *r)
{
	const struct rs_check_metric *m = rs_check_headline(r);
	char s1[8];
	int err;

	if (!r->n_baseline)
		return rs_buf_puts(out, r->n_other_config ? "no comparable baseline (another configuration)"
							  : "no earlier run to compare with");
	if (!m || isnan(m->rel)) {
		err = rs_buf_printf(out, "vs %s", short_sha(r->baseline_commit, s1));
		if (err)
			return err;
	} else {
		err = rs_buf_printf(out, "%+.0f%% vs %s", m->rel * 100, short_sha(r->baseline_commit, s1));
		if (err)
			return err;
	}
	if (r->n_responsible && r->diff && r->diff->culprits && r->diff->culprits->n) {
		err = rs_buf_puts(out, ": ");
		if (!err)
			err = culprit_title(out, &r->diff->culprits->c[0], 0);
		if (err)
			return err;
	} else if (r->n_responsible) {
		const struct rs_func_delta *f = &r->diff->funcs[r->responsible[0]];

		err = rs_buf_printf(out, ": %s (", f->function);
		if (err)
			return err;
		if (f->change == RS_FUNC_NEW) {
			err = rs_buf_puts(out, "new, ");
			if (err)
				return err;
			err = rs_render_seconds(out, f->head_total);
			if (err)
				return err;
		} else {
			err = render_change(out, "duration", f->head_total - f->base_total, NAN);
			if (err)
				return err;
		}
		err = rs_buf_puts(out, ")");
		if (err)
			return err;
	} else {
		err = verdict_quiet(out, r);
		if (err)
			return err;
	}
	if (r->gating) {
		err = rs_buf_puts(out, ", judged on CPU time (wall time distorted)");
		if (err)
			return err;
	}
	if (r->accepted_regression) {
		err = rs_buf_puts(out, ", accepted");
		if (err)
			return err;
	}
	return 0;
}

/* The check's heading, its verdict line and what the head run says of itself. */
static int check_heading(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	struct rs_buf v = RS_BUF_INIT;
	char s1[8];
	int err;

	if (md)
		err = rs_buf_printf(out, "## %s Performance check: `%s`\n\n",
				    r->regressed ? "❌" : r->accepted_regression ? "⚠️" : "✅",
				    short_sha(r->head_commit, s1));
	else
		err = rs_buf_printf(out, "results check: %s: run %s (%s)\n",
				    r->regressed ? "REGRESSION"
				    : r->accepted_regression ? "accepted slowdown"
				    : r->n_baseline ? "no regression" : "no comparable baseline",
				    r->head_id, short_sha(r->head_commit, s1));
	if (err)
		return err;
	err = rs_render_verdict(&v, r);
	if (!err)
		err = put_text_between(out, md ? "**" : "verdict: ", v.ptr, md ? "**\n\n" : "\n", md);
	rs_buf_release(&v);
	if (err)
		return err;
	if (r->duplicate_of) {
		err = put_code_between(out, md ? "This run records the same session as run "
					       : "this run records the same session as run ",
				       r->duplicate_of, md ? " (same oid): not a new measurement.\n\n"
							   : " (same oid): not a new measurement\n", md);
		if (err)
			return err;
	}
	if (r->accepted)
		err = put_text_between(out, md ? "Slowdown accepted with the run: "
					       : "slowdown accepted with the run: ",
				       r->accepted, md ? "\n\n" : "\n", md);
	return err;
}

/* Why there is nothing to check. */
static int check_no_baseline(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	int err;

	if (r->n_other_config) {
		err = rs_buf_printf(out, md ? "No comparable baseline: the %zu earlier run%s on this machine ran another configuration ("
					    : "no comparable baseline: the %zu earlier run%s on this machine ran another configuration (",
				    r->n_other_config, r->n_other_config == 1 ? "" : "s");
		if (err)
			return err;
		return put_text_between(out, "", r->other_config,
					md ? "); nothing to check.\n" : "); nothing to check\n", md);
	}
	return rs_buf_printf(out, md ? "No earlier commit profiled on the same machine to compare with%s; nothing to check.\n"
				     : "no earlier commit profiled on the same machine to compare with%s; nothing to check\n",
			     r->n_other_machine ? " (runs from other machines are not compared)" : "");
}

/* The noise estimate and the history runs left out, on the baseline line. */
static int check_left_out(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	int err;

	if (r->n_noise_runs)
		err = rs_buf_printf(out, ", noise band from %zu repeated runs", r->n_noise_runs);
	else
		err = rs_buf_puts(out, ", no repeated runs to estimate noise");
	if (!err && r->n_other_machine)
		err = rs_buf_printf(out, "; %zu run%s from other machines left out",
				    r->n_other_machine, r->n_other_machine == 1 ? "" : "s");
	if (err)
		return err;
	if (r->n_other_config) {
		err = rs_buf_printf(out, "; %zu run%s of another configuration left out (",
				    r->n_other_config, r->n_other_config == 1 ? "" : "s");
		if (!err)
			err = put_text_between(out, "", r->other_config, ")", md);
		if (err)
			return err;
	}
	if (r->n_duplicates)
		err = rs_buf_printf(out, "; %zu repeated record%s of one session not counted",
				    r->n_duplicates, r->n_duplicates == 1 ? "" : "s");
	return err;
}

/* How the workload is handled, on the baseline line. */
static int check_workload(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	int err;

	if (!r->workload_key) {
		if (!r->same_workload)
			return 0;
		return put_code_between(out, "; workload ", r->same_workload,
					" on both sides, time compared as is", md);
	}
	err = put_code_between(out, "; time judged per unit of ", r->workload_key, " (", md);
	if (err)
		return err;
	err = rs_render_number(out, r->diff ? r->diff->base_workload : NAN);
	if (err)
		return err;
	err = rs_buf_puts(out, md ? " → " : " -> ");
	if (err)
		return err;
	err = rs_render_number(out, r->diff ? r->diff->head_workload : NAN);
	if (err)
		return err;
	return rs_buf_puts(out, ")");
}

/* The machine check of wall time, on the baseline line. */
static int check_wall(struct rs_buf *out, const struct rs_check_result *r)
{
	int err = 0;

	if (r->wall_distorted)
		err = rs_buf_printf(out, "; wall time distorted (wall/CPU %.2f here, %.2f in the baseline)%s",
				    r->wall_cpu_head, r->wall_cpu_base,
				    r->gating ? ": CPU time decides" : "");
	if (!err && r->n_wall_left_out)
		err = rs_buf_printf(out, "; %zu baseline run%s with a distorted wall time (wall/CPU far from %.2f) left out of the wall-time baseline",
				    r->n_wall_left_out, r->n_wall_left_out == 1 ? "" : "s",
				    r->wall_cpu_base);
	return err;
}

/* What the head was compared with, then the table's heading. */
static int check_baseline(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	char s2[8];
	int err;

	if (r->n_baseline_commits > 1)
		err = rs_buf_printf(out, md ? "Compared with the median of %zu runs of %zu commits (detail against `%s`), threshold %.1f%%"
					    : "baseline: median of %zu runs of %zu commits (detail against %s), threshold %.1f%%",
				    r->n_baseline, r->n_baseline_commits,
				    short_sha(r->baseline_commit, s2), r->threshold * 100);
	else
		err = rs_buf_printf(out, md ? "Compared with %zu run%s of `%s` (median), threshold %.1f%%"
					    : "baseline: %zu run%s of %s (median), threshold %.1f%%",
				    r->n_baseline, r->n_baseline == 1 ? "" : "s",
				    short_sha(r->baseline_commit, s2), r->threshold * 100);
	if (err)
		return err;
	err = check_wall(out, r);
	if (err)
		return err;
	err = check_left_out(out, r, md);
	if (err)
		return err;
	err = check_workload(out, r, md);
	if (err)
		return err;
	if (r->baseline_accepted) {
		err = put_text_between(out, md ? ".\nThe baseline run was accepted as the new baseline: "
					       : "\nthe baseline run was accepted as the new baseline: ",
				       r->baseline_accepted, "", md);
		if (err)
			return err;
	}
	err = rs_buf_puts(out, md ? ".\n\n| metric | baseline | head | change | noise band | verdict |\n|---|---:|---:|---:|---:|---|\n"
				  : "\n\n");
	if (err || md)
		return err;
	return rs_buf_printf(out, "  %-28s %-12s %-12s %-22s %-8s %s\n", "metric", "baseline",
			     "head", "change", "band", "verdict");
}

/* One row of the check's table. */
static int check_row(struct rs_buf *out, const struct rs_check_metric *m,
		     const struct rs_check_result *r, int md)
{
	struct rs_buf a = RS_BUF_INIT, b = RS_BUF_INIT, c = RS_BUF_INIT;
	char band[24];
	int err;

	err = rs_render_metric_value(&a, m->name, m->base);
	if (err)
		goto out;
	err = rs_render_metric_value(&b, m->name, m->head);
	if (err)
		goto out;
	err = render_change(&c, m->name, m->head - m->base, m->rel);
	if (err)
		goto out;
	if (md) {
		const char *strong = m->regressed && m->gating ? "**" : "";

		err = rs_buf_printf(out, "| %s", strong);
		if (!err)
			err = rs_escape_md_text(out, m->name);
		if (!err)
			err = rs_buf_printf(out, "%s | %s | %s | %s | ±%.1f%% | %s |\n", strong,
					    a.ptr, b.ptr, c.ptr, m->band * 100,
					    verdict(m, r->accepted_regression, r->machine_slower));
		goto out;
	}
	snprintf(band, sizeof(band), "±%.1f%%", m->band * 100);
	err = rs_buf_printf(out, "  %-28s %-12s %-12s %-22s %-9s %s\n", m->name,
			    a.ptr, b.ptr, c.ptr, band, verdict(m, r->accepted_regression, r->machine_slower));
out:
	rs_buf_release(&a);
	rs_buf_release(&b);
	rs_buf_release(&c);
	return err;
}

/* One function beyond its noise: "name (file:line): 12.2% -> 18.7% of the run (+740 ms, 11.3 standard errors)". */
static int finding_line(struct rs_buf *out, const struct rs_check_result *r,
			const struct rs_noise_finding *f, int md)
{
	int err;

	err = rs_buf_puts(out, md ? "- " : "  ");
	if (!err)
		err = func_label(out, &r->diff->funcs[f->func], md, 0);
	if (!err)
		err = rs_buf_printf(out, ": total time %.1f%% %s %.1f%% of the run (", f->base_share * 100,
				    md ? "→" : "->", f->head_share * 100);
	if (!err)
		err = render_change(out, "duration", f->delta, NAN);
	if (!err)
		err = rs_buf_printf(out, ", %.1f standard errors)\n", fabs(f->z));
	return err;
}

/* The machine, the functions beyond their noise, and where a faster run saved time. */
static int check_noise_details(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	int err = 0;

	if (r->machine_slower) {
		err = rs_buf_puts(out, md ? "\n**" : "\n");
		if (!err)
			err = render_machine(out, r);
		if (!err)
			err = rs_buf_puts(out, md ? "**: no function's share of the run moved beyond its sampling noise, so the code is not slower; this run's wall time is not a baseline for later runs.\n"
						  : ": no function's share of the run moved beyond its sampling noise, so the code is not slower\n");
	}
	if (!err && r->n_findings)
		err = rs_buf_puts(out, md ? "\n**Functions beyond their own noise** (share of the run's samples; sampling error and the window's spread):\n\n"
					  : "\nfunctions beyond their own noise (share of the run's samples; sampling error and the window's spread):\n");
	for (size_t i = 0; !err && i < r->n_findings; i++)
		err = finding_line(out, r, &r->findings[i], md);
	if (!err && r->n_saved)
		err = rs_buf_puts(out, md ? "\n**Where the time was saved** (total time fell most):\n\n"
					  : "\nwhere the time was saved (total time fell most):\n");
	for (size_t i = 0; !err && i < r->n_saved; i++)
		err = explain_line(out, &r->diff->funcs[r->saved[i]], md);
	return err;
}

/* The functions responsible and (Markdown) the full comparison, folded. */
static int check_details(struct rs_buf *out, const struct rs_check_result *r, int md)
{
	int err;

	if (r->n_responsible && r->diff && r->diff->culprits && r->diff->culprits->n) {
		err = culprit_section(out, r->diff->culprits, md);
		if (err)
			return err;
	}
	if (r->n_responsible) {
		err = rs_buf_puts(out, md ? "\n**Functions responsible** (total time grew most; the project's own code first):\n\n"
					  : "\nfunctions responsible (total time grew most; own code first):\n");
		if (err)
			return err;
		for (size_t i = 0; i < r->n_responsible; i++) {
			err = explain_line(out, &r->diff->funcs[r->responsible[i]], md);
			if (err)
				return err;
		}
	}
	err = check_noise_details(out, r, md);
	if (err)
		return err;
	if (!r->diff || !md)
		return 0;
	err = rs_buf_puts(out, "\n<details><summary>Full comparison with run <code>");
	if (!err)
		err = rs_escape_html_text(out, r->diff->base_id);
	if (!err)
		err = rs_buf_puts(out, "</code></summary>\n\n");
	if (err)
		return err;
	err = render_diff_body(out, r->diff, 1, 10);
	if (err)
		return err;
	return rs_buf_puts(out, "\n</details>\n");
}

int rs_render_check(struct rs_buf *out, const struct rs_check_result *r,
		    enum rs_format fmt)
{
	int md = fmt == RS_FORMAT_MARKDOWN;
	int err;

	if (fmt == RS_FORMAT_JSON) {
		struct rs_json_build b = RS_JSON_BUILD_INIT;

		return dump_json(out, &b, check_json(&b, r));
	}
	err = check_heading(out, r, md);
	if (err)
		return err;
	if (!r->n_baseline)
		return check_no_baseline(out, r, md);
	err = check_baseline(out, r, md);
	if (err)
		return err;
	for (size_t i = 0; i < r->n_metrics; i++) {
		err = check_row(out, &r->metrics[i], r, md);
		if (err)
			return err;
	}
	return check_details(out, r, md);
}

/* ---- trend ---- */

static json_t *series_json(struct rs_json_build *b, const struct rs_series *s, size_t n)
{
	json_t *o = json_object(), *v = json_array(), *c = json_array();
	size_t i;

	for (i = 0; i < n && !b->failed; i++)
		rs_json_append(b, v, num_or_null(s->v[i]));
	for (i = 0; i < s->n_changes && !b->failed; i++)
		rs_json_append(b, c, json_integer((json_int_t)s->changes[i]));
	rs_json_set(b, o, "name", json_string(s->name));
	if (s->function)
		rs_json_set(b, o, "function", json_string(s->function));
	rs_json_set(b, o, "values", v);
	rs_json_set(b, o, "change_points", c);
	return o;
}

/* The whole trend as one JSON document. */
static int trend_json(struct rs_buf *out, const struct rs_trend *t)
{
	struct rs_json_build b = RS_JSON_BUILD_INIT;
	json_t *o = json_object(), *runs = json_array(), *ms = json_array(), *fs = json_array();
	size_t i;

	for (i = 0; i < t->n && !b.failed; i++) {
		json_t *r = json_object();

		rs_json_set(&b, r, "id", json_string(t->ids[i]));
		rs_json_set(&b, r, "commit", json_string(t->commits[i]));
		rs_json_set(&b, r, "recorded_at", json_string(t->dates[i]));
		rs_json_set(&b, r, "path", json_string(t->paths[i]));
		rs_json_append(&b, runs, r);
	}
	for (i = 0; i < t->n_metrics && !b.failed; i++)
		rs_json_append(&b, ms, series_json(&b, &t->metrics[i], t->n));
	for (i = 0; i < t->n_funcs && !b.failed; i++)
		rs_json_append(&b, fs, series_json(&b, &t->funcs[i], t->n));
	rs_json_set(&b, o, "runs", runs);
	rs_json_set(&b, o, "workload", t->workload_key ? json_string(t->workload_key)
							   : json_null());
	rs_json_set(&b, o, "metrics", ms);
	rs_json_set(&b, o, "functions", fs);
	rs_json_set(&b, o, "function_measure", json_string(t->total ? "total time" : "own time"));
	rs_json_set(&b, o, "excluded_runs", json_integer((json_int_t)t->n_excluded));
	if (t->excluded_why[0])
		rs_json_set(&b, o, "excluded_config", json_string(t->excluded_why));
	return dump_json(out, &b, o);
}

/* One cell of the text table: `v` as the metric `metric`, or (NULL) as seconds. */
static int trend_cell(struct rs_buf *out, const char *metric, double v)
{
	struct rs_buf cell = RS_BUF_INIT;
	int err;

	if (metric)
		err = rs_render_metric_value(&cell, metric, v);
	else
		err = rs_render_seconds(&cell, v);
	if (!err)
		err = rs_buf_printf(out, " %14s", cell.ptr);
	rs_buf_release(&cell);
	return err;
}

/* The text line of run `i`: id, commit, the values, and a mark at a change point. */
static int trend_row(struct rs_buf *out, const struct rs_trend *t, size_t i)
{
	char s[8];
	int mark = 0, err;
	size_t j;

	for (j = 0; j < t->n_metrics; j++)
		for (size_t c = 0; c < t->metrics[j].n_changes; c++)
			if (t->metrics[j].changes[c] == i)
				mark = 1;
	err = rs_buf_printf(out, "%-34s %-8s", t->ids[i], short_sha(t->commits[i], s));
	for (j = 0; !err && j < t->n_metrics; j++)
		err = trend_cell(out, t->metrics[j].name, t->metrics[j].v[i]);
	for (j = 0; !err && j < t->n_funcs; j++)
		err = trend_cell(out, NULL, t->funcs[j].v[i]);
	if (!err)
		err = rs_buf_puts(out, mark ? "  <- change point\n" : "\n");
	return err;
}

int rs_render_trend(struct rs_buf *out, const struct rs_trend *t, enum rs_format fmt)
{
	size_t i, j;
	int err;

	if (fmt == RS_FORMAT_JSON)
		return trend_json(out, t);
	/* Text: one line per run, metric columns then function columns. */
	err = rs_buf_printf(out, "%-34s %-8s", "run", "commit");
	for (j = 0; !err && j < t->n_metrics; j++)
		err = rs_buf_printf(out, " %14.14s", t->metrics[j].name);
	for (j = 0; !err && j < t->n_funcs; j++)
		err = rs_buf_printf(out, " %14.14s", t->funcs[j].function);
	if (!err)
		err = rs_buf_putc(out, '\n');
	for (i = 0; !err && i < t->n; i++)
		err = trend_row(out, t, i);
	if (!err && t->n_funcs)
		err = rs_buf_printf(out, "function columns: %s in seconds\n",
				    t->total ? "total time (the function and what it calls)" : "own time");
	if (err || !t->n_excluded)
		return err;
	return rs_buf_printf(out, "%zu run%s shown as '-': another configuration than most runs%s%s%s, or a repeated record of one session\n",
			     t->n_excluded, t->n_excluded == 1 ? "" : "s",
			     t->excluded_why[0] ? " (" : "", t->excluded_why,
			     t->excluded_why[0] ? ")" : "");
}
