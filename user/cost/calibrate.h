/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a probe costs on the machine at hand, per probe path.
 *
 * The cost of a uprobe differs by host by 10x (a 2-vCPU VM here: ~7,500 ns
 * per emulated call, entry + return; elsewhere ~650 ns), so fixed figures
 * mislead.  calibrate__run() measures it: a helper process (a fork of
 * bpfprof) calls three empty functions of bpfprof's own, each on one probe
 * path (emulated: push; single-step: mov; nop5), traced by a private tracer
 * with the real BPF programs, and times its loops itself against an
 * unprobed twin.  The Python path (PP_PYTHON: a Python call, python.bpf.c
 * on two emulated sites, see calibrate_py.c) is measured the same way.
 * So is a hit of an annotation (annot_ns: usdt.bpf.c on a bpfprof.h probe
 * of bpfprof's own, calibrate_annot.c).  Per path it gives:
 *   total   ns a traced call costs its thread (entry + return probes), as
 *           its caller sees it: what every traced child adds to its parent
 *   inside  of which ns fall between the entry and the exit timestamps:
 *           what an empty traced function reports as its duration
 * The results are kept in /run/bpfprof/calibration (tmpfs: gone at reboot)
 * for an hour, keyed by the kernel and bpfprof's binary, so short commands
 * do not pay the ~50 ms each time.
 */
#ifndef BPFPROF_CALIBRATE_H
#define BPFPROF_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>
#include "model/session.h"

/* PP_PYTHON: one Python call (python.bpf.c: its RESUME and return sites), the last */
enum probe_path_kind { PP_EMULATED, PP_SINGLE_STEP, PP_NOP5, PP_PYTHON, PP_NPATHS };

struct probe_costs {
	bool measured;		/* false: the fallback figures below (not this machine's) */
	bool cached;		/* read from /run/bpfprof/calibration */
	double total_ns[PP_NPATHS];
	double inside_ns[PP_NPATHS];
	double exit_ns;		/* the return probe alone (any path): its whole cost */
	double annot_ns;	/* a hit of an annotation or a -U probe: its whole cost */
	double spread;		/* largest relative difference between the rounds, 0..1 */
};

/*
 * Measures (or reads the cached figures).  Never fails: when the helper
 * cannot be traced, out->measured is false and out holds rough figures
 * from the development VM (README).  `fresh`: ignore the cache.
 */
void calibrate__run(struct probe_costs *out, bool fresh);
/* Waits until the calibration's probes are gone (a thread detaches them meanwhile). */
void calibrate__join(void);
/* The probe path of f (select__probe_path()) as a PP_* index. */
enum probe_path_kind calibrate__path(const struct bp_func *f);
const char *calibrate__path_name(enum probe_path_kind k);

/* Empty functions the helper calls; not static so that no compiler drops them. */
void bpfprof_cal_emulated(void);
void bpfprof_cal_step(void);
void bpfprof_cal_nop5(void);
void bpfprof_cal_ref(void);
void bpfprof_cal_outer(void);
void bpfprof_cal_py(void);
void bpfprof_cal_annot(void);

/*
 * The Python path (calibrate_py.c): python.bpf.c attached to the two sites
 * of bpfprof_cal_py in `path` (bpfprof's file; `off`: its file offset),
 * reading an interpreter state laid out in this process's memory (a fork
 * sees the same).  0 or -errno; *out for calpy__free().
 */
struct tracer;
struct py_tracer;
/* Lays the interpreter state out: before the helper is forked.  0 or -errno. */
int calpy__prepare(void);
int calpy__attach(struct tracer *tr, const char *path, unsigned long off, struct py_tracer **out);
void calpy__pause(struct py_tracer *p);
void calpy__free(struct py_tracer *p);

/*
 * The annotation (calibrate_annot.c): usdt.bpf.c attached to the
 * bpfprof.h probe of bpfprof_cal_annot in `path`, sharing tr's maps.  0 or
 * -errno; *out for usdt__free().
 */
struct usdt_tracer;
int calannot__attach(struct tracer *tr, const char *path, struct usdt_tracer **out);

#endif
