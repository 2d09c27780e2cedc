/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * procfan: many processes, each with a deep call stack, for the timeline of
 * a multi-process recording (`view`).
 *
 * Usage: procfan [N [D]]     (defaults N = 64, D = 40; 1 <= N <= 1000, 1 <= D <= 60)
 *
 * Guaranteed facts:
 *   - The parent calls fan_out() once, which forks N children one after the
 *     other (all alive at once: none is waited for before the last fork), then
 *     waits for every one (waitpid) and returns.  The parent calls no other
 *     function of the source.
 *   - Child i (0 <= i < N) calls child_main(i) once, which calls descend(D)
 *     once; descend(d) calls leaf() twice and then, when d > 1, descend(d - 1).
 *     So a child makes exactly 1 child_main, D descend (nested D deep under
 *     child_main) and 2 * D leaf calls, then _exit(0)s.
 *   - Exits 0 when every child exited 0, 1 otherwise.  Prints nothing.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void leaf(int d)
{
	sink += (unsigned long)d;
}

TRACED void descend(int d)
{
	leaf(d);
	leaf(d);
	if (d > 1)
		descend(d - 1);
}

TRACED void child_main(int i, int depth)
{
	sink += (unsigned long)i;
	descend(depth);
}

TRACED int fan_out(int n, int depth)
{
	int i, bad = 0, status;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_main(i, depth);
			_exit(0);
		}
	}
	for (i = 0; i < n; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 64, depth = argc > 2 ? atoi(argv[2]) : 40;

	if (n < 1 || n > 1000 || depth < 1 || depth > 60)
		return 2;
	return fan_out(n, depth);
}
