/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The loader of python.bpf.c: the probes of the CPython interpreters that
 * cpython/ found (struct py_image, filled by cpython/image.c).
 */
#ifndef BPFPROF_PROBES_PYTHON_H
#define BPFPROF_PROBES_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/python.h"
#include "trace.h"

/* What bpfprof found in a file. */
struct py_image {
	char *path;		/* the file holding the interpreter (exe or libpython) */
	unsigned major, minor;	/* 0.0: not read */
	bool known;		/* offsets for this version exist */
	bool samples_only;	/* ... for its sampled stacks only (no exact calls) */
	bool usdt;		/* built with USDT probes (--with-dtrace) */
	bool table;		/* the opcode handler table was found */
	uint64_t runtime;	/* link-time address of _PyRuntime */
	size_t nsites;		/* probe sites (bpf/python.h) */
	struct py_site {
		uint32_t kind;	/* BP_PY_SITE_* */
		uint32_t mode;	/* BP_PY_PREV_STORED */
		uint64_t addr;	/* link-time address */
		uint64_t off;	/* file offset */
		uint64_t sema_off;	/* file offset of a USDT semaphore to raise, 0: none */
		bool emulated;	/* on an instruction the kernel emulates */
	} sites[16];
	unsigned nslow;		/* sites the kernel single-steps */
	bool pie;		/* ET_DYN: loaded at a bias only the mappings tell */
	uint64_t base_vaddr;	/* the lowest PT_LOAD's address, page-aligned (load bias = map start - it) */
};

struct py_tracer;

int python__new(bool trace_all, const struct shared_maps *maps, struct py_tracer **out);
/*
 * Attaches the probes of img (once per file), its version's struct offsets
 * off (cpython__attach() checks img and finds them); 0 or -errno (printed).
 */
int python__attach(struct py_tracer *p, const struct py_image *img, const struct bp_py_cfg *off);
/* Records python.bpf.c could not attribute to a frame. */
uint64_t python__misses(struct py_tracer *p);
/* Stops recording the calls of one code object of process pid (the governor dropped it). */
int python__drop_code(struct py_tracer *p, uint32_t pid, uint64_t code);
/* Probe hits of dropped code objects, not recorded. */
uint64_t python__filtered(struct py_tracer *p);
uint64_t python__lost(struct py_tracer *p, uint64_t *per_cpu, size_t ncpu);
/*
 * Takes the interpreters' probes out (their links to cl, base/closer.h, or
 * closed here without one): no Python call is recorded or costs any more.
 */
struct closer;
void python__detach(struct py_tracer *p, struct closer *cl);
void python__pause(struct py_tracer *p);
void python__free(struct py_tracer *p);
/*
 * Appends its links' descriptors to *fds (n so far, grown), for their last
 * close in another process (base/away.h).  Returns the new count.
 */
size_t python__link_fds(const struct py_tracer *p, int **fds, size_t n);

#endif
