/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process that shares bpfprof's table of descriptors, so that bpfprof's
 * own end is never a uprobe link's last close.
 *
 * The last close of a uprobe link waits for the uprobes' grace period,
 * which a traced thread elsewhere on the machine can hold off for minutes
 * (a return probe pending while it calls on).  bpfprof hands its links
 * away before a normal end (capture/teardown.c, base/closer.h), but a
 * SIGKILL leaves them to the kernel's exit of bpfprof, and the process
 * that started bpfprof waited up to minutes for it to be reaped.
 *
 * fdshare__start clones (CLONE_FILES, no shared memory) a small process,
 * bpfprof-fds, that holds a reference to the very table bpfprof uses: a
 * descriptor bpfprof opens or closes is opened or closed for both, so
 * nothing changes while bpfprof runs, but bpfprof's exit only drops its
 * reference to the table.  Once bpfprof is gone, bpfprof-fds closes every
 * BPF link at once, each in a thread of its own (a link's probes go at the
 * start of its close; one after the other, each would keep its probes
 * while those before it wait), then every other descriptor (pipes, files,
 * sockets: readers see their end at once), and ends with its last close
 * thread, once every link is gone.  Nobody waits for it but the keeper or
 * guard, which goes on serving the targets until then (target/keeper.h).
 */
#ifndef BPFPROF_BASE_FDSHARE_H
#define BPFPROF_BASE_FDSHARE_H

#include <sys/types.h>

/* 0 or -errno (then nothing changes: bpfprof's exit closes its descriptors itself). */
int fdshare__start(void);
/*
 * bpfprof-fds's pid, or 0.  Once bpfprof has died, the links are gone when
 * both bpfprof and bpfprof-fds are (a pidfd of each polls readable: the
 * keeper or guard waits for both before it puts return addresses back).
 */
pid_t fdshare__pid(void);

#endif
