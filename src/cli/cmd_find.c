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
#include "util/error.h"

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
	{ "branch", required_argument, NULL, 'B' },
	{ "per", required_argument, NULL, 'p' },
	{ "no-workload", no_argument, NULL, 'W' },
	{ "format", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_find(int argc, char **argv)
{
	struct rs_runsel sel = { NULL, { NULL, 0, 0 } };
	const char *metric = "duration", *branch = NULL, *per = NULL;
	const struct rs_run_entry *a = NULL, *b = NULL, **range = NULL;
	enum rs_format fmt = RS_FORMAT_TEXT;
	struct rs_buf name = RS_BUF_INIT, out = RS_BUF_INIT, v1 = RS_BUF_INIT, v2 = RS_BUF_INIT;
	double *vals = NULL, step = 0, rel = NAN, before = 0, after = 0;
	size_t lo, hi, n = 0, i, k, nb = 0, na = 0;
	char *from = NULL, *dots;
	struct rs_cli_opts opts = {
		.command = "find", .usage = usage, .shortopts = "h", .longopts = options,
		.take = RS_CLI_OPT_TEXT_JSON | RS_CLI_OPT_BRANCH | RS_CLI_OPT_WORKLOAD,
	};
	int opt, status = RS_EXIT_OK, opened = 0, no_workload = 0, normalise = 0;
	const char *wkey = NULL;
	json_t *ej = NULL;

	while ((opt = rs_cli_opts_next(&opts, argc, argv)) > 0)
		if (opt == 'm')
			metric = optarg;
	if (opt < 0)
		return opts.status;
	fmt = opts.fmt;
	branch = opts.branch;
	per = opts.per;
	no_workload = opts.no_workload;
	if (optind != argc - 1 || !(dots = strstr(argv[optind], "..")) ||
	    dots == argv[optind] || !dots[2])
		return rs_cli_fail(RS_EXIT_USAGE, "give a range <from>..<to>; see 'results find --help'");
	from = strndup(argv[optind], (size_t)(dots - argv[optind]));
	if (!from)
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	status = rs_runsel_open(&sel);
	opened = 1;
	if (!status)
		status = rs_runsel_resolve(&a, &sel, from);
	if (!status)
		status = rs_runsel_resolve(&b, &sel, dots + 2);
	if (status)
		goto out;
	lo = rs_runsel_pos(&sel, a);
	hi = rs_runsel_pos(&sel, b);
	if (lo > hi) {
		size_t tmp = lo;

		lo = hi;
		hi = tmp;
	}
	/* A commit named as the start stands for all of its runs (resolve
	 * picks the newest): take the range from its first run. */
	while (lo > 0 && !strcmp(sel.idx.runs[lo - 1].commit, sel.idx.runs[lo].commit))
		lo--;
	if (!branch)
		branch = sel.idx.runs[hi].branch;
	range = calloc(hi - lo + 1, sizeof(*range));
	vals = calloc(hi - lo + 1, sizeof(*vals));
	if (!range || !vals) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	/* Normalise when the newest run of the range records a workload and
	 * the metric is a time. */
	ej = rs_runsel_entry_json(&sel.idx.runs[hi]);
	if (!no_workload && rs_diff_is_time_metric(metric) && ej) {
		double w;

		normalise = rs_runview_workload(ej, per, &wkey, &w);
	}
	if (rs_buf_printf(&name, normalise ? "%s/%s" : "%s", metric, wkey)) {
		status = rs_cli_report(RS_EGENERIC);
		goto out;
	}
	for (i = lo; i <= hi; i++) {
		const struct rs_run_entry *e = &sel.idx.runs[i];
		json_t *j;
		double v, w;
		const char *k2;

		if (branch && (!e->branch || strcmp(e->branch, branch)))
			continue;
		j = rs_runsel_entry_json(e);
		if (!j) {
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
		vals[n] = NAN;
		if (rs_runview_metric(j, metric, &v)) {
			if (!normalise)
				vals[n] = v;
			else if (rs_runview_workload(j, wkey, &k2, &w))
				vals[n] = v / w;
		}
		json_decref(j);
		range[n++] = e;
	}
	k = rs_changepoint_best(vals, n, &step, &rel);
	if (!k) {
		status = rs_cli_fail(RS_EXIT_USAGE, "fewer than two runs with %s in the range %s",
				     name.ptr, argv[optind]);
		goto out;
	}
	for (i = 0; i < n; i++) {
		if (isnan(vals[i]))
			continue;
		if (i < k) {
			before += vals[i];
			nb++;
		} else {
			after += vals[i];
			na++;
		}
	}
	before /= (double)nb;
	after /= (double)na;
	/* the runs on each side: the last value before, the first after */
	for (i = k; i-- > 0;)
		if (!isnan(vals[i]))
			break;
	if (rs_render_metric_value(&v1, name.ptr, before) ||
	    rs_render_metric_value(&v2, name.ptr, after)) {
		status = rs_cli_report(RS_EGENERIC);
		goto out;
	}
	if (fmt == RS_FORMAT_JSON) {
		json_t *o = json_pack("{s:s,s:i,s:f,s:f,s:f,s:o,s:{s:s,s:s,s:s},s:{s:s,s:s,s:s}}",
			"metric", name.ptr, "runs", (json_int_t)n, "before", before, "after", after,
			"step", step, "rel", isnan(rel) ? json_null() : json_real(rel),
			"last_before", "id", range[i]->id, "commit", range[i]->commit,
			"recorded_at", range[i]->recorded_at ? range[i]->recorded_at : "",
			"first_after", "id", range[k]->id, "commit", range[k]->commit,
			"recorded_at", range[k]->recorded_at ? range[k]->recorded_at : "");
		char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;

		json_decref(o);
		if (!s || rs_buf_printf(&out, "%s\n", s)) {
			free(s);
			status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
			goto out;
		}
		free(s);
	} else if (rs_buf_printf(&out,
			"largest step in %s over %zu runs: %s -> %s (%+.1f%%)\n"
			"  last before: %s  commit %s\n"
			"  first after: %s  commit %s\n",
			name.ptr, n, v1.ptr, v2.ptr, isnan(rel) ? 0 : rel * 100,
			range[i]->id, range[i]->commit, range[k]->id, range[k]->commit)) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	status = rs_runsel_write(NULL, &out);
out:
	json_decref(ej);
	free(from);
	free(range);
	free(vals);
	rs_buf_release(&name);
	rs_buf_release(&out);
	rs_buf_release(&v1);
	rs_buf_release(&v2);
	if (opened)
		rs_runsel_close(&sel);
	return status;
}
