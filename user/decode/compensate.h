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
 * The cost model, per path: total = entry + return probe; inside = the part
 * between the entry's and the return's timestamps, split half before the
 * return's timestamp, half after the entry's; the rest (total - inside) half
 * before the entry's timestamp and half after the return's.
 */
#ifndef BPFPROF_COMPENSATE_H
#define BPFPROF_COMPENSATE_H

#include <stdint.h>
#include "model/session.h"

#define COMP_NPATHS	4
#define COMP_PATH_PYTHON	3	/* a Python call (calibrate.h PP_PYTHON): two probe hits */

struct comp_costs {
	double total_ns[COMP_NPATHS];
	double inside_ns[COMP_NPATHS];
	/* the probe path of a function, 0 .. COMP_NPATHS - 1 (calibrate__path) */
	unsigned (*path)(const struct bp_func *f);
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
/* ns taken out of all threads' clocks so far (the estimate of the probes' cost). */
double compensator__debt_ns(const struct compensator *c);

#endif
