/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Signals to processes bpfprof did not start, through pidfds (issue 27):
 * a pid number can be reused the moment its process is reaped, by anyone's
 * process (a stopped root `sleep`); a pidfd names one process for good, and
 * a signal sent through it after that process died goes nowhere (ESRCH).
 * Take the pidfd while the process is known to be the one meant (it is
 * held stopped, its stop recorded), signal through it later.
 */
#ifndef BPFPROF_PIDFD_H
#define BPFPROF_PIDFD_H

#include <stdint.h>
#include <sys/types.h>

/* A pidfd of process pid (close-on-exec), or -errno. */
int pidfd_of(pid_t pid);
/* sig to the process of pidfd; 0 or -errno (-ESRCH: it is gone). */
int pidfd_signal(int pidfd, int sig);
/*
 * A pidfd of pid, only if the process now holding that pid started before
 * `mono_ns` (CLOCK_MONOTONIC, a record's time): a process that got the pid
 * after ours died started later.  To the clock tick of /proc/PID/stat's
 * start time.  The fd, or -errno (-ESRCH: not the process meant).
 */
int pidfd_of_started_by(pid_t pid, uint64_t mono_ns);

#endif
