/*
 * Writing what rs_watch_run measured: the stats object `results add`
 * reads (--stats), the sizes of the files the command wrote, and the
 * timeline CSV (results/watch.h).
 */
#define _GNU_SOURCE
#include "results/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "results/buf.h"
#include "results/json.h"
#include "util/array.h"
#include "util/fs.h"

#define OUT_DEPTH_MAX 8
#define OUT_ENTRIES_MAX 10000
#define OUT_LISTED 32
#define OUT_NAME_MAX 200

static double mb(uint64_t bytes)
{
	return (double)bytes / (1024.0 * 1024.0);
}

/* Round to what a reader needs (and what survives %g in run.json). */
static json_t *num(double v, double unit)
{
	return json_real((double)(long long)(v / unit + (v >= 0 ? 0.5 : -0.5)) * unit);
}

static int set(json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory writing stats");
	return 0;
}

static int put_proc(json_t *root, const struct rs_watch_report *rep)
{
	json_t *p = json_object();
	int err;

	if (!p || json_object_set_new(root, "proc", p) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory writing stats");
	err = set(p, "wall_s", num(rep->wall_s, 0.001));
	if (!err)
		err = set(p, "user_s", num(rep->user_s, 0.001));
	if (!err)
		err = set(p, "sys_s", num(rep->sys_s, 0.001));
	if (!err)
		err = set(p, "cpu_s", num(rep->user_s + rep->sys_s, 0.001));
	if (!err)
		err = set(p, "peak_rss_mb", num(mb(rep->peak_rss_bytes), 0.01));
	if (!err)
		err = set(p, "processes", json_integer(rep->processes_seen));
	if (!err)
		err = set(p, "peak_threads", json_integer(rep->peak_threads));
	if (!err)
		err = set(p, "exit_status", json_integer(rep->exit_status));
	if (!err)
		err = set(p, "leftover", json_integer(rep->leftover));
	return err;
}

static int put_io(json_t *root, const struct rs_watch_report *rep)
{
	json_t *io;
	int err;

	if (!rep->io_known)
		return 0;
	io = json_object();
	if (!io || json_object_set_new(root, "io", io) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory writing stats");
	err = set(io, "read_mb", num(mb(rep->read_bytes), 0.01));
	if (!err)
		err = set(io, "write_mb", num(mb(rep->write_bytes), 0.01));
	if (!err)
		err = set(io, "rchar_mb", num(mb(rep->rchar), 0.01));
	if (!err)
		err = set(io, "wchar_mb", num(mb(rep->wchar), 0.01));
	return err;
}

static int put_warnings(json_t *root, const struct rs_watch_report *rep)
{
	json_t *w = json_object();
	int err;

	if (!w || json_object_set_new(root, "warnings", w) != 0)
		return rs_error_set(RS_EGENERIC, "out of memory writing stats");
	err = set(w, "count", json_integer((json_int_t)rep->warnings));
	for (size_t i = 0; !err && i < rep->ncategories; i++)
		if (strcmp(rep->categories[i].name, "count") != 0)
			err = set(w, rep->categories[i].name,
				  json_integer((json_int_t)rep->categories[i].count));
	if (!err && rep->warnings_other)
		err = set(w, "other", json_integer((json_int_t)rep->warnings_other));
	return err;
}

/* ---- the files the command wrote ------------------------------------ */

struct out_file {
	char *name;   /* relative to the folder, cut to OUT_NAME_MAX */
	uint64_t size;
};

struct out_walk {
	struct timespec since;
	struct out_file *files;
	size_t n, alloc, entries;
	uint64_t total;
};

/*
 * A file name as a stats name: cut to OUT_NAME_MAX bytes, and every byte
 * that is not printable ASCII (controls, DEL, anything that may not be
 * UTF-8) made '_', so that the name is valid JSON text and reaches no
 * reader as a control sequence. The caller's (free).
 */
static char *stat_name(const char *name)
{
	char *s = strndup(name, OUT_NAME_MAX);

	for (char *p = s; p && *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '_';
	return s;
}

static int written_since(const struct stat *st, const struct timespec *since)
{
	return st->st_mtim.tv_sec > since->tv_sec ||
	       (st->st_mtim.tv_sec == since->tv_sec && st->st_mtim.tv_nsec >= since->tv_nsec);
}

static int walk(struct out_walk *o, int fd, const char *prefix, int depth)
{
	DIR *d;
	struct dirent *de;
	int err = 0;

	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return rs_error_errno(RS_EGENERIC, "cannot list '%s'", *prefix ? prefix : ".");
	}
	for (;;) {
		struct stat st;
		struct rs_buf name = RS_BUF_INIT;

		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, ".git") == 0)
			continue;
		if (++o->entries > OUT_ENTRIES_MAX)
			break;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if ((*prefix && rs_buf_printf(&name, "%s/%s", prefix, de->d_name)) ||
		    (!*prefix && rs_buf_puts(&name, de->d_name))) {
			err = rs_error_set(RS_EGENERIC, "out of memory listing outputs");
			break;
		}
		if (S_ISDIR(st.st_mode) && depth < OUT_DEPTH_MAX) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				err = walk(o, sub, name.ptr, depth + 1);
		} else if (S_ISREG(st.st_mode) && written_since(&st, &o->since)) {
			o->total += (uint64_t)st.st_size;
			if (rs_array_grow((void **)&o->files, &o->alloc, o->n + 1,
					  sizeof(*o->files), 32)) {
				err = rs_error_set(RS_EGENERIC, "out of memory listing outputs");
			} else {
				o->files[o->n].name = stat_name(name.ptr);
				o->files[o->n].size = (uint64_t)st.st_size;
				if (!o->files[o->n].name)
					err = rs_error_set(RS_EGENERIC, "out of memory");
				else
					o->n++;
			}
		}
		rs_buf_release(&name);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

static int by_size_desc(const void *a, const void *b)
{
	const struct out_file *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int put_outputs(json_t *root, const char *dir, const struct timespec *since)
{
	struct out_walk o = { *since, NULL, 0, 0, 0, 0 };
	json_t *out, *files;
	int fd, err;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return rs_error_errno(RS_EUSAGE, "cannot open the output folder '%s'", dir);
	err = walk(&o, fd, "", 0);
	if (err)
		goto out;
	if (o.n) /* qsort(NULL, 0, ...) is undefined */
		qsort(o.files, o.n, sizeof(*o.files), by_size_desc);
	out = json_object();
	files = json_object();
	if (!out || !files || json_object_set_new(root, "out", out) != 0) {
		json_decref(files);
		err = rs_error_set(RS_EGENERIC, "out of memory writing stats");
		goto out;
	}
	err = set(out, "files", json_integer((json_int_t)o.n));
	if (!err)
		err = set(out, "mb", num(mb(o.total), 0.001));
	if (!err)
		err = set(out, "file", files);
	for (size_t i = 0; !err && i < o.n && i < OUT_LISTED; i++)
		err = set(files, o.files[i].name, num(mb(o.files[i].size), 0.001));
out:
	for (size_t i = 0; i < o.n; i++)
		free(o.files[i].name);
	free(o.files);
	return err;
}

int rs_watch_write_stats(const struct rs_watch_report *rep, const char *path,
			 const char *out_dir, const struct timespec *since)
{
	json_t *root = json_object();
	struct rs_buf text = RS_BUF_INIT;
	int err;

	if (!root)
		return rs_error_set(RS_EGENERIC, "out of memory writing stats");
	err = put_proc(root, rep);
	if (!err)
		err = put_io(root, rep);
	if (!err)
		err = put_warnings(root, rep);
	if (!err && out_dir)
		err = put_outputs(root, out_dir, since);
	if (!err) {
		err = rs_json_dump(&text, root, JSON_INDENT(2) | JSON_SORT_KEYS |
				   JSON_REAL_PRECISION(10));
		if (err)
			err = rs_error_wrap(err, "writing stats");
	}
	if (!err)
		err = rs_fs_write_file_atomic(path, text.ptr, text.len);
	rs_buf_release(&text);
	json_decref(root);
	return err;
}

int rs_watch_write_timeline(const struct rs_watch_report *rep, const char *path)
{
	struct rs_buf b = RS_BUF_INIT;
	int err = rs_buf_puts(&b, "t_s,rss_mb,cpu_s,processes,threads\n");

	for (size_t i = 0; !err && i < rep->ntimeline; i++) {
		const struct rs_watch_sample *s = &rep->timeline[i];

		err = rs_buf_printf(&b, "%.3f,%.2f,%.3f,%u,%u\n", s->t_s, mb(s->rss_bytes),
				    s->cpu_s, s->processes, s->threads);
	}
	if (err)
		err = rs_error_set(RS_EGENERIC, "out of memory writing the timeline");
	else
		err = rs_fs_write_file_atomic(path, b.ptr, b.len);
	rs_buf_release(&b);
	return err;
}
