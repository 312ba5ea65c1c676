/*
 * lfs-agent: a Git LFS standalone custom transfer agent that moves LFS
 * objects in and out of a results store (src/store) on any remote.
 *
 * git-lfs starts it (once, or up to lfs.concurrenttransfers times with
 * concurrent=true) and talks to it over stdin/stdout, one JSON line per
 * message. stdout carries protocol lines only, each flushed; diagnostics
 * go to stderr, which git-lfs shows only under GIT_TRACE, so every
 * failure that matters is also put in the `complete` message a user sees.
 * A failed object does not end the agent; only an unusable set-up
 * (at init) or a broken protocol stream does.
 */
#include "protocol.h"
#include "results/args.h"
#include "results/buf.h"
#include "results/config.h"
#include "results/error.h"
#include "results/repo.h"
#include "results/store.h"
#include "results/unpushed.h"
#include "results_version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* What --level, results.zstdlevel and --threads may say; the store checks
   the level against the zstd it links (negative levels are zstd's fast
   ones), and 0 means the default for both. */
#define AGENT_LEVEL_MIN (-131072L)
#define AGENT_LEVEL_MAX 22L
#define AGENT_THREADS_MAX 256L

struct agent {
	const char *remote_arg; /* --remote, else results.remote */
	int level;
	int threads;
	struct rs_repo *repo;   /* the repository git-lfs runs us in, if found */
	struct rs_config *config; /* its git config (borrowed from repo), else the
				     user's (own_config), or NULL */
	struct rs_config *own_config;
	struct rs_objstore *store; /* with its remote */
	char *lfs_tmp;          /* where downloads are written (git-lfs renames them) */
	const char *oid_hex;    /* object in flight, for progress */
	uint64_t last_progress;
	struct rs_buf given;    /* the last download answered, until git-lfs takes it */
	dev_t given_dev;
	ino_t given_ino;
};

static const char usage[] =
	"usage: lfs-agent [--remote URL] [--level N] [--threads N]\n"
	"\n"
	"A Git LFS standalone transfer agent for results stores. git-lfs runs it;\n"
	"configure it with 'results init', or by hand:\n"
	"  git config lfs.standalonetransferagent results\n"
	"  git config lfs.customtransfer.results.path /path/to/lfs-agent\n"
	"  git config results.remote file:///path/to/store\n"
	"\n"
	"  --remote URL   the store (default: git config results.remote)\n"
	"  --level N      zstd level for new chunks (default: results.zstdlevel, else 3)\n"
	"  --threads N    worker threads for one object (default: one per core)\n";

static void send_line(const struct rs_buf *line)
{
	fwrite(line->ptr, 1, line->len, stdout);
	fflush(stdout);
}

static void diag(const char *fmt, const char *a)
{
	fprintf(stderr, "lfs-agent: ");
	fprintf(stderr, fmt, a);
	fputc('\n', stderr);
}

/* git-lfs renames downloads into its object store: write them beside it
   (and remove what killed agents left there). */
static int find_lfs_tmp(struct agent *a)
{
	struct rs_buf dir = RS_BUF_INIT;
	int err;

	err = rs_objstore_download_dir(&dir, a->repo);
	if (err) {
		rs_buf_release(&dir);
		return err;
	}
	a->lfs_tmp = rs_buf_detach(&dir, NULL);
	return 0;
}

/* A git config value of the repository we run in (else the user's), or NULL. */
static const char *config_string(struct agent *a, const char *key)
{
	return rs_config_get(a->config, key);
}

/*
 * An unreachable remote should fail here, once, not on every object; so
 * should a download from a store nothing was ever pushed to (its FORMAT
 * file is written by the first push): a wrong results.remote. A store in
 * another format is refused here too. Reading FORMAT now also spares each
 * upload that request.
 */
static int check_store(struct agent *a, const struct rs_lfs_message *msg)
{
	int held = msg->operation == RS_LFS_OP_DOWNLOAD && rs_unpushed_any(a->repo);
	int e = rs_objstore_check_format(a->store);

	/* rs_store_no_store_error's message, as results fetch says it; unless
	   this clone holds sessions the store never got, which it serves. */
	if (e == RS_ENOTFOUND && msg->operation == RS_LFS_OP_DOWNLOAD && !held)
		return e;
	if (e == RS_EUSAGE || e == RS_EFORMAT || e == RS_ETOOBIG || e == RS_EREMOTE ||
	    e == RS_ENEWER)
		return e;
	if (e && e != RS_ENOTFOUND)
		return rs_error_wrap(e, "the results remote '%s' does not answer",
				     rs_objstore_display_url(a->store));
	rs_error_clear();
	return 0;
}

static int do_init(struct agent *a, const struct rs_lfs_message *msg)
{
	struct rs_objstore_options sopts = { 0 };
	const char *url, *level;
	int err = 0;

	if (a->store)
		return rs_error_set(RS_EUSAGE, "a second init");
	if (rs_repo_open_ext(&a->repo, NULL, RS_REPO_OPEN_BARE) != 0)
		a->repo = NULL; /* uploads work without; downloads need it */
	/* Unreadable config reads as unset, as git-lfs would go on too. */
	if (a->repo)
		a->config = rs_repo_config(a->repo);
	else if (rs_config_open_default(&a->own_config) == 0)
		a->config = a->own_config;
	rs_error_clear();
	if (msg->operation == RS_LFS_OP_DOWNLOAD) {
		if (!a->repo)
			return rs_error_set(RS_EUSAGE, "downloads need a git repository, and none was found here");
		err = find_lfs_tmp(a);
		if (err)
			return err;
	}
	url = a->remote_arg ? a->remote_arg : config_string(a, RS_REPO_REMOTE_KEY);
	if (!url || !*url) {
		err = rs_error_set(RS_EUSAGE, "no results remote configured: run 'results init --remote <url>' "
				   "or 'git config results.remote <url>'");
		goto out;
	}
	/* A pulled change of .results.json's remote does not redirect this
	   clone's sessions: the agent keeps its remote and refuses, naming
	   both and the commit that changed it, as every results command does.
	   A --remote (results init --global) must name the committed store. */
	if (a->repo) {
		err = a->remote_arg ? rs_repo_check_remote_arg(a->repo, url)
				    : rs_repo_check_remote(a->repo);
		if (err)
			goto out;
	}
	level = config_string(a, "results.zstdlevel");
	if (!a->level && level) {
		long v;

		err = rs_args_int(level, "git config results.zstdlevel", AGENT_LEVEL_MIN,
				  AGENT_LEVEL_MAX, &v);
		if (err)
			goto out;
		a->level = (int)v;
	}
	sopts.zstd_level = a->level;
	sopts.threads = a->threads;
	sopts.use_cache = 1;
	/* Backends read extra settings (region, endpoint, CA file) from git config. */
	err = rs_objstore_open_url(&a->store, url, a->config, &sopts);
	if (err)
		goto out;
	err = check_store(a, msg);
out:
	return err;
}

static int progress(uint64_t done, uint64_t total, void *payload)
{
	struct agent *a = payload;
	struct rs_buf line = RS_BUF_INIT;

	(void)total;
	if (done < a->last_progress)
		a->last_progress = 0;
	/* Best effort: a progress line that cannot be written is left out. */
	if (rs_lfs_reply_progress(&line, a->oid_hex, done, done - a->last_progress))
		rs_error_clear();
	else
		send_line(&line);
	a->last_progress = done;
	rs_buf_release(&line);
	return 0;
}

/*
 * What to add to the store's message in `complete`. The store's message
 * already says what to do about damage (it knows whether the pointer, a
 * pack, the manifest, the transfer or the local file is at fault); here
 * only what the agent itself guarantees.
 */
static const char *advice(int err, int download)
{
	switch (err) {
	case RS_ENOTFOUND:
		return "";
	case RS_ECORRUPT:
		return download ? " (nothing was written to the working tree)" : "";
	case RS_ERETRY:
		return " (a transient failure: run the command again)";
	case RS_EAUTH:
		return " (check the credentials for the results remote)";
	default:
		return "";
	}
}

/*
 * A download: the copy this clone holds of a session it recorded, when
 * git lfs prune took it from .git/lfs/objects before the store had it
 * (results/unpushed.h), else the store's.
 */
static int download(struct agent *a, const struct rs_lfs_message *msg, const char *dest)
{
	int err = rs_unpushed_copy(a->repo, msg->oid_hex, msg->size, dest);

	if (err != RS_ENOTFOUND)
		return err;
	rs_error_clear();
	return rs_objstore_get(a->store, msg->oid_hex, msg->size, dest, progress, a);
}

/*
 * The last download answered, if git-lfs did not take it: it checks a
 * download's SHA-256 (the agent does not: results/store.h) and renames
 * it into .git/lfs/objects before it asks for the next object or ends
 * the agent, so a file still there, the very one written, is one it
 * refused (or could not move). It goes now, not after the stale-file
 * grace period.
 */
static void drop_refused(struct agent *a)
{
	struct stat st;

	if (!a->given.len)
		return;
	if (lstat(a->given.ptr, &st) == 0 && st.st_dev == a->given_dev && st.st_ino == a->given_ino &&
	    unlink(a->given.ptr) == 0)
		diag("removed '%s': git-lfs did not take it", a->given.ptr);
	rs_buf_clear(&a->given);
}

/* Note the download `dest` answered, for drop_refused. */
static void note_given(struct agent *a, const char *dest)
{
	struct stat st;

	rs_buf_clear(&a->given);
	if (lstat(dest, &st) != 0 || rs_buf_puts(&a->given, dest)) {
		rs_buf_clear(&a->given); /* not known: left to the grace period */
		rs_error_clear();
		return;
	}
	a->given_dev = st.st_dev;
	a->given_ino = st.st_ino;
}

/*
 * Move one object and answer with its `complete`. A failed object is
 * told to git-lfs there; only a reply that cannot be written at all
 * (out of memory) is returned, and ends the agent.
 */
static int do_transfer(struct agent *a, const struct rs_lfs_message *msg)
{
	struct rs_buf line = RS_BUF_INIT, dest = RS_BUF_INIT, text = RS_BUF_INIT;
	struct rs_objstore_put_stats stats;
	int err;

	a->oid_hex = msg->oid_hex;
	a->last_progress = 0;
	drop_refused(a);
	rs_error_clear();
	if (msg->event == RS_LFS_UPLOAD) {
		err = rs_objstore_put(a->store, msg->oid_hex, msg->size, msg->path, progress, a, &stats);
		if (!err)
			fprintf(stderr, "lfs-agent: stored %.12s: %llu chunks, %llu new, %llu bytes written%s\n",
				msg->oid_hex, (unsigned long long)stats.chunks,
				(unsigned long long)stats.chunks_new,
				(unsigned long long)stats.bytes_stored,
				stats.already_present ? " (already present)" : "");
		/* The store has it now: the copy held against git lfs prune goes. */
		if (!err)
			err = rs_unpushed_release(a->repo, msg->oid_hex);
	} else {
		err = rs_objstore_download_path(&dest, a->lfs_tmp, msg->oid_hex);
		if (!err)
			err = download(a, msg, dest.ptr);
	}
	if (!err && msg->event == RS_LFS_DOWNLOAD)
		note_given(a, dest.ptr);
	if (!err)
		err = rs_lfs_reply_complete(&line, msg->oid_hex,
					    msg->event == RS_LFS_DOWNLOAD ? dest.ptr : NULL, 0, NULL);
	if (err) {
		int failed = err;

		err = rs_buf_printf(&text, "results: %s%s", rs_error_message(),
				    advice(failed, msg->event == RS_LFS_DOWNLOAD));
		if (err)
			goto out;
		diag("%s", text.ptr);
		err = rs_lfs_reply_complete(&line, msg->oid_hex, NULL,
					    failed == RS_ENOTFOUND ? 404 : 500, text.ptr);
		if (err)
			goto out;
	}
	send_line(&line);
out:
	rs_buf_release(&line);
	rs_buf_release(&dest);
	rs_buf_release(&text);
	return err;
}

/*
 * Set up for git-lfs's init and answer it. An init that fails is told to
 * git-lfs and returned: the agent cannot go on without its store.
 */
static int answer_init(struct agent *a, const struct rs_lfs_message *msg, struct rs_buf *out)
{
	int err, reply;

	err = do_init(a, msg);
	if (err) {
		fprintf(stderr, "lfs-agent: %s\n", rs_error_message());
		reply = rs_lfs_reply_init_error(out, 1, rs_error_message());
	} else {
		reply = rs_lfs_reply_init_ok(out);
	}
	if (reply) {
		fprintf(stderr, "lfs-agent: cannot answer git-lfs: %s\n", rs_error_message());
		return reply;
	}
	send_line(out);
	return err;
}

/*
 * For the benchmarks: with RESULTS_AGENT_STATS_FILE set, append this
 * process's peak resident memory and CPU time to that file at exit.
 */
static void report_usage(void)
{
	const char *path = getenv("RESULTS_AGENT_STATS_FILE");
	struct rusage ru;
	FILE *f;

	if (!path || !*path || getrusage(RUSAGE_SELF, &ru) != 0)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "maxrss_kb=%ld user_s=%ld.%06ld sys_s=%ld.%06ld\n", ru.ru_maxrss,
		(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	fclose(f);
}

/* A usage error on stderr, in the shape of every results command's (results/args.h). */
static int usage_error(const char *message)
{
	struct rs_buf line = RS_BUF_INIT;

	if (rs_args_usage_line(&line, "lfs-agent", message))
		fputs("lfs-agent: (out of memory while reporting an error)\n", stderr);
	else
		fprintf(stderr, "%s\n", line.ptr);
	rs_buf_release(&line);
	return 2;
}

/* The command line: 0 to serve, else -1 with main's exit status in *status. */
static int parse_args(struct agent *a, int argc, char **argv, int *status)
{
	static const struct option longopts[] = {
		{ "remote", required_argument, NULL, 'r' },
		{ "level", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rs_args args = { .longopts = longopts };
	long v;
	int c;

	for (;;) {
		c = rs_args_next(&args, argc, argv);
		if (c == 0)
			break;
		if (c < 0) {
			*status = usage_error(rs_error_message());
			return -1;
		}
		switch (c) {
		case 'r': a->remote_arg = optarg; break;
		case 'l':
			if (rs_args_int(optarg, "--level", AGENT_LEVEL_MIN, AGENT_LEVEL_MAX, &v)) {
				*status = usage_error(rs_error_message());
				return -1;
			}
			a->level = (int)v;
			break;
		case 't':
			if (rs_args_int(optarg, "--threads", 0, AGENT_THREADS_MAX, &v)) {
				*status = usage_error(rs_error_message());
				return -1;
			}
			a->threads = (int)v;
			break;
		case 'h': fputs(usage, stdout); *status = 0; return -1;
		case 'V': printf("lfs-agent %s\n", RS_VERSION); *status = 0; return -1;
		default: *status = usage_error("unknown option"); return -1;
		}
	}
	if (rs_args_operands(argc, argv, 0)) {
		*status = usage_error(rs_error_message());
		return -1;
	}
	return 0;
}

/*
 * Answer one request: 0 to read the next, 1 when git-lfs is done with us
 * (terminate), or an error that ends the agent (said on stderr).
 */
static int answer(struct agent *a, struct rs_lfs_message *msg, struct rs_buf *out)
{
	int err;

	if (msg->event == RS_LFS_TERMINATE)
		return 1;
	if (msg->event == RS_LFS_INIT)
		return answer_init(a, msg, out);
	if (!a->store) {
		fprintf(stderr, "lfs-agent: transfer request before init\n");
		return RS_EUSAGE;
	}
	err = do_transfer(a, msg);
	if (err)
		fprintf(stderr, "lfs-agent: cannot answer git-lfs: %s\n", rs_error_message());
	return err;
}

/* Read and answer requests until git-lfs is done: main's exit status. */
static int serve(struct agent *a)
{
	struct rs_buf pending = RS_BUF_INIT, line = RS_BUF_INIT, out = RS_BUF_INIT;
	int rc = 0, err;

	for (;;) {
		struct rs_lfs_message msg;

		err = rs_lfs_read_line(STDIN_FILENO, &pending, &line);
		if (err == RS_ENOTFOUND)
			break; /* git-lfs closed our input: as good as terminate */
		if (err) {
			fprintf(stderr, "lfs-agent: %s\n", rs_error_message());
			rc = 1;
			break;
		}
		err = rs_lfs_parse(&msg, line.ptr, line.len);
		if (err) {
			fprintf(stderr, "lfs-agent: bad request from git-lfs: %s\n", rs_error_message());
			rc = 1;
			break;
		}
		err = answer(a, &msg, &out);
		rs_lfs_message_release(&msg);
		if (err) {
			rc = err > 0 ? 0 : 1;
			break;
		}
	}
	drop_refused(a);
	rs_buf_release(&pending);
	rs_buf_release(&line);
	rs_buf_release(&out);
	return rc;
}

int main(int argc, char **argv)
{
	struct agent a;
	int rc;

	memset(&a, 0, sizeof(a));
	if (parse_args(&a, argc, argv, &rc) < 0)
		return rc; /* --help, --version or a usage error */
	rs_repo_global_init();
	rc = serve(&a);
	report_usage();
	rs_objstore_free(a.store);
	rs_config_free(a.own_config);
	rs_repo_free(a.repo);
	free(a.lfs_tmp);
	rs_buf_release(&a.given);
	rs_repo_global_shutdown();
	return rc;
}
