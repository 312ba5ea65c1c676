/*
 * Fuzz the checker for names that become paths (util/path.h). Besides
 * memory safety, what it accepts must be safe by construction: checked
 * against an independent, deliberately simple model of the rules. The
 * first byte selects the flags; the rest is the name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/error.h"
#include "util/path.h"

/* An accepted component: none of the bytes and spellings a path must not hold. */
static void check_component(const char *p, size_t n, unsigned flags)
{
	char low[8];

	if (n == 0 || n > RS_PATH_MAX_COMPONENT)
		abort();
	if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		abort();
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
			abort();
	}
	if ((flags & RS_PATH_NO_DOTFILES) && p[0] == '.')
		abort();
	/* ".git" in any case, alone or followed by dots, spaces or ':'. */
	if (n >= 4) {
		for (size_t i = 0; i < 4; i++)
			low[i] = (char)((p[i] >= 'A' && p[i] <= 'Z') ? p[i] + 32 : p[i]);
		if (memcmp(low, ".git", 4) == 0) {
			size_t i = 4;

			while (i < n && (p[i] == '.' || p[i] == ' '))
				i++;
			if (i == n || (n > 4 && p[4] == ':'))
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + 1;
	struct rs_buf out = RS_BUF_INIT;
	unsigned flags;
	size_t n, start = 0;

	if (size == 0)
		return 0;
	flags = data[0] & (RS_PATH_RELATIVE | RS_PATH_NO_DOTFILES);
	n = size - 1;
	if (rs_path_check(p, n, flags, "fuzz") != 0) {
		/* A refusal always explains itself. */
		if (rs_error_last() != RS_ECORRUPT || !strstr(rs_error_message(), "fuzz '"))
			abort();
		return 0;
	}
	if (!(flags & RS_PATH_RELATIVE)) {
		check_component(p, n, flags);
		return 0;
	}
	if (n > RS_PATH_MAX_RELATIVE || p[0] == '/')
		abort();
	while (start <= n) {
		const char *slash = memchr(p + start, '/', n - start);
		size_t end = slash ? (size_t)(slash - p) : n;

		check_component(p + start, end - start, flags);
		start = end + 1;
	}
	/* The join of an accepted path is accepted again and stays below DIR. */
	{
		char *s = malloc(n + 1);

		if (!s)
			abort();
		memcpy(s, p, n);
		s[n] = '\0';
		if (rs_path_join(&out, "DIR", s, flags, "fuzz") != 0 ||
		    strncmp(out.ptr, "DIR/", 4) != 0 || strcmp(out.ptr + 4, s) != 0)
			abort();
		free(s);
	}
	rs_buf_release(&out);
	return 0;
}
