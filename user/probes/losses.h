/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring buffer reserve failures: every BPF object (trace, sample, usdt) counts
 * its own per CPU in a .bss array of BP_MAX_CPUS; the capture adds them up.
 * One contract for all three *__lost() functions: they ADD their counts into
 * per_cpu (the caller zeroes it) and return their own total.
 */
#ifndef BPFPROF_CAPTURE_LOSSES_H
#define BPFPROF_CAPTURE_LOSSES_H

#include <stddef.h>
#include <stdint.h>
#include "bpf/events.h"

static inline uint64_t losses__add(const uint64_t *counters, uint64_t *per_cpu, size_t ncpu)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < BP_MAX_CPUS; i++) {
		uint64_t v = __atomic_load_n(&counters[i], __ATOMIC_RELAXED);

		if (per_cpu && i < ncpu)
			per_cpu[i] += v;
		sum += v;
	}
	return sum;
}

#endif
