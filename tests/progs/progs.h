/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers for the test target programs.
 *
 * TRACED marks a function the end-to-end tests count: it must stay a real,
 * separate call in the binary.  noinline alone is not enough with GCC: a
 * function without side effects can be found "pure" by IPA and its call
 * dropped when the result is unused, or cloned (foo.constprop.0) so that the
 * symbol the test looks for is never entered.  noipa (GCC >= 8) turns all of
 * that off; clang has no noipa, but it does not clone at -O1 either.  Every
 * TRACED function also writes to `sink`, so it has a side effect anyway.
 */
#ifndef BPFPROF_TEST_PROGS_H
#define BPFPROF_TEST_PROGS_H

#include <time.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
#define TRACED __attribute__((noinline, noipa, used))
#else
#define TRACED __attribute__((noinline, used))
#endif

/* Written by every traced function: makes each call observable work. */
extern volatile unsigned long sink;

/*
 * The programs' own clocks.  A program that uses one has it as a function of
 * its own, a real call (the flags say -fno-inline), under this name: tests
 * may see it traced (busy's now_s, in its sources' documented facts).
 */
static inline double now_s(void)	/* CLOCK_MONOTONIC, in seconds */
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double now_ms(void)	/* the calling thread's CPU time, in ms */
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif
