// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * annotate [gated]: every bpfprof.h macro, in two threads (main and one
 * worker named "annot-worker"), each running phase() twice (two rounds,
 * in step through a barrier), and each phase() call does:
 *   - 3 marks per thread: "begin", "middle", "end", in this order, with
 *     at least 5 ms between consecutive marks (nanosleep);
 *   - phase() gets BPFPROF_INFO("items", 42 + t) and BPFPROF_INFO_STR("who",
 *     "main"|"worker") while it runs (t = 0 main, 1 worker);
 *   - 4 BPFPROF_EVENT("queue", v) per thread with v = 10, 20, 30, 40 (+ t);
 *   - span "outer" around span "inner" around one call of work_in_span(),
 *     all inside phase();
 *   - with argument "gated": only the second round is inside
 *     BPFPROF_START()/BPFPROF_STOP() (process-wide, opened and closed by
 *     main), so a --gated recording holds exactly one phase() per thread.
 * Runs unchanged and correct untraced: prints "annotate: ok N" where N is
 * the work done.  Built with -I include (see tests/progs/flags.mk).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "bpfprof.h"
#include "progs.h"

volatile unsigned long sink;

static void nap_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

TRACED void work_in_span(int t)
{
	/* both threads add: atomically, or an update can be lost */
	__atomic_add_fetch(&sink, t + 1, __ATOMIC_RELAXED);
}

TRACED void phase(int t)
{
	int v;

	BPFPROF_MARK("begin");
	BPFPROF_INFO("items", 42 + t);
	BPFPROF_INFO_STR("who", t ? "worker" : "main");
	nap_ms(5);
	BPFPROF_MARK("middle");
	for (v = 10; v <= 40; v += 10)
		BPFPROF_EVENT("queue", v + t);
	BPFPROF_SPAN_BEGIN("outer");
	BPFPROF_SPAN_BEGIN("inner");
	work_in_span(t);
	BPFPROF_SPAN_END("inner");
	BPFPROF_SPAN_END("outer");
	nap_ms(5);
	BPFPROF_MARK("end");
}

static pthread_barrier_t bar;

static void *worker(void *arg)
{
	pthread_setname_np(pthread_self(), "annot-worker");
	pthread_barrier_wait(&bar);
	phase(1);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	phase(1);
	pthread_barrier_wait(&bar);
	return arg;
}

int main(int argc, char **argv)
{
	int gated = argc > 1 && !strcmp(argv[1], "gated"), round;
	pthread_t th;

	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&th, NULL, worker, NULL);
	for (round = 0; round < 2; round++) {
		/* with "gated", only the second round is inside a capture window */
		if (gated && round == 1)
			BPFPROF_START();
		pthread_barrier_wait(&bar);
		phase(0);
		pthread_barrier_wait(&bar);
		if (gated && round == 1)
			BPFPROF_STOP();
	}
	pthread_join(th, NULL);
	printf("annotate: ok %lu\n", sink);
	return 0;
}
