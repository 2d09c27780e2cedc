/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The decoder's own state and the functions its files share (decode.c: the
 * shadow stacks and the one record switch; tasks.c, edges.c, annot.c,
 * python.c: what the switch hands them).  Not for use outside user/decode/.
 */
#ifndef BPFPROF_DECODE_INTERNAL_H
#define BPFPROF_DECODE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode.h"

/* frame.flags (beside BP_CALL_*): its return address was put back for the
 * exception unwinder, so its return will not be seen */
#define FRAME_RESTORED 0x80000000u

/* Two stack pointers further apart than this are on different stacks
 * (sigaltstack, coroutines): never use one to judge the other's frames. */
#define SAME_STACK_SPAN (256ull << 20)

struct frame {
	uint64_t id;
	uint64_t begin;
	uint64_t sp;
	uint64_t child_ns;	/* time spent in traced children */
	uint32_t func;
	uint32_t flags;
	uint32_t path;		/* interned call path (session.paths) */
	uint32_t nretprobes;	/* the kernel's return probes pending on the thread while this
				 * frame is live: its own and those of the frames below */
	uint64_t args[6];	/* with BP_CALL_HAS_ARGS */
	uint64_t ret;		/* with BP_CALL_HAS_RET */
	struct bp_argx x;	/* with BP_CALL_HAS_XARGS (ret2 with BP_CALL_HAS_RET) */
	uint32_t info_first;	/* its BPFPROF_INFOs: tstate.infos[info_first .. next frame's) */
	uint32_t pad3;
	uint64_t pyframe;	/* a Python frame: the interpreter's frame address (python.c), else 0 */
	uint64_t task;		/* a coroutine slice: its task's id (pytask.c), else 0 */
};

struct tstate {
	uint32_t tid;		/* 0: empty slot */
	uint32_t pid;
	uint64_t first_ts, last_ts;
	uint64_t orphan_ns;	/* time of completed depth-0 calls: self time of a no-entry caller */
	uint64_t orphan_since;	/* the part of orphan_ns after the last no-entry call at depth 0 */
	uint64_t noentry_sp;	/* the last call closed with no entry at depth 0: its sp... */
	uint64_t noentry_end;	/* ...and its end (0: none) */
	struct frame *stack;
	uint32_t depth, cap;
	struct bp_info *infos;	/* a stack like the frames': the innermost frame's are last */
	uint32_t ninfos, infos_cap;
	bool unwinding;		/* in the exception unwinder: return probes were removed */
	/* an edge waiting for its far end: the thread's first call (fork) or its
	 * resumption (wakeup); src_call 0 = none */
	struct bp_edge pend_fork, pend_wake;
	struct bp_edge stayed_wake;	/* woken on a CPU (BP_WAKE_STAYED): ends at stayed_at */
	uint64_t stayed_at;
	bool offcpu_pending;	/* blocked: the stack where, waiting for its BP_REC_SWITCH */
	bool exited;		/* kept after its exit for a late BP_REC_SWITCH (offcpu_pending) */
	uint32_t offcpu_path;
	uint32_t offcpu_flags;
	uint64_t offcpu_ts;
	struct py_tstate *py;	/* Python frames for the next sample (python.c) */
};

struct decoder {
	struct bp_session *s;
	decoder_sink_fn sink;
	void *ctx;
	struct tstate *tab;	/* open addressing by tid */
	size_t tab_cap, tab_used;
	uint64_t next_id;
	uint64_t last_ts;	/* latest record time, relative */
	struct symbolizer *sy;
	struct ustrings *strings;	/* reads the strings probes could not (NULL: left empty) */
	decoder_hold_fn hold_hook;	/* see decoder__set_hold_hook */
	void *hold_ctx;
	bool data_edges;
	bool had_loss;		/* records were lost: a return without entry is no attach artefact */
	/* span names -> their session function */
	struct span_func {
		char *name;
		uint32_t func;
	} *spans;
	size_t nspans;

	/* data edges: pointers returned by calls, value -> producing call */
	struct ptr_slot {
		uint64_t value;
		uint64_t call, ts;
		uint32_t pid, tid, func, pad;
	} *ptrs;
	size_t ptrs_cap;
	/* per-process address ranges: what can be a pointer */
	struct pid_ranges {
		uint32_t pid;
		uint32_t n;
		uint64_t (*r)[2];
		int misses;
	} *ranges;
	size_t nranges;
	struct py_decoder *py;	/* Python code names and generator states (python.c) */
	struct py_tasks *pytasks;	/* asyncio tasks and their edges (pytask.c) */
	struct compensator *comp;	/* probe cost out of the clock (compensate.c), NULL: raw */
	uint64_t *dropped_bits;		/* functions the governor dropped (decoder__drop_func) */
	size_t ndropped_bits;		/* words */
	/* a code object of a dropped Python function (decoder__set_py_drop) */
	void (*py_drop)(void *ctx, uint32_t pid, uint64_t code);
	void *py_drop_ctx;
	int (*loss_check)(void *ctx);	/* decoder__set_loss_check */
	void *loss_check_ctx;
	decoder_py_namer_fn py_namer;	/* names code objects met only in samples */
	decoder_py_proc_fn py_proc;	/* a process met in samples: is it CPython? */
	void *py_ctx;
};


/* Makes d->had_loss current before a return without entry is judged (decoder__set_loss_check). */
int dec_losses_known(struct decoder *d);

/* python.c: Python frames in the decoder */
int dec_on_pycode(struct decoder *d, const struct bp_rec_pycode *r);
/* Tells d->py_drop every code object named so far of the (dropped) Python function func. */
void dec_py_drop_codes(struct decoder *d, uint32_t func);
int dec_on_py(struct decoder *d, const struct bp_rec_py *r, uint64_t ts);
void dec_py_free(struct decoder *d);
int dec_on_pytask(struct decoder *d, const struct bp_rec_pytask *r);
/* After python.c pushed a Python frame (on top of t's stack) / before it ends one. */
int dec_pytask_start(struct decoder *d, struct tstate *t, const struct bp_rec_py *r, uint64_t ts);
void dec_pytask_end(struct decoder *d, const struct tstate *t, const struct bp_rec_py *r);
void dec_pytask_free(struct decoder *d);
/* A marker function (not code: BP_FUNC_MARKER | flags) named `name` in module `file`. */
uint32_t dec_py_marker(struct decoder *d, const char *file, const char *name, uint32_t flags);
/*
 * The marker frames of a sampled stack's asyncio (or trio) Task and the Tasks
 * awaiting it (awaited_by: innermost first, 0-terminated) into out[]
 * innermost first, at most cap: "[task NAME]", "[awaited by NAME]"...;
 * returns how many.
 */
size_t dec_pytask_frames(struct decoder *d, uint32_t pid, uint64_t task, bool trio,
			 const uint64_t awaited_by[BP_PY_MAX_AWAITERS], uint32_t *out, size_t cap);
int dec_on_pystack(struct decoder *d, const struct bp_rec_pystack *r, size_t size, uint64_t ts);
/* The process exec'd: look at it again when it is sampled. */
void dec_py_forget_process(struct decoder *d, uint32_t pid);
/* The sampled stack `path` of t with its interpreter frames replaced by the Python frames. */
uint32_t dec_py_splice(struct decoder *d, struct tstate *t, uint32_t pid, uint32_t path);

struct tstate *dec_thread_state(struct decoder *d, uint32_t tid, uint32_t pid, uint64_t ts);
/* The state of tid, NULL if none (not made). */
struct tstate *dec_find_thread(struct decoder *d, uint32_t tid);
/* A record's time, relative to the session's start. */
static inline uint64_t dec_rel_ts(const struct decoder *d, uint64_t ts)
{
	return ts > d->s->t0 ? ts - d->s->t0 : 0;
}

void dec_forget_thread(struct decoder *d, uint32_t tid);
/* retprobe: the call's end comes from a kernel return probe (a native call), not from a USDT probe */
void dec_push(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
	      uint64_t id, bool retprobe);
int dec_emit_call(struct decoder *d, struct tstate *t, const struct frame *f, uint32_t depth,
		     uint64_t end, uint32_t flags);
int dec_pop_emit(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags);
static inline bool dec_same_stack(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < SAME_STACK_SPAN;
}
int dec_close_all(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags);
int dec_emit_edge(struct decoder *d, const struct bp_edge *e);
int dec_data_edges(struct decoder *d, struct tstate *t, const struct frame *f,
		      const uint64_t *regs);
void dec_note_return(struct decoder *d, struct tstate *t, const struct bp_call *c, uint64_t v);
int dec_on_task(struct decoder *d, const struct bp_rec_task *r, uint64_t ts);
int dec_on_exec(struct decoder *d, const struct bp_rec_exec *r, uint64_t ts);
int dec_on_sample(struct decoder *d, const struct bp_rec_sample *r, size_t size, uint64_t ts);
int dec_on_switch(struct decoder *d, const struct bp_rec_switch *r, uint64_t ts);
int dec_on_mmap(struct decoder *d, const struct bp_rec_mmap *r, size_t size);
int dec_on_wakeup(struct decoder *d, const struct bp_rec_wakeup *r, uint64_t ts);
int dec_wake_due(struct decoder *d, struct tstate *t, uint64_t ts);
int dec_on_usdt(struct decoder *d, const struct bp_rec_usdt *r, uint64_t ts);

#endif
