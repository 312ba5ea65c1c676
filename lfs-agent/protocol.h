/*
 * The Git LFS custom transfer protocol, as the agent sees it: one JSON
 * object per line in each direction (git-lfs docs/custom-transfers.md).
 * Lines come from git-lfs, but are parsed as untrusted input all the
 * same: bounded, every field checked (fuzzed by tests/fuzz/fuzz_lfs_protocol.c).
 */
#ifndef RS_LFS_PROTOCOL_H
#define RS_LFS_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "results/store.h"

/* The longest request line accepted (a path can be long, but not this long). */
#define RS_LFS_LINE_MAX (64u * 1024)

enum rs_lfs_event {
	RS_LFS_INIT,
	RS_LFS_UPLOAD,
	RS_LFS_DOWNLOAD,
	RS_LFS_TERMINATE,
};

enum rs_lfs_operation {
	RS_LFS_OP_NONE,
	RS_LFS_OP_UPLOAD,
	RS_LFS_OP_DOWNLOAD,
};

struct rs_lfs_message {
	enum rs_lfs_event event;
	/* init */
	enum rs_lfs_operation operation;
	char remote[256];
	int concurrent;
	/* upload, download */
	char oid_hex[RS_OID_HEXSZ + 1]; /* 64 lower-case hex digits */
	uint64_t size;
	char *path; /* upload: the file to read (owned; rs_lfs_message_release) */
};

/*
 * Parse one request line (without its newline). RS_EUSAGE with a message
 * naming the problem for anything that is not a well-formed request.
 * On success `msg` must be released with rs_lfs_message_release.
 */
RS_MUST_CHECK
int rs_lfs_parse(struct rs_lfs_message *msg, const char *line, size_t len);
void rs_lfs_message_release(struct rs_lfs_message *msg);

/* Reply lines (each ends in '\n'), written into `out` (cleared first). */
RS_MUST_CHECK
int rs_lfs_reply_init_ok(struct rs_buf *out);
RS_MUST_CHECK
int rs_lfs_reply_init_error(struct rs_buf *out, int code, const char *message);
RS_MUST_CHECK
int rs_lfs_reply_progress(struct rs_buf *out, const char *oid_hex, uint64_t so_far, uint64_t since_last);
/*
 * path: the downloaded file, or NULL for uploads; message NULL on success.
 * A message that is not UTF-8 is sent with '?' for its other bytes; a
 * path that is not is refused (RS_EUSAGE), as it must be sent exactly.
 */
RS_MUST_CHECK
int rs_lfs_reply_complete(struct rs_buf *out, const char *oid_hex, const char *path,
			  int code, const char *message);

/*
 * Read one line from `fd` into `line` (without the newline), refusing
 * lines longer than RS_LFS_LINE_MAX. 0 on a line, RS_ENOTFOUND at end of
 * input. `pending` carries bytes read past the line between calls.
 */
RS_MUST_CHECK
int rs_lfs_read_line(int fd, struct rs_buf *pending, struct rs_buf *line);

#endif
