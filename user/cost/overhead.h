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

#include <stdbool.h>
#include <stdint.h>
#include "calibrate.h"
#include "model/session.h"

#define OVERHEAD_WARN_AFTER_NS	500000000ull
/*
 * ... and once the targets have used this much CPU time, read after the
 * probe time counted so far: a start-up's first thousand calls (a CPython's
 * imports on a loaded machine) are no figure to name the costliest by, and
 * a CPU time read before the calls it is held against is stale.  Below it,
 * the summary at the end says it.
 */
#define OVERHEAD_WARN_MIN_CPU_NS	100000000ull
/*
 * The probes' cost is held against at least this share of the CPU time: the
 * estimate (calls x a calibrated cost) can pass the time measured, and a
 * slowdown past 1 / this share is stated as "at least".
 */
#define OVERHEAD_MIN_UNTRACED	0.01
/*
 * The probes' share sampled in the targets (overhead__measure) is the
 * figure said once the recording has this many samples of them; before,
 * the estimate (calls x the calibrated cost).
 */
#define OVERHEAD_SAMPLES_MIN	100
/* A probe share sampled past this is said as a floor ("at least"). */
#define OVERHEAD_SAMPLED_FLOOR	0.8
/* The span of the recent slowdown (overhead__slowdown). */
#define OVERHEAD_RECENT_NS	5000000000ull

struct overhead;

/* Calibrates (calibrate__run) and starts counting; s must outlive it. */
struct overhead *overhead__new(const struct bp_session *s);
void overhead__free(struct overhead *ov);
const struct probe_costs *overhead__costs(const struct overhead *ov);
/*
 * What the estimate is held against: the CPU time of every process tr
 * traces (the command record started and its children, the attached pids,
 * those that exited included: tracer__targets_cpu_ns); on a busy machine
 * their elapsed time is mostly waiting for a CPU, and the probes only cost
 * CPU time.  pid names the target in the messages.  Without it (-a), the
 * elapsed time.
 */
struct tracer;
void overhead__set_target(struct overhead *ov, int pid, struct tracer *tr);
/*
 * The slowdown the probes cause, as a fraction: probe time / (CPU time -
 * probe time); 1.0 is twice as slow.  The untraced time is held at least
 * OVERHEAD_MIN_UNTRACED of base.
 */
double overhead__factor(double cost_ns, double base_ns);
/*
 * Takes the measured probe costs out of the decoder's clocks
 * (decoder__compensate) and notes in s->timing by how much.
 */
struct decoder;
void overhead__compensate(struct overhead *ov, struct decoder *dec, struct bp_session *s);
/*
 * At the end (after decoder__finish): s->timing says the figures in use,
 * the calibration's and those measured in the recording (compensate.h).
 */
void overhead__compensate_end(struct overhead *ov, struct decoder *dec, struct bp_session *s);
/* Counts one decoded event (calls only). */
void overhead__event(struct overhead *ov, const struct bp_event *ev);
/* now: ns since the session's t0.  Warns once when the estimate passes half of it. */
void overhead__check(struct overhead *ov, uint64_t now);
/*
 * At the end: a line with the slowdown ("the probes made X about 3.2x
 * slower") when it is 10% or more, and with several processes one per
 * program; when not governed and at least 2x, the --max-overhead advice.
 */
void overhead__summary(struct overhead *ov, uint64_t duration);
/* What one call of f costs its thread here (both probes; the entry only for an entry-only f). */
double overhead__call_cost(const struct overhead *ov, const struct bp_func *f);
/* The part of one call's probe cost that falls inside its own measured duration. */
double overhead__inside_cost(const struct overhead *ov, const struct bp_func *f);
/* One call's probe cost on path k (both probes). */
double overhead__path_cost(const struct overhead *ov, enum probe_path_kind k);
/* USDT probe hits ev stands for (f: its function, if a call); each counted by overhead__event() */
unsigned overhead__usdt_hits(const struct bp_event *ev, const struct bp_func *f);
/* ns a USDT probe hit costs (calibrate.h annot_ns, with the scale and the measured factor) */
double overhead__annot_cost(const struct overhead *ov);
/*
 * The calibration's figures in use times k (0 < k <= 1, from then on): the
 * traced processes' own probes were measured cheaper (the governor, from its
 * shortest leaf calls: a calibration cached at a busier moment).
 */
void overhead__scale(struct overhead *ov, double k);
double overhead__scale_of(const struct overhead *ov);
/*
 * The whole probe costs (overhead__call_cost, overhead__path_cost; not the
 * inside costs) times k from then on: the governor's figure from the
 * probes' share measured in the targets (overhead__samples), against what
 * the calibration said of the same calls.
 */
void overhead__set_measured(struct overhead *ov, double k);
double overhead__measured_of(const struct overhead *ov);
/*
 * Samples the traced processes' CPU time (probes/share.h) to measure the
 * probes' share of it; best effort (without it, the calibration alone).
 * `now`: at once (the governor's); else once the targets have used
 * OVERHEAD_SHARE_AFTER_NS of CPU: loading the counter costs ~0.1 s (its
 * kernel symbols, a BPF object, an event per CPU), which a short exact
 * recording never needs (its summary wants OVERHEAD_SAMPLES_MIN samples).
 */
struct shared_maps;
#define OVERHEAD_SHARE_AFTER_NS	100000000ull
void overhead__measure(struct overhead *ov, const struct shared_maps *maps, bool now);
/* The samples of traced threads so far, and those on the probe path (*probe); 0 without. */
uint64_t overhead__samples(const struct overhead *ov, uint64_t *probe);
/* Probe time spent without a recorded call (hits filtered in BPF), into the estimate. */
void overhead__add_cost(struct overhead *ov, double ns);
/*
 * Time the traced processes waited for bpfprof besides the probes, into the
 * summary's estimate: a process held at exec or dlopen while its image's
 * symbols are read and its probes attached (attach_ns), re-linking groups for drops (relink_ns: the
 * kernel writes breakpoints into every process mapping the file).
 */
void overhead__add_wait(struct overhead *ov, double attach_ns, double relink_ns);
/* The traced processes' CPU time since the recording began (read now), 0 without a target. */
uint64_t overhead__cpu_ns(struct overhead *ov);
/* Their time runnable but waiting for a CPU since the recording began, as of the last overhead__cpu_ns(). */
uint64_t overhead__wait_ns(const struct overhead *ov);
/*
 * The slowdown (1 + overhead__factor) since the start and over the last
 * OVERHEAD_RECENT_NS; 0 when not known (no CPU time read yet, -a).
 */
void overhead__slowdown(const struct overhead *ov, double *total, double *recent);
/* The target's process name ("the traced processes" without one). */
const char *overhead__target_name(const struct overhead *ov);
/* The target set by overhead__set_target(), 0: none. */
int overhead__target(const struct overhead *ov);
/* The governor (governor.h) drops functions: the slow-probe warning has nothing to advise. */
void overhead__set_governed(struct overhead *ov);
/* The estimate so far: ns the probes cost the traced threads. */
double overhead__cost_ns(const struct overhead *ov);

#endif
