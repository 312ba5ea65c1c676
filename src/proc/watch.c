/*
 * Running a command and measuring its whole process tree from outside
 * (results/watch.h has the contract and what each figure means).
 *
 * The loop: fork, exec the command with its standard error on a pipe,
 * then poll that pipe with a timeout of one sampling interval. Each
 * time the interval passes, one scan of /proc finds this process's
 * descendants (by parent links: orphans are re-parented here, as this
 * process is a child subreaper) and sums their RSS, threads and CPU
 * time. Children that end are reaped with waitpid(-1), which folds their
 * CPU time (getrusage RUSAGE_CHILDREN) and I/O (/proc/self/io) into ours.
 * The command's end is not the tree's: descendants still running are
 * waited for, up to a deadline (linger_s), so that a daemon it leaves
 * behind cannot hang a CI job.
 */
#define _GNU_SOURCE
#include "results/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"

/* ---- the report ----------------------------------------------------- */

void rs_watch_report_init(struct rs_watch_report *rep)
{
	memset(rep, 0, sizeof(*rep));
}

void rs_watch_report_release(struct rs_watch_report *rep)
{
	free(rep->categories);
	free(rep->timeline);
	memset(rep, 0, sizeof(*rep));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- warnings on standard error ------------------------------------- */

/*
 * Python's warnings module writes "FILE:LINE: CATEGORY: MESSAGE" (then
 * the source line, indented). CATEGORY is a class name ending in
 * "Warning", possibly dotted (a module's own class). The first ": X...Warning:"
 * after a ":<digits>" is taken, so that a message that itself mentions a
 * warning is not counted twice.
 */
static int category_of(const char *line, size_t len, const char **name, size_t *nlen)
{
	for (size_t i = 0; i + 2 < len; i++) {
		size_t j, start;

		if (line[i] != ':' || line[i + 1] < '0' || line[i + 1] > '9')
			continue;
		j = i + 1;
		while (j < len && line[j] >= '0' && line[j] <= '9')
			j++;
		if (j + 2 >= len || line[j] != ':' || line[j + 1] != ' ')
			continue;
		start = j + 2;
		j = start;
		while (j < len && (line[j] == '_' || line[j] == '.' ||
				   (line[j] >= 'A' && line[j] <= 'Z') ||
				   (line[j] >= 'a' && line[j] <= 'z') ||
				   (line[j] >= '0' && line[j] <= '9')))
			j++;
		if (j < len && line[j] == ':' && j - start >= 7 &&
		    memcmp(line + j - 7, "Warning", 7) == 0) {
			*name = line + start;
			*nlen = j - start;
			return 1;
		}
	}
	return 0;
}

static int count_warning(struct rs_watch_report *rep, const char *name, size_t nlen)
{
	size_t alloc;

	if (nlen > RS_WATCH_CATEGORY_LEN)
		nlen = RS_WATCH_CATEGORY_LEN;
	rep->warnings++;
	for (size_t i = 0; i < rep->ncategories; i++)
		if (strlen(rep->categories[i].name) == nlen &&
		    memcmp(rep->categories[i].name, name, nlen) == 0) {
			rep->categories[i].count++;
			return 0;
		}
	if (rep->ncategories == RS_WATCH_CATEGORIES_MAX) {
		rep->warnings_other++;
		return 0;
	}
	alloc = rep->ncategories;
	if (rs_array_grow((void **)&rep->categories, &alloc, rep->ncategories + 1,
			  sizeof(*rep->categories), RS_WATCH_CATEGORIES_MAX))
		return rs_error_set(RS_EGENERIC, "out of memory counting warnings");
	memcpy(rep->categories[rep->ncategories].name, name, nlen);
	rep->categories[rep->ncategories].name[nlen] = '\0';
	rep->categories[rep->ncategories].count = 1;
	rep->ncategories++;
	return 0;
}

int rs_watch_scan_stderr(struct rs_watch_report *rep, char *line, size_t cap, size_t *used,
			 const char *bytes, size_t len, int eof)
{
	const char *name;
	size_t nlen;
	int err;

	for (size_t i = 0; i < len; i++) {
		if (bytes[i] != '\n') {
			/* past `cap` the rest of the line is not looked at */
			if (*used < cap)
				line[(*used)++] = bytes[i];
			continue;
		}
		if (category_of(line, *used, &name, &nlen)) {
			err = count_warning(rep, name, nlen);
			if (err)
				return err;
		}
		*used = 0;
	}
	if (eof && *used) {
		if (category_of(line, *used, &name, &nlen)) {
			err = count_warning(rep, name, nlen);
			if (err)
				return err;
		}
		*used = 0;
	}
	return 0;
}

/* ---- the process tree ----------------------------------------------- */

/* What one scan of /proc saw of the tree below `root`. */
struct tree_scan {
	uint64_t rss_bytes;
	double cpu_s;   /* of the live processes */
	unsigned processes, threads;
};

/* One process of /proc: its parent, RSS pages, threads, CPU ticks. */
struct proc_entry {
	pid_t pid, ppid;
	long rss_pages, threads;
	unsigned long long ticks;
};

/*
 * /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and
 * parentheses, so the fields are counted from the last ')'. Fields (1-based,
 * proc(5)): 4 ppid, 14 utime, 15 stime, 20 num_threads, 24 rss.
 */
static int read_stat(struct proc_entry *e, pid_t pid)
{
	char path[64], b[1024], *p, *end;
	unsigned long long utime = 0, stime = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = '\0';
	p = strrchr(b, ')');
	if (!p)
		return -1;
	p++;
	e->pid = pid;
	/* field 3 (state) starts after ") " */
	for (field = 3; *p; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (field == 4)
			e->ppid = (pid_t)strtol(p, &end, 10);
		else if (field == 14)
			utime = strtoull(p, &end, 10);
		else if (field == 15)
			stime = strtoull(p, &end, 10);
		else if (field == 20)
			e->threads = strtol(p, &end, 10);
		else if (field == 24) {
			e->rss_pages = strtol(p, &end, 10);
			break;
		}
		while (*p && *p != ' ')
			p++;
	}
	e->ticks = utime + stime;
	return field == 24 ? 0 : -1;
}

/*
 * The descendants of `root` among every process: a few hundred on a CI
 * machine, so a linear pass per level is cheap next to the interval.
 */
static int scan_tree(struct tree_scan *out, pid_t root, long page, long hz,
		     struct proc_entry **buf, size_t *alloc, pid_t **seen, size_t *nseen,
		     size_t *seen_alloc)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct proc_entry *all;
	size_t n = 0;
	int grew;

	memset(out, 0, sizeof(*out));
	if (!d)
		return rs_error_errno(RS_EGENERIC, "cannot read /proc");
	for (;;) {
		struct proc_entry e = { 0 };
		char *end;
		long pid;

		de = readdir(d);
		if (!de)
			break;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || read_stat(&e, (pid_t)pid) != 0)
			continue;
		if (rs_array_grow((void **)buf, alloc, n + 1, sizeof(**buf), 256)) {
			closedir(d);
			return rs_error_set(RS_EGENERIC, "out of memory scanning /proc");
		}
		(*buf)[n++] = e;
	}
	closedir(d);
	all = *buf;
	/* Mark the tree: ppid == root, then their children, until nothing grows.
	   pid 0 marks "in the tree" (ppid set to root once found). */
	do {
		grew = 0;
		for (size_t i = 0; i < n; i++) {
			if (all[i].ppid == root || all[i].pid == root)
				continue;
			for (size_t j = 0; j < n; j++)
				if (all[j].pid == all[i].ppid && all[j].ppid == root &&
				    all[j].pid != root) {
					all[i].ppid = root;
					grew = 1;
					break;
				}
		}
	} while (grew);
	for (size_t i = 0; i < n; i++) {
		int known = 0;

		if (all[i].ppid != root || all[i].pid == root)
			continue;
		out->processes++;
		out->threads += (unsigned)all[i].threads;
		out->rss_bytes += (uint64_t)(all[i].rss_pages > 0 ? all[i].rss_pages : 0) *
				  (uint64_t)page;
		out->cpu_s += (double)all[i].ticks / (double)hz;
		for (size_t k = 0; k < *nseen && !known; k++)
			known = (*seen)[k] == all[i].pid;
		if (!known) {
			if (rs_array_grow((void **)seen, seen_alloc, *nseen + 1, sizeof(**seen), 64))
				return rs_error_set(RS_EGENERIC, "out of memory scanning /proc");
			(*seen)[(*nseen)++] = all[i].pid;
		}
	}
	return 0;
}

/* ---- I/O ------------------------------------------------------------- */

struct io_counts {
	uint64_t rchar, wchar, read_bytes, write_bytes;
};

static int read_self_io(struct io_counts *io)
{
	char b[1024];
	FILE *f = fopen("/proc/self/io", "re");
	size_t n;

	memset(io, 0, sizeof(*io));
	if (!f)
		return -1;
	n = fread(b, 1, sizeof(b) - 1, f);
	fclose(f);
	b[n] = '\0';
	for (char *line = b; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long long v;

		if (sscanf(line, "rchar: %llu", &v) == 1)
			io->rchar = v;
		else if (sscanf(line, "wchar: %llu", &v) == 1)
			io->wchar = v;
		else if (sscanf(line, "read_bytes: %llu", &v) == 1)
			io->read_bytes = v;
		else if (sscanf(line, "write_bytes: %llu", &v) == 1)
			io->write_bytes = v;
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}

static uint64_t diff_u64(uint64_t after, uint64_t before)
{
	return after > before ? after - before : 0;
}

/* ---- the timeline ---------------------------------------------------- */

/* Append a point, halving the resolution when the timeline is full. */
static int add_sample(struct rs_watch_report *rep, size_t *alloc,
		      const struct rs_watch_sample *s, double *next_keep)
{
	if (s->t_s + 1e-9 < *next_keep)
		return 0;
	if (rep->ntimeline == RS_WATCH_TIMELINE_MAX) {
		size_t k = 0;

		for (size_t i = 0; i < rep->ntimeline; i += 2)
			rep->timeline[k++] = rep->timeline[i];
		rep->ntimeline = k;
		rep->timeline_interval_s *= 2;
	}
	if (rs_array_grow((void **)&rep->timeline, alloc, rep->ntimeline + 1,
			  sizeof(*rep->timeline), 256))
		return rs_error_set(RS_EGENERIC, "out of memory keeping the timeline");
	rep->timeline[rep->ntimeline++] = *s;
	*next_keep = s->t_s + rep->timeline_interval_s;
	return 0;
}

/* ---- running --------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

struct watch_state {
	struct rs_watch_report *rep;
	int err_fd;                 /* read end of the command's stderr, or -1 */
	char line[4096];
	size_t used;
	pid_t main_pid;
	int main_done;
	double start, main_end;
	struct proc_entry *procs;
	size_t procs_alloc;
	pid_t *seen;
	size_t nseen, seen_alloc;
	size_t timeline_alloc;
	double next_keep;
	long page, hz;
};

/*
 * Read what is there on the command's stderr, pass it on, count warnings:
 * 1 when bytes were read, 0 when none were waiting or the pipe closed
 * (err_fd is then -1), < 0 on error. The pipe is non-blocking.
 */
static int drain_stderr(struct watch_state *w)
{
	char b[8192];
	ssize_t n = read(w->err_fd, b, sizeof(b));
	int err;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close(w->err_fd);
		w->err_fd = -1;
		return rs_watch_scan_stderr(w->rep, w->line, sizeof(w->line), &w->used, b, 0, 1);
	}
	/* Passed through as it came; a closed stderr of ours is not the command's
	   failure. */
	if (write(STDERR_FILENO, b, (size_t)n) < 0)
		errno = 0;
	err = rs_watch_scan_stderr(w->rep, w->line, sizeof(w->line), &w->used, b, (size_t)n, 0);
	return err ? err : 1;
}

/* Reap every ended child: the command's status when it is among them. */
static void reap(struct watch_state *w)
{
	for (;;) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p <= 0)
			return;
		if (p != w->main_pid)
			continue;
		w->main_done = 1;
		w->main_end = now_s();
		child_pid = 0;
		if (WIFEXITED(st)) {
			w->rep->exit_status = WEXITSTATUS(st);
		} else if (WIFSIGNALED(st)) {
			w->rep->signal = WTERMSIG(st);
			w->rep->exit_status = 128 + WTERMSIG(st);
		}
	}
}

/* One sample of the tree into the report. */
static int sample(struct watch_state *w)
{
	struct tree_scan t;
	struct rs_watch_sample s;
	struct rusage ru;
	int err = scan_tree(&t, getpid(), w->page, w->hz, &w->procs, &w->procs_alloc,
			    &w->seen, &w->nseen, &w->seen_alloc);

	if (err)
		return err;
	getrusage(RUSAGE_CHILDREN, &ru);
	s.t_s = now_s() - w->start;
	s.rss_bytes = t.rss_bytes;
	s.cpu_s = t.cpu_s + (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	s.processes = t.processes;
	s.threads = t.threads;
	if (t.rss_bytes > w->rep->peak_rss_bytes)
		w->rep->peak_rss_bytes = t.rss_bytes;
	if (t.threads > w->rep->peak_threads)
		w->rep->peak_threads = t.threads;
	w->rep->processes_seen = (unsigned)w->nseen;
	return add_sample(w->rep, &w->timeline_alloc, &s, &w->next_keep);
}

/* Whether any descendant is still alive (a child of ours, reaped or not). */
static int tree_alive(void)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return 0; /* ECHILD: none left */
	return 1;
}

static int start_child(struct watch_state *w, char *const argv[], int *exec_pipe)
{
	int errp[2] = { -1, -1 };
	pid_t pid;

	if (pipe2(errp, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
		if (errp[0] >= 0) {
			close(errp[0]);
			close(errp[1]);
		}
		return rs_error_errno(RS_EGENERIC, "cannot make a pipe for the command");
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(errp[0]);
		close(errp[1]);
		close(exec_pipe[0]);
		close(exec_pipe[1]);
		return rs_error_errno(RS_EGENERIC, "cannot start '%s'", argv[0]);
	}
	if (pid == 0) {
		int e;

		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		dup2(errp[1], STDERR_FILENO);
		execvp(argv[0], argv);
		e = errno;
		if (write(exec_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(errp[1]);
	close(exec_pipe[1]);
	fcntl(errp[0], F_SETFL, fcntl(errp[0], F_GETFL) | O_NONBLOCK);
	w->err_fd = errp[0];
	w->main_pid = pid;
	child_pid = pid;
	return 0;
}

/* Whether exec failed in the child: its errno came down the pipe. */
static int exec_failed(int fd, const char *cmd)
{
	int e = 0;
	ssize_t n;

	do
		n = read(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n == (ssize_t)sizeof(e)) {
		errno = e;
		return rs_error_errno(RS_ENOTFOUND, "cannot run '%s'", cmd);
	}
	return 0;
}

/* The loop: stderr, samples and reaping until the tree ended or lingered too long. */
static int watch_loop(struct watch_state *w, double interval, double linger)
{
	double next_sample = w->start;
	int err = 0;

	for (;;) {
		struct pollfd pfd = { w->err_fd, POLLIN, 0 };
		double t = now_s(), wait_s;
		int n;

		if (t >= next_sample) {
			err = sample(w);
			if (err)
				return err;
			next_sample = t + interval;
		}
		reap(w);
		if (w->main_done && !tree_alive()) {
			/* nothing left that can write: read what is left, to the end */
			while (w->err_fd >= 0) {
				n = drain_stderr(w);
				if (n < 0)
					return n;
				if (n == 0 && w->err_fd >= 0)
					break; /* a writer outside the tree: not waited for */
			}
			break;
		}
		if (w->main_done && now_s() - w->main_end > linger)
			break;
		wait_s = next_sample - now_s();
		if (wait_s < 0.001)
			wait_s = 0.001;
		if (w->err_fd >= 0) {
			n = poll(&pfd, 1, (int)(wait_s * 1000));
			if (n > 0)
				err = drain_stderr(w);
			if (err > 0)
				err = 0;
		} else {
			struct timespec ts = { (time_t)wait_s,
					       (long)((wait_s - (double)(time_t)wait_s) * 1e9) };
			nanosleep(&ts, NULL);
		}
		if (err)
			return err;
	}
	return 0;
}

/* What the tree left running past the linger: counted, not waited for. */
static void count_leftover(struct watch_state *w)
{
	struct tree_scan t;

	if (scan_tree(&t, getpid(), w->page, w->hz, &w->procs, &w->procs_alloc, &w->seen,
		      &w->nseen, &w->seen_alloc) == 0)
		w->rep->leftover = t.processes;
	else
		rs_error_clear();
}

static void finish_figures(struct watch_state *w, const struct io_counts *io0, int io_ok)
{
	struct rusage ru;
	struct io_counts io1;
	uint64_t maxrss;

	getrusage(RUSAGE_CHILDREN, &ru);
	w->rep->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	w->rep->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	/* ru_maxrss: the largest single reaped process, in KiB */
	maxrss = (uint64_t)ru.ru_maxrss * 1024u;
	if (maxrss > w->rep->peak_rss_bytes)
		w->rep->peak_rss_bytes = maxrss;
	w->rep->wall_s = (w->main_done ? w->main_end : now_s()) - w->start;
	if (io_ok && read_self_io(&io1) == 0) {
		w->rep->io_known = 1;
		w->rep->rchar = diff_u64(io1.rchar, io0->rchar);
		w->rep->wchar = diff_u64(io1.wchar, io0->wchar);
		w->rep->read_bytes = diff_u64(io1.read_bytes, io0->read_bytes);
		w->rep->write_bytes = diff_u64(io1.write_bytes, io0->write_bytes);
	}
	w->rep->processes_seen = (unsigned)w->nseen;
}

int rs_watch_run(struct rs_watch_report *rep, char *const argv[], const struct rs_watch_opts *opts)
{
	struct watch_state w;
	struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
	struct io_counts io0;
	int exec_pipe[2] = { -1, -1 }, io_ok, err;
	double interval = opts && opts->interval_ms ? opts->interval_ms / 1000.0 : 0.1;
	double linger = opts && opts->linger_s ? opts->linger_s : 10.0;

	if (!argv || !argv[0])
		return rs_error_set(RS_EUSAGE, "no command to run");
	memset(&w, 0, sizeof(w));
	w.rep = rep;
	w.err_fd = -1;
	w.page = sysconf(_SC_PAGESIZE);
	w.hz = sysconf(_SC_CLK_TCK);
	rep->timeline_interval_s = interval;
	/* orphaned grandchildren come to us: reaped, measured, waited for */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	io_ok = read_self_io(&io0) == 0;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = pass_on;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);

	w.start = now_s();
	err = start_child(&w, argv, exec_pipe);
	if (err)
		goto out;
	err = exec_failed(exec_pipe[0], argv[0]);
	if (err) {
		rep->exit_status = 127;
		/* reap the child that could not exec, and drop its stderr */
		waitpid(w.main_pid, NULL, 0);
		child_pid = 0;
		close(w.err_fd);
		w.err_fd = -1;
		goto out;
	}
	err = watch_loop(&w, interval, linger);
	if (err)
		goto out;
	if (w.main_done && tree_alive())
		count_leftover(&w);
	finish_figures(&w, &io0, io_ok);
out:
	if (w.err_fd >= 0)
		close(w.err_fd);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	free(w.procs);
	free(w.seen);
	return err;
}
