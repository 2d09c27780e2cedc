/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The comparison's state, shared by diff.c (the two sides' tables),
 * diff_stats.c (their statistics) and diff_print.c (the outputs).  Not for
 * use outside user/report/.
 */
#ifndef BPFPROF_DIFF_INTERNAL_H
#define BPFPROF_DIFF_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "diff.h"
#include "stats.h"

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

struct diff {
	struct diff_opts o;
	enum diff_mode mode;
	struct gfunc *gf;
	size_t ngf;
	uint32_t *gf_slots;
	size_t gf_nslots;
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


#endif
