// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Descriptors closed in a child process (away.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "base/away.h"

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* In the child of a threaded process: system calls only, no allocation. */
static void __attribute__((noreturn)) hold_then_close(const int *keep, size_t n, int go)
{
	unsigned int from = 0;
	size_t i;

	/* everything else goes at once: the guard's socket, the output, pipes */
	for (i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from)
			close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range(from, ~0U, 0);
	away__wait_go(go);
	_exit(0);	/* the held descriptors are closed here, the slow way */
}

int away__start(struct away *a, const int *fds, size_t n)
{
	int go[2], *keep, err;
	size_t i;
	pid_t pid;

	a->pid = -1;
	a->go = -1;
	a->pidfd = -1;
	keep = malloc((n + 1) * sizeof(*keep));
	if (!keep)
		return -ENOMEM;
	err = away__go_pipe(go);
	if (err) {
		free(keep);
		return err;
	}
	for (i = 0; i < n; i++)
		keep[i] = fds[i];
	keep[n] = go[0];
	qsort(keep, n + 1, sizeof(*keep), cmp_int);
	pid = away__fork(go);
	if (pid == 0) {
		prctl(PR_SET_NAME, "bpfprof-release");
		signal(SIGINT, SIG_IGN);	/* a Ctrl-C on the terminal is for bpfprof */
		hold_then_close(keep, n + 1, go[0]);
	}
	free(keep);
	if (pid < 0)
		return pid;
	a->pid = pid;
	a->go = go[1];
	a->pidfd = syscall(SYS_pidfd_open, pid, 0);	/* -1: away__wait blocks instead */
	return 0;
}

int away__go_pipe(int go[2])
{
	return pipe2(go, O_CLOEXEC) ? -errno : 0;
}

pid_t away__fork(int go[2])
{
	pid_t pid = fork();
	int err = -errno;

	if (pid == 0) {
		close(go[1]);
		return 0;
	}
	close(go[0]);
	if (pid < 0) {
		close(go[1]);
		return err;
	}
	return pid;
}

void away__wait_go(int go)
{
	char c;

	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	close(go);
}

void away__finish(struct away *a)
{
	if (a->go >= 0)
		close(a->go);
	a->go = -1;
}

int away__wait(struct away *a, int timeout_ms)
{
	struct pollfd p = { .fd = a->pidfd, .events = POLLIN };
	int r;

	if (a->pid <= 0)
		return 0;
	if (a->pidfd >= 0) {
		do
			r = poll(&p, 1, timeout_ms);
		while (r < 0 && errno == EINTR);
		if (r == 0)
			return -ETIMEDOUT;
	}
	/* done, or no pidfd: reap it (capture__done's waitpid(-1) may have) */
	while (waitpid(a->pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (a->pidfd >= 0)
		close(a->pidfd);
	a->pidfd = -1;
	a->pid = -1;
	return 0;
}

void away__leave(struct away *a)
{
	if (a->pidfd >= 0)
		close(a->pidfd);
	a->pidfd = -1;
	a->pid = -1;
}
