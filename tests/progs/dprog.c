/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dprog: the target of the run-to-run tests of `bpfprof diff`
 * (tests/e2e/test_diff_runs.py): eight functions of known work, the work of
 * each set on the command line, so a test makes one function slower by a
 * factor it controls and nothing else changes.
 *
 * Usage: dprog ROUNDS [W0 [W1 ... [W7]]] [rt]
 *   ROUNDS >= 1; Wi >= 1 the work of work_i per call (loop iterations),
 *   default 20000 * (i + 1) for those not given.
 *
 * Guaranteed facts:
 *   - main calls work_0 .. work_7, in that order, once each per round,
 *     ROUNDS rounds: exactly ROUNDS calls of each, and no other function
 *     of this file.
 *   - work_i(w) runs w iterations of the same integer mixing step (no
 *     memory traffic beyond a few registers, no system call), so its time
 *     is proportional to w on an otherwise equal machine: twice the work is
 *     twice the time less the probe's fixed cost.
 *   - With "rt" last (and the privilege), the rounds run under SCHED_FIFO
 *     priority 1, so no ordinary task preempts them (as slowsteady); without
 *     the privilege it says so on stderr and runs as an ordinary task.  The
 *     policy is dropped before exiting.
 *   - Exits 0 (2 on bad arguments); prints nothing else.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

#define NFUNCS 8

volatile unsigned long sink;

static unsigned long mix(unsigned long x, long w)
{
	long i;

	for (i = 0; i < w; i++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ul + (unsigned long)i;
	return x;
}

TRACED void work_0(long w) { sink += mix(sink, w); }
TRACED void work_1(long w) { sink += mix(sink, w); }
TRACED void work_2(long w) { sink += mix(sink, w); }
TRACED void work_3(long w) { sink += mix(sink, w); }
TRACED void work_4(long w) { sink += mix(sink, w); }
TRACED void work_5(long w) { sink += mix(sink, w); }
TRACED void work_6(long w) { sink += mix(sink, w); }
TRACED void work_7(long w) { sink += mix(sink, w); }

int main(int argc, char **argv)
{
	void (*const fn[NFUNCS])(long) = { work_0, work_1, work_2, work_3,
					   work_4, work_5, work_6, work_7 };
	struct sched_param rt = { .sched_priority = 1 }, normal = { 0 };
	long rounds, w[NFUNCS], r;
	int i, want_rt, use_rt = 0;
	char *end;

	want_rt = argc > 2 && !strcmp(argv[argc - 1], "rt");
	argc -= want_rt;
	if (argc < 2 || argc > 2 + NFUNCS) {
		fprintf(stderr, "usage: dprog ROUNDS [W0 ... W7] [rt]\n");
		return 2;
	}
	rounds = strtol(argv[1], &end, 10);
	if (*end || rounds < 1) {
		fprintf(stderr, "dprog: bad ROUNDS '%s'\n", argv[1]);
		return 2;
	}
	for (i = 0; i < NFUNCS; i++) {
		w[i] = 20000L * (i + 1);
		if (i + 2 < argc) {
			w[i] = strtol(argv[i + 2], &end, 10);
			if (*end || w[i] < 1) {
				fprintf(stderr, "dprog: bad work '%s'\n", argv[i + 2]);
				return 2;
			}
		}
	}
	if (want_rt) {
		use_rt = !sched_setscheduler(0, SCHED_FIFO, &rt);
		if (!use_rt)
			fprintf(stderr, "dprog: no SCHED_FIFO (%s): ordinary scheduling\n",
				strerror(errno));
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < NFUNCS; i++)
			fn[i](w[i]);
	if (use_rt)
		sched_setscheduler(0, SCHED_OTHER, &normal);
	return 0;
}
