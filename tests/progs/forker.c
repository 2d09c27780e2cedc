/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * forker: a service that starts and reaps short-lived processes, for the
 * memory of a long `bpfprof serve`.
 *
 * Usage: forker
 *
 * Guaranteed facts:
 *   - First prints "forker: pid=PID" and a newline to stdout and flushes it.
 *   - Then reads lines from stdin until end of file.  For each line "N" it
 *     runs N children one after the other: spawn() forks, the child calls
 *     child_work() exactly 3 times and _exit(0)s, the parent waits for it
 *     (waitpid) before the next; then it prints "forker: done N" and flushes.
 *     So when "done" is printed, every child of that line has exited and been
 *     reaped.  A child runs no other function of the source.
 *   - At end of file it exits 0.  Single thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void child_work(int i)
{
	sink += (unsigned long)i;
}

TRACED int spawn(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			child_work(i);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return 0;
}

int main(void)
{
	char line[64];

	printf("forker: pid=%d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		long n = atol(line);

		for (long i = 0; i < n; i++)
			if (spawn()) {
				perror("forker: fork");
				return 1;
			}
		printf("forker: done %ld\n", n);
		fflush(stdout);
	}
	return 0;
}
