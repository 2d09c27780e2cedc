/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * recurse: plain non-tail recursion.
 *
 * Guaranteed facts (D = 50, or argv[1] when given, 1 <= D <= 100000):
 *   - main calls down(D-1) once; down(n) calls down(n-1) while n > 0.
 *   - down is called exactly D times: down(D-1), down(D-2), ..., down(0),
 *     each nested in the previous one, so D frames of down are live at once
 *     (the innermost has D-1 frames of down above it).
 *   - The recursive call is not a tail call: down does work after it.
 *   - No other function of the source is called.  Single thread.
 *   - Prints "recurse: depth=D sum=S" to stdout; exits 0 (2 on a bad argument).
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

TRACED long down(int n)
{
	long r = 0;

	sink++;
	if (n > 0)
		r = down(n - 1);
	/* work after the call: keeps it from becoming a tail call */
	r += n;
	sink += (unsigned long)r;
	return r;
}

int main(int argc, char **argv)
{
	long depth = 50;

	if (argc > 1) {
		char *end;

		depth = strtol(argv[1], &end, 10);
		if (*end || depth < 1 || depth > 100000) {
			fprintf(stderr, "recurse: bad depth '%s'\n", argv[1]);
			return 2;
		}
	}
	printf("recurse: depth=%ld sum=%ld\n", depth, down((int)depth - 1));
	return 0;
}
