/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * slowsteady: the target of the diff tests (tests/e2e/test_diff.py).
 *
 * Usage: slowsteady N [CALLS [rt]]    N >= 1 (ms), CALLS = 100 by default
 *
 * Guaranteed facts:
 *   - main calls slow(N) then steady(), in that order, exactly CALLS times
 *     each, and calls no other function of this file.
 *   - slow(n) busy-waits until n ms of CLOCK_MONOTONIC have passed since it
 *     began; steady() until 200 us have.  Busy-waiting on the clock (not
 *     sleeping) keeps both on the CPU, so a call lasts its time plus the
 *     probe's cost and whatever preemption adds: a call is never shorter.
 *   - With "rt" (and the privilege), the calls run under SCHED_FIFO priority
 *     1, so no ordinary task preempts them and a call lasts its time plus
 *     the probe's cost even on a loaded machine (about 0.25 s of one CPU
 *     per 100 calls of slow(2)); without the privilege it says so on stderr
 *     and runs as an ordinary task.  The policy is dropped before exiting.
 *   - Exits 0 (2 on bad arguments); prints nothing else.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_for(long long ns)
{
	long long end = now_ns() + ns;

	while (now_ns() < end)
		sink++;
}

TRACED void slow(int n)
{
	spin_for(n * 1000000LL);
}

TRACED void steady(void)
{
	spin_for(200000LL);
}

int main(int argc, char **argv)
{
	long n, calls = 100, i;
	char *end;

	struct sched_param rt = { .sched_priority = 1 }, normal = { 0 };
	int use_rt = 0;

	if (argc < 2 || argc > 4 || (argc == 4 && strcmp(argv[3], "rt"))) {
		fprintf(stderr, "usage: slowsteady N [CALLS [rt]]\n");
		return 2;
	}
	n = strtol(argv[1], &end, 10);
	if (*end || n < 1 || n > 1000) {
		fprintf(stderr, "slowsteady: bad N '%s'\n", argv[1]);
		return 2;
	}
	if (argc > 2) {
		calls = strtol(argv[2], &end, 10);
		if (*end || calls < 1) {
			fprintf(stderr, "slowsteady: bad CALLS '%s'\n", argv[2]);
			return 2;
		}
	}
	if (argc == 4) {
		use_rt = !sched_setscheduler(0, SCHED_FIFO, &rt);
		if (!use_rt)
			fprintf(stderr, "slowsteady: no SCHED_FIFO (%s): ordinary scheduling\n",
				strerror(errno));
	}
	for (i = 0; i < calls; i++) {
		slow((int)n);
		steady();
	}
	if (use_rt)
		sched_setscheduler(0, SCHED_OTHER, &normal);
	return 0;
}
