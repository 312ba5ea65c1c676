/*
 * The command-line parser of both programs (see results/args.h): the
 * tables getopt_long is given, and the one wording of what it refuses.
 */
#include "results/args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/escape.h"

/*
 * getopt's tables: the program's long options then --help, and its short
 * options after "+:h" (a leading '+' kept: stop at the first operand; ':'
 * always, so that a missing value is told from an unknown option).
 */
static int build_tables(struct rs_args *a)
{
	const char *s = a->shortopts ? a->shortopts : "";
	size_t n = 0, k = 0, len;
	int help = 0;

	if (*s == '+')
		a->shorts[k++] = *s++;
	a->shorts[k++] = ':';
	a->shorts[k++] = 'h';
	while (*s == ':' || *s == '+')
		s++;
	len = strlen(s);
	for (const struct option *l = a->longopts; l && l->name; l++) {
		if (n >= RS_ARGS_MAX)
			return rs_error_set(RS_EUSAGE, "too many options for the option parser "
					    "(results/args.h)");
		help |= !strcmp(l->name, "help");
		a->all[n++] = *l;
	}
	if (k + len + 1 > sizeof(a->shorts))
		return rs_error_set(RS_EUSAGE, "too many short options for the option parser "
				    "(results/args.h)");
	memcpy(a->shorts + k, s, len + 1);
	if (!help)
		a->all[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	a->all[n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

/*
 * The long option of the table that `arg` ("--name[=value]") names, as
 * getopt takes it (the exact name, else a prefix), or NULL.
 */
static const struct option *long_named(const struct rs_args *a, const char *arg)
{
	size_t len = strcspn(arg + 2, "=");
	const struct option *prefix = NULL;

	for (const struct option *l = a->all; l->name; l++) {
		if (strncmp(l->name, arg + 2, len))
			continue;
		if (l->name[len] == '\0')
			return l;
		if (!prefix)
			prefix = l;
	}
	return prefix;
}

/*
 * Whether getopt's ':' or '?' is about the long option `arg` (then `*l` is
 * it, or NULL when none is named so): else it is about the short option
 * optopt, which may sit in a group ("-xq") after an earlier `arg`.
 */
static int about_long(const struct rs_args *a, const char *arg, const struct option **l)
{
	*l = NULL;
	if (!arg || strncmp(arg, "--", 2) || !arg[2])
		return 0;
	*l = long_named(a, arg);
	return !optopt || (*l && (*l)->val == optopt);
}

/* What getopt refused (its ':' or '?'), as one of results/args.h's messages. */
static int refused(const struct rs_args *a, int opt, const char *arg)
{
	const struct option *l;
	char name[128];

	if (about_long(a, arg, &l))
		snprintf(name, sizeof(name), "--%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	else
		snprintf(name, sizeof(name), "-%c", optopt ? optopt : '?');
	if (opt == ':')
		return rs_error_set(RS_EUSAGE, "option '%s' needs a value", name);
	if (l && l->val == optopt && l->has_arg == no_argument && strchr(arg, '='))
		return rs_error_set(RS_EUSAGE, "option '%s' takes no value", name);
	if (l && !optopt) /* a prefix of several */
		return rs_error_set(RS_EUSAGE, "option '%s' is ambiguous", name);
	return rs_error_set(RS_EUSAGE, "unknown option '%s'", name);
}

int rs_args_next(struct rs_args *a, int argc, char **argv)
{
	const char *arg;
	int err, opt;

	if (!a->started) {
		err = build_tables(a);
		if (err)
			return err;
		a->started = 1;
		/*
		 * 0, not 1: glibc then forgets an earlier scan wholly, its
		 * ordering too ('+' is read only when a scan starts), so the
		 * dispatcher's '+' scan does not make a command's stop at its
		 * first operand.
		 */
		optind = 0;
		opterr = 0;
	}
	optopt = 0;
	opt = getopt_long(argc, argv, a->shorts, a->all, NULL);
	if (opt == -1)
		return 0;
	if (opt != ':' && opt != '?')
		return opt;
	arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
	return refused(a, opt, arg);
}

int rs_args_operands(int argc, char **argv, int max)
{
	if (max < 0 || optind > argc || argc - optind <= max)
		return 0;
	return rs_error_set(RS_EUSAGE, "unexpected argument '%s'", argv[optind + max]);
}

int rs_args_usage_line(struct rs_buf *out, const char *program, const char *message)
{
	struct rs_buf line = RS_BUF_INIT;
	int err;

	err = rs_buf_printf(&line, "%s: %s (see '%s --help')", program, message, program);
	if (err)
		goto out;
	err = rs_escape_term(out, line.ptr, 0);
out:
	rs_buf_release(&line);
	return err;
}

int rs_args_int(const char *s, const char *what, long min, long max, long *out)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = s && (*s == '-' || (*s >= '0' && *s <= '9')) ? strtol(s, &end, 10) : 0;
	if (!s || !end || end == s || *end || errno || v < min || v > max)
		return rs_error_set(RS_EUSAGE, "%s '%s' is not a whole number from %ld to %ld",
				    what, s ? s : "", min, max);
	*out = v;
	return 0;
}
