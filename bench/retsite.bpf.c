// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Return events without kernel return probes (bench/retsite.sh): plain
 * uprobes on every `ret` instruction of a function, against the uretprobe
 * bpfprof uses.  Two pairs per variant, as bench/floor.bpf.c:
 *
 *   empty_entry / empty_uret / empty_ret   return 0: the kernel's own cost
 *   rec_entry / rec_uret                   a 40-byte record per event, as
 *                                          floor's rb pair (what bpfprof's
 *                                          uretprobe mode writes)
 *   shadow_entry / shadow_ret              the same records, plus the
 *                                          per-thread shadow stack a ret
 *                                          site needs (below)
 *
 * The shadow stack: each thread keeps the stack pointer every traced entry
 * saw (the address of its return address) and the function's cookie.  At a
 * `ret` of a traced function the stack pointer again points at the return
 * address, so every frame whose entry SP is <= it has ended: the function
 * itself, a function it tail-jumped to (same entry SP) and callees the
 * program left without a `ret` (longjmp, an exception).  One exit record
 * each, innermost first.  Frames past SHADOW_DEPTH are counted, not kept.
 *
 * The programs count what they see (entries, exits, pops of more than one
 * frame, ret hits with nothing to pop) in `stats`, which bench/retsite.c
 * prints with -t: the exactness check of the tail-call target.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SHADOW_DEPTH 128

struct shadow {
	__u32 depth;		/* frames kept, at most SHADOW_DEPTH */
	__u32 over;		/* frames entered past SHADOW_DEPTH */
	__u64 sp[SHADOW_DEPTH];
	__u32 id[SHADOW_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct shadow);
} shadows SEC(".maps");

/* stats[]: what bench/retsite.c -t prints */
#define ST_ENTRY 0	/* entry records */
#define ST_EXIT 1	/* exit records */
#define ST_MULTI 2	/* ret hits that ended more than one frame (tail calls, longjmp) */
#define ST_EMPTY 3	/* ret hits that ended nothing (entry not seen) */
#define ST_DEEP 4	/* entries past SHADOW_DEPTH */
#define ST_N 5
__u64 stats[ST_N];

static __always_inline void count(int what, __u64 n)
{
	if (what >= 0 && what < ST_N)
		__sync_fetch_and_add(&stats[what], n);
}

SEC("uprobe.multi")
int empty_entry(struct pt_regs *ctx)
{
	return 0;
}

SEC("uretprobe.multi")
int empty_uret(struct pt_regs *ctx)
{
	return 0;
}

SEC("uprobe.multi")
int empty_ret(struct pt_regs *ctx)
{
	return 0;
}

static __always_inline void emit(__u16 type, __u64 id, __u32 func, __u64 sp, __u64 ts)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_call *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	struct bp_rec_hdr h = { .type = type, .cpu = cpu, .pid_tgid = id, .ts = ts };

	if (!r) {
		count_lost(cpu);
		return;
	}
	r->h = h;
	r->func_id = func;
	r->pad = 0;
	r->sp = sp;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

SEC("uprobe.multi")
int rec_entry(struct pt_regs *ctx)
{
	emit(BP_REC_ENTRY, bpf_get_current_pid_tgid(), bpf_get_attach_cookie(ctx),
	     PT_REGS_SP(ctx), bpf_ktime_get_ns());
	count(ST_ENTRY, 1);
	return 0;
}

SEC("uretprobe.multi")
int rec_uret(struct pt_regs *ctx)
{
	/* a uretprobe sees the stack pointer after the return address was popped */
	emit(BP_REC_EXIT, bpf_get_current_pid_tgid(), bpf_get_attach_cookie(ctx),
	     PT_REGS_SP(ctx) - 8, bpf_ktime_get_ns());
	count(ST_EXIT, 1);
	return 0;
}

SEC("uprobe.multi")
int shadow_entry(struct pt_regs *ctx)
{
	struct shadow *s = bpf_task_storage_get(&shadows, bpf_get_current_task_btf(), 0,
						BPF_LOCAL_STORAGE_GET_F_CREATE);
	__u64 sp = PT_REGS_SP(ctx), ts = bpf_ktime_get_ns();
	__u32 func = bpf_get_attach_cookie(ctx), d;

	emit(BP_REC_ENTRY, bpf_get_current_pid_tgid(), func, sp, ts);
	count(ST_ENTRY, 1);
	if (!s)
		return 0;
	d = s->depth;
	if (d >= SHADOW_DEPTH) {
		s->over++;
		count(ST_DEEP, 1);
		return 0;
	}
	s->sp[d] = sp;
	s->id[d] = func;
	s->depth = d + 1;
	return 0;
}

SEC("uprobe.multi")
int shadow_ret(struct pt_regs *ctx)
{
	struct shadow *s = bpf_task_storage_get(&shadows, bpf_get_current_task_btf(), 0, 0);
	__u64 sp = PT_REGS_SP(ctx), ts = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 n = 0, i;

	if (!s)
		return 0;
	for (i = 0; i < SHADOW_DEPTH; i++) {
		__u32 d = s->depth;

		if (!d || d > SHADOW_DEPTH)
			break;
		if (s->sp[(d - 1) & (SHADOW_DEPTH - 1)] > sp)
			break;
		emit(BP_REC_EXIT, id, s->id[(d - 1) & (SHADOW_DEPTH - 1)], sp, ts);
		s->depth = d - 1;
		n++;
	}
	count(ST_EXIT, n);
	if (n > 1)
		count(ST_MULTI, 1);
	if (!n)
		count(ST_EMPTY, 1);
	return 0;
}
