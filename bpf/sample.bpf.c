// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sampling: a perf_event program on cpu-clock takes the user and kernel
 * stacks of the traced processes (or of every process with -a); with
 * --offcpu, sched_switch records where a traced thread blocks and how long.
 *
 * The ring buffer and the set of traced processes are the call tracer's
 * (the loader makes this object reuse trace.bpf.c's maps), so samples and
 * calls arrive in one stream, in order.
 *
 * User stacks: with --stack=fp the kernel walks the frame pointers
 * (bpf_get_stack); with --stack=dwarf|auto the record also carries the user
 * registers and a copy of the top of the user stack (BP_REC_USTACK), which
 * userspace unwinds with the binaries' CFI, as perf --call-graph dwarf does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "events.h"
#include "common.bpf.h"
#include "python_stack.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool kernel_stacks = true;
const volatile __u64 period_ns = 1000000;
const volatile bool fp_user = true;	/* walk the user frame pointers (--stack=fp|auto) */
const volatile __u32 ustack_size = 0;	/* user stack bytes to copy (--stack=dwarf|auto) */

/*
 * A record is built here, then copied out at its real size.  The stack copy
 * goes at a variable offset (after the frames); a page of slack after it
 * lets the verifier see every page-sized read in bounds.
 */
struct sample_buf {
	struct bp_rec_sample s;
	struct bp_ustack u;
	__u8 stack[BP_MAX_USTACK + 4096];
};

/*
 * One buffer per CPU, indexed by CPU number (too large for a per-CPU map:
 * those are limited to 32 KiB).  The two programs cannot nest on a CPU:
 * sched_switch runs with interrupts off, and the cpu-clock sample runs from
 * the timer interrupt.  The loader sets max_entries to the number of CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_buf);
} scratch SEC(".maps");

/* Off-cpu: when each blocked traced thread went off cpu. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} offcpu_start SEC(".maps");


#define PF_KTHREAD	0x00200000
#define PF_IO_WORKER	0x00000010
#define PAGE_SZ		4096
#define USER32_CS	0x23	/* __USER32_CS: the task runs 32-bit code */

struct copy_ctx {
	__u8 *dst;
	__u64 sp, want;
	__u32 len;
	__u32 cut;
};

/* bpf_loop() body: one page (or the part of it from sp) per call; 1 ends the loop. */
static long copy_page(__u32 i, void *arg)
{
	struct copy_ctx *c = arg;
	__u64 n = PAGE_SZ - ((c->sp + c->len) & (PAGE_SZ - 1));	/* to the end of the page */

	if (c->len >= c->want || c->len >= BP_MAX_USTACK)
		return 1;
	if (n > c->want - c->len)
		n = c->want - c->len;
	if (n > PAGE_SZ)
		n = PAGE_SZ;
	if (bpf_probe_read_user(c->dst + (c->len & (BP_MAX_USTACK - 1)), n,
				(void *)(c->sp + c->len))) {
		c->cut = 0;	/* the top of the stack */
		return 1;
	}
	c->len += n;
	return 0;
}

struct fix_ctx {
	struct return_instance *ri;
	__u8 *dst;
	__u64 sp;
	__u32 len;
};

/* bpf_loop() body: one pending return probe; 1 ends the loop. */
static long fix_return(__u32 i, void *arg)
{
	struct fix_ctx *c = arg;
	struct return_instance *ri = c->ri;
	__u64 slot, orig;

	if (!ri)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	c->ri = BPF_CORE_READ(ri, next);
	if (slot >= c->sp && slot - c->sp <= c->len - 8 && c->len >= 8)
		*(__u64 *)(c->dst + ((slot - c->sp) & (BP_MAX_USTACK - 1))) = orig;
	return 0;
}

/*
 * Calls with a pending return probe (-F) return to the kernel's trampoline:
 * their return address slot holds the trampoline's address, which has no
 * CFI.  Puts the original return addresses back into the copy, from the
 * thread's uprobe return instances (as the kernel does for perf's
 * frame-pointer callchains).
 */
static __always_inline void fix_returns(struct task_struct *task, __u8 *dst, __u64 sp, __u32 len)
{
	struct fix_ctx c = { .dst = dst, .sp = sp, .len = len };

	if (!bpf_core_field_exists(task->utask))
		return;
	c.ri = BPF_CORE_READ(task, utask, return_instances);
	if (c.ri)
		bpf_loop(64, fix_return, &c, 0);
}

#if defined(__TARGET_ARCH_x86)
/*
 * Where each DWARF register (events.h: rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15 rip) sits in the kernel's struct pt_regs: x86-64's layout is the
 * ptrace ABI, fixed, so no CO-RE relocation is needed.
 */
static const __u16 dwarf_reg_off[BP_UREGS] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx), offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, bx), offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp), offsetof(struct pt_regs, r8),
	offsetof(struct pt_regs, r9), offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13), offsetof(struct pt_regs, r14),
	offsetof(struct pt_regs, r15), offsetof(struct pt_regs, ip),
};
#endif

/*
 * Copies the user registers and up to ustack_size bytes of the user stack
 * to u (followed by the bytes).  Page by page: bpf_probe_read_user() fails
 * as a whole when any byte is unreadable, and the stack's top is rarely
 * ustack_size above the stack pointer.  A bpf_loop(): the verifier checks
 * the body once, where an unrolled loop makes it explore every path.
 * Returns the bytes written at u (0: no copy, the thread has no user context).
 */
static __always_inline __u32 copy_ustack(struct bp_ustack *u)
{
#if defined(__TARGET_ARCH_x86)
	struct task_struct *task = bpf_get_current_task_btf();
	struct copy_ctx c = { .dst = (__u8 *)(u + 1), .want = ustack_size, .cut = BP_USTACK_CUT };
	struct pt_regs *regs;
	__u64 top;
	int i;

	if ((task->flags & (PF_KTHREAD | PF_IO_WORKER)) || !task->mm)
		return 0;
	/* the registers the thread had in user mode: at the sample, or at its syscall */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || (BPF_CORE_READ(regs, cs) & 0xffff) == USER32_CS)
		return 0;	/* a 32-bit process: its CFI is not x86-64's (frame pointers only) */
	for (i = 0; i < BP_UREGS; i++)
		bpf_probe_read_kernel(&u->regs[i], sizeof(u->regs[i]), (void *)regs + dwarf_reg_off[i]);
	c.sp = u->regs[BP_UREG_SP];
	/* the main thread: above start_stack are argc, argv and the environment */
	top = BPF_CORE_READ(task, mm, start_stack);
	if (task->pid == task->tgid && c.sp < top && top - c.sp + 8 <= c.want) {
		c.want = top - c.sp + 8;
		c.cut = 0;
	}
	if (c.want > BP_MAX_USTACK)
		c.want = BP_MAX_USTACK;
	bpf_loop(BP_MAX_USTACK / PAGE_SZ + 1, copy_page, &c, 0);
	fix_returns(task, c.dst, c.sp, c.len);
	u->len = c.len;
	u->flags = c.len < c.want ? 0 : c.cut;
	return c.len ? sizeof(*u) + c.len : 0;
#else
	return 0;
#endif
}

/* Fills the scratch record with the current task's stacks and sends it. */
static __always_inline int emit_stack(void *ctx, __u64 pid_tgid, __u16 flags, __u64 period)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sample_buf *b = bpf_map_lookup_elem(&scratch, &cpu);
	struct bp_rec_sample *r;
	long n;
	__u32 nu = 0, nk = 0, off, tail = 0;
	__u64 size;

	if (!b)
		return 0;
	py_stack_emit(pid_tgid, cpu);	/* a CPython thread's frames, just before its stack */
	r = &b->s;
	rec_hdr(&r->h, BP_REC_SAMPLE, flags, cpu, pid_tgid);
	r->period = period;
	bpf_get_current_comm(&r->comm, sizeof(r->comm));
	if (fp_user) {
		n = bpf_get_stack(ctx, r->ips, BP_MAX_USER_FRAMES * 8, BPF_F_USER_STACK);
		if (n > 0)
			nu = (__u32)n / 8;
		if (nu > BP_MAX_USER_FRAMES)
			nu = BP_MAX_USER_FRAMES;
	}
	if (kernel_stacks) {
		n = bpf_get_stack(ctx, &r->ips[nu], BP_MAX_KERN_FRAMES * 8, 0);
		if (n > 0)
			nk = (__u32)n / 8;
		if (nk > BP_MAX_KERN_FRAMES)
			nk = BP_MAX_KERN_FRAMES;
	}
	r->nuser = nu;
	r->nkern = nk;
	off = 8 * (nu + nk);
	if (ustack_size && off <= 8 * (BP_MAX_USER_FRAMES + BP_MAX_KERN_FRAMES)) {
		/* the copy goes right after the frames: the record stays contiguous */
		struct bp_ustack *u = (void *)r->ips + off;

		tail = copy_ustack(u);
		if (tail)
			r->h.type = BP_REC_USTACK;
	}
	size = BP_SAMPLE_HDR_SIZE + off + tail;
	if (size > sizeof(*b))
		size = sizeof(*b);
	if (bpf_ringbuf_output(&rb, r, size, BPF_RB_NO_WAKEUP))
		count_lost(cpu);
	return 0;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	/* pid 0 is the idle task: nothing to attribute */
	if ((__u32)id == 0 || !is_traced(id >> 32))
		return 0;
	/*
	 * The thread's calls so far come first.  cpu-clock samples run from a
	 * timer interrupt (not an NMI): the batch's lock makes this safe, and a
	 * batch held by the code interrupted stays where it is.
	 */
	batch_flush();
	return emit_stack(ctx, id, 0, period_ns);
}

#define TASK_RUNNING 0

/* Off-cpu intervals ended at the next switch-out (their switch-in was not seen); read by the loader. */
__u64 offcpu_late;
/* Tests only (BPFPROF_TEST_SKIP_SWITCHIN): ignore every Nth switch-in that ends an interval. */
const volatile __u32 test_skip_switchin = 0;
__u32 test_switchins;

static __always_inline void emit_switch(__u32 cpu, __u64 pid_tgid, __u64 ts, __u64 start, __u16 flags)
{
	struct bp_rec_switch *r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);

	if (!r) {
		count_lost(cpu);
		return;
	}
	rec_hdr_at(&r->h, BP_REC_SWITCH, flags, cpu, pid_tgid, ts);
	r->blocked_ns = ts - start;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * prev is leaving a CPU while still marked off-cpu since start: it was
 * switched in without this program seeing it.  On our VMs sched_switch
 * reaches no BPF program while a thread of the VM's PID 1 (its init, a
 * tokio program) runs on the CPU, so the switch from it to a traced thread
 * is never seen (docs/sampling.md).  The scheduler stamps each arrival on the
 * task (sched_info.last_arrival, in its rq clock): that is when the
 * interval ended, moved to bpf_ktime_get_ns()'s clock by the two clocks'
 * difference now: this CPU's rq->clock was read by __schedule() before it
 * picked next (reached through prev's cfs_rq: the `runqueues` symbol is not
 * in kallsyms without CONFIG_KALLSYMS_ALL).  Without them (no
 * CONFIG_SCHED_INFO or CONFIG_FAIR_GROUP_SCHED) the interval ends now.
 */
static __always_inline void end_late(struct task_struct *prev, __u32 cpu, __u64 pid_tgid,
				     __u64 start)
{
	__u64 now = bpf_ktime_get_ns(), in = now, arrival = 0, clock = 0;

	if (bpf_core_field_exists(((struct cfs_rq *)0)->rq) &&
	    bpf_core_field_exists(prev->sched_info.last_arrival)) {
		struct rq *rq = BPF_CORE_READ(prev, se.cfs_rq, rq);

		if (rq && BPF_CORE_READ(rq, cpu) == cpu) {
			clock = BPF_CORE_READ(rq, clock);
			arrival = BPF_CORE_READ(prev, sched_info.last_arrival);
		}
	}
	if (arrival && arrival <= clock)
		in = now - (clock - arrival);
	if (in < start || in > now)
		in = now;
	emit_switch(cpu, pid_tgid, in, start, BP_SWITCH_LATE);
	__sync_fetch_and_add(&offcpu_late, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 prev_tgid = BPF_CORE_READ(prev, tgid), next_tid = BPF_CORE_READ(next, pid);
	__u32 prev_tid = BPF_CORE_READ(prev, pid);
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now, *start;

	batch_flush();	/* prev's calls come before its off-cpu sample */
	/* prev ran since it blocked (blocks again, or is preempted): end that interval first */
	start = prev_tid ? bpf_map_lookup_elem(&offcpu_start, &prev_tid) : NULL;
	if (start) {
		end_late(prev, cpu, (__u64)prev_tgid << 32 | prev_tid, *start);
		bpf_map_delete_elem(&offcpu_start, &prev_tid);
	}
	/* prev blocks (not merely preempted): remember when, and where (its stack). */
	if (prev_tid && !preempt && BPF_CORE_READ(prev, __state) != TASK_RUNNING &&
	    is_traced(prev_tgid)) {
		now = bpf_ktime_get_ns();
		if (!bpf_map_update_elem(&offcpu_start, &prev_tid, &now, BPF_ANY))
			emit_stack(ctx, (__u64)prev_tgid << 32 | prev_tid, BP_SAMPLE_OFFCPU, 0);
	}
	/* next was blocked: how long. */
	start = bpf_map_lookup_elem(&offcpu_start, &next_tid);
	if (start) {
		if (test_skip_switchin &&
		    __sync_fetch_and_add(&test_switchins, 1) % test_skip_switchin == test_skip_switchin - 1)
			return 0;	/* as if this switch had not been seen */
		emit_switch(cpu, (__u64)BPF_CORE_READ(next, tgid) << 32 | next_tid,
			    bpf_ktime_get_ns(), *start, 0);
		bpf_map_delete_elem(&offcpu_start, &next_tid);
	}
	return 0;
}

/*
 * Mappings (struct bp_rec_mmap) of the sampled processes, so that stacks of
 * a process gone before they are decoded still find their files.  Only the
 * traced processes pay for it:
 *   - at their exec (sched_process_exec): the image and its interpreter,
 *     mapped by the kernel;
 *   - when their dynamic linker has changed the list of loaded objects (a
 *     uprobe on its _dl_debug_state(), called at start-up once the needed
 *     libraries are mapped and at every dlopen): the libraries.
 * Both walk the process's mappings with the VMA iterator and send those of
 * a file's code, and its header (offset 0), not sent before (mmap_seen).
 * Kernels without the iterator (before 6.7) get the former way instead:
 * mmap_exit at the return of every system call on the machine (sys_exit),
 * for the mmap and execve calls of the traced processes; a few percent on
 * every other process's system calls (bench/mmaps.sh).  fentry on the
 * kernel's mmap functions would be nearer, but is not loadable everywhere
 * (refused on our test machines).
 */
#define VM_READ		0x1
#define VM_WRITE	0x2
#define VM_EXEC		0x4
#define VM_SHARED	0x8
#define NR_MMAP		9
#define NR_EXECVE	59
#define NR_EXECVEAT	322
#define MAX_ERRNO	4095
/* Mappings looked at per walk at most: a JVM has thousands, a Python process hundreds. */
#define MMAP_WALK_MAX	8192

/*
 * The mappings sent, by address space (the mm, and the tgid against the
 * reuse of a freed mm's address) and start: a walk sends only what is new,
 * or was replaced (dlclose, then another file at the same place).  LRU: the
 * entries of the processes gone go by themselves; one pushed out early is
 * sent once more, which costs a record and nothing else.
 */
struct mmap_key {
	__u64 mm;
	__u64 start;
	__u32 tgid;
	__u32 pad;
};

struct mmap_val {
	__u64 end;
	__u64 pgoff;
	__u64 ino;
	__u32 dev;
	__u32 prot;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct mmap_key);
	__type(value, struct mmap_val);
} mmap_seen SEC(".maps");

/* The struct mount around a vfsmount (container_of, offsets from BTF). */
static __always_inline struct mount *real_mount(struct vfsmount *m)
{
	return (struct mount *)((void *)m - bpf_core_field_offset(struct mount, mnt));
}

/* The path of d (in vm) into r->names, component by component, file first. */
static __always_inline void mmap_path(struct bp_rec_mmap *r, struct dentry *d, struct vfsmount *vm)
{
	struct mount *m = real_mount(vm);
	__u32 off = 0, i;

	for (i = 0; i < BP_MMAP_DEPTH; i++) {
		struct dentry *parent = BPF_CORE_READ(d, d_parent);
		struct dentry *root = BPF_CORE_READ(vm, mnt_root);

		if (d == root || d == parent) {
			struct mount *up = BPF_CORE_READ(m, mnt_parent);

			if (d != root || up == m) {
				r->len = off;
				return;	/* the root of the mount tree (or of a detached one) */
			}
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = up;
			vm = (void *)up + bpf_core_field_offset(struct mount, mnt);
			continue;
		}
		if (off >= BP_MMAP_NAMES)
			break;
		long n = bpf_probe_read_kernel_str(&r->names[off], BP_MMAP_NAME,
						   BPF_CORE_READ(d, d_name.name));
		if (n <= 0)
			break;
		off += n;
		d = parent;
	}
	r->len = off < BP_MMAP_NAMES ? off : BP_MMAP_NAMES;
	r->h.flags |= BP_MMAP_PARTIAL;
}

/* A record for vma (a mapping of file f) of process id.  false: lost (counted). */
static __always_inline bool send_vma(struct vm_area_struct *vma, struct file *f, __u64 id,
				     const struct mmap_val *v)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct bp_rec_mmap *r;

	r = bpf_ringbuf_reserve(&rb, sizeof(*r), 0);
	if (!r) {
		count_lost(cpu);
		return false;
	}
	rec_hdr(&r->h, BP_REC_MMAP, 0, cpu, id);
	r->start = BPF_CORE_READ(vma, vm_start);
	r->end = v->end;
	r->pgoff = v->pgoff;
	r->ino = v->ino;
	r->dev = v->dev;
	r->prot = v->prot;
	mmap_path(r, BPF_CORE_READ(f, f_path.dentry), BPF_CORE_READ(f, f_path.mnt));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return true;
}

/* What a record of vma (of file f) says but its start and path. */
static __always_inline void vma_val(struct vm_area_struct *vma, struct file *f, unsigned long flags,
				    struct mmap_val *v)
{
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	v->ino = BPF_CORE_READ(f, f_inode, i_ino);
	v->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
	v->prot = flags & (VM_READ | VM_WRITE | VM_EXEC | VM_SHARED);
}

/*
 * Sends the mappings of process id (task, the current one) that hold a
 * file's code or its header and were not sent before.
 */
static __always_inline void walk_vmas(struct task_struct *task, __u64 id)
{
	struct mmap_key k = { .mm = (__u64)task->mm, .tgid = id >> 32 };
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct mmap_val v, *seen;

	if (!k.mm)
		return;
	/* nothing when the address space is busy (a writer holds it): the next walk catches up */
	bpf_iter_task_vma_new(&it, task, 0);
	/* bounded by a counting iterator: a counter of our own would make the verifier unroll */
	bpf_repeat(MMAP_WALK_MAX) {
		unsigned long flags;
		struct file *f;

		vma = bpf_iter_task_vma_next(&it);
		if (!vma)
			break;
		flags = vma->vm_flags;
		f = vma->vm_file;
		if (!f || !(flags & VM_EXEC || !vma->vm_pgoff))
			continue;
		vma_val(vma, f, flags, &v);
		k.start = vma->vm_start;
		seen = bpf_map_lookup_elem(&mmap_seen, &k);
		if (seen && seen->end == v.end && seen->pgoff == v.pgoff && seen->ino == v.ino &&
		    seen->dev == v.dev && seen->prot == v.prot)
			continue;
		/* a record lost (the ring buffer full) is tried again at the next walk */
		if (send_vma(vma, f, id, &v))
			bpf_map_update_elem(&mmap_seen, &k, &v, BPF_ANY);
	}
	bpf_iter_task_vma_destroy(&it);
}

/* After the exec's own record (the tracer's task_exec, attached first): the new image. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(mmap_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (is_traced(id >> 32))
		walk_vmas(bpf_get_current_task_btf(), id);
	return 0;
}

/* The dynamic linker's _dl_debug_state(): the libraries it loaded. */
SEC("uprobe.multi")
int BPF_KPROBE(mmap_dl)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (is_traced(id >> 32))
		walk_vmas(bpf_get_current_task_btf(), id);
	return 0;
}

/* Kernels without the VMA iterator: at the return of every system call. */
struct vma_ctx {
	__u64 id;
	struct file *file;	/* the file of the vma found (NULL: anonymous, none) */
	__u64 start;
	__u64 pgoff;
	bool header;		/* emit only the header (offset 0) of file */
};

/* bpf_find_vma's callback: a record for a file's code or header. */
static long emit_vma(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	struct vma_ctx *c = arg;
	unsigned long flags = BPF_CORE_READ(vma, vm_flags);
	struct file *f = BPF_CORE_READ(vma, vm_file);
	struct mmap_val v;

	c->file = f;
	c->start = BPF_CORE_READ(vma, vm_start);
	c->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	if (!f || !(flags & VM_EXEC || !c->pgoff) || (c->header && c->pgoff))
		return 0;
	vma_val(vma, f, flags, &v);
	send_vma(vma, f, c->id, &v);
	return 0;
}

/* The code mapping at addr and, when it is not the file's first, the file's header before it. */
static __always_inline void emit_image(struct task_struct *task, struct vma_ctx *c, __u64 addr)
{
	struct file *f;

	c->header = false;
	c->file = NULL;
	if (bpf_find_vma(task, addr, emit_vma, c, 0) || !c->file || !c->pgoff)
		return;
	f = c->file;
	c->header = true;
	/* the mapping before it; if another segment of the file, the one before that */
	if (bpf_find_vma(task, c->start - 1, emit_vma, c, 0) == 0 && c->file == f && c->pgoff)
		bpf_find_vma(task, c->start - 1, emit_vma, c, 0);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mmap_exit, struct pt_regs *regs, long ret)
{
	long nr = BPF_CORE_READ(regs, orig_ax);
	struct vma_ctx c = { .id = bpf_get_current_pid_tgid() };
	struct task_struct *task;

	if (nr != NR_MMAP && nr != NR_EXECVE && nr != NR_EXECVEAT)
		return 0;
	if ((unsigned long)ret >= (unsigned long)-MAX_ERRNO || !is_traced(c.id >> 32))
		return 0;
	task = bpf_get_current_task_btf();
	if (nr == NR_MMAP) {
		bpf_find_vma(task, ret, emit_vma, &c, 0);
		return 0;
	}
	/* the new image's code, then its interpreter's (where execve returns to) */
	emit_image(task, &c, BPF_CORE_READ(task, mm, start_code));
	emit_image(task, &c, BPF_CORE_READ(regs, ip));
	return 0;
}
