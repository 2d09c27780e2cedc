/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * exitcode: a non-zero exit status to pass through.
 *
 * Guaranteed facts: main calls f() exactly once, then returns 7 from main
 * (so main and f both return normally; the process exit status is 7).
 * Prints nothing.  Single thread.
 */
#include "progs.h"

volatile unsigned long sink;

TRACED int f(void)
{
	sink++;
	return 7;
}

int main(void)
{
	return f();
}
