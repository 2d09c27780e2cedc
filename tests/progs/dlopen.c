/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * dlopen: a library loaded after the recording started.
 *
 * Guaranteed facts, one run, one thread:
 *   - The executable does not link libz: libz.so.1 is not mapped until
 *     main calls dlopen("libz.so.1", RTLD_NOW).
 *   - main calls before_dlopen() once, then dlopen, dlsym(h, "adler32"), and
 *     calls adler32 through that pointer exactly 7 times (on "bpfprof" with
 *     lengths 1..7: adler32(1, buf, n)), then dlclose.  Nothing else calls
 *     adler32 (no other code of the process uses libz).
 *   - Prints "dlopen: adler32 k=0x%08lx" for k = 1..7, one line each, then
 *     "dlopen: calls=7", to stdout; exits 0.  If libz.so.1 or adler32 cannot
 *     be found it prints the reason to stderr and exits 3.
 */
#include <dlfcn.h>
#include <stdio.h>
#include "progs.h"

volatile unsigned long sink;

typedef unsigned long (*adler32_fn)(unsigned long adler, const unsigned char *buf,
				    unsigned int len);

TRACED void before_dlopen(void)
{
	sink++;
}

int main(void)
{
	static const unsigned char buf[] = "bpfprof";
	adler32_fn fn;
	void *h;
	int calls = 0;
	unsigned int k;

	before_dlopen();
	h = dlopen("libz.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	fn = (adler32_fn)dlsym(h, "adler32");
	if (!fn) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	for (k = 1; k <= 7; k++) {
		unsigned long r = fn(1, buf, k);

		calls++;
		printf("dlopen: adler32 %u=0x%08lx\n", k, r);
	}
	dlclose(h);
	printf("dlopen: calls=%d\n", calls);
	return 0;
}
