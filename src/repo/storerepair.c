/*
 * verify --repair (results/store.h, rs_verify_repair): quarantine damaged
 * packs, push again what this clone holds, re-point the rest at good
 * copies of their chunks, and say what nobody here can restore
 * (docs/store-format.md, "Garbage collection and repair").
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "repo/census.h"
#include "results/buf.h"
#include "store/store.h"
#include "util/hash.h"

struct notes {
	void (*fn)(const char *line, void *payload);
	void *payload;
};

static void note(const struct notes *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One line for the user; one that cannot be formatted is not worth failing for. */
static void note(const struct notes *n, const char *fmt, ...)
{
	struct rs_buf line = RS_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = rs_buf_vprintf(&line, fmt, ap);
	va_end(ap);
	if (!err)
		n->fn(line.ptr, n->payload);
	rs_buf_release(&line);
}

/* The local LFS object of `it`, hashed: RS_ENOTFOUND when this clone lacks it. */
static int check_local(struct rs_buf *path, struct rs_repo *repo, const struct rs_plan_item *it)
{
	unsigned char md[64];
	unsigned int mdlen = 0;
	int err;

	err = rs_repo_lfs_has(repo, &it->oid, it->size);
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

/* Push `it` again from the local LFS object, after hashing it. */
static int repush(struct rs_repo *repo, struct rs_remote *remote, const struct rs_plan_item *it)
{
	struct rs_buf path = RS_BUF_INIT, key = RS_BUF_INIT;
	struct rs_store *store = NULL;
	int err;

	err = check_local(&path, repo, it);
	if (err)
		goto out;
	err = rs_key_manifest(&key, &it->oid);
	if (err)
		goto out;
	err = remote->del(remote, key.ptr);
	if (err == RS_ENOTFOUND) {
		rs_error_clear();
		err = 0;
	}
	if (err)
		goto out;
	/* No cache: borrow nothing, so every chunk of it is written anew. */
	err = rs_store_open(&store, remote, NULL);
	if (err)
		goto out;
	err = rs_store_put_file(store, &it->oid, it->size, path.ptr, NULL, NULL, NULL);
out:
	rs_store_free(store);
	rs_buf_release(&path);
	rs_buf_release(&key);
	return err;
}

static int quarantine_damaged(struct rs_survey *s, const struct notes *n)
{
	for (size_t i = 0; i < s->census.npacks; i++) {
		const struct rs_pack_state *pack = &s->census.packs[i];
		char hex[RS_ID_HEXSZ + 1];
		int err;

		if (!pack->damaged || pack->quarantined)
			continue;
		rs_id_to_hex(hex, &pack->id);
		err = rs_store_quarantine(s->remote, &pack->id, "damaged chunk found by verify --deep",
					  (int64_t)time(NULL));
		if (err)
			return rs_error_wrap(err, "cannot quarantine pack %.12s", hex);
		note(n, "quarantined pack %.12s", hex);
	}
	return 0;
}

/*
 * Sessions gc set aside that the policy keeps after all (a pin, or a
 * branch the clone that ran gc could not see): brought back while they
 * are still set aside (docs/retention.md).
 */
static void bring_back_kept(struct rs_survey *s, const struct notes *n)
{
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];

		if (s->v[i].state != RS_VERIFY_REMOVED || rs_survey_find_oid(&s->plan, i, &it->oid) >= 0 ||
		    !rs_retention_plan_keeps(&s->plan, &it->oid))
			continue;
		if (rs_store_bring_back(s->remote, &s->census, &it->oid) == 0) {
			s->v[i].state = RS_VERIFY_OK;
			s->restored++;
			note(n, "brought back %.12s (run %s): gc had set it aside, the policy keeps it",
			     s->v[i].hex, it->run_id);
		} else {
			rs_error_clear();
		}
	}
}

/* Item `i` is damaged and the first to name its object. */
static int damaged_first(const struct rs_survey *s, size_t i)
{
	return s->v[i].state == RS_VERIFY_DAMAGED &&
	       rs_survey_find_oid(&s->plan, i, &s->plan.items[i].oid) < 0;
}

/* The damaged objects (their first item) this clone holds: pushed again. */
static void repush_local(struct rs_survey *s, const struct notes *n)
{
	for (size_t i = 0; i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];

		if (!damaged_first(s, i))
			continue;
		if (repush(s->repo, s->remote, it) == 0) {
			s->v[i].state = RS_VERIFY_OK;
			s->restored++;
			note(n, "pushed again %.12s (run %s) from this clone", s->v[i].hex, it->run_id);
		} else if (rs_error_last() != RS_ENOTFOUND) {
			note(n, "cannot push %.12s (run %s) again from this clone: %s", s->v[i].hex,
			     it->run_id, rs_error_message());
			rs_error_clear();
		} else {
			rs_error_clear();
		}
	}
}

/* The damaged objects left: re-pointed at good copies of their chunks. */
static int repoint_rest(struct rs_survey *s, const struct notes *n)
{
	int err = rs_store_census_take(&s->census, s->remote);

	for (size_t i = 0; !err && i < s->plan.n; i++) {
		const struct rs_plan_item *it = &s->plan.items[i];

		if (!damaged_first(s, i))
			continue;
		if (rs_store_repoint(s->remote, &s->census, &it->oid) == 0) {
			s->v[i].state = RS_VERIFY_OK;
			s->restored++;
			note(n, "re-pointed %.12s (run %s) at good copies of its chunks", s->v[i].hex,
			     it->run_id);
		} else {
			note(n, "cannot restore %.12s (run %s): %s; no clone here holds it: run "
			     "'results verify --repair' in a clone that has it",
			     s->v[i].hex, it->run_id, rs_error_message());
			rs_error_clear();
			s->lost++;
		}
	}
	return err;
}

int rs_verify_repair(struct rs_survey *s, void (*fn)(const char *line, void *payload),
		     void *payload, enum rs_repair_step *failed)
{
	struct notes n = { fn, payload };
	int err;

	bring_back_kept(s, &n);
	*failed = RS_REPAIR_QUARANTINE;
	err = quarantine_damaged(s, &n);
	if (err)
		return err;
	/* Local copies first: their new packs are what the others re-point at. */
	repush_local(s, &n);
	*failed = RS_REPAIR_CENSUS;
	err = repoint_rest(s, &n);
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
