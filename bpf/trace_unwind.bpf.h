/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of trace.bpf.c (included once, there): the exception unwinder's
 * entry (unwind_enter), the re-arm of the frames it left, and the keeper's
 * view of the return probes (the unwind_slots iterator).
 */
#ifndef BPFPROF_TRACE_UNWIND_BPF_H
#define BPFPROF_TRACE_UNWIND_BPF_H

/* Stops without a record (the ring buffer was full): counted, not needed for the repair. */
__u64 unwind_unrecorded;

/*
 * Entry of the exception unwinder (libgcc's _Unwind_RaiseException, _Resume,
 * _ForcedUnwind, _Backtrace): it walks return addresses and cannot step
 * through the kernel's return trampoline -- a traced C++ program would call
 * std::terminate.  bpf_probe_write_user() is refused under kernel lockdown,
 * so the thread is held and its original return addresses are put back
 * from user space: by the keeper (user/target/keeper.c), which holds this
 * thread alone and finds the slots itself (the unwind_slots iterator), so
 * neither the stop nor the repair depends on the record below; it only
 * tells the decoder.  A thread the keeper does not trace (already under a
 * debugger) falls back to stopping its whole process (BP_STOP_SIGNAL),
 * repaired by the loader from the record, which must then be reserved.
 */
struct unwind_walk {
	struct bp_rec_unwind *r;	/* NULL: no record, only `any` */
	struct return_instance *ri;
	unsigned long tramp;
	unsigned long rearm_sp;		/* 0: collect trampolines to remove; else frames to re-arm */
	__u32 any;			/* a slot to fix was found */
};

/*
 * One pending return instance per call (bpf_loop keeps the verifier's work
 * linear).  The count lives in the record, ring buffer memory the verifier
 * does not track: a count on the stack would be walked by it one value at
 * a time (0.8 s to load call_entry instead of 10 ms); bpf_loop runs at most
 * BP_UNWIND_SLOTS steps.
 */
static long unwind_step(__u64 i, void *ctx)
{
	struct unwind_walk *w = ctx;
	struct return_instance *ri = w->ri;
	unsigned long stack, cur, orig;
	bool hit;

	if (!ri)
		return 1;
	stack = BPF_CORE_READ(ri, stack);
	orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	if (w->rearm_sp)
		/* re-arm: a frame still alive (its slot above the new call) that holds
		 * its original return address again */
		hit = stack > w->rearm_sp &&
		      !bpf_probe_read_user(&cur, sizeof(cur), (void *)stack) && cur == orig;
	else
		hit = !bpf_probe_read_user(&cur, sizeof(cur), (void *)stack) && cur == w->tramp;
	if (hit) {
		struct bp_rec_unwind *r = w->r;

		w->any = 1;
		if (r) {
			__u32 n = r->n;

			r->slot[n & (BP_UNWIND_SLOTS - 1)] = stack;
			r->orig[n & (BP_UNWIND_SLOTS - 1)] = orig;
			r->n = n + 1;
		}
	}
	w->ri = BPF_CORE_READ(ri, next);
	return 0;
}

/*
 * Lists the current thread's armed slots (rearm_sp 0) or its alive frames
 * holding their original return address again (rearm_sp: the new call's
 * sp), holds it when there is anything to do, and sends the record.
 */
static __always_inline int unwind_hold(__u16 type, __u64 id, unsigned long sp,
				       unsigned long rearm_sp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id(), stopped = BP_STOP_NONE;
	struct unwind_walk w = { 0 };
	struct bp_rec_unwind *r;
	bool keeper = keeper_holds(t);

	batch_flush();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		/* The fallback repairs from the record: no record, no stop. */
		if (!keeper)
			return 0;
		__sync_fetch_and_add(&unwind_unrecorded, 1);
	}
	if (r)
		r->n = 0;
	w.r = r;
	w.tramp = trampoline_vaddr(t);
	w.rearm_sp = rearm_sp;
	w.ri = BPF_CORE_READ(t, utask, return_instances);
	if (w.tramp)
		bpf_loop(MAX_RETURN_INSTANCES, unwind_step, &w, 0);
	if (w.any && keeper)
		stopped = hold_for_keeper(type == BP_REC_REARM ? BP_HOLD_REARM : BP_HOLD_UNWIND,
					  rearm_sp);
	else if (w.any && !bpf_send_signal_thread(SIGSTOP))
		stopped = BP_STOP_SIGNAL;
	if (!r)
		return stopped;
	rec_hdr(&r->h, type, 0, cpu, id);
	r->sp = sp;
	r->trampoline = w.tramp;
	r->stopped = stopped;
	bpf_ringbuf_submit(r, stopped == BP_STOP_SIGNAL ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return stopped;
}

/*
 * The first traced call after an exception: the frames above the handler
 * were given their real return addresses for the unwinder; put the
 * trampolines back so their returns are seen (written from user space
 * while the thread is held).
 */
__noinline int rearm_frames(__u64 id, unsigned long sp)
{
	__u32 tid = id;

	if (bpf_map_delete_elem(&rearm, &tid))
		return 0;
	__sync_fetch_and_add(&rearm_pending, -1);
	unwind_hold(BP_REC_REARM, id, sp, sp);
	return 0;
}

SEC("uprobe.multi")
int BPF_KPROBE(unwind_enter)
{
	__u64 id = bpf_get_current_pid_tgid();

	/* Not is_traced(): even after the recording is paused, return trampolines
	 * stay on the stacks until those calls return, and the unwinder must not
	 * meet them. */
	if (!is_member(id >> 32))
		return 0;
	/* Held before the unwinder runs a second instruction; resumed once repaired. */
	if (unwind_hold(BP_REC_UNWIND, id, PT_REGS_SP(ctx), 0) &&
	    !bpf_map_update_elem(&rearm, &(__u32){ (__u32)id }, &(__u8){ 1 }, BPF_NOEXIST))
		__sync_fetch_and_add(&rearm_pending, 1);
	return 0;
}

/*
 * The keeper's view of the return probes: for each task (of the process or
 * thread the iterator is created for) with pending return instances, the
 * slots they hijacked and the addresses those held.  Read while the task is
 * held, so the list does not move.
 */
struct slots_walk {
	struct seq_file *seq;
	struct return_instance *ri;
	struct bp_ret_slot o;
};

static long slots_step(__u64 i, void *ctx)
{
	struct slots_walk *w = ctx;
	struct return_instance *ri = w->ri;

	if (!ri)
		return 1;
	w->o.slot = BPF_CORE_READ(ri, stack);
	w->o.orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	bpf_seq_write(w->seq, &w->o, sizeof(w->o));
	w->ri = BPF_CORE_READ(ri, next);
	return 0;
}

SEC("iter/task")
int unwind_slots(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct slots_walk w = { 0 };

	if (!t)
		return 0;
	w.ri = BPF_CORE_READ(t, utask, return_instances);
	if (!w.ri)
		return 0;
	w.seq = ctx->meta->seq;
	w.o.tid = BPF_CORE_READ(t, pid);
	w.o.trampoline = trampoline_vaddr(t);
	bpf_loop(MAX_RETURN_INSTANCES, slots_step, &w, 0);
	return 0;
}

#endif
