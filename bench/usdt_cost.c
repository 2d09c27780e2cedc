// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * usdt_cost [N]: the cost of one bpfprof.h annotation: N BPFPROF_EVENT()s
 * in a loop, then N empty loop iterations, prints ns per annotation.  Run
 * it alone (the probe is a nop) and under `bpfprof record -F none_*`... or
 * any record (the probes are attached automatically) to see both costs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "bpfprof.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	volatile long sink = 0;
	double t0, t1, t2;

	t0 = now();
	for (i = 0; i < n; i++) {
		BPFPROF_EVENT("tick", i);
		sink += i;
	}
	t1 = now();
	for (i = 0; i < n; i++)
		sink += i;
	t2 = now();
	printf("usdt_cost: %.2f ns per BPFPROF_EVENT (loop alone %.2f ns)\n",
	       ((t1 - t0) - (t2 - t1)) / n, (t2 - t1) / n);
	return 0;
}
