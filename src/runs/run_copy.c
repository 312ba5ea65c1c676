/*
 * The single pass over a session (or any file kept in Git LFS): read
 * once, hashed, copied to .git/lfs/tmp and parsed at the same time.
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
#include "runs/run.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git/pointer.h"
#include "runs/run_internal.h"
#include "session/summary.h"
#include "results/error.h"
#include "util/fs.h"

#define READ_CHUNK (1u << 20)

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
	struct rs_error_saved saved; /* its message (error slots are per thread) */
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
			rs_error_save(&p->saved, err);
		}
		p->tail = (p->tail + 1) % PIPE_SLOTS;
		p->queued--;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Buffers, hash and locks of an idle pipe; RS_EGENERIC when out of memory. */
static int pipe_init(struct copy_pipe *p)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->h = rs_sha256_new();
	for (int i = 0; i < PIPE_SLOTS; i++) {
		p->buf[i] = malloc(READ_CHUNK);
		if (!p->buf[i] && p->h) {
			rs_sha256_free(p->h);
			p->h = NULL;
		}
	}
	if (!p->h)
		return rs_error_set(RS_EGENERIC, "out of memory");
	return 0;
}

static void pipe_release(struct copy_pipe *p)
{
	if (p->fd >= 0)
		close(p->fd);
	rs_sha256_free(p->h);
	for (int i = 0; i < PIPE_SLOTS; i++)
		free(p->buf[i]);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
}

/* No more slots: let the writer drain what it has, and wait for it. */
static void pipe_stop(struct copy_pipe *p, pthread_t writer)
{
	pthread_mutex_lock(&p->mu);
	p->closing = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(writer, NULL);
}

/*
 * The reader's side: fill a free slot from `in`, hand it to the writer,
 * parse it (when `pass`), until the end of the file or an error (the
 * writer's is reported by the caller). `*parse_failed` when the parser
 * refused the input.
 */
static int pipe_pump(struct copy_pipe *p, int in, const char *path, struct rs_summary *pass,
		     int *parse_failed)
{
	int err = 0;

	for (;;) {
		unsigned char *chunk;
		size_t slot;
		ssize_t n;
		int writer_failed;

		pthread_mutex_lock(&p->mu);
		while (p->queued == PIPE_SLOTS && !p->err)
			pthread_cond_wait(&p->cv, &p->mu);
		slot = p->head;
		writer_failed = p->err;
		pthread_mutex_unlock(&p->mu);
		if (writer_failed)
			break;
		chunk = p->buf[slot];
		do
			n = read(in, chunk, READ_CHUNK);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return rs_error_errno(RS_EGENERIC, "cannot read '%s'", path);
		if (n == 0)
			break;
		pthread_mutex_lock(&p->mu);
		p->len[slot] = (size_t)n;
		p->head = (p->head + 1) % PIPE_SLOTS;
		p->queued++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (!pass)
			continue;
		err = rs_summary_feed(pass, chunk, (size_t)n);
		if (err) {
			*parse_failed = 1;
			return err;
		}
	}
	if (!pass)
		return err;
	err = rs_summary_finish(pass);
	if (err)
		*parse_failed = 1;
	return err;
}

/* The copy is complete: make it durable and describe it as an LFS file. */
static int pipe_finish(struct rs_run_file *f, struct copy_pipe *p, struct rs_buf *tmp)
{
	struct rs_pointer ptr = RS_POINTER_INIT;
	int err;

	/* The object must be durable before a push can announce it. */
	if (fsync(p->fd) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot fsync '%s'", tmp->ptr);
	rs_sha256_final(p->h, &f->oid);
	f->size = p->size;
	f->lfs = 1;
	rs_pointer_init(&ptr, &f->oid, p->size);
	rs_buf_clear(&f->blob);
	err = rs_pointer_format(&f->blob, &ptr);
	if (!err)
		f->tmp = rs_buf_detach(tmp, NULL);
	rs_pointer_release(&ptr);
	return err;
}

/*
 * Read `path` once: hash it, copy it to a new temporary file under
 * .git/lfs/tmp and, when `pass` is given, feed it to that summary (and so
 * to its session parser). On success f->oid, f->size, f->tmp and f->blob
 * (the pointer) are set; on failure the temporary file is gone.
 */
int rs_run_copy_to_lfs(struct rs_repo *repo, struct rs_run_file *f, int in, const char *path,
		       struct rs_summary *pass)
{
	struct copy_pipe p;
	struct rs_buf tmp = RS_BUF_INIT;
	pthread_t writer;
	int err, parse_failed = 0;

	err = pipe_init(&p);
	if (!err)
		err = rs_repo_lfs_tmp_path(&tmp, repo);
	if (err)
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
	err = pipe_pump(&p, in, path, pass, &parse_failed);
	pipe_stop(&p, writer);
	if (!err && p.err)
		err = rs_error_restore(&p.saved);
	if (!err)
		err = pipe_finish(f, &p, &tmp);
out:
	if (parse_failed && err == RS_ECORRUPT)
		err = rs_error_wrap(err, "'%s' is not a pyinstrument session (use --raw to "
				    "store it as an opaque file)", path);
	else if (parse_failed)
		err = rs_error_wrap(err, "cannot summarise '%s'", path);
	if (err && tmp.ptr)
		unlink(tmp.ptr);
	pipe_release(&p);
	rs_buf_release(&tmp);
	return err;
}
