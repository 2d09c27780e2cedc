/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * busy: a long-running target for `bpfprof attach` (and SIGKILL tests).
 *
 * Usage: busy [SECONDS] [TOKEN]
 *
 * Guaranteed facts:
 *   - First prints "busy: pid=PID" (getpid()) and a newline to stdout and
 *     flushes it, before the first tick.
 *   - Then loops: tick(); usleep(1000); -- about 1000 ticks a second on an
 *     idle machine (fewer on a busy one: each loop is one voluntary context
 *     switch, which tests count), each from main directly.  tick is a short leaf.
 *   - Without SECONDS (or 0) it runs until killed; with SECONDS > 0 it stops
 *     after that long (CLOCK_MONOTONIC), prints "busy: ticks=N" and exits 0.
 *   - TOKEN is ignored: tests pass a unique string to find it with pgrep -f.
 *   - now_s() (static, reads the clock) is called only with SECONDS > 0:
 *     once before the loop and once per tick.  Without SECONDS, main and tick
 *     are the only functions of the source called.  Single thread; default
 *     signal dispositions (SIGINT/SIGTERM/SIGKILL end it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void tick(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0, t0;
	unsigned long n = 0;

	printf("busy: pid=%d\n", (int)getpid());
	fflush(stdout);
	t0 = secs > 0 ? now_s() : 0;
	for (;;) {
		tick();
		n++;
		usleep(1000);
		if (secs > 0 && now_s() - t0 >= secs)
			break;
	}
	printf("busy: ticks=%lu\n", n);
	return 0;
}
