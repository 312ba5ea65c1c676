/*
 * results doctor: say what is configured, whether the remote answers, and
 * what to fix. Each check prints one line, "ok", "warn" or "FAIL", and a
 * FAIL line says what to run. The exit status is that of the first
 * failure's kind: 3 (not a results repository), 5 (remote does not
 * answer), 8 (set-up incomplete); 0 when nothing failed.
 *
 * Everything is read, nothing is changed: doctor is safe to run anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <git2.h>
#include <time.h>

#include "cli/cli.h"
#include "remote/remote.h"
#include "repo/repo.h"
#include "repo/retention.h"
#include "results/setup.h"
#include "store/format.h"
#include "store/maint.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"

#define TEXT_MAX (1u << 20)

static const char usage[] =
	"usage: results doctor\n"
	"\n"
	"Check this clone's set-up for results: the lfs-agent program and the\n"
	"git config that names it, git-lfs and its filters, the hooks, the\n"
	".gitattributes and .lfsconfig of the repository, and whether the\n"
	"remote answers. Prints one line per check and what to fix: also when\n"
	"the committed remote (.results.json) is not the one this clone uses, or\n"
	"when git-lfs would send sessions anywhere but through lfs-agent.\n"
	"\n"
	"exit status: 0 all good, 3 not a results repository, 5 the remote does\n"
	"not answer, 6 a newest run's session is not on the remote, 8 something\n"
	"else needs fixing\n";

struct doctor {
	struct rs_repo *repo;
	int status; /* of the first failure */
	int fails, warns;
};

static void say(struct doctor *d, int level, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* level: 0 ok, 1 warn, 2 fail. */
static void say(struct doctor *d, int level, int status, const char *fmt, ...)
{
	static const char *const tag[] = { "ok  ", "warn", "FAIL" };
	va_list ap;

	printf("%s  ", tag[level]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (level == 1)
		d->warns++;
	if (level == 2) {
		d->fails++;
		if (d->status == RS_EXIT_OK)
			d->status = status;
	}
}

/* Run `prog arg` with no output; 0 when it exits 0. */
static int runs_ok(const char *prog, const char *arg)
{
	pid_t pid = fork();
	int wstatus;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &wstatus, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 ? 0 : -1;
}

/* Is `name` an executable on PATH? */
static int on_path(const char *name)
{
	const char *path = getenv("PATH");
	struct rs_buf p = RS_BUF_INIT;
	int found = 0;

	while (path && *path && !found) {
		size_t n = strcspn(path, ":");

		rs_buf_clear(&p);
		rs_buf_printf(&p, "%.*s/%s", (int)n, path, name);
		found = access(p.ptr, X_OK) == 0;
		path += n + (path[n] == ':');
	}
	rs_buf_release(&p);
	return found;
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
		say(d, 2, RS_EXIT_OTHER, "%s", rs_error_message());
		goto out;
	}
	if (!name.len) {
		say(d, 2, RS_EXIT_OTHER, "no standalone transfer agent: git-lfs would not use "
		    "lfs-agent; run 'results init'");
		goto out;
	}
	say(d, 0, 0, "git-lfs transfers through the agent '%s'", name.ptr);
	rs_buf_printf(&key, "lfs.customtransfer.%s.path", name.ptr);
	if (!val.len) {
		say(d, 2, RS_EXIT_OTHER, "%s is not set; run 'results init'", key.ptr);
		goto out;
	}
	if (val.ptr[0] != '/')
		say(d, 1, 0, "%s is not an absolute path ('%s'): it only works where it is on PATH",
		    key.ptr, val.ptr);
	if (access(val.ptr, X_OK) != 0)
		say(d, 2, RS_EXIT_OTHER, "the agent '%s' is missing or not executable; reinstall "
		    "results or run 'results init --agent PATH'", val.ptr);
	else if (runs_ok(val.ptr, "--version") != 0)
		say(d, 2, RS_EXIT_OTHER, "the agent '%s' does not run ('%s --version' fails); "
		    "reinstall results", val.ptr, val.ptr);
	else
		say(d, 0, 0, "lfs-agent %s runs", val.ptr);
	if (config(d, "lfs.url", &val))
		say(d, 1, 0, "lfs.url is set ('%s'): it replaces the LFS endpoint of every remote, "
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

	if (!on_path("git-lfs"))
		say(d, 2, RS_EXIT_OTHER, "git-lfs is not on PATH; install it (Debian: apt-get "
		    "install git-lfs)");
	else if (!config(d, "filter.lfs.process", &val) && !config(d, "filter.lfs.smudge", &val))
		say(d, 2, RS_EXIT_OTHER, "the git-lfs filters are not configured; run 'git lfs "
		    "install' or 'results init'");
	else
		say(d, 0, 0, "git-lfs and its filters are set up");
	rs_buf_release(&val);
}

static void check_hooks(struct doctor *d)
{
	struct rs_buf dir = RS_BUF_INIT, path = RS_BUF_INIT, text = RS_BUF_INIT;
	size_t i;
	int ours = 0;

	/* Where results init installs them. */
	rs_repo_hooks_dir(&dir, d->repo);
	rs_error_clear();
	for (i = 0; i < RS_SETUP_HOOKS; i++) {
		rs_buf_clear(&path);
		rs_buf_clear(&text);
		rs_buf_printf(&path, "%s/%s", dir.ptr, rs_setup_hook_names[i]);
		if (rs_fs_read_file(&text, path.ptr, TEXT_MAX) != 0 || access(path.ptr, X_OK) != 0) {
			say(d, 2, RS_EXIT_OTHER, "hook %s is missing: git-lfs will not %s; run "
			    "'results init'", rs_setup_hook_names[i],
			    i == 0 ? "upload sessions on push" : "track locks and checkouts");
		} else if (strstr(text.ptr, "results hook")) {
			ours++;
		} else if (strstr(text.ptr, "git lfs")) {
			say(d, 1, 0, "hook %s is git-lfs's own: it works, but %s; run 'results init' "
			    "to install ours", rs_setup_hook_names[i],
			    i == 0 ? "raw sessions are not refused on push" : "it is not ours");
		} else {
			say(d, 2, RS_EXIT_OTHER, "hook %s (%s) does not run git-lfs: make it call "
			    "'git lfs %s \"$@\"'", rs_setup_hook_names[i], path.ptr, rs_setup_hook_names[i]);
		}
		rs_error_clear();
	}
	if (ours == RS_SETUP_HOOKS)
		say(d, 0, 0, "hooks installed in %s", dir.ptr);
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
		say(d, 2, RS_EXIT_OTHER, "no .gitattributes committed: sessions would be stored as "
		    "raw blobs; run 'results init'");
	else if (!line_has(text.ptr, "*.pyisession", "filter=lfs"))
		say(d, 2, RS_EXIT_OTHER, ".gitattributes does not send *.pyisession through LFS; add "
		    "'*.pyisession filter=lfs diff=lfs merge=lfs -text'");
	else
		say(d, 0, 0, ".gitattributes sends *.pyisession through Git LFS");
	rs_buf_clear(&text);
	rs_error_clear();
	if (rs_repo_read_tree_file(d->repo, NULL, ".lfsconfig", TEXT_MAX, &text) != 0)
		say(d, 1, 0, "no .lfsconfig committed: every clone downloads every session; "
		    "run 'results init'");
	else if (!line_has(text.ptr, "fetchexclude", "pyisession"))
		say(d, 1, 0, ".lfsconfig does not exclude *.pyisession from fetches: clones "
		    "download every session");
	else
		say(d, 0, 0, ".lfsconfig keeps sessions out of clones and pulls");
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
		say(d, 2, RS_EXIT_OTHER, "%s", rs_error_message());
		goto out;
	}
	rs_url_strip_credentials(&shown, url.ptr);
	if (!from_config) {
		say(d, 2, RS_EXIT_OTHER, "results.remote is not set in this clone (%s names '%s'); "
		    "run 'results init'", RS_REPO_MARKER, shown.ptr);
	} else if (rs_repo_check_remote(d->repo) != 0) {
		/* A pulled change of remote: asking the old one proves nothing. */
		say(d, 2, RS_EXIT_OTHER, "%s", rs_error_message());
		rs_error_clear();
		goto out;
	} else {
		say(d, 0, 0, "remote %s", shown.ptr);
	}
	err = rs_repo_open_remote(d->repo, &remote, NULL);
	if (err == 0) {
		err = remote->stat(remote, "FORMAT", NULL);
		if (err == RS_ENOTFOUND)
			err = 0;
	}
	if (err)
		say(d, 2, RS_EXIT_REMOTE, "the remote does not answer: %s; check the URL and "
		    "credentials", rs_error_message());
	else
		say(d, 0, 0, "the remote answers");
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
 * each; `results verify` checks them all.
 */
static void check_newest_runs(struct doctor *d)
{
	struct rs_retention_plan plan = RS_RETENTION_PLAN_INIT;
	struct rs_remote *remote = NULL;
	struct rs_buf key = RS_BUF_INIT, date = RS_BUF_INIT;
	size_t i, runs = 0, missing = 0;
	const char *last = "";

	if (rs_retention_plan_make(d->repo, time(NULL), 1, &plan) ||
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
		if (rs_key_manifest(&key, &it->oid) || remote->stat(remote, key.ptr, NULL) == 0) {
			rs_error_clear();
			continue;
		}
		rs_error_clear();
		if (rs_store_removed_date(remote, &it->oid, &date) == 0) {
			say(d, 0, 0, "the raw session of run %s was removed by retention on %s", it->run_id,
			    date.ptr);
			continue;
		}
		rs_error_clear();
		missing++;
		say(d, 2, RS_EXIT_MISSING, "the session %.12s of run %s is not on the remote: 'git push' from "
		    "the clone that recorded it ('results verify' checks every run)", hex, it->run_id);
	}
	if (runs && !missing)
		say(d, 0, 0, "the newest run%s' sessions are on the remote", runs > 1 ? "s" : "");
out:
	rs_retention_plan_release(&plan);
	rs_remote_free(remote);
	rs_buf_release(&key);
	rs_buf_release(&date);
}

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { NULL, RS_EXIT_OK, 0, 0 };
	int err, fails;

	if (rs_cli_wants_help(argc, argv)) {
		fputs(usage, stdout);
		return RS_EXIT_OK;
	}
	if (argc > 1)
		return rs_cli_fail(RS_EXIT_USAGE, "doctor: unexpected argument '%s'", argv[1]);
	err = rs_repo_open(&d.repo, NULL);
	if (err) {
		say(&d, 2, RS_EXIT_NOT_REPO, "%s", rs_error_message());
		return d.status;
	}
	say(&d, 0, 0, "git repository %s", rs_repo_workdir(d.repo));
	if (rs_repo_check_results(d.repo) != 0) {
		say(&d, 2, RS_EXIT_NOT_REPO, "%s", rs_error_message());
		goto out;
	}
	check_remote(&d);
	fails = d.fails;
	check_agent(&d);
	/* What `results add` refuses on (the url-matched agent, lfs-agent). */
	if (d.fails == fails && rs_repo_check_transfer(d.repo) != 0)
		say(&d, 2, RS_EXIT_OTHER, "%s", rs_error_message());
	rs_error_clear();
	check_git_lfs(&d);
	check_hooks(&d);
	check_files(&d);
	check_newest_runs(&d);
out:
	if (d.fails)
		printf("\n%d problem%s to fix (see FAIL above)\n", d.fails, d.fails == 1 ? "" : "s");
	else
		printf("\nall good%s\n", d.warns ? " (see the warnings above)" : "");
	rs_repo_free(d.repo);
	return d.status;
}
