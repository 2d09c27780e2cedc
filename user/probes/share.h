/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The probes' share of the traced processes' CPU time, measured in them
 * (bpf/probeshare.bpf.c: a cpu-clock count of their samples, and of those
 * on the uprobe path).  The calibration measures a probe apart from the
 * target; in a big program it can cost several times more (cc1: its
 * 39,488 probes make the kernel's lookup deeper and the traps evict its
 * caches), and on a loaded machine less.  For the governor's estimate
 * (user/cost/governor_window.c).
 */
#ifndef BPFPROF_PROBES_SHARE_H
#define BPFPROF_PROBES_SHARE_H

#include <stdint.h>

#define SHARE_HZ	499

struct share;
struct shared_maps;

/*
 * Loads and attaches the counter (one perf event per CPU) on a thread of
 * its own: until it is attached, share__read() reads none.  maps: the
 * tracer's (copied).  0 or -errno; its failures are said under -v only.
 */
int share__new(const struct shared_maps *maps, struct share **out);
/* The samples of traced threads so far, and those on the probe path (*probe). */
uint64_t share__read(const struct share *s, uint64_t *probe);
void share__free(struct share *s);

#endif
