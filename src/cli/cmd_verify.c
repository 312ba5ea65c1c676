/*
 * results verify [--deep] [--repair] [--head]: is every raw session the
 * repository references on the remote, and (--deep) intact? --repair
 * quarantines damaged packs, pushes again what this clone holds, re-points
 * the rest at good copies, and says what nobody here can restore
 * (docs/store-format.md, "Garbage collection and repair").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/survey.h"
#include "repo/repo.h"
#include "repo/retention.h"
#include "store/maint.h"
#include "store/store.h"
#include "results/error.h"

static const char usage[] =
	"usage: results verify [--deep] [--repair] [--head]\n"
	"\n"
	"Check that the raw session of every run is on the remote: its manifest\n"
	"and the packs it names. Runs of every branch, tag and remote-tracking\n"
	"branch are checked (--head: only this checkout's).\n"
	"\n"
	"  --deep     also read every chunk and hash every session\n"
	"  --repair   (implies --deep) quarantine damaged packs, push again every\n"
	"             damaged session this clone holds, re-point the others at good\n"
	"             copies, and list what no clone here can restore\n"
	"\n"
	"Exit: 0 all present (or removed by retention), 6 some missing, 7 some\n"
	"damaged (after --repair: not restorable here), 5 remote unreachable.\n";

struct verdict {
	enum rs_verify_state state;
	char *why;
};

/* Push `oid` again from the local LFS object, after hashing it. */
static int repush(struct rs_repo *repo, struct rs_remote *remote, const struct rs_plan_item *it)
{
	struct rs_buf path = RS_BUF_INIT, key = RS_BUF_INIT;
	struct rs_store *store = NULL;
	unsigned char md[64];
	unsigned int mdlen = 0;
	int err;

	err = rs_repo_lfs_has(repo, &it->oid, it->size);
	if (!err)
		err = rs_repo_lfs_object_path(&path, repo, &it->oid);
	if (!err)
		err = rs_digest_file("SHA256", path.ptr, 0, it->size, md, &mdlen);
	if (!err && (mdlen != RS_ID_RAWSZ || memcmp(md, it->oid.id, RS_ID_RAWSZ)))
		err = rs_error_set(RS_ECORRUPT, "the local copy '%s' is damaged too", path.ptr);
	if (!err)
		err = rs_key_manifest(&key, &it->oid);
	if (!err) {
		err = remote->del(remote, key.ptr);
		if (err == RS_ENOTFOUND) {
			rs_error_clear();
			err = 0;
		}
	}
	/* No cache: borrow nothing, so every chunk of it is written anew. */
	if (!err)
		err = rs_store_open(&store, remote, NULL);
	if (!err)
		err = rs_store_put_file(store, &it->oid, it->size, path.ptr, NULL, NULL, NULL);
	rs_store_free(store);
	rs_buf_release(&path);
	rs_buf_release(&key);
	return err;
}

static int find_oid(const struct rs_retention_plan *plan, size_t upto, const struct rs_id *oid)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (!rs_id_cmp(&plan->items[i].oid, oid))
			return (int)i;
	return -1;
}

/* One verify: what it reads, and what it found (a verdict per plan item). */
struct verify {
	struct rs_repo *repo;
	struct rs_remote *remote;
	struct rs_store_census census;
	struct rs_retention_plan plan;
	struct verdict *v;
	size_t counts[RS_VERIFY_DAMAGED + 1], objects, restored, lost;
};

/* A verdict for every plan item; an object named twice is checked once. */
static int check_objects(struct verify *vr, int deep)
{
	const struct rs_retention_plan *plan = &vr->plan;
	struct rs_buf why = RS_BUF_INIT;
	int status = RS_EXIT_OK;

	vr->v = calloc(plan->n ? plan->n : 1, sizeof(*vr->v));
	if (!vr->v)
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	for (size_t i = 0; i < plan->n; i++) {
		const struct rs_plan_item *it = &plan->items[i];
		struct verdict *v = &vr->v[i];
		int first = find_oid(plan, i, &it->oid);

		if (first >= 0) {
			v->state = vr->v[first].state;
			continue;
		}
		vr->objects++;
		if (rs_store_verify_object(vr->remote, &vr->census, &it->oid, it->size, deep,
					   &v->state, &why)) {
			status = rs_cli_fail(RS_EXIT_REMOTE, "cannot read from the remote '%s': %s",
					     vr->remote->display_url, rs_error_message());
			break;
		}
		v->why = strdup(rs_buf_cstr(&why));
		vr->counts[v->state]++;
	}
	rs_buf_release(&why);
	return status;
}

static int quarantine_damaged(struct verify *vr)
{
	for (size_t i = 0; i < vr->census.npacks; i++) {
		const struct rs_pack_state *pack = &vr->census.packs[i];
		char hex[RS_ID_HEXSZ + 1];

		if (!pack->damaged || pack->quarantined)
			continue;
		rs_id_to_hex(hex, &pack->id);
		if (rs_store_quarantine(vr->remote, &pack->id, "damaged chunk found by verify --deep",
					(int64_t)time(NULL)))
			return rs_cli_fail(RS_EXIT_REMOTE, "cannot quarantine pack %.12s: %s", hex,
					   rs_error_message());
		printf("quarantined pack %.12s\n", hex);
	}
	return RS_EXIT_OK;
}

/* The damaged objects (their first item) this clone holds: pushed again. */
static void repush_local(struct verify *vr)
{
	for (size_t i = 0; i < vr->plan.n; i++) {
		const struct rs_plan_item *it = &vr->plan.items[i];
		char hex[RS_ID_HEXSZ + 1];

		if (vr->v[i].state != RS_VERIFY_DAMAGED || find_oid(&vr->plan, i, &it->oid) >= 0)
			continue;
		rs_id_to_hex(hex, &it->oid);
		if (repush(vr->repo, vr->remote, it) == 0) {
			vr->v[i].state = RS_VERIFY_OK;
			vr->restored++;
			printf("pushed again %.12s (run %s) from this clone\n", hex, it->run_id);
		} else if (rs_error_last() != RS_ENOTFOUND) {
			printf("cannot push %.12s (run %s) again from this clone: %s\n", hex,
			       it->run_id, rs_error_message());
			rs_error_clear();
		} else {
			rs_error_clear();
		}
	}
}

/* The damaged objects left: re-pointed at good copies of their chunks. */
static int repoint_rest(struct verify *vr)
{
	int err = rs_store_census_take(&vr->census, vr->remote);

	for (size_t i = 0; !err && i < vr->plan.n; i++) {
		const struct rs_plan_item *it = &vr->plan.items[i];
		char hex[RS_ID_HEXSZ + 1];

		if (vr->v[i].state != RS_VERIFY_DAMAGED || find_oid(&vr->plan, i, &it->oid) >= 0)
			continue;
		rs_id_to_hex(hex, &it->oid);
		if (rs_store_repoint(vr->remote, &vr->census, &it->oid) == 0) {
			vr->v[i].state = RS_VERIFY_OK;
			vr->restored++;
			printf("re-pointed %.12s (run %s) at good copies of its chunks\n", hex,
			       it->run_id);
		} else {
			printf("cannot restore %.12s (run %s): %s; no clone here holds it: run "
			       "'results verify --repair' in a clone that has it\n",
			       hex, it->run_id, rs_error_message());
			rs_error_clear();
			vr->lost++;
		}
	}
	return err;
}

/* --repair: quarantine, push again, re-point; later items share the verdicts. */
static int repair_damaged(struct verify *vr)
{
	int err, status = quarantine_damaged(vr);

	if (status)
		return status;
	/* Local copies first: their new packs are what the others re-point at. */
	repush_local(vr);
	err = repoint_rest(vr);
	if (err)
		return rs_cli_report(err);
	for (size_t i = 0; i < vr->plan.n; i++) {
		int first = find_oid(&vr->plan, i, &vr->plan.items[i].oid);

		if (first >= 0)
			vr->v[i].state = vr->v[first].state;
	}
	return RS_EXIT_OK;
}

/* A line per run, the totals, and the exit status they make. */
static int report(const struct verify *vr, int deep, int repair)
{
	const size_t *counts = vr->counts;

	for (size_t i = 0; i < vr->plan.n; i++) {
		const struct rs_plan_item *it = &vr->plan.items[i];
		const struct verdict *v = &vr->v[i];
		int first = find_oid(&vr->plan, i, &it->oid);
		const char *why_text = first >= 0 ? vr->v[first].why : v->why;
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, &it->oid);
		printf("%-10s run %s  %.12s%s%s\n", rs_verify_state_name(v->state), it->run_id, hex,
		       v->state != RS_VERIFY_OK && why_text && *why_text ? ": " : "",
		       v->state != RS_VERIFY_OK && why_text ? why_text : "");
	}
	printf("%zu runs, %zu objects%s: %zu ok, %zu removed by retention, %zu missing, %zu incomplete, "
	       "%zu damaged", vr->plan.runs, vr->objects, deep ? " (deep)" : "", counts[RS_VERIFY_OK],
	       counts[RS_VERIFY_REMOVED], counts[RS_VERIFY_MISSING], counts[RS_VERIFY_INCOMPLETE],
	       counts[RS_VERIFY_DAMAGED]);
	if (repair)
		printf("; repaired %zu, not restorable here %zu", vr->restored, vr->lost);
	printf("\n");
	if (repair ? vr->lost : counts[RS_VERIFY_DAMAGED])
		return RS_EXIT_CORRUPT;
	if (counts[RS_VERIFY_MISSING] || counts[RS_VERIFY_INCOMPLETE])
		return RS_EXIT_MISSING;
	return RS_EXIT_OK;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "deep", no_argument, NULL, 'd' },
		{ "repair", no_argument, NULL, 'r' },
		{ "head", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify vr = { NULL, NULL, RS_STORE_CENSUS_INIT, RS_RETENTION_PLAN_INIT, NULL,
			     { 0 }, 0, 0, 0 };
	int deep = 0, repair = 0, head = 0, c, status;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': deep = 1; break;
		case 'r': repair = deep = 1; break;
		case 'H': head = 1; break;
		default: return rs_cli_fail(RS_EXIT_USAGE, "see 'results verify --help'");
		}
	}
	if (optind != argc)
		return rs_cli_fail(RS_EXIT_USAGE, "verify takes no run names; see 'results verify --help'");
	status = rs_cli_open_repo(&vr.repo);
	if (status)
		return status;
	status = rs_cli_survey(&vr.remote, &vr.plan, &vr.census, vr.repo, time(NULL), head);
	if (status)
		goto out;
	if (!vr.census.has_format && vr.census.nobjects == 0 && vr.plan.n > 0)
		fprintf(stderr, "results: the remote '%s' holds no results store (no FORMAT): "
			"check results.remote, or push\n", vr.remote->display_url);
	status = check_objects(&vr, deep);
	if (!status && repair && vr.counts[RS_VERIFY_DAMAGED])
		status = repair_damaged(&vr);
	if (!status)
		status = report(&vr, deep, repair);
out:
	for (size_t i = 0; vr.v && i < vr.plan.n; i++)
		free(vr.v[i].why);
	free(vr.v);
	rs_store_census_release(&vr.census);
	rs_retention_plan_release(&vr.plan);
	rs_remote_free(vr.remote);
	rs_repo_free(vr.repo);
	return status;
}
