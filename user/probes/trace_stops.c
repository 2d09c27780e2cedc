// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The processes the BPF side stopped whole (BP_STOP_SIGNAL) and the loader
 * lets go: at an exec or a dlopen (sig_stops), at the exception unwinder.
 * Every SIGCONT goes through a pidfd (base/pidfd.h, issue 27): the one of
 * a stop at an exec or dlopen is taken when its record arrives, checked
 * against the stop's entry in sig_stops (the same time: the very stop; the
 * entry goes when its process dies, bpf/trace.bpf.c), and used when the
 * new files are probed, maybe seconds later, when the pid could belong to
 * another process.  And the targets held still: by the keeper (started for
 * the unwinder hooks, or as the guard) or frozen by a ptrace seize of each
 * thread while probes go in or out (tracer__hold_targets).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
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
#include "internal.h"

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

/*
 * Starts the keeper (keeper.h) for targets whose unwinder is hooked: it keeps
 * the hooks (links) alive after bpfprof, and traces every thread of the
 * targets.  Threads we hold still (tracer__hold_targets) are handed over:
 * let go and taken again at once, while no return probe exists yet.
 */
void tracer_start_keeper(struct tracer *t, const int *fds, size_t nfds)
{
	int map = bpf_map__fd(t->skel->maps.tgids), err;
	bool held = t->held != NULL;
	__u32 key, next;
	void *prev = NULL;

	err = keeper__start(t->skel, "bpfprof-keeper", fds, nfds, t->follow_forks, &t->keeper);
	if (err) {
		p_warn("cannot start the keeper: %s; exceptions stop the whole process", strerror(-err));
		return;
	}
	t->skel->bss->keeper_tgid = keeper__pid(t->keeper);
	if (held)
		tracer__release_targets(t);
	while (!bpf_map_get_next_key(map, prev, &next)) {
		key = next;
		prev = &key;
		err = keeper__seize(t->keeper, key, held);
		if (err < 0)
			p_dbg("keeper: cannot trace pid %u: %s", key, strerror(-err));
	}
	t->keeper_held = held;
}

int tracer__exec_known(struct tracer *t, dev_t dev, ino_t ino)
{
	struct bp_file_key k = { .ino = ino, .dev = kdev_of(dev) };	/* as BPF reads it */
	__u8 one = 1;

	if (!t->skel->rodata->stop_on_exec)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.exec_known), &k, &one, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * The keeper's process, tracing nothing: at bpfprof's end or death it only
 * continues the processes a SIGSTOP at an exec or a dlopen left stopped.
 */
void tracer__start_guard(struct tracer *t)
{
	int err;

	if (t->keeper || t->guard || t->skel->rodata->trace_all)
		return;
	err = keeper__start(t->skel, "bpfprof-guard", NULL, 0, false, &t->guard);
	if (err)
		p_warn("cannot start the guard: %s; a process stopped at an exec stays stopped "
		       "if bpfprof is killed then", strerror(-err));
}

pid_t tracer__keeper_pid(struct tracer *t)
{
	return keeper__pid(t->keeper);
}

void tracer__unwind_stats(struct tracer *t, uint64_t *restored, uint64_t *failed)
{
	*restored = t->unwind_restored;
	*failed = t->unwind_failed;
}

/*
 * Removing a uprobe waits for an SRCU grace period, and every pending return
 * probe holds the read side until it returns or the kernel's timer retires
 * it -- a timer pushed back by each new return probe armed.  A target that
 * keeps calling traced functions (while main() is pending forever) would
 * hold the detach off indefinitely, and every other uprobe user on the
 * machine with it.  So the threads still running are held still while the
 * probes go: with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT), which, unlike
 * SIGSTOP, their parent never sees; a stop for a signal keeps that signal,
 * passed on at the detach.
 */
struct frozen {
	pid_t tid;
	int sig;
};

size_t tracer_freeze_targets(struct tracer *t, struct frozen **out)
{
	int fd = bpf_map__fd(t->skel->maps.tgids);
	struct frozen *v = NULL;
	__u32 key, next;
	void *prev = NULL;
	size_t n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		char path[64];
		struct dirent *de;
		DIR *d;

		key = next;
		prev = &key;
		snprintf(path, sizeof(path), "/proc/%u/task", key);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			int status;

			if (tid <= 0 || tid == getpid())
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0))
				continue;	/* gone, or traced by someone else: leave it */
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
			    waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
				ptrace(PTRACE_DETACH, tid, 0, 0);
				continue;
			}
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n].tid = tid;
			/* a signal-delivery stop holds a signal that must not be lost */
			v[n].sig = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
			if (v[n].sig == SIGTRAP)
				v[n].sig = 0;
			n++;
		}
		closedir(d);
	}
	*out = v;
	return n;
}

void tracer_thaw_targets(struct frozen *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ptrace(PTRACE_DETACH, v[i].tid, 0, (void *)(long)v[i].sig);
	free(v);
}

void tracer__hold_targets(struct tracer *t)
{
	if (t->keeper && !t->keeper_held) {
		keeper__hold(t->keeper);
		t->keeper_held = true;
	}
	/* threads the keeper traces cannot be seized again: it holds those */
	if (!t->held)
		t->nheld = tracer_freeze_targets(t, &t->held);
}

void tracer__release_targets(struct tracer *t)
{
	tracer_thaw_targets(t->held, t->nheld);
	t->held = NULL;
	t->nheld = 0;
	if (t->keeper && t->keeper_held) {
		keeper__release(t->keeper);
		t->keeper_held = false;
	}
}

void tracer_end_keeper(struct tracer *t)
{
	if (t->guard)
		keeper__end(t->guard, &t->unwind_restored, &t->unwind_failed);
	t->guard = NULL;
	if (!t->keeper)
		return;
	keeper__end(t->keeper, &t->unwind_restored, &t->unwind_failed);
	t->keeper = NULL;
	t->keeper_held = false;
	t->skel->bss->keeper_tgid = 0;
}
