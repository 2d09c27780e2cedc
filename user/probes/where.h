/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which files the traced processes' CPU time went to (bpf/where.bpf.c: a
 * 49 Hz cpu-clock count per mapped file, no records), for one hint at the
 * end: when the main executable is thin, most of its time in libraries
 * (jq, xz, sqlite3, git), it names those libraries and the -F 'LIB:*' that
 * traces them.  Started only for the default selection (no -F, no
 * --sample, no -a).
 */
#ifndef BPFPROF_CAPTURE_WHERE_H
#define BPFPROF_CAPTURE_WHERE_H

#include "model/session.h"

#define WHERE_HZ		49
/* Fewer samples than this say nothing. */
#define WHERE_MIN_SAMPLES	10
/* The executable is thin when its own code ran in less than this share of the samples. */
#define WHERE_THIN		0.5
/* A library is named from this share of the samples. */
#define WHERE_NAMED		0.05

struct where;
struct shared_maps;

/* Loads and attaches the counter (one perf event per CPU); 0 or -errno (not printed). */
int where__new(const struct shared_maps *maps, struct where **out);
/* At the end: the hint, on stderr, when exe (the file traced) was thin.  s: what was traced. */
void where__hint(struct where *w, const char *exe, const struct bp_session *s);
void where__free(struct where *w);

#endif
