// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where the traced processes' CPU time goes, by file: a cpu-clock
 * perf_event program at a low rate counts, per mapped file (the VMA of the
 * user instruction pointer: bpf_find_vma), the samples of traced processes;
 * a sample taken in the kernel counts where the thread's user code was
 * when it entered it.  Only counts: no record, no stack.  For the hint that
 * the executable is thin and its work is done in libraries
 * (user/probes/where.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define WHERE_NAME	56

struct where_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct where_val {
	__u64 samples;
	char name[WHERE_NAME];	/* the file's name (its dentry's, not the path) */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct where_key);
	__type(value, struct where_val);
} where_files SEC(".maps");

/* Samples whose instruction pointer is in no file (JIT code, anonymous memory). */
__u64 where_anon;

struct vma_ctx {
	struct where_key k;
	struct where_val v;
	bool file;
};

static long vma_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_ctx *c = data;
	struct file *f = vma->vm_file;
	const unsigned char *name;

	if (!f)
		return 0;
	c->file = true;
	c->k.ino = BPF_CORE_READ(f, f_inode, i_ino);
	c->k.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	bpf_probe_read_kernel_str(c->v.name, sizeof(c->v.name), name);
	return 0;
}

SEC("perf_event")
int where_sample(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_ctx c = {};
	struct where_val *v;
	__u64 ip;

	if (!is_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	ip = PT_REGS_IP(&ctx->regs);
	if ((long)ip < 0) {
		/* in the kernel: where its user code was */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);

		ip = u ? BPF_CORE_READ(u, ip) : 0;
	}
	if (!ip || bpf_find_vma(task, ip, vma_file, &c, 0) || !c.file) {
		__sync_fetch_and_add(&where_anon, 1);
		return 0;
	}
	v = bpf_map_lookup_elem(&where_files, &c.k);
	if (v) {
		__sync_fetch_and_add(&v->samples, 1);
		return 0;
	}
	c.v.samples = 1;
	if (bpf_map_update_elem(&where_files, &c.k, &c.v, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&where_files, &c.k);
		if (v)
			__sync_fetch_and_add(&v->samples, 1);
	}
	return 0;
}
