// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fdshare: bpfprof-fds shares the table of descriptors of the process that
 * started it (base/fdshare.c).  While that process runs, its descriptors
 * are the same for both; once it is gone, bpfprof-fds closes every one that
 * is not a BPF link (a reader of a pipe sees its end) and ends.  No timing
 * is asserted: what must happen is waited for, with a far deadline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/fdshare.h"
#include "base/pidfd.h"

/*
 * A child, holding the write ends of two pipes, starts bpfprof-fds, passes
 * its pid up, then closes one write end: that close is bpfprof-fds's too
 * (one table), so its reader (us) sees EOF while the child lives (a copy of
 * the table would keep it open).  The other write end is open until the
 * child is SIGKILLed and bpfprof-fds has closed it; then bpfprof-fds ends.
 */
static void test_one_table_then_closes_all_but_links(void **state)
{
	int p[2], q[2], info[2], pidfd;
	pid_t child, sharer = 0;
	struct pollfd pf;
	char b;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(q, O_CLOEXEC), 0);
	assert_int_equal(pipe2(info, O_CLOEXEC), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pid_t s;

		close(p[0]);
		close(q[0]);
		close(info[0]);
		if (fdshare__start())
			_exit(1);
		s = fdshare__pid();
		if (write(info[1], &s, sizeof(s)) != (ssize_t)sizeof(s))
			_exit(1);
		close(info[1]);
		close(p[1]);
		pause();	/* killed: its exit drops the shared table, closing nothing */
		_exit(0);
	}
	close(p[1]);
	close(q[1]);
	close(info[1]);
	assert_int_equal(read(info[0], &sharer, sizeof(sharer)), (ssize_t)sizeof(sharer));
	close(info[0]);
	assert_true(sharer > 0);
	pidfd = pidfd_of(sharer);
	assert_true(pidfd >= 0);
	/* the child's close of p[1] closed it for bpfprof-fds too */
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 120000), 1);
	assert_int_equal(read(p[0], &b, 1), 0);
	assert_int_equal(kill(child, 0), 0);	/* while the child lives */
	/* q[1]: open while the child lives (no EOF, no data) */
	pf = (struct pollfd){ .fd = q[0], .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 200), 0);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* bpfprof-fds closes it: EOF */
	assert_int_equal(poll(&pf, 1, 120000), 1);
	assert_int_equal(read(q[0], &b, 1), 0);
	/* and ends (init reaps it, not us: its pidfd tells) */
	pf = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	assert_int_equal(poll(&pf, 1, 120000), 1);
	close(pidfd);
	close(p[0]);
	close(q[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_table_then_closes_all_but_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
