/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * spin: the per-call overhead benchmark target (bench/overhead.sh).
 *
 * Guaranteed facts (N = 1000000, or argv[1] when given, N >= 1):
 *   - main calls small(i) exactly N times in a loop, i = 0..N-1, and calls
 *     no other function of the source.  small is a leaf doing almost nothing,
 *     so traced time per call is nearly all probe overhead.
 *   - Prints one line to stdout:
 *         spin: n=N total_ns=T ns_per_call=X.XX
 *     timing only the loop (CLOCK_MONOTONIC).  Exits 0 (2 on a bad argument).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void small(int i)
{
	sink += (unsigned long)i;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = 1000000, i;
	long long t0, t1;

	if (argc > 1) {
		char *end;

		n = strtol(argv[1], &end, 10);
		if (*end || n < 1) {
			fprintf(stderr, "spin: bad count '%s'\n", argv[1]);
			return 2;
		}
	}
	t0 = now_ns();
	for (i = 0; i < n; i++)
		small((int)i);
	t1 = now_ns();
	printf("spin: n=%ld total_ns=%lld ns_per_call=%.2f\n", n, t1 - t0,
	       (double)(t1 - t0) / (double)n);
	return 0;
}
