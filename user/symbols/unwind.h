/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DWARF unwinding of sampled user stacks (--stack=dwarf|auto), as perf
 * --call-graph dwarf does: the BPF side copies the user registers and the
 * top of the user stack (BP_REC_USTACK); libdw (elfutils) unwinds that copy
 * with the CFI of the mapped binaries (.eh_frame, else .debug_frame from
 * /usr/lib/debug by build id; never debuginfod).  One Dwfl per process,
 * kept across samples so each module's CFI is parsed once; its modules come
 * from the /proc/PID/maps text the symbolizer read, so a process that has
 * exited since can still be unwound.
 */
#ifndef BPFPROF_UNWIND_H
#define BPFPROF_UNWIND_H

#include <stdint.h>
#include <stddef.h>

struct unwinder;
struct bp_ustack;

/* How an unwind ended. */
enum unwind_end {
	UNWIND_COMPLETE,	/* the CFI says the outermost frame has no caller (_start, clone3) */
	UNWIND_STACK_CUT,	/* needed stack above the copy, which --stack-size cut */
	UNWIND_NO_STACK,	/* needed memory outside the copy (not the stack, or the stack's top) */
	UNWIND_NO_CFI,		/* a frame without unwind information or a bad one */
	UNWIND_TOO_DEEP,	/* more frames than asked for */
	UNWIND_NO_MAPS,		/* the process's mappings are unknown */
	UNWIND_NEND
};

int unwinder__new(struct unwinder **out);
void unwinder__free(struct unwinder *u);

/*
 * Unwinds one sample of thread tid of process pid.  maps: the text of
 * /proc/PID/maps as last read (NULL: unknown); maps_gen changes whenever that
 * text does.  us: the registers, followed by us->len stack bytes.  Writes at
 * most max addresses to ips, innermost first: the first is the interrupted
 * pc, the others lie inside their call instruction (return address - 1), so
 * each symbolizes to the function that made the call.  Returns their number.
 */
uint32_t unwinder__unwind(struct unwinder *u, uint32_t pid, uint32_t tid, const char *maps,
			  uint64_t maps_gen, const struct bp_ustack *us, uint64_t *ips, uint32_t max,
			  enum unwind_end *end);

/* The process is gone or exec'd: drop its state. */
void unwinder__forget(struct unwinder *u, uint32_t pid);
/*
 * The file mapped as `name` is read from img (len bytes, elf_memory: the fuzz
 * target's exactly-sized copy) until unwinder__forget() of the processes
 * mapping it; NULL: none.  img stays the caller's.
 */
void unwinder__set_image(struct unwinder *u, const char *name, const void *img, size_t len);

/* Unwinds so far that ended in each way, and the message that explains one. */
uint64_t unwinder__count(const struct unwinder *u, enum unwind_end end);
const char *unwind_end_str(enum unwind_end end);

#endif
