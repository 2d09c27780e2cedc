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
#include "str_where.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by the loader before load. */
const volatile bool follow_forks = true;	/* add forked children to the traced set */
const volatile bool stop_on_exec = false;	/* hold exec'd images until probes are attached */
const volatile bool wakeups = false;		/* wakeup edges between traced threads */
const volatile bool start_gated = false;	/* --gated: a launched command starts outside the window */

/* The governor's filter, then the holds of a thread or a process for user space. */
#include "trace_gov.bpf.h"
#include "trace_hold.bpf.h"

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

/* Writes the call record of an accepted hit: into this CPU's batch, or alone. */
static __always_inline int put_call(struct pt_regs *ctx, __u16 type, __u64 id)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_batch *b;
	struct bp_rec_call *r;
	__u32 n;

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

static __always_inline int emit_call(struct pt_regs *ctx, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!call_accept(ctx, id, type == BP_REC_ENTRY))
		return 0;
	return put_call(ctx, type, id);
}

/*
 * --args: which argument words of a function are `char *` (bit i: regs[i]
 * for i < 6, stack[i - 6] above), from DWARF; set by the loader before the
 * function is attached.  Absent: no string.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} func_strs SEC(".maps");

/*
 * The strings of the words in mask, at most BP_ARG_NSTR, each up to
 * BP_ARG_STR bytes with its NUL.  A page never touched (a literal the
 * program has not read yet) fails: the string is left unread (len 0).
 */
static __always_inline void read_arg_strs(struct bp_rec_call_args *r, __u32 mask)
{
	__u32 n = 0;

	for (__u32 i = 0; i < BP_ARG_SLOTS; i++) {
		__u64 p;
		long len;

		if (!(mask & (1u << i)))
			continue;
		if (n >= BP_ARG_NSTR)
			break;
		p = i < 6 ? r->regs[i] : r->stack[(i - 6) & (BP_ARG_STACK - 1)];
		r->str_slot[n & 1] = i;
		len = p ? bpf_probe_read_user_str(r->str[n & 1], BP_ARG_STR, (void *)p) : 0;
		r->str_len[n & 1] = len > 0 ? len : 0;
		if (len <= 0) {
			struct bp_usdt_where w = { .off = p };	/* bpf_find_vma wants it on the stack */

			r->str[n & 1][0] = 0;
			if (p)
				bpf_find_vma(bpf_get_current_task_btf(), p, str_where_cb, &w, 0);
			if (!w.ino)
				w.off = 0;
			r->where[n & 1] = w;
		}
		n++;
	}
}

/* Writes the --args call record of an accepted hit. */
static __always_inline int put_call_args(struct pt_regs *ctx, __u16 type, __u64 id)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_call_args *r;

	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	/* the call part, laid out as a struct bp_rec_call */
	fill_call((struct bp_rec_call *)r, ctx, type, id, cpu);
	__builtin_memset(r->where, 0, sizeof(r->where));
	r->str_slot[0] = r->str_slot[1] = 0xff;
	r->str_len[0] = r->str_len[1] = 0;
	r->pad2 = 0;
	if (type == BP_REC_ENTRY_ARGS) {
		__u32 fid = (__u32)bpf_get_attach_cookie(ctx);
		__u32 *mask;

		r->regs[0] = PT_REGS_PARM1(ctx);
		r->regs[1] = PT_REGS_PARM2(ctx);
		r->regs[2] = PT_REGS_PARM3(ctx);
		r->regs[3] = PT_REGS_PARM4(ctx);
		r->regs[4] = PT_REGS_PARM5(ctx);
		r->regs[5] = PT_REGS_PARM6(ctx);
		/* the words above the return address: 7th and later arguments */
		if (bpf_probe_read_user(r->stack, sizeof(r->stack), (void *)(PT_REGS_SP(ctx) + 8)))
			__builtin_memset(r->stack, 0, sizeof(r->stack));
		mask = bpf_map_lookup_elem(&func_strs, &fid);
		if (mask && *mask)
			read_arg_strs(r, *mask);
	} else {
		r->regs[0] = PT_REGS_RC(ctx);
		r->regs[1] = ctx->dx;
		r->regs[2] = r->regs[3] = r->regs[4] = r->regs[5] = 0;
		__builtin_memset(r->stack, 0, sizeof(r->stack));
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int emit_call_args(struct pt_regs *ctx, __u16 type)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!call_accept(ctx, id, type == BP_REC_ENTRY_ARGS))
		return 0;
	return put_call_args(ctx, type, id);
}

/*
 * A register of pt_regs by its DWARF number (x86-64: rax rdx rcx rbx rsi
 * rdi rbp rsp r8..r15), read through its offset (the verifier refuses a
 * ctx access at a variable offset).
 */
static __always_inline __u64 dwarf_reg(struct pt_regs *ctx, __u32 n)
{
	__u32 off;
	__u64 v = 0;

	switch (n & 15) {
	case 0: off = __builtin_offsetof(struct pt_regs, ax); break;
	case 1: off = __builtin_offsetof(struct pt_regs, dx); break;
	case 2: off = __builtin_offsetof(struct pt_regs, cx); break;
	case 3: off = __builtin_offsetof(struct pt_regs, bx); break;
	case 4: off = __builtin_offsetof(struct pt_regs, si); break;
	case 5: off = __builtin_offsetof(struct pt_regs, di); break;
	case 6: off = __builtin_offsetof(struct pt_regs, bp); break;
	case 7: off = __builtin_offsetof(struct pt_regs, sp); break;
	case 8: off = __builtin_offsetof(struct pt_regs, r8); break;
	case 9: off = __builtin_offsetof(struct pt_regs, r9); break;
	case 10: off = __builtin_offsetof(struct pt_regs, r10); break;
	case 11: off = __builtin_offsetof(struct pt_regs, r11); break;
	case 12: off = __builtin_offsetof(struct pt_regs, r12); break;
	case 13: off = __builtin_offsetof(struct pt_regs, r13); break;
	case 14: off = __builtin_offsetof(struct pt_regs, r14); break;
	default: off = __builtin_offsetof(struct pt_regs, r15); break;
	}
	bpf_probe_read_kernel(&v, sizeof(v), (char *)ctx + off);
	return v;
}

/*
 * --args: a float/double at a place inside the function where it is in
 * memory or in an integer register (struct bp_rec_xval says what the
 * cookie holds).  The decoder gives it to the innermost open call.
 */
SEC("uprobe.multi")
int BPF_KPROBE(call_xval)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 ck = bpf_get_attach_cookie(ctx);
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_xval *r;
	__u64 v = dwarf_reg(ctx, (ck >> 36) & 15) + (__s64)(__s16)(ck >> 48);

	if (!is_traced(id >> 32))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	rec_hdr(&r->h, BP_REC_XVAL, 0, cpu, id);
	r->func_id = (__u32)ck;
	r->slot = (ck >> 32) & 15;
	r->pad = 0;
	r->sp = PT_REGS_SP(ctx);
	r->ok = 1;
	if ((ck >> 40) & 1) {
		r->value = 0;
		if (bpf_probe_read_user(&r->value, sizeof(r->value), (void *)v))
			r->ok = 0;
	} else {
		r->value = v;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/*
 * The call programs: one pair is loaded (tracer__new), plain or with the
 * registers (--deps), attached with uprobe_multi links (cookie: the function).
 */
#define CALL_PROG(sec, name, emit, type)	\
	SEC(sec)				\
	int BPF_KPROBE(name)			\
	{					\
		return emit(ctx, type);		\
	}
CALL_PROG("uprobe.multi", call_entry, emit_call, BP_REC_ENTRY)
CALL_PROG("uretprobe.multi", call_exit, emit_call, BP_REC_EXIT)
CALL_PROG("uprobe.multi", call_entry_args, emit_call_args, BP_REC_ENTRY_ARGS)
CALL_PROG("uretprobe.multi", call_exit_ret, emit_call_args, BP_REC_EXIT_RET)

/*
 * Uprobe session links (Linux 6.13+): one link per group where the pair
 * above needs two.  libbpf 1.4 has no section for them: these are loaded as
 * uprobe.multi programs with the session attach type set by the loader
 * (tracer__new), and linked by a raw BPF_LINK_CREATE (trace_session.c).
 */
extern bool bpf_session_is_return(void) __ksym __weak;

/*
 * Both halves of a call in one program.  At the entry, 1 tells the kernel
 * not to run this link's return for the call: no return address is taken
 * over.  That is said where the return program of the pair would record
 * nothing either: a process not ours (not even gated: one that joins in
 * the middle of a call would only have shown an exit without its entry),
 * the recording over, a function the governor does not record on this link.
 * The governor's choice is made once, at the entry (its marks there work as
 * for the pair, every entry consumer of a hit runs); the return of a call
 * is run by the one link whose entry took it, so it records without asking
 * again.  A gated process keeps its returns: its window may open before
 * they come (they are recorded then, as with the pair).
 */
static __always_inline int session_call(struct pt_regs *ctx, bool args)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (bpf_session_is_return()) {
		if (!is_traced(tgid))
			return 0;
		return args ? put_call_args(ctx, BP_REC_EXIT_RET, id) : put_call(ctx, BP_REC_EXIT, id);
	}
	if (!is_traced(tgid)) {
		if (paused || !is_member(tgid))
			return 1;
		return gov_accept(bpf_get_attach_cookie(ctx)) ? 0 : 1;
	}
	if (!gov_accept(bpf_get_attach_cookie(ctx)))
		return 1;
	maybe_rearm(id, PT_REGS_SP(ctx));
	return args ? put_call_args(ctx, BP_REC_ENTRY_ARGS, id) : put_call(ctx, BP_REC_ENTRY, id);
}

SEC("uprobe.multi")
int BPF_KPROBE(call_session)
{
	return session_call(ctx, false);
}

SEC("uprobe.multi")
int BPF_KPROBE(call_session_args)
{
	return session_call(ctx, true);
}

/* The other concerns of this object, each in its part. */
#include "trace_unwind.bpf.h"
#include "trace_tasks.bpf.h"
#include "trace_wake.bpf.h"

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
