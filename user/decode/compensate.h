/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Durations that tell the truth: the probes' own cost taken out of the clock.
 *
 * An entry probe takes its timestamp in the middle of its work, so does the
 * return probe: part of both lands inside every call (its "inside" bias),
 * and every traced child adds its whole probe cost (entry + return, the
 * "total") to its parent.  Each thread gets a virtual clock that stops while
 * its probes run: every probe hit advances the thread's debt by its cost
 * (per probe path, measured by calibrate.c), and every timestamp of the
 * thread (calls, samples, marks, switches) is moved back by the debt so far.
 * A call's duration then loses its own inside bias and its traced
 * descendants' totals, nesting and order within the thread stay intact, and
 * self times follow.  Between threads, clocks drift apart by their debts
 * (an edge from one thread to another can look earlier than it was); the
 * archive keeps how much was taken per thread out of its last timestamp
 * (see README).
 *
 * The cost model.  A probe hit's work falls partly before its timestamp,
 * partly after; the clock between two consecutive native events of a thread
 * holds one hit's "after" and the next one's "before".  Four intervals occur:
 * entry -> exit of the same call (a leaf: L = the entry's after + the
 * return's before, the call's inside bias), exit -> entry (a sibling gap:
 * G = the return's after + the entry's before), exit -> exit (a tail:
 * T = the return probe's whole cost) and entry -> entry (L + G - T).  The
 * return probe is the same uretprobe on every path: T does not depend on
 * it; the entry's L and G do.  How one hit's work splits around its own
 * timestamp cannot be seen in any interval (it moves every event of the
 * thread by the same amount): the return probe's is taken as halves.
 * Per path: total (L + G) = entry + return probe, inside = L.
 *
 * Measured against the machine's state at the time: the same function's
 * probe cost differs between processes by up to ~35% on a VM (the address
 * space, the caches, the hypervisor), more than between the calibration's
 * rounds.  With `adapt`, each process's own tightest intervals replace the
 * calibration as they come: per process and kind (L and G per path, T), a
 * low quantile (COMP_QUANTILE) of its last COMP_WINDOW intervals of that
 * kind, the median of those within COMP_CLUSTER of their low quantile
 * (COMP_QUANTILE), used once COMP_MIN_SAMPLES were seen.  Every interval is
 * the probe cost plus the code between the two events (never less), so the
 * cluster at the low end is the cost where the program has near-empty spans
 * (a tiny leaf, two calls in a row); a program without any would make it an
 * overestimate: it is held to at most COMP_ADAPT_CAP times the calibrated
 * figure.
 *
 * Stalls.  On a loaded VM the CPU is taken away from a thread for 10-140 us
 * about once per 100-200 us of its time, in the probes as in its code (no
 * PMU, no steal time here: nothing in the guest tells a stall from work).
 * A traced thread spends most of its time in probes, so most of its stalls
 * are the probes' (the untraced program would not have had them).  Where
 * the code between two events is known short (a place, COMP_SHORT_*: the
 * leaf's body of a function, the caller's code before entering a function,
 * a function's code after its last child returns), an interval far over
 * its figure (COMP_STALL_MIN_NS) is taken as a stall in the probes: its
 * excess over the figure and the place's usual short excess is charged to
 * the second hit.  A place whose code is sometimes long (more often than
 * about one interval in nine; where stalls are frequent, than twice the
 * share of its intervals the process's stall rate at its known-short
 * places explains, at most one in three) stops being known short; a rarer
 * long body there would be taken for a stall: see docs/probe-cost.md.
 */
#ifndef BPFPROF_COMPENSATE_H
#define BPFPROF_COMPENSATE_H

#include <stdbool.h>
#include <stdint.h>
#include "model/session.h"

#define COMP_NPATHS	4
#define COMP_PATH_PYTHON	3	/* a Python call (calibrate.h PP_PYTHON): two probe hits */
/*
 * Intervals per process and kind the figure is taken from, computed again
 * at each: the machine's state moves the probes' cost by ~20% for tens of
 * intervals at a time (a load of 100-200 here), a longer window held the
 * lower state's figure through the higher one.
 */
#define COMP_WINDOW		8
#define COMP_MIN_SAMPLES	16	/* before the calibration gives way */
#define COMP_FLUSH_WINDOW	64	/* flushes kept (one hit in BP_BATCH_RECS) */
#define COMP_QUANTILE		0.1
#define COMP_CLUSTER		1.15	/* the band above the low quantile: the floor's cluster */
#define COMP_ADAPT_CAP		1.5
#define COMP_FLUSH_MIN		4	/* flushes measured before one is charged */
#define COMP_FLUSH_QUANTILE	0.25
/*
 * Stalls (see compensator's stall_charge): an interval more than
 * max(COMP_STALL_MIN_NS, its figure) over its figure, where the code
 * between its two events is known short: at least COMP_SHORT_KNOWN net
 * intervals of that place within COMP_SHORT_NS of the figure (+1 each, -2
 * one up to the stall's limit over it, -2 to -8 a stall by the stall
 * rate: stall_penalty, up to 64).
 */
#define COMP_STALL_MIN_NS	5000
#define COMP_SHORT_NS		1000
#define COMP_SHORT_KNOWN	8

struct comp_costs {
	double total_ns[COMP_NPATHS];
	double inside_ns[COMP_NPATHS];
	double exit_ns;		/* the return probe's whole cost (T), any path */
	double flush_ns;	/* compensator__in_use: what a batch flush adds to its hit */
	bool adapt;		/* per process, from its own intervals (see above) */
	/* the probe path of a function, 0 .. COMP_NPATHS - 1 (calibrate__path) */
	unsigned (*path)(const struct bp_func *f);
	uint64_t stalls;	/* compensator__in_use: stalls taken out (all processes) */
	double stall_ns;	/* ... and their ns */
};

struct compensator;

struct compensator *compensator__new(const struct bp_session *s, const struct comp_costs *c);
void compensator__free(struct compensator *c);
/* A thread that exited: its clock state goes (memory follows live threads, as serve needs). */
void compensator__forget(struct compensator *c, uint32_t tid);
/*
 * The virtual time of a record (relative ts) of the decoder: entries and
 * exits advance their thread's debt, other records of a thread are moved
 * by it.  rec is the raw record (bpf/events.h); records of no thread pass.
 */
uint64_t compensator__ts(struct compensator *c, const void *rec, uint64_t ts);
/*
 * The next record fed (of the decoder's batch) is the last of a full
 * batch: its hit also sent the batch to the ring buffer, after its
 * timestamp (bpf/trace.bpf.c).  That extra is measured per process (what
 * the interval after such a hit has over its kind's figure, a low
 * quantile) and added to the flushing hit's cost.
 */
void compensator__batch_last(struct compensator *c);
/*
 * The figures in use at the end for the process with the most intervals
 * seen (out->path is not set; *pid: that process, 0: none adapted, the
 * calibration's figures).  *mask: bit p set when path p's L and G are the
 * process's own, COMP_IN_USE_RETURN when its T is, COMP_IN_USE_FLUSH when
 * its flush cost is.
 */
#define COMP_IN_USE_RETURN	(1u << 3)
#define COMP_IN_USE_FLUSH	(1u << 4)
void compensator__in_use(const struct compensator *c, struct comp_costs *out, uint32_t *pid,
			 unsigned *mask);
/* ns taken out of all threads' clocks so far (the probes' estimated cost and stalls). */
double compensator__debt_ns(const struct compensator *c);

#endif
