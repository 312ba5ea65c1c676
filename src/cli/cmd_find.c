/*
 * `results find <from>..<to>`: where, over a range of recorded runs, did
 * a metric change most? The largest step (see rs_changepoint_best) over
 * the runs between the two, in recording order, on one branch.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render.h"
#include "analysis/runview.h"
#include "analysis/series.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/runsel.h"
#include "results/error.h"

static const char usage[] =
	"usage: results find <from>..<to> [--metric NAME] [--branch NAME]\n"
	"                    [--per KEY | --no-workload] [--format text|json]\n"
	"\n"
	"Locate the largest step change of a metric over the recorded runs from\n"
	"<from> to <to> (run ids or profiled commits, either order), on the\n"
	"branch of <to> unless --branch says otherwise, and print the runs and\n"
	"commits on each side of it. The metric defaults to duration, judged per\n"
	"unit of workload when the runs record one (months, population ... or\n"
	"--per KEY). Reads only the run index.\n"
	"\n"
	"exit status: 0 ok, 2 bad usage or fewer than two runs in the range,\n"
	"3 not a results repository, 4 unknown or ambiguous run or commit, 8 other.\n";

static const struct option options[] = {
	{ "metric", required_argument, NULL, 'm' },
	RS_CLI_OPTION_BRANCH,
	RS_CLI_OPTION_PER,
	RS_CLI_OPTION_NO_WORKLOAD,
	RS_CLI_OPTION_FORMAT,
	RS_CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

/* The metric over the range's runs on one branch, oldest first. */
struct find_series {
	const struct rs_run_entry **runs;
	double *vals;        /* NAN where a run lacks the metric or workload */
	size_t n;
	struct rs_buf name;  /* "duration", or "duration/<workload key>" */
};

/* The largest step: the means on each side and the runs around it. */
struct find_step {
	double step, rel, before, after;
	size_t last_before, first_after;  /* indexes into the series */
};

/*
 * `arg` is "<from>..<to>": the positions of the two runs in the index,
 * lo <= hi, with lo moved back to the first run of its commit (resolve
 * picks a commit's newest run; a commit named as the start stands for
 * all of its runs).
 */
static int resolve_range(size_t *lo, size_t *hi, struct rs_runsel *sel, const char *arg,
			 const char *dots)
{
	const struct rs_run_entry *a = NULL, *b = NULL;
	char *from = strndup(arg, (size_t)(dots - arg));
	int status;

	if (!from)
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	status = rs_runsel_resolve(&a, sel, from);
	free(from);
	if (!status)
		status = rs_runsel_resolve(&b, sel, dots + 2);
	if (status)
		return status;
	*lo = rs_runsel_pos(sel, a);
	*hi = rs_runsel_pos(sel, b);
	if (*lo > *hi) {
		size_t tmp = *lo;

		*lo = *hi;
		*hi = tmp;
	}
	while (*lo > 0 && !strcmp(sel->idx.runs[*lo - 1].commit, sel->idx.runs[*lo].commit))
		(*lo)--;
	return RS_EXIT_OK;
}

/*
 * The values of `metric` for the runs lo..hi on `branch`, divided by the
 * workload when the newest run of the range records one (the --per key
 * or the usual ones), the metric is a time, and --no-workload is not
 * given.
 */
static int collect(struct find_series *s, const struct rs_runsel *sel, size_t lo, size_t hi,
		   const char *branch, const char *metric, const struct rs_cli_opts *opts)
{
	const char *wkey = NULL;
	json_t *ej = rs_runsel_entry_json(&sel->idx.runs[hi]);
	int status = RS_EXIT_OK, normalise = 0;
	double w;

	s->runs = calloc(hi - lo + 1, sizeof(*s->runs));
	s->vals = calloc(hi - lo + 1, sizeof(*s->vals));
	if (!s->runs || !s->vals) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (!opts->no_workload && rs_diff_is_time_metric(metric) && ej)
		normalise = rs_runview_workload(ej, opts->per, &wkey, &w);
	if (rs_buf_printf(&s->name, normalise ? "%s/%s" : "%s", metric, wkey)) {
		status = rs_cli_report(RS_EGENERIC);
		goto out;
	}
	for (size_t i = lo; i <= hi; i++) {
		const struct rs_run_entry *e = &sel->idx.runs[i];
		const char *k2;
		json_t *j;
		double v;

		if (branch && (!e->branch || strcmp(e->branch, branch)))
			continue;
		j = rs_runsel_entry_json(e);
		if (!j) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
		s->vals[s->n] = NAN;
		if (rs_runview_metric(j, metric, &v)) {
			if (!normalise)
				s->vals[s->n] = v;
			else if (rs_runview_workload(j, wkey, &k2, &w))
				s->vals[s->n] = v / w;
		}
		json_decref(j);
		s->runs[s->n++] = e;
	}
out:
	json_decref(ej);
	return status;
}

/* The largest step of the series (`range`: the argument, for the message). */
static int locate_step(struct find_step *st, const struct find_series *s, const char *range)
{
	const double *vals = s->vals;
	size_t i, k, nb = 0, na = 0;

	st->step = 0;
	st->rel = NAN;
	st->before = st->after = 0;
	k = rs_changepoint_best(vals, s->n, &st->step, &st->rel);
	if (!k)
		return rs_cli_fail(RS_EXIT_USAGE, "fewer than two runs with %s in the range %s",
				   s->name.ptr, range);
	for (i = 0; i < s->n; i++) {
		if (isnan(vals[i]))
			continue;
		if (i < k) {
			st->before += vals[i];
			nb++;
		} else {
			st->after += vals[i];
			na++;
		}
	}
	st->before /= (double)nb;
	st->after /= (double)na;
	/* the runs on each side: the last value before, the first after */
	for (i = k; i-- > 0;)
		if (!isnan(vals[i]))
			break;
	st->last_before = i;
	st->first_after = k;
	return RS_EXIT_OK;
}

static int render_json(struct rs_buf *out, const struct find_series *s,
		       const struct find_step *st)
{
	const struct rs_run_entry *lb = s->runs[st->last_before], *fa = s->runs[st->first_after];
	json_t *o = json_pack("{s:s,s:i,s:f,s:f,s:f,s:o,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}}",
		"metric", s->name.ptr, "runs", (json_int_t)s->n, "before", st->before,
		"after", st->after, "step", st->step,
		"rel", isnan(st->rel) ? json_null() : json_real(st->rel),
		"last_before", "id", lb->id, "commit", lb->commit,
		"recorded_at", lb->recorded_at ? lb->recorded_at : "",
		"first_after", "id", fa->id, "commit", fa->commit,
		"recorded_at", fa->recorded_at ? fa->recorded_at : "");
	char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	int status = RS_EXIT_OK;

	json_decref(o);
	if (!text || rs_buf_printf(out, "%s\n", text))
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	free(text);
	return status;
}

static int render(struct rs_buf *out, enum rs_format fmt, const struct find_series *s,
		  const struct find_step *st)
{
	const struct rs_run_entry *lb = s->runs[st->last_before], *fa = s->runs[st->first_after];
	struct rs_buf v1 = RS_BUF_INIT, v2 = RS_BUF_INIT;
	int status = RS_EXIT_OK;

	if (rs_render_metric_value(&v1, s->name.ptr, st->before) ||
	    rs_render_metric_value(&v2, s->name.ptr, st->after))
		status = rs_cli_report(RS_EGENERIC);
	else if (fmt == RS_FORMAT_JSON)
		status = render_json(out, s, st);
	else if (rs_buf_printf(out,
			"largest step in %s over %zu runs: %s -> %s (%+.1f%%)\n"
			"  last before: %s  commit %s\n"
			"  first after: %s  commit %s\n",
			s->name.ptr, s->n, v1.ptr, v2.ptr, isnan(st->rel) ? 0 : st->rel * 100,
			lb->id, lb->commit, fa->id, fa->commit))
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	rs_buf_release(&v1);
	rs_buf_release(&v2);
	return status;
}

int cmd_find(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	struct find_series s = { NULL, NULL, 0, RS_BUF_INIT };
	struct find_step st;
	struct rs_buf out = RS_BUF_INIT;
	const char *metric = "duration", *branch;
	struct rs_cli_opts opts = {
		.command = "find", .usage = usage, .shortopts = "h", .longopts = options,
		.take = RS_CLI_OPT_TEXT_JSON | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD,
	};
	size_t lo = 0, hi = 0;
	char *dots;
	int opt, status;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0)
		if (opt == 'm')
			metric = optarg;
	if (opt < 0)
		return opts.status;
	if (optind != argc - 1 || !(dots = strstr(argv[optind], "..")) ||
	    dots == argv[optind] || !dots[2])
		return rs_cli_fail(RS_EXIT_USAGE, "give a range <from>..<to>; see 'results find --help'");
	status = rs_runsel_open(&sel);
	if (!status)
		status = resolve_range(&lo, &hi, &sel, argv[optind], dots);
	if (status)
		goto out;
	branch = opts.branch ? opts.branch : sel.idx.runs[hi].branch;
	status = collect(&s, &sel, lo, hi, branch, metric, &opts);
	if (!status)
		status = locate_step(&st, &s, argv[optind]);
	if (!status)
		status = render(&out, opts.fmt, &s, &st);
	if (!status)
		status = rs_runsel_write(NULL, &out);
out:
	free(s.runs);
	free(s.vals);
	rs_buf_release(&s.name);
	rs_buf_release(&out);
	rs_runsel_close(&sel);
	return status;
}
