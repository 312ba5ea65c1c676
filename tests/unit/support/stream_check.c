#include "stream_check.h"

#include "util/growing.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

struct upload {
	struct rs_remote *r;
	const char *key;
	struct rs_growing *g;
	int err;
};

static void *upload_main(void *arg)
{
	struct upload *u = arg;

	u->err = u->r->put_stream(u->r, u->key, u->g);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int stream_check_put(struct rs_remote *r, const char *key, const char *path,
		     const unsigned char *data, size_t n, struct stream_check *c)
{
	struct upload u = { r, key, NULL, -1 };
	pthread_t th;
	size_t done = 0;
	int fd, waited;

	c->overlapped = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || rs_growing_new(&u.g, path) != 0) {
		perror(path);
		return -1;
	}
	if (pthread_create(&th, NULL, upload_main, &u) != 0) {
		rs_growing_free(u.g);
		close(fd);
		return -1;
	}
	while (done < n) {
		size_t piece = n - done < (256u << 10) ? n - done : (256u << 10);

		if (c->want_beyond && done < c->pause_at && done + piece > c->pause_at)
			piece = c->pause_at - done;
		if (write(fd, data + done, piece) != (ssize_t)piece) {
			perror(path);
			rs_growing_cancel(u.g);
			break;
		}
		done += piece;
		rs_growing_publish(u.g, done);
		if (c->want_beyond && done == c->pause_at) {
			for (waited = 0; waited < 3000; waited++) {
				if (rs_growing_wanted(u.g) > c->want_beyond) {
					c->overlapped = 1;
					break;
				}
				sleep_ms(10);
			}
			if (c->cancel)
				break; /* give up halfway, as the store does on an error */
		}
	}
	close(fd);
	if (c->cancel)
		rs_growing_cancel(u.g);
	else
		rs_growing_seal(u.g, done);
	pthread_join(th, NULL);
	rs_growing_free(u.g);
	return u.err;
}
