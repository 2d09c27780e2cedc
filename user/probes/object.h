/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The part every BPF object's loader shares (sample.c, usdt.c, python.c,
 * where.c; trace.c owns the shared maps and its links are its own): the
 * tracer's maps reused before the load, the load itself, the object's
 * ring buffer reserve failures and pause flag, its links and perf events,
 * their detach and their end.  A loader embeds a struct probe_obj beside
 * its skeleton:
 *
 *	s->skel = sample_bpf__open();		(its rodata set here)
 *	err = probe_obj__load_skel(&s->po, s->skel, maps);
 *	...
 *	probe_obj__free(&s->po);
 *	sample_bpf__destroy(s->skel);
 *
 * Messages name the object ("the sampling BPF object"); a quiet object
 * (the hint's counter, where.c) says them under -v only.
 */
#ifndef BPFPROF_PROBES_OBJECT_H
#define BPFPROF_PROBES_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>
#include "trace.h"

struct closer;

struct probe_obj {
	const char *name;	/* "sampling": "cannot load the sampling BPF object" */
	bool quiet;		/* messages at debug level */
	const uint64_t *lost;	/* its .bss lost[BP_MAX_CPUS] (common.bpf.h), once loaded */
	volatile uint32_t *paused;	/* its .bss paused */
	struct bpf_link **links;
	size_t nlinks;
	int *pfds;		/* perf events its programs are attached to */
	size_t npfds;
};

/*
 * After NAME_bpf__open() (skel NULL: it failed, errno set): names the
 * object and says why it could not be opened.  0 or -errno.
 */
int probe_obj__opened(struct probe_obj *po, const char *name, bool quiet, const void *skel);
/*
 * Reuses the tracer's maps in the object (maps NULL: none), then loads it.
 * 0 or -errno (said).
 */
int probe_obj__load(struct probe_obj *po, struct bpf_object_skeleton *s,
		    const struct shared_maps *maps);
/* probe_obj__load() of a skeleton, its counters found in its .bss once loaded. */
#define probe_obj__load_skel(po, skel, maps)                                        \
	(probe_obj__load(po, (skel)->skeleton, maps) ?:                            \
	 ((po)->lost = (const uint64_t *)(skel)->bss->lost, (po)->paused = &(skel)->bss->paused, 0))
/* Keeps link l (NULL: the attach failed, errno set: -errno returned). */
int probe_obj__add_link(struct probe_obj *po, struct bpf_link *l);
/*
 * Attaches prog to a cpu-clock perf event of hz on every CPU online.
 * 0 or -errno (said).
 */
int probe_obj__attach_cpus(struct probe_obj *po, struct bpf_program *prog, unsigned hz);
/*
 * Ring buffer reserve failures: every BPF object counts its own per CPU
 * (common.bpf.h), the capture adds them up.  One contract for every
 * *__lost(): it ADDS its counts into per_cpu (ncpu entries; the caller
 * zeroes it) and returns its own total.
 */
uint64_t probe_obj__lost(const struct probe_obj *po, uint64_t *per_cpu, size_t ncpu);
/* Its programs write nothing more. */
void probe_obj__pause(struct probe_obj *po);
/*
 * Takes the links out (their last close given to cl, base/closer.h, or
 * done here without one).
 */
void probe_obj__detach(struct probe_obj *po, struct closer *cl);
/* Appends its links' descriptors to *fds (n so far, grown); returns the new count. */
size_t probe_obj__link_fds(const struct probe_obj *po, int **fds, size_t n);
/* Destroys the links, closes the perf events (the skeleton is the loader's to destroy). */
void probe_obj__free(struct probe_obj *po);

#endif
