// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampling: a perf_event program on cpu-clock takes the user and kernel
 * stacks of the traced processes (or of every process with -a); with
 * --offcpu, sched_switch records where a traced thread blocks and how long.
 *
 * The ring buffer and the set of traced processes are the call tracer's
 * (the loader makes this object reuse trace.bpf.c's maps), so samples and
 * calls arrive in one stream, in order.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool trace_all = false;	/* -a */
const volatile bool kernel_stacks = true;
const volatile __u64 period_ns = 1000000;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* replaced by trace.bpf.c's ring buffer */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/* A stack is built here, then copied out at its real size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_rec_sample);
} scratch SEC(".maps");

/* Off-cpu: when each blocked traced thread went off cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_start SEC(".maps");

__u64 lost[BP_MAX_CPUS];
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


static __always_inline void count_lost(__u32 cpu)
{
	if (cpu < BP_MAX_CPUS)
		__sync_fetch_and_add(&lost[cpu], 1);
}

/* Fills the scratch record with the current task's stacks and sends it. */
static __always_inline int emit_stack(void *ctx, __u64 pid_tgid, __u16 flags, __u64 period)
{
	__u32 zero = 0, cpu = bpf_get_smp_processor_id();
	struct bp_rec_sample *r = bpf_map_lookup_elem(&scratch, &zero);
	long n;
	__u32 nu = 0, nk = 0;
	__u64 size;

	if (!r)
		return 0;
	r->h.type = BP_REC_SAMPLE;
	r->h.flags = flags;
	r->h.cpu = cpu;
	r->h.ts = bpf_ktime_get_ns();
	r->h.pid_tgid = pid_tgid;
	r->period = period;
	bpf_get_current_comm(&r->comm, sizeof(r->comm));
	n = bpf_get_stack(ctx, r->ips, BP_MAX_USER_FRAMES * 8, BPF_F_USER_STACK);
	if (n > 0)
		nu = (__u32)n / 8;
	if (nu > BP_MAX_USER_FRAMES)
		nu = BP_MAX_USER_FRAMES;
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, &r->ips[nu], BP_MAX_KERN_FRAMES * 8, 0);
		if (n > 0)
			nk = (__u32)n / 8;
		if (nk > BP_MAX_KERN_FRAMES)
			nk = BP_MAX_KERN_FRAMES;
	}
	r->nuser = nu;
	r->nkern = nk;
	size = BP_SAMPLE_HDR_SIZE + 8 * (__u64)(nu + nk);
	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&rb, r, size, BPF_RB_NO_WAKEUP))
		count_lost(cpu);
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	/* pid 0 is the idle task: nothing to attribute */
	if ((__u32)id == 0 || !is_traced(id >> 32))
		return 0;
	return emit_stack(ctx, id, 0, period_ns);
}

#define TASK_RUNNING 0

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid), next_tid = BPF_CORE_READ(next, pid);
	__u32 prev_tid = BPF_CORE_READ(prev, pid);
	__u64 now, *start;

	/* prev blocks (not merely preempted): remember when, and where (its stack). */
	if (prev_tid && !preempt && BPF_CORE_READ(prev, __state) != TASK_RUNNING &&
	    is_traced(prev_tgid)) {
		now = bpf_ktime_get_ns();
		if (!bpf_map_update_elem(&offcpu_start, &prev_tid, &now, BPF_ANY))
			emit_stack(ctx, (__u64)prev_tgid << 32 | prev_tid, BP_SAMPLE_OFFCPU, 0);
	}
	/* next was blocked: how long. */
	start = bpf_map_lookup_elem(&offcpu_start, &next_tid);
	if (start) {
		struct bp_rec_switch *r;
		__u32 cpu = bpf_get_smp_processor_id();

		now = bpf_ktime_get_ns();
		r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
		if (r) {
			r->h.type = BP_REC_SWITCH;
			r->h.flags = 0;
			r->h.cpu = cpu;
			r->h.ts = now;
			r->h.pid_tgid = (__u64)BPF_CORE_READ(next, tgid) << 32 | next_tid;
			r->blocked_ns = now - *start;
			bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		} else {
			count_lost(cpu);
		}
		bpf_map_delete_elem(&offcpu_start, &next_tid);
	}
	return 0;
}
