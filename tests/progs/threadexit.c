/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * threadexit: a thread that ends with pthread_exit inside traced calls.
 *
 * Guaranteed facts, one run, two threads:
 *   - main starts one thread running worker(); worker calls level1() once,
 *     level1 calls level2() once, and level2 calls pthread_exit(NULL).  So
 *     none of worker, level1, level2 returns: glibc's pthread_exit unwinds the
 *     thread's stack with a forced unwind (_Unwind_ForcedUnwind) through
 *     these frames, then the thread exits.  On the worker's tid: worker 1,
 *     level1 1, level2 1, level2 inside level1 inside worker.
 *   - main joins the thread, then calls after_join() once, which returns
 *     normally; main returns normally.  On main's tid: main 1, after_join 1.
 *   - No other function of the source is called.
 *   - Prints "threadexit: pid=PID worker_tid=TID" (getpid(), the worker's
 *     gettid(): the kernel tids the trace uses) to stdout; exits 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "progs.h"

volatile unsigned long sink;

static volatile pid_t worker_tid;

TRACED void level2(void)
{
	sink++;
	pthread_exit(NULL);
}

TRACED void level1(void)
{
	sink++;
	level2();
	sink++;		/* never reached */
}

TRACED void *worker(void *arg)
{
	(void)arg;
	worker_tid = (pid_t)syscall(SYS_gettid);
	level1();
	return NULL;	/* never reached */
}

TRACED void after_join(void)
{
	sink++;
}

int main(void)
{
	pthread_t th;
	int err;

	err = pthread_create(&th, NULL, worker, NULL);
	if (err) {
		fprintf(stderr, "threadexit: pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(th, NULL);
	after_join();
	printf("threadexit: pid=%d worker_tid=%d\n", (int)getpid(), (int)worker_tid);
	return 0;
}
