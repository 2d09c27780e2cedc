/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the three BPF objects (trace, sample, usdt) share: the ring buffer
 * and the set of traced processes (the loader makes sample and usdt reuse
 * trace's maps, so there is one stream and one set), the per-CPU loss
 * counters and the pause flag in each object's .bss, and the filters built
 * on them.  BPF-only: include after vmlinux.h, bpf_helpers.h and events.h.
 */
#ifndef BPFPROF_COMMON_BPF_H
#define BPFPROF_COMMON_BPF_H

const volatile bool trace_all = false;	/* -a: every process */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by the loader (--buffer-size), or trace's reused */
} rb SEC(".maps");

/* The traced thread groups: tgid -> BP_TGID_RECORDING or BP_TGID_GATED. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/* Ring buffer reserve failures, per CPU; the loader reads .bss directly. */
__u64 lost[BP_MAX_CPUS];

/* Set by the loader when the recording ends, before the last drain. */
volatile __u32 paused;

/* Is this process being recorded now (traced, and inside its --gated window)? */
static __always_inline bool is_traced(__u32 tgid)
{
	__u8 *v;

	if (paused)
		return false;
	if (trace_all)
		return true;
	v = bpf_map_lookup_elem(&tgids, &tgid);
	return v && *v == BP_TGID_RECORDING;
}

/* Is this process one of ours at all (for fork/exit/exec bookkeeping)? */
static __always_inline bool is_member(__u32 tgid)
{
	return trace_all || bpf_map_lookup_elem(&tgids, &tgid);
}

static __always_inline void count_lost(__u32 cpu)
{
	if (cpu < BP_MAX_CPUS)
		__sync_fetch_and_add(&lost[cpu], 1);
}

#endif
