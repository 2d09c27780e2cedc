/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * threads: four worker threads with known names and call counts.
 *
 * Guaranteed facts:
 *   - main starts 4 threads running worker(i), i = 0..3, then joins them.
 *     worker is called exactly 4 times, once per thread, as the thread's
 *     start routine (depth 0 in that thread).
 *   - Each worker first names itself "worker-i" (pthread_setname_np, so
 *     /proc/PID/task/TID/comm is "worker-i"), then waits on a barrier shared
 *     by the 4 workers, then calls tick() exactly 100 * (i + 1) times:
 *     100, 200, 300, 400 (1000 in all), each from worker directly.  No tick
 *     runs before every worker is named.
 *   - The main thread calls tick 0 times and calls no other function of the
 *     source but main.
 *   - After joining, main prints to stdout, in this order:
 *         threads: pid=PID
 *         worker-0 tid=TID ticks=100
 *         worker-1 tid=TID ticks=200
 *         worker-2 tid=TID ticks=300
 *         worker-3 tid=TID ticks=400
 *     where PID is getpid() and TID each worker's gettid() (kernel tid, as in
 *     the trace's "tid").  Exits 0.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "progs.h"

#define NWORKERS 4

volatile unsigned long sink;

static pthread_barrier_t start_barrier;

struct worker_info {
	int idx;
	pid_t tid;
	int ticks;
};

TRACED void tick(struct worker_info *w)
{
	w->ticks++;
	sink++;
}

TRACED void *worker(void *arg)
{
	struct worker_info *w = arg;
	char name[16];
	int i, n = 100 * (w->idx + 1);

	w->tid = (pid_t)syscall(SYS_gettid);
	snprintf(name, sizeof(name), "worker-%d", w->idx);
	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&start_barrier);
	for (i = 0; i < n; i++)
		tick(w);
	return NULL;
}

int main(void)
{
	struct worker_info w[NWORKERS];
	pthread_t th[NWORKERS];
	int i, err;

	pthread_barrier_init(&start_barrier, NULL, NWORKERS);
	for (i = 0; i < NWORKERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].idx = i;
		err = pthread_create(&th[i], NULL, worker, &w[i]);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < NWORKERS; i++)
		pthread_join(th[i], NULL);
	printf("threads: pid=%d\n", (int)getpid());
	for (i = 0; i < NWORKERS; i++)
		printf("worker-%d tid=%d ticks=%d\n", i, (int)w[i].tid, w[i].ticks);
	return 0;
}
