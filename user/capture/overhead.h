/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the probes cost the traced program, estimated while it runs: every
 * finished call is counted on its function, and calls x this machine's
 * measured cost of the function's probe path (calibrate.h) against the
 * elapsed time says how much of the program's time went into bpfprof.
 *
 * The warning is weighted by calls, not by functions: one hot single-stepped
 * function (glibc's free) slows a program down as much as a thousand cold
 * ones.  It fires once, early (OVERHEAD_WARN_AFTER_NS into the recording),
 * when the probes took more than half of the time, names the functions that
 * cost most and says what to do.
 */
#ifndef BPFPROF_OVERHEAD_H
#define BPFPROF_OVERHEAD_H

#include <stdint.h>
#include "capture/calibrate.h"
#include "model/session.h"

#define OVERHEAD_WARN_AFTER_NS	500000000ull

struct overhead;

/* Calibrates (calibrate__run) and starts counting; s must outlive it. */
struct overhead *overhead__new(const struct bp_session *s);
void overhead__free(struct overhead *ov);
const struct probe_costs *overhead__costs(const struct overhead *ov);
/*
 * The process whose CPU time the estimate is held against (the command
 * record started, the first attached pid): on a busy machine its elapsed
 * time is mostly waiting for a CPU, and the probes only cost CPU time.
 * Without one (-a), the elapsed time.
 */
void overhead__set_target(struct overhead *ov, int pid);
/*
 * Takes the measured probe costs out of the decoder's clocks
 * (decoder__compensate) and notes in s->timing by how much.
 */
struct decoder;
void overhead__compensate(struct overhead *ov, struct decoder *dec, struct bp_session *s);
/* Counts one decoded event (calls only). */
void overhead__event(struct overhead *ov, const struct bp_event *ev);
/* now: ns since the session's t0.  Warns once when the estimate passes half of it. */
void overhead__check(struct overhead *ov, uint64_t now);
/* At the end: a line with the estimate when the probes took a tenth of the time or more. */
void overhead__summary(struct overhead *ov, uint64_t duration);
/* What one call of f costs its thread here (both probes; the entry only for an entry-only f). */
double overhead__call_cost(const struct overhead *ov, const struct bp_func *f);
/* The target's CPU time since the recording began (read now), 0 without a target. */
uint64_t overhead__cpu_ns(struct overhead *ov);
/* The target set by overhead__set_target(), 0: none. */
int overhead__target(const struct overhead *ov);
/* The governor (governor.h) drops functions: the slow-probe warning has nothing to advise. */
void overhead__set_governed(struct overhead *ov);
/* The estimate so far: ns the probes cost the traced threads. */
double overhead__cost_ns(const struct overhead *ov);

#endif
