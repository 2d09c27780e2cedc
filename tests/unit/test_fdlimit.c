// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fd_limit_raise (base/util.c): the soft descriptor limit goes up to the
 * hard one, and both to `want` (at most fs.nr_open) where the process may
 * (CAP_SYS_RESOURCE; refused on some machines, this VM's among them): the
 * result is one or the other, never lower than before, and what
 * getrlimit then says.  Each case in a child: the limit is the process's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "base/util.h"

static unsigned long nr_open(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* In a child: soft limit set to `soft`, then fd_limit_raise(want); exit 0 if all holds. */
static int child_case(rlim_t soft, unsigned long want)
{
	struct rlimit rl, after;
	unsigned long got, top;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 10;
	if (rl.rlim_max == RLIM_INFINITY)
		return 0;	/* nothing to raise to: not this test's case */
	rl.rlim_cur = soft < rl.rlim_max ? soft : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 11;
	got = fd_limit_raise(want);
	if (getrlimit(RLIMIT_NOFILE, &after))
		return 12;
	if (got != after.rlim_cur)
		return 13;	/* it says what the limit is */
	if (after.rlim_cur < rl.rlim_max)
		return 14;	/* the soft limit reached the hard one at least */
	top = nr_open() < want ? nr_open() : want;
	if (after.rlim_cur != rl.rlim_max && after.rlim_cur != top)
		return 15;	/* the hard limit, or want (within nr_open): nothing else */
	if (after.rlim_cur > rl.rlim_max && after.rlim_cur > top)
		return 16;
	return 0;
}

static void run_case(rlim_t soft, unsigned long want)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_case(soft, want));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_soft_up_to_hard(void **state)
{
	(void)state;
	run_case(64, 0);	/* want 0: the hard limit is all it may reach */
}

static void test_want_above_hard(void **state)
{
	(void)state;
	run_case(64, 65536);
	run_case(64, 1ul << 30);	/* beyond nr_open: nr_open at most */
}

static void test_never_lower(void **state)
{
	struct rlimit rl;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max > 16)
		run_case(rl.rlim_max, 16);	/* want under the hard limit: the hard limit stays */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soft_up_to_hard),
		cmocka_unit_test(test_want_above_hard),
		cmocka_unit_test(test_never_lower),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
