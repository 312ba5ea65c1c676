/*
 * What verify and gc start from (rs_survey: the remote, the retention
 * plan, the census), and verify with its repair (results/store.h;
 * docs/store-format.md, "Garbage collection and repair").
 */
#include "ops/census.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops/objstore.h"
#include "results/buf.h"
#include "store/store.h"
#include "util/hash.h"

/*
 * The git remote's refs into `s->git_refs`: what every clone shares, so
 * what retention judges with. Not seeing them is a doubt, never a guess:
 * gc then deletes nothing, verify judges with this clone's refs.
 */
static int survey_git_refs(struct rs_survey *s, enum rs_survey_scope scope)
{
	int err = rs_git_refs_sync(&s->git_refs, s->repo, scope == RS_SURVEY_REFS);

	if (!err && !s->git_refs.remote)
		return rs_buf_puts(&s->plan.notes, "this clone has no git remote: judged with its own "
				   "refs only\n");
	if (!err)
		return 0;
	err = rs_retention_plan_doubt(&s->plan, RS_ERETRY, "%s: gc deletes nothing until every branch "
				      "of the git remote can be read (check the network and 'git "
				      "ls-remote %s'); verify judges with this clone's refs",
				      rs_error_message(), s->git_refs.remote ? s->git_refs.remote : "origin");
	rs_error_clear();
	return err;
}

/* A run must be judged from its run.json when the store holds its session, or has it set aside. */
static int on_store(const struct rs_id *oid, void *payload)
{
	const struct rs_store_census *c = payload;

	return rs_store_census_has_object(c, oid) || rs_store_census_in_trash(c, oid);
}

int rs_survey_open(struct rs_survey **out, struct rs_repo *repo, int64_t now,
		   enum rs_survey_scope scope, enum rs_survey_step *failed)
{
	struct rs_survey *s = calloc(1, sizeof(*s));
	struct rs_retention_judged judged = { on_store, NULL };
	int err;

	*failed = RS_SURVEY_REMOTE;
	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	s->repo = repo;
	s->plan = (struct rs_retention_plan)RS_RETENTION_PLAN_INIT;
	s->git_refs = (struct rs_git_refs)RS_GIT_REFS_INIT;
	s->census = (struct rs_store_census)RS_STORE_CENSUS_INIT;
	err = rs_repo_open_remote(repo, &s->remote, NULL);
	if (err) {
		err = rs_error_wrap(err, "cannot open the remote");
		goto out;
	}
	/*
	 * The census first: the plan reads the run.json of the runs whose
	 * sessions the store holds, and only the pointers of the others.
	 */
	*failed = RS_SURVEY_CENSUS;
	err = rs_store_census_take(&s->census, s->remote);
	if (err) {
		err = rs_error_wrap(err, "cannot list the remote '%s'", s->remote->display_url);
		goto out;
	}
	*failed = RS_SURVEY_PLAN;
	if (scope != RS_SURVEY_HEAD) {
		err = survey_git_refs(s, scope);
		if (err)
			goto out;
	}
	judged.payload = &s->census;
	err = rs_retention_plan_make(repo, (time_t)now, scope == RS_SURVEY_HEAD, &s->git_refs,
				     &judged, &s->plan);
out:
	if (err) {
		rs_survey_free(s);
		return err;
	}
	*out = s;
	return 0;
}

void rs_survey_free(struct rs_survey *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->v && i < s->plan.n; i++)
		free(s->v[i].why);
	free(s->v);
	rs_store_census_release(&s->census);
	rs_retention_plan_release(&s->plan);
	rs_git_refs_release(&s->git_refs);
	rs_remote_free(s->remote);
	free(s);
}

const char *rs_survey_display_url(const struct rs_survey *s)
{
	return s->remote->display_url;
}

const char *rs_survey_doubts(const struct rs_survey *s, int *code)
{
	if (code)
		*code = s->plan.doubt_code;
	return rs_buf_cstr(&s->plan.doubts);
}

size_t rs_survey_unread(const struct rs_survey *s)
{
	return s->plan.unread;
}

const char *rs_survey_notes(const struct rs_survey *s)
{
	return rs_buf_cstr(&s->plan.notes);
}

void rs_survey_refs(const struct rs_survey *s, const char **remote_name, size_t *remote_refs,
		    size_t *local_refs)
{
	*remote_name = s->git_refs.remote;
	*remote_refs = s->plan.refs;
	*local_refs = s->plan.local_refs;
}

int rs_survey_remote_empty(const struct rs_survey *s)
{
	return !s->census.has_format && s->census.nobjects == 0 && s->plan.n > 0;
}

int rs_survey_find_oid(const struct rs_retention_plan *plan, size_t upto,
		       const struct rs_id *oid)
{
	size_t first = rs_retention_plan_first(plan, oid);

	return first < upto ? (int)first : -1;
}

int rs_verify_check(struct rs_survey *s, int deep)
{
	const struct rs_retention_plan *plan = &s->plan;
	struct rs_buf why = RS_BUF_INIT;
	int err = 0;

	s->v = calloc(plan->n ? plan->n : 1, sizeof(*s->v));
	if (!s->v)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (size_t i = 0; i < plan->n; i++) {
		const struct rs_plan_item *it = &plan->items[i];
		struct rs_verdict *v = &s->v[i];
		int first = rs_survey_find_oid(plan, i, &it->oid);

		rs_id_to_hex(v->hex, &it->oid);
		if (first >= 0) {
			v->state = s->v[first].state;
			continue;
		}
		s->objects++;
		err = rs_store_verify_object(s->remote, &s->census, &it->oid, it->size, deep,
					     &v->state, &why);
		if (err) {
			err = rs_error_wrap(err, "cannot read from the remote '%s'",
					    s->remote->display_url);
			break;
		}
		v->why = strdup(rs_buf_cstr(&why));
		if (!v->why) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			break;
		}
		s->counts[v->state]++;
	}
	rs_buf_release(&why);
	return err;
}

size_t rs_verify_rows(const struct rs_survey *s)
{
	return s->v ? s->plan.n : 0;
}

void rs_verify_row(const struct rs_survey *s, size_t i, struct rs_verify_row *row)
{
	const struct rs_plan_item *it = &s->plan.items[i];
	const struct rs_verdict *v = &s->v[i];
	int first = rs_survey_find_oid(&s->plan, i, &it->oid);
	const char *why = first >= 0 ? s->v[first].why : v->why;

	row->state = rs_verify_state_name(v->state);
	row->run_id = it->run_id;
	row->oid_hex = v->hex;
	row->why = v->state != RS_VERIFY_OK && why ? why : "";
}

void rs_verify_totals(const struct rs_survey *s, struct rs_verify_totals *out)
{
	out->runs = s->plan.runs;
	out->objects = s->objects;
	out->ok = s->counts[RS_VERIFY_OK];
	out->removed = s->counts[RS_VERIFY_REMOVED];
	out->missing = s->counts[RS_VERIFY_MISSING];
	out->incomplete = s->counts[RS_VERIFY_INCOMPLETE];
	out->damaged = s->counts[RS_VERIFY_DAMAGED];
	out->newer = s->counts[RS_VERIFY_NEWER];
	out->restored = s->restored;
	out->lost = s->lost;
	out->left_damaged = out->left_missing = 0;
	for (size_t i = 0; s->v && i < s->plan.n; i++) {
		enum rs_verify_state st = s->v[i].state;

		if (rs_survey_find_oid(&s->plan, i, &s->plan.items[i].oid) >= 0)
			continue;
		out->left_damaged += st == RS_VERIFY_DAMAGED;
		out->left_missing += st == RS_VERIFY_MISSING || st == RS_VERIFY_INCOMPLETE;
	}
}
