/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The USDT probes a binary declares: its .note.stapsdt, read with libelf
 * (probes/usdt.c attaches to them).
 */
#ifndef BPFPROF_USDT_NOTES_H
#define BPFPROF_USDT_NOTES_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct usdt_note {
	char *provider;
	char *name;
	char *args;		/* the argument spec, e.g. "-4@%edi 8@%rsi" */
	uint64_t pc;		/* link-time address of the probe site */
	uint64_t semaphore;	/* 0: none */
};

struct usdt_notes {
	struct usdt_note *v;
	size_t n;
};

/* The probes `path` declares; 0 with none, -errno when it cannot be read. */
int usdt__notes(const char *path, struct usdt_notes *out);
/* The same from an open ELF (an image in memory: the fuzz target); -ENOEXEC: not ELF. */
int usdt__notes_elf(Elf *elf, struct usdt_notes *out);
void usdt__notes_free(struct usdt_notes *n);

/* BP_USDT_* kind of a bpfprof.h probe name ("mark", "span_begin"...), 0 if not one. */
uint32_t usdt__bpfprof_kind(const char *name);

#endif
