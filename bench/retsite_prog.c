// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * retsite_prog: the targets of bench/retsite.sh.
 *
 *   retsite_prog FUNC [N]     calls FUNC N times (default 100000) through a
 *                             function pointer, argument i; prints
 *                             "FUNC N calls ns_per_call=W cpu_ns_per_call=C"
 *                             (W: wall clock, C: the thread's CPU time)
 *   retsite_prog busy SECONDS t_busy runs SECONDS, calling t_push once a
 *                             millisecond: a traced thread that keeps
 *                             calling while a return (t_busy's) is pending,
 *                             as tests/progs/busy's main; prints the
 *                             calls and its end time (CLOCK_MONOTONIC ns)
 *
 * The FUNCs are naked assembly, so that their first instruction and their
 * `ret` instructions are exactly the ones named:
 *   t_push   push %rbp; pop %rbp; ret          entry emulated, one ret
 *   t_sub    sub $8,%rsp; add $8,%rsp; ret     entry single-stepped, one ret
 *   t_two    push %rbp; test %rdi,%rdi; je; pop; ret; pop; ret
 *                                              two ret sites, each taken by
 *                                              every other call
 *   u_tail   push %rbp; pop %rbp; jmp u_leaf   a tail call: no ret of its own;
 *   u_leaf   push %rbp; pop %rbp; ret          u_leaf's ret ends both
 * Guarantee: exactly N calls of FUNC (u_tail: N of u_tail and N of u_leaf),
 * each returning normally; nothing else is called in the loop.  x86-64 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAKED __attribute__((naked, noinline, used))
NAKED void t_push(long i) { asm("push %rbp\n\tpop %rbp\n\tret"); }
NAKED void t_sub(long i) { asm("sub $8, %rsp\n\tadd $8, %rsp\n\tret"); }
NAKED void t_two(long i)
{
	asm("push %rbp\n\ttest $1, %rdi\n\tje 1f\n\tpop %rbp\n\tret\n1:\tpop %rbp\n\tret");
}
NAKED void u_leaf(long i) { asm("push %rbp\n\tpop %rbp\n\tret"); }
NAKED void u_tail(long i) { asm("push %rbp\n\tpop %rbp\n\tjmp u_leaf"); }

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Calls t_push once a millisecond for `secs` seconds; returns the calls. */
__attribute__((noinline)) long t_busy(double secs)
{
	void (*volatile fn)(long) = t_push;
	double t0 = now(CLOCK_MONOTONIC);
	long n = 0;

	while (now(CLOCK_MONOTONIC) - t0 < secs * 1e9) {
		fn(n++);
		usleep(1000);
	}
	return n;
}

static const struct {
	const char *name;
	void (*fn)(long);
} funcs[] = {
	{ "t_push", t_push }, { "t_sub", t_sub }, { "t_two", t_two }, { "u_tail", u_tail },
};

int main(int argc, char **argv)
{
	void (*volatile fn)(long) = NULL;
	long n = argc > 2 ? atol(argv[2]) : 100000, i;
	double w, c;
	size_t k;

	if (argc > 2 && !strcmp(argv[1], "busy")) {
		n = t_busy(atof(argv[2]));
		/* when it ended, for bench/retsite.sh's comparison with a release */
		printf("busy calls=%ld end_ns=%.0f\n", n, now(CLOCK_MONOTONIC));
		return 0;
	}
	for (k = 0; argc > 1 && k < sizeof(funcs) / sizeof(funcs[0]); k++)
		if (!strcmp(argv[1], funcs[k].name))
			fn = funcs[k].fn;
	if (!fn) {
		fprintf(stderr, "usage: retsite_prog t_push|t_sub|t_two|u_tail [N] | busy SECONDS\n");
		return 2;
	}
	w = now(CLOCK_MONOTONIC);
	c = now(CLOCK_THREAD_CPUTIME_ID);
	for (i = 0; i < n; i++)
		fn(i);
	c = now(CLOCK_THREAD_CPUTIME_ID) - c;
	w = now(CLOCK_MONOTONIC) - w;
	printf("%s %ld calls ns_per_call=%.1f cpu_ns_per_call=%.1f\n", argv[1], n, w / (n ? n : 1),
	       c / (n ? n : 1));
	return 0;
}
