/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Live aggregates for `bpfprof serve`, written in the Prometheus text
 * exposition format (version 0.0.4).
 *
 * One row per (process, function) that made a call: calls, inclusive time,
 * self time and a latency histogram with fixed buckets (1 us .. 10 s, the
 * Prometheus way: cumulative `le` buckets plus _sum and _count).  Calls are
 * counted and forgotten, so memory follows processes x functions called,
 * never the number of calls; rows of processes that are gone are dropped by
 * metrics__prune().
 *
 * Inclusive time counts the outermost activation of a recursive function
 * only (as `bpfprof report` does): nested activations lie inside it.  The
 * histogram has every call, so its _sum can exceed the time counter for a
 * recursive function.
 */
#ifndef BPFPROF_METRICS_H
#define BPFPROF_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/session.h"

struct metrics;

/* Upper bounds of the latency histogram, in ns (the +Inf bucket is implicit). */
#define METRICS_NBUCKETS 22
extern const uint64_t metrics_bucket_ns[METRICS_NBUCKETS];

/* What the process knows besides the calls, for the exposition. */
struct metrics_extra {
	uint64_t lost;			/* ring buffer records lost */
	uint64_t cpu_ns;		/* bpfprof's own CPU time, user + system */
	uint64_t traced_processes;	/* alive now */
	uint64_t rss_bytes;		/* bpfprof's resident memory, 0: unknown */
	uint64_t captures;		/* /capture requests served */
	uint64_t captures_running;	/* /capture requests waiting for their window */
	uint64_t decoder_threads;	/* threads whose call stacks the decoder holds */
	/* the probes' estimated slowdown of the traced processes (1: none), 0: not known */
	double slowdown, slowdown_recent;
	double max_slowdown;		/* --max-overhead as a factor, 0: exact (not governed) */
};

int metrics__new(struct metrics **out);
void metrics__free(struct metrics *m);	/* accepts NULL */

/* One completed call of the live session s. */
void metrics__add_call(struct metrics *m, const struct bp_session *s, const struct bp_call *c);

/*
 * The overhead governor dropped func at unix_ns: its counters stop there,
 * and bpfprof_function_traced{function,module} says 0 (with the time).
 */
void metrics__drop(struct metrics *m, uint32_t func, uint64_t unix_ns);

/* Drops the rows of processes for which alive() says false; returns how many went. */
size_t metrics__prune(struct metrics *m, bool (*alive)(uint32_t pid, void *ctx), void *ctx);

/* Rows kept (processes x functions), and calls counted in all. */
size_t metrics__rows(const struct metrics *m);
uint64_t metrics__calls(const struct metrics *m);

/*
 * The exposition: the `top` rows by inclusive time (0: all), with HELP and
 * TYPE lines, then the extra metrics.  0 or -EIO.
 */
int metrics__write(struct metrics *m, const struct bp_session *s, size_t top,
		   const struct metrics_extra *x, FILE *f);

/* A label value, quoted and escaped as the format requires (\\, \", \n; valid UTF-8). */
void metrics__label_value(FILE *f, const char *v);

#endif
