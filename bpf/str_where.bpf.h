/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a string a probe could not read lies in its mapped file (USDT
 * string arguments, --args `char *` arguments).  The read fails when the
 * page was never faulted in by the process (a literal it never touched);
 * the loader then reads the bytes from the file (symbols/ustrings.c), also
 * after the process exited.  A bpf_find_vma() callback: w->off holds the
 * address on the way in, the file offset on the way out.
 */
#ifndef BPFPROF_STR_WHERE_BPF_H
#define BPFPROF_STR_WHERE_BPF_H

static long str_where_cb(struct task_struct *task, struct vm_area_struct *vma, void *ctx)
{
	struct bp_usdt_where *w = ctx;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	if (!f)
		return 0;
	w->ino = BPF_CORE_READ(f, f_inode, i_ino);
	w->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	w->off = w->off - BPF_CORE_READ(vma, vm_start) + (BPF_CORE_READ(vma, vm_pgoff) << 12);	/* x86-64 pages */
	return 0;
}

#endif
