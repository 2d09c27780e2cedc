// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python calls, exact: one program on four kinds of sites of a CPython
 * binary (bpf/python.h).  CPython 3.11's function__entry USDT probe fires
 * only while a Python trace or profile function is set, so a call's start
 * is taken at the interpreter's RESUME handlers (every new frame and every
 * resumed generator runs RESUME first; its argument says which), found
 * through the computed-goto table; its end at function__return, which
 * fires for returns, yields and exceptions alike.  The frame is read from
 * the thread state (_PyRuntime.gilstate.tstate_current: the thread holding
 * the GIL is the one running bytecode), so nothing depends on the registers
 * a given build keeps it in.
 *
 * A code object is named once per process (BP_REC_PYCODE, python_code.bpf.h:
 * the process may be gone by the time userspace could read its strings).
 * Shares the ring buffer, batches and process set with trace.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"
#include "python.h"
#include "common.bpf.h"
#include "python_code.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BP_PY_MAX_CFGS);
	__type(key, __u32);
	__type(value, struct bp_py_cfg);
} py_cfgs SEC(".maps");

/* Python records that found no frame or code (not running bytecode, unreadable memory). */
__u64 py_misses;

/*
 * Code objects the overhead governor dropped: their calls are not recorded
 * (the probe still fires: it sits in the interpreter loop, for every Python
 * call).  py_ndropped: entries, so that nothing is looked up before a drop.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, BP_PY_MAX_DROPPED);
	__type(key, struct bp_py_drop_key);
	__type(value, __u8);
} py_dropped SEC(".maps");
__u32 py_ndropped;
/* Hits filtered out by py_dropped. */
__u64 py_filtered;


SEC("uprobe.multi")
int py_probe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = id >> 32, site = cookie & 0xf, slot = (cookie >> 4) & 0xf, idx = cookie >> 8;
	__u32 cpu;
	__u64 bias, tstate, cframe, frame, code, prev, previous = 0, task = 0;
	__u64 args[2] = {};
	const struct bp_py_cfg *c;
	struct bp_rec_py *r;
	__u16 insn = 0;
	__u8 kind, op;

	if (!is_traced(tgid) || site >= BP_PY_NKINDS)
		return 0;
	c = bpf_map_lookup_elem(&py_cfgs, &idx);
	if (!c || !c->addr[slot])
		return 0;
	bias = bpf_get_func_ip(ctx) - c->addr[slot];
	tstate = rd64(bias + c->runtime + c->runtime_tstate);
	cframe = tstate ? rd64(tstate + c->tstate_cframe) : 0;
	frame = cframe ? rd64(cframe + c->cframe_frame) : 0;
	code = frame ? rd64(frame + c->frame_code) : 0;
	if (!code) {
		__sync_fetch_and_add(&py_misses, 1);
		return 0;
	}
	if (py_ndropped) {
		struct bp_py_drop_key k = { .tgid = tgid, .code = code };

		if (bpf_map_lookup_elem(&py_dropped, &k)) {
			__sync_fetch_and_add(&py_filtered, 1);
			return 0;
		}
	}
	prev = rd64(frame + c->frame_prev_instr);
	switch (site) {
	case BP_PY_SITE_RESUME:
		/*
		 * At the handler's first instruction prev_instr still points
		 * before the RESUME (the handler stores it; a probe placed
		 * after the store finds the RESUME itself): its argument is 0
		 * at a function's start, 1-3 after a yield or an await.
		 */
		bpf_probe_read_user(&insn, sizeof(insn),
				    (void *)(prev + (c->mode[slot] & BP_PY_PREV_STORED ? 0 : 2)));
		op = insn & 0xff;
		if (op != c->op_resume && op != c->op_resume_quick) {
			__sync_fetch_and_add(&py_misses, 1);
			return 0;
		}
		kind = insn >> 8 ? BP_PY_RESUME : BP_PY_CALL;
		previous = rd64(frame + c->frame_previous);
		/*
		 * A call's first two locals (its first arguments) in one read;
		 * if that fails (a frame at the end of its memory), the first.
		 */
		if (kind == BP_PY_CALL && c->frame_localsplus &&
		    bpf_probe_read_user(args, sizeof(args), (void *)(frame + c->frame_localsplus)))
			args[0] = rd64(frame + c->frame_localsplus);
		break;
	case BP_PY_SITE_ENTRY:
		/*
		 * Under a trace function the probe fires for every RESUME too
		 * (prev_instr is then the RESUME itself): the handler counts
		 * those.  Otherwise it is gen.throw() resuming the frame.
		 */
		bpf_probe_read_user(&insn, sizeof(insn), (void *)prev);
		op = insn & 0xff;
		if (op == c->op_resume || op == c->op_resume_quick)
			return 0;
		kind = BP_PY_THROW;
		previous = rd64(frame + c->frame_previous);
		break;
	default: {
		__u8 owner = 0;
		__s8 state = 0;

		bpf_probe_read_user(&owner, 1, (void *)(frame + c->frame_owner));
		if (owner == c->owned_by_generator)
			bpf_probe_read_user(&state, 1, (void *)(frame + c->gen_state));
		if (owner == c->owned_by_generator && state == c->frame_suspended)
			kind = BP_PY_YIELD;
		else
			kind = rd64(tstate + c->tstate_curexc) ? BP_PY_RAISE : BP_PY_RETURN;
		break;
	}
	}

	batch_flush();	/* the native calls around it come in order */
	name_code(c, tgid, id, code);
	if (site == BP_PY_SITE_RESUME)
		task = find_task(c, tgid, id, frame, previous, kind == BP_PY_CALL);
	cpu = bpf_get_smp_processor_id();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	rec_hdr(&r->h, BP_REC_PY, kind, cpu, id);
	r->code = code;
	r->frame = frame;
	r->previous = previous;
	r->sp = PT_REGS_SP(ctx);
	r->arg0 = args[0];
	r->arg1 = args[1];
	r->task = task;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
