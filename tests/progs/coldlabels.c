// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * coldlabels: bpfprof.h probes whose strings the program never reads.
 *
 * The labels live in their own read-only section, in the middle of 256 KB
 * of padding nobody touches: the kernel maps a file page on first access
 * and maps its neighbours within 64 KB along with it (fault-around), so the
 * labels' page is never mapped in this process and a BPF read of it fails.
 * The program checks that in /proc/self/pagemap (which reads page tables,
 * not the page) before the probes fire, and says so: "coldlabels: labels
 * not mapped" or "coldlabels: labels mapped" (the probes read them while
 * run() runs, and run() does not touch them).
 *
 * run() (traced) does, once:
 *   BPFPROF_MARK("cold-mark")
 *   BPFPROF_INFO("cold-key", 7)
 *   BPFPROF_INFO_STR("cold-who", "cold-value")
 *   BPFPROF_EVENT("cold-event", 5)
 *   BPFPROF_SPAN_BEGIN("cold-span") ... BPFPROF_SPAN_END("cold-span")
 * and prints "coldlabels: ok".  Built with -I include (tests/progs/flags.mk).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "bpfprof.h"
#include "progs.h"

volatile unsigned long sink;

#define COLD __attribute__((section(".coldlabels"), used))

/* 128 KB before and after: no page within fault-around distance is touched. */
COLD static const char pad_before[128 << 10] = { 1 };
COLD static const char l_mark[] = "cold-mark";
COLD static const char l_key[] = "cold-key";
COLD static const char l_who[] = "cold-who";
COLD static const char l_value[] = "cold-value";
COLD static const char l_event[] = "cold-event";
COLD static const char l_span[] = "cold-span";
COLD static const char pad_after[128 << 10] = { 1 };

/* Is the page of addr mapped in this process?  1, 0, or -1 when unknown. */
static int mapped(const void *addr)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t e;
	int fd, r = -1;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / page) * 8) == sizeof(e))
		r = (e >> 63) & 1;	/* bit 63: page present */
	close(fd);
	return r;
}

TRACED void in_span(void)
{
	sink++;
}

TRACED void run(void)
{
	BPFPROF_MARK(l_mark);
	BPFPROF_INFO(l_key, 7);
	BPFPROF_INFO_STR(l_who, l_value);
	BPFPROF_EVENT(l_event, 5);
	BPFPROF_SPAN_BEGIN(l_span);
	in_span();
	BPFPROF_SPAN_END(l_span);
	sink++;
}

int main(void)
{
	int before = mapped(l_mark);

	run();
	printf("coldlabels: labels %s\n", !before ? "not mapped" : "mapped");
	printf("coldlabels: ok\n");
	return 0;
}
