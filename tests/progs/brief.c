/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * brief: a process gone long before the tracer has read its stacks.
 *
 * Guaranteed facts, one run: main forks one child, then calls
 * brief_block() once; brief_block reads one byte from a pipe (read(), in
 * libc).  The child writes that byte only once the parent is asleep in
 * that read: off the runqueue (/proc/PID/wchan names a kernel function;
 * it reads "0" while the task runs or waits for a CPU), in system call 0
 * (read) on that pipe (/proc/PID/syscall).  So the parent went off the CPU
 * inside brief_block's read at least once, whatever the machine's load.
 * Then the child exits, the parent reaps it and returns 0 at once.  The
 * child calls no function of brief's but main's fork path and its own
 * loop.  libc is mapped by the dynamic linker after the exec, as always.
 * Exits 3 (reason on stderr) if the pipe or the fork fails.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void brief_block(int fd)
{
	char c;

	sink++;
	if (read(fd, &c, 1) != 1)
		sink--;
}

/* Whether pid is asleep, off the runqueue, in read(fd). */
static int asleep_in_read(pid_t pid, int fd)
{
	char path[64], buf[256];
	long nr, arg;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%255s", buf);
	fclose(f);
	if (n != 1 || !strcmp(buf, "0"))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%ld %lx", &nr, &arg);
	fclose(f);
	return n == 2 && nr == 0 && arg == fd;
}

int main(void)
{
	struct timespec pause = { 0, 200 * 1000 };
	int p[2];
	pid_t child;

	if (pipe(p)) {
		perror("brief: pipe");
		return 3;
	}
	child = fork();
	if (child < 0) {
		perror("brief: fork");
		return 3;
	}
	if (!child) {
		while (!asleep_in_read(getppid(), p[0]))
			nanosleep(&pause, NULL);
		_exit(write(p[1], "x", 1) == 1 ? 0 : 1);
	}
	brief_block(p[0]);
	waitpid(child, NULL, 0);
	return 0;
}
