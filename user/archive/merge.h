/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Several archives (runs, hosts) into one recording on one time axis, given
 * to a sink as the replay loop gives one (replay.h): an exporter, for the
 * merge command.  See merge.c for how tables, times and ids are reconciled.
 */
#ifndef BPFPROF_MERGE_H
#define BPFPROF_MERGE_H

#include <stddef.h>
#include "replay.h"
#include "model/session.h"

/*
 * Reads the tables of paths[0..n) and merges them into s (initialised
 * here), calls begin(ctx, s) (may be NULL), then fn for every event of
 * every input, remapped onto the merged tables; at the end s is complete.
 * 0 or -errno (printed); s must be freed either way.
 */
int merge__run(const char *const *paths, size_t n, struct bp_session *s,
	       int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx);

/*
 * merge__run() with tables(tctx, in) called on each input's tables once read,
 * before they are merged: functions it renames (to the name and address of
 * another) are shared as any equal functions are (bpfprof symbolize).
 */
int merge__run_tables(const char *const *paths, size_t n, struct bp_session *s,
		      void (*tables)(void *tctx, struct bp_session *in), void *tctx,
		      int (*begin)(void *ctx, struct bp_session *s), replay_fn fn, void *ctx);
#endif
