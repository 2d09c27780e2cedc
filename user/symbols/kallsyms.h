/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's function symbols (/proc/kallsyms), for the kernel frames
 * of sampled stacks.
 */
#ifndef BPFPROF_KALLSYMS_H
#define BPFPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	char *name;
};

struct kallsyms {
	struct ksym *v;		/* sorted by addr */
	size_t n;
};

/* Reads /proc/kallsyms (none when it cannot be read: every frame is then unknown). */
void kallsyms__load(struct kallsyms *k);
/* The function holding ip (the last one at or below it), or NULL. */
const struct ksym *kallsyms__find(const struct kallsyms *k, uint64_t ip);
void kallsyms__free(struct kallsyms *k);
/*
 * The address ranges [lo, hi) of the kernel functions names[] (n of them),
 * without keeping the table; one not found gets 0, 0.  The count found.
 */
size_t kallsyms__ranges(const char *const *names, size_t n, uint64_t *lo, uint64_t *hi);

#endif
