/*
 * results gc [--dry-run] [--grace DURATION [--force]] [--no-fetch]: apply
 * the committed retention policy of every ref of the git remote and of
 * this clone (src/git/gitremote.c lists them) to the store, then collect packs that no
 * manifest references with the mark / grace / sweep protocol of
 * docs/store-format.md, safe while other machines push.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/survey.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/report.h"
#include "results/store.h"

static const char usage[] =
	"usage: results gc [--dry-run] [--grace DURATION [--force]] [--repack PCT] [--no-fetch]\n"
	"\n"
	"Delete the raw sessions that the committed retention policy no longer\n"
	"keeps (.results.json \"retention\": keep_last runs per branch or per\n"
	"trigger, keep_days,\n"
	"keep_flagged: runs check flags and their baselines;\n"
	"runs in pins.txt: 'results pin'), on every branch and tag of the git\n"
	"remote as it has them now (listed, and tips this clone lacks fetched\n"
	"into refs/results/gc/, also in a shallow single-branch clone) and of\n"
	"this clone, then free the packs nothing references. When a branch, its\n"
	"policy or a run's record cannot be read, gc deletes nothing. A dropped\n"
	"session is set aside first and deleted by a run at least DURATION later\n"
	"(default 24h) if the policy still drops it; a pack is deleted only after\n"
	"runs of gc DURATION apart saw it unused: run gc daily. Summaries and run\n"
	"records are kept forever.\n"
	"\n"
	"  --dry-run       say what would be freed, write nothing to the store\n"
	"  --grace D       the grace period: 24h, 90m, 2d; at least 1h\n"
	"  --force         accept a grace period below 1h (tests only)\n"
	"  --repack PCT    copy what is used of packs less than PCT% used into new\n"
	"                  packs, so that later runs free the old ones\n"
	"  --no-fetch      fetch nothing: the git remote's refs are still listed,\n"
	"                  and gc deletes nothing if this clone lacks a tip\n";

static int parse_duration(const char *s, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	int64_t mul = 1;

	if (end == s || v < 0)
		return -1;
	if (!strcmp(end, "d"))
		mul = 86400;
	else if (!strcmp(end, "h"))
		mul = 3600;
	else if (!strcmp(end, "m"))
		mul = 60;
	else if (strcmp(end, "s") && *end)
		return -1;
	if (v > INT64_MAX / mul / 2)
		return -1;
	*out = (int64_t)v * mul;
	return 0;
}

static void print_bytes(const char *label, uint64_t n)
{
	printf("%s %.1f MB (%llu bytes)\n", label, (double)n / 1e6, (unsigned long long)n);
}

static void print_picked(const char *run_id, const char *recorded_at, void *payload)
{
	const struct rs_gc_settings *o = payload;
	struct rs_buf id = RS_BUF_INIT, when = RS_BUF_INIT;

	printf("%s raw session of run %s (%s)\n", o->dry_run ? "would remove" : "removing",
	       rs_cli_term(&id, run_id), rs_cli_term(&when, recorded_at));
	rs_buf_release(&id);
	rs_buf_release(&when);
}

static void print_stats(const struct rs_gc_settings *o, const struct rs_gc_totals *t,
			const char *remote_name)
{
	printf("%s %zu raw sessions of %zu runs (%.1f MB of sessions) of %zu runs on %zu refs",
	       o->dry_run ? "would remove" : "removed", t->manifests_removed, t->dropped_runs,
	       (double)t->dropped_bytes / 1e6, t->runs, t->refs + t->local_refs);
	if (remote_name)
		printf(" (%zu of the git remote '%s', %zu of this clone only)\n", t->refs, remote_name,
		       t->local_refs);
	else
		printf(" (of this clone: it has no git remote)\n");
	printf("packs: %zu listed, %zu swept, %zu marked, %zu rescued, %zu waiting for the grace period, "
	       "%zu clocks started\n", t->packs, t->packs_swept, t->packs_marked, t->packs_rescued,
	       t->packs_waiting, t->packs_started);
	printf("set aside (reversible until a run a grace period later confirms): %zu %s, %zu %s, "
	       "%zu brought back, %zu waiting; %zu kept because a push relies on them\n",
	       t->manifests_removed, o->dry_run ? "would be set aside now" : "now",
	       t->manifests_confirmed, o->dry_run ? "would be deleted" : "deleted", t->manifests_restored,
	       t->manifests_pending, t->manifests_touched);
	if (t->packs_spared)
		printf("%zu packs due to be swept are named by a new manifest: kept\n", t->packs_spared);
	print_bytes(o->dry_run ? "would free now:" : "freed now:", t->bytes_swept);
	/* Unreferenced packs not swept now, and packs only sessions on their way out hold. */
	print_bytes("freed by later runs, a grace period or more from now:",
		    t->bytes_unreferenced - t->bytes_swept + t->bytes_pending);
	if (o->repack > 0)
		printf("%s %zu packs less than %.0f%% used: %.1f MB freed once later runs sweep the old ones\n",
		       o->dry_run ? "would repack" : "repacked", t->packs_repacked, o->repack * 100,
		       (double)t->bytes_repacked / 1e6);
}

/* What gc's command line says, while it is parsed. */
struct gc_args {
	struct rs_gc_settings *o;
	const char *grace;
};

/* --grace and --repack, checked (rs_cli_take_fn). */
static int take_option(void *ctx, struct rs_cli_opts *opts, int c)
{
	struct gc_args *a = ctx;
	char *end;
	double pct;

	if (c == 'g') {
		a->grace = optarg;
		if (parse_duration(optarg, &a->o->grace))
			return rs_cli_fail(RS_EXIT_USAGE, "--grace '%s' is not a duration (24h, 90m, 2d)", optarg);
	} else if (c == 'r') {
		pct = strtod(optarg, &end);
		if (end == optarg || *end || pct <= 0 || pct >= 100)
			return rs_cli_fail(RS_EXIT_USAGE, "--repack takes a percentage between 0 and 100");
		a->o->repack = pct / 100;
	}
	return RS_EXIT_OK;
}

/* Options into `o` and `*fetch`: RS_EXIT_OK, or the printed usage error's status. */
static int parse_options(int argc, char **argv, struct rs_gc_settings *o, int *fetch)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "grace", required_argument, NULL, 'g' },
		{ "repack", required_argument, NULL, 'r' },
		{ "no-fetch", no_argument, NULL, 'F' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int force = 0, no_fetch = 0;
	const struct rs_cli_bind bind[] = {
		{ 'n', &o->dry_run, NULL }, { 'F', &no_fetch, NULL }, { 'f', &force, NULL }, { 0 },
	};
	struct rs_cli_opts opts = { .command = "gc", .usage = usage, .longopts = longopts,
				    .bind = bind };
	struct gc_args a = { o, NULL };
	const char *grace;

	o->grace = 86400;
	if (rs_cli_opts_parse(&opts, argc, argv, take_option, &a) < 0)
		return opts.status;
	*fetch = !no_fetch;
	grace = a.grace;
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	if (grace && o->grace < RS_GC_GRACE_MIN && !force)
		return rs_cli_fail(RS_EXIT_USAGE, "--grace '%s' is below the minimum of 1h: a push slower than "
				   "the grace period would see its packs clocked, marked and swept meanwhile "
				   "(it would then have to send them again); use --force to accept it", grace);
	return RS_EXIT_OK;
}

/* The survey, the runs check flags, then the collection itself. */
static int collect(struct rs_repo *repo, const struct rs_gc_settings *o, int fetch)
{
	struct rs_survey *s = NULL;
	struct rs_gc_totals t;
	const char *remote_name;
	size_t flagged = 0, remote_refs, local_refs;
	int applied = 0, status, err, code;

	status = rs_cli_survey(&s, repo, o->now, fetch ? RS_SURVEY_REFS : RS_SURVEY_REFS_NOFETCH);
	if (status)
		goto out;
	if (rs_cli_survey_say(s, "")) {
		/* Refused by rs_gc_run, which says so; flags are not judged then. */
		rs_survey_doubts(s, &code);
		err = rs_gc_run(s, o, NULL, NULL, &t);
		status = rs_cli_fail(err ? rs_cli_exit_for(code) : RS_EXIT_OTHER, "%s",
				     rs_error_message());
		goto out;
	}
	err = rs_gc_keep_flagged(s, rs_report_flagged, &applied, &flagged);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	if (applied)
		printf("%zu runs flagged by check keep their sessions and their baselines'\n", flagged);
	err = rs_gc_run(s, o, print_picked, (void *)o, &t);
	if (err) {
		/* A newer writer's manifest may name any pack: upgrade, never guess. */
		if (err == RS_ENEWER)
			status = rs_cli_fail(RS_EXIT_NEWER, "gc stopped: %s; nothing was collected",
					     rs_error_message());
		else
			status = rs_cli_fail(rs_cli_exit_in(err, RS_CLI_REMOTE),
					     "gc stopped: %s; nothing is lost, run it again",
					     rs_error_message());
		goto out;
	}
	rs_survey_refs(s, &remote_name, &remote_refs, &local_refs);
	print_stats(o, &t, remote_name);
out:
	rs_survey_free(s);
	return status;
}

int cmd_gc(int argc, char **argv)
{
	struct rs_repo *repo = NULL;
	struct rs_gc_settings o = { 0 };
	int fetch = 1, status;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	status = parse_options(argc, argv, &o, &fetch);
	if (status)
		return status;
	o.now = (int64_t)time(NULL);
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	status = collect(repo, &o, fetch);
	rs_repo_free(repo);
	return status;
}
