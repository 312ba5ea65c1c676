/*
 * Escapers: one per kind of reader. Every string that came from outside
 * (a branch, a trigger, a message, a --meta value, a function or file
 * name from a session, a field of a committed index line) goes through
 * the escaper of the place it is written to, and only that one:
 *
 *   rs_escape_md_text   Markdown text in a GFM table cell or after a label
 *   rs_escape_md_code   a whole Markdown code span, fences included
 *   rs_escape_html_text HTML element content
 *   rs_escape_html_attr a double-quoted HTML attribute value
 *   rs_escape_term      a line (or lines) written to a terminal
 *
 * Each renders `s` so that the reader sees exactly its characters and
 * nothing else happens: no raw '<' ever reaches a Markdown or HTML
 * renderer outside a code span, no '|' or newline splits a table cell, no
 * ESC, BEL or other control byte reaches a terminal. Control characters
 * (C0, DEL, C1), Unicode bidirectional overrides and bytes that are not
 * UTF-8 are shown in every kind as "\xHH" (a byte) or "\uHHHH" (a code
 * point), so that a reader can see what was there.
 *
 * All append to `out` and return 0 or the buffer's error (out of memory,
 * over its cap); `s` may be NULL (written as nothing).
 */
#ifndef RESULTS_ESCAPE_H
#define RESULTS_ESCAPE_H

#include "results/buf.h"
#include "results/error.h"

/*
 * Markdown inline text, for a GFM table cell or text after a label on a
 * line (not at the start of a line, where '#' or '-' would start a block).
 * Markdown punctuation is backslash-escaped, '<', '>' and '&' become
 * entities, newlines and tabs a space.
 */
RS_MUST_CHECK
int rs_escape_md_text(struct rs_buf *out, const char *s);

/* Flags of rs_escape_md_code. */
#define RS_ESCAPE_IN_TABLE 1u /* the span is inside a GFM table cell */

/*
 * A Markdown code span showing `s` verbatim: the fence is one backtick
 * longer than the longest run of backticks in `s`, padded with a space
 * when `s` starts or ends with a backtick or a space. Newlines become
 * spaces. With RS_ESCAPE_IN_TABLE, '|' is written "\|" (GFM removes the
 * backslash in a table cell, even inside a code span).
 */
RS_MUST_CHECK
int rs_escape_md_code(struct rs_buf *out, const char *s, unsigned flags);

/* HTML text: '<', '>', '&', '"' and '\'' as entities. */
RS_MUST_CHECK
int rs_escape_html_text(struct rs_buf *out, const char *s);

/*
 * A double-quoted HTML attribute value: as HTML text, and newlines, tabs
 * and carriage returns as character references so that the value keeps
 * them. Not a URL check: an href built from outside must be a checked
 * relative path first.
 */
RS_MUST_CHECK
int rs_escape_html_attr(struct rs_buf *out, const char *s);

/* Flags of rs_escape_term. */
#define RS_ESCAPE_KEEP_LINES 1u /* keep '\n' and '\t' (a page of text) */

/*
 * Text for a terminal: every control character, including ESC, BEL, CR,
 * backspace, DEL, the C1 controls (U+0080..U+009F, CSI among them) and
 * newlines unless RS_ESCAPE_KEEP_LINES, shown as "\xHH"/"\uHHHH"; a
 * backslash stays one backslash (the output is for people, not a parser).
 */
RS_MUST_CHECK
int rs_escape_term(struct rs_buf *out, const char *s, unsigned flags);

/*
 * 1 when `s` is all UTF-8 as the escapers decode it (strict: no overlong
 * forms, no surrogates, nothing past U+10FFFF), which is also what
 * jansson's json_string takes; 0 when not.
 */
int rs_utf8_valid(const char *s);

#endif
