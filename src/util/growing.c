#include "util/growing.h"
#include "results/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rs_growing {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	char *path;
	uint64_t avail;
	uint64_t wanted;
	int sealed;
	int cancelled;
};

int rs_growing_new(struct rs_growing **out, const char *path)
{
	struct rs_growing *g = calloc(1, sizeof(*g));

	*out = NULL;
	if (g)
		g->path = strdup(path);
	if (!g || !g->path) {
		free(g);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->changed, NULL);
	*out = g;
	return 0;
}

void rs_growing_free(struct rs_growing *g)
{
	if (!g)
		return;
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->changed);
	free(g->path);
	free(g);
}

const char *rs_growing_path(const struct rs_growing *g)
{
	return g->path;
}

static void update(struct rs_growing *g, uint64_t size, int sealed, int cancelled)
{
	pthread_mutex_lock(&g->lock);
	if (size > g->avail)
		g->avail = size;
	g->sealed |= sealed;
	g->cancelled |= cancelled;
	pthread_cond_broadcast(&g->changed);
	pthread_mutex_unlock(&g->lock);
}

void rs_growing_publish(struct rs_growing *g, uint64_t size)
{
	update(g, size, 0, 0);
}

void rs_growing_seal(struct rs_growing *g, uint64_t size)
{
	update(g, size, 1, 0);
}

void rs_growing_cancel(struct rs_growing *g)
{
	update(g, 0, 0, 1);
}

int rs_growing_wait(struct rs_growing *g, uint64_t want, uint64_t *avail,
		    int *sealed)
{
	int cancelled;

	pthread_mutex_lock(&g->lock);
	if (want > g->wanted && want != UINT64_MAX) /* "to the end" says nothing */
		g->wanted = want;
	while (!g->cancelled && !g->sealed && g->avail < want)
		pthread_cond_wait(&g->changed, &g->lock);
	*avail = g->avail;
	*sealed = g->sealed;
	cancelled = g->cancelled;
	pthread_mutex_unlock(&g->lock);
	if (cancelled)
		return rs_error_set(RS_EGENERIC, "the upload of '%s' was cancelled", g->path);
	return 0;
}

uint64_t rs_growing_wanted(struct rs_growing *g)
{
	uint64_t w;

	pthread_mutex_lock(&g->lock);
	w = g->wanted;
	pthread_mutex_unlock(&g->lock);
	return w;
}
