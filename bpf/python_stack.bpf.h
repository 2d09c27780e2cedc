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

/* The frame walk's state, between the calls of walk_frame(). */
struct py_walk {
	const struct bp_py_cfg *c;
	struct bp_rec_pystack *r;
	__u64 pid_tgid;
	__u64 frame;		/* the next frame to look at (0: none) */
	__u64 gen;		/* the previous frame, if a generator's (0: not) */
	__u64 tgen;		/* the first chain end: trio's candidate */
	__u32 n, tries, tgen_at, pad;
};

/*
 * bpf_loop() body: frame i of the walk; 1 ends it.  A callback: the
 * verifier checks it once, where the unrolled walk (64 frames, each with its
 * code object to name) cost it 860,000 of its 1,000,000 instructions, and
 * looking for trio's task took it past them.
 */
static long walk_frame(__u32 i, void *arg)
{
	struct py_walk *w = arg;
	const struct bp_py_cfg *c = w->c;
	struct bp_rec_pystack *r = w->r;
	__u64 frame = w->frame, code;
	__u8 entry = 0, owner = 0;
	__u32 k;

	if (!frame || i >= BP_PY_MAX_FRAMES)
		return 1;
	code = rd64(frame + c->frame_code);
	if (!code)
		return 1;
	bpf_probe_read_user(&entry, 1, (void *)(frame + c->frame_is_entry));
	name_code(c, w->pid_tgid >> 32, w->pid_tgid, code);
	k = i;
	barrier_var(k);		/* the mask stays: i's bound does not survive name_code() */
	r->frames[k & (BP_PY_MAX_FRAMES - 1)] =
		code | (entry != (c->entry_mark ? c->entry_mark : 1) ? 0 : c->entry_shim ? 3 : 1);
	w->n = i + 1;
	/*
	 * The running Task: the outermost coroutine of the innermost chain
	 * whose caller is not a coroutine (Handle._run), tried at the first few
	 * such ends of a chain (a generator driven by plain code is one too).
	 * The first such end is trio's candidate too (trio steps its tasks from
	 * a generator, unrolled_run: the chain ends one frame further out),
	 * looked at once after the walk.
	 */
	if (c->task_coro && !r->task && w->tries < 4) {
		bpf_probe_read_user(&owner, 1, (void *)(frame + c->frame_owner));
		if (w->gen && owner != c->owned_by_generator) {
			if (!w->tgen) {
				w->tgen = w->gen;
				w->tgen_at = i - 1;
			}
			r->task = task_of(c, w->gen, frame);
			r->task_at = i - 1;
			w->tries++;
		}
		w->gen = owner == c->owned_by_generator ? frame : 0;
	}
	w->frame = rd64(frame + c->frame_previous);
	return 0;
}

/* Sends the Python frames of the current thread if its process runs CPython. */
static __always_inline void py_stack_emit(__u64 pid_tgid, __u32 cpu)
{
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, i, n;
	struct bp_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = { .pid_tgid = pid_tgid };
	struct bp_rec_pystack *r;
	__u64 interp, ts = 0, task;
	__u16 flags = 0;

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
	w.frame = rd64(ts + p->off.tstate_cframe);
	w.frame = w.frame ? rd64(w.frame + p->off.cframe_frame) : 0;
	w.c = &p->off;
	w.r = r;
	r->task = 0;
	r->task_at = 0;
	bpf_loop(BP_PY_MAX_FRAMES, walk_frame, &w, 0);
	n = w.n;
	if (!r->task && w.tgen && w.tgen_at) {
		r->task = trio_running(&p->off, w.tgen);
		r->task_at = w.tgen_at - 1;	/* the frame it runs: just inside tgen */
		if (r->task)
			flags |= BP_PYSTACK_TRIO;
	}
	task = r->task;
	if (task)
		name_task(&p->off, tgid, pid_tgid, task,
			  flags & BP_PYSTACK_TRIO ? p->off.trio_task_name : p->off.task_name, false);
	for (i = 0; i < BP_PY_MAX_AWAITERS; i++) {
		task = flags & BP_PYSTACK_TRIO ? trio_awaiter_of(&p->off, task) :
		       awaiter_of(&p->off, task);
		r->awaited_by[i] = task;
		if (!task)
			break;
		name_task(&p->off, tgid, pid_tgid, task,
			  flags & BP_PYSTACK_TRIO ? p->off.trio_task_name : p->off.task_name, false);
	}
	rec_hdr(&r->h, BP_REC_PYSTACK,
		flags | (w.frame && n == BP_PY_MAX_FRAMES ? BP_PYSTACK_CUT : 0), cpu, pid_tgid);
	r->n = n;
	if (bpf_ringbuf_output(&rb, r, offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)) > sizeof(*r) ? sizeof(*r) :
			       offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)), BPF_RB_NO_WAKEUP))
		count_lost(cpu);
}

#endif
