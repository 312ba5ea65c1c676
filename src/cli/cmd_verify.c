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
#include "repo/repo.h"
#include "repo/retention.h"
#include "store/maint.h"
#include "store/store.h"
#include "util/error.h"

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

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "deep", no_argument, NULL, 'd' },
		{ "repair", no_argument, NULL, 'r' },
		{ "head", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_repo *repo = NULL;
	struct rs_remote *remote = NULL;
	struct rs_store_census census = RS_STORE_CENSUS_INIT;
	struct rs_retention_plan plan = RS_RETENTION_PLAN_INIT;
	struct rs_buf why = RS_BUF_INIT;
	struct verdict *v = NULL;
	int deep = 0, repair = 0, head = 0, c, status = RS_EXIT_OK, err;
	size_t i, counts[RS_VERIFY_DAMAGED + 1] = { 0 }, objects = 0, restored = 0, lost = 0;

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
	status = rs_cli_open_repo(&repo);
	if (status)
		return status;
	err = rs_repo_open_remote(repo, &remote, NULL);
	if (err) {
		status = rs_cli_fail(err == RS_ENOTFOUND ? RS_EXIT_NOT_REPO : RS_EXIT_REMOTE,
				     "cannot open the remote: %s", rs_error_message());
		goto out;
	}
	err = rs_retention_plan_make(repo, time(NULL), head, &plan);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = rs_store_census_take(&census, remote);
	if (err) {
		status = rs_cli_fail(RS_EXIT_REMOTE, "cannot list the remote '%s': %s",
				     remote->display_url, rs_error_message());
		goto out;
	}
	if (!census.has_format && census.nobjects == 0 && plan.n > 0)
		fprintf(stderr, "results: the remote '%s' holds no results store (no FORMAT): "
			"check results.remote, or push\n", remote->display_url);
	v = calloc(plan.n ? plan.n : 1, sizeof(*v));
	if (!v) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	for (i = 0; i < plan.n; i++) {
		const struct rs_plan_item *it = &plan.items[i];
		int first = find_oid(&plan, i, &it->oid);

		if (first >= 0) {
			v[i].state = v[first].state;
			continue;
		}
		objects++;
		err = rs_store_verify_object(remote, &census, &it->oid, it->size, deep, &v[i].state, &why);
		if (err) {
			status = rs_cli_fail(RS_EXIT_REMOTE, "cannot read from the remote '%s': %s",
					     remote->display_url, rs_error_message());
			goto out;
		}
		v[i].why = strdup(rs_buf_cstr(&why));
		counts[v[i].state]++;
	}
	if (repair && counts[RS_VERIFY_DAMAGED]) {
		for (i = 0; i < census.npacks; i++) {
			char hex[RS_ID_HEXSZ + 1];

			if (!census.packs[i].damaged || census.packs[i].quarantined)
				continue;
			rs_id_to_hex(hex, &census.packs[i].id);
			err = rs_store_quarantine(remote, &census.packs[i].id, "damaged chunk found by verify --deep",
						  (int64_t)time(NULL));
			if (err) {
				status = rs_cli_fail(RS_EXIT_REMOTE, "cannot quarantine pack %.12s: %s", hex,
						     rs_error_message());
				goto out;
			}
			printf("quarantined pack %.12s\n", hex);
		}
		/* Local copies first: their new packs are what the others re-point at. */
		for (i = 0; i < plan.n; i++) {
			char hex[RS_ID_HEXSZ + 1];

			if (v[i].state != RS_VERIFY_DAMAGED || find_oid(&plan, i, &plan.items[i].oid) >= 0)
				continue;
			rs_id_to_hex(hex, &plan.items[i].oid);
			if (repush(repo, remote, &plan.items[i]) == 0) {
				v[i].state = RS_VERIFY_OK;
				restored++;
				printf("pushed again %.12s (run %s) from this clone\n", hex, plan.items[i].run_id);
			} else if (rs_error_last() != RS_ENOTFOUND) {
				printf("cannot push %.12s (run %s) again from this clone: %s\n", hex,
				       plan.items[i].run_id, rs_error_message());
				rs_error_clear();
			} else {
				rs_error_clear();
			}
		}
		err = rs_store_census_take(&census, remote);
		for (i = 0; !err && i < plan.n; i++) {
			char hex[RS_ID_HEXSZ + 1];

			if (v[i].state != RS_VERIFY_DAMAGED || find_oid(&plan, i, &plan.items[i].oid) >= 0)
				continue;
			rs_id_to_hex(hex, &plan.items[i].oid);
			if (rs_store_repoint(remote, &census, &plan.items[i].oid) == 0) {
				v[i].state = RS_VERIFY_OK;
				restored++;
				printf("re-pointed %.12s (run %s) at good copies of its chunks\n", hex,
				       plan.items[i].run_id);
			} else {
				printf("cannot restore %.12s (run %s): %s; no clone here holds it: run "
				       "'results verify --repair' in a clone that has it\n",
				       hex, plan.items[i].run_id, rs_error_message());
				rs_error_clear();
				lost++;
			}
		}
		if (err) {
			status = rs_cli_report(err);
			goto out;
		}
		for (i = 0; i < plan.n; i++) {
			int first = find_oid(&plan, i, &plan.items[i].oid);

			if (first >= 0)
				v[i].state = v[first].state;
		}
	}
	for (i = 0; i < plan.n; i++) {
		const struct rs_plan_item *it = &plan.items[i];
		int first = find_oid(&plan, i, &it->oid);
		const char *why_text = first >= 0 ? v[first].why : v[i].why;
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, &it->oid);
		printf("%-10s run %s  %.12s%s%s\n", rs_verify_state_name(v[i].state), it->run_id, hex,
		       v[i].state != RS_VERIFY_OK && why_text && *why_text ? ": " : "",
		       v[i].state != RS_VERIFY_OK && why_text ? why_text : "");
	}
	printf("%zu runs, %zu objects%s: %zu ok, %zu removed by retention, %zu missing, %zu incomplete, "
	       "%zu damaged", plan.runs, objects, deep ? " (deep)" : "", counts[RS_VERIFY_OK],
	       counts[RS_VERIFY_REMOVED], counts[RS_VERIFY_MISSING], counts[RS_VERIFY_INCOMPLETE],
	       counts[RS_VERIFY_DAMAGED]);
	if (repair)
		printf("; repaired %zu, not restorable here %zu", restored, lost);
	printf("\n");
	if (repair ? lost : counts[RS_VERIFY_DAMAGED])
		status = RS_EXIT_CORRUPT;
	else if (counts[RS_VERIFY_MISSING] || counts[RS_VERIFY_INCOMPLETE])
		status = RS_EXIT_MISSING;
out:
	if (v)
		for (i = 0; i < plan.n; i++)
			free(v[i].why);
	free(v);
	rs_buf_release(&why);
	rs_store_census_release(&census);
	rs_retention_plan_release(&plan);
	rs_remote_free(remote);
	rs_repo_free(repo);
	return status;
}
