/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * execfan: short processes of one file, one after the other, each with a
 * hot tiny function: the overhead governor's decision about the file must
 * hold in every process that maps it, those started after it too.
 *
 * Usage: execfan [NCHILD [NTINY]]     (defaults 12, 20000; 1 <= NCHILD <= 100)
 *
 * Guaranteed facts:
 *   - The parent calls spawn(i) once for each i in 0..NCHILD-1, in order;
 *     spawn(i) forks a child that execs this program's own file
 *     (/proc/self/exe) as "execfan child I NTINY", and waits for it to
 *     exit before returning.  So the children run one after the other,
 *     never two at once, each a new image of the same file.
 *   - Child i calls child_main() once, which calls coarse() exactly twice;
 *     each coarse() call calls tiny() exactly NTINY times and nothing else
 *     of the source.  tiny() is a leaf of a few instructions.
 *   - Each child prints one line before exiting 0:
 *       "execfan: child=I pid=P coarse=2 tiny=T"   (T = 2 * NTINY)
 *   - The parent prints, last: "execfan: children=N failed=F" (F the
 *     children that did not exit 0) and exits 0 when F is 0, else 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

static long ntiny = 20000;
static unsigned long coarse_calls, tiny_calls;

TRACED void tiny(void)
{
	sink++;
}

TRACED void coarse(void)
{
	long i;

	for (i = 0; i < ntiny; i++)
		tiny();
	tiny_calls += (unsigned long)ntiny;
	coarse_calls++;
}

TRACED void child_main(void)
{
	coarse();
	coarse();
}

/* Returns 0 when the child exited 0. */
TRACED int spawn(int i)
{
	char si[16], sn[32];
	int status;
	pid_t pid;

	snprintf(si, sizeof(si), "%d", i);
	snprintf(sn, sizeof(sn), "%ld", ntiny);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execl("/proc/self/exe", "execfan", "child", si, sn, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int nchild = 12, failed = 0, i;

	if (argc == 4 && !strcmp(argv[1], "child")) {
		ntiny = atol(argv[3]);
		child_main();
		printf("execfan: child=%s pid=%d coarse=%lu tiny=%lu\n", argv[2], (int)getpid(),
		       coarse_calls, tiny_calls);
		return 0;
	}
	if (argc > 1)
		nchild = atoi(argv[1]);
	if (argc > 2)
		ntiny = atol(argv[2]);
	if (nchild < 1 || nchild > 100 || ntiny < 1) {
		fprintf(stderr, "usage: execfan [NCHILD [NTINY]]\n");
		return 2;
	}
	for (i = 0; i < nchild; i++)
		failed += spawn(i) != 0;
	printf("execfan: children=%d failed=%d\n", nchild, failed);
	return failed ? 1 : 0;
}
