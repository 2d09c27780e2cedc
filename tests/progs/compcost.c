// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * compcost [ROUNDS [rt|nort [LEAVES [WORK]]]]: durations with the probes' cost taken out
 * (decode/compensate.h) against what the program measures itself.
 *
 *   leaf()      empty (push; add to `sink`; pop): traced, it should report about 0
 *   parent()    a fixed amount of arithmetic (WORK iterations, default 200,000),
 *               and LEAVES (default 100) calls of leaf()
 *   parent_ref(), leaf_ref(): the same code, never traced
 *
 * Guarantee, one thread: main first calls parent_ref() ROUNDS times (default
 * 30) and prints the median of their durations, then calls parent() ROUNDS
 * times and prints the median of those (each timed with CLOCK_MONOTONIC
 * around the call):
 *   "compcost: rounds=N untraced_ns=U traced_ns=T rt=0|1"
 * With "rt" it first asks for SCHED_FIFO priority 10 (root): on a busy
 * machine a normal thread loses the CPU at the probes' traps, and its wall
 * clock then measures other programs; "rt=1" in the line says it got it.
 * So parent is called N times from main, leaf LEAVES * N times, each from parent;
 * nothing else of the file is called traced (parent_ref, leaf_ref are not
 * selected by the tests).
 */
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "progs.h"

static long leaves = 100;
static unsigned long work_n = 200000;	/* iterations: a few hundred microseconds here */

volatile unsigned long sink;

/*
 * The leaves start with a push, so their probes take the emulated path
 * whatever the compiler does (a C leaf is `mov sink(%rip),%rax; add; mov;
 * ret` at -O1: single-stepped, the dearest and least steady path).
 */
void leaf(void);
void leaf_ref(void);
asm(".text\n"
    ".globl leaf\n.type leaf,@function\n.p2align 4\n"
    "leaf:\n\tpush %rbp\n\taddq $1, sink(%rip)\n\tpop %rbp\n\tret\n.size leaf, .-leaf\n"
    ".globl leaf_ref\n.type leaf_ref,@function\n.p2align 4\n"
    "leaf_ref:\n\tpush %rbp\n\taddq $1, sink(%rip)\n\tpop %rbp\n\tret\n"
    ".size leaf_ref, .-leaf_ref\n");

static unsigned long work(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < work_n; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

TRACED void parent(void)
{
	long i;

	sink += work();
	for (i = 0; i < leaves; i++)
		leaf();
}

TRACED void parent_ref(void)
{
	long i;

	sink += work();
	for (i = 0; i < leaves; i++)
		leaf_ref();
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static long long median_of(void (*fn)(void), int n, long long *v)
{
	int i;

	for (i = 0; i < n; i++) {
		long long t0 = now_ns();

		fn();
		v[i] = now_ns() - t0;
	}
	qsort(v, n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30, rt = 0;
	long long *v, u, t;

	if (argc > 2 && !strcmp(argv[2], "rt")) {
		struct sched_param sp = { .sched_priority = 10 };

		rt = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
	}

	if (argc > 3)
		leaves = atol(argv[3]);
	if (argc > 4)
		work_n = strtoul(argv[4], NULL, 10);
	if (n < 1)
		n = 1;
	v = calloc(n, sizeof(*v));
	if (!v)
		return 1;
	u = median_of(parent_ref, n, v);
	t = median_of(parent, n, v);
	printf("compcost: rounds=%d untraced_ns=%lld traced_ns=%lld rt=%d\n", n, u, t, rt);
	free(v);
	return 0;
}
