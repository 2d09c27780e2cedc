/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Force-included (-include bench/cputime.h) when bench/ builds its copies of
 * the per-call targets (tests/progs/insns.c, bench/uftrace_spin.c): their
 * CLOCK_MONOTONIC loop timing becomes the calling thread's CPU time, which
 * counts the uprobe traps the kernel handles on the thread's behalf but not
 * the time other processes hold the CPU.  On a shared 2-CPU machine that is
 * the difference between a stable figure and a noisy one.
 */
#include <time.h>
#undef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC CLOCK_THREAD_CPUTIME_ID
