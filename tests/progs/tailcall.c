/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tailcall: a function that jumps back to its own entry.
 *
 * An exported function of a shared library that ends in a call to itself
 * is compiled into `jmp f@plt` (the symbol could be interposed, so no
 * loop): it enters at its entry again with the same stack pointer, the
 * return address still the caller's.  Debian's libsqlite3 does it
 * (sqlite3VdbeAddOp3 after growing its array).  The kernel then chains the
 * return probes: one return, as many return events as entries.
 *
 * Guaranteed facts, one thread:
 *   - countdown(n) (assembly, first instruction a 1-byte nop): if n is 0 it
 *     returns 0, else it decrements n and jumps to its own first
 *     instruction.  Entered n + 1 times per call from C, each time with
 *     the same stack pointer; it calls nothing.
 *   - main calls countdown(3) exactly 5 times from run(), which main calls
 *     once, then prints "tailcall: entries=20" and exits 0.
 */
#include <stdio.h>
#include "progs.h"

volatile unsigned long sink;

int countdown(int n);
__asm__(".text\n"
	".globl countdown\n"
	".type countdown, @function\n"
	"countdown:\n"
	"	nop\n"
	"	test %edi, %edi\n"
	"	jz 1f\n"
	"	dec %edi\n"
	"	jmp countdown\n"
	"1:	xor %eax, %eax\n"
	"	ret\n"
	".size countdown, .-countdown\n");

TRACED void run(void)
{
	int i;

	for (i = 0; i < 5; i++)
		sink += countdown(3);
}

int main(void)
{
	run();
	printf("tailcall: entries=%d\n", 5 * 4);
	return 0;
}
