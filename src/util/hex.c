/* Hex digits and percent-encoding (see hex.h). */
#include "util/hex.h"

#include <string.h>

int rs_hex_val(int c)
{
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return rs_hex_val_lower(c);
}

int rs_hex_is(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (rs_hex_val((unsigned char)*s) < 0)
			return 0;
	return 1;
}

int rs_hex_val_lower(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

int rs_percent_encode(struct rs_buf *out, const char *s, size_t n, enum rs_slash slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_unreserved(c) || (c == '/' && slash == RS_SLASH_KEEP)) {
			err = rs_buf_putc(out, (char)c);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

			err = rs_buf_put(out, esc, 3);
		}
	}
	return err;
}

int rs_percent_encode_str(struct rs_buf *out, const char *s, enum rs_slash slash)
{
	return rs_percent_encode(out, s, strlen(s), slash);
}

int rs_percent_decode(struct rs_buf *out, const char *p, size_t n, int plus_is_space)
{
	size_t i;
	int err = 0;

	for (i = 0; i < n && !err; i++) {
		int hi = i + 2 < n ? rs_hex_val(p[i + 1]) : -1;
		int lo = i + 2 < n ? rs_hex_val(p[i + 2]) : -1;

		if (p[i] == '%' && hi >= 0 && lo >= 0) {
			err = rs_buf_putc(out, (char)(hi << 4 | lo));
			i += 2;
		} else if (p[i] == '+' && plus_is_space) {
			err = rs_buf_putc(out, ' ');
		} else {
			err = rs_buf_putc(out, p[i]);
		}
	}
	return err;
}
