/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * hotgroups: a program of more than 256 traced functions (the overhead
 * governor then attaches them in groups of consecutive ones) whose hot
 * functions change from one phase to the next, the way a compiler's do.
 *
 * Usage: hotgroups [NROUNDS [NTINY]]     (defaults 40, 20000; NTINY a multiple of 16)
 *
 * Layout (the source's order, which GCC keeps in the file): 160 functions
 * cold_a00..cold_a159, never called; then a block of 33 around tiny():
 *   s00 w00 s01 w01 ... s07 w07  tiny  w08 s08 ... w15 s15
 * (16 functions before tiny, 16 after: any 16 consecutive functions that
 * hold tiny are of this block); then 160 more never called,
 * cold_b00..cold_b159; then phase1, phase2, main.
 *
 * Guaranteed facts (per run):
 *   - main calls phase1() NROUNDS times, then phase2() NROUNDS times, then
 *     returns 0; nothing else of the source calls phase1 or phase2.
 *   - phase1() calls each s and each w once (in the order above), then
 *     tiny() NTINY times.
 *   - phase2() calls each s once, then each w NTINY / 16 times (w00 first,
 *     all its calls, then w01...).  tiny() is not called in phase 2.
 *   - tiny, every s and every w are leaves of a few instructions; no
 *     cold_* function is ever called.
 *   - The last line printed is
 *       "hotgroups: phase1=N phase2=N tiny=T s=S w=W"
 *     with N = NROUNDS, T = NROUNDS * NTINY, S = 2 * NROUNDS calls of each
 *     s, W = NROUNDS + NROUNDS * NTINY / 16 calls of each w.
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

/* distinct bodies: no two folded into one by the compiler */
#define COLD(n) TRACED void cold_##n(void) { sink += __COUNTER__ + 1; }
#define COLD10(p) COLD(p##0) COLD(p##1) COLD(p##2) COLD(p##3) COLD(p##4) \
		  COLD(p##5) COLD(p##6) COLD(p##7) COLD(p##8) COLD(p##9)
#define COLD160(x) COLD10(x##0) COLD10(x##1) COLD10(x##2) COLD10(x##3) COLD10(x##4) \
		   COLD10(x##5) COLD10(x##6) COLD10(x##7) COLD10(x##8) COLD10(x##9) \
		   COLD10(x##10) COLD10(x##11) COLD10(x##12) COLD10(x##13) COLD10(x##14) \
		   COLD10(x##15)

COLD160(a)

#define LEAF(name, k) TRACED void name(void) { sink += k; }
LEAF(s00, 3) LEAF(w00, 5) LEAF(s01, 7) LEAF(w01, 11) LEAF(s02, 13) LEAF(w02, 17)
LEAF(s03, 19) LEAF(w03, 23) LEAF(s04, 29) LEAF(w04, 31) LEAF(s05, 37) LEAF(w05, 41)
LEAF(s06, 43) LEAF(w06, 47) LEAF(s07, 53) LEAF(w07, 59)
LEAF(tiny, 1)
LEAF(w08, 61) LEAF(s08, 67) LEAF(w09, 71) LEAF(s09, 73) LEAF(w10, 79) LEAF(s10, 83)
LEAF(w11, 89) LEAF(s11, 97) LEAF(w12, 101) LEAF(s12, 103) LEAF(w13, 107) LEAF(s13, 109)
LEAF(w14, 113) LEAF(s14, 127) LEAF(w15, 131) LEAF(s15, 137)

COLD160(b)

static void (*const ss[16])(void) = { s00, s01, s02, s03, s04, s05, s06, s07,
				      s08, s09, s10, s11, s12, s13, s14, s15 };
static void (*const ws[16])(void) = { w00, w01, w02, w03, w04, w05, w06, w07,
				      w08, w09, w10, w11, w12, w13, w14, w15 };
static long ntiny = 20000;

TRACED void phase1(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		ss[i]();
		ws[i]();
	}
	for (long k = 0; k < ntiny; k++)
		tiny();
}

TRACED void phase2(void)
{
	int i;

	for (i = 0; i < 16; i++)
		ss[i]();
	for (i = 0; i < 16; i++)
		for (long k = 0; k < ntiny / 16; k++)
			ws[i]();
}

int main(int argc, char **argv)
{
	long nrounds = 40, r;

	if (argc > 1)
		nrounds = atol(argv[1]);
	if (argc > 2)
		ntiny = atol(argv[2]);
	if (nrounds < 1 || ntiny < 16 || ntiny % 16) {
		fprintf(stderr, "usage: hotgroups [NROUNDS [NTINY]] (NTINY a multiple of 16)\n");
		return 2;
	}
	for (r = 0; r < nrounds; r++)
		phase1();
	for (r = 0; r < nrounds; r++)
		phase2();
	printf("hotgroups: phase1=%ld phase2=%ld tiny=%ld s=%ld w=%ld\n", nrounds, nrounds,
	       nrounds * ntiny, 2 * nrounds, nrounds + nrounds * ntiny / 16);
	return 0;
}
