/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nosyms: a binary with no function symbols (linked with -s, see flags.mk).
 *
 * Guaranteed facts: .symtab is stripped; every function of the source is
 * static except main, and main is not exported (no -rdynamic), so .dynsym
 * holds only undefined imports (printf etc.): `nm -D --defined-only` lists
 * no function of this executable.  Calls helper() 3 times, prints
 * "nosyms: 42" to stdout, exits 0.
 */
#include <stdio.h>
#include "progs.h"

volatile unsigned long sink;

static TRACED int helper(int x)
{
	sink++;
	return x * 2;
}

int main(void)
{
	int r = helper(1) + helper(4) + helper(16);

	printf("nosyms: %d\n", r);
	return 0;
}
