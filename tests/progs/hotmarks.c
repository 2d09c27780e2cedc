// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hotmarks [N [EVERY]]: a program whose time goes to its annotations.
 * main calls loop() once; loop() fires BPFPROF_EVENT("tick", i) N times
 * (default 200000, i = 0..N-1) and calls coarse() once after every EVERY
 * events (default 10000): N / EVERY calls.  coarse() spins a fixed loop of
 * 200,000 iterations and calls nothing.  No other function of the source
 * is called.  Single thread.  Prints "hotmarks: events=N coarse=C" last.
 * Built with -I include (tests/progs/flags.mk).
 */
#include <stdio.h>
#include <stdlib.h>
#include "bpfprof.h"
#include "progs.h"

volatile unsigned long sink;

TRACED void coarse(void)
{
	for (int i = 0; i < 200000; i++)
		sink += i;
}

TRACED long loop(long n, long every)
{
	long c = 0;

	for (long i = 0; i < n; i++) {
		BPFPROF_EVENT("tick", i);
		if ((i + 1) % every == 0) {
			coarse();
			c++;
		}
	}
	return c;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000;
	long every = argc > 2 ? atol(argv[2]) : 10000;
	long c;

	if (n < 0 || every < 1) {
		fprintf(stderr, "usage: hotmarks [N [EVERY]]\n");
		return 2;
	}
	c = loop(n, every);
	printf("hotmarks: events=%ld coarse=%ld\n", n, c);
	return 0;
}
