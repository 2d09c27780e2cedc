/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * coldfan: short processes of one file with many functions of which few are
 * ever called, like a compiler exec'd once per source file: every new
 * process pays for the breakpoints of every function probed on the file
 * (written at its exec), called or not.
 *
 * Usage: coldfan [NCHILD [NWORK]]     (defaults 30, 200; 1 <= NCHILD <= 200)
 *
 * Guaranteed facts:
 *   - The file defines 4096 functions cold_XYZ (X, Y, Z hexadecimal digits,
 *     "cold_000" to "cold_fff") that nothing ever calls.
 *   - The parent calls spawn(i) once for each i in 0..NCHILD-1, in order;
 *     spawn(i) forks a child that execs this program's own file
 *     (/proc/self/exe) as "coldfan child I NWORK", and waits for it to exit
 *     before returning: the children run one after the other.
 *   - Child i calls child_main() once, which calls work() exactly NWORK
 *     times; work() calls nothing of the source.  Nothing else of the
 *     source is called in a child.
 *   - Each child prints one line before exiting 0:
 *       "coldfan: child=I pid=P work=W"   (W = NWORK)
 *   - The parent prints, last: "coldfan: children=N failed=F" (F the
 *     children that did not exit 0) and exits 0 when F is 0, else 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

/* 4096 distinct functions (distinct bodies: no identical code folding) */
#define COLD(n)	TRACED void cold_##n(void) { sink += __COUNTER__; }
#define COLD16(p) COLD(p##0) COLD(p##1) COLD(p##2) COLD(p##3) COLD(p##4) COLD(p##5) \
	COLD(p##6) COLD(p##7) COLD(p##8) COLD(p##9) COLD(p##a) COLD(p##b) COLD(p##c) \
	COLD(p##d) COLD(p##e) COLD(p##f)
#define COLD256(p) COLD16(p##0) COLD16(p##1) COLD16(p##2) COLD16(p##3) COLD16(p##4) \
	COLD16(p##5) COLD16(p##6) COLD16(p##7) COLD16(p##8) COLD16(p##9) COLD16(p##a) \
	COLD16(p##b) COLD16(p##c) COLD16(p##d) COLD16(p##e) COLD16(p##f)
COLD256(0) COLD256(1) COLD256(2) COLD256(3) COLD256(4) COLD256(5) COLD256(6) COLD256(7)
COLD256(8) COLD256(9) COLD256(a) COLD256(b) COLD256(c) COLD256(d) COLD256(e) COLD256(f)

static long nwork = 200;
static unsigned long work_calls;

TRACED void work(void)
{
	int i;

	for (i = 0; i < 5000; i++)
		sink += (unsigned long)i;
	work_calls++;
}

TRACED void child_main(void)
{
	long i;

	for (i = 0; i < nwork; i++)
		work();
}

/* Returns 0 when the child exited 0. */
TRACED int spawn(int i)
{
	char si[16], sn[32];
	int status;
	pid_t pid;

	snprintf(si, sizeof(si), "%d", i);
	snprintf(sn, sizeof(sn), "%ld", nwork);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execl("/proc/self/exe", "coldfan", "child", si, sn, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int nchild = 30, failed = 0, i;

	if (argc == 4 && !strcmp(argv[1], "child")) {
		nwork = atol(argv[3]);
		child_main();
		printf("coldfan: child=%s pid=%d work=%lu\n", argv[2], (int)getpid(), work_calls);
		return 0;
	}
	if (argc > 1)
		nchild = atoi(argv[1]);
	if (argc > 2)
		nwork = atol(argv[2]);
	if (nchild < 1 || nchild > 200 || nwork < 1) {
		fprintf(stderr, "usage: coldfan [NCHILD [NWORK]]\n");
		return 2;
	}
	for (i = 0; i < nchild; i++)
		failed += spawn(i) != 0;
	printf("coldfan: children=%d failed=%d\n", nchild, failed);
	return failed ? 1 : 0;
}
