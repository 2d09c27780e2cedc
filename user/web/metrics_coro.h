/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-(process, coroutine function) aggregates for `bpfprof serve`'s
 * /metrics: the coroutine spans (model/coro.h) joined live from the decoded
 * calls and resume edges, counted when they end.  Memory: the rows (processes
 * x coroutine functions) and the invocations suspended at once.
 */
#ifndef BPFPROF_METRICS_CORO_H
#define BPFPROF_METRICS_CORO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "model/session.h"

struct coro_metrics;

int coro_metrics__new(struct coro_metrics **out);
void coro_metrics__free(struct coro_metrics *m);	/* accepts NULL */
/* Every decoded event of the live session s (calls and edges; others are ignored). */
void coro_metrics__event(struct coro_metrics *m, const struct bp_session *s,
			 const struct bp_event *ev);
/* Drops the rows of processes for which alive() says false; returns how many went. */
size_t coro_metrics__prune(struct coro_metrics *m, bool (*alive)(uint32_t pid, void *ctx),
			   void *ctx);
size_t coro_metrics__rows(const struct coro_metrics *m);
/*
 * The `top` functions by exec time (0: all): calls, raised, exec and wall
 * seconds (counters), the longest exec and wall of one invocation (gauges),
 * then the invocations suspended now.  0 or -EIO.
 */
int coro_metrics__write(struct coro_metrics *m, const struct bp_session *s, size_t top, FILE *f);

#endif
