/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one event filter of every reader of a recording (convert, report,
 * view, and record's --min-time): only some processes and threads, only
 * calls of at least some duration.  Its rules, kept in one place:
 *   - calls, samples and annotations belong to their thread;
 *   - an edge is kept when either end is (causality across the filter's
 *     border is the point of an edge);
 *   - a loss concerns every process: never filtered;
 *   - --min-time leaves short calls out of the output, not out of the counts.
 */
#ifndef BPFPROF_FILTER_H
#define BPFPROF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "session.h"

struct event_filter {
	pid_t *pids, *tids;	/* none: every process / thread */
	size_t npids, ntids;
	uint64_t min_time;	/* ns: shorter calls are left out */
};

/* Does anything pass through unchanged (no pid, tid or time condition)? */
bool filter__none(const struct event_filter *f);
bool filter__keep(const struct event_filter *f, const struct bp_event *ev);
/*
 * With pids or tids, the thread and process tables lose what was filtered
 * out, so an output names only what it shows.
 */
void filter__tables(const struct event_filter *f, struct bp_session *s);
/*
 * Does every pid and tid of f name a task of the recording s (its tables
 * complete)?  A typo would otherwise give an empty output and a success.
 * 0, or -ESRCH with a message naming `what` (the archive).
 */
int filter__check(const struct event_filter *f, const struct bp_session *s, const char *what);
void filter__free(struct event_filter *f);

#endif
