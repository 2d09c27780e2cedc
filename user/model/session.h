/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The decoded model of one recording, shared by the decoder, the archive and
 * every exporter: the tables (modules, functions, processes, threads) and the
 * decoded events that stream between them.
 *
 * Tables are small (bounded by symbols and tasks); events are never stored
 * here: they flow from the decoder to the sinks one at a time.
 */
#ifndef BPFPROF_SESSION_H
#define BPFPROF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* A binary or shared library whose functions are traced. */
struct bp_module {
	char *path;
	/* its GNU build-id in lowercase hex, NULL: none or unknown (bpfprof symbolize's key) */
	char *build_id;
};

/*
 * bp_func.flags: the low byte is the class of the instruction the probe sits
 * on (ELFSYM_INSN_*), which decides its cost: the kernel emulates push and
 * nop, rewrites a 5-byte nop into a call, and single-steps everything else
 * out of line (about 10x dearer).
 */
#define BP_FUNC_INSN_MASK	0xff
#define BP_FUNC_SKIP_ENDBR	0x100	/* probed after the entry's endbr64 (4 bytes) */
#define BP_FUNC_SAMPLED		0x200	/* a symbol met in stack samples, not probed */
#define BP_FUNC_KERNEL		0x400	/* a kernel function (module "[kernel]") */
#define BP_FUNC_UNKNOWN		0x800	/* no symbol: the name is "[unknown] file+0xoffset" */
#define BP_FUNC_MARKER		0x1000	/* not code: "[truncated]" at the root of a cut stack */
#define BP_FUNC_SPAN		0x2000	/* a BPFPROF_SPAN_BEGIN/END range, nested like a call */
#define BP_FUNC_ENTRY_ONLY	0x4000	/* no return probe (a Go function): each entry a call of 0 ns */
#define BP_FUNC_GO_CHECKED	0x8000	/* probed after Go's stack check (elfsym__go_prologue) */
#define BP_FUNC_PLACED		0x10000	/* probed after a harmless prefix (symbols/placement.c) */
#define BP_FUNC_PYTHON		0x20000	/* a Python function: name = qualified name, module = its file */
/* the overhead governor stopped tracing it (--max-overhead; a BP_ANNOT_DROP says when) */
#define BP_FUNC_DROPPED		0x40000
/* a Python generator, coroutine or async generator (co_flags): its calls are spans of
 * slices, suspended and resumed (model/coro.h) */
#define BP_FUNC_GENERATOR	0x80000
#define BP_FUNC_COROUTINE	0x100000
#define BP_FUNC_ASYNC_GEN	0x200000
#define BP_FUNC_RESUMABLE	(BP_FUNC_GENERATOR | BP_FUNC_COROUTINE | BP_FUNC_ASYNC_GEN)
/* a marker in sampled stacks: "[task NAME]" the asyncio Task running (outside its coroutine),
 * "[awaited by NAME]" a Task awaiting it, outside it (with BP_FUNC_MARKER) */
#define BP_FUNC_PYTASK		0x400000
/* what the formats without annotations append to a dropped function's name */
#define BP_DROPPED_SUFFIX	" [dropped by --max-overhead]"

struct bp_func {
	char *name;		/* demangled where possible */
	uint32_t module;	/* index into session.modules */
	uint32_t flags;		/* BP_FUNC_* */
	uint64_t addr;		/* symbol value (link-time virtual address) */
	uint64_t size;
	uint64_t offset;	/* file offset the probe is placed at */
	uint32_t probe_skip;	/* bytes from the entry to the probe (not archived) */
	const char *probe_why;	/* static: why the probe stayed before an emulated instruction, or NULL */
	int32_t nparams;	/* from DWARF; -1: unknown or variadic */
	uint32_t line;		/* definition line from DWARF, 0: unknown */
	char *file;		/* definition file from DWARF, NULL: unknown */
	uint32_t source;	/* SYMSRC_* (symbols/debugsyms.h): where the name comes from */
	/* typed parameters and return value from DWARF (model/argsig.h), NULL: unknown */
	char *sig;
};

struct bp_thread {
	uint32_t tid;
	uint32_t pid;
	char name[16];
	uint64_t first_ts, last_ts;	/* ns since session t0 */
	int exited;
};

struct bp_process {
	uint32_t pid;
	uint32_t ppid;
	char *name;		/* comm, or exe basename */
};

/*
 * A call path: the chain of functions from a thread's outermost traced call
 * down to this one.  Paths are interned: node 0 is the empty root, every
 * other node is (parent node, function).  Memory grows with distinct call
 * paths, not with calls, which is what lets pprof, folded stacks, DOT and the
 * report's tree stream.
 */
struct bp_path {
	uint32_t parent;
	uint32_t func;
};

/* The decoder's counters in a session (nrecords .. nannots below). */
#define SESSION_NCOUNTERS	15

struct bp_session {
	/* header */
	char *cmdline;		/* the traced command, or "attach PID" */
	char *hostname;
	char *kernel;
	uint64_t t0;		/* CLOCK_MONOTONIC ns at start: event times are relative to it */
	int64_t realtime_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start, ns */
	uint64_t duration;	/* ns, set when the recording ends */
	/*
	 * How durations were measured: NULL for the raw clock, else what the
	 * probes' cost taken out of each thread's clock was (decode/compensate.h),
	 * e.g. "compensated: 1800 ns per call inside, 9300 ns per traced child (emulated); ..."
	 */
	char *timing;

	struct bp_module *modules;
	size_t nmodules;
	struct bp_func *funcs;
	size_t nfuncs;

	struct bp_path *paths;	/* paths[0] is the root */
	size_t npaths;
	uint32_t *path_hash;	/* open addressing over paths, 0 = empty */
	size_t path_hash_cap;

	struct bp_thread *threads;	/* kept sorted by tid by session__thread() */
	size_t nthreads;
	struct bp_process *procs;
	size_t nprocs;

	char **probes;		/* -U probes, "provider:name", by index (the cookie >> 8) */
	size_t nprobes;

	/* losses: records the BPF side could not reserve, per CPU */
	uint64_t lost_total;
	uint64_t *lost_per_cpu;
	size_t ncpus;

	/*
	 * Counters filled by the decoder, each a count: two recordings' add
	 * up (merge sums `counters[]`, this very list: a counter added here
	 * is summed with no more code; SESSION_NCOUNTERS follows).
	 */
	union {
		struct {
			uint64_t nrecords;
			uint64_t ncalls;
			uint64_t nunfinished;	/* calls closed at thread exit / end of recording */
			uint64_t nno_entry;	/* returns whose entry was not seen */
			uint64_t nunwound;	/* frames skipped by longjmp/exceptions */
			uint64_t nno_retprobe;	/* frames too deep for a return probe */
			uint64_t nexceptions;	/* entries into the exception unwinder */
			uint64_t nsamples;	/* cpu samples */
			uint64_t noffcpu;	/* off-cpu intervals */
			uint64_t ntruncated;	/* samples whose user stack is cut short */
			uint64_t nedges[4];	/* per BP_EDGE_* kind */
			uint64_t nannots;	/* marks, events, probes */
		};
		uint64_t counters[SESSION_NCOUNTERS];
	};
};
/* counters[] is the whole list above, no more, no less */
_Static_assert(offsetof(struct bp_session, nannots) + sizeof(uint64_t) ==
	       offsetof(struct bp_session, counters) + sizeof(((struct bp_session *)0)->counters),
	       "SESSION_NCOUNTERS is not the number of the session's counters");

/* call flags */
#define BP_CALL_UNFINISHED	0x1	/* no return seen: closed at the thread's last time */
#define BP_CALL_NO_ENTRY	0x2	/* return seen without entry: began before the recording */
#define BP_CALL_UNWOUND		0x4	/* skipped by longjmp/exception: closed when detected */
#define BP_CALL_HAS_ARGS	0x10	/* args[] holds the argument registers (--args) */
#define BP_CALL_HAS_RET		0x20	/* ret holds the return value (--args) */
#define BP_CALL_HAS_INFOS	0x40	/* infos[] holds BPFPROF_INFO key/values */
#define BP_CALL_HAS_XARGS	0x2000	/* x holds stack words, rdx and strings (--args) */
#define BP_CALL_HAS_XMM		0x4000	/* x.xmm holds floats read inside the call (--args) */
#define BP_CALL_IN_TASK		0x8000	/* a coroutine slice with its task in `task` */
#define BP_CALL_NO_RETPROBE	0x8	/* nested too deep for a kernel return probe: the end is
					 * the last event before the frame was seen gone */
#define BP_CALL_SUSPENDED	0x100	/* a Python generator/coroutine slice that ends at a yield/await */
#define BP_CALL_RESUMED		0x200	/* ...that begins where the frame resumed (not at its call) */
#define BP_CALL_RAISED		0x400	/* a Python frame that ended with an exception */
#define BP_CALL_DROPPED		0x800	/* its function was dropped by the governor before it
					 * returned: the end is the last event before the frame
					 * was seen gone */
#define BP_CALL_ENTRY_LOST	0x1000	/* return seen without entry after records were lost:
					 * the begin is the thread's record before the return
					 * (the latest the entry can have been), not its start */

/* A BPFPROF_INFO key/value merged into the innermost call of its thread. */
#define BP_INFO_STR_LEN 64
struct bp_info {
	char key[BP_INFO_STR_LEN];
	char str[BP_INFO_STR_LEN];	/* BPFPROF_INFO_STR's value; "" for a number */
	int64_t value;
	uint32_t is_str;
	uint32_t pad;
};

/*
 * What --args captures beyond the six registers: the first stack words at
 * entry (the 7th and later arguments, structs passed in memory), rdx at
 * return (the high half of a 16-byte struct), and up to BP_ARGX_NSTR strings
 * that `char *` arguments point at, read at entry; and the float/double
 * values read inside the function (xmm[N]: the parameter passed in xmm N,
 * xmm[BP_ARGX_XRET]: the return value; bit i of xmm_mask: xmm[i] was read).
 */
#define BP_ARGX_STACK	4
#define BP_ARGX_XMM	9
#define BP_ARGX_XRET	8	/* bpf/events.h BP_XVAL_RET */
#define BP_ARGX_NSTR	2
#define BP_ARGX_STR	64	/* bytes of each string, with its NUL (bpf/events.h BP_ARG_STR) */
#define BP_ARGX_NONE	0xff	/* str_slot: no string */
/* str_state */
#define BP_ARGX_STR_OK		0	/* read whole */
#define BP_ARGX_STR_CUT		1	/* longer than BP_ARGX_STR - 1: cut */
#define BP_ARGX_STR_UNREAD	2	/* not readable at entry (NULL, or a page not present) */
struct bp_argx {
	uint64_t stack[BP_ARGX_STACK];	/* *(sp + 8 + 8 * i) at entry */
	uint64_t ret2;			/* rdx at return */
	uint8_t str_slot[BP_ARGX_NSTR];	/* the argument word it came from: 0-5 regs, 6-9 stack */
	uint8_t str_state[BP_ARGX_NSTR];
	uint16_t xmm_mask;
	uint16_t pad;
	char str[BP_ARGX_NSTR][BP_ARGX_STR];
	uint64_t xmm[BP_ARGX_XMM];
};

/* A completed call, emitted when it ends (children are emitted before parents). */
struct bp_call {
	uint64_t id;		/* unique within a session, in order of entry */
	uint64_t parent_id;	/* 0 when the call has no traced caller on its thread */
	uint64_t begin, end;	/* ns since t0 */
	uint64_t self;		/* ns: duration minus traced children */
	uint32_t pid, tid;
	uint32_t func;		/* index into session.funcs */
	uint32_t depth;		/* 0 for a call with no traced caller */
	uint32_t flags;		/* BP_CALL_* */
	uint32_t path;		/* index into session.paths: this call's call path */
	uint64_t args[6];	/* with BP_CALL_HAS_ARGS: rdi rsi rdx rcx r8 r9 at entry */
	uint64_t ret;		/* with BP_CALL_HAS_RET: rax at return */
	struct bp_argx x;	/* with BP_CALL_HAS_XARGS */
	const struct bp_info *infos;	/* BPFPROF_INFO during the call; valid in the sink only */
	uint32_t ninfos;
	uint32_t pad2;
	uint64_t task;		/* with BP_CALL_IN_TASK: the asyncio task (or other outermost
				 * coroutine) it runs in, as the call id of the task's first
				 * slice (a BP_ANNOT_TASK names it) */
};

/* A gap: records lost on a CPU, noticed at time ts. */
struct bp_loss {
	uint64_t ts;
	uint64_t count;
	uint32_t cpu;
	uint32_t pad;
};

/*
 * A stack sample: on-cpu (cpu-clock, weight = the sampling period) or
 * off-cpu (weight = the time the thread was blocked, ts = when it blocked).
 * The stack is a call path (session.paths), outermost frame first, user
 * frames then kernel frames.
 */
struct bp_sample {
	uint64_t ts;		/* ns since t0 */
	uint64_t weight;	/* ns */
	uint32_t pid, tid;
	uint32_t path;
	uint32_t cpu;
	uint32_t flags;		/* BP_SAMPLE_F_* */
	uint32_t pad;
};
#define BP_SAMPLE_F_OFFCPU	0x1
#define BP_SAMPLE_F_TRUNCATED	0x2	/* the user stack did not reach a known root */

/*
 * A dependency edge: the call src caused the call dst.  fork: src forked the
 * process or thread whose first call is dst; wakeup: src woke the thread that
 * resumed in dst (src_ts: the wakeup, dst_ts: when it ran again); data: src
 * returned `value`, a pointer that dst received as an argument.
 */
struct bp_edge {
	uint64_t src_call, dst_call;	/* bp_call.id of each end */
	uint64_t src_ts, dst_ts;	/* ns since t0 */
	uint64_t value;			/* data: the pointer */
	uint32_t src_pid, src_tid, dst_pid, dst_tid;
	uint32_t src_func, dst_func;
	uint32_t kind;			/* BP_EDGE_* */
	uint32_t pad;
};
#define BP_EDGE_FORK		1
#define BP_EDGE_WAKEUP		2
#define BP_EDGE_DATA		3
#define BP_EDGE_RESUME		4	/* a suspended Python frame -> the slice where it resumes */
/*
 * asyncio: the call that scheduled a task step (its loop.call_soon() through
 * create_task, or a future's set_result) -> the task's first slice (spawn)
 * or the slice where the awaiting task resumes (complete).
 */
#define BP_EDGE_SPAWN		5
#define BP_EDGE_COMPLETE	6

/*
 * An annotation from the program (bpfprof.h) or a -U probe: a checkpoint
 * (mark), a free-standing event with a value, the --gated window opening or
 * closing, or any other USDT probe with its numeric arguments.
 */
struct bp_annot {
	uint64_t ts;
	uint64_t call;		/* the innermost open call of the thread, 0 if none */
	int64_t value;		/* event: its value */
	int64_t args[6];	/* other probes: their arguments */
	uint32_t pid, tid;
	uint32_t kind;		/* BP_ANNOT_* */
	uint32_t nargs;
	char name[64];		/* mark label, event name, or "provider:probe" */
	uint32_t str_args;	/* probes: bit i = args[i] is a string, the n-th such in strs[n] */
	char strs[2][64];	/* those strings (read in the process, or from its file) */
};
#define BP_ANNOT_MARK		1
#define BP_ANNOT_EVENT		2
#define BP_ANNOT_START		3
#define BP_ANNOT_STOP		4
#define BP_ANNOT_PROBE		5
/*
 * The overhead governor (--max-overhead) stopped tracing a function: value =
 * its function id, args[0] = its calls per second in the window before,
 * args[1] = its calls recorded up to the drop, args[2] = the estimated
 * overhead (percent) that made it drop; name = "dropped: FUNCTION".  The
 * pid and tid are the main target's (0 with -a).
 */
#define BP_ANNOT_DROP		6
/*
 * A task appears: its first slice (call = its id, the task's id in
 * bp_call.task) starts; name = the asyncio Task's name ("Task-3", or what
 * create_task(name=) gave), else "QUALNAME#N" for a coroutine driven by
 * something else (value = 1 then).
 */
#define BP_ANNOT_TASK		7

enum bp_event_kind {
	BP_EV_CALL = 1,
	BP_EV_LOSS,
	BP_EV_SAMPLE,
	BP_EV_EDGE,
	BP_EV_ANNOT,
};

struct bp_event {
	enum bp_event_kind kind;
	union {
		struct bp_call call;
		struct bp_loss loss;
		struct bp_sample sample;
		struct bp_edge edge;
		struct bp_annot annot;
	};
};

void session__init(struct bp_session *s);
void session__free(struct bp_session *s);	/* accepts a zeroed session */

uint32_t session__add_module(struct bp_session *s, const char *path);
/* Sets module mid's build-id (hex; "" or NULL: none) unless it has one. */
void session__module_build_id(struct bp_session *s, uint32_t mid, const char *id);
uint32_t session__add_func(struct bp_session *s, const struct bp_func *f);	/* copies name */
/* Finds or creates the thread `tid`; never NULL. */
struct bp_thread *session__thread(struct bp_session *s, uint32_t tid, uint32_t pid);
/*
 * Forgets the threads that exited before `before` (ns since t0): for a
 * session that never ends (serve).  Returns how many went.  Pointers into
 * the table are invalid afterwards.
 */
size_t session__prune_threads(struct bp_session *s, uint64_t before);
/*
 * Forgets the processes that alive(pid) says are gone and that no thread of
 * the table belongs to (prune the threads first); returns how many.
 */
size_t session__prune_procs(struct bp_session *s, bool (*alive)(uint32_t pid, void *ctx),
			    void *ctx);
struct bp_thread *session__find_thread(const struct bp_session *s, uint32_t tid);
struct bp_process *session__process(struct bp_session *s, uint32_t pid);
void session__set_process_name(struct bp_session *s, uint32_t pid, const char *name);
const char *session__func_name(const struct bp_session *s, uint32_t func);
/*
 * An asyncio task marker frame (BP_FUNC_PYTASK): "[task NAME]" (*awaiter
 * false) or "[awaited by NAME]" (true); returns NAME's length, *name its
 * start (not terminated); 0 for any other function.
 */
size_t session__task_marker(const struct bp_session *s, uint32_t func, const char **name,
			    bool *awaiter);
/* The file name (no directory) of the function's module; "" for an unknown function. */
const char *session__func_module(const struct bp_session *s, uint32_t func);
/* "fork", "wakeup", "data" */
const char *session__edge_kind(uint32_t kind);
/* The path node (parent, func), created if new. */
uint32_t session__path(struct bp_session *s, uint32_t parent, uint32_t func);
/* Fills funcs[] with the path's functions, outermost first; returns the depth (<= max). */
size_t session__path_funcs(const struct bp_session *s, uint32_t path, uint32_t *funcs, size_t max);

#endif
