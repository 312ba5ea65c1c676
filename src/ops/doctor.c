/*
 * results doctor, as a library call (results/store.h, rs_doctor_run): what
 * is configured, whether the remote answers, and what to fix. Each check
 * gives one finding, ok, warn or fail, and a failing one says what to
 * run. Everything is read, nothing is changed.
 *
 * Running a program (the agent's --version) and looking at PATH are left
 * to the program through callbacks.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remote/remote.h"
#include "git/repo.h"
#include "runs/retention.h"
#include "results/buf.h"
#include "results/setup.h"
#include "results/store.h"
#include "store/format.h"
#include "store/maint.h"
#include "store/store.h"
#include "util/fs.h"
#include "util/hash.h"

#define TEXT_MAX (1u << 20)

struct doctor {
	struct rs_repo *repo;
	const struct rs_doctor_options *o;
	int fails;
	int remote_failed; /* check_remote found it not answering */
	struct rs_error_saved remote_why; /* why, when remote_failed */
};

static void vsay(struct doctor *d, enum rs_doctor_level level, enum rs_doctor_kind kind,
		 const char *fmt, va_list ap)
{
	struct rs_buf line = RS_BUF_INIT;
	int err = rs_buf_vprintf(&line, fmt, ap);

	/* A finding that cannot be formatted is still a finding. */
	d->o->say(level, kind, err ? "out of memory" : line.ptr, d->o->payload);
	if (level == RS_DOCTOR_FAIL)
		d->fails++;
	rs_buf_release(&line);
}

static void ok(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct doctor *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct doctor *d, enum rs_doctor_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ok(struct doctor *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(d, RS_DOCTOR_OK, RS_DOCTOR_SETUP, fmt, ap);
	va_end(ap);
}

static void warn(struct doctor *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(d, RS_DOCTOR_WARN, RS_DOCTOR_SETUP, fmt, ap);
	va_end(ap);
}

static void fail(struct doctor *d, enum rs_doctor_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(d, RS_DOCTOR_FAIL, kind, fmt, ap);
	va_end(ap);
}

static int config(struct doctor *d, const char *key, struct rs_buf *out)
{
	int err;

	rs_buf_clear(out);
	err = rs_repo_config_get(d->repo, key, out);
	rs_error_clear();
	return err == 0 && out->len > 0;
}

/* The agent git-lfs will use here, found as results add finds it
   (rs_repo_transfer_agent: url-matched, then lfs.standalonetransferagent). */
static void check_agent(struct doctor *d)
{
	struct rs_buf name = RS_BUF_INIT, key = RS_BUF_INIT, val = RS_BUF_INIT;
	struct rs_buf endpoint = RS_BUF_INIT;

	if (rs_repo_transfer_agent(d->repo, &name, &val, &endpoint) != 0) {
		fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
		goto out;
	}
	if (!name.len) {
		fail(d, RS_DOCTOR_SETUP, "no standalone transfer agent: git-lfs would not use "
		    "lfs-agent; run 'results init'");
		goto out;
	}
	ok(d, "git-lfs transfers through the agent '%s'", name.ptr);
	if (rs_buf_printf(&key, "lfs.customtransfer.%s.path", name.ptr) != 0) {
		fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
		goto out;
	}
	if (!val.len) {
		fail(d, RS_DOCTOR_SETUP, "%s is not set; run 'results init'", key.ptr);
		goto out;
	}
	if (val.ptr[0] != '/')
		warn(d, "%s is not an absolute path ('%s'): it only works where it is on PATH",
		    key.ptr, val.ptr);
	if (access(val.ptr, X_OK) != 0)
		fail(d, RS_DOCTOR_SETUP, "the agent '%s' is missing or not executable; reinstall "
		    "results or run 'results init --agent PATH'", val.ptr);
	else if (d->o->runs_ok(val.ptr, "--version", d->o->payload) != 0)
		fail(d, RS_DOCTOR_SETUP, "the agent '%s' does not run ('%s --version' fails); "
		    "reinstall results", val.ptr, val.ptr);
	else
		ok(d, "lfs-agent %s runs", val.ptr);
	if (config(d, "lfs.url", &val))
		warn(d, "lfs.url is set ('%s'): it replaces the LFS endpoint of every remote, "
		    "so per-repository agent settings may not apply; 'git config --unset lfs.url' "
		    "unless you need it", val.ptr);
out:
	rs_buf_release(&name);
	rs_buf_release(&key);
	rs_buf_release(&val);
	rs_buf_release(&endpoint);
}

static void check_git_lfs(struct doctor *d)
{
	struct rs_buf val = RS_BUF_INIT;

	if (!d->o->on_path("git-lfs", d->o->payload))
		fail(d, RS_DOCTOR_SETUP, "git-lfs is not on PATH; install it (Debian: apt-get "
		    "install git-lfs)");
	else if (!config(d, "filter.lfs.process", &val) && !config(d, "filter.lfs.smudge", &val))
		fail(d, RS_DOCTOR_SETUP, "the git-lfs filters are not configured; run 'git lfs "
		    "install' or 'results init'");
	else
		ok(d, "git-lfs and its filters are set up");
	rs_buf_release(&val);
}

static void check_hooks(struct doctor *d)
{
	struct rs_buf dir = RS_BUF_INIT, path = RS_BUF_INIT, text = RS_BUF_INIT;
	size_t i;
	int ours = 0;

	/* Where results init installs them. */
	if (rs_repo_hooks_dir(&dir, d->repo) != 0) {
		/* no "(null)/pre-push": the check cannot run, and says why */
		fail(d, RS_DOCTOR_SETUP, "cannot tell where the hooks are: %s", rs_error_message());
		goto out;
	}
	for (i = 0; i < RS_SETUP_HOOKS; i++) {
		rs_buf_clear(&path);
		rs_buf_clear(&text);
		if (rs_buf_printf(&path, "%s/%s", dir.ptr, rs_setup_hook_names[i]) != 0) {
			fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
			break;
		}
		if (rs_fs_read_file(&text, path.ptr, TEXT_MAX) != 0 || access(path.ptr, X_OK) != 0) {
			fail(d, RS_DOCTOR_SETUP, "hook %s is missing: git-lfs will not %s; run "
			    "'results init'", rs_setup_hook_names[i],
			    i == 0 ? "upload sessions on push" : "track locks and checkouts");
		} else if (strstr(text.ptr, "results hook")) {
			ours++;
		} else if (strstr(text.ptr, "git lfs")) {
			warn(d, "hook %s is git-lfs's own: it works, but %s; run 'results init' "
			    "to install ours", rs_setup_hook_names[i],
			    i == 0 ? "raw sessions are not refused on push" : "it is not ours");
		} else {
			fail(d, RS_DOCTOR_SETUP, "hook %s (%s) does not run git-lfs: make it call "
			    "'git lfs %s \"$@\"'", rs_setup_hook_names[i], path.ptr, rs_setup_hook_names[i]);
		}
		rs_error_clear();
	}
	if (ours == RS_SETUP_HOOKS)
		ok(d, "hooks installed in %s", dir.ptr);
out:
	rs_error_clear();
	rs_buf_release(&dir);
	rs_buf_release(&path);
	rs_buf_release(&text);
}

/* Does any line of `text` contain both `a` and `b`? */
static int line_has(const char *text, const char *a, const char *b)
{
	while (text && *text) {
		size_t n = strcspn(text, "\n");
		char *line = strndup(text, n);
		int hit = line && strstr(line, a) && strstr(line, b) && line[0] != '#';

		free(line);
		if (hit)
			return 1;
		text += n + (text[n] == '\n');
	}
	return 0;
}

static void check_files(struct doctor *d)
{
	struct rs_buf text = RS_BUF_INIT;

	if (rs_repo_read_tree_file(d->repo, NULL, ".gitattributes", TEXT_MAX, &text) != 0)
		fail(d, RS_DOCTOR_SETUP, "no .gitattributes committed: sessions would be stored as "
		    "raw blobs; run 'results init'");
	else if (!line_has(text.ptr, "*.pyisession", "filter=lfs"))
		fail(d, RS_DOCTOR_SETUP, ".gitattributes does not send *.pyisession through LFS; add "
		    "'*.pyisession filter=lfs diff=lfs merge=lfs -text'");
	else
		ok(d, ".gitattributes sends *.pyisession through Git LFS");
	rs_buf_clear(&text);
	rs_error_clear();
	if (rs_repo_read_tree_file(d->repo, NULL, ".lfsconfig", TEXT_MAX, &text) != 0)
		warn(d, "no .lfsconfig committed: every clone downloads every session; "
		    "run 'results init'");
	else if (!line_has(text.ptr, "fetchexclude", "pyisession"))
		warn(d, ".lfsconfig does not exclude *.pyisession from fetches: clones "
		    "download every session");
	else
		ok(d, ".lfsconfig keeps sessions out of clones and pulls");
	rs_error_clear();
	rs_buf_release(&text);
}

static void check_remote(struct doctor *d)
{
	struct rs_buf url = RS_BUF_INIT, shown = RS_BUF_INIT;
	struct rs_remote *remote = NULL;
	int from_config = 0, err;

	err = rs_repo_remote_url(d->repo, &url, &from_config);
	if (err) {
		fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
		goto out;
	}
	err = rs_url_strip_credentials(&shown, url.ptr);
	if (err) {
		fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
		goto out;
	}
	if (!from_config) {
		fail(d, RS_DOCTOR_SETUP, "results.remote is not set in this clone (%s names '%s'); "
		    "run 'results init'", RS_REPO_MARKER, shown.ptr);
	} else if (rs_repo_check_remote(d->repo) != 0) {
		/* A pulled change of remote: asking the old one proves nothing. */
		fail(d, RS_DOCTOR_SETUP, "%s", rs_error_message());
		rs_error_clear();
		goto out;
	} else {
		ok(d, "remote %s", shown.ptr);
	}
	err = rs_repo_open_remote(d->repo, &remote, NULL);
	/* The remote answers, and its FORMAT (if any yet) is this results' own. */
	if (err == 0)
		err = rs_store_read_format(remote);
	if (err == RS_ENOTFOUND)
		err = 0; /* no store yet: the first push writes it */
	d->remote_failed = err != 0;
	if (err)
		rs_error_save(&d->remote_why, err);
	if (err == RS_ENEWER)
		fail(d, RS_DOCTOR_NEWER, "%s", rs_error_message());
	else if (err)
		fail(d, RS_DOCTOR_REMOTE, "the remote does not answer: %s; check the URL and "
		    "credentials", rs_error_message());
	else
		ok(d, "the remote answers");
	rs_error_clear();
out:
	rs_remote_free(remote);
	rs_buf_release(&url);
	rs_buf_release(&shown);
}

/* How many of the newest runs' sessions doctor looks for on the remote. */
#define SPOT_CHECK_RUNS 3

/*
 * Spot check: the sessions of the newest runs of this checkout are on the
 * remote (manifest present), or were removed by retention. A cheap stat
 * each; `results verify` checks them all. Only "not found" means missing:
 * a remote that refuses the credentials or does not answer says nothing
 * about the sessions, so the check says it could not run and stops
 * (check_remote has named the failure).
 */
static void check_newest_runs(struct doctor *d)
{
	struct rs_retention_plan plan = RS_RETENTION_PLAN_INIT;
	struct rs_remote *remote = NULL;
	struct rs_buf key = RS_BUF_INIT, date = RS_BUF_INIT;
	size_t i, runs = 0, missing = 0;
	const char *last = "";
	int err;

	if (d->remote_failed) {
		warn(d, "could not check the newest runs' sessions on the remote: %s",
		     d->remote_why.message);
		goto out;
	}
	if (rs_retention_plan_make(d->repo, time(NULL), 1, NULL, NULL, &plan) ||
	    rs_repo_open_remote(d->repo, &remote, NULL)) {
		rs_error_clear();
		goto out; /* said by check_remote or check_files */
	}
	for (i = 0; i < plan.n && runs <= SPOT_CHECK_RUNS; i++) {
		const struct rs_plan_item *it = &plan.items[i];
		char hex[RS_ID_HEXSZ + 1];

		if (strcmp(it->run_id, last)) {
			if (++runs > SPOT_CHECK_RUNS)
				break;
			last = it->run_id;
		}
		rs_id_to_hex(hex, &it->oid);
		rs_buf_clear(&date);
		err = rs_key_manifest(&key, &it->oid);
		if (err) {
			rs_error_clear();
			continue;
		}
		err = remote->stat(remote, key.ptr, NULL);
		if (err == 0)
			continue;
		if (err == RS_ENOTFOUND)
			err = rs_store_removed_date(remote, &it->oid, &date);
		if (err == 0) {
			ok(d, "the raw session of run %s was removed by retention on %s", it->run_id,
			    date.ptr);
			continue;
		}
		if (err != RS_ENOTFOUND) {
			warn(d, "could not check the session %.12s of run %s on the remote: %s",
			     hex, it->run_id, rs_error_message());
			rs_error_clear();
			runs = 0; /* no "sessions are on the remote" either */
			break;
		}
		rs_error_clear();
		missing++;
		fail(d, RS_DOCTOR_MISSING, "the session %.12s of run %s is not on the remote: 'git push' from "
		    "the clone that recorded it ('results verify' checks every run)", hex, it->run_id);
	}
	if (runs && !missing)
		ok(d, "the newest run%s' sessions are on the remote", runs > 1 ? "s" : "");
out:
	rs_retention_plan_release(&plan);
	rs_remote_free(remote);
	rs_buf_release(&key);
	rs_buf_release(&date);
}

void rs_doctor_run(const char *path, const struct rs_doctor_options *o)
{
	struct doctor d = { .o = o };
	int fails;

	if (rs_repo_open(&d.repo, path) != 0) {
		fail(&d, RS_DOCTOR_NOT_REPO, "%s", rs_error_message());
		return;
	}
	ok(&d, "git repository %s", rs_repo_workdir(d.repo));
	if (rs_repo_check_results(d.repo) != 0) {
		fail(&d, RS_DOCTOR_NOT_REPO, "%s", rs_error_message());
		goto out;
	}
	check_remote(&d);
	fails = d.fails;
	check_agent(&d);
	/* What `results add` refuses on (the url-matched agent, lfs-agent). */
	if (d.fails == fails && rs_repo_check_transfer(d.repo) != 0)
		fail(&d, RS_DOCTOR_SETUP, "%s", rs_error_message());
	rs_error_clear();
	check_git_lfs(&d);
	check_hooks(&d);
	check_files(&d);
	check_newest_runs(&d);
out:
	rs_error_clear();
	rs_repo_free(d.repo);
}
