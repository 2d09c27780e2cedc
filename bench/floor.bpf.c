// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor under bpfprof's per-call cost, in three steps, so that the
 * benchmark can say which part of trace.bpf.c costs what:
 *
 *   empty_entry/empty_exit   return 0: the kernel's uprobe + uretprobe path
 *                            and the BPF program dispatch, nothing else
 *   rb_entry/rb_exit         + one 40-byte record (the same fields as
 *                            struct bp_rec_call) reserved and submitted
 *                            without wakeup
 *   filter_entry/filter_exit + the traced-process filter of trace.bpf.c
 *                            (is_traced(): the `paused` flag and the
 *                            `recording` bitmap)
 *
 * and two to tell where the record's cost goes:
 *
 *   min_entry/min_exit       a 40-byte ring buffer reserve + submit with
 *                            only the type written: the ring buffer alone
 *   batch_entry/batch_exit   the full record written into a per-CPU batch
 *                            of 64, sent with one bpf_ringbuf_output() when
 *                            full: what amortising the reserve/commit buys
 *                            (without trace.bpf.c's guard against a context
 *                            that interrupts the batch's user: safe only
 *                            where uprobe programs cannot be preempted
 *                            mid-record, PREEMPT_NONE kernels)
 *
 * The maps, the loss counters and the filter are bpfprof's own
 * (bpf/common.bpf.h), so the floor follows them; bench/floor.c sizes `rb`
 * as bpfprof's default --buffer-size and loads the pair it is asked for,
 * the others are not loaded.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* The batch of the batch_ pair: bpfprof's batch without its `busy` guard. */
#define BATCH 64
struct batch {
	__u32 n;
	__u32 pad;
	struct bp_rec_call r[BATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct batch);
} floor_batches SEC(".maps");

SEC("uprobe.multi")
int empty_entry(struct pt_regs *ctx)
{
	return 0;
}

SEC("uretprobe.multi")
int empty_exit(struct pt_regs *ctx)
{
	return 0;
}

/* The call record, as trace.bpf.c's fill_call writes it. */
static __always_inline void fill(struct bp_rec_call *r, struct pt_regs *ctx, __u16 type, __u64 id,
				 __u32 cpu)
{
	struct bp_rec_hdr h = { .type = type, .cpu = cpu, .pid_tgid = id };

	h.ts = bpf_ktime_get_ns();
	r->h = h;
	r->func_id = bpf_get_attach_cookie(ctx);
	r->pad = 0;
	r->sp = PT_REGS_SP(ctx);
}

static __always_inline int emit(struct pt_regs *ctx, __u16 type, bool filter)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_call *r;

	if (filter && !is_traced(id >> 32))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return 0;
	}
	fill(r, ctx, type, id, cpu);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe.multi")
int rb_entry(struct pt_regs *ctx)
{
	return emit(ctx, BP_REC_ENTRY, false);
}

SEC("uretprobe.multi")
int rb_exit(struct pt_regs *ctx)
{
	return emit(ctx, BP_REC_EXIT, false);
}

SEC("uprobe.multi")
int filter_entry(struct pt_regs *ctx)
{
	return emit(ctx, BP_REC_ENTRY, true);
}

SEC("uretprobe.multi")
int filter_exit(struct pt_regs *ctx)
{
	return emit(ctx, BP_REC_EXIT, true);
}

static __always_inline int emit_min(__u16 type)
{
	struct bp_rec_hdr *r = bpf_ringbuf_reserve(&rb, sizeof(struct bp_rec_call), 0);

	if (!r) {
		count_lost(bpf_get_smp_processor_id());
		return 0;
	}
	r->type = type;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe.multi")
int min_entry(struct pt_regs *ctx)
{
	return emit_min(BP_REC_ENTRY);
}

SEC("uretprobe.multi")
int min_exit(struct pt_regs *ctx)
{
	return emit_min(BP_REC_EXIT);
}

static __always_inline int emit_batch(struct pt_regs *ctx, __u16 type)
{
	__u32 zero = 0, n, cpu = bpf_get_smp_processor_id();
	struct batch *b = bpf_map_lookup_elem(&floor_batches, &zero);

	if (!b)
		return 0;
	n = b->n & (BATCH - 1);
	fill(&b->r[n], ctx, type, bpf_get_current_pid_tgid(), cpu);
	if (n + 1 < BATCH) {
		b->n = n + 1;
		return 0;
	}
	b->n = 0;
	if (bpf_ringbuf_output(&rb, b->r, sizeof(b->r), BPF_RB_NO_WAKEUP))
		count_lost_n(cpu, BATCH);
	return 0;
}

SEC("uprobe.multi")
int batch_entry(struct pt_regs *ctx)
{
	return emit_batch(ctx, BP_REC_ENTRY);
}

SEC("uretprobe.multi")
int batch_exit(struct pt_regs *ctx)
{
	return emit_batch(ctx, BP_REC_EXIT);
}
