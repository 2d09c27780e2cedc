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
 * A code object is named once per process (BP_REC_PYCODE, its strings read
 * here: the process may be gone by the time userspace could read them).
 * Shares the ring buffer, batches and process set with trace.bpf.c.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"
#include "python.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BP_PY_MAX_CFGS);
	__type(key, __u32);
	__type(value, struct bp_py_cfg);
} py_cfgs SEC(".maps");

struct code_key {
	__u32 tgid;
	__u32 pad;
	__u64 code;
};

/* What a code object looked like when it was named: another object at the same address differs. */
struct code_seen {
	__u64 qualname;
	__u64 filename;
	__u32 line;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct code_key);
	__type(value, struct code_seen);
} py_codes SEC(".maps");

/* Python records that found no frame or code (not running bytecode, unreadable memory). */
__u64 py_misses;

static __always_inline __u64 rd64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/*
 * Copies the characters of a compact str object: 0, or -1 when it cannot be
 * read (not compact, not ready, a page not present).
 */
static __always_inline int read_str(const struct bp_py_cfg *c, __u64 obj, char *buf, __u32 cap,
				    __u16 *len, __u8 *kind)
{
	__u32 state = 0, n, k;
	__u64 length = 0, data;

	*len = 0;
	*kind = 1;
	if (!obj || bpf_probe_read_user(&state, sizeof(state), (void *)(obj + c->str_state)) ||
	    bpf_probe_read_user(&length, sizeof(length), (void *)(obj + c->str_length)))
		return -1;
	/* state: interned:2 kind:3 compact:1 ascii:1 ready:1 */
	k = (state >> 2) & 7;
	if (!(state & (1 << 5)) || (k != 1 && k != 2 && k != 4))
		return -1;
	data = obj + ((state & (1 << 6)) ? c->str_ascii_data : c->str_compact_data);
	n = length * k > cap ? cap : length * k;
	n -= n % k;
	if (n > BP_PY_FILE_LEN)
		n = BP_PY_FILE_LEN;
	if (n && bpf_probe_read_user(buf, n & 0xff, (void *)data))
		return -1;
	*len = n;
	*kind = k;
	return 0;
}

static __always_inline void name_code(const struct bp_py_cfg *c, __u32 tgid, __u64 id, __u64 code)
{
	struct code_key key = { .tgid = tgid, .code = code };
	struct code_seen now = {}, *seen;
	struct bp_rec_pycode *r;
	__u32 cpu;

	now.qualname = rd64(code + c->code_qualname);
	now.filename = rd64(code + c->code_filename);
	bpf_probe_read_user(&now.line, sizeof(now.line), (void *)(code + c->code_firstlineno));
	seen = bpf_map_lookup_elem(&py_codes, &key);
	if (seen && seen->qualname == now.qualname && seen->filename == now.filename &&
	    seen->line == now.line)
		return;
	cpu = bpf_get_smp_processor_id();
	/* reserved before the map says "named": the name precedes every use in the stream */
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return;
	}
	r->h.type = BP_REC_PYCODE;
	r->h.flags = 0;
	r->h.cpu = cpu;
	r->h.ts = bpf_ktime_get_ns();
	r->h.pid_tgid = id;
	r->code = code;
	r->firstlineno = now.line;
	r->flags = 0;
	r->pad[0] = r->pad[1] = 0;
	if (read_str(c, now.qualname, r->name, BP_PY_NAME_LEN, &r->name_len, &r->name_kind))
		r->flags |= BP_PYCODE_BAD_NAME;
	if (read_str(c, now.filename, r->file, BP_PY_FILE_LEN, &r->file_len, &r->file_kind))
		r->flags |= BP_PYCODE_BAD_FILE;
	bpf_map_update_elem(&py_codes, &key, &now, BPF_ANY);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("uprobe.multi")
int py_probe(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = id >> 32, site = cookie & 0xf, slot = (cookie >> 4) & 0xf, idx = cookie >> 8;
	__u32 cpu;
	__u64 bias, tstate, cframe, frame, code, prev, previous = 0;
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
	cpu = bpf_get_smp_processor_id();
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	r->h.type = BP_REC_PY;
	r->h.flags = kind;
	r->h.cpu = cpu;
	r->h.ts = bpf_ktime_get_ns();
	r->h.pid_tgid = id;
	r->code = code;
	r->frame = frame;
	r->previous = previous;
	r->sp = PT_REGS_SP(ctx);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
