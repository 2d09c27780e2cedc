// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * execer PROG [ARGS...]: calls before_exec() once, then execs PROG (same
 * pid).  With PROG = tests/progs/calltree, a recording that follows exec
 * holds: before_exec 1 call (unfinished: exec ended it), then every
 * calltree fact (main 1, run 1, parse 3, compute 5, leaf_add 20,
 * leaf_mul 10, fib 177, slow_io 1), all in the same pid.
 */
#include <stdio.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void before_exec(char **argv)
{
	sink++;
	execv(argv[0], argv);
	perror("execv");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: execer PROG [ARGS...]\n");
		return 2;
	}
	before_exec(argv + 1);
	return 127;
}
