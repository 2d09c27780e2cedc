/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-function aggregates of decoded calls (calls, inclusive and self time,
 * min, max): the summary printed after a recording.  Memory is one row per
 * function.
 */
#ifndef BPFPROF_STATS_H
#define BPFPROF_STATS_H

#include <stdio.h>
#include <stdint.h>
#include "session.h"

struct func_stats {
	uint64_t calls;
	uint64_t total;		/* inclusive ns (recursive calls each count) */
	uint64_t self;
	uint64_t min, max;
};

struct stats {
	struct func_stats *f;
	size_t n;
};

void stats__init(struct stats *st);
void stats__add(struct stats *st, const struct bp_call *c);
void stats__free(struct stats *st);
/* Prints the `top` functions by total time as an aligned table. */
void stats__print_top(const struct stats *st, const struct bp_session *s, FILE *out, size_t top);

#endif
