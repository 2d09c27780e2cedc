/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Descriptors whose last close is slow, closed away from bpfprof.
 *
 * The last close of a uprobe link waits for the uprobes' grace periods:
 * seconds under load, and for as long as a traced thread keeps a return
 * probe pending while it calls on.  A thread of bpfprof's blocked there
 * also holds up bpfprof's exit (a process ends when its last thread does),
 * which no signal cuts short.  away__start forks a child that holds a copy
 * of the descriptors and nothing else; bpfprof then closes its own copies
 * (no longer the last ones: instant), and away__finish lets the child close
 * them, which is where the wait happens.
 */
#ifndef BPFPROF_BASE_AWAY_H
#define BPFPROF_BASE_AWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct away {
	pid_t pid;
	int go;		/* write end: its close lets the child close its copies */
	int pidfd;	/* the child's, to wait with a timeout */
};

/*
 * Forks the child that holds fds[0..n).  0, or -errno (nothing forked: the
 * caller closes them itself, the slow way).
 */
int away__start(struct away *a, const int *fds, size_t n);
/* To be called once the caller's own copies are closed: the child closes its. */
void away__finish(struct away *a);
/*
 * Waits up to timeout_ms for the child to be done (the descriptors'
 * release over): 0 when it is (or there was none), -ETIMEDOUT.  Waiting
 * here, unlike in a close, lets the caller give up, and bpfprof exit.
 */
int away__wait(struct away *a, int timeout_ms);
/* Not waited for: the child ends alone (reaped by waitpid(-1) or by init); its pidfd is closed. */
void away__leave(struct away *a);

/*
 * The go pipe, for a child that holds descriptors and acts only once the
 * parent has closed its own copies (away__start's, capture's bpfprof-release):
 * away__go_pipe makes it (0 or -errno); away__fork forks, the child keeping
 * the read end go[0] (returns 0), the parent the write end go[1] (returns the
 * child's pid), or -errno with both ends closed; in the child, away__wait_go
 * blocks until the parent has closed go[1] (or ended), then closes go[0].
 */
int away__go_pipe(int go[2]);
pid_t away__fork(int go[2]);
void away__wait_go(int go);

#endif
