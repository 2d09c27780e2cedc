/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * miniserver: the shape of a server, for the overhead governor: an event
 * loop that calls a tiny function every turn, and a coarse request handler
 * that calls tiny helpers and does a long piece of work of its own; the
 * same loop runs in a forked child and in an exec'd one.
 *
 * Usage: miniserver [NREQ [NHELP [NLOOP [wait]]]]   (defaults 100, 5000, 5000)
 *
 * Guaranteed facts (per run):
 *   - Three processes run serve() once each: the first process ("main"), a
 *     child it forks ("fork"), and a child it forks that execs this same
 *     file with --child ("exec").  The main process starts both children
 *     before its own serve() and waits for both after it.
 *   - serve() runs NREQ requests; for each it calls tick() NLOOP times (the
 *     event loop's turns), then handle() once.  handle() calls parse_byte()
 *     NHELP times, then work() once.  work() is a loop of WORK_ITERS steps
 *     on a volatile and calls nothing: its calls last many times any probe's
 *     cost.  tick() and parse_byte() are leaves of a few instructions.  No
 *     other function of the source is called (main, serve, run_child once).
 *   - Each process prints one line when its serve() returned:
 *       "miniserver: role=R pid=P handle=H parse=A tick=T work=W"
 *     (H = W = NREQ, A = NREQ * NHELP, T = NREQ * NLOOP); main exits
 *     with 0 when both children exited with 0.
 *   - With "wait": the main process prints "miniserver: pid=P ready" and
 *     reads one line from stdin before it starts the children; after its
 *     own line it reads stdin to its end before exiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "progs.h"

#define WORK_ITERS	1000000

volatile unsigned long sink;

static long nreq = 100, nhelp = 5000, nloop = 5000;
static long handle_calls, parse_calls, tick_calls, work_calls;

TRACED void tick(void)
{
	sink++;
	tick_calls++;
}

TRACED void parse_byte(long i)
{
	sink += (unsigned long)i & 7;
	parse_calls++;
}

TRACED void work(void)
{
	volatile unsigned long acc = 0;
	long i;

	for (i = 0; i < WORK_ITERS; i++)
		acc += (unsigned long)i ^ sink;
	sink += acc & 1;
	work_calls++;
}

TRACED void handle(long r)
{
	long i;

	for (i = 0; i < nhelp; i++)
		parse_byte(i + r);
	work();
	handle_calls++;
}

TRACED void serve(const char *role)
{
	long r, j;

	for (r = 0; r < nreq; r++) {
		for (j = 0; j < nloop; j++)
			tick();
		handle(r);
	}
	printf("miniserver: role=%s pid=%d handle=%ld parse=%ld tick=%ld work=%ld\n", role,
	       (int)getpid(), handle_calls, parse_calls, tick_calls, work_calls);
	fflush(stdout);
}

TRACED pid_t run_child(char **argv, int exec_it)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("miniserver: fork");
		exit(1);
	}
	if (pid)
		return pid;
	if (exec_it) {
		char *args[] = { argv[0], "--child", argv[1], argv[2], argv[3], NULL };
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n <= 0) {
			perror("miniserver: readlink");
			_exit(1);
		}
		self[n] = 0;
		execv(self, args);
		perror("miniserver: exec");
		_exit(1);
	}
	serve("fork");
	_exit(0);
}

int main(int argc, char **argv)
{
	char a1[32], a2[32], a3[32], line[64];
	char *args[5] = { argv[0], a1, a2, a3, NULL };
	int wait_go = 0, st, i, ok = 1;
	pid_t kids[2];

	if (argc > 1 && !strcmp(argv[1], "--child")) {
		nreq = atol(argv[2]);
		nhelp = atol(argv[3]);
		nloop = atol(argv[4]);
		serve("exec");
		return 0;
	}
	if (argc > 1)
		nreq = atol(argv[1]);
	if (argc > 2)
		nhelp = atol(argv[2]);
	if (argc > 3)
		nloop = atol(argv[3]);
	wait_go = argc > 4 && !strcmp(argv[4], "wait");
	snprintf(a1, sizeof(a1), "%ld", nreq);
	snprintf(a2, sizeof(a2), "%ld", nhelp);
	snprintf(a3, sizeof(a3), "%ld", nloop);
	if (wait_go) {
		printf("miniserver: pid=%d ready\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	kids[0] = run_child(args, 0);
	kids[1] = run_child(args, 1);
	serve("main");
	for (i = 0; i < 2; i++)
		ok &= waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) && !WEXITSTATUS(st);
	if (wait_go)
		while (fgets(line, sizeof(line), stdin))
			;
	return ok ? 0 : 1;
}
