/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * inflight: a long call open while the overhead governor re-links its group.
 *
 * Usage: inflight [N]      (default 3000000)
 *
 * Layout (the source's order, which GCC keeps in the file: flags.mk): 300
 * functions cold000..cold299, never called; then tiny, outer, main.  More
 * than 256 traced functions, so the governor attaches them in groups of 16
 * consecutive ones: tiny, outer and main (functions 300-302) are in one.
 *
 * Guaranteed facts (per run):
 *   - main calls outer(N) once and returns 0; outer calls tiny() exactly N
 *     times and nothing else; tiny is a leaf of a few instructions.  No
 *     cold function is ever called.
 *   - The last line printed is "inflight: outer=1 tiny=N".
 * So with --max-overhead, tiny is dropped and its group (outer's and
 * main's) re-linked while outer and main are open: both must still end
 * with their returns, not be left unfinished.
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

#define COLD(n) TRACED void cold##n(void) { sink += __COUNTER__ + 1; }
#define COLD10(p) COLD(p##0) COLD(p##1) COLD(p##2) COLD(p##3) COLD(p##4) \
		  COLD(p##5) COLD(p##6) COLD(p##7) COLD(p##8) COLD(p##9)
#define COLD100(p) COLD10(p##0) COLD10(p##1) COLD10(p##2) COLD10(p##3) COLD10(p##4) \
		   COLD10(p##5) COLD10(p##6) COLD10(p##7) COLD10(p##8) COLD10(p##9)
COLD100(0) COLD100(1) COLD100(2)

TRACED void tiny(void)
{
	sink++;
}

TRACED void outer(long n)
{
	for (long k = 0; k < n; k++)
		tiny();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000;

	if (n < 0)
		n = 0;
	outer(n);
	printf("inflight: outer=1 tiny=%ld\n", n);
	return 0;
}
