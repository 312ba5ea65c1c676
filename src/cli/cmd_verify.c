/*
 * results verify [--deep] [--repair] [--head]: is every raw session the
 * repository references on the remote, and (--deep) intact? --repair
 * quarantines damaged packs, pushes again what this clone holds, re-points
 * the rest at good copies, and says what nobody here can restore
 * (docs/store-format.md, "Garbage collection and repair").
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
#include "results/store.h"

static const char usage[] =
	"usage: results verify [--deep] [--repair] [--head]\n"
	"\n"
	"Check that the raw session of every run is on the remote: its manifest\n"
	"and the packs it names. Runs of every branch and tag of the git remote\n"
	"(tips this clone lacks are fetched into refs/results/gc/) and of every\n"
	"ref of this clone are checked (--head: only this checkout's). A ref or\n"
	"file that cannot be read is a warning, and the rest is verified.\n"
	"\n"
	"  --deep     also read every chunk and hash every session\n"
	"  --repair   (implies --deep) bring back sessions gc set aside that the\n"
	"             policy keeps, quarantine damaged packs, push again every\n"
	"             damaged, missing or incomplete session this clone holds (also\n"
	"             one git lfs prune deleted: results add keeps a copy until the\n"
	"             store has it), re-point the others at good copies, prove each\n"
	"             repair by rebuilding the session, and list what no clone here\n"
	"             can restore\n"
	"\n"
	"Exit: 0 all present (or removed by retention), 6 some missing, 7 some\n"
	"damaged (after --repair: what is left) or a run's record or index\n"
	"unreadable, 5 remote unreachable, 9 the store or some session was written\n"
	"by a newer results (upgrade results).\n";

static void print_line(const char *line, void *payload)
{
	struct rs_buf safe = RS_BUF_INIT;

	(void)payload;
	printf("%s\n", rs_cli_term(&safe, line));
	rs_buf_release(&safe);
}

/* --repair: bring back, quarantine, push again, re-point; lines as they happen. */
static int repair_damaged(struct rs_survey *s)
{
	enum rs_repair_step failed;
	int err = rs_verify_repair(s, print_line, NULL, &failed);

	if (!err)
		return RS_EXIT_OK;
	return failed == RS_REPAIR_QUARANTINE ? rs_cli_error(RS_EXIT_REMOTE) : rs_cli_report(err);
}

/* A line per run, the totals, and the exit status they make. */
static int report(const struct rs_survey *s, int deep, int repair)
{
	struct rs_verify_totals t;

	for (size_t i = 0; i < rs_verify_rows(s); i++) {
		struct rs_verify_row row;
		struct rs_buf id = RS_BUF_INIT, why = RS_BUF_INIT;

		rs_verify_row(s, i, &row);
		printf("%-10s run %s  %.12s%s%s\n", row.state, rs_cli_term(&id, row.run_id),
		       row.oid_hex, *row.why ? ": " : "", rs_cli_term(&why, row.why));
		rs_buf_release(&id);
		rs_buf_release(&why);
	}
	rs_verify_totals(s, &t);
	printf("%zu runs, %zu objects%s: %zu ok, %zu removed by retention, %zu missing, %zu incomplete, "
	       "%zu damaged", t.runs, t.objects, deep ? " (deep)" : "", t.ok, t.removed, t.missing,
	       t.incomplete, t.damaged);
	if (t.newer)
		printf(", %zu need a newer results", t.newer);
	if (repair)
		printf("; repaired %zu, not restorable here %zu", t.restored, t.lost);
	printf("\n");
	if (t.left_damaged)
		return RS_EXIT_CORRUPT;
	if (t.left_missing)
		return RS_EXIT_MISSING;
	if (t.newer)
		return rs_cli_fail(RS_EXIT_NEWER, "%zu session%s written by a newer results: upgrade "
				   "results to read %s", t.newer, t.newer > 1 ? "s were" : " was",
				   t.newer > 1 ? "them" : "it");
	return RS_EXIT_OK;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "deep", no_argument, NULL, 'd' },
		{ "repair", no_argument, NULL, 'r' },
		{ "head", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	int deep = 0, repair = 0, head = 0;
	const struct rs_cli_bind bind[] = {
		{ 'd', &deep, NULL }, { 'r', &repair, NULL }, { 'H', &head, NULL }, { 0 },
	};
	struct rs_cli_opts opts = { .command = "verify", .usage = usage, .longopts = longopts,
				    .bind = bind };
	struct rs_repo *repo = NULL;
	struct rs_survey *s = NULL;
	struct rs_verify_totals t;
	int status;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	if (rs_cli_opts_parse(&opts, argc, argv, NULL, NULL) < 0)
		return opts.status;
	deep |= repair; /* --repair reads every object, as --deep */
	if (rs_cli_opts_operands(&opts, argc, argv, 0) < 0)
		return opts.status;
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	status = rs_cli_survey(&s, repo, (int64_t)time(NULL), head ? RS_SURVEY_HEAD : RS_SURVEY_REFS);
	if (status)
		goto out;
	/* What could not be read is said and verify goes on with the rest. */
	rs_cli_survey_say(s, "warning: ");
	if (rs_survey_remote_empty(s))
		fprintf(stderr, "results: the remote '%s' holds no results store (no FORMAT): "
			"check results.remote, or push\n", rs_survey_display_url(s));
	if (rs_verify_check(s, deep)) {
		status = rs_cli_error(RS_EXIT_REMOTE);
		goto out;
	}
	rs_verify_totals(s, &t);
	/* Missing ones too: a session pushed without its object (git push
	   --no-verify) that this clone still holds is pushed now; and removed
	   ones: a session gc set aside that the policy keeps comes back. */
	if (repair && (t.damaged || t.missing || t.incomplete || t.removed))
		status = repair_damaged(s);
	if (!status)
		status = report(s, deep, repair);
	/* An index or run record that does not parse hides runs: damage too, once the rest is verified. */
	if (rs_survey_unread(s) && status == RS_EXIT_OK)
		status = rs_cli_fail(RS_EXIT_CORRUPT, "%zu run records or indexes could not be read "
				     "(warnings above): their runs were not verified", rs_survey_unread(s));
out:
	rs_survey_free(s);
	rs_repo_free(repo);
	return status;
}
