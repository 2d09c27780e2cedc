/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sighandler: traced signal handlers, on the thread's stack and on an
 * alternate signal stack.
 *
 * Guaranteed facts, one run, one thread:
 *   Phase 1 (ordinary stack):
 *   - main calls victim() 3 times; victim calls raise(SIGUSR1) once.
 *   - The SIGUSR1 handler on_signal (installed with sigaction, no flags) runs
 *     synchronously inside raise, so inside victim, on the same stack; it
 *     calls in_handler() once and returns normally (through sigreturn).
 *   - Counts: victim 3, on_signal 3, in_handler 3; each on_signal inside a
 *     victim, each in_handler inside an on_signal.
 *   Phase 2 (sigaltstack), after phase 1:
 *   - An alternate signal stack of 256 KiB from malloc is installed
 *     (sigaltstack) and the SIGUSR2 handler on_alt_signal with SA_ONSTACK:
 *     it runs on that heap stack, far from the thread's stack.
 *   - main calls alt_victim() 2 times; alt_victim calls raise(SIGUSR2) once;
 *     on_alt_signal runs inside it and returns normally.
 *   - Counts: alt_victim 2, on_alt_signal 2; each on_alt_signal inside an
 *     alt_victim.
 *   Every traced call returns normally (none is skipped by a jump), main 1.
 *   No other function of the source is called.  Prints
 *   "sighandler: handled=3 alt=2 on_altstack=2" to stdout (on_altstack counts
 *   the handler runs whose local variable lay inside the alternate stack);
 *   exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "progs.h"

#define ALTSTACK_SIZE (256 * 1024)

volatile unsigned long sink;

static volatile sig_atomic_t handled, alt_handled, on_altstack;
static char *altstack;

TRACED void in_handler(void)
{
	sink++;
}

TRACED void on_signal(int sig)
{
	sink += (unsigned long)sig;
	in_handler();
	handled++;
}

TRACED void on_alt_signal(int sig)
{
	char here;

	sink += (unsigned long)sig;
	if (&here >= altstack && &here < altstack + ALTSTACK_SIZE)
		on_altstack++;
	alt_handled++;
}

TRACED void victim(void)
{
	sink++;
	raise(SIGUSR1);
	sink++;
}

TRACED void alt_victim(void)
{
	sink++;
	raise(SIGUSR2);
	sink++;
}

int main(void)
{
	struct sigaction sa;
	stack_t ss;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL)) {
		perror("sighandler: sigaction");
		return 1;
	}
	for (i = 0; i < 3; i++)
		victim();

	altstack = malloc(ALTSTACK_SIZE);
	if (!altstack) {
		perror("sighandler: malloc");
		return 1;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = altstack;
	ss.ss_size = ALTSTACK_SIZE;
	if (sigaltstack(&ss, NULL)) {
		perror("sighandler: sigaltstack");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alt_signal;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL)) {
		perror("sighandler: sigaction");
		return 1;
	}
	for (i = 0; i < 2; i++)
		alt_victim();

	printf("sighandler: handled=%d alt=%d on_altstack=%d\n", (int)handled,
	       (int)alt_handled, (int)on_altstack);
	return 0;
}
