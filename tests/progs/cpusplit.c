// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cpusplit [MS]: CPU-bound for MS milliseconds of its own CPU time (default
 * 1000; CLOCK_THREAD_CPUTIME_ID, so a busy machine makes it take longer, not
 * do less), split 3:1 between heavy() and light(): work() calls heavy(3
 * units) then light(1 unit) in a loop, a unit being the same fixed
 * arithmetic loop.  heavy() and light() run a few instructions of their
 * own around the call: a sample may land there, outside spin_units().
 * Stacks: main -> work -> heavy | light -> spin_units.  Then it blocks in
 * nap() for exactly one nanosleep of 200 ms (off-cpu).  Guarantees the 3:1
 * ratio of cpu time (same code, 3x the iterations), the stack shape, and
 * one 200 ms sleep inside nap().  Built with frame pointers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/syscall.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void spin_units(long units)
{
	for (long i = 0; i < units * 20000; i++)
		sink += i;
}

TRACED void heavy(void)
{
	spin_units(3);
}

TRACED void light(void)
{
	spin_units(1);
}

TRACED void work(double ms)
{
	double end = now_ms() + ms;

	/* the thread's CPU clock is a system call: read it once per 16 rounds */
	do {
		for (int i = 0; i < 16; i++) {
			heavy();
			light();
		}
	} while (now_ms() < end);
}

/*
 * The sleep is a raw syscall from nap() itself: through libc's nanosleep
 * (built without frame pointers) a frame-pointer stack would skip nap.
 */
TRACED void nap(void)
{
	struct timespec ts = { 0, 200000000 };
	long ret;

	asm volatile("syscall" : "=a"(ret) : "a"(SYS_nanosleep), "D"(&ts), "S"(0)
		     : "rcx", "r11", "memory");
	sink += ret;
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atof(argv[1]) : 1000);
	nap();
	printf("cpusplit: done\n");
	return 0;
}
