// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * deps: data flow between calls, for --deps.
 *   p = make_buf(); fill(p); use_buf(p); free_buf(p)   -> the pointer p flows from
 *       make_buf to fill, use_buf and free_buf (3 data edges, once);
 *   v = give_seven(); take_int(v)                     -> 7 is no pointer: no edge.
 * Each function is called exactly once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

volatile unsigned long sink;

TRACED char *make_buf(size_t n)
{
	return malloc(n);
}

TRACED void fill(char *p)
{
	memset(p, 'x', 64);
	sink += p[3];
}

TRACED long use_buf(const char *p)
{
	return p[10] + (long)sink;
}

TRACED void free_buf(char *p)
{
	free(p);
}

TRACED long give_seven(void)
{
	return 7 + (sink & 0);
}

TRACED void take_int(long v)
{
	sink += v;
}

int main(void)
{
	char *p = make_buf(64);

	fill(p);
	sink += use_buf(p);
	free_buf(p);
	take_int(give_seven());
	printf("deps: %lu\n", sink);
	return 0;
}
