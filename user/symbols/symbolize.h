/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Symbolization of sampled stacks: user addresses through the process's
 * mappings (/proc/PID/maps, read when the process is first seen and again
 * after exec or when an address falls outside every known mapping) and the
 * ELF symbols of each mapped file (libelf, cached per file identity); kernel
 * addresses through /proc/kallsyms.  Each frame becomes a function of the
 * session (the same id as a probed function when it is one), and a stack an
 * interned call path, so stacks and call paths share every exporter.
 */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "model/session.h"

struct symbolizer;

int symbolizer__new(struct bp_session *s, struct symbolizer **out);
void symbolizer__free(struct symbolizer *sy);
/*
 * ips: nuser user frames then nkern kernel frames, innermost first (as
 * bpf_get_stack() gives them; user return addresses are symbolized at the
 * call instruction before them).  Returns the path (outermost first); sets
 * *truncated when the user stack does not reach a known root (_start,
 * start_thread, ...): a "[truncated]" frame is then the path's root.
 */
uint32_t symbolizer__stack(struct symbolizer *sy, uint32_t pid, const uint64_t *ips,
			   uint32_t nuser, uint32_t nkern, bool *truncated);
/*
 * A sample of thread tid of pid: ips as for symbolizer__stack(), and us,
 * when not NULL, a copy of the top of its user stack with its registers
 * (bpf/events.h; its len bytes checked by the caller).  The copy is unwound
 * with DWARF CFI; when that falls short of a root and the frame-pointer
 * stack (nuser frames) reaches one (--stack=auto), that stack is used.
 * Returns the path; sets *truncated as symbolizer__stack does.
 */
struct bp_ustack;
uint32_t symbolizer__sample(struct symbolizer *sy, uint32_t pid, uint32_t tid, const uint64_t *ips,
			    uint32_t nuser, uint32_t nkern, const struct bp_ustack *us, bool *truncated);
struct procmap;

/* pid mapped m (BP_REC_MMAP): its stacks find it although the process is gone. */
void symbolizer__mapped(struct symbolizer *sy, uint32_t pid, const struct procmap *m);
/* child was forked by parent: it starts with parent's mappings (as known now). */
void symbolizer__forked(struct symbolizer *sy, uint32_t parent, uint32_t child);
/* The process exec'd or exited: its mappings are stale. */
void symbolizer__forget(struct symbolizer *sy, uint32_t pid);
/* Reads the mappings of pid now (at start, before a short-lived process can exit). */
void symbolizer__preload(struct symbolizer *sy, uint32_t pid);

/* Loads kernel symbols now, not in the middle of a recording. */
void symbolizer__preload_kernel(struct symbolizer *sy);

#endif
