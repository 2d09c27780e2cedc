// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nofp [ROUNDS]: built with -O2 -fomit-frame-pointer (tests/progs/flags.mk),
 * like most distribution binaries, so a frame-pointer walk cannot find the
 * callers; only DWARF (.eh_frame) unwinding can.  A deterministic workload
 * (no clock, no randomness: the same work every run) of ROUNDS rounds
 * (default 40), each:
 *
 *   main -> nofp_outer -> nofp_middle -> nofp_inner            spins (own code)
 *   main -> nofp_sort -> qsort (libc) ... -> nofp_by_key       libc calls back
 *   main -> nofp_copy -> memcpy (libc)                         time inside libc
 *
 * then one 100 ms sleep in libc's nanosleep called from nofp_nap (off-cpu),
 * and prints how long the rounds took (bench/unwind.sh reads it).
 * Guarantees: these call chains and no other of the program's functions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

#define NKEYS	(1 << 16)
#define COPY	(8 << 20)

static unsigned keys[NKEYS];
static char src[COPY], dst[COPY];

TRACED void nofp_inner(long n)
{
	for (long i = 0; i < n; i++)
		sink += i;
}

TRACED void nofp_middle(long n)
{
	nofp_inner(n);
	sink++;
}

TRACED void nofp_outer(long n)
{
	nofp_middle(n);
	sink++;
}

TRACED int nofp_by_key(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

TRACED void nofp_sort(unsigned seed)
{
	/* the same pseudo-random keys every run */
	for (int i = 0; i < NKEYS; i++) {
		seed = seed * 1103515245u + 12345u;
		keys[i] = seed >> 8;
	}
	qsort(keys, NKEYS, sizeof(keys[0]), nofp_by_key);
	sink += keys[0];
}

TRACED void nofp_copy(int times)
{
	for (int i = 0; i < times; i++) {
		memcpy(dst, src, COPY);
		src[i & (COPY - 1)] ^= dst[COPY - 1 - i];
	}
	sink += dst[1];
}

TRACED void nofp_nap(void)
{
	struct timespec ts = { 0, 100000000 };

	nanosleep(&ts, NULL);
	sink++;
}

/* inlined: main calls no function of the program but the ones above */
static inline __attribute__((always_inline)) double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	double t0 = wall_ms();

	for (int r = 0; r < rounds; r++) {
		nofp_outer(3000000);
		nofp_sort(r);
		nofp_copy(4);
	}
	t0 = wall_ms() - t0;
	nofp_nap();
	printf("nofp: done, rounds took %.3f ms\n", t0);
	return 0;
}
