/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * migrate: threads that move to another CPU in the middle of traced calls.
 *
 * bpfprof collects call records per CPU and sends them in batches; a thread
 * that moves leaves records behind on the CPU it left.  This program makes
 * that happen on purpose, thousands of times, so the tests can check that
 * every thread's calls still nest exactly.
 *
 * Guaranteed facts:
 *   - main starts NTHREADS (3) threads running worker(i), i = 0..2, and
 *     joins them; main calls no other function of this source.
 *   - Each worker calls outer() exactly ROUNDS (400) times, directly.
 *   - Each outer() calls, directly and in this order, inner(), hop(),
 *     inner().  hop() pins the thread to the next CPU it may use (round
 *     robin over the CPUs of the process's affinity mask, sched_setaffinity),
 *     which moves the thread there before the call returns; it calls no
 *     traced function.
 *   - Each inner() calls leaf() exactly once, directly.
 *   - After joining, main prints, in this order:
 *         migrate: pid=PID cpus=N
 *         worker-0 tid=TID moves=M
 *         worker-1 tid=TID moves=M
 *         worker-2 tid=TID moves=M
 *     N: CPUs in the affinity mask; M: how many of the worker's outer()
 *     calls ran their second inner() on another CPU than the first
 *     (sched_getcpu): at least ROUNDS - 1 when N >= 2 (from the second
 *     round on, the thread always sits pinned on another CPU than the one
 *     it is sent to).  Exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "progs.h"

#define NTHREADS 3
#define ROUNDS 400

volatile unsigned long sink;

static cpu_set_t allowed;
static int ncpus;

struct worker_info {
	int idx;
	pid_t tid;
	int moves;
	int next;	/* index into the allowed CPUs */
};

TRACED void leaf(void)
{
	sink++;
}

TRACED void inner(void)
{
	leaf();
	sink++;
}

TRACED void hop(struct worker_info *w)
{
	cpu_set_t one;
	int i, k = -1;

	w->next = (w->next + 1) % ncpus;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed) && ++k == w->next)
			break;
	CPU_ZERO(&one);
	CPU_SET(i, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		perror("migrate: sched_setaffinity");
		exit(1);
	}
}

TRACED void outer(struct worker_info *w)
{
	int before;

	inner();
	before = sched_getcpu();
	hop(w);
	inner();
	if (sched_getcpu() != before)
		w->moves++;
	sink++;
}

TRACED void *worker(void *arg)
{
	struct worker_info *w = arg;
	int i;

	w->tid = syscall(SYS_gettid);
	w->next = w->idx % ncpus;
	for (i = 0; i < ROUNDS; i++)
		outer(w);
	return NULL;
}

int main(void)
{
	struct worker_info w[NTHREADS] = { { 0 } };
	pthread_t th[NTHREADS];
	int i;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("migrate: sched_getaffinity");
		return 1;
	}
	ncpus = CPU_COUNT(&allowed);
	for (i = 0; i < NTHREADS; i++) {
		w[i].idx = i;
		if (pthread_create(&th[i], NULL, worker, &w[i])) {
			fprintf(stderr, "migrate: cannot create a thread\n");
			return 1;
		}
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	printf("migrate: pid=%d cpus=%d\n", (int)getpid(), ncpus);
	for (i = 0; i < NTHREADS; i++)
		printf("worker-%d tid=%d moves=%d\n", i, (int)w[i].tid, w[i].moves);
	return 0;
}
