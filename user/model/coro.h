/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Coroutine spans: one invocation of a Python coroutine or generator, from
 * its first start to its final return or exception, made of the on-CPU
 * slices the decoder emits for it (decode/python.c: a call that ends at a
 * yield/await is flagged BP_CALL_SUSPENDED, the call where the same frame
 * runs again BP_CALL_RESUMED, and a BP_EDGE_RESUME edge joins the two).
 *
 * The joiner streams: it keeps the spans whose frame is suspended, keyed by
 * the id of their last slice, and follows each resume edge to the next
 * slice.  A span ends with a slice that is not suspended; a span still
 * suspended when the stream ends is handed out by coro__drain(), flagged
 * CORO_OPEN.  Memory: the coroutines alive at once (and those the program
 * left suspended for good).
 *
 * A slice is told from a plain call by its flags; a call of a function whose
 * code object is a generator or coroutine (BP_FUNC_RESUMABLE) that never
 * suspended is a span of one slice.
 */
#ifndef BPFPROF_CORO_H
#define BPFPROF_CORO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "session.h"

struct coro_span {
	uint64_t id;		/* the bp_call.id of its first slice */
	uint64_t begin, end;	/* ns since t0: its first slice's begin, its last slice's end */
	uint64_t exec;		/* ns on CPU: the sum of its slices' durations */
	uint64_t max_slice;	/* ns: its longest slice */
	uint32_t pid, tid;	/* of its first slice */
	uint32_t func;
	uint32_t nslices;
	uint32_t flags;		/* CORO_* */
	uint32_t pad;
	uint64_t task;		/* its first slice's bp_call.task (BP_CALL_IN_TASK), 0: none;
				 * the task's own span (its outermost coroutine) has id == task */
	/*
	 * Its suspended time (wall = exec + await_child + await_other): a gap
	 * between two slices is awaiting a child when the slice before it
	 * suspended because a coroutine it called suspended (an `await` of a
	 * coroutine or generator whose slice, directly inside it, suspended
	 * just before it on the thread), else awaiting something else (a
	 * future, another task, a bare yield).
	 */
	uint64_t await_child, await_other;
};
#define CORO_RAISED	0x1	/* ended with an exception */
#define CORO_OPEN	0x2	/* still suspended when the recording ended */
#define CORO_NO_START	0x4	/* its first slice seen is a resumption: it began before the
				 * recording, or the edge to its earlier slices was lost */
#define CORO_GAP_CHILD	0x8	/* (while held) its last slice suspended in a child's await */

/*
 * The figures of one coroutine function's spans, added span by span
 * (report's, diff's and serve's tables).
 */
struct coro_tally {
	uint64_t calls, slices;
	uint64_t exec, wall;		/* ns, summed over its spans */
	uint64_t max_exec, max_wall;	/* ns, of one span */
	uint64_t raised, open;		/* spans that ended by an exception / never ended */
	uint64_t await_child, await_other;	/* ns suspended: in a child's await / the rest */
};

/* A span's wall time: its first start to its end (0 if the clock went back). */
static inline uint64_t coro_span__wall(const struct coro_span *sp)
{
	return sp->end > sp->begin ? sp->end - sp->begin : 0;
}

void coro_tally__add(struct coro_tally *t, const struct coro_span *sp);
/* Adds another tally's spans (diff folds functions of the same name). */
void coro_tally__merge(struct coro_tally *t, const struct coro_tally *other);

/* What coro__call() made of a call. */
enum coro_slice {
	CORO_NOT_SLICE = 0,	/* a plain call */
	CORO_SLICE,		/* a slice of a span still suspended: *span is the span so far */
	CORO_LAST,		/* the span's last slice: *span is the whole span */
};

struct coro_joiner;

struct coro_joiner *coro__new(void);
void coro__free(struct coro_joiner *j);
/* s: the functions' flags (BP_FUNC_RESUMABLE), may be NULL. */
enum coro_slice coro__call(struct coro_joiner *j, const struct bp_session *s,
			   const struct bp_call *c, struct coro_span *span);
/* A BP_EDGE_RESUME edge (other kinds are ignored). */
void coro__edge(struct coro_joiner *j, const struct bp_edge *e);
/* Spans suspended now (at the end: never resumed), each flagged CORO_OPEN; then forgotten. */
int coro__drain(struct coro_joiner *j, int (*fn)(void *ctx, const struct coro_span *sp),
		void *ctx);
/* Spans held (suspended). */
size_t coro__held(const struct coro_joiner *j);

/*
 * Tasks (session.h: BP_ANNOT_TASK): their names, kept from the annotation
 * (sent when the task's first slice starts) until coro__task_done().
 */
void coro__task(struct coro_joiner *j, const struct bp_annot *a);
/* The name of task id ("" if unknown); forgets it when done. */
const char *coro__task_name(struct coro_joiner *j, uint64_t id);
void coro__task_done(struct coro_joiner *j, uint64_t id);

#endif
