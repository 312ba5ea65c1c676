/*
 * Escapers for the readers of untrusted text (see results/escape.h).
 *
 * All five walk the string the same way: decode one UTF-8 sequence, and
 * either write it through the reader's own rule or, when it is a control
 * character, a bidirectional override or not UTF-8 at all, write its
 * visible form ("\x1b", "\u009b") through that same rule. Decoding is
 * strict (no overlong forms, no surrogates, nothing past U+10FFFF), so a
 * C1 control cannot hide in an overlong sequence.
 */
#include "results/escape.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * One code point at `s`: its value in *cp and its length, or 0 when the
 * byte at `s` does not start a valid sequence.
 */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	size_t n, i;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		c = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		c = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		c = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/*
 * Characters no reader should get raw: C0 controls, DEL, C1 controls,
 * and the bidirectional embeddings, overrides and isolates that reorder
 * what a reader sees (U+202A..U+202E, U+2066..U+2069).
 */
static int is_hidden(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* One reader's rule for one printable ASCII byte or a whole sequence. */
typedef int (*put_fn)(struct rs_buf *out, const char *p, size_t n, void *ctx);

/* What a walk does with '\n', '\r' and '\t'. */
enum lines {
	LINES_SHOW,  /* visible forms, like every other control */
	LINES_SPACE, /* one space each: a Markdown cell or span holds one line */
	LINES_KEEP,  /* '\n' and '\t' raw (a page of text), '\r' visible */
	LINES_PUT,   /* '\n' and '\t' to the reader's rule, '\r' visible */
};

/*
 * Walk `s`: printable characters go to `put` as they are, hidden ones
 * and invalid bytes as their visible form, each of its ASCII bytes
 * through `put` too, so that the reader's rule applies to it as well.
 */
static int walk(struct rs_buf *out, const char *s, put_fn put, void *ctx,
		enum lines lines)
{
	const unsigned char *p = (const unsigned char *)s;
	char vis[12];
	uint32_t cp = 0;
	size_t n, i;
	int err = 0, line = 0;

	if (!s)
		return 0;
	while (*p && !err) {
		n = utf8_next(p, &cp);
		line = n == 1 && (cp == '\n' || cp == '\t');
		if (n == 0) {
			snprintf(vis, sizeof(vis), "\\x%02x", p[0]);
			n = 1;
		} else if (!is_hidden(cp)) {
			err = put(out, (const char *)p, n, ctx);
			p += n;
			continue;
		} else if (lines == LINES_SPACE && (line || cp == '\r')) {
			err = put(out, " ", 1, ctx);
			p += n;
			continue;
		} else if (lines == LINES_KEEP && line) {
			err = rs_buf_putc(out, (char)cp);
			p += n;
			continue;
		} else if (lines == LINES_PUT && line) {
			err = put(out, (const char *)p, 1, ctx);
			p += n;
			continue;
		} else if (cp < 0x80) {
			snprintf(vis, sizeof(vis), "\\x%02x", (unsigned)cp);
		} else {
			snprintf(vis, sizeof(vis), "\\u%04x", (unsigned)cp);
		}
		for (i = 0; vis[i] && !err; i++)
			err = put(out, &vis[i], 1, ctx);
		p += n;
	}
	return err;
}

/* The entity of an HTML-special byte, or NULL. */
static const char *html_entity(char c)
{
	switch (c) {
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '&': return "&amp;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

static int put_raw(struct rs_buf *out, const char *p, size_t n, void *ctx)
{
	(void)ctx;
	return rs_buf_put(out, p, n);
}

/*
 * Markdown text. The backslash-escaped set is every ASCII punctuation
 * character with an inline meaning in CommonMark or GFM (code, emphasis,
 * links and images, strikethrough, the table's column break, GitHub's
 * math), which CommonMark allows to escape anywhere; '<', '>' and '&'
 * become entities so that no renderer, strict or not, sees a tag.
 */
static int put_md_text(struct rs_buf *out, const char *p, size_t n, void *ctx)
{
	(void)ctx;
	if (n != 1)
		return rs_buf_put(out, p, n);
	if (strchr("<>&", p[0]))
		return rs_buf_puts(out, html_entity(p[0]));
	if (strchr("\\`*_[]~|$!", p[0])) {
		int err = rs_buf_putc(out, '\\');

		if (err)
			return err;
	}
	return rs_buf_putc(out, p[0]);
}

int rs_escape_md_text(struct rs_buf *out, const char *s)
{
	return walk(out, s, put_md_text, NULL, LINES_SPACE);
}

static int put_md_code(struct rs_buf *out, const char *p, size_t n, void *ctx)
{
	const unsigned *flags = ctx;

	if (n == 1 && p[0] == '|' && (*flags & RS_ESCAPE_IN_TABLE))
		return rs_buf_puts(out, "\\|");
	return rs_buf_put(out, p, n);
}

static int put_ticks(struct rs_buf *out, size_t n)
{
	int err = 0;

	while (n-- && !err)
		err = rs_buf_putc(out, '`');
	return err;
}

/*
 * CommonMark: a code span ends at the first backtick run as long as its
 * opening one, and one space is stripped from each end when both ends
 * have one. So the fence is longer than any run inside, and a space pads
 * each side when the content would otherwise touch the fence with a
 * backtick or lose a space of its own. Control characters do not change
 * the runs: their visible forms hold no backtick.
 */
int rs_escape_md_code(struct rs_buf *out, const char *s, unsigned flags)
{
	size_t len = s ? strlen(s) : 0, run = 0, longest = 0, i;
	int pad, err;

	for (i = 0; i < len; i++) {
		run = s[i] == '`' ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	pad = len == 0 || s[0] == '`' || s[len - 1] == '`' ||
	      strchr(" \n\r\t", s[0]) ||
	      strchr(" \n\r\t", s[len - 1]);
	err = put_ticks(out, longest + 1);
	if (!err && pad)
		err = rs_buf_putc(out, ' ');
	if (!err)
		err = walk(out, s, put_md_code, &flags, LINES_SPACE);
	if (!err && pad)
		err = rs_buf_putc(out, ' ');
	if (!err)
		err = put_ticks(out, longest + 1);
	return err;
}

static int put_html(struct rs_buf *out, const char *p, size_t n, void *ctx)
{
	const char *e = n == 1 ? html_entity(p[0]) : NULL;

	(void)ctx;
	if (n != 1)
		return rs_buf_put(out, p, n);
	return e ? rs_buf_puts(out, e) : rs_buf_putc(out, p[0]);
}

int rs_escape_html_text(struct rs_buf *out, const char *s)
{
	return walk(out, s, put_html, NULL, LINES_KEEP);
}

/* Newlines and tabs as references: an attribute value keeps them. */
static int put_html_attr(struct rs_buf *out, const char *p, size_t n, void *ctx)
{
	if (n == 1 && p[0] == '\n')
		return rs_buf_puts(out, "&#10;");
	if (n == 1 && p[0] == '\t')
		return rs_buf_puts(out, "&#9;");
	return put_html(out, p, n, ctx);
}

int rs_escape_html_attr(struct rs_buf *out, const char *s)
{
	return walk(out, s, put_html_attr, NULL, LINES_PUT);
}

int rs_escape_term(struct rs_buf *out, const char *s, unsigned flags)
{
	return walk(out, s, put_raw, NULL,
		    (flags & RS_ESCAPE_KEEP_LINES) ? LINES_KEEP : LINES_SHOW);
}

int rs_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;

	while (*p) {
		size_t n = utf8_next(p, &cp);

		if (!n)
			return 0;
		p += n;
	}
	return 1;
}
