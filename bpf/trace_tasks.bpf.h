/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Part of trace.bpf.c (included once, there): the task tracepoints (fork,
 * exit, rename, exec, SIGCONT) that keep the traced set and the names
 * current, and the dynamic linker's hook (dl_state).
 */
#ifndef BPFPROF_TRACE_TASKS_BPF_H
#define BPFPROF_TRACE_TASKS_BPF_H

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
 * the live ones' (user/probes/trace_cpu.c), what the traced processes cost.
 * And their time runnable but waiting for a CPU (the scheduler's run_delay,
 * schedstat's second figure): what the governor weighs bpfprof's own CPU
 * against.
 */
__u64 exited_cpu_ns;
__u64 exited_wait_ns;

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
	if (bpf_core_field_exists(p->sched_info.run_delay))
		__sync_fetch_and_add(&exited_wait_ns, BPF_CORE_READ(p, sched_info.run_delay));
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

/*
 * Executables whose new processes need nothing more before they run: their
 * probes are in place (the links are per file) and nothing else is done for
 * them at exec (user/capture/targets.c capture_follow_exec()).  Filled by
 * user space; an exec of one of them is not held.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct bp_file_key);
	__type(value, __u8);
} exec_known SEC(".maps");

static __always_inline bool exec_is_known(struct linux_binprm *bprm)
{
	struct bp_file_key k = {
		.ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
		.dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
	};

	return bpf_map_lookup_elem(&exec_known, &k) != NULL;
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
	 * Not when the image is one whose probes are in place (exec_known).
	 */
	r->stopped = BP_STOP_NONE;
	/* an image whose probes are in place has nothing to wait for */
	if (stop_on_exec && !exec_is_known(bprm))
		r->stopped = keeper_holds(p) ? hold_for_keeper(BP_HOLD_EXEC, 0) :
			     stop_process(r->h.ts);
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

#endif
