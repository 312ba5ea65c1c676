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

int rs_cli_opts_next(struct rs_cli_opts *o, int argc, char **argv)
{
	int opt, taken;

	if (!o->args.started) {
		o->args.shortopts = o->shortopts;
		o->args.longopts = o->longopts;
	}
	for (;;) {
		opt = rs_args_next(&o->args, argc, argv);
		if (opt == 0)
			return 0;
		if (opt < 0) {
			o->status = rs_cli_usage(o->command, "%s", rs_error_message());
			return -1;
		}
		if (opt == 'h') {
			fputs(o->usage, stdout);
			o->status = RS_EXIT_OK;
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

int rs_cli_opts_operands(struct rs_cli_opts *o, int argc, char **argv, int max)
{
	if (!rs_args_operands(argc, argv, max))
		return RS_EXIT_OK;
	o->status = rs_cli_usage(o->command, "%s", rs_error_message());
	return -1;
}
