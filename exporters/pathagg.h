/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-call-path aggregates, shared by the formats that summarise a recording
 * instead of replaying it (pprof, folded stacks, DOT).  Every call carries
 * its interned call path (bp_call.path), and so does every stack sample
 * (bp_sample.path: the stack, outermost frame first); adding either only
 * bumps that path's counters, so memory grows with the number of distinct
 * paths, never with the number of calls or samples, and the exporters can
 * stream.
 *
 * Calls and samples are counted apart: a call path holds traced calls (from
 * the outermost traced function down), a sample path a whole stack (from the
 * thread's entry point, kernel frames last), and one path node can hold both
 * when the two chains happen to be the same functions.
 */
#ifndef BPFPROF_PATHAGG_H
#define BPFPROF_PATHAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/session.h"

struct path_stat {
	uint64_t calls;
	uint64_t self;		/* ns: time in this path's function, not in traced callees */
	uint64_t total;		/* ns: inclusive */
	/* stack samples whose whole stack is this path (the leaf is its function) */
	uint64_t cpu_samples;	/* on-cpu samples */
	uint64_t cpu_ns;	/* their weight: the sampling period each */
	uint64_t offcpu;	/* off-cpu intervals */
	uint64_t offcpu_ns;	/* their weight: the time blocked */
};

struct path_agg {
	struct path_stat *st;	/* indexed by path id */
	size_t cap;
	uint64_t ncalls;	/* calls added */
	uint64_t nopath;	/* calls and samples without a valid path: counted, in no stack */
	uint64_t nsamples;	/* on-cpu samples added */
	uint64_t cpu_ns;	/* their summed weight */
	uint64_t noffcpu;	/* off-cpu intervals added */
	uint64_t offcpu_ns;	/* their summed weight */
	uint64_t lost;		/* records lost, summed over the loss markers */
	uint64_t end;		/* latest call end or sample, ns since t0 */
};

/*
 * Stacks deeper than this many frames (deep recursion) are cut: the
 * outermost PATH_MAX_STACK - 1 frames are kept and a marker frame stands for
 * everything below, so that an output whose size is quadratic in the depth
 * (every stack written out in full) stays bounded.
 */
#define PATH_MAX_STACK		512
#define PATH_TRUNCATED_NAME	"[deeper frames truncated]"

/* Takes a call, sample or loss event into the aggregates (edges are not per path). */
void path_agg__event(struct path_agg *a, const struct bp_session *s, const struct bp_event *ev);
void path_agg__free(struct path_agg *a);

struct path_sample {
	uint32_t path;		/* the stack's innermost kept path */
	bool truncated;		/* deeper frames were cut: a marker frame goes below `path` */
	uint64_t calls;
	uint64_t self;		/* ns */
	uint64_t cpu_samples;
	uint64_t cpu_ns;
	uint64_t offcpu;
	uint64_t offcpu_ns;
};

typedef int (*path_sample_fn)(void *ctx, const struct path_sample *ps);

/*
 * Calls fn once per stack with calls or samples (paths deeper than max_depth
 * merged into their truncated ancestor), in path id order.  Returns 0 or the
 * first error fn returned.
 */
int path_agg__for_each(const struct path_agg *a, const struct bp_session *s, size_t max_depth,
		       path_sample_fn fn, void *ctx);

struct func_stat {
	uint64_t calls;
	uint64_t self;		/* ns */
	uint64_t total;		/* ns, inclusive; a recursive call inside itself is not counted twice */
};

/*
 * Per-function totals, indexed by function id: *out gets *n entries (the
 * largest function id on any path, plus one).  Caller frees *out.
 */
void path_agg__funcs(const struct path_agg *a, const struct bp_session *s, struct func_stat **out,
		     size_t *n);

#endif
