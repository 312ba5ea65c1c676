/*
 * The streaming pyinstrument session parser (see session.h for the format
 * and the contract).
 *
 * Structure: a byte-level lexer feeds tokens to a pushdown automaton.
 *
 * - The lexer works on the caller's bytes in place. A string is found with
 *   memchr for '"' plus a look back at the run of backslashes before it
 *   (an odd run means the quote is escaped), so the common case costs one
 *   vectorised scan per string and no copy. Only a token cut by the end of
 *   a fed piece is copied, into `pending`, and finished on the next call;
 *   that is what makes any split of the input give the same result.
 *
 * - The automaton keeps a stack of containers, each with a role: the root
 *   object, frame_records, one record, its stack, a header list, or
 *   "skip" (an unknown key's value: checked as JSON, then forgotten). What
 *   a value means is decided by the role on top and, in the root object,
 *   by the key before it. Every value is still checked as strict JSON.
 *
 * - Frame strings are interned twice over. `raw_tab` maps the string's
 *   bytes exactly as they appear in the file (escapes and all) to a frame
 *   id: a sample's frames are nearly always strings seen before, so the
 *   hot path is hash + compare on raw bytes, with no decoding. On a miss
 *   the string is decoded and validated (escapes, surrogate pairs, UTF-8)
 *   and looked up in `frame_tab` by its decoded value, so two spellings of
 *   one string ("a" and "\u0061") still make one frame. New frames are
 *   split into function/file/line/attributes once, and mapped to a
 *   function id (function, file, first line) and a file id.
 *
 * Memory: the interned strings (capped at RS_SESSION_MAX_INTERNED), the
 * tables, the deepest stack and one pending token (at most
 * RS_SESSION_MAX_STRING bytes). Nothing grows with the number of samples.
 */
#define _GNU_SOURCE
#include "session/session.h"

#include <assert.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "session/intern.h"
#include "util/array.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/hex.h"

#define MAX_ALIASES (4u * RS_SESSION_MAX_FRAMES)
#define ARENA_BLOCK (64u * 1024)

enum expect {
	EXP_VALUE,           /* after ':' or ',' in an array, or at the start */
	EXP_VALUE_OR_CLOSE,  /* after '[' */
	EXP_KEY,             /* after ',' in an object */
	EXP_KEY_OR_CLOSE,    /* after '{' */
	EXP_COLON,
	EXP_COMMA_OR_CLOSE,  /* after a value inside a container */
	EXP_EOF,             /* the top-level object has ended */
};

enum role {
	ROLE_SKIP_OBJ,
	ROLE_SKIP_ARR,
	ROLE_ROOT,
	ROLE_RECORDS,
	ROLE_RECORD,
	ROLE_STACK,
	ROLE_START_STACK,
	ROLE_SYS_PATH,
	ROLE_SYS_PREFIXES,
};

enum key {
	KEY_OTHER,
	KEY_START_TIME,
	KEY_DURATION,
	KEY_MIN_INTERVAL,
	KEY_MAX_INTERVAL,
	KEY_SAMPLE_COUNT,
	KEY_CPU_TIME,
	KEY_TARGET,
	KEY_PROGRAM,
	KEY_SYS_PATH,
	KEY_SYS_PREFIXES,
	KEY_START_CALL_STACK,
	KEY_FRAME_RECORDS,
	KEY_COUNT
};

static const char *const key_names[KEY_COUNT] = {
	NULL, "start_time", "duration", "min_interval", "max_interval",
	"sample_count", "cpu_time", "target_description", "program",
	"sys_path", "sys_prefixes", "start_call_stack", "frame_records",
};

enum partial { PART_NONE, PART_STRING, PART_NUMBER, PART_LITERAL };

struct level {
	uint8_t role;
	uint32_t count;      /* values completed in this container */
};

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	_Alignas(16) char data[];
};

/*
 * A sample usually repeats the frame the previous sample had at the same
 * depth (stacks share their first ~10 frames), so one memcmp against that
 * frame's raw spelling often replaces hashing and a table probe.
 */
struct hint {
	const char *raw;          /* raw_tab's copy of the spelling */
	size_t len;
	uint32_t id;
};

struct str_list {
	char **items;
	size_t len, alloc;
};

struct rs_session_parser {
	struct rs_session_callbacks cb;
	uint64_t seed;
	uint64_t consumed;        /* bytes before the current piece */
	int failed;               /* sticky error code */
	struct rs_error_saved saved; /* its message, for every later call */

	int expect;
	int depth;
	struct level lv[RS_SESSION_MAX_DEPTH];
	int key;                  /* the root key whose value comes next */
	unsigned keys_seen;       /* bit (1 << enum key) */
	int records_first;        /* frame_records was the first key */

	int partial;
	uint64_t partial_start;   /* offset of the cut token's first byte */
	struct rs_buf pending;    /* the cut token so far (string: without quote) */
	struct rs_buf scratch;    /* decoded strings */
	struct rs_buf keybuf;     /* function table keys */

	uint32_t *stack;
	size_t stack_len, stack_alloc;
	struct hint *hints;       /* per stack position: the last frame seen there */
	size_t hints_len, hints_alloc;
	uint32_t *start_stack;
	size_t start_stack_len, start_stack_alloc;
	double record_time;
	uint64_t samples;

	struct rs_session_frame **frames;
	uint32_t nframes;
	size_t frames_alloc;
	struct rs_session_function **funcs;
	uint32_t nfuncs;
	size_t funcs_alloc;
	const char **files;
	uint32_t nfiles;
	size_t files_alloc;
	struct rs_intern raw_tab, frame_tab, func_tab, file_tab;
	struct arena_block *arena;
	size_t interned_bytes;

	struct rs_session_header hdr;
	char *target, *program;
	struct str_list sys_path, sys_prefixes;
};

/* ---- errors ---------------------------------------------------------- */

static int fail(struct rs_session_parser *p, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct rs_session_parser *p, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->failed = rs_error_set(code, "%s", msg);
	rs_error_save(&p->saved, code);
	return code;
}

/* A callback or allocator already set the thread's message: keep it. */
static int fail_keep(struct rs_session_parser *p, int code)
{
	rs_error_save(&p->saved, code);
	p->failed = code;
	return code;
}

static const char *show_byte(char *buf, size_t n, int c)
{
	if (c < 0)
		snprintf(buf, n, "end of input");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, n, "'%c'", c);
	else
		snprintf(buf, n, "byte 0x%02x", c);
	return buf;
}

static int is_object_role(int role)
{
	return role == ROLE_ROOT || role == ROLE_SKIP_OBJ;
}

static const char *expected_text(const struct rs_session_parser *p)
{
	switch (p->expect) {
	case EXP_VALUE: return p->depth ? "a value" : "'{'";
	case EXP_VALUE_OR_CLOSE: return "a value or ']'";
	case EXP_KEY: return "a key string";
	case EXP_KEY_OR_CLOSE: return "a key string or '}'";
	case EXP_COLON: return "':'";
	case EXP_COMMA_OR_CLOSE:
		return is_object_role(p->lv[p->depth - 1].role) ? "',' or '}'" : "',' or ']'";
	default: return "end of input";
	}
}

static int syntax_error(struct rs_session_parser *p, uint64_t off, int c)
{
	char b[32];

	if (p->depth == 0 && p->expect == EXP_VALUE)
		return fail(p, RS_ECORRUPT,
			    "not a pyinstrument session: expected '{' at byte %llu (a session is a JSON object), found %s",
			    (unsigned long long)off, show_byte(b, sizeof(b), c));
	if (p->expect == EXP_EOF)
		return fail(p, RS_ECORRUPT,
			    "invalid session JSON at byte %llu: unexpected %s after the end of the session object",
			    (unsigned long long)off, show_byte(b, sizeof(b), c));
	return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: expected %s, found %s",
		    (unsigned long long)off, expected_text(p), show_byte(b, sizeof(b), c));
}

static const char *kind_text(int kind)
{
	switch (kind) {
	case '{': return "an object";
	case '[': return "an array";
	case '"': return "a string";
	case 'n': return "a number";
	case 'N': return "null";
	default: return "a boolean";
	}
}

static int type_error(struct rs_session_parser *p, uint64_t off, const char *want, int kind)
{
	int role = p->lv[p->depth - 1].role;

	if (role == ROLE_ROOT)
		return fail(p, RS_ECORRUPT,
			    "not a pyinstrument session: key '%s' at byte %llu must be %s, found %s",
			    key_names[p->key], (unsigned long long)off, want, kind_text(kind));
	return fail(p, RS_ECORRUPT,
		    "not a pyinstrument session: %s at byte %llu, found %s", want,
		    (unsigned long long)off, kind_text(kind));
}

/* What a container of strings wants, for type errors inside it. */
static const char *list_want(int role)
{
	if (role == ROLE_STACK || role == ROLE_START_STACK)
		return "a stack must hold frame strings";
	return "sys_path and sys_prefixes must hold strings";
}

/* ---- storage --------------------------------------------------------- */

/*
 * Bump allocation for interned strings and frame structs: they live as
 * long as the parser, and one cap on the arena bounds them all.
 */
static void *arena_alloc(struct rs_session_parser *p, size_t n)
{
	struct arena_block *b = p->arena;

	n = (n + 15) & ~(size_t)15;
	if (n > RS_SESSION_MAX_INTERNED - p->interned_bytes) {
		fail(p, RS_ETOOBIG, "session has more than %u MiB of distinct frame strings",
		     RS_SESSION_MAX_INTERNED >> 20);
		return NULL;
	}
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b) {
			fail(p, RS_EGENERIC, "out of memory interning frames");
			return NULL;
		}
		b->size = size;
		b->used = 0;
		b->next = p->arena;
		p->arena = b;
	}
	p->interned_bytes += n;
	b->used += n;
	return b->data + b->used - n;
}

static int grow_array(struct rs_session_parser *p, void *arrp, size_t *alloc, size_t need,
		      size_t elem)
{
	if (rs_array_grow(arrp, alloc, need, elem, 16))
		return fail(p, RS_EGENERIC, "out of memory");
	return 0;
}

/* ---- strings --------------------------------------------------------- */

static long hex4(const unsigned char *s, const unsigned char *e)
{
	long v = 0;
	int i;

	if (e - s < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		int h = rs_hex_val(s[i]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

/* Length of the valid UTF-8 sequence at s, or 0 (RFC 3629 table). */
static size_t utf8_seq(const unsigned char *s, const unsigned char *e)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if ((size_t)(e - s) < n)
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static char *put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | (cp >> 6));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | (cp >> 12));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | (cp >> 18));
		*o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/*
 * The \uXXXX escape at *s, moving *s past it: a surrogate pair is one
 * code point, a lone surrogate U+FFFD. -1 without four hex digits.
 */
static long u_escape(const unsigned char **s, const unsigned char *e)
{
	long cp = hex4(*s + 2, e), lo;

	if (cp < 0)
		return -1;
	*s += 6;
	if (cp >= 0xd800 && cp <= 0xdbff && e - *s >= 6 && (*s)[0] == '\\' && (*s)[1] == 'u') {
		lo = hex4(*s + 2, e);
		if (lo >= 0xdc00 && lo <= 0xdfff) {
			*s += 6;
			return 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0xfffd;
	return cp;
}

/*
 * Decode and validate the body of a JSON string (`raw`, without quotes,
 * starting at byte `off` + 1) into p->scratch, NUL-terminated. Decoding
 * never lengthens a string, so the output fits in len + 1 bytes. A lone
 * surrogate (which Python writes for undecodable file names) becomes
 * U+FFFD rather than an error.
 */
static int decode_string(struct rs_session_parser *p, const char *raw, size_t len, uint64_t off)
{
	const unsigned char *s = (const unsigned char *)raw, *e = s + len;
	char *o;

	rs_buf_clear(&p->scratch);
	if (rs_buf_grow(&p->scratch, len + 1))
		return fail(p, RS_EGENERIC, "out of memory decoding a string");
	o = p->scratch.ptr;
	while (s < e) {
		unsigned c = *s;
		unsigned long long at = (unsigned long long)(off + 1 + (uint64_t)(s - (const unsigned char *)raw));

		if (c == '\\') {
			long cp;

			if (e - s < 2)
				return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: unfinished escape", at);
			switch (s[1]) {
			case '"': *o++ = '"'; s += 2; continue;
			case '\\': *o++ = '\\'; s += 2; continue;
			case '/': *o++ = '/'; s += 2; continue;
			case 'b': *o++ = '\b'; s += 2; continue;
			case 'f': *o++ = '\f'; s += 2; continue;
			case 'n': *o++ = '\n'; s += 2; continue;
			case 'r': *o++ = '\r'; s += 2; continue;
			case 't': *o++ = '\t'; s += 2; continue;
			case 'u':
				cp = u_escape(&s, e);
				if (cp < 0)
					return fail(p, RS_ECORRUPT,
						    "invalid session JSON at byte %llu: '\\u' needs four hex digits", at);
				o = put_utf8(o, (unsigned long)cp);
				continue;
			default:
				return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: invalid escape '\\%c'",
					    at, s[1] >= 0x20 && s[1] < 0x7f ? s[1] : '?');
			}
		} else if (c < 0x20) {
			return fail(p, RS_ECORRUPT,
				    "invalid session JSON at byte %llu: control character 0x%02x inside a string", at, c);
		} else if (c < 0x80) {
			*o++ = (char)c;
			s++;
		} else {
			size_t n = utf8_seq(s, e);

			if (!n)
				return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: invalid UTF-8", at);
			memcpy(o, s, n);
			o += n;
			s += n;
		}
	}
	*o = '\0';
	p->scratch.len = (size_t)(o - p->scratch.ptr);
	return 0;
}

/* ---- frames ---------------------------------------------------------- */

static int64_t parse_line(const char *s, size_t n)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 18)
		return n == 0 ? 0 : -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static char *arena_strdup(struct rs_session_parser *p, const char *s, size_t n)
{
	char *d = arena_alloc(p, n + 1);

	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static int intern_file(struct rs_session_parser *p, const char *file, uint32_t *out)
{
	size_t n = strlen(file);
	uint64_t h = rs_intern_hash(file, n, p->seed ^ 0x66696c65u);
	uint32_t id = rs_intern_find(&p->file_tab, file, n, h);
	int err;

	if (id == RS_INTERN_NONE) {
		err = grow_array(p, &p->files, &p->files_alloc, (size_t)p->nfiles + 1,
				 sizeof(*p->files));
		if (err)
			return err;
		id = p->nfiles;
		err = rs_intern_insert(&p->file_tab, file, n, h, id);
		if (err)
			return fail_keep(p, err);
		p->files[p->nfiles++] = file;
	}
	*out = id;
	return 0;
}

static int intern_function(struct rs_session_parser *p, struct rs_session_frame *f)
{
	size_t fl = strlen(f->function), il = strlen(f->file);
	uint64_t h;
	uint32_t id;
	unsigned char line[8];
	char *key;
	struct rs_session_function *fn;
	int err;

	/* key: function NUL file NUL line (8 bytes): unambiguous because the
	 * names cannot hold a NUL (they were split at NULs). */
	rs_buf_clear(&p->keybuf);
	memcpy(line, &f->line, 8);
	if (rs_buf_put(&p->keybuf, f->function, fl + 1) || rs_buf_put(&p->keybuf, f->file, il + 1) ||
	    rs_buf_put(&p->keybuf, line, 8))
		return fail(p, RS_EGENERIC, "out of memory");
	h = rs_intern_hash(p->keybuf.ptr, p->keybuf.len, p->seed ^ 0x66756e63u);
	id = rs_intern_find(&p->func_tab, p->keybuf.ptr, p->keybuf.len, h);
	if (id != RS_INTERN_NONE) {
		fn = p->funcs[id];
		if (!fn->class_name && f->class_name)
			fn->class_name = f->class_name;
		f->function_id = id;
		return 0;
	}
	err = grow_array(p, &p->funcs, &p->funcs_alloc, (size_t)p->nfuncs + 1,
			 sizeof(*p->funcs));
	if (err)
		return err;
	key = arena_alloc(p, p->keybuf.len);
	fn = arena_alloc(p, sizeof(*fn));
	if (!key || !fn)
		return p->failed;
	memcpy(key, p->keybuf.ptr, p->keybuf.len);
	fn->function = f->function;
	fn->file = f->file;
	fn->class_name = f->class_name;
	fn->line = f->line;
	fn->file_id = f->file_id;
	id = p->nfuncs;
	err = rs_intern_insert(&p->func_tab, key, p->keybuf.len, h, id);
	if (err)
		return fail_keep(p, err);
	p->funcs[p->nfuncs++] = fn;
	f->function_id = id;
	return 0;
}

/*
 * Split a decoded identifier "function\0file\0line\1c<class>\1l<line>..."
 * into a new frame. Identifiers that do not follow the pattern (synthetic
 * frames like "[await]") are kept whole as the function name.
 */
/* The pieces of a frame identifier, pointing into it. */
struct frame_parts {
	const char *fn, *file, *cls;
	size_t fn_len, file_len, cls_len;
	int64_t line, exec_line;
	int hidden;
};

static void split_identifier(const char *id, size_t n, struct frame_parts *fp)
{
	const char *attr = memchr(id, '\1', n);
	size_t base = attr ? (size_t)(attr - id) : n;
	const char *z1 = memchr(id, '\0', base), *z2;

	memset(fp, 0, sizeof(*fp));
	fp->fn = id;
	fp->fn_len = base;
	fp->file = "";
	fp->exec_line = -1;
	if (z1) {
		fp->fn_len = (size_t)(z1 - id);
		fp->file = z1 + 1;
		z2 = memchr(fp->file, '\0', base - fp->fn_len - 1);
		fp->file_len = z2 ? (size_t)(z2 - fp->file) : base - fp->fn_len - 1;
		if (z2) {
			fp->line = parse_line(z2 + 1, base - (size_t)(z2 + 1 - id));
			if (fp->line < 0)
				fp->line = 0;
		}
	}
	while (attr) {
		const char *v = attr + 1, *next = memchr(v, '\1', n - (size_t)(v - id));
		size_t vl = (next ? (size_t)(next - v) : n - (size_t)(v - id));

		if (vl >= 1 && v[0] == 'c') {
			fp->cls = v + 1;
			fp->cls_len = vl - 1;
		} else if (vl >= 1 && v[0] == 'l') {
			fp->exec_line = parse_line(v + 1, vl - 1);
		} else if (vl >= 1 && v[0] == 'h') {
			fp->hidden = 1;
		}
		attr = next;
	}
}

static int new_frame(struct rs_session_parser *p, const char *id, size_t n, uint64_t hash,
		     uint32_t *out)
{
	struct frame_parts fp;
	struct rs_session_frame *f;
	int err;

	if (p->nframes >= RS_SESSION_MAX_FRAMES)
		return fail(p, RS_ETOOBIG, "session has more than %u distinct frames", RS_SESSION_MAX_FRAMES);
	split_identifier(id, n, &fp);
	f = arena_alloc(p, sizeof(*f));
	if (!f)
		return p->failed;
	memset(f, 0, sizeof(*f));
	f->identifier = arena_strdup(p, id, n);
	f->function = arena_strdup(p, fp.fn, fp.fn_len);
	f->file = arena_strdup(p, fp.file, fp.file_len);
	if (fp.cls)
		f->class_name = arena_strdup(p, fp.cls, fp.cls_len);
	if (!f->identifier || !f->function || !f->file || (fp.cls && !f->class_name))
		return p->failed;
	f->identifier_len = n;
	f->line = fp.line;
	f->exec_line = fp.exec_line;
	f->hidden = fp.hidden;
	err = intern_file(p, f->file, &f->file_id);
	if (err)
		return err;
	err = intern_function(p, f);
	if (err)
		return err;
	err = grow_array(p, &p->frames, &p->frames_alloc, (size_t)p->nframes + 1,
			 sizeof(*p->frames));
	if (err)
		return err;
	err = rs_intern_insert(&p->frame_tab, f->identifier, n, hash, p->nframes);
	if (err)
		return fail_keep(p, err);
	*out = p->nframes;
	p->frames[p->nframes++] = f;
	if (p->cb.frame) {
		err = p->cb.frame(p->cb.ctx, p, *out, f);
		if (err)
			return fail_keep(p, err);
	}
	return 0;
}

/* The slow path of intern_frame: a spelling not seen before. */
static int intern_frame_miss(struct rs_session_parser *p, const char *raw, size_t len,
			     uint64_t raw_hash, uint64_t off, uint32_t *out, const char **stored)
{
	uint64_t h;
	uint32_t id;
	const char *key;
	int err;

	err = decode_string(p, raw, len, off);
	if (err)
		return err;
	h = rs_intern_hash(p->scratch.ptr, p->scratch.len, p->seed ^ 0x6672616du);
	id = rs_intern_find(&p->frame_tab, p->scratch.ptr, p->scratch.len, h);
	if (id == RS_INTERN_NONE) {
		err = new_frame(p, p->scratch.ptr, p->scratch.len, h, &id);
		if (err)
			return err;
	}
	if (p->raw_tab.count >= MAX_ALIASES)
		return fail(p, RS_ETOOBIG, "session spells its frames in more than %u ways", MAX_ALIASES);
	if (len == p->frames[id]->identifier_len && memcmp(raw, p->frames[id]->identifier, len) == 0)
		key = p->frames[id]->identifier;
	else
		key = arena_strdup(p, raw, len);
	if (!key)
		return p->failed;
	err = rs_intern_insert(&p->raw_tab, key, len, raw_hash, id);
	if (err)
		return fail_keep(p, err);
	*out = id;
	*stored = key;
	return 0;
}

static inline int intern_frame(struct rs_session_parser *p, const char *raw, size_t len,
			       uint64_t off, uint32_t *out, const char **stored)
{
	uint64_t h = rs_intern_hash(raw, len, p->seed);
	uint32_t id = rs_intern_lookup(&p->raw_tab, raw, len, h, stored);

	if (id != RS_INTERN_NONE) {
		*out = id;
		return 0;
	}
	return intern_frame_miss(p, raw, len, h, off, out, stored);
}

/* A frame of a sample's stack: try the hint for this depth first. */
static inline int stack_frame(struct rs_session_parser *p, const char *raw, size_t len,
			      uint64_t off, uint32_t *out)
{
	size_t pos = p->stack_len;
	const char *stored;
	int err;

	if (pos < p->hints_len && p->hints[pos].len == len &&
	    memcmp(p->hints[pos].raw, raw, len) == 0) {
		*out = p->hints[pos].id;
		return 0;
	}
	err = intern_frame(p, raw, len, off, out, &stored);
	if (err)
		return err;
	if (pos == p->hints_len) {
		if (pos >= RS_SESSION_MAX_STACK)
			return 0; /* push_id reports the cap */
		err = grow_array(p, &p->hints, &p->hints_alloc, pos + 1,
				 sizeof(*p->hints));
		if (err)
			return err;
		p->hints_len++;
	}
	p->hints[pos].raw = stored;
	p->hints[pos].len = len;
	p->hints[pos].id = *out;
	return 0;
}

static int push_id(struct rs_session_parser *p, uint32_t **arr, size_t *len, size_t *alloc,
		   uint32_t id, uint64_t off)
{
	int err;

	if (*len == *alloc) {
		if (*len >= RS_SESSION_MAX_STACK)
			return fail(p, RS_ETOOBIG, "stack at byte %llu is deeper than %u frames",
				    (unsigned long long)off, RS_SESSION_MAX_STACK);
		err = grow_array(p, arr, alloc, *len + 1, sizeof(**arr));
		if (err)
			return err;
	}
	(*arr)[(*len)++] = id;
	return 0;
}

/* ---- header ---------------------------------------------------------- */

static void list_free(struct str_list *l)
{
	size_t i;

	for (i = 0; i < l->len; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = 0;
	l->alloc = 0; /* a key given again grows the list from nothing */
}

static void sync_lists(struct rs_session_parser *p)
{
	p->hdr.sys_path = (const char *const *)p->sys_path.items;
	p->hdr.sys_path_len = p->sys_path.len;
	p->hdr.sys_prefixes = (const char *const *)p->sys_prefixes.items;
	p->hdr.sys_prefixes_len = p->sys_prefixes.len;
}

static int list_add(struct rs_session_parser *p, struct str_list *l)
{
	char *s;

	if (l->len >= RS_SESSION_MAX_LIST)
		return 0; /* keep the first entries; the rest are checked and dropped */
	if (rs_array_grow(&l->items, &l->alloc, l->len + 1, sizeof(*l->items), 16))
		return fail(p, RS_EGENERIC, "out of memory");
	s = malloc(p->scratch.len + 1);
	if (!s)
		return fail(p, RS_EGENERIC, "out of memory");
	memcpy(s, p->scratch.ptr, p->scratch.len + 1);
	l->items[l->len++] = s;
	sync_lists(p);
	return 0;
}

static int set_string(struct rs_session_parser *p, char **slot, const char **hdr_slot)
{
	char *s = malloc(p->scratch.len + 1);

	if (!s)
		return fail(p, RS_EGENERIC, "out of memory");
	memcpy(s, p->scratch.ptr, p->scratch.len + 1);
	free(*slot);
	*slot = s;
	*hdr_slot = s;
	return 0;
}

/* ---- numbers --------------------------------------------------------- */

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void init_c_locale(void)
{
	c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/*
 * Check the JSON number grammar -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * and convert with the C locale (the program's locale may use ',').
 */
static int parse_number(struct rs_session_parser *p, const char *t, size_t n, uint64_t off,
			double *out, int *integral)
{
	char buf[RS_SESSION_MAX_NUMBER + 1];
	size_t i = 0;
	int ok = 1, integer = 1;

	if (i < n && t[i] == '-')
		i++;
	if (i < n && t[i] == '0')
		i++;
	else if (i < n && t[i] >= '1' && t[i] <= '9')
		while (i < n && t[i] >= '0' && t[i] <= '9')
			i++;
	else
		ok = 0;
	if (ok && i < n && t[i] == '.') {
		integer = 0;
		i++;
		if (i >= n || t[i] < '0' || t[i] > '9')
			ok = 0;
		while (i < n && t[i] >= '0' && t[i] <= '9')
			i++;
	}
	if (ok && i < n && (t[i] == 'e' || t[i] == 'E')) {
		integer = 0;
		i++;
		if (i < n && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= n || t[i] < '0' || t[i] > '9')
			ok = 0;
		while (i < n && t[i] >= '0' && t[i] <= '9')
			i++;
	}
	if (!ok || i != n || n > RS_SESSION_MAX_NUMBER)
		return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: malformed number '%.*s'",
			    (unsigned long long)off, (int)(n > 32 ? 32 : n), t);
	memcpy(buf, t, n);
	buf[n] = '\0';
	pthread_once(&c_locale_once, init_c_locale);
	*out = c_locale ? strtod_l(buf, NULL, c_locale) : strtod(buf, NULL);
	*integral = integer;
	return 0;
}

/* ---- the automaton --------------------------------------------------- */

static int value_position(struct rs_session_parser *p, uint64_t off, int c)
{
	if (p->expect != EXP_VALUE && p->expect != EXP_VALUE_OR_CLOSE)
		return syntax_error(p, off, c);
	return 0;
}

static void end_value(struct rs_session_parser *p)
{
	if (p->depth == 0) {
		p->expect = EXP_EOF;
		return;
	}
	p->lv[p->depth - 1].count++;
	p->expect = EXP_COMMA_OR_CLOSE;
}

/*
 * The role of an array or object opened as a value of the top-level
 * object, or a (negative) error code.
 */
static int root_value_role(struct rs_session_parser *p, int c, uint64_t off)
{
	switch (p->key) {
	case KEY_OTHER:
		return c == '{' ? ROLE_SKIP_OBJ : ROLE_SKIP_ARR;
	case KEY_FRAME_RECORDS:
		if (c != '[')
			return type_error(p, off, "an array", c);
		return ROLE_RECORDS;
	case KEY_START_CALL_STACK:
		if (c != '[')
			return type_error(p, off, "an array of frame strings", c);
		p->start_stack_len = 0;
		p->hdr.start_call_stack = NULL;
		p->hdr.start_call_stack_len = 0;
		return ROLE_START_STACK;
	case KEY_SYS_PATH:
	case KEY_SYS_PREFIXES:
		if (c != '[')
			return type_error(p, off, "an array of strings", c);
		list_free(p->key == KEY_SYS_PATH ? &p->sys_path : &p->sys_prefixes);
		sync_lists(p);
		return p->key == KEY_SYS_PATH ? ROLE_SYS_PATH : ROLE_SYS_PREFIXES;
	case KEY_TARGET:
	case KEY_PROGRAM:
		return type_error(p, off, "a string", c);
	default:
		return type_error(p, off, "a number", c);
	}
}

static int on_open(struct rs_session_parser *p, int c, uint64_t off)
{
	int role, err;

	err = value_position(p, off, c);
	if (err)
		return err;
	if (p->depth == 0) {
		if (c != '{')
			return syntax_error(p, off, c);
		role = ROLE_ROOT;
	} else {
		switch (p->lv[p->depth - 1].role) {
		case ROLE_ROOT:
			role = root_value_role(p, c, off);
			if (role < 0)
				return role; /* an error code */
			break;
		case ROLE_RECORDS:
			if (c != '[')
				return type_error(p, off, "each frame record must be [stack, time]", c);
			role = ROLE_RECORD;
			break;
		case ROLE_RECORD:
			if (c != '[' || p->lv[p->depth - 1].count != 0)
				return type_error(p, off, "a frame record must be [stack, time]", c);
			p->stack_len = 0;
			role = ROLE_STACK;
			break;
		case ROLE_STACK:
		case ROLE_START_STACK:
		case ROLE_SYS_PATH:
		case ROLE_SYS_PREFIXES:
			return type_error(p, off, list_want(p->lv[p->depth - 1].role), c);
		default:
			role = c == '{' ? ROLE_SKIP_OBJ : ROLE_SKIP_ARR;
			break;
		}
	}
	if (p->depth >= RS_SESSION_MAX_DEPTH)
		return fail(p, RS_ETOOBIG, "session JSON at byte %llu nests deeper than %d levels",
			    (unsigned long long)off, RS_SESSION_MAX_DEPTH);
	p->lv[p->depth].role = (uint8_t)role;
	p->lv[p->depth].count = 0;
	p->depth++;
	p->expect = c == '{' ? EXP_KEY_OR_CLOSE : EXP_VALUE_OR_CLOSE;
	return 0;
}

static int end_root(struct rs_session_parser *p, uint64_t off)
{
	int err;

	if (!(p->keys_seen & (1u << KEY_FRAME_RECORDS)))
		return fail(p, RS_ECORRUPT,
			    "not a pyinstrument session: expected key 'frame_records' in the top-level object, which ends at byte %llu",
			    (unsigned long long)off);
	if (p->target)
		p->hdr.layout = 5;
	else if (p->program)
		p->hdr.layout = 4;
	else
		p->hdr.layout = p->records_first ? 4 : 5;
	if (p->cb.header) {
		err = p->cb.header(p->cb.ctx, p, &p->hdr);
		if (err)
			return fail_keep(p, err);
	}
	return 0;
}

static int on_close(struct rs_session_parser *p, int c, uint64_t off)
{
	struct level *top;
	int err;

	if (p->depth == 0)
		return syntax_error(p, off, c);
	top = &p->lv[p->depth - 1];
	if (c == '}') {
		if (!is_object_role(top->role) ||
		    (p->expect != EXP_KEY_OR_CLOSE && p->expect != EXP_COMMA_OR_CLOSE))
			return syntax_error(p, off, c);
	} else if (is_object_role(top->role) ||
		   (p->expect != EXP_VALUE_OR_CLOSE && p->expect != EXP_COMMA_OR_CLOSE)) {
		return syntax_error(p, off, c);
	}
	switch (top->role) {
	case ROLE_RECORD:
		if (top->count != 2)
			return fail(p, RS_ECORRUPT,
				    "not a pyinstrument session: the frame record ending at byte %llu must be [stack, time]",
				    (unsigned long long)off);
		p->samples++;
		if (p->cb.sample) {
			err = p->cb.sample(p->cb.ctx, p, p->stack, p->stack_len, p->record_time);
			if (err)
				return fail_keep(p, err);
		}
		break;
	case ROLE_START_STACK:
		p->hdr.start_call_stack = p->start_stack;
		p->hdr.start_call_stack_len = p->start_stack_len;
		break;
	case ROLE_ROOT:
		p->depth--;
		end_value(p);
		return end_root(p, off);
	default:
		break;
	}
	p->depth--;
	end_value(p);
	return 0;
}

static int on_root_key(struct rs_session_parser *p, uint64_t off)
{
	int k;

	p->key = KEY_OTHER;
	for (k = 1; k < KEY_COUNT; k++)
		if (strlen(key_names[k]) == p->scratch.len && !strcmp(key_names[k], p->scratch.ptr)) {
			p->key = k;
			break;
		}
	if (p->key == KEY_FRAME_RECORDS) {
		if (p->keys_seen & (1u << KEY_FRAME_RECORDS))
			return fail(p, RS_ECORRUPT,
				    "not a pyinstrument session: a second 'frame_records' key at byte %llu",
				    (unsigned long long)off);
		p->records_first = (p->keys_seen & ~1u) == 0;
	}
	p->keys_seen |= 1u << p->key;
	return 0;
}

/* A frame of a sample's stack: the parser's hot path. */
static inline int stack_string(struct rs_session_parser *p, const char *raw, size_t len,
			       uint64_t off)
{
	uint32_t id;
	int err;

	err = stack_frame(p, raw, len, off, &id);
	if (err)
		return err;
	if (p->stack_len < p->stack_alloc) {
		p->stack[p->stack_len++] = id;
	} else {
		err = push_id(p, &p->stack, &p->stack_len, &p->stack_alloc, id, off);
		if (err)
			return err;
	}
	p->lv[p->depth - 1].count++;
	p->expect = EXP_COMMA_OR_CLOSE;
	return 0;
}

/* An object's key; the top-level object's keys are looked at. */
static int key_string(struct rs_session_parser *p, const char *raw, size_t len, uint64_t off)
{
	int err;

	err = decode_string(p, raw, len, off);
	if (err)
		return err;
	if (p->lv[p->depth - 1].role == ROLE_ROOT) {
		err = on_root_key(p, off);
		if (err)
			return err;
	}
	p->expect = EXP_COLON;
	return 0;
}

/* A string value of the top-level object: "target_description" or "program". */
static int root_string(struct rs_session_parser *p, const char *raw, size_t len, uint64_t off)
{
	int err;

	if (p->key != KEY_OTHER && p->key != KEY_TARGET && p->key != KEY_PROGRAM)
		return type_error(p, off,
				  p->key == KEY_FRAME_RECORDS || p->key >= KEY_SYS_PATH
					  ? "an array" : "a number", '"');
	err = decode_string(p, raw, len, off);
	if (err)
		return err;
	if (p->key == KEY_TARGET)
		return set_string(p, &p->target, &p->hdr.target_description);
	if (p->key == KEY_PROGRAM)
		return set_string(p, &p->program, &p->hdr.program);
	return 0;
}

static int on_string(struct rs_session_parser *p, const char *raw, size_t len, uint64_t off)
{
	const char *stored;
	uint32_t id;
	int err, role;

	/* The hot path first: a frame of a sample's stack. */
	if (p->depth && (p->expect == EXP_VALUE || p->expect == EXP_VALUE_OR_CLOSE) &&
	    p->lv[p->depth - 1].role == ROLE_STACK)
		return stack_string(p, raw, len, off);
	if (p->expect == EXP_KEY || p->expect == EXP_KEY_OR_CLOSE)
		return key_string(p, raw, len, off);
	err = value_position(p, off, '"');
	if (err)
		return err;
	if (p->depth == 0)
		return syntax_error(p, off, '"');
	role = p->lv[p->depth - 1].role;
	switch (role) {
	case ROLE_START_STACK:
		err = intern_frame(p, raw, len, off, &id, &stored);
		if (err)
			return err;
		err = push_id(p, &p->start_stack, &p->start_stack_len, &p->start_stack_alloc, id, off);
		if (err)
			return err;
		break;
	case ROLE_ROOT:
		err = root_string(p, raw, len, off);
		if (err)
			return err;
		break;
	case ROLE_RECORDS:
		return type_error(p, off, "each frame record must be [stack, time]", '"');
	case ROLE_RECORD:
		return type_error(p, off, "a frame record must be [stack, time]", '"');
	default:
		err = decode_string(p, raw, len, off);
		if (err)
			return err;
		if (role == ROLE_SYS_PATH)
			err = list_add(p, &p->sys_path);
		else if (role == ROLE_SYS_PREFIXES)
			err = list_add(p, &p->sys_prefixes);
		if (err)
			return err;
		break;
	}
	end_value(p);
	return 0;
}

static int on_number(struct rs_session_parser *p, const char *t, size_t n, uint64_t off)
{
	double v = 0;
	int integral = 0, err;
	struct level *top;

	err = value_position(p, off, (unsigned char)t[0]);
	if (err)
		return err;
	if (p->depth == 0)
		return syntax_error(p, off, (unsigned char)t[0]);
	err = parse_number(p, t, n, off, &v, &integral);
	if (err)
		return err;
	top = &p->lv[p->depth - 1];
	switch (top->role) {
	case ROLE_RECORD:
		if (top->count != 1)
			return type_error(p, off, "a frame record must be [stack, time]", 'n');
		p->record_time = v;
		break;
	case ROLE_ROOT:
		switch (p->key) {
		case KEY_START_TIME: p->hdr.start_time = v; p->hdr.present |= RS_SESSION_HAS_START_TIME; break;
		case KEY_DURATION: p->hdr.duration = v; p->hdr.present |= RS_SESSION_HAS_DURATION; break;
		case KEY_MIN_INTERVAL: p->hdr.min_interval = v; p->hdr.present |= RS_SESSION_HAS_MIN_INTERVAL; break;
		case KEY_MAX_INTERVAL: p->hdr.max_interval = v; p->hdr.present |= RS_SESSION_HAS_MAX_INTERVAL; break;
		case KEY_CPU_TIME: p->hdr.cpu_time = v; p->hdr.present |= RS_SESSION_HAS_CPU_TIME; break;
		case KEY_SAMPLE_COUNT:
			if (!integral || v < 0 || v > 9e15)
				return type_error(p, off, "a whole number", 'n');
			p->hdr.sample_count = (int64_t)v;
			p->hdr.present |= RS_SESSION_HAS_SAMPLE_COUNT;
			break;
		case KEY_OTHER:
			break;
		case KEY_TARGET:
		case KEY_PROGRAM:
			return type_error(p, off, "a string", 'n');
		default:
			return type_error(p, off, "an array", 'n');
		}
		break;
	case ROLE_SKIP_ARR:
	case ROLE_SKIP_OBJ:
		break;
	case ROLE_RECORDS:
		return type_error(p, off, "each frame record must be [stack, time]", 'n');
	default:
		return type_error(p, off, list_want(top->role), 'n');
	}
	end_value(p);
	return 0;
}

static int on_literal(struct rs_session_parser *p, const char *t, size_t n, uint64_t off)
{
	int err, kind, role;

	err = value_position(p, off, (unsigned char)t[0]);
	if (err)
		return err;
	if (p->depth == 0)
		return syntax_error(p, off, (unsigned char)t[0]);
	if (n == 4 && !memcmp(t, "null", 4))
		kind = 'N';
	else if ((n == 4 && !memcmp(t, "true", 4)) || (n == 5 && !memcmp(t, "false", 5)))
		kind = 'b';
	else
		return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: unknown literal '%.*s'",
			    (unsigned long long)off, (int)n, t);
	role = p->lv[p->depth - 1].role;
	if (role == ROLE_ROOT) {
		/* null stands for "absent" in header keys; frame_records is required */
		if (p->key == KEY_FRAME_RECORDS)
			return type_error(p, off, "an array", kind);
		if (p->key != KEY_OTHER && kind != 'N')
			return type_error(p, off, p->key == KEY_TARGET || p->key == KEY_PROGRAM ? "a string"
						  : p->key >= KEY_SYS_PATH ? "an array" : "a number", kind);
	} else if (role == ROLE_RECORDS || role == ROLE_RECORD) {
		return type_error(p, off, "a frame record must be [stack, time]", kind);
	} else if (role != ROLE_SKIP_ARR && role != ROLE_SKIP_OBJ) {
		return type_error(p, off, list_want(role), kind);
	}
	end_value(p);
	return 0;
}

static int on_token(struct rs_session_parser *p, int kind, const char *t, size_t n, uint64_t off)
{
	switch (kind) {
	case PART_STRING: return on_string(p, t, n, off);
	case PART_NUMBER: return on_number(p, t, n, off);
	default: return on_literal(p, t, n, off);
	}
}

/* ---- the lexer ------------------------------------------------------- */

/* The closing quote of a string whose body starts at b, searched in [b, e). */
static const unsigned char *find_quote(const unsigned char *b, const unsigned char *from,
				       const unsigned char *e)
{
	while (from < e) {
		const unsigned char *q = memchr(from, '"', (size_t)(e - from)), *k;

		if (!q)
			return NULL;
		for (k = q; k > b && k[-1] == '\\'; k--)
			;
		if (((q - k) & 1) == 0)
			return q;
		from = q + 1;
	}
	return NULL;
}

static int is_number_char(int c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static int is_literal_char(int c)
{
	return c >= 'a' && c <= 'z';
}

static int too_long(struct rs_session_parser *p, int kind, uint64_t off)
{
	if (kind == PART_STRING)
		return fail(p, RS_ETOOBIG, "string at byte %llu is longer than %u bytes",
			    (unsigned long long)off, RS_SESSION_MAX_STRING);
	return fail(p, RS_ECORRUPT, "invalid session JSON at byte %llu: token too long",
		    (unsigned long long)off);
}

static int start_partial(struct rs_session_parser *p, int kind, const unsigned char *s,
			 const unsigned char *e, uint64_t off)
{
	rs_buf_clear(&p->pending);
	if (rs_buf_put(&p->pending, s, (size_t)(e - s)))
		return fail(p, RS_EGENERIC, "out of memory");
	p->partial = kind;
	p->partial_start = off;
	return 0;
}

/*
 * Continue a token cut at the end of the previous piece. Advances *sp past
 * the bytes used; the token stays pending if this piece ends first too.
 */
static int resume_partial(struct rs_session_parser *p, const unsigned char **sp,
			  const unsigned char *e)
{
	const unsigned char *s = *sp;
	int kind = p->partial, err;

	if (kind == PART_STRING) {
		while (s < e) {
			size_t room = RS_SESSION_MAX_STRING + 1 - p->pending.len;
			const unsigned char *lim = (size_t)(e - s) > room ? s + room : e;
			const unsigned char *q = memchr(s, '"', (size_t)(lim - s));
			size_t k;

			if (rs_buf_put(&p->pending, s, (size_t)((q ? q : lim) - s)))
				return fail(p, RS_EGENERIC, "out of memory");
			if (p->pending.len > RS_SESSION_MAX_STRING)
				return too_long(p, kind, p->partial_start);
			if (!q) {
				s = lim;
				continue;
			}
			for (k = p->pending.len; k > 0 && p->pending.ptr[k - 1] == '\\'; k--)
				;
			s = q + 1;
			if (((p->pending.len - k) & 1) == 0) {
				p->partial = PART_NONE;
				*sp = s;
				return on_string(p, p->pending.ptr, p->pending.len, p->partial_start);
			}
			if (rs_buf_putc(&p->pending, '"'))
				return fail(p, RS_EGENERIC, "out of memory");
		}
		*sp = s;
		return 0;
	}
	while (s < e && (kind == PART_NUMBER ? is_number_char(*s) : is_literal_char(*s)))
		s++;
	if (rs_buf_put(&p->pending, *sp, (size_t)(s - *sp)))
		return fail(p, RS_EGENERIC, "out of memory");
	*sp = s;
	if (p->pending.len > RS_SESSION_MAX_NUMBER)
		return too_long(p, kind, p->partial_start);
	if (s == e)
		return 0;
	p->partial = PART_NONE;
	err = on_token(p, kind, p->pending.ptr, p->pending.len, p->partial_start);
	return err;
}

/*
 * The tokens that may run past the end of a chunk: a string, a number, a
 * literal. Each reads from *s (at byte `off` of the session), hands the
 * whole token on or starts a partial one, and moves *s past what it used.
 * Inline: they are the feed loop's own cases, split out to be read.
 */
static inline int feed_string(struct rs_session_parser *p, const unsigned char **s,
			      const unsigned char *e, uint64_t off)
{
	const unsigned char *t;
	size_t lim = (size_t)(e - *s - 1);
	int err;

	if (lim > RS_SESSION_MAX_STRING + 1)
		lim = RS_SESSION_MAX_STRING + 1;
	t = find_quote(*s + 1, *s + 1, *s + 1 + lim);
	if (t) {
		if ((size_t)(t - *s - 1) > RS_SESSION_MAX_STRING)
			return too_long(p, PART_STRING, off);
		err = on_string(p, (const char *)*s + 1, (size_t)(t - *s - 1), off);
		*s = t + 1;
		return err;
	}
	if (*s + 1 + lim < e)
		return too_long(p, PART_STRING, off);
	err = start_partial(p, PART_STRING, *s + 1, e, off);
	*s = e;
	return err;
}

static inline int feed_number(struct rs_session_parser *p, const unsigned char **s,
			      const unsigned char *e, uint64_t off)
{
	const unsigned char *t;
	int err;

	for (t = *s; t < e && is_number_char(*t); t++)
		;
	if ((size_t)(t - *s) > RS_SESSION_MAX_NUMBER)
		err = too_long(p, PART_NUMBER, off);
	else if (t == e)
		err = start_partial(p, PART_NUMBER, *s, e, off);
	else
		err = on_number(p, (const char *)*s, (size_t)(t - *s), off);
	*s = t;
	return err;
}

static inline int feed_literal(struct rs_session_parser *p, const unsigned char **s,
			       const unsigned char *e, uint64_t off)
{
	const unsigned char *t;
	int err;

	for (t = *s; t < e && is_literal_char(*t) && t - *s <= RS_SESSION_MAX_NUMBER; t++)
		;
	if ((size_t)(t - *s) > RS_SESSION_MAX_NUMBER)
		err = too_long(p, PART_LITERAL, off);
	else if (t == e)
		err = start_partial(p, PART_LITERAL, *s, e, off);
	else
		err = on_literal(p, (const char *)*s, (size_t)(t - *s), off);
	*s = t;
	return err;
}

/* Not split further: what is left are the one-line cases of the per-byte switch. */
int rs_session_parser_feed(struct rs_session_parser *p, const void *bytes, size_t n)
{
	const unsigned char *start = bytes, *s = start, *e = start + n;
	int err = 0;

	if (p->failed)
		return rs_error_restore(&p->saved);
	if (n == 0)
		return 0;
#define OFF(ptr) (p->consumed + (uint64_t)((ptr) - start))
	if (p->partial) {
		err = resume_partial(p, &s, e);
		if (err)
			goto out;
	}
	while (s < e) {
		int c = *s;

		switch (c) {
		case ' ': case '\t': case '\n': case '\r':
			s++;
			continue;
		case '"':
			err = feed_string(p, &s, e, OFF(s));
			break;
		case ',':
			if (p->expect != EXP_COMMA_OR_CLOSE) {
				err = syntax_error(p, OFF(s), c);
				goto out;
			}
			p->expect = is_object_role(p->lv[p->depth - 1].role) ? EXP_KEY : EXP_VALUE;
			s++;
			continue;
		case ':':
			if (p->expect != EXP_COLON) {
				err = syntax_error(p, OFF(s), c);
				goto out;
			}
			p->expect = EXP_VALUE;
			s++;
			continue;
		case '[': case '{':
			err = on_open(p, c, OFF(s));
			s++;
			break;
		case ']': case '}':
			err = on_close(p, c, OFF(s));
			s++;
			break;
		case '-': case '0': case '1': case '2': case '3': case '4':
		case '5': case '6': case '7': case '8': case '9':
			err = feed_number(p, &s, e, OFF(s));
			break;
		case 't': case 'f': case 'n':
			err = feed_literal(p, &s, e, OFF(s));
			break;
		default:
			err = syntax_error(p, OFF(s), c);
			break;
		}
		if (err)
			goto out;
	}
out:
#undef OFF
	p->consumed += n;
	return err;
}

int rs_session_parser_finish(struct rs_session_parser *p)
{
	int err = 0;

	if (p->failed)
		return rs_error_restore(&p->saved);
	if (p->partial == PART_NUMBER || p->partial == PART_LITERAL) {
		/* a number or literal ends at the end of input; only a bare
		 * top-level scalar could end that way, and that is refused */
		int kind = p->partial;

		p->partial = PART_NONE;
		err = on_token(p, kind, p->pending.ptr, p->pending.len, p->partial_start);
		if (err)
			return err;
	}
	if (p->consumed == 0 || (p->depth == 0 && p->expect == EXP_VALUE && !p->partial))
		return fail(p, RS_ECORRUPT, "not a pyinstrument session: the input is empty");
	if (p->partial == PART_STRING || p->expect != EXP_EOF) {
		char where[96] = "";
		int in_records = 0, i;

		for (i = 0; i < p->depth; i++)
			if (p->lv[i].role == ROLE_RECORDS)
				in_records = 1;
		if (p->partial == PART_STRING)
			snprintf(where, sizeof(where), ", in a string that starts at byte %llu",
				 (unsigned long long)p->partial_start);
		return fail(p, RS_ECORRUPT,
			    "truncated session: input ends at byte %llu inside %s (after %llu frame records%s)",
			    (unsigned long long)p->consumed,
			    in_records ? "frame_records" : "the top-level object",
			    (unsigned long long)p->samples, where);
	}
	return 0;
}

/* ---- life cycle and accessors ---------------------------------------- */

int rs_session_parser_new(struct rs_session_parser **out, const struct rs_session_callbacks *cb)
{
	struct rs_session_parser *p = calloc(1, sizeof(*p));

	if (!p)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (cb)
		p->cb = *cb;
	if (getrandom(&p->seed, sizeof(p->seed), GRND_NONBLOCK) != (ssize_t)sizeof(p->seed))
		p->seed = (uint64_t)(uintptr_t)p ^ (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
	rs_buf_init(&p->pending, 0);
	rs_buf_init(&p->scratch, 0);
	rs_buf_init(&p->keybuf, 0);
	p->expect = EXP_VALUE;
	*out = p;
	return 0;
}

void rs_session_parser_free(struct rs_session_parser *p)
{
	struct arena_block *b, *next;

	if (!p)
		return;
	for (b = p->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	rs_intern_release(&p->raw_tab);
	rs_intern_release(&p->frame_tab);
	rs_intern_release(&p->func_tab);
	rs_intern_release(&p->file_tab);
	free(p->frames);
	free(p->funcs);
	free(p->files);
	free(p->stack);
	free(p->hints);
	free(p->start_stack);
	free(p->target);
	free(p->program);
	list_free(&p->sys_path);
	list_free(&p->sys_prefixes);
	rs_buf_release(&p->pending);
	rs_buf_release(&p->scratch);
	rs_buf_release(&p->keybuf);
	free(p);
}

const struct rs_session_header *rs_session_parser_header(const struct rs_session_parser *p)
{
	return &p->hdr;
}

uint32_t rs_session_parser_frame_count(const struct rs_session_parser *p)
{
	return p->nframes;
}

uint32_t rs_session_parser_function_count(const struct rs_session_parser *p)
{
	return p->nfuncs;
}

uint32_t rs_session_parser_file_count(const struct rs_session_parser *p)
{
	return p->nfiles;
}

uint64_t rs_session_parser_sample_count(const struct rs_session_parser *p)
{
	return p->samples;
}

const struct rs_session_frame *rs_session_parser_frame(const struct rs_session_parser *p,
							uint32_t frame_id)
{
	assert(frame_id < p->nframes);
	return p->frames[frame_id];
}

const struct rs_session_function *rs_session_parser_function(const struct rs_session_parser *p,
							      uint32_t function_id)
{
	assert(function_id < p->nfuncs);
	return p->funcs[function_id];
}

const char *rs_session_parser_file(const struct rs_session_parser *p, uint32_t file_id)
{
	assert(file_id < p->nfiles);
	return p->files[file_id];
}

uint64_t rs_session_parser_offset(const struct rs_session_parser *p)
{
	return p->consumed;
}
