/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The governor's state, shared by governor.c (deciding) and governor_links.c (re-linking). */
#ifndef BPFPROF_GOVERNOR_INTERNAL_H
#define BPFPROF_GOVERNOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "base/closer.h"
#include "governor.h"
#include "model/session.h"

/* Functions per group: a drop re-registers the group's kept functions, so small groups. */
#define GOV_GROUP_SIZE		16
/*
 * A module of at most this many functions gets one group per function: a
 * drop then leaves the others of the module free to be dropped at once
 * (a group whose old links are still going cannot move again, and a small
 * program's few functions are usually all hot together).
 */
#define GOV_SINGLES_MAX		256
/* Log2 buckets of call durations per function, for the median (see decide()). */
#define GOV_HBUCKETS		40
/*
 * The probe costs' scale (gov_leaf_scale()): leaf calls' durations over
 * their calibrated inside cost in buckets of 1/32 up to 2; a window needs
 * GOV_LEAF_MIN of them; the GOV_LEAF_QUANTILE-th shortest tell.
 */
#define GOV_LEAF_BUCKETS	64
#define GOV_LEAF_MIN		256
#define GOV_LEAF_QUANTILE	0.05
/* A window in which the target used less CPU than GOV_MIN_CPU_NS is given up after this. */
#define GOV_WINDOW_MAX_NS	10000000000ull
/*
 * A function whose probe cost in the window is under this share of the
 * excess is dropped only after the others: dropping it would lose its
 * information for next to nothing.
 */
#define GOV_NEGLIGIBLE		0.001
/*
 * So is one whose probes took under this share of the target's CPU time in
 * the window less every probe's, what it would have taken untraced (a
 * function called a few times, now_ns() at a program's start): dropping it
 * re-links its group, which costs more than its probes did.  Not against
 * the traced CPU time: in an early window, 10x slower by tiny helpers, a
 * wrapper costing 85% of the untraced time once they are gone read as 0.4%
 * of it (hottiny's warm(), kept, the program ending before another window).
 */
#define GOV_SMALL_SHARE		0.005
/*
 * The probes' share measured in the targets (probes/share.h) replaces the
 * calibration's figure once a window has this many samples of them and the
 * calibration puts the probes at GOV_MEASURE_MIN_SHARE of their CPU time or
 * more (below, the measure's error is the figure).
 */
/*
 * It scales what the probes cost (the estimate, what a drop saves), not
 * what they put inside and between the durations measured: the
 * compensation and the distortion keep the calibration's figures (with
 * them scaled, a caller's traced children's outside cost grew by the
 * whole excess and redis's processCommand read 384 ns, distortion 4.6,
 * and went as what tells nothing).
 */
#define GOV_MEASURE_MIN_SAMPLES	64
/*
 * A storm: the window's samples say the targets run more than this times
 * as slow as the limit allows (cc1 under make -j2: 85-90% of its CPU on
 * the probe path, 6-9x against 1x).  There the distortion is too small a
 * figure: a caller's time holds its callees' probes beyond what the
 * calibration takes out (cc1's reg_class_subset_p read 3.5 us a call,
 * distortion 0.3, informing, for 50,000 calls a window, and the windows
 * stayed at 100-300x), so what informs must have a distortion under 1/x
 * of the usual bound (gov_storm_informs()).
 */
#define GOV_STORM		3.0
/* ... and the probes at least twice the targets' own time (a server at --max-overhead 10 is not one) */
#define GOV_STORM_SHARE		0.67
#define GOV_MEASURE_MIN_SHARE	0.05
/* ... in a window whose records lost scale its calls by at most this */
#define GOV_MEASURE_MAX_LOST	1.1
/* The factor stays within 1/this and this (cc1: 2.4x the calibration by perf). */
#define GOV_MEASURE_MAX		4.0
/*
 * A window over the limit by at most this factor, after one that was not,
 * drops only what tells nothing: the request functions of a server held
 * near the limit go only when two windows in a row say so (redis at
 * --max-overhead 100: windows at 1.6-1.85x, and one of 83 ms at 2.45x took
 * processCommand).  An early look decides at GOV_EARLY_OVER x the limit,
 * and drops only what tells nothing: in 30-80 ms of CPU, calls decoded in a
 * burst and bpfprof's own time weigh (redis: an early window of 0.066 s of
 * CPU read 2.76x between whole ones at 1.83-1.94x, and took processCommand,
 * processInputBuffer and readQueryFromClient).
 */
#define GOV_MARGIN		1.25
#define GOV_EARLY_OVER		1.5
/* A function whose calls had traced callees ranks as if its distortion were this much less. */
#define GOV_CALLER_WEIGHT	0.5
/*
 * Open calls with finished traced children tracked for compensation (see
 * governor__event); past this the table starts again (calls whose parent
 * never reports, e.g. a dropped one, would otherwise pile up).
 */
#define GOV_NEST_MAX		65536
/* Candidates written per decision with -v past those dropped (the ranking, for the log). */
#define GOV_LOG_RANKED		20
/*
 * Re-links go on for at most this long per call of governor__check (at
 * least one group), between the decoder's reads: events and exec holds
 * are not left waiting for a drop of many groups.
 */
#define GOV_RELINK_SLICE_NS	20000000ull
/* Old links destroyed side by side (see reap()). */
#define GOV_REAP_THREADS	32
/*
 * Phase X of a group whose old links went to the closer lasts this long:
 * a hit whose new-link handler ran before the re-link's word change and
 * whose old-link handler after it is the only one that needs X.
 */
/*
 * The most the calls seen in a window are scaled up by for the records lost
 * in it (see lost_scale()): past it, the few records read say too little.
 */
#define GOV_LOST_SCALE_MAX	20.0
#define GOV_X_NS		200000000ull
/*
 * A window ends early, before GOV_WINDOW_NS, once the targets used this
 * much CPU in it and the estimate is past the limit already (see
 * gov_early()): a compiler's first process is where the probes cost, and a
 * process shorter than a window is governed too.  Looked at every
 * GOV_EARLY_STEP_NS at most (each look reads every traced thread's CPU time).
 */
#define GOV_EARLY_CPU_NS	30000000ull
#define GOV_EARLY_STEP_NS	20000000ull

struct gov_group {
	const char *path;	/* the module's file (g->paths) */
	uint32_t file;		/* its index in g->files */
	bool entry_only;
	uint32_t *funcs;	/* the function ids traced through it */
	unsigned long *offsets;
	size_t n;
	uint16_t gen;		/* of its current links */
	struct bpf_link **links;
	size_t nlinks;
};

/*
 * A kept function seen called (warm) moves, at its group's next re-link, to
 * a group of its own: a later drop of it re-registers nothing, and the cold
 * rest of its old group is not re-linked for it again.  While that takes
 * fewer than this share of bpfprof's descriptors (two links per group).
 */
#define GOV_MOVE_FD_SHARE	0.5
/* Groups kept free for the images that come later (exec, dlopen): no move takes them. */
#define GOV_GROUPS_RESERVED	8192

/* The old links of one re-linked group, destroyed by the re-link thread. */
struct gov_doomed {
	uint32_t group;
	uint16_t gen;		/* the group's new generation: stable once they are gone */
	struct bpf_link **links;
	size_t nlinks;
	uint64_t since;		/* CLOCK_MONOTONIC ns of the re-link (with the closer) */
	/* the groups of its own each warm function moved to: their words follow the group's */
	uint32_t *moved;
	size_t nmoved;
};

struct gov_cand {
	uint32_t func;
	double cost, score;
	double save;		/* what its drop saves (a Python function's probe stays: its decoding) */
	double distortion;	/* probe cost per call / compensated median inclusive time */
	bool negligible;	/* its cost is next to nothing against the excess */
	bool caller;		/* its calls had traced callees */
	bool informs;		/* its calls last longer than its probe (distortion < 1; a caller's x GOV_CALLER_WEIGHT) */
	double mid;		/* compensated median inclusive time, ns */
	double mean;		/* mean raw duration, ns (ties of mid: the shorter goes first) */
	bool cold;		/* never called in the file's first processes (gov_sweep_cold()) */
	uint64_t calls_w;	/* its calls in the window */
};

/*
 * What writing one probe's breakpoint costs a new process of its file
 * (ns): at exec (or dlopen) the kernel writes an int3 into the process's
 * copy of the text for every probed function of each file it maps
 * (uprobe_mmap -> install_breakpoint, a copy-on-write page each time), in
 * the process's system time.  Measured on the 2-CPU VM of the benchmarks:
 * twenty execs of `cc1 --version` with cc1's 39,488 functions probed took
 * 1.73 s against 0.10 s bare, 1.48 s of it system time: 1.9 us a probe
 * (docs/probe-cost.md, "the breakpoints of a new process").
 */
#define GOV_INSTALL_NS		1900.0
/* Processes of a file remembered by pid (gov_file): past this, new ones are not counted. */
#define GOV_FILE_PIDS_MAX	4096

/*
 * A file of governed probes (an executable or a library): the processes
 * seen calling its functions, each one paying GOV_INSTALL_NS per probe kept
 * on the file when it mapped it.
 */
struct gov_file {
	const char *path;	/* g->paths */
	size_t nkept;		/* its functions probed and not dropped */
	uint32_t *pids;		/* its processes seen (by their calls), in order */
	size_t npids;
	uint32_t last_pid;	/* of the last call counted (most calls are the previous one's) */
	size_t procs_w;		/* of them, new in the window */
	bool swept;		/* its never-called functions were dropped */
	size_t swept_n, swept_procs;	/* how many, after how many processes */
	bool said;		/* the sweep's line on stderr is written */
};
/* BP_ANNOT_DROP's args[4] of a function dropped as never called (see gov_announce()) */
#define GOV_WHY_COLD		1

/* One decision's re-links, done a slice at a time (gov_relink_step()). */
struct gov_job {
	struct gov_cand *c;	/* the ranking; dropped ones marked in g->dropped */
	size_t nc, next;	/* the next candidate to look at (order[next]) */
	size_t *order;		/* c's indices, the costliest drop first */
	uint32_t *done;		/* the groups re-linked (or tried) */
	size_t ndone;
	struct gov_doomed *slow;	/* old links the closer did not take */
	size_t nslow;
	double window_s, factor;
	size_t npy, ngroups, nkept, nmoved;
	size_t ncold;		/* never called, dropped at their group's re-link: c[nc..nc+ncold) */
	uint64_t ns;		/* spent re-linking */
};

/* A call still open whose finished traced children are known (see governor__event). */
struct gov_nest {
	uint64_t id;		/* the call's id (0: an empty slot) */
	double out;		/* its children's probe cost outside their own durations: in its self time */
	double comp;		/* its children's compensated inclusive times */
	uint64_t kids;		/* how many children finished */
};

struct governor {
	double limit;		/* overhead allowed, a fraction (1.0: 100%) */
	struct bp_session *s;
	struct tracer *tr;
	struct overhead *ov;
	struct decoder *dec;
	uint32_t *words;	/* gov_groups of the BPF side, mapped */
	int dropped_fd;
	struct gov_group *groups;	/* [0] unused: group 0 is every ungoverned probe */
	size_t ngroups;
	char **paths;
	size_t npaths;
	struct gov_file *files;	/* the files of the groups (see gov_file) */
	size_t nfiles;
	double install_w;	/* breakpoints written into new processes in the window (ns) */
	/* per function id */
	uint32_t *group_of;	/* 0: not governed */
	uint64_t *calls, *calls_w, *dur_w;	/* all calls; calls and ns in the window */
	uint64_t *self_w;	/* ns in the window less traced callees' */
	uint64_t *kids_w;	/* their traced callees' calls in the window */
	double *out_w;		/* those callees' calibrated probe cost outside them (in self_w) */
	uint32_t **hist_w;	/* per function, lazily: GOV_HBUCKETS log2 buckets of compensated durations */
	uint8_t *dropped;
	uint8_t *was_caller;	/* seen with traced callees in some window (a caller stays one) */
	bool over_prev;		/* the last whole window decided was over the limit */
	bool early_now;		/* the window decided now is an early look's (early()) */
	size_t cap;
	bool comp_clock;	/* the decoder compensates: durations come without the probes' cost */
	/* leaf calls in the window: duration / calibrated inside cost, GOV_LEAF_BUCKETS of 1/32 */
	uint32_t leaf_r[GOV_LEAF_BUCKETS];
	uint64_t leaf_n;
	/* compensation of inclusive times: call id -> what its finished traced children left (gov_nest) */
	struct gov_nest *nest;
	size_t nest_cap, nest_used;
	/* the window */
	bool started;
	uint64_t w_start, cpu_start;
	/* re-links whose old links are still going (see reap()) */
	struct gov_reap **reaps;
	size_t nreaps;
	uint8_t *busy;		/* per group: in phase X, not to be re-linked again yet */
	pthread_mutex_t lock;	/* closing, and the words once closing */
	/* Python calls (governor__set_python): dropped per code object in BPF */
	struct py_capture *py;
	uint64_t py_filtered_w;	/* the filtered hits when the window began */
	bool py_detached;	/* the Python probes are gone (py_fallback()) */
	bool py_futile;		/* said: the probes of dropped Python calls alone pass the limit */
	size_t py_named;	/* s->nfuncs when the fallback last named the Python functions */
	double py_window_s, py_factor;	/* the fallback's window and estimate (its annotations') */
	governor_sample_fn sample_fn;	/* governor__set_sample_hook(): sampling in their place */
	void *sample_ctx;
	uint64_t dropped_hits_w;	/* tracer__gov_dropped_hits() when the window began */
	uint64_t events, events_w;	/* entries and returns decoded; when the window began */
	uint64_t lost_w;	/* tracer__lost() when the window began */
	/*
	 * bpfprof's own CPU in decoding (governor__own_cpu()), the
	 * machine's idle CPU time and the targets' time waiting for a CPU,
	 * when the window began; what of the first the targets waited for
	 * (gov_own_charged()), in the window so far
	 */
	uint64_t own_ns, own_start, idle_start, wait_start;
	long ncpu;		/* online CPUs: the machine's busy time is ncpu x elapsed less idle */
	double own_w;
	double probe_w;		/* the governed calls' probe cost in the window (the early look) */
	/* overhead__samples() when the window began: all the targets', on the probe path */
	uint64_t sh_all_w, sh_probe_w;
	double meas_sum, cal_sum;	/* gov_measured_k(): probe ns measured, calibrated; decayed */
	uint64_t early_at;	/* the last early look (session ns) */
	bool closing;		/* governor__release(): the words are the tracer's to forget */
	size_t ndropped;	/* functions dropped so far */
	double irr_w, going_w;	/* py_irreducible(), links_irreducible() in the window */
	double usdt_w;		/* of irr_w: USDT hits (gov_usdt_note()) */
	double informs_below;	/* the window's bound of what informs (gov_storm_informs()) */
	/* old links given to the closer (base/closer.h), their groups in phase X until GOV_X_NS */
	struct closer closer;
	struct gov_doomed *xs;
	size_t nxs;
	/* what the re-links cost (gov_relink): rounds, groups, kept functions re-registered, ns */
	size_t relinks, relink_groups, relink_kept, relink_moved;
	uint64_t relink_ns;
	uint64_t give_ns;	/* of relink_ns: giving the old links to the closer */
	/* the re-links decided and not done yet (gov_relink_step()) */
	struct gov_job **jobs;
	size_t njobs;
	/* the governor's links open here, and how many the moves may bring it to */
	size_t nlinks_live, move_fds;
};

/* One re-link's old links, destroyed by a thread of its own. */
struct gov_reap {
	struct governor *g;
	struct gov_doomed *doomed;
	size_t ndoomed;
	pthread_t thread;
	atomic_bool done;
};

/* governor.c: decides at the end of a window (false: the window goes on) */
bool gov_decide(struct governor *g, uint64_t now, double base, double irr, double going);
double gov_lost_scale(struct governor *g);
/* governor_window.c: what of bpfprof's own CPU since the window began the targets waited for */
double gov_own_charged(struct governor *g, double base, uint64_t now);
/* governor_comp.c: compensated inclusive times (see governor__event) */
/* Takes (and forgets) what call id's finished traced children left: *out, *comp (gov_nest); their number. */
uint64_t gov_nest_take(struct governor *g, uint64_t id, double *out, double *comp);
/* Adds a finished child's share to its caller's call id. */
void gov_nest_add(struct governor *g, uint64_t id, double out, double comp);
/* What a call of fn would have lasted untraced, from its self time and its children's shares. */
struct bp_func;
double gov_comp_time(const struct governor *g, const struct bp_func *fn, uint64_t self,
		     double out, double comp);
/* Counts a governed call without traced children (d: its duration) for gov_leaf_scale(). */
void gov_leaf_note(struct governor *g, const struct bp_func *fn, uint64_t d);
/* At a window's end: scales the probe costs down when its leaf calls show them dearer. */
void gov_leaf_scale(struct governor *g);
/*
 * The factor by which the probe time measured in the last windows' samples
 * differs from cal, what the calibration says of the same window (ns);
 * 1 when the samples cannot tell.  base: the targets' CPU time in it.
 */
double gov_measured_k(struct governor *g, double base, double cal);
/* Counts the USDT probe hits ev stands for (annotations, -U probes, a span of fn) into irr_w. */
void gov_usdt_note(struct governor *g, const struct bp_event *ev, const struct bp_func *fn);
double gov_storm_informs(struct governor *g);
/* -v: the window's estimate (gov_decide()) */
void gov_log_window(const struct governor *g, double window_s, double all, double cost,
		    double irr, double going, double lost, double own);
/* governor_links.c */
int gov_link_group(struct governor *g, uint32_t gi, struct gov_group *grp, uint16_t gen,
		   struct bpf_link ***links, size_t *nlinks, uint64_t *refused, size_t *nrefused);
void gov_destroy_links(struct bpf_link **links, size_t n);
void gov_join_reaps(struct governor *g, bool all);
/* Ends phase X of the groups re-linked GOV_X_NS ago or more (all: every one). */
void gov_end_x(struct governor *g, bool all);
/* The end of phase X of d's group (and of the groups its functions moved to); g->lock held. */
void gov_doomed_done(struct governor *g, struct gov_doomed *d);
void gov_relink(struct governor *g, struct gov_cand *c, size_t nc, double window_s,
		double factor, size_t npy);
/*
 * gov_relink() of drops whose groups only go (no kept function registered
 * anew: governor_cold.c), placed before the jobs not done yet.
 */
void gov_relink_first(struct governor *g, struct gov_cand *c, size_t nc, double window_s,
		      double factor);
/* Re-links for GOV_RELINK_SLICE_NS at most (the decoder's thread); see gov_relink(). */
void gov_relink_step(struct governor *g);
/* The end: re-links not done are given up (their functions stay, not dropped). */
void gov_relink_abandon(struct governor *g);
/* governor_say.c: what the governor says of its decisions */
void gov_log_ranking(const struct governor *g, const struct gov_cand *c, size_t nc,
		     size_t ndrop, double cost, double allowed);
void gov_announce(struct governor *g, const struct gov_cand *c, size_t n, uint64_t now,
		  double window_s, double factor, bool quiet);
void gov_say_futile(struct governor *g, double factor);
void gov_py_fallback(struct governor *g, double window_s, double factor);
void gov_py_name_late(struct governor *g, uint64_t now);
/*
 * governor_cold.c: the breakpoints of new processes.  gov_file_of() finds
 * or adds path's file; gov_cold_event() counts a call of governed f by pid
 * (a new process of its file pays its breakpoints); gov_kept() counts f in
 * or out of its file's kept probes (delta +1 or -1).
 */
uint32_t gov_file_of(struct governor *g, const char *path);
void gov_cold_event(struct governor *g, uint32_t f, uint32_t pid);
void gov_kept(struct governor *g, uint32_t f, int delta);
/*
 * Over the limit (allowed: the probe cost the limit allows in the window,
 * install: the window's breakpoint cost): the files whose breakpoints cost
 * more than a small share of it and one of whose processes has ended get
 * their never-called functions marked dropped, appended to *c (grown;
 * *nc updated).  Returns what that saves in the window (ns).
 */
double gov_sweep_cold(struct governor *g, struct gov_cand **c, size_t *nc, double base);
/* governor_say.c: the line on stderr for a file's never-called functions */
void gov_say_cold(struct governor *g, const struct gov_cand *c, size_t n, double factor);
/* governor.c: the per-function arrays hold n functions */
void gov_grow(struct governor *g, size_t n);

#endif
