/*
 * `results list`: the recorded runs, newest first, from the committed
 * index alone (no run folder is opened, no LFS object is needed).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/runs.h"

#define DEFAULT_LIMIT 20

static const char usage[] =
	"usage: results list [--json] [--limit N] [--branch NAME]\n"
	"       results list --first-profiled FILE\n"
	"\n"
	"List the recorded runs, newest first, from the committed index\n"
	"(index/*.jsonl): run id, profiled commit, branch, trigger, duration,\n"
	"CPU time and samples. Works in a clone without any session content.\n"
	"\n"
	"options:\n"
	"  --json          one JSON array of index entries (see docs/run-format.md)\n"
	"  --limit N       show the N most recent runs (default 20; 0: all)\n"
	"  --branch NAME   only runs of that profiled branch\n"
	"  --first-profiled FILE\n"
	"                  print the first commit of FILE (\"-\": standard input; one\n"
	"                  full commit id a line, at most 100000, e.g. the output of\n"
	"                  git rev-list --first-parent) that has a recorded run, and\n"
	"                  nothing when none has; reads the commit map of the index\n"
	"                  (index/commits/), not every shard\n"
	"\n"
	"exit status: 0 ok, 2 bad usage, 3 not a results repository,\n"
	"7 corrupt index, 8 other error.\n";

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "limit", required_argument, NULL, 'n' },
	{ "first-profiled", required_argument, NULL, 'f' },
	RS_CLI_OPTION_BRANCH,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

static void print_metric(const struct rs_run_entry *e, const char *key, const char *fmt,
			 int width)
{
	double v;

	if (rs_run_entry_metric(e, key, &v) == 0) {
		printf(fmt, width, v);
	} else {
		rs_error_clear(); /* a run without this metric shows "-" */
		printf("%*s", width, "-");
	}
}

/* Every field is a committed index line's: escaped for the terminal. */
static void print_row(const struct rs_run_entry *e)
{
	struct rs_buf f[4] = { RS_BUF_INIT, RS_BUF_INIT, RS_BUF_INIT, RS_BUF_INIT };

	printf("%-40s %-8.8s %-16s %-10s ", rs_cli_term(&f[0], rs_run_entry_id(e)),
	       rs_cli_term(&f[1], rs_run_entry_commit(e)), rs_cli_term(&f[2], rs_run_entry_branch(e)),
	       rs_cli_term(&f[3], rs_run_entry_trigger(e)));
	for (size_t i = 0; i < 4; i++)
		rs_buf_release(&f[i]);
	print_metric(e, "duration", "%*.3f", 10);
	putchar(' ');
	print_metric(e, "cpu_time", "%*.3f", 10);
	putchar(' ');
	print_metric(e, "samples", "%*.0f", 9);
	putchar('\n');
}

struct list_args {
	const char *branch;
	size_t limit;
	int json, limit_given;
	const char *first_profiled; /* FILE of --first-profiled */
};

/* The options into `a`: 0, or -1 with *status to return. */
static int parse_args(struct list_args *a, int argc, char **argv, int *status)
{
	struct rs_cli_opts opts = {
		.command = "list", .usage = usage, .shortopts = ":h", .longopts = options,
		.take = RS_CLI_OPT_BRANCH,
	};
	char *end;
	int opt;

	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt <= 0)
			break;
		if (opt == 'j') {
			a->json = 1;
		} else if (opt == 'f') {
			a->first_profiled = optarg;
		} else if (opt == 'n') {
			a->limit_given = 1;
			a->limit = strtoul(optarg, &end, 10);
			if (!*optarg || *end || optarg[0] == '-') {
				*status = rs_cli_fail(RS_EXIT_USAGE, "--limit '%s' is not a count",
						      optarg);
				return -1;
			}
		}
	}
	*status = opts.status;
	if (opt < 0)
		return -1;
	a->branch = opts.branch;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0) {
		*status = opts.status;
		return -1;
	}
	if (a->first_profiled && (a->json || a->limit_given || a->branch)) {
		*status = rs_cli_fail(RS_EXIT_USAGE, "--first-profiled takes no --json, --limit "
				      "or --branch");
		return -1;
	}
	return 0;
}

/* Room for a line of --first-profiled's FILE: a SHA-256 id, a CR, the newline, the NUL. */
#define CANDIDATE_LINE 68

/*
 * The commit ids of `path` ("-": stdin) into `*out` (the caller's, with
 * its strings), `*n` of them: blank lines skipped, surrounding blanks and
 * a CR dropped; each 4 to 64 hex digits, at most RS_RUNS_MAX_CANDIDATES.
 */
static int read_candidates(char ***out, size_t *n, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char line[CANDIDATE_LINE], **list = NULL;
	size_t count = 0, lineno = 0;
	int status = RS_EXIT_OK;

	if (!f)
		return rs_cli_fail(RS_EXIT_USAGE, "cannot open '%s': %s", path, strerror(errno));
	while (status == RS_EXIT_OK && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line), b = 0, hex = 0;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			status = rs_cli_fail(RS_EXIT_USAGE, "line %zu of '%s' is longer than a "
					     "commit id", lineno, path);
			break;
		}
		while (len && strchr(" \t\r\n", line[len - 1]))
			line[--len] = '\0';
		while (line[b] == ' ' || line[b] == '\t')
			b++;
		if (!line[b])
			continue;
		while (isxdigit((unsigned char)line[b + hex]))
			hex++;
		if (line[b + hex] || hex < 4 || hex > 64) {
			status = rs_cli_fail(RS_EXIT_USAGE, "line %zu of '%s' is not a commit id",
					     lineno, path);
			break;
		}
		if (count == RS_RUNS_MAX_CANDIDATES) {
			status = rs_cli_fail(RS_EXIT_USAGE, "'%s' holds more than %d commits", path,
					     RS_RUNS_MAX_CANDIDATES);
			break;
		}
		/* not rs_array_grow: programs use the public headers only */
		if (count % 64 == 0) {
			char **grown = realloc(list, (count + 64) * sizeof(*list));

			if (!grown) {
				status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
				break;
			}
			list = grown;
		}
		list[count] = strdup(line + b);
		if (!list[count]) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			break;
		}
		count++;
	}
	if (status == RS_EXIT_OK && ferror(f))
		status = rs_cli_fail(RS_EXIT_USAGE, "cannot read '%s'", path);
	if (f != stdin)
		fclose(f);
	*out = list;
	*n = count;
	return status;
}

/* --first-profiled: the first commit of the file that has a run, or nothing. */
static int first_profiled(struct rs_repo *repo, const char *path)
{
	char **list = NULL;
	size_t n = 0, at = 0;
	int err, found = 0, status;

	status = read_candidates(&list, &n, path);
	if (status)
		goto out;
	err = rs_runs_first_profiled(&at, &found, repo, NULL, (const char *const *)list, n);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (found && (printf("%s\n", list[at]) < 0 || fflush(stdout)))
		status = rs_cli_fail(RS_EXIT_OTHER, "cannot write the output");
out:
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return status;
}

/* The table (a header whenever runs were loaded), and a note when older runs are left out. */
static void print_table(const struct rs_run_entry **shown, size_t n, const struct list_args *a,
			size_t loaded, int skipped)
{
	if (loaded)
		printf("%-40s %-8s %-16s %-10s %10s %10s %9s\n", "RUN", "COMMIT", "BRANCH",
		       "TRIGGER", "DURATION", "CPU", "SAMPLES");
	for (size_t i = 0; i < n; i++)
		print_row(shown[i]);
	if (n == 0) {
		printf(a->branch ? "no runs of branch '%s'\n" : "no runs recorded yet\n", a->branch);
		return;
	}
	/* A bounded load cannot know how many older runs exist. */
	if (skipped || (!a->branch && a->limit && loaded >= a->limit))
		fprintf(stderr, "(showing the %zu most recent; --limit 0 shows all)\n", n);
}

static int print_json(const struct rs_run_entry **shown, size_t n)
{
	struct rs_buf text = RS_BUF_INIT;
	int err = rs_run_entries_json(&text, shown, n);

	if (err) {
		rs_buf_release(&text);
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	}
	puts(text.ptr);
	rs_buf_release(&text);
	return RS_EXIT_OK;
}

int cmd_list(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_runs *runs = NULL;
	const struct rs_run_entry **shown = NULL;
	struct list_args a = { NULL, DEFAULT_LIMIT, 0, 0, NULL };
	size_t count, want, n = 0;
	int err, status;

	if (parse_args(&a, argc, argv, &status) < 0)
		goto out;
	status = rs_cli_open_repo(&repo);
	if (status != RS_EXIT_OK)
		goto out;
	if (a.first_profiled) {
		status = first_profiled(repo, a.first_profiled);
		goto out;
	}
	/* Only the newest shards that hold the runs shown (and one more) need reading. */
	err = rs_runs_open_window(&runs, repo, NULL, a.limit && a.branch ? a.limit + 1 : a.limit,
				  a.branch, 0);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	/* One more than shown tells whether runs were left out. */
	count = rs_runs_count(runs);
	want = a.limit && a.limit < count ? a.limit + 1 : count;
	err = rs_runs_newest(&shown, &n, runs, a.branch, want);
	if (err) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (a.json)
		status = print_json(shown, a.limit && n > a.limit ? a.limit : n);
	else
		print_table(shown, a.limit && n > a.limit ? a.limit : n, &a, count,
			    a.limit && n > a.limit);
out:
	free(shown);
	rs_runs_free(runs);
	rs_repo_free(repo);
	return status;
}
