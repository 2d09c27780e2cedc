/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stripdemo: a program the stripped-binary tests (tests/e2e/test_stripped.py)
 * build with -g and then strip in every way distributions do.  Not built by
 * the Makefile: the test compiles it with libstripdemo.c.
 *
 * Guaranteed facts: leaf() is called 12 times, mid() 4 times (each call
 * calls leaf() 3 times), fib(6) makes 25 calls of fib(), twice() 2 times;
 * strip_lib_run(7) in libstripdemo.so is called once and calls its static
 * lib_step() 7 times.  Prints "stripdemo: 94" (30 from mid, 8 from fib, 14
 * from twice, 42 from the library).
 */
#include <stdio.h>
#include "../progs.h"

volatile unsigned long sink;

int strip_lib_run(int n);

static TRACED int leaf(int x)
{
	sink++;
	return x + 1;
}

static TRACED int mid(int x)
{
	sink++;
	return leaf(x) + leaf(x) + leaf(x);
}

static TRACED int fib(int n)
{
	sink++;
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static TRACED int twice(int x)
{
	sink++;
	return 2 * x;
}

int main(void)
{
	int r = 0, i;

	for (i = 0; i < 4; i++)
		r += mid(i);	/* 3 * (i + 1) each: 3 + 6 + 9 + 12 = 30 */
	r += fib(6);		/* 8 */
	r += twice(3) + twice(4);	/* 14 */
	r += strip_lib_run(7);	/* 42 */
	printf("stripdemo: %d\n", r);
	return 0;
}
