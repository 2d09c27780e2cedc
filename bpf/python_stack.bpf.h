/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Python frames for sampled stacks, read from the interpreter's frame chain
 * at sample time (no ptrace, nothing stopped): the sampled thread's
 * PyThreadState is found in its interpreter's thread list by its native
 * thread id (the thread holding the GIL may be another), then
 * cframe->current_frame and the frames' `previous` links are followed.
 * Each code object met is named once per process (python_code.bpf.h),
 * before the stack that needs it.  BPF-only; included by sample.bpf.c
 * after common.bpf.h.
 */
#ifndef BPFPROF_PYTHON_STACK_BPF_H
#define BPFPROF_PYTHON_STACK_BPF_H

#include "python.h"
#include "python_code.bpf.h"

/* tgid -> where its interpreter is (set by the loader for CPython processes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct bp_py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bp_rec_pystack);
} py_scratch SEC(".maps");

#define PY_MAX_THREADS	64

/* Sends the Python frames of the current thread if its process runs CPython. */
static __always_inline void py_stack_emit(__u64 pid_tgid, __u32 cpu)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, i, n = 0, tries = 0;
	struct bp_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct bp_rec_pystack *r;
	__u64 interp, ts = 0, frame, gen = 0, task;

	if (!p)
		return;
	r = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!r)
		return;
	interp = rd64(p->runtime + p->off.runtime_interp);
	if (interp)
		ts = rd64(interp + p->off.interp_threads);
	for (i = 0; i < PY_MAX_THREADS && ts; i++) {
		if (rd64(ts + p->off.tstate_native_tid) == tid)
			break;
		ts = rd64(ts + p->off.tstate_next);
	}
	if (!ts || i == PY_MAX_THREADS)
		return;		/* not a Python thread (or not registered yet) */
	frame = rd64(ts + p->off.tstate_cframe);
	frame = frame ? rd64(frame + p->off.cframe_frame) : 0;
	r->task = 0;
	r->task_at = 0;
	for (i = 0; i < BP_PY_MAX_FRAMES && frame; i++) {
		__u64 code = rd64(frame + p->off.frame_code);
		__u8 entry = 0, owner = 0;

		if (!code)
			break;
		bpf_probe_read_user(&entry, 1, (void *)(frame + p->off.frame_is_entry));
		name_code(&p->off, tgid, pid_tgid, code);
		r->frames[i & (BP_PY_MAX_FRAMES - 1)] =
			code | (entry != (p->off.entry_mark ? p->off.entry_mark : 1) ? 0 :
				p->off.entry_shim ? 3 : 1);
		n = i + 1;
		/*
		 * The running Task: the outermost coroutine of the innermost
		 * chain whose caller is not a coroutine (Handle._run), tried at
		 * the first few such ends of a chain (a generator driven by plain
		 * code is one too).
		 */
		if (p->off.task_coro && !r->task && tries < 4) {
			bpf_probe_read_user(&owner, 1, (void *)(frame + p->off.frame_owner));
			if (gen && owner != p->off.owned_by_generator) {
				r->task = task_of(&p->off, gen, frame);
				r->task_at = i - 1;
				tries++;
			}
			gen = owner == p->off.owned_by_generator ? frame : 0;
		}
		frame = rd64(frame + p->off.frame_previous);
	}
	task = r->task;
	if (task)
		name_task(&p->off, tgid, pid_tgid, task, p->off.task_name, false);
	for (i = 0; i < BP_PY_MAX_AWAITERS; i++) {
		task = awaiter_of(&p->off, task);
		r->awaited_by[i] = task;
		if (!task)
			break;
		name_task(&p->off, tgid, pid_tgid, task, p->off.task_name, false);
	}
	rec_hdr(&r->h, BP_REC_PYSTACK, frame && n == BP_PY_MAX_FRAMES ? BP_PYSTACK_CUT : 0, cpu,
		pid_tgid);
	r->n = n;
	if (bpf_ringbuf_output(&rb, r, offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)) > sizeof(*r) ? sizeof(*r) :
			       offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)), BPF_RB_NO_WAKEUP))
		count_lost(cpu);
}

#endif
