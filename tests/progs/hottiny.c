/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hottiny: a tiny function called millions of times inside a coarse one,
 * the case the overhead governor (--max-overhead) is for.
 *
 * Usage: hottiny [NCOARSE [NTINY [NTHREADS [WARM_EVERY]]]]
 *        (defaults 40, 250000, 1, 0)
 *
 * Guaranteed facts (per run):
 *   - Each of NTHREADS threads (the main thread when 1, else that many
 *     pthreads, the main thread only waiting) calls coarse() NCOARSE times;
 *     each coarse() call calls tiny() exactly NTINY times and nothing else
 *     of the source.  tiny() is a leaf of a few instructions; it is called
 *     by coarse() only.  main calls run() once per thread (the thread's
 *     function), run calls coarse; nothing else of the source is called.
 *   - With WARM_EVERY > 0, coarse() also calls warm() once after every
 *     WARM_EVERY calls of tiny() (NTINY / WARM_EVERY times per coarse()
 *     call); warm() calls cool() once and does nothing else; cool() is a
 *     leaf as small as tiny().  The last line then ends with " warm=W", W
 *     the total (cool's too).  Without it, neither is ever called.
 *   - The program counts its own calls and prints, last, one line:
 *       "hottiny: coarse=C tiny=T elapsed_ns=E cpu_ns=U"
 *     C and T are the totals over all threads (NTHREADS * NCOARSE and
 *     NTHREADS * NCOARSE * NTINY); E is the monotonic time from just before
 *     the first call of run() to the end of the last, U the process's CPU
 *     time (all threads, the kernel's time in its probes included) over the
 *     same span (start-up excluded): for the bench, never for a test.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

static long ncoarse = 40, ntiny = 250000;
static long warm_every;
static unsigned long coarse_calls, tiny_calls, warm_calls;	/* atomic adds: several threads */

TRACED void tiny(void)
{
	sink++;
}

TRACED void cool(void)
{
	sink += 2;
}

TRACED void warm(void)
{
	cool();
}

TRACED void coarse(void)
{
	long i, nwarm = 0;

	for (i = 0; i < ntiny; i++) {
		tiny();
		if (warm_every && (i + 1) % warm_every == 0) {
			warm();
			nwarm++;
		}
	}
	__atomic_fetch_add(&warm_calls, (unsigned long)nwarm, __ATOMIC_RELAXED);
	__atomic_fetch_add(&tiny_calls, (unsigned long)ntiny, __ATOMIC_RELAXED);
	__atomic_fetch_add(&coarse_calls, 1, __ATOMIC_RELAXED);
}

TRACED void *run(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < ncoarse; i++)
		coarse();
	return NULL;
}

static unsigned long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long nthreads = 1, i;
	unsigned long long t0, c0;
	pthread_t th[64];

	if (argc > 1)
		ncoarse = atol(argv[1]);
	if (argc > 2)
		ntiny = atol(argv[2]);
	if (argc > 3)
		nthreads = atol(argv[3]);
	if (argc > 4)
		warm_every = atol(argv[4]);
	if (nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "hottiny: 1 to 64 threads\n");
		return 2;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	if (nthreads == 1) {
		run(NULL);
	} else {
		for (i = 0; i < nthreads; i++)
			if (pthread_create(&th[i], NULL, run, NULL)) {
				fprintf(stderr, "hottiny: cannot create a thread\n");
				return 1;
			}
		for (i = 0; i < nthreads; i++)
			pthread_join(th[i], NULL);
	}
	printf("hottiny: coarse=%lu tiny=%lu elapsed_ns=%llu cpu_ns=%llu", coarse_calls, tiny_calls,
	       now_ns(CLOCK_MONOTONIC) - t0, now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0);
	if (warm_every > 0)
		printf(" warm=%lu", warm_calls);
	printf("\n");
	return 0;
}
