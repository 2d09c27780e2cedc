// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rounds: many short calls, then a wait (for killing the recorder while
 * the program is still running).
 *
 * Usage: rounds ROUNDS LEAVES
 *
 * Guaranteed facts, one thread: main calls round_of(r) for r = 0..ROUNDS-1;
 * round_of(r) calls leaf(r, i) for i = 0..LEAVES-1 and returns; leaf calls
 * nothing traced.  Then main prints "rounds: ready" (flushed), reads one
 * line from stdin, prints "rounds: done sum=S" and returns 0.  So every
 * round_of has exactly LEAVES leaf children, and every call but main's
 * has returned before "ready".
 */
#include <stdio.h>
#include <stdlib.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void leaf(int r, int i)
{
	sink += (unsigned long)(r ^ i);
}

TRACED void round_of(int r, int leaves)
{
	for (int i = 0; i < leaves; i++)
		leaf(r, i);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10, leaves = argc > 2 ? atoi(argv[2]) : 10;
	char line[64];

	for (int r = 0; r < rounds; r++)
		round_of(r, leaves);
	printf("rounds: ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	printf("rounds: done sum=%lu\n", sink);
	return 0;
}
