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
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0, i, n = 0;
	struct bp_py_proc *p = bpf_map_lookup_elem(&py_procs, &tgid);
	struct bp_rec_pystack *r;
	__u64 interp, ts = 0, frame;

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
	for (i = 0; i < BP_PY_MAX_FRAMES && frame; i++) {
		__u64 code = rd64(frame + p->off.frame_code);
		__u8 entry = 0;

		if (!code)
			break;
		bpf_probe_read_user(&entry, 1, (void *)(frame + p->off.frame_is_entry));
		name_code(&p->off, tgid, pid_tgid, code);
		r->frames[i & (BP_PY_MAX_FRAMES - 1)] = code | (entry ? 1 : 0);
		n = i + 1;
		frame = rd64(frame + p->off.frame_previous);
	}
	rec_hdr(&r->h, BP_REC_PYSTACK, frame && n == BP_PY_MAX_FRAMES ? BP_PYSTACK_CUT : 0, cpu,
		pid_tgid);
	r->n = n;
	r->pad = 0;
	if (bpf_ringbuf_output(&rb, r, offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)) > sizeof(*r) ? sizeof(*r) :
			       offsetof(struct bp_rec_pystack, frames) +
			       8 * (n & (BP_PY_MAX_FRAMES * 2 - 1)), BPF_RB_NO_WAKEUP))
		count_lost(cpu);
}

#endif
