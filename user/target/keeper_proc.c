// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The keeper's process (see keeper.h; bpfprof's side is keeper.c): the
 * ptrace tracer of the targets whose exception unwinder is hooked, serving
 * bpfprof's requests (internal.h) and, when bpfprof is gone, ending every
 * hold itself.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "skel/trace.skel.h"
#include "bpf/events.h"
#include "base/log.h"
#include "base/util.h"
#include "base/fdshare.h"
#include "base/pidfd.h"
#include "keeper.h"
#include "internal.h"

/* ------------------------------------------------------------ the process */

struct kthread {
	pid_t tid, pid;
	bool stopped;		/* in a ptrace stop we have not ended */
	bool listen;		/* a group stop: resumed with PTRACE_LISTEN */
	bool exec_held;		/* BP_HOLD_EXEC: until KOP_RELEASE_EXEC */
	int sig;		/* the signal to pass on when resumed */
};

static struct {
	struct trace_bpf *skel;
	int holds_fd;
	int stops_fd;		/* sig_stops: processes stopped whole (bpf/trace.bpf.c) */
	int parent_fd;		/* bpfprof's pidfd: readable once all its threads are gone */
	int sharer_fd;		/* bpfprof-fds's (base/fdshare.h), or -1 */
	long options;
	struct kthread *v;
	size_t n;
	bool holding;
	uint64_t restored, failed;
} K;

static struct kthread *find(pid_t tid)
{
	size_t i;

	for (i = 0; i < K.n; i++)
		if (K.v[i].tid == tid)
			return &K.v[i];
	return NULL;
}

/* The value after "KEY:" in /proc/TID/status into val (n bytes); false without one. */
static bool status_field(pid_t tid, const char *key, char *val, size_t n)
{
	char path[64], line[128];
	size_t len = strlen(key);
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			snprintf(val, n, "%s", line + len + 1);
			found = true;
			break;
		}
	fclose(f);
	return found;
}

static pid_t tgid_of(pid_t tid)
{
	char v[64];

	return status_field(tid, "Tgid", v, sizeof(v)) ? atoi(v) : tid;
}

static struct kthread *add(pid_t tid, pid_t pid)
{
	struct kthread *kt = find(tid);

	if (kt)
		return kt;
	K.v = xrealloc(K.v, (K.n + 1) * sizeof(*K.v));
	kt = &K.v[K.n++];
	memset(kt, 0, sizeof(*kt));
	kt->tid = tid;
	kt->pid = pid;
	return kt;
}

static void drop(pid_t tid)
{
	struct kthread *kt = find(tid);
	__u32 key = tid;

	bpf_map_delete_elem(K.holds_fd, &key);
	if (kt)
		*kt = K.v[--K.n];
}

/*
 * The pending return probes of one thread (tid > 0) or of every thread of a
 * process (pid > 0), from the unwind_slots iterator.  Returns how many
 * (up to max) or -errno.
 */
static int read_slots(pid_t tid, pid_t pid, struct bp_ret_slot *out, int max)
{
	union bpf_iter_link_info li;
	struct bpf_link *link;
	int fd, n = 0, err = 0;
	ssize_t r;

	memset(&li, 0, sizeof(li));
	if (tid > 0)
		li.task.tid = tid;
	else
		li.task.pid = pid;
	LIBBPF_OPTS(bpf_iter_attach_opts, o, .link_info = &li, .link_info_len = sizeof(li));
	link = bpf_program__attach_iter(K.skel->progs.unwind_slots, &o);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while (n < max) {
		r = read(fd, &out[n], (max - n) * sizeof(*out));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		n += r / sizeof(*out);
	}
	close(fd);
cleanup:
	bpf_link__destroy(link);
	return err ? err : n;
}

/*
 * For the stopped thread(s): every slot that holds `from` gets `to`, where
 * from/to are the trampoline and the original address (restore), or the
 * other way round for the frames above rearm_sp (re-arm).  Only stopped
 * threads are ever written.
 */
enum { FIX_RESTORE, FIX_REARM };

static void fix_slots(pid_t tid, pid_t pid, int how, uint64_t rearm_sp)
{
	static struct bp_ret_slot s[4096];
	char path[64];
	int n, i, fd;

	n = read_slots(tid, pid, s, sizeof(s) / sizeof(s[0]));
	if (n <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/mem", tid > 0 ? tid : pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		K.failed += n;
		return;
	}
	for (i = 0; i < n; i++) {
		struct kthread *kt = find(s[i].tid);
		uint64_t cur = 0, from, to;

		if (!kt || !kt->stopped || !s[i].trampoline)
			continue;	/* never a running thread's stack */
		if (how == FIX_REARM && s[i].slot <= rearm_sp)
			continue;	/* a frame the exception unwound */
		from = how == FIX_REARM ? s[i].orig : s[i].trampoline;
		to = how == FIX_REARM ? s[i].trampoline : s[i].orig;
		if (pread(fd, &cur, sizeof(cur), s[i].slot) != sizeof(cur) || cur != from)
			continue;	/* not armed (an older instance of a reused slot) */
		if (pwrite(fd, &to, sizeof(to), s[i].slot) == sizeof(to))
			K.restored++;
		else
			K.failed++;
	}
	close(fd);
}

static void resume(struct kthread *kt)
{
	if (!kt->stopped)
		return;
	if (kt->listen)
		ptrace(PTRACE_LISTEN, kt->tid, 0, 0);
	else
		ptrace(PTRACE_CONT, kt->tid, 0, (void *)(long)kt->sig);
	kt->stopped = kt->listen = false;
	kt->sig = 0;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* One waitpid() report. */
static void on_status(pid_t tid, int status)
{
	int sig = WSTOPSIG(status), event = status >> 16;
	struct kthread *kt;
	struct bp_hold h;
	__u32 key = tid;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		drop(tid);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	kt = find(tid);
	if (!kt)	/* a thread or child traced automatically (PTRACE_O_TRACECLONE/FORK) */
		kt = add(tid, tgid_of(tid));
	kt->stopped = true;
	kt->sig = 0;
	kt->listen = false;
	if (event == PTRACE_EVENT_STOP) {
		/* a group stop stays one (PTRACE_LISTEN); else our interrupt or a new thread */
		kt->listen = is_stop_signal(sig);
	} else if (event) {
		/* clone/fork/vfork/exec reports: nothing to pass on */
	} else if (sig == SIGSTOP && !bpf_map_lookup_elem(K.holds_fd, &key, &h)) {
		/* one of ours (hold_for_keeper): served, and the SIGSTOP dropped */
		bpf_map_delete_elem(K.holds_fd, &key);
		if (h.kind == BP_HOLD_UNWIND)
			fix_slots(tid, 0, FIX_RESTORE, 0);
		else if (h.kind == BP_HOLD_REARM)
			fix_slots(tid, 0, FIX_REARM, h.sp);
		else if (h.kind == BP_HOLD_EXEC)
			kt->exec_held = true;
	} else {
		kt->sig = sig;	/* anyone else's signal goes on */
	}
	if (!K.holding && !kt->exec_held)
		resume(kt);
}

static void reap(bool block)
{
	int status;
	pid_t tid;

	while ((tid = waitpid(-1, &status, __WALL | (block ? 0 : WNOHANG))) > 0) {
		on_status(tid, status);
		block = false;
	}
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Stops every traced thread; returns once all are, or at HOLD_TIMEOUT_MS. */
static void hold_all(void)
{
	uint64_t end = now_ms() + HOLD_TIMEOUT_MS;
	size_t i;

	K.holding = true;
	for (i = 0; i < K.n; i++)
		if (!K.v[i].stopped)
			ptrace(PTRACE_INTERRUPT, K.v[i].tid, 0, 0);
	for (;;) {
		bool all = true;

		for (i = 0; i < K.n; i++)
			all &= K.v[i].stopped;
		if (all || now_ms() >= end)
			return;
		reap(false);
		usleep(200);
	}
}

static void release_all(void)
{
	size_t i;

	K.holding = false;
	for (i = 0; i < K.n; i++)
		if (!K.v[i].exec_held)
			resume(&K.v[i]);
}

static int seize(pid_t pid, bool hold)
{
	bool more = true;
	int n = 0, rounds;

	/* threads may start while we go: again until a pass finds none new */
	for (rounds = 0; more && rounds < 100; rounds++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		more = false;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		d = opendir(path);
		if (!d)
			return n ? n : -errno;
		while ((de = readdir(d))) {
			pid_t tid = atoi(de->d_name);

			if (tid <= 0 || find(tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, (void *)K.options))
				continue;	/* gone, or under a debugger: the fallback serves it */
			add(tid, pid);
			if (hold || K.holding)
				ptrace(PTRACE_INTERRUPT, tid, 0, 0);
			more = true;
			n++;
		}
		closedir(d);
	}
	if (hold) {
		hold_all();
	}
	return n;
}

/* Whether a SIGSTOP is queued for thread tid alone (/proc/TID/status: SigPnd). */
static bool stop_queued(pid_t tid)
{
	char v[64];

	return status_field(tid, "SigPnd", v, sizeof(v)) &&
	       (strtoull(v, NULL, 16) & (1ull << (SIGSTOP - 1)));
}

/*
 * Held threads (hold_all) whose own hold is still to come: the hook (the
 * unwinder's, a re-arm's, an exec's) wrote its request, then queued a
 * SIGSTOP for the thread, and our interrupt stop was reported first.  Let
 * go like that, the thread takes that SIGSTOP untraced: a group stop of its
 * whole process, with nobody to end it (a throwthreads left stopped, three
 * threads at the unwinder, after its bpfprof was killed: test_exceptions'
 * kill test, 1 run in 10).  So each is resumed until it reports that
 * SIGSTOP (before it runs an instruction of its own), served like any
 * (on_status), which leaves it held.  A request with no SIGSTOP queued
 * (a SIGCONT discarded it) is dropped.
 */
static void serve_pending_holds(void)
{
	uint64_t end = now_ms() + HOLD_TIMEOUT_MS;
	size_t i;

	for (;;) {
		bool pending = false;

		for (i = 0; i < K.n; i++) {
			struct kthread *kt = &K.v[i];
			__u32 key = kt->tid;
			struct bp_hold h;

			if (bpf_map_lookup_elem(K.holds_fd, &key, &h))
				continue;
			if (!stop_queued(kt->tid)) {
				if (kt->stopped)
					bpf_map_delete_elem(K.holds_fd, &key);
				continue;
			}
			pending = true;
			if (kt->stopped && !kt->listen)
				resume(kt);
		}
		if (!pending || now_ms() >= end)
			return;
		reap(false);
		usleep(200);
	}
}

/* Every armed slot of every held thread back to its original address. */
static void restore_everything(void)
{
	pid_t *done = NULL;
	size_t ndone = 0, i, j;

	for (i = 0; i < K.n; i++) {
		bool seen = false;

		for (j = 0; j < ndone; j++)
			seen |= done[j] == K.v[i].pid;
		if (seen)
			continue;
		done = xrealloc(done, (ndone + 1) * sizeof(*done));
		done[ndone++] = K.v[i].pid;
		fix_slots(0, K.v[i].pid, FIX_RESTORE, 0);
	}
	free(done);
}

static void detach_all(void)
{
	size_t i;

	for (i = 0; i < K.n; i++) {
		struct kthread *kt = &K.v[i];
		__u32 key = kt->tid;

		bpf_map_delete_elem(K.holds_fd, &key);
		/* a thread in a group stop goes back to it; a pending signal goes on */
		ptrace(PTRACE_DETACH, kt->tid, 0, (void *)(long)(kt->stopped ? kt->sig : 0));
	}
	K.n = 0;
}

/*
 * The loader has probed pid's new image.  Its record can come before we
 * saw the stop (the exec'ing thread, the leader now, asked for it in the
 * `holds` map): then wait for that stop, so that it is never held for good.
 */
static int release_exec(pid_t pid)
{
	uint64_t end = now_ms() + HOLD_TIMEOUT_MS;
	__u32 key = pid;
	struct bp_hold h;
	size_t i;

	for (;;) {
		int found = 0;

		reap(false);
		for (i = 0; i < K.n; i++)
			if (K.v[i].pid == pid && K.v[i].exec_held) {
				K.v[i].exec_held = false;
				found++;
				if (!K.holding)
					resume(&K.v[i]);
			}
		if (found || now_ms() >= end)
			return found;
		if (bpf_map_lookup_elem(K.holds_fd, &key, &h) || h.kind != BP_HOLD_EXEC)
			return 0;	/* no stop coming: not ours (a SIGSTOP for the loader) */
		usleep(100);
	}
}

/*
 * Continues the processes stopped whole at an exec or a dlopen that bpfprof
 * did not continue itself (the sig_stops map), and forgets them.
 */
static void continue_stopped(void)
{
	__u32 key, next, *keys = NULL;
	size_t n = 0, i;
	void *prev = NULL;

	while (!bpf_map_get_next_key(K.stops_fd, prev, &next)) {
		keys = xrealloc(keys, (n + 1) * sizeof(*keys));
		keys[n++] = next;
		key = next;
		prev = &key;
	}
	for (i = 0; i < n; i++) {
		/*
		 * Through a pidfd, and only if the stop is still listed once we
		 * hold it: the entry goes when its process dies (bpf/trace.bpf.c),
		 * before the pid can be another process's (issue 27).
		 */
		int fd = pidfd_of((pid_t)keys[i]);
		__u64 ts;

		/*
		 * The entry goes before the SIGCONT: once continued, the process
		 * may stop again at once and list itself anew, an entry that must
		 * stay for the next round of this loop.
		 */
		if (fd < 0) {
			bpf_map_delete_elem(K.stops_fd, &keys[i]);
			continue;
		}
		if (!bpf_map_lookup_elem(K.stops_fd, &keys[i], &ts)) {
			bpf_map_delete_elem(K.stops_fd, &keys[i]);
			pidfd_signal(fd, SIGCONT);
		}
		close(fd);
	}
	free(keys);
}

/*
 * bpfprof died (parent) or is done (0): nothing may be left held or armed.
 *
 * A dead bpfprof's links outlive it in bpfprof-fds (base/fdshare.h), which
 * shares its table of descriptors: once bpfprof is gone, bpfprof-fds
 * closes them all at once (their probes go at the start of each close),
 * closes every other descriptor (our socket: we are told here), and ends
 * once the last close has waited out the uprobes' grace periods -- seconds
 * under load, as long as any thread on the machine keeps a return probe
 * pending while it calls on.  Until then a return probe can still arm a
 * frame, so we go on serving: the unwinder's stops (our copies of its hook
 * links keep it until we end), and the processes held at an exec or a
 * dlopen, continued at once and again while the dying links still stop new
 * ones.  Only once bpfprof and bpfprof-fds are both gone (with no
 * bpfprof-fds, bpfprof's own exit releases the links, last in, first out,
 * after our socket) are the threads held, every return address put back
 * and the threads let go: no return probe can arm one again.  The unwinder
 * hooks go last, with us.
 */
/*
 * bpfprof has no thread left, nor bpfprof-fds: the links are gone.  Not
 * getppid(): a thread of bpfprof's that has passed its exit is no parent
 * to reparent to, so we are given to init as soon as the thread that
 * forked us exits, while another may still be releasing the last links
 * (the descriptors go with the last thread to drop the table): continued
 * then, a process met a link still there at its next dlopen and stayed
 * stopped (test_dlfollow's kill test, 2 runs in 12).  A pidfd polls
 * readable once the whole group exited (bpfprof-fds's last close thread).
 */
static bool parent_gone(pid_t parent)
{
	struct pollfd p = { .fd = K.parent_fd, .events = POLLIN };
	struct pollfd q = { .fd = K.sharer_fd, .events = POLLIN };
	bool sharer_gone = K.sharer_fd < 0 || poll(&q, 1, 0) > 0;

	if (K.parent_fd < 0)
		return getppid() != parent && sharer_gone;
	return poll(&p, 1, 0) > 0 && sharer_gone;
}

static void finish(pid_t parent)
{
	uint64_t end = now_ms() + DEATH_WAIT_MS;

	for (;;) {
		size_t i;

		reap(false);	/* the unwinder's stops are still served */
		for (i = 0; i < K.n; i++)
			if (K.v[i].exec_held) {
				K.v[i].exec_held = false;
				resume(&K.v[i]);
			}
		continue_stopped();
		if (!parent || parent_gone(parent) || now_ms() >= end)
			break;
		usleep(2000);
	}
	hold_all();
	serve_pending_holds();
	restore_everything();
	detach_all();
	continue_stopped();
	if (parent) {
		/* a hook that ran while bpfprof's links went may stop one more */
		usleep(20000);
		continue_stopped();
	}
}

static void keeper_main(int sock, pid_t parent)
{
	struct pollfd pfd[2];
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	pfd[0].fd = sock;
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	for (;;) {
		struct signalfd_siginfo si;
		struct kreply rep = { 0 };
		struct kmsg m;
		ssize_t r;

		if (poll(pfd, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 1) < 0 && errno != EINTR)
			break;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == sizeof(si))
			;
		reap(false);
		if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(sock, &m, sizeof(m), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != sizeof(m)) {
			/* bpfprof died (or closed without saying goodbye) */
			finish(parent);
			return;
		}
		switch (m.op) {
		case KOP_SEIZE:
		case KOP_SEIZE_HOLD:
			rep.ret = seize(m.pid, m.op == KOP_SEIZE_HOLD);
			break;
		case KOP_HOLD:
			hold_all();
			break;
		case KOP_RELEASE:
			release_all();
			break;
		case KOP_RELEASE_EXEC:
			rep.ret = release_exec(m.pid);
			break;
		case KOP_END:
			finish(0);
			rep.restored = K.restored;
			rep.failed = K.failed;
			send(sock, &rep, sizeof(rep), MSG_NOSIGNAL);
			return;
		default:
			rep.ret = -EINVAL;
		}
		rep.restored = K.restored;
		rep.failed = K.failed;
		if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep)) {
			finish(parent);
			return;
		}
	}
	finish(parent);
}

void keeper_run(int sock, pid_t parent, struct trace_bpf *skel, bool follow_forks)
{
	memset(&K, 0, sizeof(K));
	K.skel = skel;
	K.holds_fd = bpf_map__fd(skel->maps.holds);
	K.stops_fd = bpf_map__fd(skel->maps.sig_stops);
	K.parent_fd = getppid() == parent ? pidfd_of(parent) : -1;
	K.sharer_fd = fdshare__pid() > 0 ? pidfd_of(fdshare__pid()) : -1;
	K.options = PTRACE_O_TRACECLONE |
		    (follow_forks ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK : 0);
	keeper_main(sock, parent);
}
