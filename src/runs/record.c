/*
 * results/record.h: a run being recorded, behind an opaque type over
 * struct rs_run (runs/run.h), so that programs see no jansson.
 */
#include "results/record.h"

#include <stdlib.h>
#include <string.h>

#include "runs/run.h"

struct rs_record {
	struct rs_run run;
};

int rs_record_new(struct rs_record **out)
{
	struct rs_record *rec = calloc(1, sizeof(*rec));

	if (!rec)
		return rs_error_set(RS_EGENERIC, "out of memory");
	rs_run_init(&rec->run);
	*out = rec;
	return 0;
}

void rs_record_free(struct rs_record *rec)
{
	if (!rec)
		return;
	rs_run_release(&rec->run);
	free(rec);
}

int rs_record_set_commit(struct rs_record *rec, const char *sha)
{
	return rs_run_set_commit(&rec->run, sha);
}

int rs_record_set_trigger(struct rs_record *rec, const char *trigger)
{
	return rs_run_set_trigger(&rec->run, trigger);
}

int rs_record_set_branch(struct rs_record *rec, const char *branch)
{
	return rs_run_set_branch(&rec->run, branch);
}

int rs_record_add_meta(struct rs_record *rec, const char *key_value)
{
	return rs_run_add_meta(&rec->run, key_value);
}

int rs_record_set_message(struct rs_record *rec, const char *message)
{
	char *copy = strdup(message);

	if (!copy)
		return rs_error_set(RS_EGENERIC, "out of memory");
	free(rec->run.message);
	rec->run.message = copy;
	return 0;
}

void rs_record_set_raw(struct rs_record *rec, int raw)
{
	rec->run.raw = raw;
}

void rs_record_set_time(struct rs_record *rec, time_t t)
{
	rs_run_set_time(&rec->run, t);
}

int rs_record_profiled_branch(struct rs_buf *out, const struct rs_record *rec,
			      const struct rs_repo *repo, const char *path)
{
	return rs_run_profiled_branch(out, &rec->run, repo, path);
}

int rs_record_detect_machine(struct rs_record *rec)
{
	return rs_run_detect_machine(&rec->run);
}

int rs_record_add_stats_file(struct rs_record *rec, const char *path)
{
	return rs_run_add_stats_file(&rec->run, path);
}

int rs_record_add_path(struct rs_record *rec, struct rs_repo *repo, const char *path)
{
	return rs_run_add_path(&rec->run, repo, path);
}

int rs_record_commit(struct rs_record *rec, struct rs_repo *repo, char *commit_hex)
{
	return rs_run_record(&rec->run, repo, commit_hex);
}

const char *rs_record_id(const struct rs_record *rec)
{
	return rec->run.id;
}

const char *rs_record_folder(const struct rs_record *rec)
{
	return rec->run.folder;
}

int rs_record_session(const struct rs_record *rec, const char **name, unsigned long long *size)
{
	const struct rs_run *run = &rec->run;

	if (run->main_session < 0 || (size_t)run->main_session >= run->nfiles)
		return rs_error_set(RS_ENOTFOUND, "run %s has no session",
				    run->id ? run->id : "(not recorded)");
	*name = run->files[run->main_session].name;
	*size = (unsigned long long)run->files[run->main_session].size;
	return 0;
}
