// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Descriptors closed one per process, away from bpfprof (closer.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
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

/* The closer: system calls only (forked from a threaded process). */
static void __attribute__((noreturn)) serve(int sock)
{
	char ready = 1;
	int fd;

	close_range(0, (unsigned int)sock - 1, 0);
	close_range((unsigned int)sock + 1, ~0U, 0);
	signal(SIGCHLD, SIG_IGN);	/* the per-descriptor processes reap themselves */
	signal(SIGINT, SIG_IGN);	/* a Ctrl-C on the terminal is for bpfprof */
	signal(SIGPIPE, SIG_IGN);
	if (write(sock, &ready, 1) != 1)
		_exit(1);
	while ((fd = recv_fd(sock)) != -1) {
		int after[2];
		char c;

		if (fd < 0)
			continue;
		if (pipe2(after, O_CLOEXEC)) {
			close(fd);	/* the slow way, here */
			continue;
		}
		/* it holds this descriptor alone (the socket is not its own) */
		if (fork() == 0) {
			close(sock);
			close(after[1]);
			/* after ours is gone: its close is the last one */
			while (read(after[0], &c, 1) < 0 && errno == EINTR)
				;
			close(fd);	/* the probes go, then the wait */
			_exit(0);
		}
		close(after[0]);
		close(fd);	/* not the last: the child's copy is */
		close(after[1]);
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
