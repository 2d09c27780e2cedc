// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * argdouble [N]: float and double arguments and return values, built -O0
 * (flags.mk) as a debug build is: the prologue spills each parameter to the
 * frame, and a double is returned through rax (movq %xmm0,%rax; movq
 * %rax,%xmm0), where bpfprof --args can read them.  Round i (0..N-1) calls
 *   d_half(i + 0.5) = (i + 0.5) / 2                double in, double out
 *   d_third(i) = i / 3.0 (not exact in binary: all 17 digits count)
 *   f_scale(1.25f * i) = 1.25f * i * 2              float in, float out
 *   d_mixed(a = i, x = i + 0.25, b = -i, y = -1.0 / (i + 1), s = "r<i>")
 *       = a + x + b + y                             ints and doubles interleaved
 *   i_half(i) = i / 2                              d_half's twin in integers
 *                                                  (bench/args_double.sh)
 * and prints "done <sink>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

volatile unsigned long sink;
volatile double dsink;

TRACED double d_half(double d)
{
	dsink += d;
	return d / 2;
}

TRACED long i_half(long v)
{
	sink += v;
	return v / 2;
}

TRACED double d_third(int i)
{
	dsink += i;
	return i / 3.0;
}

TRACED float f_scale(float f)
{
	dsink += f;
	return f * 2;
}

TRACED double d_mixed(int a, double x, long b, double y, const char *s)
{
	sink += strlen(s);
	return a + x + b + y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	for (int i = 0; i < n; i++) {
		char s[16];

		snprintf(s, sizeof(s), "r%d", i);
		d_half(i + 0.5);
		i_half(i);
		d_third(i);
		f_scale(1.25f * i);
		d_mixed(i, i + 0.25, -i, -1.0 / (i + 1), s);
	}
	printf("done %g %lu\n", dsink, sink);
	return 0;
}
