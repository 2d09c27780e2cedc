/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stack sampling (cpu-clock perf events on every CPU) and off-cpu intervals
 * (sched_switch), written into the call tracer's ring buffer for the traced
 * processes (or every process).  Lifecycle like the tracer's.
 */
#ifndef BPFPROF_SAMPLE_H
#define BPFPROF_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace.h"

struct sampler;

/* How user stacks are taken (--stack). */
enum stack_mode {
	STACK_AUTO,		/* copy and DWARF-unwind; frame pointers where that falls short */
	STACK_FP,		/* frame pointers only (the kernel's walk) */
	STACK_DWARF,		/* copy and DWARF-unwind only */
};

struct sampler_opts {
	unsigned hz;		/* 0: no cpu sampling */
	bool offcpu;
	bool trace_all;
	bool kernel_stacks;
	enum stack_mode stack;
	unsigned stack_size;	/* bytes of user stack copied per sample (0: BP_DEF_USTACK) */
	/*
	 * No mapping records (exec, the linker's hook, sys_exit): the sampled
	 * processes' stacks are decoded with /proc/PID/maps while they live.
	 * Their programs are half of the sampler's load (the verifier).
	 */
	bool no_maps;
};

/* Parses --stack=fp|dwarf|auto and --stack-size=SIZE; 0 or -EINVAL (after a message). */
int sampler__parse_stack(const char *arg, enum stack_mode *mode);
int sampler__parse_stack_size(const char *arg, unsigned *size);

/* maps: the tracer's (tracer__shared_maps), so the stream stays one. */
int sampler__new(const struct sampler_opts *o, const struct shared_maps *maps, struct sampler **out);
int sampler__attach(struct sampler *s);
/*
 * Follows the libraries the dynamic linker at path loads (_dl_debug_state()
 * at offset in its file) into the sampled processes.  0 or -errno.
 */
int sampler__attach_loader(struct sampler *s, const char *path, unsigned long offset);
/* Adds this object's per-CPU reserve failures into per_cpu; returns their sum. */
uint64_t sampler__lost(struct sampler *s, uint64_t *per_cpu, size_t ncpu);
void sampler__pause(struct sampler *s);
/* Python frames for process tgid's samples (struct bp_py_proc, bpf/python.h).  0 or -errno. */
int sampler__python_proc(struct sampler *s, uint32_t tgid, const void *proc, size_t size);
void sampler__free(struct sampler *s);

#endif
