// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A deadline on some work (watchdog.h): one thread per armed watchdog. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include "log.h"
#include "watchdog.h"

struct watchdog {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct timespec deadline;	/* CLOCK_MONOTONIC */
	void (*fn)(void *ctx);
	void *ctx;
	bool ended;	/* watchdog__end came first */
	bool fired;	/* the deadline came first */
};

static void *run(void *arg)
{
	struct watchdog *w = arg;
	int r = 0;

	pthread_mutex_lock(&w->lock);
	while (!w->ended && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&w->cond, &w->lock, &w->deadline);
	/* decided under the lock: the work's end and the deadline never both act */
	w->fired = !w->ended;
	pthread_mutex_unlock(&w->lock);
	if (w->fired)
		w->fn(w->ctx);
	return NULL;
}

struct watchdog *watchdog__start(unsigned int ms, void (*fn)(void *ctx), void *ctx)
{
	struct watchdog *w = xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;

	w->fn = fn;
	w->ctx = ctx;
	clock_gettime(CLOCK_MONOTONIC, &w->deadline);
	w->deadline.tv_sec += ms / 1000;
	w->deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (w->deadline.tv_nsec >= 1000000000) {
		w->deadline.tv_sec++;
		w->deadline.tv_nsec -= 1000000000;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, run, w)) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

bool watchdog__end(struct watchdog *w)
{
	bool fired;

	if (!w)
		return false;
	pthread_mutex_lock(&w->lock);
	w->ended = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);	/* fn, if it fired, has returned */
	fired = w->fired;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
	return fired;
}
