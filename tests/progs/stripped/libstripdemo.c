/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libstripdemo.so for stripdemo.c: strip_lib_run(n) is exported and calls the
 * static lib_step() n times, which a library stripped with
 * --strip-unneeded names nowhere but in its debug file.  Returns 6 * n.
 */
#include "../progs.h"

/* its own: the library must link into a program that defines no `sink` (launcher.c) */
static volatile unsigned long lib_sink;

static TRACED int lib_step(int i)
{
	lib_sink++;
	return 6 + i - i;
}

int strip_lib_run(int n)
{
	int r = 0, i;

	for (i = 0; i < n; i++)
		r += lib_step(i);
	return r;
}
