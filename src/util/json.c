#include "results/json.h"

#include <assert.h>
#include <jansson.h>

/*
 * The text is written through json_dump_callback straight into the
 * buffer, and the first failed append is kept: jansson goes on after a
 * failed write of a key (akheron/jansson#655), so its own result cannot
 * be trusted to say that the text is whole. Once an append failed, every
 * later one fails too (a sticky error, docs/hacking.md), and the error is
 * returned whatever jansson says.
 */
struct dump_sink {
	struct rs_buf *out;
	int err;
};

static int dump_append(const char *bytes, size_t n, void *data)
{
	struct dump_sink *sink = data;

	if (!sink->err)
		sink->err = rs_buf_put(sink->out, bytes, n);
	return sink->err ? -1 : 0;
}

int rs_json_dump(struct rs_buf *out, const json_t *v, size_t flags)
{
	struct dump_sink sink = { out, 0 };
	size_t had = out->len;
	int failed, err = 0;

	if (!v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	/* else jansson fails, and that would read as out of memory */
	assert((flags & JSON_ENCODE_ANY) || json_is_object(v) || json_is_array(v));
	failed = json_dump_callback(v, dump_append, &sink, flags);
	if (sink.err)
		err = sink.err;
	else if (failed)
		err = rs_error_set(RS_EGENERIC, "out of memory");
	if (err && out->ptr) {
		out->len = had;
		out->ptr[had] = '\0';
	}
	return err;
}

void rs_json_set(struct rs_json_build *b, json_t *o, const char *key, json_t *v)
{
	if (b->failed) {
		json_decref(v);
		return;
	}
	/* json_object_set_new frees v when it fails, NULL o included */
	if (!v || json_object_set_new(o, key, v))
		b->failed = 1;
}

void rs_json_append(struct rs_json_build *b, json_t *a, json_t *v)
{
	if (b->failed) {
		json_decref(v);
		return;
	}
	if (!v || json_array_append_new(a, v))
		b->failed = 1;
}

int rs_json_build_dump(struct rs_buf *out, struct rs_json_build *b, json_t *doc, size_t flags)
{
	int err;

	if (b->failed || !doc)
		err = rs_error_set(RS_EGENERIC, "out of memory");
	else
		err = rs_json_dump(out, doc, flags);
	json_decref(doc);
	return err;
}
