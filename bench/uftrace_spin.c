// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uftrace_spin [N]: calls tiny() N times (default 1000000) and prints
 *     uftrace_spin: n=N ns_per_call=X.XX
 * timing only the loop (CLOCK_MONOTONIC).  The Makefile builds it twice:
 * with -pg for uftrace (tiny() calls mcount after its prologue) and without
 * (the untraced baseline, and the same function for bpfprof, the floor and
 * bpftrace: it starts with push %rbp, the kernel's emulated path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void rare(unsigned long i)
{
	sink -= i;
}

/* Never calls rare(), but could: a non-leaf, so it gets a frame (push %rbp). */
__attribute__((noinline)) void tiny(unsigned long i)
{
	sink += i;
	if (__builtin_expect((long)i < 0, 0))
		rare(i);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	struct timespec a, b;
	double ns;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		tiny(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("uftrace_spin: n=%ld ns_per_call=%.2f\n", n, ns / (double)(n > 0 ? n : 1));
	return 0;
}
