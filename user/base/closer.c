// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Descriptors closed one per thread, in a process away from bpfprof (closer.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "base/closer.h"
#include "base/util.h"

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
		return -2;	/* closer__given: bpfprof's copy of the last one is closed */
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	return fd;
}

/*
 * Every descriptor is closed as soon as it comes, each by a thread of its
 * own: the removal of a link's probes is at the start of its close, the
 * grace period after it.  Once a queue held them (at most 32 closes at once,
 * in processes forked per descriptor): the links waiting their turn kept
 * their probes, a grace period lasts as long as a traced process runs (its
 * pending return probes re-arm the kernel's lease), so a cc1 paid the
 * functions dropped from it until it ended, and the closer's exit released
 * the queued links one grace period at a time (4,571 links of cc1 left
 * active for every compiler on the machine: an untraced gcc of 5 lines
 * took 41 s instead of 0.3 s).  Thousands of closes at once cost one grace
 * period; threads take no dup_mmap_sem (a fork per close did: 2,789 forks in D
 * held every fork on the machine).  A descriptor no thread can be made for
 * waits for one that ends.
 */
#define QUEUE_MAX	4096
#define CLOSE_STACK	(64 * 1024)

static int wake_wr = -1;	/* the self-pipe's write end: a close thread ended */
static atomic_int live;		/* close threads not ended */

static void *close_one(void *arg)
{
	char c = 0;

	close((int)(intptr_t)arg);	/* the probes go, then the wait */
	atomic_fetch_sub(&live, 1);
	if (write(wake_wr, &c, 1) < 0) {
		/* full: a wake-up is pending already */
	}
	return NULL;
}

/* A thread that closes fd; 0 or -1 (none could be made: fd is still ours). */
static int close_away(pthread_attr_t *attr, int fd)
{
	pthread_t t;

	atomic_fetch_add(&live, 1);
	if (!pthread_create(&t, attr, close_one, (void *)(intptr_t)fd))
		return 0;
	atomic_fetch_sub(&live, 1);
	return -1;
}

/* The closer (forked from a threaded process: glibc's fork leaves malloc and threads usable). */
static void __attribute__((noreturn)) serve(int sock)
{
	/* [head, given): to close; [given, tail): bpfprof still has its copy */
	static int queue[QUEUE_MAX];
	size_t head = 0, given = 0, tail = 0;
	int wake[2], eof = 0, fd;
	pthread_attr_t attr;
	char ready = 1, buf[64];

	close_range(0, (unsigned int)sock - 1, 0);
	close_range((unsigned int)sock + 1, ~0U, 0);
	signal(SIGINT, SIG_IGN);	/* a Ctrl-C on the terminal is for bpfprof */
	signal(SIGPIPE, SIG_IGN);
	/* the descriptors given are ours until their thread closes them */
	fd_limit_raise(0);
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) || pthread_attr_init(&attr))
		_exit(1);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, CLOSE_STACK);
	wake_wr = wake[1];
	if (write(sock, &ready, 1) != 1)
		_exit(1);
	for (;;) {
		struct pollfd p[2] = { { .fd = wake[0], .events = POLLIN },
				       { .fd = sock, .events = POLLIN } };

		while (head < given && !close_away(&attr, queue[head % QUEUE_MAX]))
			head++;
		/* the end once every close is done (not exit(): bpfprof's atexit handlers are not ours) */
		if (eof && head == tail && !atomic_load(&live))
			_exit(0);
		/* a full queue takes no more: bpfprof's next give waits */
		if (poll(p, eof || tail - head == QUEUE_MAX ? 1 : 2, -1) < 0)
			continue;
		if (p[0].revents)
			while (read(wake[0], buf, sizeof(buf)) > 0)
				;
		if (!eof && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			fd = recv_fd(sock);
			if (fd == -1) {
				eof = 1;	/* bpfprof closed its end (or ended): its copies are gone */
				given = tail;
			} else if (fd == -2 && given < tail) {
				given++;
			} else if (fd >= 0) {
				queue[tail++ % QUEUE_MAX] = fd;
			}
		}
	}
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

void closer__given(struct closer *c)
{
	char byte = 1;
	ssize_t r;

	if (c->sock < 0)
		return;
	do
		r = send(c->sock, &byte, 1, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	/* lost (the closer is gone): it closed nothing early, its copies went with it */
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
