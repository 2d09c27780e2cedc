/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of trace.bpf.c (included once, there): wakeup edges between traced
 * threads (--deps): sched_waking, the wakee running, and the interrupt
 * contexts whose wakeups are nobody's.
 */
#ifndef BPFPROF_TRACE_WAKE_BPF_H
#define BPFPROF_TRACE_WAKE_BPF_H

/* Woken traced threads not yet run again: wakee tid -> who woke it, when. */
struct waking {
	__u64 waker;
	__u64 ts;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct waking);
} wakings SEC(".maps");

static __always_inline void emit_wakeup(__u16 kind, __u64 who, __u64 other, __u64 waking_ts)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_wakeup *r;

	batch_flush();	/* the waker's current call must be known before the edge */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count_lost(cpu);
		return;
	}
	rec_hdr(&r->h, BP_REC_WAKEUP, kind, cpu, who);
	r->other = other;
	r->waking_ts = waking_ts;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * Per CPU: how many interrupt-side handlers (a device interrupt, a softirq,
 * an hrtimer's callback) are running now.  A wakeup done by one of them (a
 * sleep's timer expiring, a packet arriving) was not caused by the thread it
 * happened to interrupt.  The kernel's preempt count would say the same, but
 * it is reached only through kallsyms' data symbols, which many kernels
 * (CONFIG_KALLSYMS_ALL=n) do not list.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s32);
} irq_depth SEC(".maps");

static __always_inline int irq_depth_add(int d)
{
	__u32 zero = 0;
	__s32 *n = bpf_map_lookup_elem(&irq_depth, &zero);

	/* an exit whose entry ran before we attached leaves the count at 0 */
	if (n && (d > 0 || *n > 0))
		*n += d;
	return 0;
}

/*
 * No interrupt handler spans a context switch: the count is 0 at every one.
 * Resetting it there heals a count left high by an entry whose exit ran
 * before its program was attached (or was skipped as a nested BPF run).
 */
static __always_inline void irq_depth_reset(void)
{
	__u32 zero = 0;
	__s32 *n = bpf_map_lookup_elem(&irq_depth, &zero);

	if (n)
		*n = 0;
}

static __always_inline bool in_interrupt_ctx(void)
{
	__u32 zero = 0;
	__s32 *n = bpf_map_lookup_elem(&irq_depth, &zero);

	return n && *n > 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(wake_irq_in) { return irq_depth_add(1); }
SEC("tp_btf/irq_handler_exit")
int BPF_PROG(wake_irq_out) { return irq_depth_add(-1); }
SEC("tp_btf/softirq_entry")
int BPF_PROG(wake_softirq_in) { return irq_depth_add(1); }
SEC("tp_btf/softirq_exit")
int BPF_PROG(wake_softirq_out) { return irq_depth_add(-1); }
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(wake_hrtimer_in) { return irq_depth_add(1); }
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(wake_hrtimer_out) { return irq_depth_add(-1); }

/*
 * sched_waking runs in the waker's context (sched_wakeup may run on the
 * wakee's CPU, in an interrupt): the waker's current call is the cause.
 * A wakeup from an interrupt has no waker among the traced threads.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(wake_waking, struct task_struct *p)
{
	__u64 waker = bpf_get_current_pid_tgid();
	__u32 wakee_tid = BPF_CORE_READ(p, pid);
	struct waking w;

	if (!wakeups || !is_traced(waker >> 32) || !is_member(BPF_CORE_READ(p, tgid)) ||
	    wakee_tid == (__u32)waker || in_interrupt_ctx())
		return 0;
	w.waker = waker;
	w.ts = bpf_ktime_get_ns();
	/*
	 * WAKING is sent before the wakee can be found in `wakings`: a wakee
	 * still on a run queue may be switched in on another CPU while we run,
	 * and its RUNNING must not reach the decoder first.
	 */
	emit_wakeup(BP_WAKE_WAKING, waker, task_id(p), w.ts);
	if (bpf_map_update_elem(&wakings, &wakee_tid, &w, BPF_ANY))
		return 0;
	/*
	 * On a CPU now: it never left it (it was preempted or stalled after it
	 * set itself asleep), or it is switching out and the wakeup will wait
	 * for that.  Either way it resumes in the call it is in now; it may
	 * never be switched in for this wakeup, so its end is sent here.
	 */
	if (BPF_CORE_READ(p, on_cpu) && !bpf_map_delete_elem(&wakings, &wakee_tid))
		emit_wakeup(BP_WAKE_STAYED, task_id(p), waker, w.ts);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(wake_running, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 tid = BPF_CORE_READ(next, pid);
	struct waking *w;

	if (!wakeups)
		return 0;
	irq_depth_reset();
	w = bpf_map_lookup_elem(&wakings, &tid);
	if (!w)
		return 0;
	emit_wakeup(BP_WAKE_RUNNING, task_id(next), w->waker, w->ts);
	bpf_map_delete_elem(&wakings, &tid);
	return 0;
}

#endif
