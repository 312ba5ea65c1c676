#include "protocol.h"
#include "results/error.h"
#include "results/json.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rs_lfs_message_release(struct rs_lfs_message *msg)
{
	free(msg->path);
	msg->path = NULL;
}

/* The first `n` characters of `s` are digits and a-f (an oid as git-lfs sends it). */
static int is_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int get_oid(struct rs_lfs_message *msg, json_t *root)
{
	json_t *oid = json_object_get(root, "oid"), *size = json_object_get(root, "size");
	const char *s;

	if (!json_is_string(oid))
		return rs_error_set(RS_EUSAGE, "transfer request without an \"oid\" string");
	s = json_string_value(oid);
	if (json_string_length(oid) != RS_OID_HEXSZ || !is_lower_hex(s, RS_OID_HEXSZ))
		return rs_error_set(RS_EUSAGE, "transfer request with a bad oid (64 lower-case hex digits expected)");
	memcpy(msg->oid_hex, s, RS_OID_HEXSZ + 1);
	if (!json_is_integer(size) || json_integer_value(size) < 0)
		return rs_error_set(RS_EUSAGE, "transfer request without a non-negative \"size\"");
	msg->size = (uint64_t)json_integer_value(size);
	return 0;
}

/* The init event's operation, remote and concurrency. */
static int get_init(struct rs_lfs_message *msg, json_t *root)
{
	json_t *op = json_object_get(root, "operation"), *remote = json_object_get(root, "remote");

	msg->event = RS_LFS_INIT;
	if (json_is_string(op) && !strcmp(json_string_value(op), "upload"))
		msg->operation = RS_LFS_OP_UPLOAD;
	else if (json_is_string(op) && !strcmp(json_string_value(op), "download"))
		msg->operation = RS_LFS_OP_DOWNLOAD;
	else
		return rs_error_set(RS_EUSAGE, "init without operation \"upload\" or \"download\"");
	if (json_is_string(remote) && json_string_length(remote) < sizeof(msg->remote))
		memcpy(msg->remote, json_string_value(remote), json_string_length(remote) + 1);
	msg->concurrent = json_is_true(json_object_get(root, "concurrent"));
	return 0;
}

/* An upload's "path": a non-empty string without NUL bytes, copied. */
static int get_path(struct rs_lfs_message *msg, json_t *root)
{
	json_t *path = json_object_get(root, "path");

	if (!json_is_string(path) || json_string_length(path) == 0 ||
	    strlen(json_string_value(path)) != json_string_length(path))
		return rs_error_set(RS_EUSAGE, "upload request without a \"path\"");
	msg->path = strdup(json_string_value(path));
	if (!msg->path)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

int rs_lfs_parse(struct rs_lfs_message *msg, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *root, *event;
	const char *ev;
	int err = 0;

	memset(msg, 0, sizeof(*msg));
	if (len > RS_LFS_LINE_MAX)
		return rs_error_set(RS_EUSAGE, "request line of %zu bytes is too long", len);
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return rs_error_set(RS_EUSAGE, "request is not JSON: %s", jerr.text);
	if (!json_is_object(root)) {
		err = rs_error_set(RS_EUSAGE, "request is not a JSON object");
		goto out;
	}
	event = json_object_get(root, "event");
	if (!json_is_string(event)) {
		err = rs_error_set(RS_EUSAGE, "request without an \"event\"");
		goto out;
	}
	ev = json_string_value(event);
	if (!strcmp(ev, "init")) {
		err = get_init(msg, root);
	} else if (!strcmp(ev, "upload") || !strcmp(ev, "download")) {
		msg->event = ev[0] == 'u' ? RS_LFS_UPLOAD : RS_LFS_DOWNLOAD;
		err = get_oid(msg, root);
		if (!err && msg->event == RS_LFS_UPLOAD)
			err = get_path(msg, root);
	} else if (!strcmp(ev, "terminate")) {
		msg->event = RS_LFS_TERMINATE;
	} else {
		err = rs_error_set(RS_EUSAGE, "unknown event '%.40s'", ev);
	}
out:
	json_decref(root);
	if (err)
		rs_lfs_message_release(msg);
	return err;
}

static int dump_line(struct rs_buf *out, json_t *obj)
{
	int err;

	rs_buf_clear(out);
	err = rs_json_dump(out, obj, JSON_COMPACT); /* obj NULL: out of memory */
	json_decref(obj);
	if (err)
		return err;
	return rs_buf_putc(out, '\n');
}

int rs_lfs_reply_init_ok(struct rs_buf *out)
{
	return dump_line(out, json_object());
}

/*
 * A message as a JSON string. JSON carries only UTF-8, and a message may
 * not be (a path's bytes, a message cut in the middle of a character):
 * then its other bytes become '?', so that the error still reaches
 * git-lfs. NULL: out of memory.
 */
static json_t *message_string(const char *message)
{
	json_t *v = json_string(message);
	char *ascii;
	size_t i;

	if (v)
		return v;
	ascii = strdup(message);
	if (!ascii)
		return NULL;
	for (i = 0; ascii[i]; i++)
		if ((unsigned char)ascii[i] >= 0x80)
			ascii[i] = '?';
	v = json_string(ascii);
	free(ascii);
	return v;
}

int rs_lfs_reply_init_error(struct rs_buf *out, int code, const char *message)
{
	return dump_line(out, json_pack("{s:{s:i,s:o}}", "error", "code", code, "message",
					message_string(message)));
}

int rs_lfs_reply_progress(struct rs_buf *out, const char *oid_hex, uint64_t so_far, uint64_t since_last)
{
	return dump_line(out, json_pack("{s:s,s:s,s:I,s:I}", "event", "progress", "oid", oid_hex,
					"bytesSoFar", (json_int_t)so_far,
					"bytesSinceLast", (json_int_t)since_last));
}

/*
 * git-lfs takes a `complete` without "error" as success: a member that
 * cannot be added fails the reply instead of being left out.
 */
int rs_lfs_reply_complete(struct rs_buf *out, const char *oid_hex, const char *path,
			  int code, const char *message)
{
	json_t *o = json_pack("{s:s,s:s}", "event", "complete", "oid", oid_hex);
	json_t *v = NULL;

	if (!o)
		return dump_line(out, NULL);
	if (message) {
		v = json_pack("{s:i,s:o}", "code", code, "message", message_string(message));
		if (!v || json_object_set_new(o, "error", v))
			goto fail;
	} else if (path) {
		v = json_string(path);
		if (!v) {
			json_decref(o);
			rs_buf_clear(out);
			return rs_error_set(RS_EUSAGE, "the download's path '%s' is not UTF-8, which "
					    "the Git LFS protocol cannot carry: move the repository "
					    "to a folder whose name is UTF-8", path);
		}
		if (json_object_set_new(o, "path", v))
			goto fail;
	}
	return dump_line(out, o);
fail:
	json_decref(o);
	return dump_line(out, NULL);
}

int rs_lfs_read_line(int fd, struct rs_buf *pending, struct rs_buf *line)
{
	char chunk[4096];
	int err;

	for (;;) {
		char *nl = pending->len ? memchr(pending->ptr, '\n', pending->len) : NULL;
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - pending->ptr);

			rs_buf_clear(line);
			err = rs_buf_put(line, pending->ptr, n);
			if (err)
				return err;
			memmove(pending->ptr, nl + 1, pending->len - n - 1);
			pending->len -= n + 1;
			return 0;
		}
		if (pending->len > RS_LFS_LINE_MAX)
			return rs_error_set(RS_EUSAGE, "request line longer than %u bytes", RS_LFS_LINE_MAX);
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return rs_error_errno(RS_EGENERIC, "cannot read requests");
		}
		if (r == 0) {
			if (pending->len == 0)
				return RS_ENOTFOUND;
			/* A last line without its newline still counts. */
			rs_buf_clear(line);
			err = rs_buf_put(line, pending->ptr, pending->len);
			if (err)
				return err;
			pending->len = 0;
			return 0;
		}
		err = rs_buf_put(pending, chunk, (size_t)r);
		if (err)
			return err;
	}
}
