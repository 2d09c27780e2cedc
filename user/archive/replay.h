/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one replay loop: a recording read back from its archive, through the
 * event filter, into a sink -- an exporter (convert, view's conversions),
 * the report (report, view's tables), or anything else that takes events
 * (merge, diff).  Streaming: memory is the tables, never the events.
 */
#ifndef BPFPROF_REPLAY_H
#define BPFPROF_REPLAY_H

#include <stdint.h>
#include "exporters/exporter.h"
#include "model/filter.h"
#include "model/session.h"

struct report;

/* Takes each event that passed the filter; a negative return stops the replay and is passed back. */
typedef int (*replay_fn)(void *ctx, const struct bp_session *s, const struct bp_event *ev);

/*
 * Opens `path` into s (initialised here), calls begin(ctx, s) once the
 * tables known at the start are read (may be NULL), then fn for every
 * event the filter keeps; at the end the tables are complete and filtered.
 * Returns 0 or -errno (the reader or the sink printed why); on error s may
 * hold part of the tables and must still be freed.  *nkept (may be NULL):
 * events given to fn.
 */
int replay__run(const char *path, const struct event_filter *f, struct bp_session *s,
		int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx,
		uint64_t *nkept);
/* The recording at `path` written by exporter `ops` to `out`.  0 or -errno (printed). */
int replay__export(const char *path, const struct event_filter *f, const struct exporter_ops *ops,
		   const char *out, uint64_t *nkept);
/*
 * The recording at `path` aggregated into rep; s holds the tables for
 * report__print().  0, -EINVAL for an event naming an unknown function
 * (printed), or the reader's -errno (printed).
 */
int replay__report(const char *path, const struct event_filter *f, struct bp_session *s,
		   struct report *rep);

/*
 * Told now and then (every 65,536 events) how far a replay has gone: bytes
 * of the file read, its size (0: unknown) and events read so far.
 */
struct replay_progress {
	void (*fn)(void *ctx, uint64_t done, uint64_t size, uint64_t events);
	void *ctx;
};
/* replay__report(), telling pr (may be NULL) how far it has gone. */
int replay__report_progress(const char *path, const struct event_filter *f, struct bp_session *s,
			    struct report *rep, const struct replay_progress *pr);

/*
 * Recordings into the two sides of a diff (report/diff.h): base[0..nbase)
 * the base side's, new[0..nnew) the new side's (one recording each, or
 * several runs each), the two sides read at once in two threads.  0 or
 * -errno (printed).
 */
struct diff;
int replay__diff(struct diff *d, char **base, size_t nbase, char **new, size_t nnew);

#endif
