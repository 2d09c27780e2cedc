/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stepper: calls beat() once per byte read from stdin, and says so.
 *
 * Usage: stepper        (no arguments)
 *
 * Guaranteed facts:
 *   - At start, prints "stepper: pid=P" (P its pid) and a newline.  Then,
 *     for each byte read from stdin, calls beat() exactly once and then
 *     writes "beat N\n", N the number of beat() calls so far (from 1).  At
 *     the end of stdin, exits 0.  Nothing else of the source is called in
 *     the loop (main runs it).
 *   - beat() calls step() and nothing else; step() is a leaf.
 *   - beat()'s first instruction is `push %rbp` (it is not a leaf and the
 *     flags keep frame pointers): one the kernel emulates, so a uprobe on
 *     it needs no single-step slot, and the [uprobes] area is mapped into
 *     this process only when a return probe takes over a return address.
 *   - After the start line, the loop calls no C library function: read and
 *     write are system calls made here (inline syscall instructions).
 *   - Linked statically (tests/progs/flags.mk): it maps no shared library
 *     and no dynamic linker, so no probe someone else put on those (another
 *     recording on the machine, one still releasing its links) can map
 *     that area, at its start-up either.
 */
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "progs.h"

volatile unsigned long sink;

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

TRACED void step(void)
{
	sink++;
}

TRACED void beat(void)
{
	step();
	sink++;
}

int main(void)
{
	char line[32], c;
	unsigned long n = 0;

	printf("stepper: pid=%d\n", (int)getpid());
	fflush(stdout);
	while (sys3(SYS_read, 0, (long)&c, 1) == 1) {
		int len = 0;
		char digits[24];
		unsigned long v;

		beat();
		v = ++n;
		do {
			digits[len++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		line[0] = 'b', line[1] = 'e', line[2] = 'a', line[3] = 't', line[4] = ' ';
		for (int i = 0; i < len; i++)
			line[5 + i] = digits[len - 1 - i];
		line[5 + len] = '\n';
		sys3(SYS_write, 1, (long)line, 6 + len);
	}
	return 0;
}
