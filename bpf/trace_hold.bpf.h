/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of trace.bpf.c (included once, there): holding a target's threads
 * for user space -- one thread for the keeper (hold_for_keeper()), or the
 * whole process by SIGSTOP (stop_process()) -- and the re-arm after an
 * exception at a thread's next traced call (maybe_rearm()).
 */
#ifndef BPFPROF_TRACE_HOLD_BPF_H
#define BPFPROF_TRACE_HOLD_BPF_H


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

/* The keeper's pid (user/target/keeper.c), set by the loader once it runs; 0: none. */
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

#endif
