/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The report's aggregate tables, shared by the aggregation (report.c), the
 * printing (print.c) and the functions the governor dropped (drops.c); the
 * comparison's state (diff*.c, below).  Not for use outside user/report/.
 */
#ifndef BPFPROF_REPORT_INTERNAL_H
#define BPFPROF_REPORT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report.h"
#include "diff.h"
#include "stats.h"
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
		/* never called in the first `procs` processes of its file, whose breakpoints cost install_us each */
		bool cold;
		uint64_t procs, install_us;
		uint32_t func;
		char name[64];
	} *drops;
	size_t ndrops;
	uint64_t last_end;	/* latest call end: the wall time when the session has none */
	struct report_args *args;	/* --args FUNC:PARAM (args.c), NULL: none */
	struct report_coro *coro;	/* coroutine spans (coro.c), NULL: none met */

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

/*
 * The comparison's state, shared by diff.c (the two sides' tables),
 * diff_stats.c (their statistics) and diff_print.c (the outputs).
 */

/* A function as both sides know it: name and module file name. */
struct gfunc {
	char *name;
	char *module;
	uint64_t hash;
};

/* A call path (or stack) as both sides know it: (parent, gfunc), node 0 the root. */
struct dpath {
	uint32_t parent;
	uint32_t func;
};

/* A function of one side, by gfunc: filled by diff__side_done(). */
struct side_func {
	uint64_t calls;		/* calls that ended, all of them */
	uint64_t self;		/* ns */
	uint64_t total;		/* ns, inclusive, outermost activations only (finish_side()) */
	struct reservoir res;	/* per-call durations of calls with a seen entry and return */
	uint64_t samp_self;	/* on-cpu samples with this function as leaf */
	uint64_t samp_total;	/* ... anywhere on the stack, once per sample */
	/* sorted log durations, the quantiles (compute()) */
	double *logs;
	uint64_t p50, p90, p99;
	/* per recording of the side: log p12.5 of its timed calls (p50: --all-calls), NAN with fewer than min_calls */
	double *rm;
	uint32_t nrm;
};

struct side_path {
	uint64_t calls, total, self;	/* ns */
	uint64_t samples;		/* on-cpu samples whose whole stack is this path */
};

/*
 * While a side streams, its rows are keyed by the session's own function
 * and path ids (an array index per event, no hashing, no shared state: the
 * two sides can be read in two threads); diff__side_done() folds them into
 * the rows by gfunc and dpath.
 */
struct sfunc {
	uint64_t calls, self;
	uint64_t o_calls, o_total, o_self;	/* calls without a path of their own */
	struct reservoir res;
	bool res_init;
};

struct side {
	struct sfunc *sf;	/* by session function */
	size_t nsf;
	struct side_path *sp;	/* by session path */
	size_t nsp;
	struct side_func *funcs;	/* by gfunc */
	size_t nfuncs;
	struct side_path *paths;	/* by dpath */
	size_t npaths;
	uint64_t ncalls, nsamples, lost, unfinished;
	uint64_t run_lost;	/* loss records of the recording being read */
	uint64_t duration;
	char *label, *cmdline;
	uint32_t nruns;		/* recordings folded in (diff__side_done() calls) */
	bool done;
	struct diff_coro_side *coro;	/* coroutine spans (diff_coro.c), NULL: none met */
};

/* One row of the function table, both sides and the verdict. */
enum verdict {
	V_SAME,		/* no significant change (beyond the margin) */
	V_SLOWER,
	V_FASTER,
	V_FEW,		/* too few calls (or samples) for a verdict */
	V_ADDED,	/* only in new */
	V_REMOVED,	/* only in base */
};

struct frow {
	uint32_t func;		/* gfunc, or dpath for stack rows */
	enum verdict v;
	bool tested;
	double p_raw, p_adj;
	double ratio;		/* p50 new / base */
	double shift, ci_lo, ci_hi;	/* the shift (relative to the whole run's) and its interval */
	double raw_shift;	/* the shift before the whole run's was taken out */
	double share[2];	/* sample mode: inclusive share (functions) or stack share, tested */
	double sshare[2];	/* sample mode: self share of functions */
	int64_t dtotal;		/* sort key: change in total ns (or in share, scaled) */
};

/* A function of a module with a build-id: "BUILDID:ADDR" -> its gfunc (diff.c). */
struct bidfunc {
	char *key;		/* NULL: an empty slot */
	uint64_t hash;
	uint32_t g;
};

struct diff {
	struct diff_opts o;
	enum diff_mode mode;
	struct gfunc *gf;
	size_t ngf;
	uint32_t *gf_slots;
	size_t gf_nslots;
	struct bidfunc *bidf;	/* hash table (base/hashtab.h) */
	size_t bidf_cap, nbidf;
	struct dpath *dp;
	size_t ndp;		/* dp[0] is the root */
	uint32_t *dp_slots;
	size_t dp_nslots;
	struct side side[2];
	struct frow *rows;	/* functions */
	size_t nrows;
	struct frow *srows;	/* sample mode: stacks */
	size_t nsrows;
	bool computed;
	pthread_mutex_t lock;	/* diff__side_done(): the shared tables */
	/*
	 * The whole run's shift (log, new over base): the weighted median of the
	 * functions' shifts; the functions' shifts are relative to it.  g_p, g_lo,
	 * g_hi: its test across runs (several recordings per side), else NAN.
	 */
	bool g_known;
	size_t g_n;		/* functions it was estimated from */
	double g, g_lo, g_hi, g_p;
	bool by_runs;		/* several recordings per side: the test is across runs */
	/* path view (calls): outer[dpath] = its function is not on the path above it */
	uint8_t *outer;
	uint32_t *first_child, *next_sibling;
};

/* diff_stats.c: the rows and verdicts, once both sides are finished (diff__compute()) */
void diff_calls_one(struct diff *d);	/* calls, one recording a side */
void diff_calls_runs(struct diff *d);	/* calls, several a side */
void diff_samples(struct diff *d);	/* sample shares */

static const char *const verdict_name[] = {
	[V_SAME] = "same", [V_SLOWER] = "slower", [V_FASTER] = "faster",
	[V_FEW] = "few calls", [V_ADDED] = "added", [V_REMOVED] = "removed",
};

/* Sample mode: a larger share is "higher", not "slower" (the program may just do more). */
static const char *const verdict_name_samples[] = {
	[V_SAME] = "same", [V_SLOWER] = "higher", [V_FASTER] = "lower",
	[V_FEW] = "few", [V_ADDED] = "added", [V_REMOVED] = "removed",
};

/*
 * diff_print.c's walk over the call paths shown (depth first, children by
 * added time) and the folded stack of a path (outermost first); the
 * formats of diff_formats.c.
 */
typedef void (*path_visit_fn)(struct diff *d, FILE *f, uint32_t p, size_t depth, bool first);
void diff_walk_paths(struct diff *d, FILE *f, path_visit_fn visit);
void diff_put_path(const struct diff *d, FILE *f, uint32_t p, bool folded);
void diff_print_json(struct diff *d, FILE *f);
/* diff_coro.c: the coroutine table (per coroutine function, per invocation) */
void diff_coro_event(struct side *sd, const struct bp_session *s, const struct bp_event *ev);
void diff_coro_side_done(struct side *sd, const struct bp_session *s, const uint32_t *gmap);
void diff_coro_pretty(const struct diff *d, FILE *f);
void diff_coro_json(const struct diff *d, FILE *f);	/* ,"coroutines":[...] */
void diff_coro_free(struct side *sd);
void diff_print_csv(struct diff *d, FILE *f);
void diff_print_folded(struct diff *d, FILE *f);

/* coro.c: the coroutine table (one row per coroutine/generator function) */
struct bp_call;
struct bp_edge;
void report_coro_call(struct report *r, const struct bp_session *s, const struct bp_call *c);
void report_coro_edge(struct report *r, const struct bp_edge *e);
void report_coro_pretty(struct report *r, const struct bp_session *s, FILE *f);
void report_coro_json(struct report *r, const struct bp_session *s, FILE *f);
void report_coro_free(struct report *r);

/* --args FUNC:PARAM (args.c) */
struct report_args;
struct bp_call;
int report_args__new(const char *spec, struct report_args **out);
void report_args__add(struct report_args *a, const struct bp_session *s, const struct bp_call *c);
/* The groups by total time: pretty (a table), CSV (value,calls,...), JSON (an object). */
void report_args__print(struct report_args *a, enum report_format fmt, FILE *f);
void report_args__free(struct report_args *a);

#endif
