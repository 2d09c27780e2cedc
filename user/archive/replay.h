/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one replay loop: a recording read back from its archive, through the
 * event filter, into a sink -- an exporter (convert, view's conversions),
 * the report (report, view's tables), or anything else that takes events
 * (merge, diff).  Streaming: memory is the tables, never the events.  The
 * sinks live above this layer and read through it (report/read.c, ...):
 * the archive knows none of them.
 */
#ifndef BPFPROF_REPLAY_H
#define BPFPROF_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include "model/filter.h"
#include "model/session.h"

/* Takes each event that passed the filter; a negative return stops the replay and is passed back. */
typedef int (*replay_fn)(void *ctx, const struct bp_session *s, const struct bp_event *ev);

/*
 * Opens `path` into s (initialised here; `partial`: an unfinished recording
 * is read up to its last complete block, archive__open), calls begin(ctx, s) once the
 * tables known at the start are read (may be NULL), then fn for every
 * event the filter keeps; at the end the tables are complete and filtered.
 * Returns 0 or -errno (the reader or the sink printed why); on error s may
 * hold part of the tables and must still be freed.  *nkept (may be NULL):
 * events given to fn.
 */
int replay__run(const char *path, bool partial, const struct event_filter *f,
		struct bp_session *s, int (*begin)(void *ctx, struct bp_session *s), replay_fn fn,
		void *ctx, uint64_t *nkept);
/*
 * Told now and then (every 65,536 events) how far a replay has gone: bytes
 * of the file read, its size (0: unknown) and events read so far.
 */
struct replay_progress {
	void (*fn)(void *ctx, uint64_t done, uint64_t size, uint64_t events);
	void *ctx;
};
/* replay__run() without begin() or nkept, telling pr (may be NULL) how far it has gone. */
int replay__run_progress(const char *path, bool partial, const struct event_filter *f,
			 struct bp_session *s, replay_fn fn, void *ctx,
			 const struct replay_progress *pr);

#endif
