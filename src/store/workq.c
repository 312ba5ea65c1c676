#include "store/workq.h"
#include "results/error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_FREE, SLOT_QUEUED, SLOT_RUNNING, SLOT_DONE };

struct slot {
	void *job;
	int state;
	int err;
	struct rs_error_saved saved; /* its failure: error slots are per thread */
};

struct rs_workq {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct slot *slots;
	int nslots;
	pthread_t *threads;
	int nthreads;
	unsigned long long next_submit, next_run, next_collect;
	int stopping;
	rs_workq_fn fn;
	void *ctx;
};

static void *worker(void *arg)
{
	struct rs_workq *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct slot *s;
		int err;

		while (!q->stopping && q->next_run == q->next_submit)
			pthread_cond_wait(&q->changed, &q->lock);
		if (q->stopping)
			break;
		s = &q->slots[q->next_run % (unsigned)q->nslots];
		q->next_run++;
		s->state = SLOT_RUNNING;
		pthread_mutex_unlock(&q->lock);

		rs_error_clear();
		err = q->fn(s->job, q->ctx);

		pthread_mutex_lock(&q->lock);
		s->err = err;
		if (err)
			rs_error_save(&s->saved, err);
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&q->changed);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int rs_workq_new(struct rs_workq **out, int threads, int slots, rs_workq_fn fn, void *ctx)
{
	struct rs_workq *q = calloc(1, sizeof(*q));
	int i;

	if (threads < 1)
		threads = 1;
	if (slots < threads)
		slots = threads;
	if (!q)
		return rs_error_set(RS_EGENERIC, "out of memory");
	q->slots = calloc((size_t)slots, sizeof(*q->slots));
	q->threads = calloc((size_t)threads, sizeof(*q->threads));
	if (!q->slots || !q->threads) {
		free(q->slots);
		free(q->threads);
		free(q);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	q->nslots = slots;
	q->fn = fn;
	q->ctx = ctx;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
	for (i = 0; i < threads; i++) {
		if (pthread_create(&q->threads[i], NULL, worker, q) != 0)
			break;
		q->nthreads++;
	}
	if (q->nthreads == 0) {
		rs_workq_free(q);
		return rs_error_set(RS_EGENERIC, "cannot start worker threads");
	}
	*out = q;
	return 0;
}

void rs_workq_submit(struct rs_workq *q, void *job)
{
	struct slot *s;

	pthread_mutex_lock(&q->lock);
	s = &q->slots[q->next_submit % (unsigned)q->nslots];
	/* The slot is free once the job that held it was collected. */
	while (q->next_submit - q->next_collect >= (unsigned)q->nslots)
		pthread_cond_wait(&q->changed, &q->lock);
	s->job = job;
	s->state = SLOT_QUEUED;
	s->err = 0;
	q->next_submit++;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

int rs_workq_collect(struct rs_workq *q, void **job_out)
{
	struct slot *s;
	int err;

	pthread_mutex_lock(&q->lock);
	if (q->next_collect == q->next_submit) {
		pthread_mutex_unlock(&q->lock);
		*job_out = NULL;
		return rs_error_set(RS_EUSAGE, "no job to collect");
	}
	s = &q->slots[q->next_collect % (unsigned)q->nslots];
	while (s->state != SLOT_DONE)
		pthread_cond_wait(&q->changed, &q->lock);
	*job_out = s->job;
	err = s->err;
	if (err)
		rs_error_restore(&s->saved);
	s->state = SLOT_FREE;
	q->next_collect++;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
	return err;
}

int rs_workq_pending(struct rs_workq *q)
{
	int n;

	pthread_mutex_lock(&q->lock);
	n = (int)(q->next_submit - q->next_collect);
	pthread_mutex_unlock(&q->lock);
	return n;
}

static int any_running(const struct rs_workq *q)
{
	int i;

	for (i = 0; i < q->nslots; i++)
		if (q->slots[i].state == SLOT_RUNNING)
			return 1;
	return 0;
}

void rs_workq_free(struct rs_workq *q)
{
	int i;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	/* Let queued and running jobs finish: the caller frees their memory next. */
	while (q->next_run != q->next_submit || any_running(q))
		pthread_cond_wait(&q->changed, &q->lock);
	q->stopping = 1;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
	for (i = 0; i < q->nthreads; i++)
		pthread_join(q->threads[i], NULL);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->changed);
	free(q->slots);
	free(q->threads);
	free(q);
}
