// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The keeper (see keeper.h): bpfprof's ptrace helper for C++ targets.
 *
 * Why a separate process: the stops it serves must be served even when
 * bpfprof is gone (a thread waiting for its repair would otherwise wait
 * forever, or run into a trampoline), ptrace belongs to one tracer, and
 * bpfprof's own waitpid(-1) for its launched command must not see ptrace
 * events.  It is small, ignores the terminal's signals, has its own
 * session, and tells the OOM killer to take something else.
 *
 * This file is bpfprof's side: the fork, the requests (internal.h); the
 * keeper's process is keeper_proc.c.
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
#include "base/pidfd.h"
#include "keeper.h"
#include "internal.h"

struct keeper {
	pid_t pid;
	int sock;
};
/* Closes every descriptor but those in keep[] (and 0-2, pointed at /dev/null). */
static void close_others(const int *keep, size_t nkeep)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int dfd = d ? dirfd(d) : -1;

	while (d && (de = readdir(d))) {
		int fd = atoi(de->d_name);
		bool k = fd <= 2 || fd == dfd || de->d_name[0] == '.';
		size_t i;

		for (i = 0; i < nkeep; i++)
			k |= keep[i] == fd;
		if (!k)
			close(fd);
	}
	if (d)
		closedir(d);
	stdio_to_null();
}

/*
 * fd moved to the top of the descriptor table.  When bpfprof dies, do_exit
 * queues the release of every descriptor in ascending order and runs the
 * queue last in, first out (task_work_run on the exit path): the highest
 * descriptor is released first, before any link opened since, whose release
 * waits for grace periods.  The keeper then sees its end of file at once.
 */
static int high_fd(int fd)
{
	struct rlimit rl;
	long from = 65535;
	int hi;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    (long)rl.rlim_cur - 8 < from)
		from = (long)rl.rlim_cur - 8;	/* the guard and the keeper: both fit */
	if (from <= fd)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)from);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

int keeper__start(struct trace_bpf *skel, const char *name, const int *keep_fds, size_t nkeep,
		  bool follow_forks, struct keeper **out)
{
	struct keeper *k;
	pid_t parent = getpid();
	int sv[2], err;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	/*
	 * No fflush(NULL) first: it would write an output file's buffer outside
	 * its exporter's error checks.  The child never flushes what it inherits
	 * (its 0-2 go to /dev/null, it ends with _exit).
	 */
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		int *keep = xcalloc(nkeep + 4, sizeof(*keep));
		int fd;

		if (nkeep)
			memcpy(keep, keep_fds, nkeep * sizeof(*keep));
		keep[nkeep] = sv[1];
		keep[nkeep + 1] = bpf_map__fd(skel->maps.holds);
		keep[nkeep + 2] = bpf_program__fd(skel->progs.unwind_slots);
		keep[nkeep + 3] = bpf_map__fd(skel->maps.sig_stops);
		close_others(keep, nkeep + 4);
		setsid();	/* out of the terminal's and the caller's process group */
		prctl(PR_SET_NAME, name);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		signal(SIGTSTP, SIG_IGN);
		fd = open("/proc/self/oom_score_adj", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "-1000", 5) < 0) {
				/* not allowed: the default score, still far below bpfprof's */
			}
			close(fd);
		}
		keeper_run(sv[1], parent, skel, follow_forks);
		_exit(0);	/* never bpfprof's atexit handlers */
	}
	close(sv[1]);
	k = xcalloc(1, sizeof(*k));
	k->pid = pid;
	k->sock = high_fd(sv[0]);
	*out = k;
	return 0;
}

pid_t keeper__pid(const struct keeper *k)
{
	return k ? k->pid : 0;
}

/*
 * One request and its reply at a time: the command's thread, the drain
 * thread and a hold's watchdog (capture/holdlimit.c) may all ask.
 */
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;

static int call(struct keeper *k, int op, pid_t pid, struct kreply *rep)
{
	struct kmsg m = { .op = op, .pid = pid };
	struct kreply dummy;
	int ret;

	if (!rep)
		rep = &dummy;
	pthread_mutex_lock(&call_lock);
	if (send(k->sock, &m, sizeof(m), MSG_NOSIGNAL) != sizeof(m)) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		ssize_t r = recv(k->sock, rep, sizeof(*rep), 0);

		if (r == sizeof(*rep)) {
			ret = (int)rep->ret;
			break;
		}
		if (r < 0 && errno == EINTR)
			continue;
		ret = r < 0 ? -errno : -EPIPE;
		break;
	}
out:
	pthread_mutex_unlock(&call_lock);
	return ret;
}

int keeper__seize(struct keeper *k, pid_t pid, bool hold)
{
	return call(k, hold ? KOP_SEIZE_HOLD : KOP_SEIZE, pid, NULL);
}

int keeper__hold(struct keeper *k)
{
	return call(k, KOP_HOLD, 0, NULL);
}

int keeper__release(struct keeper *k)
{
	return call(k, KOP_RELEASE, 0, NULL);
}

int keeper__release_exec(struct keeper *k, pid_t pid)
{
	return call(k, KOP_RELEASE_EXEC, pid, NULL);
}

void keeper__end(struct keeper *k, uint64_t *restored, uint64_t *failed)
{
	struct kreply rep = { 0 };

	if (!k)
		return;
	if (!call(k, KOP_END, 0, &rep)) {
		*restored += rep.restored;
		*failed += rep.failed;
	}
	close(k->sock);
	waitpid(k->pid, NULL, 0);
	free(k);
}

int keeper__fd(const struct keeper *k)
{
	return k ? k->sock : -1;
}

void keeper__disown(struct keeper *k)
{
	if (!k)
		return;
	close(k->sock);
	free(k);
}
