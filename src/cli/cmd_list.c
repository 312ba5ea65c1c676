/*
 * `results list`: the recorded runs, newest first, from the committed
 * index alone (no run folder is opened, no LFS object is needed).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "repo/repo.h"
#include "repo/runindex.h"
#include "results/error.h"

#define DEFAULT_LIMIT 20

static const char usage[] =
	"usage: results list [--json] [--limit N] [--branch NAME]\n"
	"\n"
	"List the recorded runs, newest first, from the committed index\n"
	"(index/*.jsonl): run id, profiled commit, branch, trigger, duration,\n"
	"CPU time and samples. Works in a clone without any session content.\n"
	"\n"
	"options:\n"
	"  --json          one JSON array of index entries (see docs/run-format.md)\n"
	"  --limit N       show the N most recent runs (default 20; 0: all)\n"
	"  --branch NAME   only runs of that profiled branch\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"7 corrupt index, 8 other error.\n";

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "limit", required_argument, NULL, 'n' },
	RS_CLI_OPTION_BRANCH,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

static void print_metric(json_t *metrics, const char *key, const char *fmt, int width)
{
	json_t *v = json_object_get(metrics, key);

	if (json_is_number(v))
		printf(fmt, width, json_number_value(v));
	else
		printf("%*s", width, "-");
}

static void print_row(const struct rs_run_entry *e)
{
	printf("%-40s %-8.8s %-16s %-10s ", e->id, e->commit, e->branch, e->trigger);
	print_metric(e->metrics, "duration", "%*.3f", 10);
	putchar(' ');
	print_metric(e->metrics, "cpu_time", "%*.3f", 10);
	putchar(' ');
	print_metric(e->metrics, "samples", "%*.0f", 9);
	putchar('\n');
}

/* -1 when out of memory. */
static int append_row(json_t *arr, const struct rs_run_entry *e)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:O}",
			      "id", e->id, "commit", e->commit,
			      "branch", e->branch, "trigger", e->trigger,
			      "recorded_at", e->recorded_at, "path", e->path,
			      "metrics", e->metrics);

	return !o || json_array_append_new(arr, o) < 0 ? -1 : 0;
}

int cmd_list(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_runindex idx;
	const char *branch = NULL;
	json_t *arr = NULL;
	size_t limit = DEFAULT_LIMIT, shown = 0, skipped = 0;
	struct rs_cli_opts opts = {
		.command = "list", .usage = usage, .shortopts = ":h", .longopts = options,
		.take = RS_CLI_OPT_BRANCH,
	};
	int opt, err, json = 0, status = RS_EXIT_OK;

	rs_runindex_init(&idx);
	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0) {
		char *end;

		switch (opt) {
		case 'j': json = 1; break;
		case 'n':
			limit = strtoul(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-') {
				status = rs_cli_fail(RS_EXIT_USAGE, "--limit '%s' is not a count",
						     optarg);
				goto out;
			}
			break;
		}
	}
	if (opt < 0) {
		status = opts.status;
		goto out;
	}
	branch = opts.branch;
	if (optind < argc) {
		status = rs_cli_fail(RS_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	status = rs_cli_open_repo(&repo);
	if (status != RS_EXIT_OK)
		goto out;
	/* Without a branch filter only the newest shards need reading. */
	err = rs_runindex_load(&idx, repo, NULL, branch ? 0 : limit);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (json && !(arr = json_array())) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (!json && idx.count)
		printf("%-40s %-8s %-16s %-10s %10s %10s %9s\n", "RUN", "COMMIT", "BRANCH",
		       "TRIGGER", "DURATION", "CPU", "SAMPLES");
	for (size_t i = idx.count; i-- > 0;) {
		const struct rs_run_entry *e = &idx.runs[i];

		if (branch && strcmp(e->branch, branch) != 0)
			continue;
		if (limit && shown >= limit) {
			skipped++;
			continue;
		}
		shown++;
		if (!json) {
			print_row(e);
		} else if (append_row(arr, e)) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				     JSON_REAL_PRECISION(15));

		if (!s) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
		puts(s);
		free(s);
	} else if (shown == 0) {
		printf(branch ? "no runs of branch '%s'\n" : "no runs recorded yet\n", branch);
	} else if (skipped || (!branch && limit && idx.count >= limit)) {
		/* A bounded load cannot know how many older runs exist. */
		fprintf(stderr, "(showing the %zu most recent; --limit 0 shows all)\n", shown);
	}
out:
	json_decref(arr);
	rs_runindex_release(&idx);
	rs_repo_free(repo);
	return status;
}
