/*
 * The run page's timelines (analysis/html.h, rs_html_run_charts): over
 * the run's wall time, each phase's share of every slice (a stacked area:
 * a slower simulated month shows as a wider band), the memory and CPU of
 * the whole process tree that `results run` sampled, and each numeric
 * column of a logged-stats CSV (the model's own statistics per logging
 * tick: population size, queue lengths) as a small line chart.
 *
 * Every figure is plain SVG drawn here, no script: the page opens from
 * disk. The CSV texts come from the run's folder (the caller puts them in
 * run["chart_files"]); they are untrusted: lines, columns and points are
 * capped, cells that are not numbers are skipped, and every name reaches
 * the page through the one HTML escaper.
 */
#include "analysis/html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render.h"
#include "results/escape.h"
#include "util/array.h"

#define W 720.0          /* plot width, px */
#define H 150.0          /* plot height */
#define LEFT 56.0        /* room for the y labels */
#define BOTTOM 22.0      /* room for the x labels */
#define MAX_POINTS 600   /* a line is thinned to this many points */
#define MAX_COLUMNS 64   /* charts drawn per CSV file */
#define MAX_ROWS 200000  /* CSV rows read */
#define MAX_CELL 256     /* bytes of a header cell kept */

static const char *const palette[] = {
	"#0969da", "#bf8700", "#1a7f37", "#cf222e", "#8250df", "#0a3069", "#bc4c00",
	"#116329", "#a40e26", "#6e7781",
};

/* ---- axes and lines ------------------------------------------------------ */

struct frame {
	double x0, x1, y0, y1;  /* data ranges */
};

static double px(const struct frame *f, double x)
{
	return LEFT + (f->x1 > f->x0 ? (x - f->x0) / (f->x1 - f->x0) : 0) * W;
}

static double py(const struct frame *f, double y)
{
	return H - (f->y1 > f->y0 ? (y - f->y0) / (f->y1 - f->y0) : 0) * H;
}

/* How an axis reads its numbers. */
enum axis { AXIS_NUMBER, AXIS_SECONDS, AXIS_SHARE, AXIS_TICK };

/* An axis label: "1.5 s"/"3 min", "100%", "tick 12", else %g. */
static int label(struct rs_buf *out, double v, enum axis a)
{
	switch (a) {
	case AXIS_SECONDS:
		return v >= 120 ? rs_buf_printf(out, "%.3g min", v / 60) : rs_buf_printf(out, "%.3g s", v);
	case AXIS_SHARE:
		return rs_buf_printf(out, "%.0f%%", v * 100);
	case AXIS_TICK:
		return rs_buf_printf(out, "tick %.0f", v);
	case AXIS_NUMBER:
		break;
	}
	return rs_buf_printf(out, "%.4g", v);
}

/* <figure><svg>, the axes, the range labels; the caller draws and closes. */
static int open_chart(struct rs_buf *out, const char *caption, const char *cls,
		      const struct frame *f, enum axis xa, enum axis ya)
{
	int err = rs_buf_printf(out, "<figure class=\"chart %s\"><figcaption>", cls);

	if (!err)
		err = rs_escape_html_text(out, caption);
	if (!err)
		err = rs_buf_printf(out, "</figcaption><svg role=\"img\" width=\"%.0f\" height=\"%.0f\" "
				    "viewBox=\"0 0 %.0f %.0f\">", LEFT + W + 8, H + BOTTOM + 8,
				    LEFT + W + 8, H + BOTTOM + 8);
	if (!err)
		err = rs_buf_printf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				    "y2=\"%.1f\"/><line class=\"axis\" x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" "
				    "y2=\"%.1f\"/>", LEFT, H, LEFT + W, H, LEFT, LEFT, H);
	/* y: the top and the bottom of the range; x: start and end of the run */
	if (!err)
		err = rs_buf_printf(out, "<text x=\"%.1f\" y=\"10\" text-anchor=\"end\">", LEFT - 4);
	if (!err)
		err = label(out, f->y1, ya);
	if (!err)
		err = rs_buf_printf(out, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
				    LEFT - 4, H);
	if (!err)
		err = label(out, f->y0, ya);
	if (!err)
		err = rs_buf_printf(out, "</text><text x=\"%.1f\" y=\"%.1f\">", LEFT, H + 16);
	if (!err)
		err = label(out, f->x0, xa);
	if (!err)
		err = rs_buf_printf(out, "</text><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
				    LEFT + W, H + 16);
	if (!err)
		err = label(out, f->x1, xa);
	if (!err)
		err = rs_buf_puts(out, "</text>");
	return err;
}

static int close_chart(struct rs_buf *out)
{
	return rs_buf_puts(out, "</svg></figure>\n");
}

/* A polyline of (x[i], y[i]), thinned to MAX_POINTS. */
static int polyline(struct rs_buf *out, const struct frame *f, const double *x, const double *y,
		    size_t n, const char *colour)
{
	size_t step = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
	int err = rs_buf_printf(out, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
				"stroke-width=\"1.6\" points=\"", colour);

	for (size_t i = 0; !err && i < n; i += step)
		err = rs_buf_printf(out, "%.1f,%.1f ", px(f, x[i]), py(f, y[i]));
	if (!err && n && (n - 1) % step)
		err = rs_buf_printf(out, "%.1f,%.1f", px(f, x[n - 1]), py(f, y[n - 1]));
	if (!err)
		err = rs_buf_puts(out, "\"/>");
	return err;
}

static void range(const double *v, size_t n, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
	if (!(*lo <= *hi)) {
		*lo = 0;
		*hi = 1;
	}
	if (*hi == *lo)
		*hi = *lo + (*lo ? fabs(*lo) * 0.1 : 1);
}

/* ---- phases over the run --------------------------------------------------- */

static int legend(struct rs_buf *out, const struct rs_runrec_phases *p)
{
	int err = rs_buf_puts(out, "<p class=\"legend\">");

	for (size_t i = 0; !err && i < p->nnames; i++) {
		const struct rs_runrec_value *v = rs_runrec_map_get(&p->totals, p->names[i]);
		double t = v && v->kind != RS_RUNREC_STRING ? v->d : 0;

		err = rs_buf_printf(out, "<span class=\"key\"><span class=\"sw\" style=\"background:%s\">"
				    "</span>", palette[i % 9]);
		if (!err)
			err = rs_escape_html_text(out, p->names[i]);
		if (!err)
			err = rs_buf_printf(out, " %.3g s</span> ", t);
	}
	if (!err)
		err = rs_buf_printf(out, "<span class=\"key\"><span class=\"sw\" style=\"background:%s\">"
				    "</span>other %.3g s</span></p>\n", palette[9], p->other);
	return err;
}

/*
 * One band per phase (and "other"): for every slice, the band spans the
 * phase's share between the shares of the phases before it. Phases may
 * nest (a sample in two phases counts in both), so the shares are scaled
 * to the sum of the row when it passes the slice's time. A row of
 * `rows` is [t_start, one time per phase, other]: ncols + 1 values.
 */
static int phase_bands(struct rs_buf *out, const struct frame *f, const double *rows,
		       size_t nrows, size_t ncols, double slice)
{
	double *lower = calloc(nrows, sizeof(double)), *upper = calloc(nrows, sizeof(double));
	int err = !lower || !upper ? rs_error_set(RS_EGENERIC, "out of memory") : 0;

	for (size_t c = 0; !err && c < ncols; c++) {
		err = rs_buf_printf(out, "<polygon class=\"band\" fill=\"%s\" "
				    "points=\"", c + 1 == ncols ? palette[9] : palette[c % 9]);
		for (size_t r = 0; !err && r < nrows; r++) {
			const double *row = &rows[r * (ncols + 1)];
			double sum = 0, v = row[c + 1];

			for (size_t k = 0; k < ncols; k++)
				sum += row[k + 1];
			upper[r] = lower[r] + (sum > 0 ? v / sum : 0);
		}
		/* the upper edge left to right, then the lower one back */
		for (size_t r = 0; !err && r < nrows; r++) {
			double t = rows[r * (ncols + 1)];

			err = rs_buf_printf(out, "%.1f,%.1f %.1f,%.1f ", px(f, t), py(f, upper[r]),
					    px(f, t + slice), py(f, upper[r]));
		}
		for (size_t r = nrows; !err && r-- > 0;) {
			double t = rows[r * (ncols + 1)];

			err = rs_buf_printf(out, "%.1f,%.1f %.1f,%.1f ", px(f, t + slice), py(f, lower[r]),
					    px(f, t), py(f, lower[r]));
		}
		if (!err)
			err = rs_buf_puts(out, "\"/>");
		memcpy(lower, upper, nrows * sizeof(double));
	}
	free(lower);
	free(upper);
	return err;
}

static int phases_chart(struct rs_buf *out, const rs_runrec *rec)
{
	const struct rs_runrec_phases *p = rec && rec->has_phases ? &rec->phases : NULL;
	size_t nrows = p ? p->nrows : 0, ncols = p ? p->nnames + 1 : 0;
	double slice = p ? p->slice : 0;
	struct frame f = { 0, 0, 0, 1 };
	const char *source = p ? p->source : NULL;
	int err;

	if (!nrows || !(slice > 0))
		return 0;
	f.x1 = p->rows[(nrows - 1) * (ncols + 1)] + slice;
	err = rs_buf_puts(out, "<h2>Phases over the run</h2>\n<p class=\"muted\">");
	if (!err && source && !strcmp(source, "config"))
		err = rs_buf_puts(out, "Each phase's share of every slice of the run's time, as named in "
				  "<code>.results.json</code>.");
	else if (!err)
		err = rs_buf_puts(out, "Each top-level frame's share of every slice of the run's time "
				  "(no <code>phases</code> in <code>.results.json</code>: the frames "
				  "below the entry point serve).");
	if (!err)
		err = rs_buf_printf(out, " Slices of %.3g s.</p>\n", slice);
	if (!err)
		err = legend(out, p);
	if (!err)
		err = open_chart(out, "share of the time", "phases", &f, AXIS_SECONDS, AXIS_SHARE);
	if (!err)
		err = phase_bands(out, &f, p->rows, nrows, ncols, slice);
	if (!err)
		err = close_chart(out);
	return err;
}

/* ---- CSV files: the process tree's timeline, logged stats ------------------ */

/* One CSV file parsed: the header and each column's numbers (NAN where none). */
struct csv {
	char *names[MAX_COLUMNS];
	size_t ncols;
	double *cols[MAX_COLUMNS];
	size_t nrows, alloc;
	int numeric[MAX_COLUMNS];   /* every non-empty cell is a number */
	int any[MAX_COLUMNS];       /* some cell is */
};

static void csv_release(struct csv *c)
{
	for (size_t i = 0; i < c->ncols; i++) {
		free(c->names[i]);
		free(c->cols[i]);
	}
}

/* The next cell of `line` (comma-separated, "quoted" cells with "" inside). */
static const char *next_cell(const char *p, const char *end, char *cell, size_t cap)
{
	size_t k = 0;
	int quoted = p < end && *p == '"';

	if (quoted)
		p++;
	while (p < end) {
		if (quoted && *p == '"' && p + 1 < end && p[1] == '"') {
			p++;
		} else if (quoted && *p == '"') {
			quoted = 0;
			p++;
			continue;
		} else if (!quoted && *p == ',') {
			break;
		}
		if (k + 1 < cap)
			cell[k++] = *p;
		p++;
	}
	cell[k] = '\0';
	return p < end ? p + 1 : NULL;
}

static int csv_header(struct csv *c, const char *line, const char *end)
{
	char cell[MAX_CELL];
	const char *p = line;

	while (p && c->ncols < MAX_COLUMNS) {
		p = next_cell(p, end, cell, sizeof(cell));
		c->names[c->ncols] = strdup(cell);
		if (!c->names[c->ncols])
			return rs_error_set(RS_EGENERIC, "out of memory");
		c->numeric[c->ncols] = 1;
		c->ncols++;
	}
	return 0;
}

static int csv_row(struct csv *c, const char *line, const char *end)
{
	char cell[MAX_CELL];
	const char *p = line;

	if (c->nrows == c->alloc) {
		size_t a = c->alloc ? c->alloc * 2 : 256;

		for (size_t i = 0; i < c->ncols; i++) {
			size_t old = c->alloc;

			if (rs_array_grow((void **)&c->cols[i], &old, a, sizeof(double), 256))
				return rs_error_set(RS_EGENERIC, "out of memory");
		}
		c->alloc = a;
	}
	for (size_t i = 0; i < c->ncols; i++) {
		char *e;
		double v = NAN;

		if (p)
			p = next_cell(p, end, cell, sizeof(cell));
		else
			cell[0] = '\0';
		if (cell[0]) {
			v = strtod(cell, &e);
			if (*e || !isfinite(v)) {
				v = NAN;
				c->numeric[i] = 0;
			} else {
				c->any[i] = 1;
			}
		}
		c->cols[i][c->nrows] = v;
	}
	c->nrows++;
	return 0;
}

static int csv_parse(struct csv *c, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int err = 0, header = 1;

	memset(c, 0, sizeof(*c));
	while (!err && p < end && c->nrows < MAX_ROWS) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;

		if (le > p && le[-1] == '\r')
			le--;
		if (header)
			err = csv_header(c, p, le);
		else if (le > p)
			err = csv_row(c, p, le);
		header = 0;
		p = nl ? nl + 1 : end;
	}
	return err;
}

/* One line chart of column `y` against `x` (NULL: the row number). */
static int column_chart(struct rs_buf *out, const struct csv *c, size_t y, const double *x,
			const char *caption, const char *cls)
{
	double *xs, *ys;
	struct frame f;
	size_t n = 0;
	int err = 0;

	if (c->nrows < 2)
		return 0; /* no line to draw */
	xs = malloc(c->nrows * sizeof(double));
	ys = malloc(c->nrows * sizeof(double));
	if (!xs || !ys) {
		free(xs);
		free(ys);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (size_t r = 0; r < c->nrows; r++)
		if (!isnan(c->cols[y][r]) && (!x || !isnan(x[r]))) {
			xs[n] = x ? x[r] : (double)r;
			ys[n++] = c->cols[y][r];
		}
	if (n >= 2) {
		range(xs, n, &f.x0, &f.x1);
		range(ys, n, &f.y0, &f.y1);
		if (f.y0 > 0 && f.y0 < f.y1 * 0.5)
			f.y0 = 0; /* from zero when that costs little room */
		err = open_chart(out, caption, cls, &f, x ? AXIS_SECONDS : AXIS_TICK, AXIS_NUMBER);
		if (!err)
			err = polyline(out, &f, xs, ys, n, palette[0]);
		if (!err)
			err = close_chart(out);
	}
	free(xs);
	free(ys);
	return err;
}

static ssize_t column_of(const struct csv *c, const char *name)
{
	for (size_t i = 0; i < c->ncols; i++)
		if (!strcmp(c->names[i], name))
			return (ssize_t)i;
	return -1;
}

/* results-run.timeline.csv: memory and CPU cores busy over wall time. */
static int process_charts(struct rs_buf *out, const struct csv *c)
{
	ssize_t t = column_of(c, "t_s"), rss = column_of(c, "rss_mb"), cpu = column_of(c, "cpu_s");
	int err;

	if (t < 0 || rss < 0)
		return 0;
	err = rs_buf_puts(out, "<h2>The process tree over the run</h2>\n<p class=\"muted\">Sampled "
			  "from outside by <code>results run</code>: the summed memory (RSS) of "
			  "every process of the command, and the CPU cores it kept busy.</p>\n");
	if (!err)
		err = column_chart(out, c, (size_t)rss, c->cols[t], "memory (RSS, MB)", "rss");
	if (!err && cpu >= 0 && c->nrows >= 3) {
		/* cores busy: the CPU time's slope between samples */
		struct csv d = *c;
		double *busy = calloc(c->nrows, sizeof(double));

		if (!busy)
			return rs_error_set(RS_EGENERIC, "out of memory");
		busy[0] = NAN;
		for (size_t r = 1; r < c->nrows; r++) {
			double dt = c->cols[t][r] - c->cols[t][r - 1];

			busy[r] = dt > 0 ? (c->cols[cpu][r] - c->cols[cpu][r - 1]) / dt : NAN;
		}
		d.cols[cpu] = busy;
		err = column_chart(out, &d, (size_t)cpu, c->cols[t], "CPU cores busy", "cores");
		free(busy);
	}
	return err;
}

/* A logged-stats CSV: one chart per numeric column, per logging tick. */
static int logged_charts(struct rs_buf *out, const struct csv *c, const char *file)
{
	int err = rs_buf_puts(out, "<h2>Logged statistics: <code>");
	size_t drawn = 0;

	if (!err)
		err = rs_escape_html_text(out, file);
	if (!err)
		err = rs_buf_printf(out, "</code></h2>\n<p class=\"muted\">The model's own statistics, "
				    "one point per logging tick (%zu ticks).</p>\n", c->nrows);
	for (size_t i = 0; !err && i < c->ncols; i++) {
		if (!c->numeric[i] || !c->any[i])
			continue;
		err = column_chart(out, c, i, NULL, c->names[i], "logged");
		drawn++;
	}
	if (!err && !drawn)
		err = rs_buf_puts(out, "<p class=\"muted\">No numeric column to draw.</p>\n");
	return err;
}

static int file_charts(struct rs_buf *out, const json_t *file)
{
	const char *name = json_string_value(json_object_get(file, "name"));
	const char *role = json_string_value(json_object_get(file, "role"));
	const char *text = json_string_value(json_object_get(file, "text"));
	struct csv c;
	int err;

	if (!name || !role || !text)
		return 0;
	err = csv_parse(&c, text, json_string_length(json_object_get(file, "text")));
	if (!err && !strcmp(role, "timeline"))
		err = process_charts(out, &c);
	else if (!err && !strcmp(role, "logged-stats"))
		err = logged_charts(out, &c, name);
	csv_release(&c);
	return err;
}

int rs_html_run_charts(struct rs_buf *out, const rs_runrec *rec, const json_t *run)
{
	const json_t *files = json_object_get(run, "chart_files");
	size_t i;
	json_t *f;
	/* its own style: the site's pages and `results open`'s page both hold these */
	int err = rs_buf_puts(out, "<style>.legend .key{margin-right:14px;white-space:nowrap}"
			      ".legend .sw{display:inline-block;width:11px;height:11px;"
			      "margin-right:4px;vertical-align:-1px}"
			      "figure.chart{margin:12px 0 20px 0}figcaption{font-weight:600;margin-bottom:4px}"
			      "svg .axis{stroke:#8c959f;stroke-width:1}"
			      "svg text{font-size:11px;fill:#57606a}</style>\n");

	if (!err)
		err = phases_chart(out, rec);
	json_array_foreach(files, i, f) {
		if (err)
			break;
		err = file_charts(out, f);
	}
	return err;
}
