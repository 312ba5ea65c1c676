#include "analysis/export.h"
#include "session/session.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/json.h"
#include "util/array.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

struct exporter {
	FILE *out;
	enum rs_export_format fmt;
	struct rs_buf line;
	double *weights;        /* speedscope */
	size_t n, alloc;
	double total;
	int io_error;
};

static int frame_name(struct rs_buf *b, const struct rs_session_function *f, int collapsed)
{
	const char *file = strrchr(f->file, '/') ? strrchr(f->file, '/') + 1 : f->file;
	size_t start = b->len, i;
	int err;

	/* a thread's root frame: its "line" is the thread id, new every run,
	 * so that stacks of two runs differ in every line; left out */
	if (!strcmp(f->file, "<thread>"))
		err = rs_buf_printf(b, "%s (%s)", f->function, f->file);
	else if (f->class_name && *f->class_name)
		err = rs_buf_printf(b, "%s.%s (%s:%lld)", f->class_name, f->function, file,
				    (long long)f->line);
	else
		err = rs_buf_printf(b, "%s (%s:%lld)", f->function, file, (long long)f->line);
	if (err || !collapsed)
		return err;
	/* ';' separates frames and ' ' before the weight ends the stack:
	 * only ';' is ambiguous inside a name. Newlines would break lines. */
	for (i = start; i < b->len; i++)
		if (b->ptr[i] == ';' || b->ptr[i] == '\n' || b->ptr[i] == '\r')
			b->ptr[i] = ':';
	return 0;
}

static int on_sample(void *ctx, const struct rs_session_parser *p,
		     const uint32_t *frames, size_t depth, double time)
{
	struct exporter *x = ctx;
	size_t i;
	int err = 0;

	rs_buf_clear(&x->line);
	if (x->fmt == RS_EXPORT_COLLAPSED) {
		long long us = llround(time * 1e6);

		if (!depth || us <= 0)
			return 0;
		for (i = 0; !err && i < depth; i++) {
			const struct rs_session_frame *fr = rs_session_parser_frame(p, frames[i]);

			if (i)
				err = rs_buf_putc(&x->line, ';');
			if (!err)
				err = frame_name(&x->line, rs_session_parser_function(p, fr->function_id), 1);
		}
		if (!err)
			err = rs_buf_printf(&x->line, " %lld\n", us);
	} else {
		err = rs_array_grow(&x->weights, &x->alloc, x->n + 1, sizeof(*x->weights), 4096);
		if (err)
			return err;
		x->weights[x->n] = time;
		x->total += time;
		err = rs_buf_puts(&x->line, x->n ? ",[" : "[");
		for (i = 0; !err && i < depth; i++)
			err = rs_buf_printf(&x->line, i ? ",%u" : "%u",
					    rs_session_parser_frame(p, frames[i])->function_id);
		if (!err)
			err = rs_buf_putc(&x->line, ']');
		x->n++;
	}
	if (err)
		return err;
	if (fwrite(x->line.ptr, 1, x->line.len, x->out) != x->line.len) {
		x->io_error = errno;
		return rs_error_errno(RS_EGENERIC, "cannot write the export");
	}
	return 0;
}

static int json_str(FILE *out, const char *s)
{
	struct rs_buf d = RS_BUF_INIT;
	json_t *j = json_string(s);
	int err;

	if (!j) /* not UTF-8, or out of memory */
		return rs_error_set(RS_EGENERIC, "cannot encode '%s' as JSON", s);
	err = rs_json_dump(&d, j, JSON_ENCODE_ANY);
	if (err)
		goto out;
	if (fwrite(d.ptr, 1, d.len, out) != d.len)
		err = rs_error_errno(RS_EGENERIC, "cannot write the export");
out:
	rs_buf_release(&d);
	json_decref(j);
	return err;
}

/* Speedscope's tail: weights, then the shared frame table. */
static int speedscope_tail(struct exporter *x, const struct rs_session_parser *p)
{
	struct rs_buf name = RS_BUF_INIT;
	uint32_t i, nf = rs_session_parser_function_count(p);
	size_t k;
	int err = 0;

	fprintf(x->out, "],\"weights\":[");
	for (k = 0; k < x->n; k++)
		fprintf(x->out, k ? ",%.9g" : "%.9g", x->weights[k]);
	fprintf(x->out, "],\"startValue\":0,\"endValue\":%.9g}],\"shared\":{\"frames\":[", x->total);
	for (i = 0; !err && i < nf; i++) {
		const struct rs_session_function *f = rs_session_parser_function(p, i);

		rs_buf_clear(&name);
		err = frame_name(&name, f, 0);
		if (!err) {
			fputs(i ? ",{\"name\":" : "{\"name\":", x->out);
			err = json_str(x->out, name.ptr);
		}
		if (!err) {
			fputs(",\"file\":", x->out);
			err = json_str(x->out, f->file);
		}
		if (!err && strcmp(f->file, "<thread>"))
			fprintf(x->out, ",\"line\":%lld}", (long long)f->line);
		else if (!err)
			fputc('}', x->out);
	}
	rs_buf_release(&name);
	if (!err)
		fputs("]}}\n", x->out);
	return err;
}

int rs_export_format_parse(enum rs_export_format *out, const char *name)
{
	if (!strcmp(name, "collapsed"))
		*out = RS_EXPORT_COLLAPSED;
	else if (!strcmp(name, "speedscope"))
		*out = RS_EXPORT_SPEEDSCOPE;
	else
		return rs_error_set(RS_EUSAGE,
				    "unknown export format '%s' (use speedscope or collapsed)", name);
	return 0;
}

/* Speedscope's file up to its samples, the profile named `name`. */
static int speedscope_head(FILE *out, const char *name)
{
	int err;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"results\",\"name\":", out);
	err = json_str(out, name);
	if (err)
		return err;
	fputs(",\"activeProfileIndex\":0,\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
	err = json_str(out, name);
	if (err)
		return err;
	fputs(",\"unit\":\"seconds\",\"samples\":[", out);
	return 0;
}

/* Feed the whole file `in` (`path`, for the message) to the parser, 1 MiB at a time. */
static int feed_file(struct rs_session_parser *p, FILE *in, char *chunk, const char *path)
{
	size_t got;
	int err;

	for (;;) {
		got = fread(chunk, 1, 1 << 20, in);
		if (!got)
			break;
		err = rs_session_parser_feed(p, chunk, got);
		if (err)
			return err;
	}
	if (ferror(in))
		return rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
	return 0;
}

int rs_export_session(FILE *out, const char *session_path,
		      enum rs_export_format fmt, const char *name)
{
	struct exporter x;
	struct rs_session_callbacks cb = { 0 };
	struct rs_session_parser *p = NULL;
	char *chunk = NULL;
	FILE *in = NULL;
	int err = 0;

	memset(&x, 0, sizeof(x));
	x.out = out;
	x.fmt = fmt;
	rs_buf_init(&x.line, 0);
	cb.ctx = &x;
	cb.sample = on_sample;
	in = fopen(session_path, "rb");
	if (!in)
		return rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				      "cannot open '%s'", session_path);
	chunk = malloc(1 << 20);
	if (!chunk) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = rs_session_parser_new(&p, &cb);
	if (err)
		goto out;
	if (fmt == RS_EXPORT_SPEEDSCOPE) {
		err = speedscope_head(out, name ? name : session_path);
		if (err)
			goto out;
	}
	err = feed_file(p, in, chunk, session_path);
	if (err)
		goto out;
	err = rs_session_parser_finish(p);
	if (!err && fmt == RS_EXPORT_SPEEDSCOPE)
		err = speedscope_tail(&x, p);
	if (!err && (fflush(out) || ferror(out)))
		err = rs_error_errno(RS_EGENERIC, "cannot write the export");
out:
	if (err && err != RS_EGENERIC && rs_error_last() == err)
		rs_error_wrap(err, "%s", session_path);
	rs_session_parser_free(p);
	free(chunk);
	free(x.weights);
	rs_buf_release(&x.line);
	fclose(in);
	return err;
}
