// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libwork [MS]: spends MS milliseconds of its own CPU time (default 500;
 * CLOCK_THREAD_CPUTIME_ID: the same work on a busy machine) almost all
 * inside zlib's adler32() (a shared library function, exported in .dynsym)
 * over a 1 MiB buffer, called from crunch(); between two adler32 calls
 * only a clock read.  Guarantees that cpu samples land in
 * libz.so.1's adler32.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "progs.h"

volatile unsigned long sink;
static unsigned char buf[1 << 20];

TRACED void crunch(double ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end)
		sink += adler32(1, buf, sizeof(buf));
}

int main(int argc, char **argv)
{
	memset(buf, 7, sizeof(buf));
	crunch(argc > 1 ? atof(argv[1]) : 500);
	printf("libwork: %lu\n", sink);
	return 0;
}
