// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * throwloop: a long-running C++ target that keeps throwing exceptions
 * through traced frames (for `bpfprof attach`: the target must survive the
 * attach and keep running normally after it).
 *
 * Usage: throwloop [SECONDS] [TOKEN]
 *
 * The traced functions are extern "C" (plain names).  Guaranteed facts:
 *   - First prints "throwloop: pid=PID" (getpid()) to stdout and flushes it.
 *   - Then loops, about 1000 times a second: catcher(i) calls thrower(i),
 *     which throws std::runtime_error; catcher catches it and returns
 *     normally; then main sleeps usleep(1000).  So thrower never returns
 *     (each call is unwound by the exception) and catcher always returns.
 *     catcher and thrower are called equally often, from main / catcher only.
 *   - Without SECONDS (or 0) it runs until killed; with SECONDS > 0 it stops
 *     after that long and prints "throwloop: caught=N" (N = loop iterations,
 *     every one of which caught its exception), exits 0.  An exception that
 *     is not caught ends it in std::terminate (SIGABRT).
 *   - TOKEN is ignored (for pgrep -f).  Single thread; default dispositions.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <time.h>
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

extern "C" {

TRACED void thrower(int i)
{
	sink++;
	throw std::runtime_error("thrown");
	(void)i;
}

TRACED int catcher(int i)
{
	try {
		thrower(i);
	} catch (const std::runtime_error &) {
		sink++;
		return 1;
	}
	return 0;
}

}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 0, t0 = now_s();
	unsigned long caught = 0, n = 0;

	std::printf("throwloop: pid=%d\n", (int)getpid());
	std::fflush(stdout);
	for (int i = 0;; i++) {
		caught += catcher(i);
		n++;
		usleep(1000);
		if (secs > 0 && now_s() - t0 >= secs)
			break;
	}
	std::printf("throwloop: caught=%lu\n", caught == n ? caught : 0);
	return caught == n ? 0 : 1;
}
