/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * plugins: shared objects dlopen'ed from a directory outside the linker's
 * path, found by the program at run time (as plugin hosts do).
 *
 * The same source is the program and, built with -DPLUGIN=a or -DPLUGIN=b
 * -shared, tests/progs/plugins.d/libplug_a.so and libplug_b.so (see the
 * Makefile).  The program links libstdc++ (nothing of it is used) so that
 * bpfprof's exception support, and with it its ptrace keeper, applies to it.
 *
 * Guaranteed facts, one run:
 *   - main calls before_load() once, starts one worker thread, then
 *     dlopens DIR/libplug_a.so (DIR: plugins.d beside the executable).
 *     Its constructor calls plug_init() once before dlopen returns; main
 *     then calls a's plug_work(k) for k = 1..5 through dlsym.
 *   - Then the same with libplug_b.so: its constructor calls plug_init()
 *     once; main calls b's plug_work(k) for k = 1..3.
 *   - Each plug_work calls plug_leaf exactly once (plug_leaf(k) = k * M,
 *     M = 3 in a, 7 in b); plug_init calls nothing.  Nothing else calls
 *     the plug_ functions.
 *   - Each plug_work(k) fires the USDT probe plugin:work with the argument
 *     k * M, then BPFPROF_EVENT("plug-result", k * M) (bpfprof.h), once
 *     each; no other USDT probe fires in the plugins.
 *   - The worker thread calls worker_step() exactly 20000 times while the
 *     plugins load, and sums its results.
 *   - With the argument "wait", main first prints "plugins: ready" and
 *     waits for a line on stdin before anything above (before_load too).
 *   - With the arguments "loop N" instead of all the above: N times,
 *     dlopen libplug_a.so, sum its plug_work(1..5), dlclose it; then prints
 *     "plugins: loops=N sum=S" (S = 45 N) and exits 0.
 *   - Prints "plugins: a=45 b=42 worker=200010000" and exits 0
 *     (a: sum of 3k for k=1..5; b: sum of 7k for k=1..3; worker: sum of
 *     1..20000); a plugin that cannot be loaded: the reason on stderr,
 *     exit 3.
 */
#include "progs.h"

#ifdef PLUGIN

#include "bpfprof.h"

#define MULT_a 3
#define MULT_b 7
#define CAT(x, y) x##y
#define MULT(p) CAT(MULT_, p)

int plug_inits;

TRACED long plug_leaf(long k)
{
	return k * MULT(PLUGIN);
}

TRACED long plug_work(long k)
{
	long r = plug_leaf(k);

	DTRACE_PROBE1(plugin, work, r);
	BPFPROF_EVENT("plug-result", r);
	return r;
}

TRACED void plug_init(void)
{
	plug_inits++;
}

__attribute__((constructor)) static void plug_ctor(void)
{
	plug_init();
}

#else

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long sink;

TRACED void before_load(void)
{
	sink++;
}

TRACED long worker_step(long i)
{
	return i;
}

static void *worker(void *arg)
{
	long i, *sum = arg;

	for (i = 1; i <= 20000; i++)
		*sum += worker_step(i);
	return NULL;
}

/* Loads DIR/libplug_NAME.so and sums plug_work(1..n); -1 on failure. */
static long run_plugin(const char *dir, const char *name, int n, bool unload)
{
	char path[PATH_MAX];
	long (*work)(long), sum = 0;
	void *h;
	int k;

	snprintf(path, sizeof(path), "%s/libplug_%s.so", dir, name);
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		return -1;
	}
	work = (long (*)(long))dlsym(h, "plug_work");
	if (!work) {
		fprintf(stderr, "plugins: %s\n", dlerror());
		return -1;
	}
	for (k = 1; k <= n; k++)
		sum += work(k);
	if (unload)
		dlclose(h);
	return sum;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], line[16];
	long a, b, wsum = 0;
	pthread_t t;
	ssize_t len;

	if (argc > 1 && !strcmp(argv[1], "wait")) {
		printf("plugins: ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 16);
	if (len <= 0)
		return 3;
	dir[len] = 0;
	strcpy(strrchr(dir, '/') + 1, "plugins.d");
	if (argc > 2 && !strcmp(argv[1], "loop")) {
		long i, n = atol(argv[2]), sum = 0;

		for (i = 0; i < n; i++) {
			a = run_plugin(dir, "a", 5, true);
			if (a < 0)
				return 3;
			sum += a;
		}
		printf("plugins: loops=%ld sum=%ld\n", n, sum);
		return 0;
	}
	before_load();
	pthread_create(&t, NULL, worker, &wsum);
	a = run_plugin(dir, "a", 5, false);
	b = run_plugin(dir, "b", 3, false);
	pthread_join(t, NULL);
	if (a < 0 || b < 0)
		return 3;
	printf("plugins: a=%ld b=%ld worker=%ld\n", a, b, wsum);
	return 0;
}

#endif
