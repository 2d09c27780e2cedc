// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor under bpfprof's per-call cost, in three steps, so that the
 * benchmark can say which part of trace.bpf.c costs what:
 *
 *   empty_entry/empty_exit   return 0: the kernel's uprobe + uretprobe path
 *                            and the BPF program dispatch, nothing else
 *   rb_entry/rb_exit         + one 32-byte record (the same fields as
 *                            struct bp_rec_call) reserved and submitted
 *                            without wakeup
 *   filter_entry/filter_exit + the traced-process filter of trace.bpf.c
 *                            (the `paused` flag and one hash lookup)
 *
 * and two to tell where the record's cost goes:
 *
 *   min_entry/min_exit       a 32-byte ring buffer reserve + submit with
 *                            only the type written: the ring buffer alone
 *   batch_entry/batch_exit   the full record written into a per-CPU batch
 *                            of 64, sent with one bpf_ringbuf_output() when
 *                            full: what amortising the reserve/commit buys
 *                            (safe only where uprobe programs cannot be
 *                            preempted mid-record: PREEMPT_NONE kernels)
 *
 * bench/floor.c loads the pair it is asked for; the others are not loaded.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 20);	/* bpfprof's default --buffer-size */
} rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

__u64 lost;
volatile __u32 paused;

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
} batches SEC(".maps");

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

static __always_inline int emit(struct pt_regs *ctx, __u16 type, bool filter)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 tgid = id >> 32;
	struct bp_rec_call *r;

	if (filter && (paused || !bpf_map_lookup_elem(&tgids, &tgid)))
		return 0;
	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	r->h.type = type;
	r->h.flags = 0;
	r->h.cpu = cpu;
	r->h.ts = bpf_ktime_get_ns();
	r->h.pid_tgid = id;
	r->func_id = bpf_get_attach_cookie(ctx);
	r->pad = 0;
	r->sp = PT_REGS_SP(ctx);
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
		__sync_fetch_and_add(&lost, 1);
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
	__u32 zero = 0, n;
	struct batch *b = bpf_map_lookup_elem(&batches, &zero);
	struct bp_rec_call *r;

	if (!b)
		return 0;
	n = b->n & (BATCH - 1);
	r = &b->r[n];
	r->h.type = type;
	r->h.flags = 0;
	r->h.cpu = bpf_get_smp_processor_id();
	r->h.ts = bpf_ktime_get_ns();
	r->h.pid_tgid = bpf_get_current_pid_tgid();
	r->func_id = bpf_get_attach_cookie(ctx);
	r->pad = 0;
	r->sp = PT_REGS_SP(ctx);
	if (n + 1 < BATCH) {
		b->n = n + 1;
		return 0;
	}
	b->n = 0;
	if (bpf_ringbuf_output(&rb, b->r, sizeof(b->r), BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&lost, BATCH);
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
