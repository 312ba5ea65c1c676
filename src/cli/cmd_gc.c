/*
 * results gc [--dry-run] [--grace DURATION] [--no-fetch]: apply the
 * committed retention policy to the remote, then collect packs that no
 * manifest references with the mark / grace / sweep protocol of
 * docs/store-format.md, safe while other machines push.
 */
#include <getopt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "analysis/check.h"
#include "analysis/owncode.h"
#include "cli/cli.h"
#include "cli/runsel.h"
#include "cli/survey.h"
#include "repo/repo.h"
#include "repo/retention.h"
#include "store/maint.h"
#include "results/error.h"

extern char **environ;

static const char usage[] =
	"usage: results gc [--dry-run] [--grace DURATION] [--repack PCT] [--no-fetch]\n"
	"\n"
	"Delete the raw sessions that the committed retention policy no longer\n"
	"keeps (.results.json \"retention\": keep_last runs per branch, keep_days,\n"
	"keep_flagged: runs check flags and their baselines;\n"
	"runs in pins.txt: 'results pin'), on every branch and tag of the git\n"
	"remote (fetched first), then free the packs nothing references. A pack\n"
	"is deleted only after runs of gc at least DURATION apart (default 24h)\n"
	"saw it unused: run gc daily. Summaries and run records are kept forever.\n"
	"\n"
	"  --dry-run       say what would be freed, write nothing\n"
	"  --grace D       the grace period: 24h, 90m, 3600s, 2d, 0 (tests only)\n"
	"  --repack PCT    copy what is used of packs less than PCT% used into new\n"
	"                  packs, so that later runs free the old ones\n"
	"  --no-fetch      use the refs this clone has, do not run 'git fetch'\n";

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

/* git fetch --prune of every remote, so that their branches count. */
static int fetch_refs(struct rs_repo *repo)
{
	char *args[] = { "git", "-C", repo->workdir, "fetch", "--all", "--prune", "--quiet", NULL };
	pid_t pid;
	int st = 0;

	if (posix_spawnp(&pid, "git", NULL, NULL, args, environ) != 0)
		return rs_error_set(RS_EGENERIC, "cannot run 'git fetch'");
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return rs_error_set(RS_EGENERIC, "'git fetch --all' failed: the branches of the git remote "
				    "cannot be seen, so nothing is collected (use --no-fetch to collect "
				    "with this clone's refs)");
	return 0;
}

static void print_bytes(const char *label, uint64_t n)
{
	printf("%s %.1f MB (%llu bytes)\n", label, (double)n / 1e6, (unsigned long long)n);
}

/* Runs of one branch `check` compares a run with, at most. */
#define FLAG_HISTORY 12
#define OWN_SPECS_MAX 64

/*
 * keep_flagged: every run of this checkout's history that `results check`
 * flags as a regression, and the baseline runs it was judged against,
 * keep their raw sessions (to find out why, later). Judged as `check`
 * judges (same branch, comparable runs, noise band), from the committed
 * summaries only.
 */
static int keep_flagged(struct rs_retention_plan *plan, size_t *flagged)
{
	struct rs_runsel sel;
	struct rs_check_opts copts = { 0 };
	struct rs_owncode own = { NULL, 0 };
	const char *own_specs[OWN_SPECS_MAX];
	json_t *hist[FLAG_HISTORY] = { NULL };
	json_t *head = NULL, *config;
	size_t i, k;
	int status = rs_runsel_open(&sel), err = 0;

	if (status)
		return status;
	/* The caller's; own_specs borrow its strings until the end. */
	config = rs_runsel_config(&sel);
	own.n_specs = rs_owncode_from_config(config, own_specs, OWN_SPECS_MAX);
	own.specs = own_specs;
	copts.own = &own;
	for (i = 0; i < sel.idx.count && !err; i++) {
		const struct rs_run_entry *e = &sel.idx.runs[i];
		struct rs_check_result *res = NULL;
		size_t n = 0;

		for (k = i; k-- > 0 && n < FLAG_HISTORY;) {
			const struct rs_run_entry *b = &sel.idx.runs[k];

			if (!e->branch || !b->branch || strcmp(e->branch, b->branch))
				continue;
			if (rs_runsel_load(&hist[n], &sel, b))
				goto fail;
			n++;
		}
		if (n && rs_runsel_load(&head, &sel, e))
			goto fail;
		if (n)
			err = rs_check_run(&res, head, (const json_t *const *)hist, n, &copts);
		if (!err && res && res->regressed) {
			(*flagged)++;
			rs_retention_plan_keep_run(plan, e->id);
			for (k = 0; k < res->n_baseline; k++)
				rs_retention_plan_keep_run(plan, res->baseline_ids[k]);
		}
		rs_check_free(res);
		json_decref(head);
		head = NULL;
		for (k = 0; k < n; k++) {
			json_decref(hist[k]);
			hist[k] = NULL;
		}
	}
	json_decref(config);
	rs_runsel_close(&sel);
	return err ? rs_cli_report(err) : RS_EXIT_OK;
fail:
	json_decref(head);
	for (k = 0; k < FLAG_HISTORY; k++)
		json_decref(hist[k]);
	json_decref(config);
	rs_runsel_close(&sel);
	return RS_EXIT_CORRUPT;
}

/*
 * The raw sessions to remove: those no ref's retention keeps that the
 * remote still holds, each once, announced as it is picked. Returns how
 * many.
 */
static size_t pick_drops(struct rs_id *drop, uint64_t *drop_bytes,
			 const struct rs_retention_plan *plan,
			 const struct rs_store_census *census, int dry_run)
{
	size_t ndrop = 0;

	for (size_t i = 0; i < plan->n; i++) {
		const struct rs_plan_item *it = &plan->items[i];
		int dup = 0;

		if (it->keep || rs_retention_plan_keeps(plan, &it->oid) ||
		    !rs_store_census_has_object(census, &it->oid))
			continue;
		for (size_t j = 0; j < ndrop && !dup; j++)
			dup = !rs_id_cmp(&drop[j], &it->oid);
		if (dup)
			continue;
		drop[ndrop++] = it->oid;
		*drop_bytes += it->size;
		printf("%s raw session of run %s (%s)\n", dry_run ? "would remove" : "removing",
		       it->run_id, it->recorded_at);
	}
	return ndrop;
}

static void print_stats(const struct rs_gc_options *o, const struct rs_gc_stats *st,
			const struct rs_retention_plan *plan, size_t dropped_runs,
			uint64_t drop_bytes)
{
	printf("%s %zu raw sessions of %zu runs (%.1f MB of sessions) of %zu runs on %zu refs\n",
	       o->dry_run ? "would remove" : "removed", st->manifests_removed, dropped_runs,
	       (double)drop_bytes / 1e6, plan->runs, plan->refs);
	printf("packs: %zu listed, %zu swept, %zu marked, %zu rescued, %zu waiting for the grace period, "
	       "%zu clocks started\n", st->packs, st->packs_swept, st->packs_marked, st->packs_rescued,
	       st->packs_waiting, st->packs_started);
	print_bytes(o->dry_run ? "would free now:" : "freed now:", st->bytes_swept);
	print_bytes("unreferenced, freed by later runs:", st->bytes_unreferenced - st->bytes_swept);
	if (o->repack > 0)
		printf("%s %zu packs less than %.0f%% used: %.1f MB freed once later runs sweep the old ones\n",
		       o->dry_run ? "would repack" : "repacked", st->packs_repacked, o->repack * 100,
		       (double)st->bytes_repacked / 1e6);
}

int cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "grace", required_argument, NULL, 'g' },
		{ "repack", required_argument, NULL, 'r' },
		{ "no-fetch", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_repo *repo = NULL;
	struct rs_remote *remote = NULL;
	struct rs_store_census census = RS_STORE_CENSUS_INIT;
	struct rs_retention_plan plan = RS_RETENTION_PLAN_INIT;
	struct rs_gc_options o = { 0 };
	struct rs_gc_stats st = { 0 };
	struct rs_retention policy;
	struct rs_id *drop = NULL;
	size_t ndrop = 0;
	uint64_t drop_bytes = 0;
	int fetch = 1, c, status = RS_EXIT_OK, err;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	o.grace = 86400;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.dry_run = 1; break;
		case 'F': fetch = 0; break;
		case 'g':
			if (parse_duration(optarg, &o.grace))
				return rs_cli_fail(RS_EXIT_USAGE, "--grace '%s' is not a duration (24h, 90m, 2d)", optarg);
			break;
		case 'r': {
			char *end;
			double pct = strtod(optarg, &end);

			if (end == optarg || *end || pct <= 0 || pct >= 100)
				return rs_cli_fail(RS_EXIT_USAGE, "--repack takes a percentage between 0 and 100");
			o.repack = pct / 100;
			break;
		}
		default: return rs_cli_fail(RS_EXIT_USAGE, "see 'results gc --help'");
		}
	}
	if (optind != argc)
		return rs_cli_fail(RS_EXIT_USAGE, "gc takes no arguments; see 'results gc --help'");
	o.now = (int64_t)time(NULL);
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	if (fetch && (err = fetch_refs(repo))) {
		status = rs_cli_error(RS_EXIT_REMOTE);
		goto out;
	}
	status = rs_cli_survey(&remote, &plan, &census, repo, (time_t)o.now, 0);
	if (status)
		goto out;
	err = rs_retention_load(repo, NULL, &policy);
	if (!err && policy.keep_flagged) {
		size_t flagged = 0;

		status = keep_flagged(&plan, &flagged);
		if (status)
			goto out;
		printf("%zu runs flagged by check keep their sessions and their baselines'\n", flagged);
	}
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	drop = calloc(plan.n ? plan.n : 1, sizeof(*drop));
	if (!drop) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	ndrop = pick_drops(drop, &drop_bytes, &plan, &census, o.dry_run);
	/* Killed writers' leftovers (temporary files, S3 multipart uploads). */
	if (!o.dry_run && remote->tidy)
		remote->tidy(remote);
	err = rs_store_gc_drop(remote, &census, drop, ndrop, &o, &st);
	if (!err)
		err = rs_store_gc_collect(remote, &census, &o, &st);
	if (err) {
		status = rs_cli_fail(err == RS_ECORRUPT ? RS_EXIT_CORRUPT : RS_EXIT_REMOTE,
				     "gc stopped: %s; nothing is lost, run it again", rs_error_message());
		goto out;
	}
	print_stats(&o, &st, &plan, ndrop, drop_bytes);
out:
	free(drop);
	rs_store_census_release(&census);
	rs_retention_plan_release(&plan);
	rs_remote_free(remote);
	rs_repo_free(repo);
	return status;
}
