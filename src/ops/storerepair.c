/*
 * verify --repair (results/store.h, rs_verify_repair): quarantine damaged
 * packs, push again what this clone holds, re-point the rest at good
 * copies of their chunks, and say what nobody here can restore
 * (docs/store-format.md, "Garbage collection and repair"). Nothing is
 * reported repaired on the strength of a write that succeeded: each
 * object is read back, decoded and hashed first (proven()).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/census.h"
#include "git/note.h"
#include "git/unpushed.h"
#include "results/buf.h"
#include "store/store.h"
#include "util/hash.h"

/*
 * The local LFS object of `it`, hashed: RS_ENOTFOUND when this clone
 * lacks it (also as the copy it holds until the store has it, which is
 * put back where git-lfs keeps it: results/unpushed.h).
 */
static int check_local(struct rs_buf *path, struct rs_repo *repo, const struct rs_plan_item *it)
{
	unsigned char md[64];
	unsigned int mdlen = 0;
	int err;

	err = rs_unpushed_restore(repo, &it->oid, it->size);
	if (err)
		return err;
	err = rs_repo_lfs_object_path(path, repo, &it->oid);
	if (err)
		return err;
	err = rs_digest_file("SHA256", path->ptr, 0, it->size, md, &mdlen);
	if (err)
		return err;
	if (mdlen != RS_ID_RAWSZ || memcmp(md, it->oid.id, RS_ID_RAWSZ))
		return rs_error_set(RS_ECORRUPT, "the local copy '%s' is damaged too", path->ptr);
	return 0;
}

/*
 * Push `it` again from the local LFS object, after hashing it. The store
 * replaces whatever manifest is listed (it may list the wrong chunks) and
 * borrows only from packs that are listed, indexed and not quarantined.
 */
static int repush(struct rs_repo *repo, struct rs_remote *remote, const struct rs_plan_item *it)
{
	struct rs_store_options o = { 0 };
	struct rs_buf path = RS_BUF_INIT;
	struct rs_store *store = NULL;
	int err;

	err = check_local(&path, repo, it);
	if (err)
		goto out;
	o.replace = 1;
	err = rs_store_open(&store, remote, &o);
	if (err)
		goto out;
	err = rs_store_put_file(store, &it->oid, it->size, path.ptr, NULL, NULL, NULL);
	if (err == 0) {
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, &it->oid);
		err = rs_unpushed_release(repo, hex);
	}
out:
	rs_store_free(store);
	rs_buf_release(&path);
	return err;
}

static int quarantine_damaged(struct rs_survey *s, const struct rs_notes *n)
{
	for (size_t i = 0; i < s->census.npacks; i++) {
		struct rs_pack_state *pack = &s->census.packs[i];
		char hex[RS_ID_HEXSZ + 1];
		int err;

		if (!pack->damaged || pack->quarantined)
			continue;
		rs_id_to_hex(hex, &pack->id);
		err = rs_store_quarantine(s->remote, &pack->id, "damaged chunk found by verify --deep",
					  (int64_t)time(NULL));
		if (err)
			return rs_error_wrap(err, "cannot quarantine pack %.12s", hex);
		pack->quarantined = 1;
		rs_note(n, "quarantined pack %.12s", hex);
	}
	return 0;
}

/*
 * Sessions gc set aside that the policy keeps after all (a pin, or a
 * branch the clone that ran gc could not see): brought back while they
 * are still set aside (docs/retention.md).
 */
static void bring_back_kept(struct rs_survey *s, const struct rs_notes *n)
{
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];

		if (s->v[i].state != RS_VERIFY_REMOVED || rs_survey_find_oid(&s->plan, i, &it->oid) >= 0 ||
		    !rs_retention_plan_keeps(&s->plan, &it->oid))
			continue;
		if (rs_store_bring_back(s->remote, &s->census, &it->oid) == 0) {
			s->v[i].state = RS_VERIFY_OK;
			s->restored++;
			rs_note(n, "brought back %.12s (run %s): gc had set it aside, the policy keeps it",
				s->v[i].hex, it->run_id);
		} else {
			rs_error_clear();
		}
	}
}

/* What a repair restores: damage and loss, never a newer writer's object. */
static int needs_repair(enum rs_verify_state st)
{
	return st == RS_VERIFY_DAMAGED || st == RS_VERIFY_MISSING || st == RS_VERIFY_INCOMPLETE;
}

/* Item `i` needs repair and is the first to name its object. */
static int to_repair(const struct rs_survey *s, size_t i)
{
	return needs_repair(s->v[i].state) &&
	       rs_survey_find_oid(&s->plan, i, &s->plan.items[i].oid) < 0;
}

/*
 * The proof that a repair worked: the object, read as a reader reads it
 * (every chunk checked, the transform undone, the oid hashed), is OK.
 * Packs with a bad chunk get `damaged` set in the census.
 */
static int proven(struct rs_survey *s, const struct rs_plan_item *it, struct rs_buf *why, int *ok)
{
	enum rs_verify_state st = RS_VERIFY_DAMAGED;
	int err;

	err = rs_store_verify_object(s->remote, &s->census, &it->oid, it->size, 1, &st, why);
	*ok = !err && st == RS_VERIFY_OK;
	return err;
}

/* Item `i` is restored (proven): counted, and said so ("<how> <oid> (run <id>) <where>"). */
static void restored(struct rs_survey *s, const struct rs_notes *n, size_t i, const char *how,
		     const char *where)
{
	s->v[i].state = RS_VERIFY_OK;
	s->restored++;
	rs_note(n, "%s %.12s (run %s) %s", how, s->v[i].hex, s->plan.items[i].run_id, where);
}

/* Per item of the plan: where its repair stands. */
enum attempt { NOT_TRIED, NOT_HERE, PUSHED, PUSH_FAILED };

/* Push again each object to repair that this clone holds (not yet pushed). */
static void repush_local(struct rs_survey *s, const struct rs_notes *n, enum attempt *a)
{
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];

		if (!to_repair(s, i) || a[i] == NOT_HERE || a[i] == PUSH_FAILED)
			continue;
		if (repush(s->repo, s->remote, it) == 0) {
			a[i] = PUSHED;
		} else if (rs_error_last() != RS_ENOTFOUND) {
			rs_note(n, "cannot push %.12s (run %s) again from this clone: %s", s->v[i].hex,
			     it->run_id, rs_error_message());
			rs_error_clear();
			a[i] = PUSH_FAILED;
		} else {
			rs_error_clear();
			a[i] = NOT_HERE;
		}
	}
}

/*
 * Prove what repush_local pushed. One that still does not rebuild because
 * it borrowed a chunk from a pack that turns out damaged (its .idx lied)
 * is tried again once that pack is quarantined: `*again` says so.
 */
static int prove_pushed(struct rs_survey *s, const struct rs_notes *n, enum attempt *a, int last,
			int *again)
{
	struct rs_buf why = RS_BUF_INIT;
	int err = rs_store_census_take(&s->census, s->remote);

	*again = 0;
	for (size_t i = 0; !err && i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];
		int ok = 0;

		if (a[i] != PUSHED || !to_repair(s, i))
			continue;
		err = proven(s, it, &why, &ok);
		if (err)
			break;
		if (ok) {
			restored(s, n, i, "pushed again", "from this clone");
		} else if (!last) {
			a[i] = NOT_TRIED;
			*again = 1;
		} else {
			rs_note(n, "pushed %.12s (run %s) again, but it still does not rebuild: %s",
			     s->v[i].hex, it->run_id, rs_buf_cstr(&why));
			a[i] = PUSH_FAILED;
		}
	}
	rs_buf_release(&why);
	if (!err && *again)
		err = quarantine_damaged(s, n);
	return err;
}

/*
 * The objects left that have a manifest: re-pointed at good copies of
 * their chunks (rs_store_repoint proves the new manifest before writing
 * it), then proven again as a reader reads them.
 */
static int repoint_rest(struct rs_survey *s, const struct rs_notes *n, const enum attempt *a)
{
	struct rs_buf why = RS_BUF_INIT;
	int err = 0;

	for (size_t i = 0; !err && i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];
		int ok = 0;

		if (!to_repair(s, i))
			continue;
		if (s->v[i].state != RS_VERIFY_MISSING &&
		    rs_store_repoint(s->remote, &s->census, &it->oid) == 0) {
			err = proven(s, it, &why, &ok);
			if (err)
				break;
			if (ok) {
				restored(s, n, i, "re-pointed", "at good copies of its chunks");
				continue;
			}
			rs_error_set(RS_ECORRUPT, "re-pointed, it still does not rebuild: %s",
				     rs_buf_cstr(&why));
		} else if (s->v[i].state == RS_VERIFY_MISSING) {
			rs_error_set(RS_ENOTFOUND, "its manifest is not on the remote");
		}
		rs_note(n, "cannot restore %.12s (run %s): %s%s", s->v[i].hex, it->run_id,
		     rs_error_message(), a[i] == PUSH_FAILED ? "" :
		     "; no clone here holds it: run 'results verify --repair' in a clone that has it");
		rs_error_clear();
		s->lost++;
	}
	rs_buf_release(&why);
	return err;
}

int rs_verify_repair(struct rs_survey *s, void (*fn)(const char *line, void *payload),
		     void *payload, enum rs_repair_step *failed)
{
	struct rs_notes n = { fn, payload };
	enum attempt *a = calloc(s->plan.n ? s->plan.n : 1, sizeof(*a));
	int err, again = 0;

	bring_back_kept(s, &n);
	*failed = RS_REPAIR_QUARANTINE;
	if (!a)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = quarantine_damaged(s, &n);
	/* Local copies first: their new packs are what the others re-point at. */
	for (int round = 0; !err && round < 2; round++) {
		repush_local(s, &n, a);
		*failed = RS_REPAIR_CENSUS;
		err = prove_pushed(s, &n, a, round == 1, &again);
		if (!again)
			break;
	}
	if (!err)
		err = repoint_rest(s, &n, a);
	free(a);
	if (err)
		return err;
	/* Later items share the verdicts of the first. */
	for (size_t i = 0; i < s->plan.n; i++) {
		int first = rs_survey_find_oid(&s->plan, i, &s->plan.items[i].oid);

		if (first >= 0)
			s->v[i].state = s->v[first].state;
	}
	return 0;
}
