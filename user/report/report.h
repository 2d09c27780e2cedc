/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The report: aggregates of a stream of decoded events, printed as a flat
 * table (one row per function) and a call tree (one node per call path).
 *
 * Memory is bounded by the number of functions and of distinct call paths,
 * never by the number of calls: each call updates a fixed-size row of its
 * function and the row of its call path, and is then forgotten.  That is what
 * lets `bpfprof report` read an archive of any length and lets `record`
 * print its summary from the live stream.
 *
 * The session's path table may still be incomplete while events stream in
 * (the archive stores it at the end), so report__add() only keys rows by path
 * number; everything that needs the shape of the paths (recursion, the tree)
 * is worked out in report__print(), when the session is complete.
 */
#ifndef BPFPROF_REPORT_H
#define BPFPROF_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "model/session.h"

struct report;
struct event_filter;
struct replay_progress;

enum report_format {
	REPORT_PRETTY,		/* aligned columns, human units */
	REPORT_JSON,		/* one object: functions, tree, totals */
	REPORT_CSV,		/* the flat table (or the tree with tree_only), RFC 4180 */
};

enum report_sort {
	REPORT_SORT_TOTAL,	/* inclusive time */
	REPORT_SORT_SELF,
	REPORT_SORT_CALLS,
	REPORT_SORT_AVG,
	REPORT_SORT_MAX,
};

struct report_opts {
	enum report_format format;
	enum report_sort sort;
	size_t top;		/* rows of the flat table, 0: all */
	uint32_t depth;		/* levels of the tree, 0: all */
	uint32_t pid, tid;	/* only calls of this process / thread, 0: any */
	bool no_tree;		/* flat table only */
	bool tree_only;		/* call tree only */
	bool edges;		/* the dependency edge table only (pretty, csv) */
	bool marks;		/* the BPFPROF_MARK checkpoint view only (pretty) */
	bool no_percentiles;	/* no p50/p99 (record's summary): no per-function histogram */
	const char *args;	/* --args FUNC:PARAM: calls grouped by a parameter's value */
};

/* opts may be NULL (pretty, by total, everything).  0 or -EINVAL. */
int report__new(const struct report_opts *opts, struct report **out);
/*
 * One decoded event: calls outside the pid/tid filter are ignored, losses
 * counted.  0, or -EINVAL for a call of a function not in s->funcs.
 */
int report__add(struct report *r, const struct bp_session *s, const struct bp_event *ev);
/* The tables in opts->format.  s must be complete (paths).  0 or -EIO. */
int report__print(struct report *r, const struct bp_session *s, FILE *f);
/* The `top` functions by total time, pretty, no header: record's summary. */
void report__print_summary(struct report *r, const struct bp_session *s, FILE *f, size_t top);
void report__free(struct report *r);
/*
 * The recording at `path` aggregated into rep through the replay loop
 * (read.c; `partial`: an unfinished recording read up to its last complete
 * block, archive__open), telling pr (may be NULL) how far it has gone; s holds the
 * tables for report__print().  0, -EINVAL for an event naming an unknown
 * function (printed), -ESRCH for a --pid/--tid not in the recording
 * (printed), or the reader's -errno (printed).
 */
int report__read(struct report *rep, const char *path, bool partial,
		 const struct event_filter *f, struct bp_session *s,
		 const struct replay_progress *pr);

/* "total" -> REPORT_SORT_TOTAL ...; 0 or -EINVAL. */
int report__parse_sort(const char *name, enum report_sort *out);
/* "pretty" / "json" / "csv"; 0 or -EINVAL. */
int report__parse_format(const char *name, enum report_format *out);

#endif
