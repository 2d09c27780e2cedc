// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fdshare.h"
#include "pidfd.h"

#define SHARER_STACK	(64 * 1024)

static pid_t owner, sharer_pid;

/* Whether fd is a BPF link ("anon_inode:bpf_link"). */
static int is_link(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	return !strcmp(target, "anon_inode:bpf_link");
}

/* Every descriptor but the links, read from /proc/self/fd with no allocation. */
static void close_all_but_links(void)
{
	char buf[4096];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n, off;

	if (dir < 0)
		return;
	while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			char *end;
			long fd = strtol(d->name, &end, 10);

			off += d->reclen;
			if (*end || end == d->name || fd == dir || is_link((int)fd))
				continue;
			close((int)fd);
		}
	}
	close(dir);
}

/* The sharer: no allocation, no lock (cloned from a process whose other threads may hold them). */
static int sharer(void *arg)
{
	struct pollfd p = { .events = POLLIN };
	int sig;

	(void)arg;
	prctl(PR_SET_NAME, "bpfprof-fds");
	/* the terminal's and a session's signals are bpfprof's; this one ends with it */
	for (sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN);
	p.fd = pidfd_of(owner);
	/* owner gone already (our parent is another): its table is ours alone */
	if (p.fd >= 0 && getppid() == owner)
		while (poll(&p, 1, -1) < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR)))
			;
	close_all_but_links();
	_exit(0);
}

int fdshare__start(void)
{
	static char stack[SHARER_STACK] __attribute__((aligned(16)));
	pid_t pid;

	owner = getpid();
	pid = clone(sharer, stack + sizeof(stack), CLONE_FILES | SIGCHLD, NULL);
	if (pid < 0)
		return -errno;
	sharer_pid = pid;
	return 0;
}

pid_t fdshare__pid(void)
{
	return sharer_pid;
}
