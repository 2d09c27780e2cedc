// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CPU time of every traced process (see tracer__targets_cpu_ns): the
 * threads alive now, read from /proc/PID/task/TID/schedstat (the
 * scheduler's ns, not 10 ms ticks), and those that exited since the
 * recording began, summed at their exit by bpf/trace.bpf.c (exited_cpu_ns).
 * Per thread on both sides, so that a thread is counted once whether it is
 * alive or gone (a process's /proc/PID/stat would count its dead threads
 * again).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/trace.skel.h"
#include "trace.h"
#include "internal.h"

static uint64_t process_cpu_ns(uint32_t pid, uint64_t *wait)
{
	char path[96];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		unsigned long long ns, queued;
		FILE *f;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.20s/schedstat", pid, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		switch (fscanf(f, "%llu %llu", &ns, &queued)) {
		case 2:
			*wait += queued;
			/* fall through */
		case 1:
			sum += ns;
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

uint64_t tracer__targets_cpu_ns(struct tracer *t, size_t *nprocs, uint64_t *wait,
				void (*each)(uint32_t pid, uint64_t ns, void *ctx), void *ctx)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	uint64_t sum = __atomic_load_n(&t->skel->bss->exited_cpu_ns, __ATOMIC_RELAXED);
	uint64_t queued = __atomic_load_n(&t->skel->bss->exited_wait_ns, __ATOMIC_RELAXED);
	__u32 key, next;
	void *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		uint64_t ns;

		key = next;
		prev = &key;
		ns = process_cpu_ns(key, &queued);

		if (each && ns)
			each(key, ns, ctx);
		sum += ns;
		n++;
	}
	if (nprocs)
		*nprocs = n;
	if (wait)
		*wait = queued;
	return sum;
}

