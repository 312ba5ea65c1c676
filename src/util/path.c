/*
 * The one checker for names from outside that become paths (path.h).
 *
 * Why byte rules and not realpath(): the names are checked before any
 * folder exists, and the answer must not depend on what a hostile tree
 * already put on the disk. Symlinks already on the disk are the job of
 * rs_path_mkdirs_under, which walks with lstat and never follows one.
 *
 * The `.git` spellings follow git's own fsck/checkout rules (read-tree.c
 * verify_path(), path.c is_ntfs_dotgit(), utf8.c is_hfs_dotgit()): a
 * name that git would refuse to check out on some file system is refused
 * here on every file system, since the same repository may be cloned on
 * a Mac or Windows machine later.
 */
#include "util/path.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "results/error.h"

#define SHOW_MAX 64 /* bytes of a refused name quoted in the message */

/*
 * Quote at most SHOW_MAX bytes of a name for a message: control
 * characters and NUL as \xNN, a longer name shortened with "...".
 */
static void show_name(char *out, size_t outsz, const char *p, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; i < len && i < SHOW_MAX && o + 5 < outsz; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 || c == 0x7f) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	if (i < len && o + 4 < outsz) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/*
 * Length of a code point HFS+ ignores when comparing names, at p (n bytes
 * left), or 0: U+200C..U+200F, U+202A..U+202E, U+206A..U+206F, U+FEFF.
 */
static size_t hfs_ignorable(const unsigned char *p, size_t n)
{
	if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 &&
	    ((p[2] >= 0x8c && p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae)))
		return 3;
	if (n >= 3 && p[0] == 0xe2 && p[1] == 0x81 && p[2] >= 0xaa && p[2] <= 0xaf)
		return 3;
	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		return 3;
	return 0;
}

/* Only dots and spaces from p to p+n (NTFS drops them at the end of a name). */
static int only_dots_spaces(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != '.' && p[i] != ' ')
			return 0;
	return 1;
}

/* One component (no '/') that some file system would take for ".git". */
static int is_dotgit(const char *p, size_t len)
{
	char folded[RS_PATH_MAX_COMPONENT + 1];
	size_t n = 0;

	/* Fold case and drop what HFS+ ignores; then compare like NTFS. */
	for (size_t i = 0; i < len && n < sizeof(folded) - 1;) {
		size_t skip = hfs_ignorable((const unsigned char *)p + i, len - i);
		char c = p[i];

		if (skip) {
			i += skip;
			continue;
		}
		folded[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
		i++;
	}
	folded[n] = '\0';
	if (n >= 4 && memcmp(folded, ".git", 4) == 0 &&
	    (only_dots_spaces(folded + 4, n - 4) || folded[4] == ':'))
		return 1;
	if (n >= 5 && memcmp(folded, "git~1", 5) == 0 && only_dots_spaces(folded + 5, n - 5))
		return 1;
	return 0;
}

/* Why one component is refused, or NULL. */
static const char *component_problem(const char *p, size_t len, unsigned flags)
{
	if (len == 0)
		return "it is empty";
	if (len > RS_PATH_MAX_COMPONENT)
		return "it is longer than 255 bytes";
	if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
		return "'.' and '..' name no file";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\0')
			return "it contains a NUL byte";
		if (c < 0x20 || c == 0x7f)
			return "it contains a control character";
		if (c == '\\')
			return "it contains a backslash";
		if (c == '/')
			return "it contains '/'";
	}
	if (is_dotgit(p, len))
		return "it names git's own folder '.git'";
	if ((flags & RS_PATH_NO_DOTFILES) && p[0] == '.')
		return "it starts with '.'";
	return NULL;
}

int rs_path_check(const char *p, size_t len, unsigned flags, const char *what)
{
	char shown[SHOW_MAX * 4 + 8];
	const char *problem = NULL;

	if (!(flags & RS_PATH_RELATIVE)) {
		problem = component_problem(p, len, flags);
	} else if (len == 0) {
		problem = "it is empty";
	} else if (len > RS_PATH_MAX_RELATIVE) {
		problem = "it is longer than 4096 bytes";
	} else if (p[0] == '/') {
		problem = "it is absolute";
	} else {
		size_t start = 0;

		while (!problem && start <= len) {
			const char *slash = memchr(p + start, '/', len - start);
			size_t end = slash ? (size_t)(slash - p) : len;

			problem = end == start ? "it has an empty component (a doubled or trailing '/')"
					       : component_problem(p + start, end - start, flags);
			start = end + 1;
		}
	}
	if (!problem)
		return 0;
	show_name(shown, sizeof(shown), p, len);
	return rs_error_set(RS_ECORRUPT, "%s '%s' is not %s (%s); refusing to use it as a path "
			    "(results never writes such names: check who committed it)",
			    what, shown, flags & RS_PATH_RELATIVE ? "a safe relative path"
								  : "a plain name", problem);
}

int rs_path_check_component(const char *name, const char *what)
{
	return rs_path_check(name, strlen(name), 0, what);
}

int rs_path_check_relative(const char *path, const char *what)
{
	return rs_path_check(path, strlen(path), RS_PATH_RELATIVE, what);
}

int rs_path_join(struct rs_buf *out, const char *dir, const char *rel, unsigned flags,
		 const char *what)
{
	size_t dlen = strlen(dir);
	int err = rs_path_check(rel, strlen(rel), flags | RS_PATH_RELATIVE, what);

	if (err)
		return err;
	while (dlen > 0 && dir[dlen - 1] == '/')
		dlen--;
	return rs_buf_printf(out, "%.*s/%s", (int)dlen, dir, rel);
}

int rs_path_mkdirs_under(const char *dir, const char *rel)
{
	struct rs_buf path = RS_BUF_INIT;
	const char *p = rel, *slash;
	int err;

	err = rs_buf_puts(&path, dir);
	while (!err && path.len > 1 && path.ptr[path.len - 1] == '/')
		path.ptr[--path.len] = '\0';
	/* Every component but the last is a folder to walk into. */
	for (;;) {
		struct stat st;

		slash = strchr(p, '/');
		if (err || !slash)
			break;
		err = rs_buf_printf(&path, "/%.*s", (int)(slash - p), p);
		if (err)
			break;
		p = slash + 1;
		if (lstat(path.ptr, &st) != 0) {
			if (errno != ENOENT) {
				err = rs_error_errno(RS_EGENERIC, "cannot look at '%s'", path.ptr);
				break;
			}
			if (mkdir(path.ptr, 0755) == 0)
				continue;
			if (errno != EEXIST || lstat(path.ptr, &st) != 0) {
				err = rs_error_errno(RS_EGENERIC, "cannot create '%s'", path.ptr);
				break;
			}
		}
		if (S_ISLNK(st.st_mode))
			err = rs_error_set(RS_ECORRUPT, "'%s' is a symbolic link; refusing to "
					   "write through it (remove it and try again)", path.ptr);
		else if (!S_ISDIR(st.st_mode))
			err = rs_error_set(RS_ECORRUPT, "'%s' is in the way: it should be a "
					   "folder (move it away and try again)", path.ptr);
	}
	rs_buf_release(&path);
	return err;
}
