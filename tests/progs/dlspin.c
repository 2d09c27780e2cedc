/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dlspin: a process that works in a library it dlopen'ed, and exits at once.
 *
 * Guaranteed facts, one run, one thread:
 *   - The executable does not link libz: libz.so.1 is mapped only by
 *     main's dlopen("libz.so.1", RTLD_NOW), after main has started.
 *   - main then calls spin_lib() once, which calls adler32 (found with
 *     dlsym) through a pointer, directly, DLSPIN_PASSES times over a buffer
 *     of DLSPIN_BYTES bytes: nearly all of the process's CPU time is spent
 *     in adler32 called from spin_lib (tens of ms on a 2020s x86-64).
 *     Nothing else calls adler32.
 *   - Then main returns 0 at once, without dlclose: the process is gone
 *     right after its last adler32 call.
 *   - Prints "dlspin: sum=0x%08lx" (the last checksum) to stdout.  If
 *     libz.so.1 or adler32 cannot be found, or the buffer cannot be
 *     allocated, the reason goes to stderr and it exits 3.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

#define DLSPIN_BYTES (4u << 20)
#define DLSPIN_PASSES 32

volatile unsigned long sink;

typedef unsigned long (*adler32_fn)(unsigned long adler, const unsigned char *buf,
				    unsigned int len);

TRACED unsigned long spin_lib(adler32_fn fn, const unsigned char *buf)
{
	unsigned long sum = 1;
	int i;

	for (i = 0; i < DLSPIN_PASSES; i++)
		sum = fn(sum, buf, DLSPIN_BYTES);
	sink = sum;
	return sum;
}

int main(void)
{
	unsigned char *buf;
	adler32_fn fn;
	void *h;

	h = dlopen("libz.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlspin: %s\n", dlerror());
		return 3;
	}
	fn = (adler32_fn)dlsym(h, "adler32");
	buf = malloc(DLSPIN_BYTES);
	if (!fn || !buf) {
		fprintf(stderr, "dlspin: %s\n", fn ? "out of memory" : dlerror());
		return 3;
	}
	memset(buf, 0x5a, DLSPIN_BYTES);
	printf("dlspin: sum=0x%08lx\n", spin_lib(fn, buf));
	return 0;
}
