// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How much of the traced processes' CPU time their probes take, measured
 * in them rather than calibrated apart: a cpu-clock perf_event program
 * counts the samples of traced threads, and those taken on the uprobe
 * path.  A sample is on that path when
 *   - the thread's user instruction pointer is in its uprobes area (the
 *     page the kernel single-steps displaced instructions in, and where
 *     the return trampoline lives), in user mode or in the kernel entered
 *     from there (the uretprobe system call, the single-step's trap);
 *   - or its kernel stack holds one of the functions of the path, whose
 *     ranges user space reads from /proc/kallsyms (the int3 and debug
 *     exception entries, uprobe_notify_resume where the handlers and the
 *     BPF programs run, the uprobe and uretprobe system calls).
 * Counts only: no record.  For the governor's estimate (user/probes/share.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SHARE_RANGES	12
#define SHARE_DEPTH	32
#define XOL_SIZE	4096

/* The kernel functions of the probe path: [lo, hi) each; unused ranges are 0. */
const volatile __u64 share_lo[SHARE_RANGES];
const volatile __u64 share_hi[SHARE_RANGES];

/* Samples of traced threads, and those of them on the probe path. */
__u64 share_all;
__u64 share_probe;

static __always_inline bool in_path(__u64 ip)
{
	for (int r = 0; r < SHARE_RANGES; r++)
		if (ip >= share_lo[r] && ip < share_hi[r])
			return true;
	return false;
}

static __always_inline bool on_probe_path(struct bpf_perf_event_data *ctx,
					  struct task_struct *task)
{
	__u64 stk[SHARE_DEPTH];
	__u64 ip = PT_REGS_IP(&ctx->regs), xol;
	long n;

	xol = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	if ((long)ip < 0) {
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);
		__u64 uip = u ? BPF_CORE_READ(u, ip) : 0;

		if (xol && uip >= xol && uip < xol + XOL_SIZE)
			return true;
		n = bpf_get_stack(ctx, stk, sizeof(stk), 0);
		for (int i = 0; i < SHARE_DEPTH; i++) {
			if (i * 8 >= n)
				break;
			if (in_path(stk[i]))
				return true;
		}
		return false;
	}
	return xol && ip >= xol && ip < xol + XOL_SIZE;
}

SEC("perf_event")
int share_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task;

	if (!is_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	__sync_fetch_and_add(&share_all, 1);
	if (on_probe_path(ctx, task))
		__sync_fetch_and_add(&share_probe, 1);
	return 0;
}
