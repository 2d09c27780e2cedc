/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * brief: a process gone long before the tracer has read its stacks.
 *
 * Guaranteed facts, one run, one thread: main calls brief_block() once;
 * brief_block calls nanosleep() (libc) for 20 ms, once, and so goes off
 * the CPU there at least once; then main returns 0 at once.  Nothing else
 * sleeps.  libc is mapped by the dynamic linker after the exec, as always.
 */
#include <time.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void brief_block(void)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	sink++;
	nanosleep(&ts, NULL);
}

int main(void)
{
	brief_block();
	return 0;
}
