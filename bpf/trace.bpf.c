// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Function call tracing: uprobe/uretprobe programs attached with uprobe_multi
 * links (cookie = function id), plus the task lifetime tracepoints that keep
 * the set of traced processes and the thread names current.
 *
 * The entry/exit programs run on every traced call, so they do the least
 * possible: one bit test to filter by process (the `recording` bitmap), the
 * record written into this CPU's batch, and one ring buffer output per
 * BP_BATCH_RECS records, without wakeup (the loader drains the buffer on its
 * own schedule; a wakeup per record would cost more than the probe itself).
 * What is left per event is mostly bpf_ktime_get_ns() (~25 ns here).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile bool follow_forks = true;	/* add forked children to the traced set */
const volatile bool stop_on_exec = false;	/* hold exec'd images until probes are attached */
const volatile bool wakeups = false;		/* wakeup edges between traced threads */
const volatile bool start_gated = false;	/* --gated: a launched command starts outside the window */

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


/*
 * Threads whose return addresses were put back for the exception unwinder
 * (tid -> 1): at their next traced call, the frames that survived the
 * exception get their return trampolines back (BP_REC_REARM).  The entry path
 * looks here only while rearm_pending is non-zero.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} rearm SEC(".maps");
__u64 rearm_pending;

/*
 * Threads that stopped themselves for the keeper: tid -> struct bp_hold
 * (bpf/events.h).  Preallocated: the update that precedes a stop never
 * allocates, and fails only with 16384 threads waiting at once.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct bp_hold);
} holds SEC(".maps");

/* The keeper's pid (user/capture/keeper.c), set by the loader once it runs; 0: none. */
__u32 keeper_tgid;

/*
 * Processes stopped whole with SIGSTOP at an exec or a dlopen (no keeper
 * holds them): tgid -> the time of the stop.  Written after the signal is
 * queued; the entry goes when a SIGCONT reaches the process (cont_sent
 * below), and when the process dies (its pid may then be anyone's).  If bpfprof dies first,
 * its keeper (or guard) continues every process still listed, so that none
 * is left stopped.  Preallocated, like `holds`.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} sig_stops SEC(".maps");

/* Stops without a record (the ring buffer was full): counted, not needed for the repair. */
__u64 unwind_unrecorded;

/*
 * The overhead governor (user/capture/governor.c) spreads functions over
 * groups, each with its own pair of uprobe_multi links; dropping functions
 * re-creates one group's links without them.  Every probe cookie names its
 * group and the generation of its link (bpf/events.h); gov_groups[group]
 * says which generation is recorded.  Nothing is missed or counted twice
 * while old and new links of a group are both attached: the kernel runs a
 * hit's consumers newest first (consumer_add() puts a new one at the head
 * of the uprobe's list), and a return whose entry went through the old link
 * reaches the new link's return consumer too (non-session return consumers
 * are called for every pending return instance of the uprobe).  So:
 *   A. new links attached, word = old generation: the new handler records
 *      nothing and clears the thread's mark; the old handler records.
 *   X. word = new | old: the new handler records and sets the thread's
 *      mark; the old handler, always after it in the same hit, sees the mark,
 *      clears it and records nothing; a dropped function's old handler
 *      records nothing.  Lasts until the old links are destroyed.
 *   then word = new generation only.
 * A hit that straddles A -> X (new handler in A, old in X) is recorded once
 * by the old handler: the mark was cleared.  Only one move happens while
 * both links exist: X ends after the old links are gone.
 */
__u32 gov_groups[BP_GOV_GROUPS];

/* The thread's note between the two handlers of one hit. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} gov_marks SEC(".maps");

/* Functions dropped by the governor: their old link records nothing during X. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} gov_dropped SEC(".maps");

/*
 * Hits of dropped functions on old links not yet gone (their removal waits
 * for a grace period): what the drop does not save yet, for the estimate.
 */
__u64 gov_dropped_hits;

/* A hit on a link whose generation is not the stable one of its group (see above). */
static __noinline int gov_slow(__u64 cookie, __u32 w)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 gen = (cookie >> BP_GOV_GEN_SHIFT) & BP_GOV_GEN_MASK, old1 = w >> 16;
	__u32 func = (__u32)cookie;
	__u32 *m;

	if (!old1) {
		/*
		 * A: a link being made; or an old link still there after X
		 * (its removal is under way): it records nothing
		 */
		if (bpf_map_lookup_elem(&gov_dropped, &func))
			__sync_fetch_and_add(&gov_dropped_hits, 1);
		m = bpf_task_storage_get(&gov_marks, task, 0, 0);
		if (m)
			*m = 0;
		return 0;
	}
	if (gen == (w & 0xffff)) {
		m = bpf_task_storage_get(&gov_marks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (m)
			*m = 1;
		return 1;
	}
	if (gen != old1 - 1)
		return 0;
	if (bpf_map_lookup_elem(&gov_dropped, &func)) {
		__sync_fetch_and_add(&gov_dropped_hits, 1);
		return 0;
	}
	m = bpf_task_storage_get(&gov_marks, task, 0, 0);
	if (m && *m) {
		*m = 0;
		return 0;
	}
	return 1;
}

/* Is this hit recorded?  One load and a compare unless its group is being re-linked. */
static __always_inline bool gov_accept(__u64 cookie)
{
	__u32 w = gov_groups[(cookie >> BP_GOV_GROUP_SHIFT) & (BP_GOV_GROUPS - 1)];

	return w == ((cookie >> BP_GOV_GEN_SHIFT) & BP_GOV_GEN_MASK) || gov_slow(cookie, w);
}

/* The kernel keeps at most this many pending return instances per thread. */
#define MAX_RETURN_INSTANCES BP_UNWIND_SLOTS
#define SIGSTOP 19
#define SIGCONT 18
#define PT_PTRACED 0x1

static __always_inline unsigned long trampoline_vaddr(struct task_struct *t)
{
	return BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);
}

/* Is this thread traced (ptrace) by the keeper, so that it can wait alone? */
static __always_inline bool keeper_holds(struct task_struct *t)
{
	__u32 k = keeper_tgid;

	return k && (BPF_CORE_READ(t, ptrace) & PT_PTRACED) && BPF_CORE_READ(t, parent, tgid) == k;
}

/*
 * Holds the current thread for the keeper: the request first, then a
 * SIGSTOP to this thread alone.  Under ptrace that is a signal-delivery
 * stop of this thread only (no group stop, nothing for its parent to see),
 * which the keeper ends without the signal.  SIGSTOP because it cannot be
 * blocked: the stop happens before the thread runs another instruction of
 * its own.  Returns BP_STOP_KEEPER, or BP_STOP_NONE when it could not.
 */
static __always_inline __u32 hold_for_keeper(__u32 kind, __u64 sp)
{
	struct bp_hold h = { .kind = kind, .sp = sp };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (bpf_map_update_elem(&holds, &tid, &h, BPF_ANY))
		return BP_STOP_NONE;
	if (bpf_send_signal_thread(SIGSTOP)) {
		bpf_map_delete_elem(&holds, &tid);
		return BP_STOP_NONE;
	}
	return BP_STOP_KEEPER;
}

/*
 * Stops the current process whole (SIGSTOP), then notes it in sig_stops:
 * the fallback where no keeper holds the thread.  In that order: whoever
 * sees the entry (the loader, the guard) and sends SIGCONT finds the stop
 * already queued, and a SIGCONT discards a queued stop; the other way round,
 * a SIGCONT sent between the two went before the stop, which then held the
 * process with nobody to let it go (the guard, continuing in a loop while
 * a killed bpfprof's links went: 1 run in 3 of test_dlfollow's kill test).
 * BP_STOP_SIGNAL, or BP_STOP_NONE when it could not (the process runs on).
 */
static __always_inline __u32 stop_process(__u64 ts)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (bpf_send_signal(SIGSTOP))
		return BP_STOP_NONE;
	if (bpf_map_update_elem(&sig_stops, &tgid, &ts, BPF_ANY)) {
		bpf_send_signal(SIGCONT);	/* unlisted: nobody would continue it */
		return BP_STOP_NONE;
	}
	return BP_STOP_SIGNAL;
}

__noinline int rearm_frames(__u64 id, unsigned long sp);

/* After an exception: is this thread's first call the one to re-arm at? */
static __always_inline void maybe_rearm(__u64 id, unsigned long sp)
{
	__u32 tid = id;

	if (rearm_pending && bpf_map_lookup_elem(&rearm, &tid))
		rearm_frames(id, sp);
}

static __always_inline void fill_call(struct bp_rec_call *r, struct pt_regs *ctx, __u16 type,
				      __u64 id, __u32 cpu)
{
	rec_hdr(&r->h, type, 0, cpu, id);
	r->func_id = (__u32)bpf_get_attach_cookie(ctx);	/* the governor's bits above */
	r->pad = 0;
	r->sp = PT_REGS_SP(ctx);
}

/*
 * What every call probe does first: false when the call is not recorded (not
 * a traced process, or its function dropped by the governor); at an entry,
 * the frames an exception left without their trampolines are re-armed.
 */
static __always_inline bool call_accept(struct pt_regs *ctx, __u64 id, bool entry)
{
	if (!is_traced(id >> 32) || !gov_accept(bpf_get_attach_cookie(ctx)))
		return false;
	if (entry)
		maybe_rearm(id, PT_REGS_SP(ctx));
	return true;
}

static __always_inline int emit_call(struct pt_regs *ctx, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_batch *b;
	struct bp_rec_call *r;
	__u32 n;

	if (!call_accept(ctx, id, type == BP_REC_ENTRY))
		return 0;
	b = batch_get();
	if (b) {
		n = BP_ONCE(b->n) & (BP_BATCH_RECS - 1);
		fill_call(&b->r[n], ctx, type, id, cpu);
		if (++n == BP_BATCH_RECS) {
			batch_send(b, BP_BATCH_RECS, cpu);
			n = 0;
		}
		batch_put(b, n);
		return 0;
	}
	/* the batch is held by the context this one interrupted: send it alone */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	fill_call(r, ctx, type, id, cpu);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe.multi")
int BPF_KPROBE(call_entry)
{
	return emit_call(ctx, BP_REC_ENTRY);
}

SEC("uretprobe.multi")
int BPF_KPROBE(call_exit)
{
	return emit_call(ctx, BP_REC_EXIT);
}

static __always_inline int emit_call_args(struct pt_regs *ctx, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_call_args *r;

	if (!call_accept(ctx, id, type == BP_REC_ENTRY_ARGS))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	/* the call part, laid out as a struct bp_rec_call */
	fill_call((struct bp_rec_call *)r, ctx, type, id, cpu);
	if (type == BP_REC_ENTRY_ARGS) {
		r->regs[0] = PT_REGS_PARM1(ctx);
		r->regs[1] = PT_REGS_PARM2(ctx);
		r->regs[2] = PT_REGS_PARM3(ctx);
		r->regs[3] = PT_REGS_PARM4(ctx);
		r->regs[4] = PT_REGS_PARM5(ctx);
		r->regs[5] = PT_REGS_PARM6(ctx);
	} else {
		r->regs[0] = PT_REGS_RC(ctx);
		r->regs[1] = r->regs[2] = r->regs[3] = r->regs[4] = r->regs[5] = 0;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe.multi")
int BPF_KPROBE(call_entry_args)
{
	return emit_call_args(ctx, BP_REC_ENTRY_ARGS);
}

SEC("uretprobe.multi")
int BPF_KPROBE(call_exit_ret)
{
	return emit_call_args(ctx, BP_REC_EXIT_RET);
}

/*
 * Entry of the exception unwinder (libgcc's _Unwind_RaiseException, _Resume,
 * _ForcedUnwind, _Backtrace): it walks return addresses and cannot step
 * through the kernel's return trampoline -- a traced C++ program would call
 * std::terminate.  bpf_probe_write_user() is refused under kernel lockdown,
 * so the thread is held and its original return addresses are put back
 * from user space: by the keeper (user/capture/keeper.c), which holds this
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

static __always_inline __u64 task_id(struct task_struct *t)
{
	return (__u64)BPF_CORE_READ(t, tgid) << 32 | (__u32)BPF_CORE_READ(t, pid);
}

static __always_inline struct bp_rec_task *task_rec(__u16 type, struct task_struct *t)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_task *r;

	batch_flush();	/* the task's calls so far come first */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return NULL;
	}
	rec_hdr(&r->h, type, 0, cpu, task_id(t));
	r->parent_pid_tgid = 0;
	return r;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(task_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct bp_rec_task *r;
	__u8 *state;

	if (paused || !is_member(ptgid))
		return 0;
	if (ctgid != ptgid) {
		if (!follow_forks)
			return 0;
		/* the child starts inside or outside the capture window like its parent */
		state = bpf_map_lookup_elem(&tgids, &ptgid);
		if (state && !bpf_map_update_elem(&tgids, &ctgid, state, BPF_ANY))
			set_recording(ctgid, *state == BP_TGID_RECORDING);
	}
	r = task_rec(BP_REC_FORK, child);
	if (!r)
		return 0;
	if (ctgid != ptgid)
		r->h.flags |= BP_TASK_NEW_PROCESS;
	r->parent_pid_tgid = task_id(parent);
	BPF_CORE_READ_STR_INTO(&r->comm, child, comm);
	/* Wake the loader: forks are rare and it may want to attach to the child. */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * CPU time of the traced threads that exited (ns, their whole lives): with
 * the live ones' (user/capture/trace_cpu.c), what the traced processes cost.
 */
__u64 exited_cpu_ns;

/*
 * A SIGCONT to a process listed in sig_stops: its stop is over, the entry
 * goes.  Here, not in the loader after its SIGCONT: this tracepoint runs
 * with the target's signal lock held, and the target cannot leave its stop,
 * run on and stop again (listing itself anew) before the lock is dropped.
 * The loader's lookup-then-delete after the SIGCONT could delete that next
 * stop's entry, and nobody then continued it (test_dlfollow's loop of 300
 * dlopens, held for ever in about 1 run of 10 under load).
 */
SEC("tp_btf/signal_generate")
int BPF_PROG(cont_sent, int sig, struct kernel_siginfo *info, struct task_struct *task)
{
	__u32 tgid;

	if (sig != SIGCONT)
		return 0;
	tgid = BPF_CORE_READ(task, tgid);
	bpf_map_delete_elem(&sig_stops, &tgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(task_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct bp_rec_task *r;
	bool group_dead;

	/* signal->live was decremented before this tracepoint: 0 means last thread. */
	group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	/*
	 * A process stopped whole that dies is no longer to be continued: its
	 * entry goes before its pid can be reused, so that the loader, or the
	 * guard, never continues the next owner of that pid (issue 27).
	 * Even when paused or no longer a member.
	 */
	if (group_dead)
		bpf_map_delete_elem(&sig_stops, &tgid);
	if (paused || !is_member(tgid))
		return 0;
	__sync_fetch_and_add(&exited_cpu_ns, BPF_CORE_READ(p, se.sum_exec_runtime));
	r = task_rec(BP_REC_TASK_EXIT, p);
	if (r) {
		if (group_dead)
			r->h.flags |= BP_TASK_GROUP_DEAD;
		BPF_CORE_READ_STR_INTO(&r->comm, p, comm);
		bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	}
	/* even when the record is lost: the loader counts the members left */
	if (group_dead && !trace_all) {
		bpf_map_delete_elem(&tgids, &tgid);
		set_recording(tgid, false);
	}
	{
		__u32 tid = BPF_CORE_READ(p, pid);

		if (rearm_pending && !bpf_map_delete_elem(&rearm, &tid))
			__sync_fetch_and_add(&rearm_pending, -1);
	}
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *t, const char *comm)
{
	struct bp_rec_task *r;

	if (paused || !is_member(BPF_CORE_READ(t, tgid)))
		return 0;
	r = task_rec(BP_REC_COMM, t);
	if (!r)
		return 0;
	bpf_probe_read_kernel_str(&r->comm, sizeof(r->comm), comm);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(task_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 tgid = BPF_CORE_READ(p, tgid);
	struct bp_rec_exec *r;
	__u8 *state;

	if (paused || !is_member(tgid))
		return 0;
	/* bpfprof's launcher becomes the command: record from here on */
	state = trace_all ? NULL : bpf_map_lookup_elem(&tgids, &tgid);
	if (state && *state == BP_TGID_LAUNCHING) {
		*state = start_gated ? BP_TGID_GATED : BP_TGID_RECORDING;
		set_recording(tgid, !start_gated);
	}
	batch_flush();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	rec_hdr(&r->h, BP_REC_EXEC, 0, cpu, task_id(p));
	r->old_tid = old_pid;
	/*
	 * The new image's functions are not probed yet: stop the process before
	 * its first instruction; the loader attaches (if needed) and resumes it.
	 * Under the keeper, the thread is held by it instead (a SIGSTOP passed
	 * on by a tracer could land after the loader's SIGCONT, for good).
	 */
	r->stopped = BP_STOP_NONE;
	if (stop_on_exec && keeper_holds(p))
		r->stopped = hold_for_keeper(BP_HOLD_EXEC, 0);
	else if (stop_on_exec)
		r->stopped = stop_process(r->h.ts);
	bpf_probe_read_kernel_str(&r->filename, sizeof(r->filename), BPF_CORE_READ(bprm, filename));
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/*
 * The dynamic linker's _dl_debug_state(), which it calls (as debuggers
 * expect) after each change to the list of loaded objects: a dlopen'ed file
 * is then mapped and none of its code has run, not even its constructors.
 * Attached only when a -F LIB:GLOB names files by name (user/capture/
 * dlfollow.c): the process is held like at an exec, the loader probes the
 * files that match, then resumes it.
 */
SEC("uprobe.multi")
int BPF_KPROBE(dl_state)
{
	struct task_struct *p = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_exec *r;

	if (paused || !is_member(id >> 32))
		return 0;
	batch_flush();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	rec_hdr(&r->h, BP_REC_DLOPEN, 0, cpu, id);
	r->old_tid = 0;
	r->filename[0] = 0;
	r->stopped = BP_STOP_NONE;
	if (keeper_holds(p))
		r->stopped = hold_for_keeper(BP_HOLD_EXEC, 0);
	else
		r->stopped = stop_process(r->h.ts);
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

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

/*
 * A thread leaving a CPU takes no unsent records with it: the next CPU it
 * runs on cannot send its later calls ahead of them.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(batch_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	batch_flush();
	return 0;
}

/* Run by the loader on each CPU (BPF_PROG_TEST_RUN, in an IPI): sends what waits. */
SEC("raw_tp")
int batch_flush_cpu(void *ctx)
{
	batch_flush();
	return 0;
}
