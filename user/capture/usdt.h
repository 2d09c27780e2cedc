/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * USDT probes: the ones a binary declares (.note.stapsdt, read with
 * libelf), and the loader that attaches usdt.bpf.c to them -- the bpfprof.h
 * annotations of every traced binary automatically, and any probe asked for
 * with -U [LIB:]PROVIDER:NAME.
 */
#ifndef BPFPROF_USDT_H
#define BPFPROF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "trace.h"

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

struct usdt_tracer;

struct usdt_opts {
	bool trace_all;
	bool gated;
};

int usdt__new(const struct usdt_opts *o, const struct shared_maps *maps, struct usdt_tracer **out);
/* Attaches to provider:name in path (every site); cookie as in bpf/events.h.  0 or -errno. */
int usdt__attach(struct usdt_tracer *u, const char *path, const char *provider, const char *name,
		 uint64_t cookie);
/* Does `path` have bpfprof.h probes (provider "bpfprof")? */
bool usdt__has_bpfprof(const char *path);
/* Attaches every bpfprof.h probe `path` has; returns how many (>= 0). */
int usdt__attach_bpfprof(struct usdt_tracer *u, const char *path);
uint64_t usdt__lost(struct usdt_tracer *u, uint64_t *per_cpu, size_t ncpu);
void usdt__pause(struct usdt_tracer *u);
void usdt__free(struct usdt_tracer *u);

/* BP_USDT_* kind of a bpfprof.h probe name ("mark", "span_begin"...), 0 if not one. */
uint32_t usdt__bpfprof_kind(const char *name);

#endif
