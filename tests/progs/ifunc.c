/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ifunc: calls of glibc functions that are IFUNCs (strlen, memset): the
 * symbol is a resolver, the implementation is picked by CPU features at
 * load time and has no symbol in Debian's stripped libc.
 *
 * Guaranteed facts, one thread:
 *   - main calls work() once; work() calls strlen exactly 300 times and
 *     memset exactly 200 times, directly (built with -fno-builtin: real
 *     calls through the PLT), and nothing else of libc.
 *   - Prints "ifunc: len=L" (L = 300 * 7 = 2100) and exits 0.
 */
#include <stdio.h>
#include <string.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void work(void)
{
	char buf[16];
	size_t total = 0;
	int i;

	for (i = 0; i < 200; i++) {
		memset(buf, 'a' + i % 26, 7);
		buf[7] = 0;
	}
	for (i = 0; i < 300; i++) {
		buf[0] = 'a' + i % 26;	/* a new string each time: no call can be hoisted */
		total += strlen(buf);
	}
	sink += total;
}

int main(void)
{
	work();
	printf("ifunc: len=%lu\n", (unsigned long)sink);
	return 0;
}
