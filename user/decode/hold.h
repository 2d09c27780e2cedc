/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The records that hold a traced process or thread for user space, read
 * for the live side: an exec or a dlopen (the process stopped at its new
 * image, or at the dynamic linker's hook), an entry of the exception
 * unwinder and a re-arm after it (return addresses to put back).  This is
 * the one dispatcher through which they reach the tracer (probes/trace.c,
 * before the decoder sees them, or instead while detaching) and capture
 * (the decoder's hold hook, decode.h), so that no layer but decode/ reads
 * the record format (bpf/events.h).
 */
#ifndef BPFPROF_DECODE_HOLD_H
#define BPFPROF_DECODE_HOLD_H

#include <stddef.h>
#include <stdint.h>

enum hold_kind {
	HOLD_NONE,		/* not one of these records */
	HOLD_EXEC,		/* a process exec'd (filename: its new image) */
	HOLD_DLOPEN,		/* the dynamic linker changed what a process maps */
	HOLD_UNWIND,		/* a thread entered the exception unwinder */
	HOLD_REARM,		/* its first traced call after the exception */
};

struct hold {
	enum hold_kind kind;
	uint32_t pid, tid;
	uint64_t ts;		/* the record's time: the stop's, as listed in sig_stops */
	uint32_t stopped;	/* BP_STOP_*: how it waits (BP_STOP_NONE: it runs on) */
	char filename[256 + 1];	/* HOLD_EXEC: the file exec'd (the probe's copy, NUL-terminated) */
	/* HOLD_UNWIND, HOLD_REARM: the return slots, the address each held */
	uint64_t trampoline;	/* the value found in each slot */
	uint32_t n;
	const uint64_t *slot, *orig;	/* n of each, in the record */
};

/* Reads a raw record of size bytes into *h; its kind (HOLD_NONE: not a hold, or too short). */
enum hold_kind hold__read(const void *rec, size_t size, struct hold *h);

#endif
