/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * forever: runs until killed (the Ctrl-C / SIGINT test).
 *
 * Guaranteed facts: main loops forever calling beat() and then sleeping
 * 1 ms (usleep(1000)) between calls, so beat is called about 1000 times a
 * second on an idle machine (fewer on a busy one: a voluntary context switch
 * per call says how many) and main never returns.  Arguments are
 * ignored: the tests pass a unique token so they can find this process with
 * pgrep -f.  Prints nothing.  Default signal dispositions: SIGINT/SIGTERM
 * kill it.
 */
#include <unistd.h>
#include "progs.h"

volatile unsigned long sink;

TRACED void beat(void)
{
	sink++;
}

int main(void)
{
	for (;;) {
		beat();
		usleep(1000);
	}
}
