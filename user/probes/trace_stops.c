// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The processes the BPF side stopped whole (BP_STOP_SIGNAL) and the loader
 * lets go: at an exec or a dlopen (sig_stops), at the exception unwinder.
 * Every SIGCONT goes through a pidfd (base/pidfd.h, issue 27): the one of
 * a stop at an exec or dlopen is taken when its record arrives, checked
 * against the stop's entry in sig_stops (the same time: the very stop; the
 * entry goes when its process dies, bpf/trace.bpf.c), and used when the
 * new files are probed, maybe seconds later, when the pid could belong to
 * another process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/trace.skel.h"
#include "bpf/events.h"
#include "decode/hold.h"
#include "base/log.h"
#include "base/pidfd.h"
#include "base/util.h"
#include "target/keeper.h"
#include "trace.h"
#include "trace_internal.h"

struct stop_fd {
	pid_t pid;
	int fd;
};

/* A pidfd of pid if the stop noted in sig_stops is still there (at `ts` exactly, or by `since`). */
static int pidfd_of_stop(struct tracer *t, pid_t pid, uint64_t ts, uint64_t since)
{
	int mfd = bpf_map__fd(t->skel->maps.sig_stops), fd;
	__u32 key = pid;
	__u64 at;

	fd = pidfd_of(pid);
	if (fd < 0)
		return fd;
	/*
	 * Looked up after the pidfd: the entry goes when its process dies,
	 * before its pid can be reused, so an entry now means the pidfd's
	 * process is the one stopped.
	 */
	if (bpf_map_lookup_elem(mfd, &key, &at) || (ts ? at != ts : at > since)) {
		close(fd);
		return -ESRCH;
	}
	return fd;
}

void tracer__note_stop(struct tracer *t, const struct hold *h)
{
	pid_t pid = h->pid;
	int fd;

	if (h->stopped != BP_STOP_SIGNAL)
		return;
	fd = pidfd_of_stop(t, pid, h->ts, 0);
	if (fd < 0)
		return;		/* gone already: nothing to continue */
	pthread_mutex_lock(&t->stop_lock);
	t->stop_fds = xrealloc(t->stop_fds, (t->nstop_fds + 1) * sizeof(*t->stop_fds));
	t->stop_fds[t->nstop_fds].pid = pid;
	t->stop_fds[t->nstop_fds].fd = fd;
	t->nstop_fds++;
	pthread_mutex_unlock(&t->stop_lock);
}

/*
 * The pidfd taken at pid's stop (removed from the list), or -1.  Locked:
 * a hold's watchdog (capture/holdlimit.c) resumes from a thread of its own.
 */
static int take_stop_fd(struct tracer *t, pid_t pid)
{
	size_t i;
	int fd = -1;

	pthread_mutex_lock(&t->stop_lock);
	for (i = 0; i < t->nstop_fds; i++) {
		if (t->stop_fds[i].pid != pid)
			continue;
		fd = t->stop_fds[i].fd;
		t->stop_fds[i] = t->stop_fds[--t->nstop_fds];
		break;
	}
	pthread_mutex_unlock(&t->stop_lock);
	return fd;
}

void tracer__forget_stops(struct tracer *t)
{
	size_t i;

	for (i = 0; i < t->nstop_fds; i++)
		close(t->stop_fds[i].fd);
	free(t->stop_fds);
	t->stop_fds = NULL;
	t->nstop_fds = 0;
}

/*
 * The fallback for a thread the keeper does not trace (already under a
 * debugger): its whole process was stopped at the entry of the exception
 * unwinder (BP_STOP_SIGNAL); put the original return addresses back where
 * the kernel's trampoline is, then resume it.  Writes go through
 * /proc/PID/mem, which kernel lockdown allows (unlike bpf_probe_write_user);
 * a slot is written only if it still holds the trampoline.  Threads the
 * keeper holds (BP_STOP_KEEPER) are repaired by it, not here.
 */
void tracer__restore_unwind(struct tracer *t, const struct hold *h)
{
	pid_t pid = h->pid;
	char path[64];
	uint32_t i, n = h->n;
	int fd, pfd;

	if (h->stopped != BP_STOP_SIGNAL)
		return;
	/* the process that was stopped: one that got its pid since started later */
	pfd = pidfd_of_started_by(pid, h->ts);
	if (pfd < 0) {
		t->unwind_failed += n;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		for (i = 0; i < n; i++) {
			/* unwind: trampoline -> original; re-arm: original -> trampoline */
			bool rearm = h->kind == HOLD_REARM;
			uint64_t cur = 0, want = rearm ? h->orig[i] : h->trampoline;
			const uint64_t *put = rearm ? &h->trampoline : &h->orig[i];

			if (pread(fd, &cur, sizeof(cur), h->slot[i]) == sizeof(cur) && cur == want &&
			    pwrite(fd, put, sizeof(*put), h->slot[i]) == sizeof(cur))
				t->unwind_restored++;
			else
				t->unwind_failed++;
		}
		close(fd);
	} else {
		t->unwind_failed += n;
	}
	pidfd_signal(pfd, SIGCONT);
	close(pfd);
}

/*
 * SIGCONT to a process stopped whole at an exec or a dlopen; its sig_stops
 * entry goes as the signal is sent (bpf/trace.bpf.c).  Through the pidfd
 * taken at the stop, else one taken now if the stop is
 * still listed: never to a pid number alone.
 */
static void continue_process(struct tracer *t, pid_t pid)
{
	int fd;

	fd = take_stop_fd(t, pid);
	if (fd < 0)
		fd = pidfd_of_stop(t, pid, 0, now_ns(CLOCK_MONOTONIC));
	if (fd >= 0) {
		/* the entry goes with this SIGCONT (cont_sent, bpf/trace.bpf.c) */
		pidfd_signal(fd, SIGCONT);
		close(fd);
	}
}

void tracer__resume(struct tracer *t, pid_t pid, uint32_t stopped)
{
	if (stopped == BP_STOP_KEEPER && t->keeper)
		keeper__release_exec(t->keeper, pid);
	else if (stopped == BP_STOP_SIGNAL)
		continue_process(t, pid);
}

void tracer__resume_exec_pid(struct tracer *t, pid_t pid)
{
	/* the keeper's hold if it has one (it waits for a stop asked for, not yet seen) */
	if (t->keeper && keeper__release_exec(t->keeper, pid) > 0)
		return;
	continue_process(t, pid);
}
