/*
 * rs_session_parser: the one streaming parser of pyinstrument sessions.
 *
 * A pyinstrument session (`Session.save()`, `*.pyisession`) is one JSON
 * object: a few header keys (start_time, duration, cpu_time, ...) and
 * `frame_records`, an array of `[[frame, frame, ...], time]` samples whose
 * frames are identifier strings "function\0file\0first_line" optionally
 * followed by attributes "\1c<class>", "\1l<line>", "\1h<hide>".
 * pyinstrument 5.x writes the header first and frame_records last; 4.x
 * writes frame_records first and `program` instead of `target_description`.
 * Both are accepted, with any JSON formatting and unknown keys skipped.
 *
 * The parser is a push parser: feed it the bytes in pieces of any size
 * (one byte at a time works and gives the same result) and it calls back
 * once per sample, while it reads. It never holds the file: memory grows
 * with the number of distinct frame strings and the deepest stack, never
 * with the file size. Every untrusted length has a cap (RS_SESSION_MAX_*).
 *
 * Frames are interned: each distinct identifier string gets a frame id
 * (dense, from 0, in order of first appearance), and frames that name the
 * same function -- the same (function, file, first line), whatever the
 * currently executing line attribute says -- share a function id. Files
 * get file ids the same way. Summaries, regression analysis and codecs
 * all work on these ids; the strings are looked up once per distinct frame.
 *
 * Errors: RS_ECORRUPT with a message naming the byte offset, e.g.
 *   "not a pyinstrument session: expected key 'frame_records' in the
 *    top-level object, which ends at byte 12"
 *   "invalid session JSON at byte 57: expected ',' or ']', found 'x'"
 * RS_EUSAGE when a cap is exceeded (the message names the cap). A
 * callback's non-zero return is passed up unchanged. After an error the
 * parser is spent: later calls return the same code and message.
 */
#ifndef RS_SESSION_H
#define RS_SESSION_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

/* Caps on untrusted input. */
#define RS_SESSION_MAX_STRING  (64u * 1024)       /* one string, as encoded */
#define RS_SESSION_MAX_NUMBER  64                 /* characters of a number */
#define RS_SESSION_MAX_DEPTH   64                 /* JSON nesting */
#define RS_SESSION_MAX_STACK   (64u * 1024)       /* frames in one sample */
#define RS_SESSION_MAX_FRAMES  (1u << 20)         /* distinct frame strings */
#define RS_SESSION_MAX_INTERNED (256u << 20)      /* bytes of interned strings */
#define RS_SESSION_MAX_LIST    4096               /* sys_path entries kept */

/* Presence bits of struct rs_session_header.present. */
#define RS_SESSION_HAS_START_TIME    (1u << 0)
#define RS_SESSION_HAS_DURATION      (1u << 1)
#define RS_SESSION_HAS_MIN_INTERVAL  (1u << 2)
#define RS_SESSION_HAS_MAX_INTERVAL  (1u << 3)
#define RS_SESSION_HAS_SAMPLE_COUNT  (1u << 4)
#define RS_SESSION_HAS_CPU_TIME      (1u << 5)

/*
 * One distinct frame identifier string, decoded. All pointers are owned by
 * the parser and stay valid (at the same address) until
 * rs_session_parser_free. Strings are NUL-terminated; `identifier` may
 * contain NULs, hence its length.
 */
struct rs_session_frame {
	const char *identifier;    /* the whole decoded string */
	size_t identifier_len;
	const char *function;      /* "" when the identifier has no \0 parts */
	const char *file;          /* "" likewise */
	const char *class_name;    /* the \1c attribute, NULL when absent */
	int64_t line;              /* first line of the code object; 0 if none */
	int64_t exec_line;         /* the \1l attribute (line executing), -1 if absent */
	int hidden;                /* a \1h attribute (__tracebackhide__) was set */
	uint32_t function_id;      /* same (function, file, line) => same id */
	uint32_t file_id;
};

/*
 * One function: frames that agree on (function, file, first line). The
 * strings are borrowed from the first frame that named it (class_name
 * from the first one that had a class). Owned by the parser.
 */
struct rs_session_function {
	const char *function;
	const char *file;
	const char *class_name;    /* NULL when no frame gave a class */
	int64_t line;
	uint32_t file_id;
};

/*
 * The header keys read so far. Owned by the parser; valid until the next
 * feed/finish call (complete when the `header` callback runs).
 * Numbers are meaningful only when their RS_SESSION_HAS_* bit is set
 * (a key that is absent or null leaves it clear).
 */
struct rs_session_header {
	unsigned present;
	double start_time;
	double duration;
	double min_interval;
	double max_interval;
	double cpu_time;
	int64_t sample_count;
	const char *target_description;  /* 5.x; NULL when absent */
	const char *program;             /* 4.x; NULL when absent */
	const char *const *sys_path;     /* first RS_SESSION_MAX_LIST entries */
	size_t sys_path_len;
	const char *const *sys_prefixes;
	size_t sys_prefixes_len;
	const uint32_t *start_call_stack; /* frame ids, root first */
	size_t start_call_stack_len;
	int layout;                      /* 5 or 4; 0 until the object ends */
};

struct rs_session_parser;

/*
 * Callbacks; any may be NULL. Each returns 0 to go on, or a negative
 * RS_E* code to stop parsing (the feed/finish call returns that code).
 * `parser` is the calling parser, for rs_session_parser_frame() etc.
 */
struct rs_session_callbacks {
	void *ctx;
	/*
	 * A new distinct frame string was met (before the first sample that
	 * uses it). `frame` is borrowed from the parser.
	 */
	int (*frame)(void *ctx, const struct rs_session_parser *parser,
		     uint32_t frame_id, const struct rs_session_frame *frame) RS_MUST_CHECK;
	/*
	 * One frame record: `frames` are frame ids from the root (thread) to
	 * the leaf (the executing function), `depth` of them (may be 0);
	 * `time` is the record's time in seconds. `frames` is borrowed for
	 * the duration of the call only.
	 */
	int (*sample)(void *ctx, const struct rs_session_parser *parser,
		      const uint32_t *frames, size_t depth, double time) RS_MUST_CHECK;
	/*
	 * The top-level object ended: the header is complete (`layout` set).
	 * Called once, after the last sample.
	 */
	int (*header)(void *ctx, const struct rs_session_parser *parser,
		      const struct rs_session_header *header) RS_MUST_CHECK;
};

/*
 * Make a parser. `cb` is copied (may be NULL: parse and validate only).
 * Returns 0 and the caller's parser in `*out` (free with
 * rs_session_parser_free), or RS_EGENERIC when out of memory.
 */
RS_MUST_CHECK
int rs_session_parser_new(struct rs_session_parser **out,
			  const struct rs_session_callbacks *cb);

/*
 * Parse the next `n` bytes of the session. Pieces may split anything
 * (a string, an escape, a number). Callbacks run from inside this call.
 * Returns 0, RS_ECORRUPT (not JSON / not a session), RS_EUSAGE (a cap was
 * exceeded), RS_EGENERIC (out of memory) or a callback's code.
 */
RS_MUST_CHECK
int rs_session_parser_feed(struct rs_session_parser *p, const void *bytes, size_t n);

/*
 * Declare the end of input. Returns 0 when a complete session was read
 * (and the header callback has run), RS_ECORRUPT when the input is
 * truncated, empty or lacks frame_records, or the code of an earlier error.
 */
RS_MUST_CHECK
int rs_session_parser_finish(struct rs_session_parser *p);

/* Free the parser and everything it owns. NULL is a no-op. */
void rs_session_parser_free(struct rs_session_parser *p);

/* The header so far (borrowed, see struct rs_session_header). */
const struct rs_session_header *rs_session_parser_header(const struct rs_session_parser *p);

/* Counts of distinct frames, functions and files met so far. */
uint32_t rs_session_parser_frame_count(const struct rs_session_parser *p);
uint32_t rs_session_parser_function_count(const struct rs_session_parser *p);
uint32_t rs_session_parser_file_count(const struct rs_session_parser *p);

/* Number of frame records read so far. */
uint64_t rs_session_parser_sample_count(const struct rs_session_parser *p);

/*
 * Look-ups by id (id < the matching count; asserted). The returned
 * pointers are borrowed and stable until rs_session_parser_free.
 */
const struct rs_session_frame *rs_session_parser_frame(const struct rs_session_parser *p,
							uint32_t frame_id);
const struct rs_session_function *rs_session_parser_function(const struct rs_session_parser *p,
							      uint32_t function_id);
const char *rs_session_parser_file(const struct rs_session_parser *p, uint32_t file_id);

/* Bytes consumed so far (the offset that error messages count from 0). */
uint64_t rs_session_parser_offset(const struct rs_session_parser *p);

#endif
