/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The overhead governor (--max-overhead PERCENT): keeps the estimated cost of
 * the probes under a limit by dropping the functions that cost most for the
 * least information.
 *
 * Estimate: per function, its calls in the window x the measured cost of its
 * probe path (overhead.h, calibrate.h), summed, against the CPU time of
 * every traced process in the same window (tracer__targets_cpu_ns; the
 * elapsed time with -a): slowdown = cost / (CPU time - cost), what the
 * processes took over what they would have without the probes (1.0: twice
 * as slow).  Hits that no drop removes are counted too: Python's probe on
 * dropped functions (it sits in the interpreter loop) and the old links of
 * dropped native functions not gone yet, and bpfprof's own CPU in decoding
 * as far as the targets waited for it (governor__own_cpu; spread over the
 * calls read).  Every GOV_WINDOW_NS (once the targets used GOV_MIN_CPU_NS
 * of CPU in it), or sooner once they used 30 ms with the estimate past the
 * limit already (governor_window.c), when the slowdown passes the
 * limit, the functions called in the window are ranked by distortion (the
 * probe's cost per call / the median of the calls' own durations; a caller
 * counts half) and dropped in that order until the rest is under the
 * limit.  A dropped function stays dropped, in every process that maps its
 * file (native probes belong to the file; Python code objects are
 * filtered per process, every one of the function, see governor__set_python).
 *
 * Functions are spread over groups (bpf/events.h, BP_GOV_GROUPS), each with
 * its own uprobe_multi links: a drop re-creates the links of the groups it
 * touches without the dropped functions; the kept ones are never missed or
 * counted twice (the generation protocol of bpf/trace.bpf.c).  The old links
 * are destroyed by a thread: their removal waits for an SRCU grace period.
 *
 * What was dropped is never silent: an annotation (BP_ANNOT_DROP) per
 * function goes into the event stream at the moment of the drop (an instant
 * event in the outputs, kept in the archive for report and convert), and
 * the counts up to the drop stay.
 */
#ifndef BPFPROF_GOVERNOR_H
#define BPFPROF_GOVERNOR_H

#include <stdbool.h>
#include <stdint.h>
#include "model/session.h"

/*
 * The default limits where the target serves users: attach 25 (at most
 * 1.25x slower), serve 10 (a long-running exporter: 1.1x); record is exact
 * unless asked.  --max-overhead off makes any of them exact.
 */
#define ATTACH_MAX_OVERHEAD	25
#define ATTACH_MAX_OVERHEAD_S	"25"
#define SERVE_MAX_OVERHEAD	10

#define GOV_WINDOW_NS		250000000ull
#define GOV_MIN_CPU_NS		50000000ull

struct governor;
struct tracer;
struct overhead;
struct decoder;
struct probe_set;
struct probe_module;

/*
 * limit_pct: the overhead allowed, in percent (100: twice as slow at most).
 * The session, tracer, estimate and decoder outlive it.
 */
struct governor *governor__new(double limit_pct, struct bp_session *s, struct tracer *tr,
			       struct overhead *ov, struct decoder *dec);
/* Attaches the functions of pm (in groups); refused ones are named.  0 or -errno. */
int governor__attach_module(struct governor *g, const struct probe_module *pm);
/* governor__attach_module() for each module; -errno (named) at the first failure. */
int governor__attach_set(struct governor *g, const struct probe_set *ps);
/*
 * Governs Python calls too (pc's probes): a dropped Python function's code
 * objects are filtered out in BPF (python.bpf.c py_dropped), in every process.
 */
struct py_capture;
void governor__set_python(struct governor *g, struct py_capture *pc);
/*
 * When the Python probes are detached (CPython's probes alone pass the
 * limit), the governor asks its owner to sample the interpreter's stacks
 * instead: fn returns the cpu sampling rate started now (Hz), 0 when none
 * was started (*already: the recording samples cpu stacks already), or
 * -errno when sampling could not start (named by fn).
 */
typedef int (*governor_sample_fn)(void *ctx, bool *already);
void governor__set_sample_hook(struct governor *g, governor_sample_fn fn, void *ctx);
/*
 * ns of bpfprof's own CPU spent decoding (the reading thread's, holds for
 * symbols and attaches left out): what of it the targets waited for (the
 * machine had no idle CPU for it) is in the estimate, spread over the calls
 * decoded (see gov_own_charged()).
 */
void governor__own_cpu(struct governor *g, uint64_t ns);
/* Counts one decoded event (calls of governed functions). */
void governor__event(struct governor *g, const struct bp_event *ev);
/*
 * The recording's last records are read (before decoder__finish): the
 * Python functions learnt of since the Python probes went are named
 * dropped too.
 */
void governor__drained(struct governor *g, uint64_t now);
/* Functions dropped so far (0 with g NULL). */
size_t governor__ndropped(const struct governor *g);
/* now: ns since the session's t0.  Decides at the end of each window; drops, re-links. */
void governor__check(struct governor *g, uint64_t now);
/*
 * The end, in two steps around tracer__free(): governor__release() gives the
 * current links to the tracer, whose detach holds the targets still while
 * probes go (so that no pending call holds the removal off); then
 * governor__free() waits for the old links still going (their removal waits
 * for the same grace period) and frees.
 */
void governor__release(struct governor *g);
void governor__free(struct governor *g);

/* Parses "PERCENT" (a number > 0, optional %), or "off"/"0" (-> 0: no governor). */
int governor__parse_limit(const char *arg, double *pct);

#endif
