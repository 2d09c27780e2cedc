// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Descriptors closed one per process, away from bpfprof (closer.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "base/closer.h"

/* One descriptor per message, out of band of a byte. */
static int recv_fd(int sock)
{
	char byte, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	ssize_t r;
	int fd;

	do
		r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;	/* bpfprof closed its end: done */
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
		return -2;
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/*
 * At most CLOSERS_MAX closes run at once.  Every removal of probes takes the
 * kernel's dup_mmap_sem for writing, which every fork on the machine takes
 * for reading: thousands of closes at once (a governor dropping functions in
 * a make -j2's hundreds of processes: 2,789 processes seen) held up every
 * fork on the machine (load average 900).  The rest wait here, in order.
 */
#define CLOSERS_MAX	32
#define QUEUE_MAX	4096

static int child_wake = -1;	/* the self-pipe's write end */

static void on_child(int sig)
{
	char c = 0;
	int e = errno;

	(void)sig;
	if (write(child_wake, &c, 1) < 0) {
		/* full: a wake-up is pending already */
	}
	errno = e;
}

/* A process that holds fd alone and closes it; 0 or -1 (then closed here). */
static int close_away(int sock, int wake_rd, int fd)
{
	int after[2];
	pid_t pid;
	char c;

	if (pipe2(after, O_CLOEXEC)) {
		close(fd);	/* the slow way, here */
		return -1;
	}
	/* it holds this descriptor alone (the socket is not its own) */
	pid = fork();
	if (pid == 0) {
		close(sock);
		close(wake_rd);
		close(child_wake);
		close(after[1]);
		/* after ours is gone: its close is the last one */
		while (read(after[0], &c, 1) < 0 && errno == EINTR)
			;
		close(fd);	/* the probes go, then the wait */
		_exit(0);
	}
	close(after[0]);
	if (pid < 0) {
		close(after[1]);
		close(fd);
		return -1;
	}
	close(fd);	/* not the last: the child's copy is */
	close(after[1]);
	return 0;
}

/* The closer: system calls only (forked from a threaded process). */
static void __attribute__((noreturn)) serve(int sock)
{
	static int queue[QUEUE_MAX];
	size_t head = 0, tail = 0;
	int wake[2], live = 0, eof = 0, fd;
	struct rlimit rl;
	char ready = 1, buf[64];

	close_range(0, (unsigned int)sock - 1, 0);
	close_range((unsigned int)sock + 1, ~0U, 0);
	signal(SIGINT, SIG_IGN);	/* a Ctrl-C on the terminal is for bpfprof */
	signal(SIGPIPE, SIG_IGN);
	/* the descriptors waiting their turn are ours meanwhile */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK))
		_exit(1);
	child_wake = wake[1];
	signal(SIGCHLD, on_child);
	if (write(sock, &ready, 1) != 1)
		_exit(1);
	for (;;) {
		struct pollfd p[2] = { { .fd = wake[0], .events = POLLIN },
				       { .fd = sock, .events = POLLIN } };

		while (waitpid(-1, NULL, WNOHANG) > 0)
			live--;
		while (live < CLOSERS_MAX && head < tail)
			if (!close_away(sock, wake[0], queue[head++ % QUEUE_MAX]))
				live++;
		if (eof && head == tail)
			break;	/* those still closing end alone */
		/* a full queue takes no more: bpfprof's next give waits */
		if (poll(p, eof || tail - head == QUEUE_MAX ? 1 : 2, -1) < 0)
			continue;	/* EINTR: the SIGCHLD */
		if (p[0].revents)
			while (read(wake[0], buf, sizeof(buf)) > 0)
				;
		if (!eof && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			fd = recv_fd(sock);
			if (fd == -1)
				eof = 1;	/* bpfprof closed its end: done */
			else if (fd >= 0)
				queue[tail++ % QUEUE_MAX] = fd;
		}
	}
	_exit(0);
}

int closer__start(struct closer *c)
{
	int sv[2], err;
	char ready;
	pid_t pid;

	c->pid = -1;
	c->sock = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "bpfprof-closer");
		serve(sv[1]);
	}
	err = pid < 0 ? -errno : 0;
	close(sv[1]);
	/* its copies of our descriptors are gone before any of ours is closed */
	if (!err && read(sv[0], &ready, 1) != 1)
		err = -EPIPE;
	if (err) {
		close(sv[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return err;
	}
	c->pid = pid;
	c->sock = sv[0];
	return 0;
}

int closer__give(struct closer *c, int fd)
{
	char byte = 0, buf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = buf,
			    .msg_controllen = sizeof(buf) };
	struct cmsghdr *cm;
	ssize_t r;

	if (c->sock < 0 || fd < 0)
		return -EBADF;
	memset(buf, 0, sizeof(buf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	do
		r = sendmsg(c->sock, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -(r < 0 ? errno : EIO);
}

void closer__stop(struct closer *c)
{
	if (c->sock >= 0)
		close(c->sock);
	c->sock = -1;
	/*
	 * Not waited for: its forks can wait long for the kernel's dup_mmap_sem
	 * (every uprobe removal on the machine takes it), and bpfprof's exit
	 * must not.  It ends at the EOF; reaped by capture's waitpid(-1) or init.
	 */
	if (c->pid > 0)
		waitpid(c->pid, NULL, WNOHANG);
	c->pid = -1;
}
