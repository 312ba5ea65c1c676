/*
 * Reading the stats files of a run folder (see stats.h for the formats).
 *
 * JSON files are small by nature (a few counters) and are read whole,
 * under a cap. The logged-stats CSV grows with the length of the run (one
 * row per logging tick), so it is streamed: per column we keep only the
 * last cell, the maximum, the sum and the count of numeric cells.
 */
#include "runs/stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

static int set_value(json_t *out, const char *name, json_t *v, const char *what)
{
	if (strlen(name) > RS_STATS_MAX_NAME) {
		json_decref(v);
		return rs_error_set(RS_EUSAGE, "%s: name '%.40s...' is longer than %d bytes",
				    what, name, RS_STATS_MAX_NAME);
	}
	if (!json_object_get(out, name) && json_object_size(out) >= RS_STATS_MAX_KEYS) {
		json_decref(v);
		return rs_error_set(RS_EUSAGE, "%s: more than %d values", what,
				    RS_STATS_MAX_KEYS);
	}
	if (json_object_set_new(out, name, v) < 0)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

static int flatten(json_t *out, struct rs_buf *name, json_t *v, int depth,
		   const char *what)
{
	size_t keep = name->len;
	int err = 0;

	if (depth > RS_STATS_MAX_DEPTH)
		return rs_error_set(RS_EUSAGE, "%s: nested deeper than %d levels", what,
				    RS_STATS_MAX_DEPTH);
	if (json_is_object(v)) {
		const char *k;
		json_t *c;

		json_object_foreach(v, k, c) {
			name->len = keep;
			name->ptr[keep] = '\0';
			if (keep) {
				err = rs_buf_putc(name, '.');
				if (err)
					break;
			}
			err = rs_buf_puts(name, k);
			if (err)
				break;
			err = flatten(out, name, c, depth + 1, what);
			if (err)
				break;
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *c;

		json_array_foreach(v, i, c) {
			name->len = keep;
			name->ptr[keep] = '\0';
			err = rs_buf_printf(name, "%s%zu", keep ? "." : "", i);
			if (err)
				break;
			err = flatten(out, name, c, depth + 1, what);
			if (err)
				break;
		}
	} else if (json_is_null(v)) {
		/* dropped: no value to compare */
	} else if (!keep) {
		err = rs_error_set(RS_ECORRUPT, "%s: not a JSON object", what);
	} else if (json_is_boolean(v)) {
		err = set_value(out, name->ptr, json_integer(json_is_true(v)), what);
	} else {
		err = set_value(out, name->ptr, json_incref(v), what);
	}
	if (name->ptr) {
		name->len = keep;
		name->ptr[keep] = '\0';
	}
	return err;
}

int rs_stats_flatten_json(json_t *out, const char *prefix, const char *text,
			  size_t len, const char *what)
{
	struct rs_buf name = RS_BUF_INIT;
	json_error_t jerr;
	json_t *root;
	int err;

	if (len > RS_STATS_MAX_JSON)
		return rs_error_set(RS_EUSAGE, "%s is larger than %u bytes", what,
				    RS_STATS_MAX_JSON);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES,
			  &jerr);
	if (!root)
		return rs_error_set(RS_ECORRUPT, "%s: not valid JSON (line %d: %s)", what,
				    jerr.line, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return rs_error_set(RS_ECORRUPT, "%s: not a JSON object", what);
	}
	rs_buf_init(&name, 64 * 1024);
	err = rs_buf_puts(&name, prefix ? prefix : "");
	if (!err)
		err = flatten(out, &name, root, 0, what);
	rs_buf_release(&name);
	json_decref(root);
	return err;
}

int rs_stats_read_json_file(json_t *out, const char *prefix, const char *path)
{
	struct rs_buf text = RS_BUF_INIT;
	int err;

	err = rs_fs_read_file(&text, path, RS_STATS_MAX_JSON);
	if (err) {
		rs_buf_release(&text);
		return rs_error_wrap(err, "cannot read '%s'", path);
	}
	err = rs_stats_flatten_json(out, prefix, text.ptr ? text.ptr : "", text.len, path);
	rs_buf_release(&text);
	return err;
}

struct csv_column {
	char *name;
	char *last;       /* last non-empty cell */
	double max, sum;
	unsigned long long n; /* numeric cells */
	int non_numeric;  /* some cell was not a number */
};

/*
 * Split one CSV record held in `line` (no newline) into cells, in place.
 * Quotes: a field that starts with '"' ends at the next lone '"'; '""'
 * inside it is one quote. Returns the number of cells, or -1 for an
 * unterminated quote. At most `max` cells are returned.
 */
static int csv_split(char *line, char **cells, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *w;

		if (n >= max)
			return n;
		if (*p == '"') {
			cells[n++] = w = ++p;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			*w = '\0';
			/* skip anything up to the separator */
			while (*p && *p != ',')
				p++;
		} else {
			cells[n++] = p;
			while (*p && *p != ',')
				p++;
		}
		if (!*p)
			return n;
		*p++ = '\0';
	}
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int parse_number(const char *s, double *out)
{
	char *end;
	double d;

	if (!*s)
		return 0;
	errno = 0;
	d = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(d))
		return 0;
	*out = d;
	return 1;
}

/*
 * Read one line of `f` into `line` (without the newline); 0 at EOF with
 * nothing read, 1 for a line, or a negative error for a line past the cap.
 * A quoted newline inside a cell is not supported: logged stats are
 * numbers, and the cap keeps a malformed file from costing memory.
 */
static int read_line(FILE *f, struct rs_buf *line, const char *path)
{
	int c, any = 0;

	rs_buf_clear(line);
	for (;;) {
		c = getc(f);
		if (c == EOF)
			break;
		any = 1;
		if (c == '\n')
			break;
		if (rs_buf_putc(line, (char)c) < 0)
			return rs_error_set(RS_EUSAGE, "%s: a line is longer than %u bytes",
					    path, RS_STATS_MAX_CSV_LINE);
	}
	if (ferror(f))
		return rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
	return any;
}

int rs_stats_read_csv_file(json_t *out, const char *prefix, const char *path)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				      "cannot open '%s'", path);
	err = rs_stats_read_csv_stream(out, prefix, f, path);
	fclose(f);
	return err;
}

/* One logged-stats CSV being read (rs_stats_read_csv_stream). */
struct csv_reader {
	FILE *f;
	const char *path;
	struct rs_buf line;        /* capped at RS_STATS_MAX_CSV_LINE */
	char **cells;              /* RS_STATS_MAX_CSV_COLUMNS, into `line` */
	struct csv_column *cols;   /* RS_STATS_MAX_CSV_COLUMNS */
	int ncols;
	unsigned long long lineno;
};

/* The header row, the first non-empty line: the columns' names. */
static int csv_read_header(struct csv_reader *rd)
{
	int r;

	do {
		r = read_line(rd->f, &rd->line, rd->path);
		rd->lineno++;
	} while (r == 1 && !*trim(rd->line.ptr ? rd->line.ptr : ""));
	if (r < 0)
		return r;
	if (r == 0)
		return rs_error_set(RS_ECORRUPT, "%s: no header row", rd->path);
	rd->ncols = csv_split(rd->line.ptr, rd->cells, RS_STATS_MAX_CSV_COLUMNS);
	if (rd->ncols < 0) {
		rd->ncols = 0;
		return rs_error_set(RS_ECORRUPT, "%s:%llu: unterminated quote", rd->path,
				    rd->lineno);
	}
	for (int i = 0; i < rd->ncols; i++) {
		const char *h = trim(rd->cells[i]);
		char fallback[32];

		if (!*h) {
			snprintf(fallback, sizeof(fallback), "column%d", i + 1);
			h = fallback;
		}
		rd->cols[i].name = strdup(h);
		rd->cols[i].max = -INFINITY;
		if (!rd->cols[i].name)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

/* One cell of column `c`: its last value, and its figures while it is numeric. */
static int csv_take_cell(struct csv_column *c, const char *cell)
{
	double d;

	free(c->last);
	c->last = strdup(cell);
	if (!c->last)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (parse_number(cell, &d)) {
		if (d > c->max)
			c->max = d;
		c->sum += d;
		c->n++;
	} else {
		c->non_numeric = 1;
	}
	return 0;
}

/* Every row after the header, into the columns. */
static int csv_read_rows(struct csv_reader *rd)
{
	int r, err;

	for (;;) {
		int n;

		r = read_line(rd->f, &rd->line, rd->path);
		if (r != 1)
			break;
		rd->lineno++;
		if (!*trim(rd->line.ptr ? rd->line.ptr : ""))
			continue;
		n = csv_split(rd->line.ptr, rd->cells, rd->ncols);
		if (n < 0)
			return rs_error_set(RS_ECORRUPT, "%s:%llu: unterminated quote", rd->path,
					    rd->lineno);
		for (int i = 0; i < n; i++) {
			char *cell = trim(rd->cells[i]);

			if (!*cell)
				continue;
			err = csv_take_cell(&rd->cols[i], cell);
			if (err)
				return err;
		}
	}
	return r < 0 ? r : 0;
}

/* `<name>.<suffix>` = `v` into `out` (`v` taken over); `name` back to its length after. */
static int put_figure(json_t *out, struct rs_buf *name, const char *suffix, json_t *v,
		      const char *path)
{
	size_t base = name->len;
	int err = rs_buf_puts(name, suffix);

	if (err) {
		json_decref(v);
		return err;
	}
	err = set_value(out, name->ptr, v, path);
	name->len = base;
	name->ptr[base] = '\0';
	return err;
}

/* Column `c`'s figures: last, and max and mean when every value was a number. */
static int csv_put_column(json_t *out, const char *prefix, const struct csv_column *c,
			  struct rs_buf *name, const char *path)
{
	double d;
	int err;

	rs_buf_clear(name);
	err = rs_buf_printf(name, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", c->name);
	if (err)
		return err;
	if (!c->non_numeric && parse_number(c->last, &d))
		err = put_figure(out, name, ".last", json_real(d), path);
	else
		err = put_figure(out, name, ".last", json_string(c->last), path);
	if (err || c->non_numeric || c->n == 0)
		return err;
	err = put_figure(out, name, ".max", json_real(c->max), path);
	if (err)
		return err;
	return put_figure(out, name, ".mean", json_real(c->sum / (double)c->n), path);
}

int rs_stats_read_csv_stream(json_t *out, const char *prefix, FILE *f, const char *path)
{
	struct csv_reader rd = { f, path, RS_BUF_INIT, NULL, NULL, 0, 0 };
	struct rs_buf name = RS_BUF_INIT;
	int err;

	rs_buf_init(&rd.line, RS_STATS_MAX_CSV_LINE);
	rd.cells = calloc(RS_STATS_MAX_CSV_COLUMNS, sizeof(*rd.cells));
	rd.cols = calloc(RS_STATS_MAX_CSV_COLUMNS, sizeof(*rd.cols));
	if (!rd.cells || !rd.cols) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = csv_read_header(&rd);
	if (err)
		goto out;
	err = csv_read_rows(&rd);
	if (err)
		goto out;
	for (int i = 0; i < rd.ncols && !err; i++)
		if (rd.cols[i].last)
			err = csv_put_column(out, prefix, &rd.cols[i], &name, path);
out:
	if (rd.cols)
		for (int i = 0; i < rd.ncols; i++) {
			free(rd.cols[i].name);
			free(rd.cols[i].last);
		}
	free(rd.cols);
	free(rd.cells);
	rs_buf_release(&rd.line);
	rs_buf_release(&name);
	return err;
}

int rs_stats_numbers(json_t *metrics, const json_t *stats)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)stats, k, v) {
		if (json_is_number(v) && json_object_set(metrics, k, v) < 0)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static const struct {
	const char *suffix, *role;
} roles[] = {
	{ ".pyisession", "session" },
	{ ".stats.json", "stats" },
	{ ".args.json", "args" },
	{ ".logged-stats.csv", "logged-stats" },
	{ ".html", "html" },
	{ ".htm", "html" },
};

const char *rs_stats_file_role(const char *name)
{
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (ends_with(name, roles[i].suffix))
			return roles[i].role;
	return "other";
}

int rs_stats_file_stem(char *out, size_t outsz, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (ends_with(name, roles[i].suffix) && len > strlen(roles[i].suffix)) {
			len -= strlen(roles[i].suffix);
			break;
		}
	if (len + 1 > outsz)
		return rs_error_set(RS_EUSAGE, "file name '%s' is too long", name);
	memcpy(out, name, len);
	out[len] = '\0';
	return 0;
}
