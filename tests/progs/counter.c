/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * counter: a service whose call count is known, for `bpfprof serve`.
 *
 * Usage: counter N [RATE]
 *
 * Guaranteed facts:
 *   - First prints "counter: pid=PID" and a newline to stdout and flushes it.
 *   - Then waits for one line (or end of file) on stdin: the test attaches
 *     first and then says go, so every call happens while traced.
 *   - Then calls counted() exactly N times from main (N = 0: without end),
 *     and nothing else of the source.  With RATE > 0 the calls are paced at
 *     about RATE per second (checked every 1000 calls); without, as fast as
 *     the loop goes.  counted is a short leaf.  now_s() (static, reads the
 *     clock) is called once before the loop, and with RATE once per 1000 calls.
 *   - After the N calls prints "counter: done n=N", flushes, and sleeps until
 *     a signal ends it (SIGTERM, SIGINT, SIGKILL: default dispositions).
 *     Single thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void counted(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, i;
	double rate = argc > 2 ? atof(argv[2]) : 0, t0;
	char line[64];

	printf("counter: pid=%d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		clearerr(stdin);
	t0 = now_s();
	for (i = 0; n == 0 || i < n; i++) {
		counted();
		/* pacing: ahead of RATE, wait until the clock catches up */
		if (rate > 0 && i % 1000 == 999)
			while (now_s() - t0 < (i + 1) / rate)
				usleep(100);
	}
	printf("counter: done n=%lu\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
