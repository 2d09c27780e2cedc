/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * USDT probes: the loader that attaches usdt.bpf.c to them -- the bpfprof.h
 * annotations of every traced binary automatically, and any probe asked for
 * with -U [LIB:]PROVIDER:NAME.
 */
#ifndef BPFPROF_USDT_H
#define BPFPROF_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "trace.h"
#include "symbols/usdt_notes.h"

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
/*
 * Appends descriptors of u's links to *fds (n already there), each a new
 * one the caller closes: another holder of them makes the caller's own
 * release of u instant (base/away.h).  The new count.
 */
size_t usdt__link_fds(const struct usdt_tracer *u, int **fds, size_t n);
void usdt__free(struct usdt_tracer *u);

#endif
