/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process that closes descriptors for bpfprof, each one in a thread of
 * its own, while bpfprof goes on (the governor's old uprobe links).
 *
 * The last close of a uprobe link first takes its probes out, then waits
 * for the uprobes' grace period, which a traced thread holds off as long as
 * it keeps calling traced functions with a return probe pending (a busy
 * server: for ever).  The probes must go at once, the wait must hold up
 * nobody.  A child forked per close (base/away.h) does not do it here: a
 * fork copies every descriptor bpfprof has at that moment, and a child
 * whose copy of another link turns out to be the last one waits in that
 * close before it reaches its own, whose probes then stay.
 *
 * closer__start forks one small process, early, that keeps none of
 * bpfprof's descriptors.  closer__give passes it one descriptor (over a
 * socket); the caller closes its own copy, then says so (closer__given),
 * and a thread of the closer's own closes it at once (closer.c says why not
 * a process each, nor a queue: a link waiting its turn keeps its probes).
 * The closer waits for closer__given: had it closed its copy first, the
 * caller's close would be the last one, and the caller (the governor's
 * decoder thread) would wait out the grace period: 218 s once, on a
 * machine where other tracers held the uprobes' grace periods.  The
 * closer ends alone once bpfprof stopped giving and every close is done.
 */
#ifndef BPFPROF_BASE_CLOSER_H
#define BPFPROF_BASE_CLOSER_H

#include <sys/types.h>

struct closer {
	pid_t pid;
	int sock;	/* ours: descriptors go out through it */
};

/* Forks the closer; 0 or -errno (then c->sock < 0: callers close themselves). */
int closer__start(struct closer *c);
/*
 * Gives fd to the closer; the caller then closes its own copy (not the last
 * one any more) and calls closer__given().  0, or -errno: the caller's close
 * is the last (and no closer__given).
 */
int closer__give(struct closer *c, int fd);
/* The caller's copy of the descriptor it gave last is closed: the closer may close its own. */
void closer__given(struct closer *c);
/* Stops taking descriptors: the closer ends once those given are closing (not waited for). */
void closer__stop(struct closer *c);

#endif
