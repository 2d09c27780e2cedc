/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The report's aggregate tables, shared by the aggregation (report.c), the
 * printing (print.c) and the functions the governor dropped (drops.c).  Not
 * for use outside user/report/.
 */
#ifndef BPFPROF_REPORT_INTERNAL_H
#define BPFPROF_REPORT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report.h"
#include "model/filter.h"

/*
 * Durations per function go into a log-linear histogram (HDR-style): values
 * below 16 ns have a bucket each; above, every power of two [2^e, 2^(e+1))
 * is split into 16 equal sub-buckets of width 2^(e-4).  That is 16 + 60 * 16
 * = 976 buckets for the whole uint64_t range.  A percentile is reported as
 * the middle of its bucket, clamped to the exact [min, max]: a bucket starts
 * at lo >= 16 * width, so the middle is off by less than width / 2 <= lo / 32,
 * i.e. the relative error of p50/p99 is at most 1/32 (3.125%), and zero below
 * 32 ns.  Histograms are allocated at a function's first call (7.8 KiB each),
 * so memory follows the functions actually called.
 */
#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct func_row {
	uint64_t calls;
	uint64_t sum;		/* inclusive ns of every call, nested ones too: for avg */
	uint64_t self;
	uint64_t min, max;
	uint64_t total;		/* inclusive ns of outermost activations (resolve()) */
	uint64_t *hist;		/* HIST_BUCKETS counts, NULL until the first call */
};

/* Aggregates of the calls with one call path (and function). */
struct path_row {
	uint32_t path;
	uint32_t func;
	uint64_t calls, total, self, max;
};

struct report {
	struct report_opts o;
	struct event_filter filter;	/* from o.pid, o.tid */
	pid_t filter_pid, filter_tid;
	struct func_row *funcs;
	size_t nfuncs;
	struct path_row *rows;	/* dense, in order of first call */
	size_t nrows;
	uint32_t *slots;	/* open addressing over rows: row index + 1, 0 = empty */
	size_t nslots;
	uint64_t ncalls, nunfinished, lost;
	uint64_t nentry_lost;	/* calls flagged BP_CALL_ENTRY_LOST */
	uint64_t nsamples, sample_weight;	/* stack samples: a table of their own (see print_samples) */
	/* per function, [0] cpu samples, [1] off-cpu intervals: leaf (self) and anywhere on the stack */
	struct samp_row {
		uint64_t self_n, total_n, self_w, total_w;
		uint64_t last;		/* serial of the last sample that counted it in total */
	} *samp[2];
	size_t nsamp[2];
	uint64_t samp_n[2], samp_w[2];
	/* dependency edges by (kind, source function, destination function) */
	struct edge_row {
		uint32_t kind, src, dst, used;
		uint64_t count, latency;
	} *edges;
	size_t edges_cap, nedges;
	/* BPFPROF_MARK checkpoints, in arrival order (per thread: in time order) */
	struct mark_row {
		uint64_t ts;
		uint32_t pid, tid;
		char label[64];
	} *marks;
	size_t nmarks, marks_cap;
	/* functions the overhead governor dropped (BP_ANNOT_DROP), in arrival order */
	struct drop_row {
		uint64_t ts, rate, calls, pct;
		uint64_t distortion_pct;	/* probe cost per call / own time, in %; 0: not known */
		uint32_t func;
		char name[64];
	} *drops;
	size_t ndrops;
	uint64_t last_end;	/* latest call end: the wall time when the session has none */

	/* built by resolve() from the (complete) session paths */
	uint32_t *first_child, *next_sibling;	/* per path, 0 = none */
	uint32_t *node_row;	/* per path: its row index + 1, 0 = no calls */
	uint8_t *live;		/* per path: it or a descendant has calls */
	size_t npaths;
};


/*
 * Depth-first walk of the live call paths, children sorted by the sort key,
 * at most opts.depth levels.  `chain` holds the path numbers from the
 * outermost call down to the visited node.  Iterative, like report_resolve().
 */
typedef void (*tree_visit_fn)(struct report *r, const struct bp_session *s, FILE *f,
			      const uint32_t *chain, size_t depth, bool first);

uint64_t report_lost_records(const struct report *r, const struct bp_session *s);
size_t report_sorted_funcs(struct report *r, const struct bp_session *s, enum report_sort key,
			   uint32_t **out);
uint64_t report_wall_ns(const struct report *r, const struct bp_session *s);
double report_pct_wall(const struct report *r, const struct bp_session *s, uint64_t ns);
void report_resolve(struct report *r, const struct bp_session *s);
const struct path_row *report_node_stats(const struct report *r, uint32_t p);
void report_walk_tree(struct report *r, const struct bp_session *s, FILE *f, tree_visit_fn visit);
uint64_t report_percentile(const struct func_row *f, unsigned int q);
/* drops.c: the governor's drops */
void report_drop_add(struct report *r, const struct bp_annot *a);
void report_drops_pretty(const struct report *r, const struct bp_session *s, FILE *f);
void report_drops_json(const struct report *r, const struct bp_session *s, FILE *f);

#endif
