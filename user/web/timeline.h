/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * view's timeline of a big recording: a window of time at a level of detail.
 * The archive is replayed (streaming) and the calls of the window come out
 * as boxes: a call of at least `threshold` ns (the window's width over the
 * pixels it is drawn on) is a box of its own; shorter ones at one depth of
 * one thread that follow each other closer than the threshold are merged
 * into one box that says how many calls it holds.  So a window holds at
 * most a few boxes per pixel per row whatever the number of calls, and a
 * narrow enough window shows every call.  Memory: the rows of the window
 * and at most TIMELINE_MAX_BOXES boxes.
 */
#ifndef BPFPROF_TIMELINE_H
#define BPFPROF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define TIMELINE_MAX_BOXES	300000

struct timeline_req {
	uint64_t t0, t1;	/* ns since the recording's start; t1 = 0: the whole recording
				 * in one pass, the threshold growing (x4) to keep at most
				 * half the boxes, since its length is known only at the end */
	unsigned int px;	/* pixels the window is drawn on */
};

/*
 * The window of the archive at `path` as JSON (malloc'd in *out):
 *   {"t0","t1","duration","threshold_ns","calls" (in the window),
 *    "boxes","merged" (calls inside merged boxes),"truncated",
 *    "names":[...],"threads":[{"pid","tid","name"}],
 *    "ev":[[thread, depth, begin_ns, dur_ns, name or -1 (mixed), calls], ...]}
 * 0 or -errno.
 */
int timeline__json(const char *path, const struct timeline_req *rq, char **out, size_t *len);

#endif
