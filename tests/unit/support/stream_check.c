#include "stream_check.h"

#include "store/store.h"
#include "results/error.h"
#include "util/growing.h"
#include "util/hash.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int stream_check_store(struct rs_remote *r, const char *dir, size_t n, unsigned int seed)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	struct rs_id oid;
	char src[1024], dst[1024];
	unsigned char *data = malloc(n), *back = malloc(n);
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i, got = 0;
	FILE *f;
	int ok = 0;

	snprintf(src, sizeof(src), "%s/object", dir);
	snprintf(dst, sizeof(dst), "%s/object.back", dir);
	if (!data || !back)
		goto out;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (unsigned char)(x >> 24);
	}
	f = fopen(src, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		perror(src);
		goto out;
	}
	rs_sha256(&oid, data, n);
	if (rs_store_open(&s, r, &o) || rs_store_put_file(s, &oid, n, src, NULL, NULL, NULL) ||
	    rs_store_get_file(s, &oid, n, dst, NULL, NULL)) {
		fprintf(stderr, "stream_check_store: %s\n", rs_error_message());
		goto out;
	}
	f = fopen(dst, "rb");
	if (f) {
		got = fread(back, 1, n, f);
		fclose(f);
	}
	ok = got == n && !memcmp(back, data, n);
	if (!ok)
		fprintf(stderr, "stream_check_store: the copy differs\n");
out:
	rs_store_free(s);
	unlink(src);
	unlink(dst);
	free(data);
	free(back);
	return ok ? 0 : -1;
}
