#include "cli/runsel.h"
#include "cli/cli.h"
#include "repo/run.h"
#include "results/error.h"
#include "util/hash.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int rs_runsel_open(struct rs_runsel *s)
{
	int status, err;

	s->repo = NULL;
	rs_runindex_init(&s->idx);
	status = rs_cli_open_repo(&s->repo);
	if (status != RS_EXIT_OK)
		return status;
	err = rs_runindex_load(&s->idx, s->repo, NULL, 0);
	if (err)
		return rs_cli_report(err);
	return RS_EXIT_OK;
}

void rs_runsel_close(struct rs_runsel *s)
{
	rs_runindex_release(&s->idx);
	rs_repo_free(s->repo);
	s->repo = NULL;
}

int rs_runsel_resolve(const struct rs_run_entry **out, struct rs_runsel *s,
		      const char *query)
{
	if (rs_runindex_resolve(out, &s->idx, query))
		return rs_cli_error(RS_EXIT_UNKNOWN);
	return RS_EXIT_OK;
}

size_t rs_runsel_pos(const struct rs_runsel *s, const struct rs_run_entry *e)
{
	return (size_t)(e - s->idx.runs);
}

int rs_runsel_load(json_t **out, struct rs_runsel *s, const struct rs_run_entry *e)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	json_error_t jerr;
	json_t *doc = NULL;
	int err, status = RS_EXIT_OK;

	err = rs_buf_printf(&path, "%s/run.json", e->path);
	if (err) {
		status = rs_cli_report(err);
		goto out;
	}
	err = rs_repo_read_tree_file(s->repo, NULL, path.ptr, RS_RUN_MAX_RUN_JSON, &text);
	if (err) {
		status = rs_cli_fail(err == RS_ENOTFOUND ? RS_EXIT_CORRUPT : rs_cli_exit_for(err),
				     "run %s is in the index but %s cannot be read: %s",
				     e->id, path.ptr, rs_error_message());
		goto out;
	}
	doc = json_loadb(text.ptr, text.len, 0, &jerr);
	if (!json_is_object(doc)) {
		status = rs_cli_fail(RS_EXIT_CORRUPT, "%s is not a JSON object: %s",
				     path.ptr, doc ? "wrong type" : jerr.text);
		goto out;
	}
	/* The index is the authority on where the run lives and what it is
	 * called; run.json of an older format may lack these. */
	json_object_set_new(doc, "path", json_string(e->path));
	if (!json_is_string(json_object_get(doc, "id")))
		json_object_set_new(doc, "id", json_string(e->id));
	if (!json_is_string(json_object_get(doc, "commit")))
		json_object_set_new(doc, "commit", json_string(e->commit));
	*out = doc;
	doc = NULL;
out:
	json_decref(doc);
	rs_buf_release(&path);
	rs_buf_release(&text);
	return status;
}

int rs_runsel_newest(const struct rs_run_entry ***out, size_t *n, const struct rs_runsel *s,
		     const char *branch, size_t limit)
{
	const struct rs_run_entry **picked = calloc(limit, sizeof(*picked));

	*out = picked;
	*n = 0;
	if (!picked)
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	for (size_t i = s->idx.count; i-- > 0 && *n < limit;) {
		const struct rs_run_entry *e = &s->idx.runs[i];

		if (branch && (!e->branch || strcmp(e->branch, branch)))
			continue;
		picked[(*n)++] = e;
	}
	return RS_EXIT_OK;
}

json_t *rs_runsel_entry_json(const struct rs_run_entry *e)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	json_object_set_new(o, "id", json_string(e->id));
	json_object_set_new(o, "commit", json_string(e->commit));
	if (e->branch)
		json_object_set_new(o, "branch", json_string(e->branch));
	if (e->trigger)
		json_object_set_new(o, "trigger", json_string(e->trigger));
	if (e->recorded_at)
		json_object_set_new(o, "recorded_at", json_string(e->recorded_at));
	json_object_set_new(o, "path", json_string(e->path));
	json_object_set(o, "metrics", e->metrics);
	return o;
}

int rs_runsel_write(const char *path, const struct rs_buf *b)
{
	FILE *f;

	if (!path || !strcmp(path, "-")) {
		fwrite(b->ptr ? b->ptr : "", 1, b->len, stdout);
		if (fflush(stdout))
			return rs_cli_fail(RS_EXIT_OTHER, "cannot write the output");
		return RS_EXIT_OK;
	}
	f = fopen(path, "wb");
	if (!f)
		return rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", path, strerror(errno));
	fwrite(b->ptr ? b->ptr : "", 1, b->len, f);
	if (fclose(f))
		return rs_cli_fail(RS_EXIT_OTHER, "cannot write '%s': %s", path, strerror(errno));
	return RS_EXIT_OK;
}

int rs_runsel_parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || (*end && strcmp(end, "%")) || !isfinite(v) || v <= 0 ||
	    v >= 1000)
		return rs_cli_fail(RS_EXIT_USAGE, "'%s' is not a percentage (for example 5 or 5%%)", s);
	*out = v / 100;
	return RS_EXIT_OK;
}

int rs_runsel_parse_count(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || *end || errno || v == 0 || v > 1000000 || *s == '-')
		return rs_cli_fail(RS_EXIT_USAGE, "'%s' is not a positive count", s);
	*out = (size_t)v;
	return RS_EXIT_OK;
}

/* Run `results fetch <id>` and return its exit status. */
static int fetch_with_child(const char *id)
{
	const char *dir = rs_cli_exe_dir();
	char exe[4096];
	pid_t pid;
	int st;

	if (!dir || snprintf(exe, sizeof(exe), "%s/results", dir) >= (int)sizeof(exe))
		return rs_cli_fail(RS_EXIT_OTHER, "cannot find the results program to fetch with");
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return rs_cli_fail(RS_EXIT_OTHER, "cannot start 'results fetch': %s", strerror(errno));
	if (pid == 0) {
		/* the fetched path is not this command's output */
		if (!freopen("/dev/null", "w", stdout))
			_exit(RS_EXIT_OTHER);
		/* "--": an id from the repository is never taken for an option. */
		execl(exe, "results", "fetch", "--", id, (char *)NULL);
		_exit(RS_EXIT_OTHER);
	}
	if (waitpid(pid, &st, 0) < 0)
		return rs_cli_fail(RS_EXIT_OTHER, "waiting for 'results fetch': %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : RS_EXIT_OTHER;
}

/* The local LFS object path of the run's main session, fetching it if needed. */
int rs_runsel_session_path(struct rs_buf *path, struct rs_runsel *sel,
			   const struct rs_run_entry *e)
{
	json_t *run = NULL;
	const json_t *s;
	const char *oidhex;
	struct rs_id oid;
	double size;
	int status;

	status = rs_runsel_load(&run, sel, e);
	if (status)
		return status;
	s = json_object_get(run, "session");
	oidhex = json_string_value(json_object_get(s, "oid"));
	size = json_number_value(json_object_get(s, "size"));
	if (!json_is_object(s) || !oidhex || rs_id_from_hex(&oid, oidhex, strlen(oidhex))) {
		json_decref(run);
		return rs_cli_fail(RS_EXIT_UNKNOWN, "run %s has no session "
				   "(recorded with --raw?)", e->id);
	}
	json_decref(run);
	if (rs_repo_lfs_has(sel->repo, &oid, (uint64_t)size)) {
		status = fetch_with_child(e->id);
		if (status)
			return status; /* fetch printed why */
	}
	if (rs_repo_lfs_object_path(path, sel->repo, &oid))
		return rs_cli_report(RS_EGENERIC);
	return RS_EXIT_OK;
}

json_t *rs_runsel_config(struct rs_runsel *s)
{
	struct rs_buf text = RS_BUF_INIT;
	json_t *j = NULL;

	if (s->repo && !rs_repo_read_tree_file(s->repo, NULL, RS_REPO_MARKER,
						RS_REPO_MARKER_MAX, &text) && text.len)
		j = json_loadb(text.ptr, text.len, 0, NULL);
	rs_buf_release(&text);
	rs_error_clear();
	if (!json_is_object(j)) {
		json_decref(j);
		j = json_object();
	}
	return j;
}
