/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * spin: the per-call overhead benchmark target (bench/overhead.sh).
 *
 * Usage: spin [N [FUNC]]   N = 1000000 by default, FUNC = small | small_push
 *
 * Guaranteed facts:
 *   - main calls FUNC(i) exactly N times in a loop, i = 0..N-1, and calls no
 *     other function of the source (rare() is never called: i >= 0).
 *   - small is a leaf that adds i to a volatile global.  At -O1 it has no
 *     prologue: its first instruction is a RIP-relative mov, which the kernel
 *     cannot emulate and single-steps out of line, the slow uprobe path.
 *   - small_push does the same work but begins with `push %rbp` (frame
 *     pointer, non-leaf, built with -fno-shrink-wrap, see flags.mk): the
 *     kernel emulates that instruction, the fast uprobe path most compiled
 *     functions get.  The two show the range of per-call probe cost.
 *   - Prints one line to stdout:
 *         spin: n=N func=FUNC total_ns=T ns_per_call=X.XX
 *     timing only the loop (CLOCK_MONOTONIC).  Exits 0 (2 on bad arguments).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void small(int i)
{
	sink += (unsigned long)i;
}

TRACED void rare(int i)
{
	sink -= (unsigned long)i;
}

TRACED void small_push(int i)
{
	sink += (unsigned long)i;
	/* never true; the possible call makes this a non-leaf with a frame */
	if (__builtin_expect(i < 0, 0))
		rare(i);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void (*fn)(int) = small;
	const char *fname = "small";
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
	if (argc > 2) {
		fname = argv[2];
		if (!strcmp(fname, "small_push")) {
			fn = small_push;
		} else if (strcmp(fname, "small")) {
			fprintf(stderr, "spin: unknown function '%s' (small, small_push)\n", fname);
			return 2;
		}
	}
	t0 = now_ns();
	for (i = 0; i < n; i++)
		fn((int)i);
	t1 = now_ns();
	printf("spin: n=%ld func=%s total_ns=%lld ns_per_call=%.2f\n", n, fname, t1 - t0,
	       (double)(t1 - t0) / (double)n);
	return 0;
}
