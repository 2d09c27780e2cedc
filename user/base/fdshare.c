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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fdshare.h"
#include "pidfd.h"

#define SHARER_STACK	(64 * 1024)
#define CLOSE_STACK	(16 * 1024)	/* a close thread: clone's wrapper, one syscall */
#define LINKS_MAX	16384		/* more are left to the exit, one after the other */

static pid_t owner, sharer_pid;
static int links[LINKS_MAX];

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

/*
 * Calls fn(fd, arg) for every descriptor (but the directory's own), read
 * from /proc/self/fd with no allocation; returns how many.
 */
static size_t each_fd(void (*fn)(int fd, void *arg), void *arg)
{
	char buf[4096];
	int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t count = 0;
	long n, off;

	if (dir < 0)
		return 0;
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
			if (*end || end == d->name || fd == dir)
				continue;
			fn((int)fd, arg);
			count++;
		}
	}
	close(dir);
	return count;
}

static void note_link(int fd, void *arg)
{
	size_t *n = arg;

	if (*n < LINKS_MAX && is_link(fd))
		links[(*n)++] = fd;
}

/* A link just closed by a close thread reads as no link: closing it again is EBADF. */
static void close_unless_link(int fd, void *arg)
{
	(void)arg;
	if (!is_link(fd))
		close(fd);
}

/*
 * A close thread (same table, same memory): the close is the link's last,
 * which takes its probes out, then waits for the grace periods.  It returns
 * once both are done; clone's wrapper then ends the thread alone (exit, not
 * exit_group).  No errno is read (the thread shares the sharer's).
 */
static int close_thread(void *arg)
{
	syscall(SYS_close, (int)(intptr_t)arg);
	return 0;
}

/*
 * Every link closed at once, each by a thread of the sharer's own: a link's
 * probes go at the start of its close and the grace periods are waited for
 * after, so in one thread (or in the exit, which releases them one after the
 * other) every link waits for the grace periods of those before it with its
 * probes still in: a return probe left in kept arming the frames of every
 * process running the file -- a C++ one that threw through them ended in
 * std::terminate (test_exceptions' kill test, then the next untraced run).
 * A link no thread could be made for is left to the sharer's exit.
 */
static void close_links_at_once(size_t n)
{
	char *stacks;
	size_t i;

	if (!n)
		return;
	stacks = mmap(NULL, n * CLOSE_STACK, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (stacks == MAP_FAILED)
		return;
	for (i = 0; i < n; i++)
		clone(close_thread, stacks + (i + 1) * CLOSE_STACK,
		      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
			      CLONE_SYSVSEM,
		      (void *)(intptr_t)links[i]);
	/* the stacks stay: they go with the process */
}

/*
 * The sharer: no malloc, no lock (cloned from a process whose other threads
 * may hold them).  Once bpfprof is gone: its links closed at once, then
 * every other descriptor (pipes see their end, the keeper or guard its
 * socket's), then the sharer's first thread ends alone; the process ends
 * with its last close thread, once every link is gone (fdshare.h).
 */
static int sharer(void *arg)
{
	struct pollfd p = { .events = POLLIN };
	size_t n = 0;
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
	each_fd(note_link, &n);
	close_links_at_once(n);
	each_fd(close_unless_link, NULL);
	syscall(SYS_exit, 0);	/* this thread alone: the close threads go on */
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
