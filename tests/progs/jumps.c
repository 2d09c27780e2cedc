/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * jumps: longjmp out of two traced frames.
 *
 * Guaranteed facts, one run, one thread:
 *   - main calls outer(i) for i = 0..4 (5 calls), each from main directly.
 *   - outer(i) does `if (setjmp(env) == 0) mid(i); else after_jump(i);`
 *   - mid(i) calls inner(i) once; inner(i) calls longjmp(env, i + 1), so
 *     neither inner nor mid ever returns: both frames are skipped by the
 *     jump, back into the outer(i) that called mid(i).
 *   - outer then calls after_jump(i) exactly once, from outer directly: so
 *     each after_jump runs inside an outer, one level below it, after that
 *     outer's mid/inner are gone.  after_jump returns normally, so does outer.
 *   - Counts: outer 5, mid 5, inner 5, after_jump 5, main 1; no other
 *     function of the source is called.
 *   - Prints "jumps: jumped=5" to stdout; exits 0.
 */
#include <setjmp.h>
#include <stdio.h>
#include "progs.h"

volatile unsigned long sink;

static jmp_buf env;
static volatile int jumped;

TRACED void inner(int i)
{
	sink++;
	longjmp(env, i + 1);
}

TRACED void mid(int i)
{
	sink++;
	inner(i);
	sink++;		/* never reached */
}

TRACED void after_jump(int i)
{
	sink += (unsigned long)i;
	jumped++;
}

TRACED void outer(int i)
{
	sink++;
	if (setjmp(env) == 0)
		mid(i);
	else
		after_jump(i);
	sink++;
}

int main(void)
{
	int i;

	for (i = 0; i < 5; i++)
		outer(i);
	printf("jumps: jumped=%d\n", jumped);
	return 0;
}
