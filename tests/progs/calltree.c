/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * calltree: a small, fixed call tree (also the bundled demo, `make demo`).
 *
 * Guaranteed facts, one run, one thread (the e2e tests check them exactly):
 *
 *   main                    1 call, depth 0
 *     run                   1 call, called by main
 *       parse               3 calls, called by run
 *       compute             5 calls, called by run
 *         leaf_add          4 calls per compute = 20, called by compute only
 *         leaf_mul          2 calls per compute = 10, called by compute only
 *       fib                 fib(10), recursive: exactly 177 calls
 *                           (C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1);
 *                           the outermost fib is called by run
 *       slow_io             1 call, called by run, sleeps usleep(20000):
 *                           lasts >= 20 ms
 *
 * No other function of this executable is called, apart from start-up glue
 * (_start, _init, frame_dummy, ... which are not in the source).  Order in
 * run(): parse x3, compute x5, fib(10), slow_io.  Prints one line to stdout
 * ("calltree: result=N"), nothing to stderr; exits 0.
 */
#include <stdio.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

static const char *inputs[3] = { "12345", "987", "424242" };

TRACED int parse(const char *s)
{
	int v = 0;

	for (; *s; s++)
		v = v * 10 + (*s - '0');
	sink += (unsigned long)v;
	return v;
}

TRACED long leaf_add(long a, long b)
{
	sink++;
	return a + b;
}

TRACED long leaf_mul(long a, long b)
{
	sink++;
	return a * b;
}

TRACED long compute(int x)
{
	long acc = x;
	int i;

	for (i = 0; i < 4; i++)
		acc = leaf_add(acc, i);
	for (i = 0; i < 2; i++)
		acc = leaf_mul(acc, 3);
	sink += (unsigned long)acc;
	return acc;
}

TRACED long fib(int n)
{
	long r;

	sink++;
	if (n < 2)
		return n;
	r = fib(n - 1);
	r += fib(n - 2);
	return r;
}

TRACED void slow_io(void)
{
	sink++;
	usleep(20000);
}

TRACED long run(void)
{
	long total = 0;
	int i;

	for (i = 0; i < 3; i++)
		total += parse(inputs[i]);
	for (i = 0; i < 5; i++)
		total += compute(i);
	total += fib(10);
	slow_io();
	sink += (unsigned long)total;
	return total;
}

int main(void)
{
	long r = run();

	printf("calltree: result=%ld\n", r);
	return 0;
}
