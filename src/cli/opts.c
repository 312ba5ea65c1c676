/*
 * The one option parser of every command (see opts.h).
 */
#include "cli/opts.h"

#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* --format: -1 (o->status set) when the value is not one this command takes. */
static int take_format(struct rs_cli_opts *o, const char *value)
{
	if (o->take & RS_CLI_OPT_TEXT_JSON) {
		if (rs_format_parse(&o->fmt, value) || o->fmt == RS_FORMAT_MARKDOWN) {
			o->status = rs_cli_fail(RS_EXIT_USAGE, "%s formats are text and json",
						o->command);
			return -1;
		}
		return 0;
	}
	if (rs_format_parse(&o->fmt, value)) {
		o->status = rs_cli_error(RS_EXIT_USAGE);
		return -1;
	}
	return 0;
}

/* A shared option this command takes: 1 taken, 0 not one, -1 bad value. */
static int take_shared(struct rs_cli_opts *o, int opt)
{
	switch (opt) {
	case 'f':
		if (!(o->take & (RS_CLI_OPT_FORMAT | RS_CLI_OPT_TEXT_JSON)))
			return 0;
		return take_format(o, optarg) ? -1 : 1;
	case 'B':
		if (!(o->take & RS_CLI_OPT_BRANCH))
			return 0;
		o->branch = optarg;
		return 1;
	case 'p':
	case 'W':
		if (!(o->take & RS_CLI_OPT_WORKLOAD))
			return 0;
		if (opt == 'p')
			o->per = optarg;
		else
			o->no_workload = 1;
		return 1;
	case 'o':
		if (!(o->take & RS_CLI_OPT_OUTPUT))
			return 0;
		o->output = optarg;
		return 1;
	default:
		return 0;
	}
}

/* An option of o->bind: stored, 1; not one, 0. */
static int take_bound(struct rs_cli_opts *o, int opt)
{
	for (const struct rs_cli_bind *b = o->bind; b && b->code; b++) {
		if (b->code != opt)
			continue;
		if (b->flag)
			*b->flag = 1;
		if (b->value)
			*b->value = optarg;
		return 1;
	}
	return 0;
}

/*
 * getopt's tables for the command's: its long options then --help, and
 * its short options after "+:h" (getopt's '+' kept: stop at the first
 * operand; ':' always, so a missing value is told from an unknown option).
 */
static int build_tables(struct rs_cli_opts *o)
{
	const char *s = o->shortopts ? o->shortopts : "";
	size_t n = 0, k = 0, len;
	int help = 0;

	if (*s == '+')
		o->shorts[k++] = *s++;
	o->shorts[k++] = ':';
	o->shorts[k++] = 'h';
	while (*s == ':' || *s == '+')
		s++;
	len = strlen(s);
	for (const struct option *l = o->longopts; l && l->name; l++) {
		if (n >= RS_CLI_OPTS_MAX)
			return -1;
		help |= !strcmp(l->name, "help");
		o->all[n++] = *l;
	}
	if (k + len + 1 > sizeof(o->shorts))
		return -1;
	memcpy(o->shorts + k, s, len + 1);
	if (!help)
		o->all[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	o->all[n] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

/*
 * The long option of the table that `arg` ("--name[=value]") names, as
 * getopt takes it (the exact name, else a prefix), or NULL.
 */
static const struct option *long_named(const struct rs_cli_opts *o, const char *arg)
{
	size_t len = strcspn(arg + 2, "=");
	const struct option *prefix = NULL;

	for (const struct option *l = o->all; l->name; l++) {
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
static int about_long(const struct rs_cli_opts *o, const char *arg, const struct option **l)
{
	*l = NULL;
	if (!arg || strncmp(arg, "--", 2) || !arg[2])
		return 0;
	*l = long_named(o, arg);
	return !optopt || (*l && (*l)->val == optopt);
}

int rs_cli_opts_next(struct rs_cli_opts *o, int argc, char **argv)
{
	const char *arg;
	char name[128];
	int opt, taken;

	if (!o->started) {
		o->started = 1;
		optind = 1;
		opterr = 0;
		if (build_tables(o)) {
			o->status = rs_cli_fail(RS_EXIT_OTHER, "%s: too many options for the "
						"option parser (src/cli/opts.h)", o->command);
			return -1;
		}
	}
	for (;;) {
		optopt = 0;
		opt = getopt_long(argc, argv, o->shorts, o->all, NULL);
		if (opt == -1)
			return 0;
		if (opt == 'h') {
			fputs(o->usage, stdout);
			o->status = RS_EXIT_OK;
			return -1;
		}
		arg = optind > 0 && optind <= argc ? argv[optind - 1] : NULL;
		if (opt == ':' || opt == '?') {
			const struct option *l;

			if (about_long(o, arg, &l))
				snprintf(name, sizeof(name), "--%.*s", (int)strcspn(arg + 2, "="), arg + 2);
			else
				snprintf(name, sizeof(name), "-%c", optopt ? optopt : '?');
			if (opt == ':')
				o->status = rs_cli_usage(o->command, "option '%s' needs a value", name);
			else if (l && l->val == optopt && l->has_arg == no_argument && strchr(arg, '='))
				o->status = rs_cli_usage(o->command, "option '%s' takes no value", name);
			else if (l && !optopt) /* a prefix of several */
				o->status = rs_cli_usage(o->command, "option '%s' is ambiguous", name);
			else
				o->status = rs_cli_usage(o->command, "unknown option '%s'", name);
			return -1;
		}
		taken = take_shared(o, opt);
		if (taken < 0)
			return -1;
		if (!taken && !take_bound(o, opt))
			return opt;
	}
}

int rs_cli_opts_parse(struct rs_cli_opts *o, int argc, char **argv, rs_cli_take_fn take,
		      void *ctx)
{
	int opt;

	for (;;) {
		opt = rs_cli_opts_next(o, argc, argv);
		if (opt <= 0)
			return opt;
		o->status = take ? take(ctx, o, opt) : RS_EXIT_OK;
		if (o->status)
			return -1;
	}
}
