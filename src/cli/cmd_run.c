/*
 * `results run`: run the profiling command, measure it from outside
 * (results/watch.h), then record the run from the files it wrote, as
 * `results add` would (cli/add_flow.h), with the measured figures as
 * stats and the memory timeline as a CSV beside the run.
 *
 * Which files are the run's: the regular files at the top of --out
 * (default: the current directory) that the command created or changed,
 * judged by comparing each file's inode, size and modification time
 * before and after. They are hard-linked (copied where links are not
 * possible) into a dot-folder inside --out, with the two files results
 * writes, and that folder is recorded, so that the folder rules of
 * `results add` apply: the first *.pyisession by name is the main
 * session, *.stats.json and *.logged-stats.csv are read, every other file
 * is committed as it is. The dot-folder is removed afterwards.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/add_flow.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "results/buf.h"
#include "results/error.h"
#include "results/watch.h"

static const char usage[] =
	"usage: results run --commit <sha> [--out DIR] [--record-failed] [add's options]\n"
	"                   -- COMMAND [ARG...]\n"
	"\n"
	"Run the profiling COMMAND (for example 'pyinstrument -o out/run.pyisession\n"
	"-r session script.py'), pass its output through, and measure it from\n"
	"outside over its whole process tree, without any change to it: wall time,\n"
	"user and system CPU time, peak RSS and an RSS timeline (every 100 ms),\n"
	"bytes read and written, processes and threads, Python warnings on its\n"
	"standard error by category, and the size of each file it wrote under\n"
	"--out. Then record the run as 'results add' would, from the files the\n"
	"command created or changed at the top of --out (sessions, *.stats.json,\n"
	"*.logged-stats.csv, logs...), with the figures as stats (proc.wall_s,\n"
	"proc.cpu_s, proc.peak_rss_mb, io.read_mb, io.write_mb, warnings.count,\n"
	"warnings.<Category>, out.mb, out.file.<name>...) and the timeline as\n"
	"results-run.timeline.csv in the run's folder.\n"
	"\n"
	"options:\n"
	"  --out DIR           where the command writes its outputs (default: the\n"
	"                      current directory)\n"
	"  --record-failed     record the run even when the command fails\n"
	"  --interval MS       sampling interval of the timeline (10 to 60000;\n"
	"                      default 100)\n"
	"  --commit, --branch, --trigger, --meta, --stats, -m/--message, --raw:\n"
	"                      as for 'results add' (see 'results add --help')\n"
	"\n"
	"The command's standard output and input are its own; its standard error\n"
	"reaches the terminal through a pipe. Descendants the command leaves\n"
	"running are waited for at most 10 s after it exits.\n"
	"\n"
	"exit status: the command's own when it failed (nothing recorded unless\n"
	"--record-failed), 127 when it could not be started; else as 'results\n"
	"add': 0 recorded, 2 bad usage or input, 3 not a results repository, 8\n"
	"other error.\n";

enum { OPT_OUT = RS_ADD_OPT_LAST, OPT_RECORD_FAILED, OPT_INTERVAL };

static const struct option options[] = {
	RS_ADD_OPTIONS,
	{ "out", required_argument, NULL, OPT_OUT },
	{ "record-failed", no_argument, NULL, OPT_RECORD_FAILED },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct run_args {
	struct rs_add_args add;
	const char *out;
	int record_failed;
	unsigned interval_ms;
};

/* One file at the top of --out before the command ran. */
struct before_file {
	char *name;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/*
 * The files at the top of --out before the command ran: `n` struct
 * before_file packed in `files`. An rs_buf, because it is the growing
 * helper of the public headers, which are all a program may include
 * (tests/e2e/test_public_surface.sh; util/array.h is not one); its
 * bytes come from malloc, so they are aligned for the struct.
 */
struct before {
	struct rs_buf files;
	size_t n;
};

static const struct before_file *before_files(const struct before *b)
{
	return (const struct before_file *)(const void *)b->files.ptr;
}

static void before_release(struct before *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(before_files(b)[i].name);
	rs_buf_release(&b->files);
	b->n = 0;
}

/* The regular files at the top of `dir` (not dot files): RS_EXIT_*. */
static int snapshot(struct before *b, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	rs_buf_init(&b->files, 0);
	b->n = 0;
	if (!d && errno == ENOENT)
		return RS_EXIT_OK;
	if (!d)
		return rs_cli_fail(RS_EXIT_USAGE, "cannot read --out '%s': %s", dir, strerror(errno));
	for (;;) {
		struct stat st;
		struct before_file f;
		int err;

		de = readdir(d);
		if (!de)
			break;
		if (de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		f.name = strdup(de->d_name);
		f.ino = st.st_ino;
		f.size = st.st_size;
		f.mtime = st.st_mtim;
		if (!f.name) {
			closedir(d);
			return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		}
		err = rs_buf_put(&b->files, &f, sizeof(f));
		if (err) {
			free(f.name);
			closedir(d);
			return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		}
		b->n++;
	}
	closedir(d);
	return RS_EXIT_OK;
}

/* Whether the file `name` (now `st`) is as it was before the run. */
static int unchanged(const struct before *b, const char *name, const struct stat *st)
{
	const struct before_file *f = before_files(b);

	for (size_t i = 0; i < b->n; i++)
		if (strcmp(f[i].name, name) == 0)
			return f[i].ino == st->st_ino && f[i].size == st->st_size &&
			       f[i].mtime.tv_sec == st->st_mtim.tv_sec &&
			       f[i].mtime.tv_nsec == st->st_mtim.tv_nsec;
	return 0;
}

/* Copy `name` from `dfd` into `sfd` (where a hard link cannot be made). */
static int copy_into(int dfd, int sfd, const char *name)
{
	char b[65536];
	int in = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), out;
	ssize_t n = 0;

	if (in < 0)
		return -1;
	out = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	for (;;) {
		n = read(in, b, sizeof(b));
		if (n <= 0)
			break;
		if (write(out, b, (size_t)n) != n) {
			n = -1;
			break;
		}
	}
	close(in);
	if (close(out) != 0 || n < 0)
		return -1;
	return 0;
}

/*
 * Link the files the command created or changed at the top of `dir` into
 * the staging folder `stage` (a dot-folder of `dir`): the number taken
 * in *taken, RS_EXIT_*.
 */
static int stage_outputs(const char *dir, const char *stage, const struct before *b,
			 size_t *taken)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int sfd, status = RS_EXIT_OK;

	*taken = 0;
	if (!d)
		return rs_cli_fail(RS_EXIT_USAGE, "cannot read --out '%s': %s", dir, strerror(errno));
	sfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		closedir(d);
		return rs_cli_fail(RS_EXIT_OTHER, "cannot open '%s': %s", stage, strerror(errno));
	}
	for (;;) {
		struct stat st;

		de = readdir(d);
		if (!de)
			break;
		if (de->d_name[0] == '.' ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || unchanged(b, de->d_name, &st))
			continue;
		if (linkat(dirfd(d), de->d_name, sfd, de->d_name, 0) != 0 &&
		    copy_into(dirfd(d), sfd, de->d_name) != 0) {
			status = rs_cli_fail(RS_EXIT_OTHER, "cannot take '%s/%s' into the run: %s",
					     dir, de->d_name, strerror(errno));
			break;
		}
		(*taken)++;
	}
	close(sfd);
	closedir(d);
	return status;
}

/* Remove the staging folder and what it holds (links and results' files). */
static void remove_stage(const char *stage)
{
	DIR *d = opendir(stage);
	struct dirent *de;

	if (!d)
		return;
	for (;;) {
		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0); /* best effort: a leftover is harmless */
	}
	closedir(d);
	(void)rmdir(stage);
}

static int take_option(struct run_args *r, int opt)
{
	char *end;
	unsigned long ms;

	if (rs_add_args_take(&r->add, opt, optarg))
		return RS_EXIT_OK;
	switch (opt) {
	case OPT_OUT:
		r->out = optarg;
		return RS_EXIT_OK;
	case OPT_RECORD_FAILED:
		r->record_failed = 1;
		return RS_EXIT_OK;
	case OPT_INTERVAL:
		errno = 0;
		ms = strtoul(optarg, &end, 10);
		if (errno || *end || ms < 10 || ms > 60000)
			return rs_cli_fail(RS_EXIT_USAGE, "--interval '%s' is not a number of "
					   "milliseconds from 10 to 60000", optarg);
		r->interval_ms = (unsigned)ms;
		return RS_EXIT_OK;
	}
	return RS_EXIT_USAGE;
}

/* The options into `r`: RS_EXIT_OK to run, else -1 with *status to end with. */
static int parse_args(struct run_args *r, int argc, char **argv, int *status_out)
{
	/* '+': the options end at the command's first word, so that its own
	   options are never taken for ours even without "--" */
	struct rs_cli_opts opts = {
		.command = "run", .usage = usage, .shortopts = "+:hm:", .longopts = options,
	};
	int opt;

	*status_out = RS_EXIT_OK;
	for (;;) {
		opt = rs_cli_opts_next(&opts, argc, argv);
		if (opt < 0) {
			*status_out = opts.status; /* --help printed, or a usage error */
			return -1;
		}
		if (opt == 0)
			break;
		*status_out = take_option(r, opt);
		if (*status_out)
			return -1;
	}
	*status_out = rs_add_args_check(&r->add, "run");
	if (*status_out)
		return -1;
	if (optind >= argc) {
		*status_out = rs_cli_usage("run", "give the command to run after '--'");
		return -1;
	}
	return RS_EXIT_OK;
}

/* The staging folder's name in `out_dir`, made: RS_EXIT_*. */
static int make_stage(struct rs_buf *stage, const char *out_dir)
{
	if (rs_buf_printf(stage, "%s/.results-run-XXXXXX", out_dir))
		return rs_cli_fail(RS_EXIT_OTHER, "out of memory");
	if (!mkdtemp(stage->ptr))
		return rs_cli_fail(RS_EXIT_OTHER, "cannot make a folder in '%s': %s", out_dir,
				   strerror(errno));
	return RS_EXIT_OK;
}

/*
 * Write results' two files into the stage (while it is empty, so that the
 * sizes of the outputs do not count the links), take the outputs into it
 * and record it: RS_EXIT_*.
 */
static int record_stage(struct run_args *r, const struct rs_watch_report *rep,
			const char *stage, const struct before *b, const struct timespec *since)
{
	size_t taken;
	struct rs_buf path = RS_BUF_INIT;
	char *paths[1];
	int status;

	if (rs_buf_printf(&path, "%s/results-run.stats.json", stage)) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (rs_watch_write_stats(rep, path.ptr, r->out, since)) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}
	rs_buf_clear(&path);
	if (rs_buf_printf(&path, "%s/results-run.timeline.csv", stage)) {
		status = rs_cli_fail(RS_EXIT_OTHER, "out of memory");
		goto out;
	}
	if (rs_watch_write_timeline(rep, path.ptr)) {
		status = rs_cli_error(RS_EXIT_OTHER);
		goto out;
	}
	status = stage_outputs(r->out, stage, b, &taken);
	if (status)
		goto out;
	paths[0] = (char *)stage;
	status = rs_add_record(&r->add, paths, 1);
out:
	rs_buf_release(&path);
	return status;
}

/* One line on stderr: what was measured. */
static void say_measured(const struct rs_watch_report *rep, const char *cmd)
{
	fprintf(stderr, "results: '%s' ran %.2f s (CPU %.2f s), peak RSS %.1f MB, "
		"%u processes, %llu warnings, exit status %d\n", cmd, rep->wall_s,
		rep->user_s + rep->sys_s, (double)rep->peak_rss_bytes / (1024.0 * 1024.0),
		rep->processes_seen, (unsigned long long)rep->warnings, rep->exit_status);
	if (rep->leftover)
		fprintf(stderr, "results: %u processes it started were still running %s\n",
			rep->leftover, "10 s after it exited; they were not waited for");
}

int cmd_run(int argc, char **argv)
{
	struct run_args r = { .out = ".", .interval_ms = 100 };
	struct rs_watch_opts wopts = { 0, 0 };
	struct rs_watch_report rep;
	struct before before = { RS_BUF_INIT, 0 };
	struct rs_buf stage = RS_BUF_INIT;
	struct timespec started;
	int status, err;

	rs_watch_report_init(&rep);
	status = rs_add_args_init(&r.add, argc);
	if (status)
		return status;
	if (parse_args(&r, argc, argv, &status) < 0)
		goto out;
	if (mkdir(r.out, 0777) != 0 && errno != EEXIST) {
		status = rs_cli_fail(RS_EXIT_USAGE, "cannot make --out '%s': %s", r.out,
				     strerror(errno));
		goto out;
	}
	status = snapshot(&before, r.out);
	if (status)
		goto out;
	wopts.interval_ms = r.interval_ms;
	/* the files written from here on are the command's (what "out" counts);
	   50 ms back, as file times come from the kernel's coarse clock */
	clock_gettime(CLOCK_REALTIME, &started);
	if (started.tv_nsec >= 50000000L) {
		started.tv_nsec -= 50000000L;
	} else {
		started.tv_sec -= 1;
		started.tv_nsec += 950000000L;
	}
	err = rs_watch_run(&rep, argv + optind, &wopts);
	if (err) {
		status = rs_cli_error(err == RS_ENOTFOUND ? 127 : RS_EXIT_OTHER);
		goto out;
	}
	say_measured(&rep, argv[optind]);
	if (rep.exit_status != 0 && !r.record_failed) {
		status = rep.exit_status;
		fprintf(stderr, "results: the command failed; nothing was recorded "
			"(--record-failed records it)\n");
		goto out;
	}
	status = make_stage(&stage, r.out);
	if (status)
		goto out;
	status = record_stage(&r, &rep, stage.ptr, &before, &started);
	remove_stage(stage.ptr);
	if (rep.exit_status != 0)
		status = rep.exit_status; /* recorded on request; still a failed run */
out:
	rs_buf_release(&stage);
	before_release(&before);
	rs_watch_report_release(&rep);
	rs_add_args_release(&r.add);
	return status;
}
