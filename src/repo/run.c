/*
 * Recording one run (see run.h for the flow and the guarantees).
 *
 * Reading a session once: a session can be hundreds of megabytes and the
 * three things we need from it -- its summary, its SHA-256 (the LFS oid)
 * and a copy in the LFS store -- are all streaming computations. So one
 * loop reads 1 MiB at a time and hands each piece to the session parser,
 * the hasher and the temporary copy under .git/lfs/tmp. The copy is moved
 * to .git/lfs/objects/<oid> only in rs_run_record, right before the
 * commit, once every input has been accepted; until then a failure only
 * has temporary files to delete.
 */
#include "repo/run.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "repo/commit.h"
#include "repo/pointer.h"
#include "repo/stats.h"
#include "repo/verdict.h"
#include "session/session.h"
#include "session/summary.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/path.h"

#define READ_CHUNK (1u << 20)

void rs_run_init(struct rs_run *run)
{
	memset(run, 0, sizeof(*run));
	run->main_session = -1;
	run->meta = json_object();
	run->stats = json_object();
	run->args = json_object();
	run->machine = json_object();
}

static void file_release(struct rs_run_file *f)
{
	free(f->name);
	rs_buf_release(&f->blob);
	if (f->tmp)
		unlink(f->tmp);
	free(f->tmp);
}

void rs_run_release(struct rs_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; i < run->nfiles; i++)
		file_release(&run->files[i]);
	free(run->files);
	free(run->commit);
	free(run->branch);
	free(run->trigger);
	free(run->message);
	free(run->id);
	free(run->folder);
	free(run->session_md);
	free(run->verdict);
	json_decref(run->machine);
	json_decref(run->meta);
	json_decref(run->stats);
	json_decref(run->args);
	json_decref(run->summary);
	memset(run, 0, sizeof(*run));
	run->main_session = -1;
}

static int replace_str(char **slot, const char *s)
{
	char *c = strdup(s);

	if (!c)
		return rs_error_set(RS_EGENERIC, "out of memory");
	free(*slot);
	*slot = c;
	return 0;
}

int rs_run_set_commit(struct rs_run *run, const char *sha)
{
	size_t n = strlen(sha);
	char low[65];

	if (n != 40 && n != 64)
		return rs_error_set(RS_EUSAGE,
				    "--commit '%s' is not a full commit id (40 or 64 hex digits; "
				    "'git rev-parse HEAD' in the profiled repository prints it)", sha);
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)sha[i]))
			return rs_error_set(RS_EUSAGE, "--commit '%s' is not hexadecimal", sha);
		low[i] = (char)tolower((unsigned char)sha[i]);
	}
	low[n] = '\0';
	return replace_str(&run->commit, low);
}

int rs_run_set_trigger(struct rs_run *run, const char *t)
{
	size_t n = strlen(t);

	if (n == 0 || n > RS_RUN_MAX_TRIGGER)
		return rs_error_set(RS_EUSAGE, "--trigger must have 1 to %d characters",
				    RS_RUN_MAX_TRIGGER);
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && t[i] != '_' && t[i] != '.')
			return rs_error_set(RS_EUSAGE,
					    "--trigger '%s' may hold only letters, digits, '_' "
					    "and '.' (it is part of the run's folder name)", t);
	return replace_str(&run->trigger, t);
}

static int has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

int rs_run_set_branch(struct rs_run *run, const char *b)
{
	if (!*b || strlen(b) > 255 || has_control(b))
		return rs_error_set(RS_EUSAGE, "bad branch name '%s'", b);
	return replace_str(&run->branch, b);
}

int rs_run_profiled_branch(struct rs_buf *out, const struct rs_run *run,
			   const struct rs_repo *repo, const char *path)
{
	git_repository *g = NULL;
	git_reference *head = NULL;
	const git_oid *target;
	char hex[GIT_OID_HEXSZ + 1];
	int err = RS_ENOTFOUND;

	if (!run->commit)
		return rs_error_set(RS_EUSAGE, "no profiled commit set");
	if (git_repository_open_ext(&g, path, 0, NULL) < 0)
		goto out;
	/* Recording from inside the results repository says nothing. */
	if (strcmp(git_repository_commondir(g), repo->gitdir) == 0 ||
	    git_repository_head(&head, g) < 0 || !git_reference_is_branch(head))
		goto out;
	target = git_reference_target(head);
	if (!target)
		goto out;
	git_oid_tostr(hex, sizeof(hex), target);
	if (strcmp(hex, run->commit) != 0)
		goto out;
	err = rs_buf_puts(out, git_reference_shorthand(head));
out:
	git_reference_free(head);
	git_repository_free(g);
	if (err == RS_ENOTFOUND)
		rs_error_set(RS_ENOTFOUND, "no checkout of %.12s around '%s'", run->commit, path);
	return err;
}

int rs_run_add_meta(struct rs_run *run, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t klen;
	char key[65];

	if (!eq || eq == kv)
		return rs_error_set(RS_EUSAGE, "--meta '%s' is not KEY=VALUE", kv);
	klen = (size_t)(eq - kv);
	if (klen > 64)
		return rs_error_set(RS_EUSAGE, "--meta key longer than 64 characters");
	for (size_t i = 0; i < klen; i++)
		if (!isalnum((unsigned char)kv[i]) && kv[i] != '_' && kv[i] != '.' &&
		    kv[i] != '-')
			return rs_error_set(RS_EUSAGE,
					    "--meta key '%.*s' may hold only letters, digits, "
					    "'_', '.' and '-'", (int)klen, kv);
	if (strlen(eq + 1) > 4096)
		return rs_error_set(RS_EUSAGE, "--meta value longer than 4096 bytes");
	memcpy(key, kv, klen);
	key[klen] = '\0';
	if (json_object_set_new(run->meta, key, json_string(eq + 1)) < 0)
		return rs_error_set(RS_EUSAGE, "--meta value of '%s' is not UTF-8", key);
	return 0;
}

void rs_run_set_time(struct rs_run *run, time_t t)
{
	struct tm tm;

	run->recorded = t;
	gmtime_r(&t, &tm);
	strftime(run->recorded_at, sizeof(run->recorded_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The first "model name" of /proc/cpuinfo (x86), or "Model"/"Hardware" (arm). */
static json_t *cpu_model(void)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	json_t *v = NULL;

	if (!f)
		return json_null();
	while (!v && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		char *val;

		if (!colon)
			continue;
		if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0 &&
		    strncmp(line, "Hardware", 8) != 0)
			continue;
		val = colon + 1;
		while (*val == ' ' || *val == '\t')
			val++;
		val[strcspn(val, "\r\n")] = '\0';
		if (*val)
			v = json_string(val);
	}
	fclose(f);
	return v ? v : json_null();
}

int rs_run_detect_machine(struct rs_run *run)
{
	struct utsname u;
	char host[256] = "";
	char os[2 * sizeof(u.release) + 2] = "";
	const char *runner = getenv("RUNNER_NAME");
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	json_t *m;

	if (uname(&u) == 0)
		snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	else
		memset(&u, 0, sizeof(u));
	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	m = json_pack("{s:s?, s:s?, s:s?, s:o, s:I, s:s?}",
		      "hostname", host[0] ? host : NULL,
		      "os", os[0] ? os : NULL,
		      "arch", u.machine[0] ? u.machine : NULL,
		      "cpu_model", cpu_model(),
		      "cpus", (json_int_t)(cpus > 0 ? cpus : 0),
		      "runner", runner && *runner ? runner : NULL);
	if (!m)
		return rs_error_set(RS_EGENERIC, "cannot describe this machine");
	json_decref(run->machine);
	run->machine = m;
	return 0;
}

int rs_run_add_stats_file(struct rs_run *run, const char *path)
{
	return rs_stats_read_json_file(run->stats, NULL, path);
}

/* ---- files ---------------------------------------------------------- */

static int check_name(const struct rs_run *run, const char *name)
{
	/* What fetch will accept back (util/path.h), and no longer than 200. */
	if (strlen(name) > 200 ||
	    rs_path_check(name, strlen(name), RS_PATH_NO_DOTFILES, "file name") != 0)
		return rs_error_set(RS_EUSAGE, "cannot store a file named '%s' in a run", name);
	if (strcmp(name, "run.json") == 0 || strcmp(name, "summary.md") == 0)
		return rs_error_set(RS_EUSAGE,
				    "'%s' is written by results itself; rename that file", name);
	for (size_t i = 0; i < run->nfiles; i++)
		if (strcmp(run->files[i].name, name) == 0)
			return rs_error_set(RS_EUSAGE,
					    "two files named '%s' in one run", name);
	if (run->nfiles >= RS_RUN_MAX_FILES)
		return rs_error_set(RS_EUSAGE, "more than %d files in one run",
				    RS_RUN_MAX_FILES);
	return 0;
}

static struct rs_run_file *new_file(struct rs_run *run, const char *name,
				    const char *role)
{
	struct rs_run_file *n, *f;

	n = realloc(run->files, (run->nfiles + 1) * sizeof(*n));
	if (!n) {
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	run->files = n;
	f = &run->files[run->nfiles];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name) {
		rs_error_set(RS_EGENERIC, "out of memory");
		return NULL;
	}
	f->role = role;
	rs_buf_init(&f->blob, 0);
	run->nfiles++;
	return f;
}

/* Drop the last file again (after a failure while filling it). */
static void drop_last_file(struct rs_run *run)
{
	file_release(&run->files[--run->nfiles]);
}

/*
 * The copy side of the single pass runs in its own thread: hashing and
 * writing 300 MB costs about as much as parsing it, so the two overlap.
 * The reader (the calling thread) fills a ring of PIPE_SLOTS buffers; each
 * buffer is handed to the writer (SHA-256, then write to .git/lfs/tmp)
 * and, at the same time, parsed by the caller. A slot is refilled only
 * once the writer is done with it, and the caller finishes parsing a slot
 * before it reads the next one, so both sides only ever read a buffer
 * that nobody writes. Memory: PIPE_SLOTS x READ_CHUNK.
 */
#define PIPE_SLOTS 4

struct copy_pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *buf[PIPE_SLOTS];
	size_t len[PIPE_SLOTS];
	size_t head;        /* next slot the reader fills */
	size_t tail;        /* next slot the writer takes */
	size_t queued;      /* slots handed over, not yet written */
	int closing;        /* no more slots will come */
	int err;            /* the writer's error; it then drops the rest */
	char msg[512];      /* its message (error slots are per thread) */
	int fd;
	struct rs_sha256 *h;
	uint64_t size;
};

static void *pipe_writer(void *arg)
{
	struct copy_pipe *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		size_t slot;
		int err = 0, skip;

		while (!p->queued && !p->closing)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->queued)
			break;
		slot = p->tail;
		skip = p->err;
		pthread_mutex_unlock(&p->mu);
		if (!skip) {
			rs_sha256_update(p->h, p->buf[slot], p->len[slot]);
			p->size += p->len[slot];
			err = rs_fs_write_all(p->fd, p->buf[slot], p->len[slot]);
		}
		pthread_mutex_lock(&p->mu);
		if (err && !p->err) {
			p->err = err;
			snprintf(p->msg, sizeof(p->msg), "%s", rs_error_message());
		}
		p->tail = (p->tail + 1) % PIPE_SLOTS;
		p->queued--;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/*
 * Read `path` once: hash it, copy it to a new temporary file under
 * .git/lfs/tmp and, when `pass` is given, feed it to that summary (and so
 * to its session parser). On success f->oid, f->size, f->tmp and f->blob
 * (the pointer) are set; on failure the temporary file is gone.
 */
static int copy_to_lfs(struct rs_repo *repo, struct rs_run_file *f, int in, const char *path,
		       struct rs_summary *pass)
{
	struct copy_pipe p;
	struct rs_buf tmp = RS_BUF_INIT;
	struct rs_pointer ptr = RS_POINTER_INIT;
	pthread_t writer;
	int err = 0, started = 0, parse_failed = 0;

	memset(&p, 0, sizeof(p));
	p.fd = -1;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	p.h = rs_sha256_new();
	for (int i = 0; i < PIPE_SLOTS; i++)
		if (!(p.buf[i] = malloc(READ_CHUNK)))
			p.h = (rs_sha256_free(p.h), NULL);
	if (!p.h) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if ((err = rs_repo_lfs_tmp_path(&tmp, repo)))
		goto out;
	p.fd = open(tmp.ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (p.fd < 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot create '%s'", tmp.ptr);
		goto out;
	}
	if (pthread_create(&writer, NULL, pipe_writer, &p) != 0) {
		err = rs_error_set(RS_EGENERIC, "cannot start a thread");
		goto out;
	}
	started = 1;
	for (;;) {
		unsigned char *chunk;
		size_t slot;
		ssize_t n;
		int writer_failed;

		pthread_mutex_lock(&p.mu);
		while (p.queued == PIPE_SLOTS && !p.err)
			pthread_cond_wait(&p.cv, &p.mu);
		slot = p.head;
		writer_failed = p.err;
		pthread_mutex_unlock(&p.mu);
		if (writer_failed)
			break;
		chunk = p.buf[slot];
		do
			n = read(in, chunk, READ_CHUNK);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
			break;
		}
		if (n == 0)
			break;
		pthread_mutex_lock(&p.mu);
		p.len[slot] = (size_t)n;
		p.head = (p.head + 1) % PIPE_SLOTS;
		p.queued++;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
		if (pass && (err = rs_summary_feed(pass, chunk, (size_t)n))) {
			parse_failed = 1;
			break;
		}
	}
	if (!err && pass && (err = rs_summary_finish(pass)))
		parse_failed = 1;
	pthread_mutex_lock(&p.mu);
	p.closing = 1;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	pthread_join(writer, NULL);
	started = 0;
	if (!err && p.err)
		err = rs_error_set(p.err, "%s", p.msg);
	if (err)
		goto out;
	/* The object must be durable before a push can announce it. */
	if (fsync(p.fd) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot fsync '%s'", tmp.ptr);
		goto out;
	}
	rs_sha256_final(p.h, &f->oid);
	f->size = p.size;
	f->lfs = 1;
	rs_pointer_init(&ptr, &f->oid, p.size);
	rs_buf_clear(&f->blob);
	if ((err = rs_pointer_format(&f->blob, &ptr)))
		goto out;
	f->tmp = rs_buf_detach(&tmp, NULL);
out:
	if (started) {
		pthread_mutex_lock(&p.mu);
		p.closing = 1;
		pthread_cond_broadcast(&p.cv);
		pthread_mutex_unlock(&p.mu);
		pthread_join(writer, NULL);
	}
	if (parse_failed && err == RS_ECORRUPT)
		err = rs_error_wrap(err, "'%s' is not a pyinstrument session (use --raw to "
				    "store it as an opaque file)", path);
	else if (parse_failed)
		err = rs_error_wrap(err, "cannot summarise '%s'", path);
	if (p.fd >= 0)
		close(p.fd);
	if (err && tmp.ptr)
		unlink(tmp.ptr);
	rs_pointer_release(&ptr);
	rs_sha256_free(p.h);
	for (int i = 0; i < PIPE_SLOTS; i++)
		free(p.buf[i]);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	rs_buf_release(&tmp);
	return err;
}

static int add_session(struct rs_run *run, struct rs_repo *repo, struct rs_run_file *f,
		       int fd, const char *path)
{
	struct rs_summary *sum = NULL;
	json_t *summary = NULL;
	struct rs_buf md = RS_BUF_INIT;
	int err;

	if ((err = rs_summary_new(&sum, NULL)))
		goto out;
	/* Every session is parsed (a broken one is refused); only the main
	   one's summary is kept. */
	if ((err = copy_to_lfs(repo, f, fd, path, sum)))
		goto out;
	if (run->main_session >= 0)
		goto out;
	if ((err = rs_summary_json(sum, &summary)) ||
	    (err = rs_summary_markdown(summary, &md)))
		goto out;
	run->summary = summary;
	summary = NULL;
	run->session_md = rs_buf_detach(&md, NULL);
	run->main_session = (int)(f - run->files);
out:
	json_decref(summary);
	rs_buf_release(&md);
	rs_summary_free(sum);
	return err;
}

/* Stats-like files: read their values, then store the bytes. */
static int read_known(struct rs_run *run, const struct rs_run_file *f, int fd, const char *path,
		      const struct rs_buf *text)
{
	char stem[256];
	FILE *csv;
	int err, copy;

	if (strcmp(f->role, "stats") == 0)
		return rs_stats_flatten_json(run->stats, NULL, text->ptr, text->len, path);
	if (strcmp(f->role, "args") == 0)
		return rs_stats_flatten_json(run->args, NULL, text->ptr, text->len, path);
	if (strcmp(f->role, "logged-stats") == 0) {
		if ((err = rs_stats_file_stem(stem, sizeof(stem), f->name)))
			return err;
		/* Read again from the descriptor already checked, not by name. */
		if (lseek(fd, 0, SEEK_SET) < 0)
			return rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
		copy = dup(fd);
		csv = copy < 0 ? NULL : fdopen(copy, "r");
		if (!csv) {
			err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
			if (copy >= 0)
				close(copy);
			return err;
		}
		err = rs_stats_read_csv_stream(run->stats, stem, csv, path);
		fclose(csv);
		return err;
	}
	return 0;
}

/*
 * One file of the run. `direct`: named on the command line, so a symlink
 * is followed (the user chose it, as cp does); a file found in a run
 * folder is opened without following one (a link there could point at
 * anything, say a credentials file, and its bytes would be committed).
 * The file is opened once and every read goes through that descriptor.
 */
static int add_file(struct rs_run *run, struct rs_repo *repo, const char *path,
		    const char *name, int direct)
{
	const char *role = rs_stats_file_role(name);
	struct rs_run_file *f;
	struct stat st;
	int err, is_session, fd = -1;

	if ((err = check_name(run, name)))
		return err;
	err = rs_fs_open_regular(path, !direct, &fd);
	if (err)
		return err;
	if (fstat(fd, &st) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
		close(fd);
		return err;
	}
	/* A file named on the command line is a session unless its name says
	   it is one of the known companions. */
	if (direct && strcmp(role, "other") == 0)
		role = run->raw ? "other" : "session";
	is_session = strcmp(role, "session") == 0;
	if (!(f = new_file(run, name, role))) {
		close(fd);
		return rs_error_last();
	}
	if (is_session && !run->raw) {
		err = add_session(run, repo, f, fd, path);
	} else if (is_session) {
		err = copy_to_lfs(repo, f, fd, path, NULL);
	} else if (!run->raw && (uint64_t)st.st_size > RS_RUN_SMALL_FILE &&
		   (strcmp(role, "stats") == 0 || strcmp(role, "args") == 0)) {
		err = rs_error_set(RS_EUSAGE, "'%s' is larger than %u bytes: too "
				   "large for a stats file", path, RS_RUN_SMALL_FILE);
	} else if ((uint64_t)st.st_size > RS_RUN_BLOB_MAX) {
		err = rs_error_set(RS_EUSAGE, "'%s' is larger than %u MiB: too large to keep in "
				   "git (only sessions go to Git LFS); compress it or leave it out "
				   "of the run", path, RS_RUN_BLOB_MAX >> 20);
	} else {
		/* Any size up to the cap, as it is (RS_RUN_BLOB_MAX). */
		err = rs_fs_read_fd(&f->blob, fd, path, RS_RUN_BLOB_MAX);
		f->size = f->blob.len;
		if (!err && !run->raw)
			err = read_known(run, f, fd, path, &f->blob);
	}
	close(fd);
	if (err)
		drop_last_file(run);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of `dir` (not recursing), in name order. */
static int add_folder(struct rs_run *run, struct rs_repo *repo, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, alloc = 0;
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	if (!d)
		return rs_error_errno(RS_EGENERIC, "cannot list '%s'", dir);
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		rs_buf_clear(&path);
		if ((err = rs_fs_join(&path, dir, de->d_name)))
			goto out;
		/* lstat: a link in the folder is refused, never read through. */
		if (lstat(path.ptr, &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			err = rs_error_set(RS_EUSAGE, "'%s' is a symbolic link; links in a run "
					   "folder are not followed (copy the file itself into "
					   "the folder, or remove the link)", path.ptr);
			goto out;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (n >= RS_RUN_MAX_FILES) {
			err = rs_error_set(RS_EUSAGE, "'%s' holds more than %d files: is it "
					   "a run folder?", dir, RS_RUN_MAX_FILES);
			goto out;
		}
		if (n == alloc) {
			char **nn = realloc(names, (alloc = alloc ? alloc * 2 : 16) * sizeof(*nn));

			if (!nn) {
				err = rs_error_set(RS_EGENERIC, "out of memory");
				goto out;
			}
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name))) {
			err = rs_error_set(RS_EGENERIC, "out of memory");
			goto out;
		}
		n++;
	}
	if (n == 0) {
		err = rs_error_set(RS_EUSAGE, "'%s' holds no files", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !err; i++) {
		rs_buf_clear(&path);
		err = rs_fs_join(&path, dir, names[i]);
		if (!err)
			err = add_file(run, repo, path.ptr, names[i], 0);
	}
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	rs_buf_release(&path);
	closedir(d);
	return err;
}

int rs_run_add_path(struct rs_run *run, struct rs_repo *repo, const char *path)
{
	struct stat st;
	const char *base;
	size_t len = strlen(path);
	char *copy;
	int err;

	/* A path named on the command line may be a symlink: the user chose it. */
	if (stat(path, &st) != 0) {
		if (errno == ELOOP)
			return rs_error_set(RS_EUSAGE, "'%s' is a symbolic link loop", path);
		return rs_error_errno(errno == ENOENT ? RS_ENOTFOUND : RS_EGENERIC,
				      "cannot read '%s'", path);
	}
	if (S_ISDIR(st.st_mode))
		return add_folder(run, repo, path);
	copy = strdup(path);
	if (!copy)
		return rs_error_set(RS_EGENERIC, "out of memory");
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	base = strrchr(copy, '/');
	base = base ? base + 1 : copy;
	err = add_file(run, repo, path, base, 1);
	free(copy);
	return err;
}

/* ---- run.json, summary.md, index ------------------------------------ */

static int set_number_from(json_t *metrics, const char *name, json_t *summary,
			   const char *key)
{
	json_t *v = json_object_get(summary, key);

	if (!json_is_number(v))
		return 0;
	if (json_object_set(metrics, name, v) < 0)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

json_t *rs_run_metrics(const struct rs_run *run)
{
	json_t *m = json_object();

	if (!m)
		return NULL;
	/* Stats first so that the session's own figures win a name clash. */
	if (rs_stats_numbers(m, run->stats) ||
	    (run->summary &&
	     (set_number_from(m, "duration", run->summary, "duration") ||
	      set_number_from(m, "cpu_time", run->summary, "cpu_time") ||
	      set_number_from(m, "samples", run->summary, "samples") ||
	      set_number_from(m, "sampled_time", run->summary, "sampled_time")))) {
		json_decref(m);
		return NULL;
	}
	return m;
}

static json_t *files_json(const struct rs_run *run)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < run->nfiles; i++) {
		const struct rs_run_file *f = &run->files[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:b}", "path", f->name,
				      "role", f->role, "size", (json_int_t)f->size,
				      "lfs", f->lfs);
		char hex[RS_ID_HEXSZ + 1];

		if (o && f->lfs) {
			rs_id_to_hex(hex, &f->oid);
			json_object_set_new(o, "oid", json_string(hex));
		}
		if (!o || json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * run.json layout: fully indented JSON is twice the size of compact JSON
 * (the call tree is deep), and every clone carries every run.json; fully
 * compact JSON is one unreadable line. So: one line per key at the top
 * level and inside "summary", one line per entry of the summary's
 * "functions" and "files" lists, everything deeper compact. Keys sorted.
 */
static int dump_compact(struct rs_buf *out, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
			     JSON_REAL_PRECISION(15));
	int err;

	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_buf_puts(out, s);
	free(s);
	return err;
}

static int dump_layered(struct rs_buf *out, const json_t *o, int depth)
{
	const char **keys;
	const char *k;
	json_t *v;
	size_t n = json_object_size(o), i = 0;
	int err = 0;

	keys = calloc(n ? n : 1, sizeof(*keys));
	if (!keys)
		return rs_error_set(RS_EGENERIC, "out of memory");
	json_object_foreach((json_t *)o, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	err = rs_buf_puts(out, "{");
	for (i = 0; i < n && !err; i++) {
		json_t *key = json_string(keys[i]);

		v = json_object_get(o, keys[i]);
		err = rs_buf_printf(out, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
		if (!err)
			err = key ? dump_compact(out, key) : rs_error_set(RS_EGENERIC, "out of memory");
		json_decref(key);
		if (!err)
			err = rs_buf_puts(out, ": ");
		if (err)
			break;
		if (depth == 0 && strcmp(keys[i], "summary") == 0 && json_is_object(v)) {
			err = dump_layered(out, v, depth + 1);
		} else if (depth == 1 && json_is_array(v) && json_array_size(v) &&
			   (strcmp(keys[i], "functions") == 0 || strcmp(keys[i], "files") == 0)) {
			size_t j;
			json_t *e;

			err = rs_buf_puts(out, "[");
			json_array_foreach(v, j, e) {
				if (!err)
					err = rs_buf_printf(out, "%s\n%*s", j ? "," : "",
							    2 * (depth + 2), "");
				if (!err)
					err = dump_compact(out, e);
			}
			if (!err)
				err = rs_buf_printf(out, "\n%*s]", 2 * (depth + 1), "");
		} else {
			err = dump_compact(out, v);
		}
	}
	if (!err)
		err = rs_buf_printf(out, "\n%*s}", 2 * depth, "");
	free(keys);
	return err;
}

int rs_run_render_json(struct rs_buf *out, const struct rs_run *run)
{
	json_t *o = NULL, *session = json_null(), *metrics = rs_run_metrics(run);
	json_t *files = files_json(run);
	int err = 0;

	if (!metrics || !files) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	if (run->main_session >= 0) {
		const struct rs_run_file *f = &run->files[run->main_session];
		char hex[RS_ID_HEXSZ + 1];

		rs_id_to_hex(hex, &f->oid);
		session = json_pack("{s:s, s:s, s:I}", "path", f->name, "oid", hex,
				    "size", (json_int_t)f->size);
	}
	if (!session) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	o = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:s?, s:O, s:O, s:O, s:O, s:o,"
		      " s:o, s:o, s:O}",
		      "format", RS_RUN_FORMAT, "id", run->id, "commit", run->commit,
		      "branch", run->branch, "trigger", run->trigger,
		      "recorded_at", run->recorded_at, "message", run->message,
		      "machine", run->machine, "meta", run->meta, "stats", run->stats,
		      "args", run->args, "metrics", metrics,
		      "files", files, "session", session,
		      "summary", run->summary ? run->summary : json_null());
	/* json_pack steals the "o" references even when it fails. */
	metrics = files = session = NULL;
	if (!o) {
		err = rs_error_set(RS_EUSAGE, "incomplete run (commit, branch, trigger, id)");
		goto out;
	}
	if (!run->message)
		json_object_set_new(o, "message", json_null());
	err = dump_layered(out, o, 0);
	if (!err)
		err = rs_buf_putc(out, '\n');
out:
	json_decref(o);
	json_decref(metrics);
	json_decref(files);
	json_decref(session);
	return err;
}

/*
 * A table cell from an untrusted string: no '|' (column break), no
 * newline (row break), and no raw '<' so that GitHub does not render
 * HTML someone smuggled into a --meta value.
 */
static int md_cell(struct rs_buf *out, const char *s)
{
	int err = 0;

	for (; *s && !err; s++) {
		switch (*s) {
		case '|': err = rs_buf_puts(out, "\\|"); break;
		case '<': err = rs_buf_puts(out, "&lt;"); break;
		case '>': err = rs_buf_puts(out, "&gt;"); break;
		case '&': err = rs_buf_puts(out, "&amp;"); break;
		case '\n': case '\r': case '\t': err = rs_buf_putc(out, ' '); break;
		default: err = rs_buf_putc(out, *s);
		}
	}
	return err;
}

static int md_value(struct rs_buf *out, json_t *v)
{
	char tmp[64];

	if (json_is_string(v))
		return md_cell(out, json_string_value(v));
	if (json_is_integer(v))
		return rs_buf_printf(out, "%lld", (long long)json_integer_value(v));
	if (json_is_real(v)) {
		snprintf(tmp, sizeof(tmp), "%.6g", json_real_value(v));
		return rs_buf_puts(out, tmp);
	}
	return rs_buf_puts(out, "–");
}

static int md_row(struct rs_buf *out, const char *label, const char *value)
{
	int err = rs_buf_printf(out, "| %s | ", label);

	if (!err)
		err = md_cell(out, value ? value : "–");
	if (!err)
		err = rs_buf_puts(out, " |\n");
	return err;
}

static int md_map(struct rs_buf *out, const char *title, const char *col, json_t *map)
{
	const char *k;
	json_t *v;
	int err;

	if (json_object_size(map) == 0)
		return 0;
	err = rs_buf_printf(out, "\n## %s\n\n| %s | value |\n|---|---:|\n", title, col);
	/* Sorted for a stable page: jansson iterates in hash order. */
	{
		size_t n = json_object_size(map), i = 0;
		const char **keys = calloc(n, sizeof(*keys));

		if (!keys)
			return rs_error_set(RS_EGENERIC, "out of memory");
		json_object_foreach(map, k, v)
			keys[i++] = k;
		qsort(keys, n, sizeof(*keys), cmp_str);
		for (i = 0; i < n && !err; i++) {
			err = rs_buf_puts(out, "| ");
			if (!err) err = md_cell(out, keys[i]);
			if (!err) err = rs_buf_puts(out, " | ");
			if (!err) err = md_value(out, json_object_get(map, keys[i]));
			if (!err) err = rs_buf_puts(out, " |\n");
		}
		free(keys);
	}
	return err;
}

static const char *str_of(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void human_size(char *out, size_t n, uint64_t size)
{
	if (size >= 1024 * 1024)
		snprintf(out, n, "%.1f MiB", (double)size / (1024.0 * 1024.0));
	else if (size >= 1024)
		snprintf(out, n, "%.1f KiB", (double)size / 1024.0);
	else
		snprintf(out, n, "%llu B", (unsigned long long)size);
}

int rs_run_render_markdown(struct rs_buf *out, const struct rs_run *run)
{
	char machine[1024], size[32];
	int err;

	snprintf(machine, sizeof(machine), "%s (%s, %s, %s × %lld)",
		 str_of(run->machine, "hostname") ? str_of(run->machine, "hostname") : "?",
		 str_of(run->machine, "os") ? str_of(run->machine, "os") : "?",
		 str_of(run->machine, "arch") ? str_of(run->machine, "arch") : "?",
		 str_of(run->machine, "cpu_model") ? str_of(run->machine, "cpu_model") : "?",
		 (long long)json_integer_value(json_object_get(run->machine, "cpus")));
	err = rs_buf_printf(out, "# Profiling run %s\n\n| | |\n|---|---|\n", run->id);
	if (!err) err = rs_buf_printf(out, "| Profiled commit | `%s` |\n", run->commit);
	if (!err) err = md_row(out, "Branch", run->branch);
	if (!err) err = md_row(out, "Trigger", run->trigger);
	if (!err) err = md_row(out, "Recorded (UTC)", run->recorded_at);
	if (!err) err = md_row(out, "Machine", machine);
	if (!err && str_of(run->machine, "runner"))
		err = md_row(out, "Runner", str_of(run->machine, "runner"));
	if (!err && run->message)
		err = md_row(out, "Message", run->message);
	if (!err && run->main_session >= 0)
		err = md_row(out, "Session", run->files[run->main_session].name);
	if (err)
		return err;
	if (run->session_md)
		err = rs_buf_printf(out, "\n%s", run->session_md);
	else
		err = rs_buf_puts(out, "\n_No session summary: the files were stored with "
				  "`--raw`._\n");
	if (!err) err = md_map(out, "Stats", "stat", run->stats);
	if (!err) err = md_map(out, "Arguments", "argument", run->args);
	if (!err) err = md_map(out, "Metadata", "key", run->meta);
	if (!err && run->nfiles)
		err = rs_buf_puts(out, "\n## Files\n\n| file | role | size | stored |\n"
				  "|---|---|---:|---|\n");
	for (size_t i = 0; i < run->nfiles && !err; i++) {
		const struct rs_run_file *f = &run->files[i];

		human_size(size, sizeof(size), f->size);
		err = rs_buf_puts(out, "| ");
		if (!err && f->lfs) err = md_cell(out, f->name);
		else if (!err) {
			err = rs_buf_puts(out, "[");
			if (!err) err = md_cell(out, f->name);
			if (!err) err = rs_buf_printf(out, "](%s)", f->name);
		}
		if (!err)
			err = rs_buf_printf(out, " | %s | %s | %s |\n", f->role, size,
					    f->lfs ? "Git LFS (`results fetch`)" : "in git");
	}
	return err;
}

int rs_run_index_entry(struct rs_run_entry *out, const struct rs_run *run)
{
	struct rs_run_entry e;
	int err;

	e.id = run->id;
	e.commit = run->commit;
	e.branch = run->branch;
	e.trigger = run->trigger;
	e.recorded_at = (char *)run->recorded_at;
	e.path = run->folder;
	e.verdict = run->verdict;
	e.metrics = rs_run_metrics(run);
	if (!e.metrics)
		return rs_error_set(RS_EGENERIC, "out of memory");
	err = rs_run_entry_copy(out, &e);
	json_decref(e.metrics);
	return err;
}

/* ---- recording ------------------------------------------------------ */

/* Does `path` exist in HEAD's tree? (An unborn HEAD holds nothing.) */
static int tree_has(struct rs_repo *repo, const char *path, int *has)
{
	git_object *head = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	int gerr, err = 0;

	*has = 0;
	gerr = git_revparse_single(&head, repo->git, "HEAD^{tree}");
	if (gerr == GIT_ENOTFOUND || gerr == GIT_EUNBORNBRANCH)
		return 0;
	if (gerr < 0)
		return rs_error_set(RS_EGENERIC, "cannot read HEAD: %s",
				    git_error_last() ? git_error_last()->message : "?");
	tree = (git_tree *)head;
	gerr = git_tree_entry_bypath(&te, tree, path);
	if (gerr == 0)
		*has = 1;
	else if (gerr != GIT_ENOTFOUND)
		err = rs_error_set(RS_EGENERIC, "cannot read HEAD's tree: %s",
				   git_error_last() ? git_error_last()->message : "?");
	git_tree_entry_free(te);
	git_object_free(head);
	return err;
}

/* Choose id and folder; a suffix keeps them unique in HEAD's tree. */
static int choose_id(struct rs_run *run, struct rs_repo *repo)
{
	struct rs_buf id = RS_BUF_INIT, folder = RS_BUF_INIT;
	struct tm tm;
	char day[16], hms[8], ymd[9];
	int err = 0, has = 1;

	gmtime_r(&run->recorded, &tm);
	strftime(day, sizeof(day), "%Y/%m/%d", &tm);
	strftime(hms, sizeof(hms), "%H%M%S", &tm);
	strftime(ymd, sizeof(ymd), "%Y%m%d", &tm);
	for (int n = 1; has && n < 1000 && !err; n++) {
		char suffix[16] = "";

		if (n > 1)
			snprintf(suffix, sizeof(suffix), "-%d", n);
		rs_buf_clear(&id);
		rs_buf_clear(&folder);
		if ((err = rs_buf_printf(&id, "%s-%s-%s-%.7s%s", ymd, hms, run->trigger,
					 run->commit, suffix)) ||
		    (err = rs_buf_printf(&folder, "runs/%s/%s-%s-%.7s%s", day, hms,
					 run->trigger, run->commit, suffix)))
			break;
		err = tree_has(repo, folder.ptr, &has);
	}
	if (!err && has)
		err = rs_error_set(RS_EEXISTS, "too many runs of %.7s in one second", run->commit);
	if (!err) {
		free(run->id);
		free(run->folder);
		run->id = rs_buf_detach(&id, NULL);
		run->folder = rs_buf_detach(&folder, NULL);
	}
	rs_buf_release(&id);
	rs_buf_release(&folder);
	return err;
}

/* Index shard with this run appended, and the README around it. */
static int render_index(struct rs_run *run, struct rs_repo *repo, struct rs_buf *shard_path,
			struct rs_buf *shard, struct rs_buf *readme)
{
	struct rs_runindex idx;
	struct rs_run_entry e;
	int err;

	rs_runindex_init(&idx);
	memset(&e, 0, sizeof(e));
	if ((err = rs_runindex_shard_path(shard_path, run->recorded_at)))
		goto out;
	rs_buf_init(shard, RS_RUNINDEX_MAX_SHARD);
	err = rs_repo_read_tree_file(repo, NULL, shard_path->ptr, RS_RUNINDEX_MAX_SHARD, shard);
	if (err == RS_ENOTFOUND) {
		rs_buf_clear(shard);
		err = 0;
	}
	if (err)
		goto out;
	if (shard->len && shard->ptr[shard->len - 1] != '\n' && (err = rs_buf_putc(shard, '\n')))
		goto out;
	if ((err = rs_run_index_entry(&e, run)) ||
	    (err = rs_run_entry_to_line(shard, &e)))
		goto out;
	/* The README needs only the latest runs: a bounded load. */
	if ((err = rs_runindex_load(&idx, repo, NULL, RS_RUN_README_ROWS)) ||
	    (err = rs_runindex_add(&idx, &e)) ||
	    (err = rs_runindex_readme(readme, &idx, RS_RUN_README_ROWS)))
		goto out;
out:
	rs_run_entry_release(&e);
	rs_runindex_release(&idx);
	return err;
}

/*
 * Move the LFS copies into the object store. Objects are never taken out
 * again: they are content-addressed and complete, another commit (or a
 * concurrent add of the same session) may refer to the same one, and an
 * unreferenced object costs only disk (`git lfs prune` removes it).
 */
static int place_objects(struct rs_run *run, struct rs_repo *repo)
{
	int err = 0;

	for (size_t i = 0; i < run->nfiles && !err; i++) {
		struct rs_run_file *f = &run->files[i];

		if (!f->tmp)
			continue;
		if (rs_repo_lfs_has(repo, &f->oid, f->size) == 0) {
			unlink(f->tmp);
		} else {
			rs_error_clear(); /* "not in the local store" is no error here */
			err = rs_repo_lfs_adopt(repo, f->tmp, &f->oid);
			f->placed = !err;
		}
		free(f->tmp);
		f->tmp = NULL;
	}
	return err;
}

/* Do the committed attributes (the index's) send `path` through Git LFS? */
static int attr_is_lfs(struct rs_repo *repo, const char *path)
{
	const char *v = NULL;

	if (git_attr_get(&v, repo->git, GIT_ATTR_CHECK_INDEX_ONLY | GIT_ATTR_CHECK_NO_SYSTEM,
			 path, "filter") < 0) {
		git_error_clear();
		return 0;
	}
	return git_attr_value(v) == GIT_ATTR_VALUE_STRING && strcmp(v, "lfs") == 0;
}

/*
 * The run folder's own .gitattributes: a line for every file of the run
 * stored as an LFS pointer that the repository's attributes do not send
 * through Git LFS (a session not named *.pyisession, or a repository
 * whose .gitattributes lacks the line). Without it git would see a plain
 * file holding pointer text: `git lfs ls-files` would not list it and a
 * clone would check the pointer out instead of the content. Patterns are
 * C-quoted with glob characters escaped, so that any name check_name
 * allows matches itself only. Empty when no file needs a line.
 */
static int render_attributes(struct rs_buf *out, const struct rs_run *run,
			     struct rs_repo *repo)
{
	struct rs_buf path = RS_BUF_INIT;
	int err = 0;

	for (size_t i = 0; i < run->nfiles && err == 0; i++) {
		const char *name = run->files[i].name;

		if (!run->files[i].lfs)
			continue;
		rs_buf_clear(&path);
		err = rs_buf_printf(&path, "%s/%s", run->folder, name);
		if (err || attr_is_lfs(repo, path.ptr))
			continue;
		if (out->len == 0)
			err = rs_buf_puts(out, "# written by 'results add': the files of this run "
					  "kept in Git LFS\n");
		if (err == 0)
			err = rs_buf_putc(out, '"');
		for (const char *p = name; err == 0 && *p; p++) {
			if (*p == '\\')
				err = rs_buf_puts(out, "\\\\\\\\"); /* \\ quoted twice */
			else if (strchr("*?[", *p))
				err = rs_buf_printf(out, "\\\\%c", *p); /* \* C-quoted */
			else if (*p == '"')
				err = rs_buf_puts(out, "\\\"");
			else
				err = rs_buf_putc(out, *p);
		}
		if (err == 0)
			err = rs_buf_puts(out, "\" filter=lfs diff=lfs merge=lfs -text\n");
	}
	rs_buf_release(&path);
	return err;
}

int rs_run_record(struct rs_run *run, struct rs_repo *repo, char *commit_hex_out)
{
	struct rs_buf runjson = RS_BUF_INIT, md = RS_BUF_INIT, shard_path = RS_BUF_INIT;
	struct rs_buf shard = RS_BUF_INIT, readme = RS_BUF_INIT, msg = RS_BUF_INIT;
	struct rs_buf paths = RS_BUF_INIT, attrs = RS_BUF_INIT, attrs_path = RS_BUF_INIT;
	struct rs_commit_file *cf = NULL;
	struct rs_commit_options opts;
	char **names = NULL;
	size_t n = 0;
	int err = 0, changed = 0;

	if (!run->commit || !run->branch || !run->trigger || !run->recorded_at[0])
		return rs_error_set(RS_EUSAGE, "a run needs a commit, branch, trigger and time");
	if (run->nfiles == 0)
		return rs_error_set(RS_EUSAGE, "a run needs at least one file");
	if ((err = choose_id(run, repo)) ||
	    (err = rs_run_render_json(&runjson, run)) ||
	    (err = rs_run_render_markdown(&md, run)) ||
	    (err = rs_run_verdict(run, repo, &runjson, &md)) ||
	    (err = render_index(run, repo, &shard_path, &shard, &readme)) ||
	    (err = render_attributes(&attrs, run, repo)))
		goto out;
	cf = calloc(run->nfiles + 5, sizeof(*cf));
	names = calloc(run->nfiles + 2, sizeof(*names));
	if (!cf || !names) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < run->nfiles + 2; i++) {
		const char *leaf = i < run->nfiles ? run->files[i].name
			: i == run->nfiles ? "run.json" : "summary.md";

		rs_buf_clear(&paths);
		if ((err = rs_buf_printf(&paths, "%s/%s", run->folder, leaf)))
			goto out;
		names[i] = rs_buf_detach(&paths, NULL);
		cf[n].path = names[i];
		if (i < run->nfiles) {
			cf[n].data = run->files[i].blob.ptr ? run->files[i].blob.ptr : "";
			cf[n].size = run->files[i].blob.len;
		} else if (i == run->nfiles) {
			cf[n].data = runjson.ptr;
			cf[n].size = runjson.len;
		} else {
			cf[n].data = md.ptr;
			cf[n].size = md.len;
		}
		n++;
	}
	cf[n].path = shard_path.ptr;
	cf[n].data = shard.ptr;
	cf[n++].size = shard.len;
	cf[n].path = "README.md";
	cf[n].data = readme.ptr;
	cf[n++].size = readme.len;
	if (attrs.len) {
		if ((err = rs_buf_printf(&attrs_path, "%s/.gitattributes", run->folder)))
			goto out;
		cf[n].path = attrs_path.ptr;
		cf[n].data = attrs.ptr;
		cf[n++].size = attrs.len;
	}

	if ((err = rs_buf_printf(&msg, "Record run %s\n\nProfiled commit %s on %s (%s).\n",
				 run->id, run->commit, run->branch, run->trigger)))
		goto out;
	if (run->message && (err = rs_buf_printf(&msg, "\n%s\n", run->message)))
		goto out;
	memset(&opts, 0, sizeof(opts));
	opts.message = msg.ptr;

	/* Objects first: a commit must never point at an object we lack. */
	if ((err = place_objects(run, repo)))
		goto out;
	err = rs_commit_files(repo, cf, n, &opts, commit_hex_out, &changed);
out:
	if (names)
		for (size_t i = 0; i < run->nfiles + 2; i++)
			free(names[i]);
	free(names);
	free(cf);
	rs_buf_release(&runjson);
	rs_buf_release(&md);
	rs_buf_release(&shard_path);
	rs_buf_release(&shard);
	rs_buf_release(&readme);
	rs_buf_release(&msg);
	rs_buf_release(&paths);
	rs_buf_release(&attrs);
	rs_buf_release(&attrs_path);
	return err;
}
