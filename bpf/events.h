/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Records written by the BPF programs into the ring buffer and read by the
 * userspace decoder.  This header is included both by BPF code (after
 * vmlinux.h) and by userspace (after <linux/types.h>), so it includes nothing
 * and uses only fixed-width fields with explicit padding: every record is a
 * multiple of 8 bytes and every field is naturally aligned.
 *
 * Every record starts with struct bp_rec_hdr; `type` selects the layout.
 * The decoder has one switch over `type` whose default is an error, so a new
 * record kind must be added there too.
 *
 * Timestamps are bpf_ktime_get_ns() (CLOCK_MONOTONIC).
 */
#ifndef BPFPROF_EVENTS_H
#define BPFPROF_EVENTS_H

/* Record types (values are part of the wire format: append only). */
#define BP_REC_ENTRY		1	/* struct bp_rec_call: function entry */
#define BP_REC_EXIT		2	/* struct bp_rec_call: function return */
#define BP_REC_ENTRY_ARGS	3	/* struct bp_rec_call_args: entry + 6 arg regs */
#define BP_REC_EXIT_RET		4	/* struct bp_rec_call_args: return + rax */
#define BP_REC_FORK		5	/* struct bp_rec_task: new thread or process */
#define BP_REC_TASK_EXIT	6	/* struct bp_rec_task: a thread ended */
#define BP_REC_COMM		7	/* struct bp_rec_task: thread (re)named */
#define BP_REC_EXEC		8	/* struct bp_rec_exec: process exec'd a new image */
#define BP_REC_SAMPLE		9	/* struct bp_rec_sample + stack: cpu sample or off-cpu start */
#define BP_REC_SWITCH		10	/* struct bp_rec_switch: a thread back on cpu after blocking */
#define BP_REC_WAKEUP		11	/* struct bp_rec_wakeup: a traced thread woke another */
#define BP_REC_USDT		12	/* struct bp_rec_usdt: a USDT probe fired (bpfprof.h or -U) */
#define BP_REC_UNWIND		13	/* struct bp_rec_unwind: exception unwinder entered */
#define BP_REC_USTACK		14	/* struct bp_rec_sample + struct bp_ustack: sample with a stack copy */
#define BP_REC_REARM		15	/* struct bp_rec_unwind: give surviving frames their return probes back */
#define BP_REC_BATCH		16	/* struct bp_rec_batch: call entries/exits of one CPU */
#define BP_REC_PY		17	/* struct bp_rec_py: a Python frame started, resumed or ended */
#define BP_REC_PYCODE		18	/* struct bp_rec_pycode: names of a Python code object */
#define BP_REC_PYSTACK		19	/* struct bp_rec_pystack: Python frames of the next sample */
#define BP_REC_DLOPEN		20	/* struct bp_rec_exec (no filename): the dynamic linker changed the mapped objects */
#define BP_REC_XVAL		21	/* struct bp_rec_xval: a float/double read inside a function (--args) */
#define BP_REC_PYTASK		22	/* struct bp_rec_pytask: the name of an asyncio Task */
#define BP_REC_MMAP		23	/* struct bp_rec_mmap: a sampled process mapped a file */
#define BP_REC_MAX		24

/* bp_rec_hdr.flags for BP_REC_FORK */
#define BP_TASK_NEW_PROCESS	0x1	/* child is a new thread group (fork), not a thread */
#define BP_TASK_GROUP_DEAD	0x2	/* BP_REC_TASK_EXIT: last thread of the process */

#define BP_COMM_LEN		16
#define BP_PATH_LEN		256

struct bp_rec_hdr {
	__u16 type;
	__u16 flags;
	__u32 cpu;
	__u64 ts;
	__u64 pid_tgid;		/* tgid << 32 | tid, as bpf_get_current_pid_tgid() */
};

/*
 * Function entry/exit.  `sp` is the user stack pointer when the probe fired:
 * at entry it points at the return address, at return it is entry sp + 8.
 * The decoder uses it to find frames that were skipped by longjmp or by
 * exception unwinding (their uretprobe never fires).
 */
struct bp_rec_call {
	struct bp_rec_hdr h;
	__u32 func_id;		/* the uprobe cookie: index into the function table */
	__u32 pad;
	__u64 sp;
};

/*
 * The cookie of a call probe: the function id in the low 32 bits (what
 * bp_rec_call.func_id carries), and for the overhead governor
 * (user/cost/governor.c) the link's group and generation above it.
 * Group 0, generation 0 is every probe the governor does not manage.  The
 * BPF side records a hit only when the generation is the one its group's
 * word in `gov_groups` accepts (see trace.bpf.c, gov_accept()).
 */
#define BP_GOV_GROUPS		65536	/* groups of functions, each its own pair of links */
#define BP_GOV_GROUP_SHIFT	32
#define BP_GOV_GEN_SHIFT	48
#define BP_GOV_GEN_MASK		0x7fff	/* generations wrap: only equality is asked */
/* gov_groups[g]: the current generation, and (old + 1) << 16 while a re-link is under way */
#define BP_GOV_WORD(cur, old_plus1)	((__u32)(cur) | (__u32)(old_plus1) << 16)

/*
 * Entries and exits (BP_REC_ENTRY/EXIT, not the _ARGS kinds) are collected
 * per CPU and sent BP_BATCH_RECS at a time: one ring buffer reservation per
 * batch instead of per event (half the cost of a record, see bench/).  A
 * CPU's batch is also sent when a thread leaves the CPU and before any
 * other record is written in a task's context, so each thread's records
 * keep their order in the stream; and on request of the loader
 * (tracer__flush), so none waits long.  h.ts is the last record's; n is how
 * many of r[] follow; `busy` is the BPF side's lock and means nothing here.
 */
#define BP_BATCH_RECS		64

struct bp_rec_batch {
	struct bp_rec_hdr h;
	__u32 n;
	__u32 busy;
	struct bp_rec_call r[BP_BATCH_RECS];
};

/*
 * A string the BPF side could not read (its page was never faulted in: a
 * literal the program itself never touched).  The string's address is the
 * probe argument (args[0] for s0, args[1] for s1); here is where it lies in
 * the mapped file, found by bpf_find_vma() while the process still existed,
 * so the loader can read the bytes from the file even after the process
 * exited.  ino 0: no file (anonymous memory, or no mapping found).
 */
struct bp_usdt_where {
	__u64 ino;
	__u64 off;		/* file offset of the string */
	__u32 dev;		/* the kernel's dev_t: major << 20 | minor */
	__u32 pad;
};

/*
 * With --args.  Entry: regs = rdi rsi rdx rcx r8 r9, stack = the first words
 * above the return address (7th and later integer arguments, structs passed
 * in memory), and the strings the function's `char *` arguments point at
 * (which words are strings: the func_strs map, set from DWARF; at most
 * BP_ARG_NSTR).  Exit: regs[0] = rax, regs[1] = rdx.  The xmm registers
 * (float/double arguments and returns) are not in pt_regs: they are read,
 * where DWARF and the code allow, by probes inside the function (struct
 * bp_rec_xval).
 */
#define BP_ARG_STACK		4
#define BP_ARG_NSTR		2
#define BP_ARG_STR		64
#define BP_ARG_SLOTS		10	/* func_strs mask bits: 0-5 regs, 6-9 stack words */
/* str_len[i]: bytes read with the NUL (1..BP_ARG_STR); 0: not read */
struct bp_rec_call_args {
	struct bp_rec_hdr h;
	__u32 func_id;
	__u32 pad;
	__u64 sp;
	__u64 regs[6];
	__u64 stack[BP_ARG_STACK];
	__u8 str_slot[BP_ARG_NSTR];	/* the word each string came from, 0xff: none */
	__u8 str_len[BP_ARG_NSTR];
	__u32 pad2;
	char str[BP_ARG_NSTR][BP_ARG_STR];
	struct bp_usdt_where where[BP_ARG_NSTR];	/* str_len 0: where the string lies (ino 0: unknown) */
};

/*
 * --args: a float/double argument or return value read where the function
 * keeps it in memory or in an integer register (symbols/dwarfargs.c finds
 * such places from DWARF and the code).  The probe's cookie says what to
 * read: func id (bits 0-31), slot (32-35: xmm N of a parameter, 8 the
 * return value), DWARF register number (36-39), deref (40), and a signed
 * offset (48-63) added to the register before the 8-byte read.
 */
#define BP_XVAL_RET		8
#define BP_XVAL_SLOTS		9
struct bp_rec_xval {
	struct bp_rec_hdr h;
	__u32 func_id;
	__u8 slot;
	__u8 ok;		/* 0: the memory read failed */
	__u16 pad;
	__u64 sp;
	__u64 value;		/* the 8 bytes read (a float in the low 4) */
};

/* Fork/clone, thread exit, rename: h.pid_tgid is the task concerned. */
struct bp_rec_task {
	struct bp_rec_hdr h;
	__u64 parent_pid_tgid;	/* BP_REC_FORK: the task that called fork/clone */
	char comm[BP_COMM_LEN];
};

/*
 * A file as the kernel names it (its super block's s_dev, its inode number):
 * the key of exec_known (trace_tasks.bpf.h), the images whose probes are in
 * place, so that an exec of one goes on without being held.
 */
struct bp_file_key {
	__u64 ino;
	__u32 dev;		/* MKDEV(major, minor): major << 20 | minor */
	__u32 pad;
};

struct bp_rec_exec {
	struct bp_rec_hdr h;
	__u32 old_tid;		/* a non-leader thread that exec'd takes the leader's tid */
	__u32 stopped;		/* BP_STOP_*: the loader attaches to the new image, then resumes it */
	char filename[BP_PATH_LEN];
};

/*
 * The thread entered the exception unwinder (_Unwind_RaiseException & co.).
 * The unwinder cannot step through the kernel's return trampoline, so the
 * original return addresses must be put back before it runs.  The thread
 * is held (see struct bp_hold and user/target/keeper.c) and its own slots
 * are restored; this record tells the decoder which (slot[i] held the
 * trampoline, orig[i] is the address put back).  The open frames of the
 * thread then end without return records.
 */
#define BP_UNWIND_SLOTS		64
struct bp_rec_unwind {
	struct bp_rec_hdr h;
	__u64 sp;
	__u64 trampoline;	/* the value found in each slot */
	__u32 n;		/* slots to restore */
	__u32 stopped;		/* BP_STOP_*: how the thread waits for its repair */
	__u64 slot[BP_UNWIND_SLOTS];
	__u64 orig[BP_UNWIND_SLOTS];
};

/* bp_rec_unwind.stopped, bp_rec_exec.stopped */
#define BP_STOP_NONE		0	/* not stopped */
#define BP_STOP_SIGNAL		1	/* whole process SIGSTOPped: the loader repairs, then SIGCONT */
#define BP_STOP_KEEPER		2	/* this thread alone held by the keeper (struct bp_hold) */

/*
 * A thread that stopped itself for the keeper (bpfprof's ptrace helper,
 * user/target/keeper.c): the `holds` map, tid -> this, is written before
 * the thread sends itself SIGSTOP.  The keeper, its tracer, sees the
 * signal-delivery stop of that thread alone, does the work, and resumes the
 * thread without the signal.
 */
#define BP_HOLD_UNWIND		1	/* put back the return addresses of the trampoline slots */
#define BP_HOLD_REARM		2	/* the frames above sp get their trampolines again */
#define BP_HOLD_EXEC		3	/* a new image: stay held until the loader has probed it */
struct bp_hold {
	__u32 kind;		/* BP_HOLD_* */
	__u32 pad;
	__u64 sp;		/* BP_HOLD_REARM: the stack pointer of the new call */
};

/*
 * Written by the `unwind_slots` task iterator, one per pending return
 * probe of each task, newest first: the stack slot the kernel's uretprobe
 * hijacked and the return address it held.  A slot that holds `trampoline`
 * is armed.
 */
struct bp_ret_slot {
	__u32 tid;
	__u32 pad;
	__u64 trampoline;
	__u64 slot;
	__u64 orig;
};

/* bp_rec_sample.h.flags */
#define BP_SAMPLE_OFFCPU	0x1	/* the thread blocks here; the matching BP_REC_SWITCH ends it */

#define BP_MAX_USER_FRAMES	127
#define BP_MAX_KERN_FRAMES	64

/*
 * A stack sample: nuser user frames (innermost first, frame-pointer walk by
 * the kernel) then nkern kernel frames.  The record is cut after the last
 * frame: its size is sizeof(struct bp_rec_sample) + 8 * (nuser + nkern).
 */
struct bp_rec_sample {
	struct bp_rec_hdr h;
	__u32 nuser;
	__u32 nkern;
	__u64 period;		/* ns a cpu sample stands for (0 for off-cpu starts) */
	char comm[BP_COMM_LEN];	/* the thread's name when sampled (system-wide mode) */
	__u64 ips[BP_MAX_USER_FRAMES + BP_MAX_KERN_FRAMES];
};
#define BP_SAMPLE_HDR_SIZE	(sizeof(struct bp_rec_hdr) + 8 + 8 + BP_COMM_LEN)

/*
 * BP_REC_USTACK (--stack=dwarf|auto): a struct bp_rec_sample (nuser is 0
 * with --stack=dwarf: no frame-pointer walk), then, at offset
 * BP_SAMPLE_HDR_SIZE + 8 * (nuser + nkern), a struct bp_ustack: the user
 * registers and `len` bytes of the user stack from regs[BP_UREG_SP] upward,
 * which userspace unwinds with the binaries' CFI (.eh_frame, .debug_frame).
 * The copy ends at --stack-size, at the top of the main thread's stack
 * (mm->start_stack: what lies above is argv and the environment) or at the
 * first page that cannot be read, whichever comes first.
 *
 * Registers are x86-64 DWARF numbers 0-16: rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15 rip, as libdw's x86_64 backend expects them (other architectures
 * are not copied: the sample then carries the frame-pointer stack only).
 */
#define BP_UREGS		17
#define BP_UREG_BP		6
#define BP_UREG_SP		7
#define BP_UREG_IP		16
#define BP_MAX_USTACK		65536	/* --stack-size upper bound */
#define BP_DEF_USTACK		16384	/* --stack-size default */

/* bp_ustack.flags */
#define BP_USTACK_CUT		0x1	/* stopped at --stack-size, not at the stack's top */

struct bp_ustack {
	__u64 regs[BP_UREGS];
	__u32 len;		/* stack bytes that follow */
	__u32 flags;		/* BP_USTACK_* */
	/* __u8 stack[len]: the memory at regs[BP_UREG_SP] .. + len */
};

/*
 * A sampled process mapped part of a file (what /proc/PID/maps would show
 * next), taken where perf takes its own mmap events: the stacks of a
 * process that is gone before its samples are decoded (a short child, a
 * loaded machine) still find their libraries.  Only code, and the header
 * page the unwinder places each file by: VM_EXEC, or offset 0.
 *
 * names: the path's components from the file up to the root, each ending
 * in a NUL, in `len` bytes (the record is cut after them);
 * BP_MMAP_PARTIAL: the walk stopped short of the root (deeper than
 * BP_MMAP_DEPTH, longer than BP_MMAP_NAMES), the path is not known.
 */
#define BP_MMAP_NAMES		2048
#define BP_MMAP_NAME		256	/* one component, NUL included (NAME_MAX + 1) */
#define BP_MMAP_DEPTH		32
#define BP_MMAP_PARTIAL		0x1	/* bp_rec_mmap.h.flags */

#define BP_VM_READ		0x1	/* bp_rec_mmap.prot: the kernel's VM_* bits */
#define BP_VM_WRITE		0x2
#define BP_VM_EXEC		0x4
#define BP_VM_SHARED		0x8

struct bp_rec_mmap {
	struct bp_rec_hdr h;
	__u64 start;
	__u64 end;
	__u64 pgoff;		/* file offset of start, bytes */
	__u64 ino;
	__u32 dev;		/* the kernel's dev_t: major << 20 | minor */
	__u16 prot;		/* BP_VM_* */
	__u16 len;		/* bytes of names */
	char names[BP_MMAP_NAMES + BP_MMAP_NAME];
};
#define BP_MMAP_HDR_SIZE	(sizeof(struct bp_rec_hdr) + 4 * 8 + 8)

/*
 * A thread that blocked (bp_rec_sample with BP_SAMPLE_OFFCPU) runs again.
 * h.flags BP_SWITCH_LATE: its switch-in was not seen; sent at its next
 * switch-out, h.ts is the scheduler's record of when it ran again.
 */
#define BP_SWITCH_LATE		0x1
struct bp_rec_switch {
	struct bp_rec_hdr h;
	__u64 blocked_ns;	/* time since it blocked */
};

/*
 * Wakeups between traced threads.  BP_WAKE_WAKING comes from the waker's
 * context (h.pid_tgid = waker, other = wakee) when it wakes the wakee;
 * BP_WAKE_RUNNING when the wakee is switched in (h.pid_tgid = wakee,
 * other = the waker, waking_ts = when it was woken).  The decoder ties the
 * waker's call at WAKING to the call the wakee resumes in.  BP_WAKE_STAYED
 * replaces BP_WAKE_RUNNING when the wakee was still on a CPU as it was woken
 * (preempted, or stalled, after it set itself asleep and before it switched
 * out): it goes on without being switched in.  It is sent from the waker's
 * context, h.ts = the wakeup; the wakee's calls up to then may reach the
 * decoder later, so the edge ends in the call the wakee was in at h.ts.
 */
#define BP_WAKE_WAKING		1
#define BP_WAKE_RUNNING		2
#define BP_WAKE_STAYED		3
struct bp_rec_wakeup {
	struct bp_rec_hdr h;	/* h.flags: BP_WAKE_* */
	__u64 other;		/* pid_tgid of the other side */
	__u64 waking_ts;
};

/*
 * USDT probes.  The attach cookie says which: the low byte is a BP_USDT_*
 * kind, the rest the index of a -U probe.  For the bpfprof.h probes the
 * strings they pass (label, key, name, value) are copied into s0/s1.
 */
#define BP_USDT_MARK		1	/* (label) */
#define BP_USDT_INFO		2	/* (key, int64) */
#define BP_USDT_INFO_STR	3	/* (key, string) */
#define BP_USDT_EVENT		4	/* (name, int64) */
#define BP_USDT_SPAN_BEGIN	5	/* (name) */
#define BP_USDT_SPAN_END	6	/* (name) */
#define BP_USDT_START		7	/* () open the capture window (--gated) */
#define BP_USDT_STOP		8	/* () close it */
#define BP_USDT_OTHER		9	/* -U: any probe; BP_USDT_INDEX(cookie) = its index */

#define BP_USDT_STR		64

/*
 * A -U probe's cookie: bits 8-31 its index, bits 32-37 which of its six
 * arguments are string pointers (-U 'PROVIDER:NAME(str,str,int)'); at most
 * two: the first goes to s0 (where[0]), the second to s1 (where[1]).
 */
#define BP_USDT_INDEX(cookie)	((__u32)((cookie) >> 8) & 0xffffff)
#define BP_USDT_STR_ARGS(cookie) ((__u32)((cookie) >> 32) & 0x3f)
#define BP_USDT_MAX_STR_ARGS	2


/* bp_rec_usdt.unread (the argument: args[0] / args[1], or a -U probe's string arguments) */
#define BP_USDT_S0_UNREAD	0x1	/* s0 is empty: read it from where[0] / its argument */
#define BP_USDT_S1_UNREAD	0x2	/* s1 is empty: read it from where[1] / its argument */

struct bp_rec_usdt {
	struct bp_rec_hdr h;
	__u64 cookie;
	__u64 sp;		/* the stack pointer at the probe: spans nest with calls by it */
	__s64 args[6];
	__u32 nargs;
	__u32 unread;		/* BP_USDT_S*_UNREAD */
	char s0[BP_USDT_STR];
	char s1[BP_USDT_STR];
	struct bp_usdt_where where[2];
};

/*
 * Python (CPython) frames, from python.bpf.c.  h.flags is a BP_PY_* kind.
 * `frame` is the interpreter's frame (_PyInterpreterFrame) and identifies the
 * activation: a return, yield or raise names the frame that ends, a resume
 * the (generator's) frame that goes on.  `code` is its code object, named by
 * a BP_REC_PYCODE record of the same process sent before the first record
 * that uses it (and again when the address is reused by another code
 * object).  `sp` is the native stack pointer of the interpreter loop: Python
 * frames nest with native calls by it.
 */
#define BP_PY_NAME_LEN		128
#define BP_PY_FILE_LEN		192

#define BP_PY_CALL		1	/* a new frame starts (RESUME 0) */
#define BP_PY_RESUME		2	/* a generator/coroutine frame resumes after yield/await */
#define BP_PY_RETURN		3	/* the frame returns */
#define BP_PY_YIELD		4	/* the frame suspends (yield, await) */
#define BP_PY_RAISE		5	/* the frame ends with an exception */
#define BP_PY_THROW		6	/* a suspended frame resumes with an exception (gen.throw) */

struct bp_rec_py {
	struct bp_rec_hdr h;
	__u64 code;
	__u64 frame;
	__u64 previous;		/* the calling frame (BP_PY_CALL/RESUME/THROW), 0: none */
	__u64 sp;
	__u64 arg0;		/* BP_PY_CALL: its first local (self, for a method), 0: unread */
	__u64 arg1;		/* BP_PY_CALL: its second local (trio's reschedule(self, task)) */
	__u64 task;		/* BP_PY_CALL/RESUME of a coroutine called from a non-coroutine
				 * frame: the asyncio Task stepping it (whose task_coro is this
				 * frame's coroutine), 0: none found */
};

/*
 * An asyncio Task's name (Task.get_name(): its task_name str), sent before
 * the first BP_REC_PY naming the task and again when the name object
 * changes (set_name).
 */
struct bp_rec_pytask {
	struct bp_rec_hdr h;
	__u64 task;
	__u16 name_len;
	__u8 name_kind;
	__u8 bad;		/* 1: the name could not be read */
	__u32 pad;
	char name[BP_PY_FILE_LEN];	/* up to BP_PY_NAME_LEN used (read_str's bound) */
};

/* bp_rec_pycode.flags */
#define BP_PYCODE_BAD_NAME	0x1	/* the qualified name could not be read */
#define BP_PYCODE_BAD_FILE	0x2	/* the file name could not be read */
/* its co_flags: the frames of its calls are suspended and resumed (user/model/coro.h) */
#define BP_PYCODE_GENERATOR	0x4	/* CO_GENERATOR: a `def` with `yield` */
#define BP_PYCODE_COROUTINE	0x8	/* CO_COROUTINE (`async def`) or CO_ITERABLE_COROUTINE */
#define BP_PYCODE_ASYNC_GEN	0x10	/* CO_ASYNC_GENERATOR: an `async def` with `yield` */


/*
 * A code object's qualified name and file: the raw bytes of the two
 * (compact) str objects, `*_kind` bytes per character (1: Latin-1 or
 * ASCII, 2: UCS-2, 4: UCS-4), `*_len` bytes copied; userspace converts them
 * to UTF-8.
 */
struct bp_rec_pycode {
	struct bp_rec_hdr h;
	__u64 code;
	__u32 firstlineno;
	__u32 flags;		/* BP_PYCODE_* */
	__u16 name_len, file_len;
	__u8 name_kind, file_kind;
	__u8 pad[2];
	char name[BP_PY_NAME_LEN];
	char file[BP_PY_FILE_LEN];
};

/*
 * The Python frames of a thread of a CPython process, innermost first, sent
 * just before that thread's BP_REC_SAMPLE/USTACK (cpu sample or off-cpu
 * start): code object addresses, with bit 0 set on a frame that is the
 * first of its interpreter loop's C activation (is_entry): each group of
 * frames ending at one runs in one native _PyEval_EvalFrameDefault frame;
 * bits 0 and 1 set: that activation's entry shim (3.12), not Python code.
 */
#define BP_PY_MAX_FRAMES	64
#define BP_PYSTACK_CUT		0x1	/* h.flags: more frames than BP_PY_MAX_FRAMES */
#define BP_PYSTACK_TRIO		0x2	/* h.flags: `task` (and awaited_by) are trio Tasks */

#define BP_PY_MAX_AWAITERS	4

struct bp_rec_pystack {
	struct bp_rec_hdr h;
	__u32 n;
	__u32 task_at;		/* frames[task_at]: the outermost coroutine of `task` */
	__u64 task;		/* the asyncio (or trio) Task running (0: none); named by a BP_REC_PYTASK */
	/* the Tasks awaiting it, innermost first (0-terminated): task's wakeup is awaited_by[0]'s */
	__u64 awaited_by[BP_PY_MAX_AWAITERS];
	__u64 frames[BP_PY_MAX_FRAMES];
};

/*
 * tgids map values: traced and recording, traced but outside a --gated
 * window, or bpfprof's own launcher (forked, not yet the command): its calls
 * (privilege drop, execve) are not the command's; recording starts at its
 * exec.
 */
#define BP_TGID_RECORDING	1
#define BP_TGID_GATED		2
#define BP_TGID_LAUNCHING	3

/* Counters in the BPF object's .bss, read by the loader at the end. */
#define BP_MAX_CPUS		512

/*
 * The recording processes as a bitmap (bit tgid), beside the tgids hash:
 * the filter every traced call runs is then one inlined array access, not
 * a hash lookup.  Pids are below PID_MAX_LIMIT (2^22 on 64-bit).
 */
#define BP_TGID_WORDS		(1u << 16)

struct bp_tgid_bits {
	__u64 w[BP_TGID_WORDS];
};

#endif /* BPFPROF_EVENTS_H */
