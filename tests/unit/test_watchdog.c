// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * watchdog: the deadline a hold at an exec or a dlopen has
 * (capture/holdlimit.c).  Work that ends first is never interrupted; work
 * past the deadline sees fn called once, from another thread, and
 * watchdog__end says so.  No timing is asserted: a deadline that must pass
 * is waited for, one that must not is far away.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include "base/watchdog.h"

struct seen {
	atomic_int calls;
	pthread_t thread;
};

static void note(void *ctx)
{
	struct seen *s = ctx;

	s->thread = pthread_self();
	atomic_fetch_add(&s->calls, 1);
}

static void test_work_ends_first(void **state)
{
	struct seen s = { 0 };
	struct watchdog *w = watchdog__start(600000, note, &s);

	assert_non_null(w);
	assert_false(watchdog__end(w));
	assert_int_equal(atomic_load(&s.calls), 0);
}

static void test_deadline_first(void **state)
{
	struct seen s = { 0 };
	struct watchdog *w = watchdog__start(1, note, &s);

	assert_non_null(w);
	while (!atomic_load(&s.calls))
		usleep(1000);
	assert_true(watchdog__end(w));
	assert_int_equal(atomic_load(&s.calls), 1);
	assert_false(pthread_equal(s.thread, pthread_self()));
}

static void test_null(void **state)
{
	assert_false(watchdog__end(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_work_ends_first),
		cmocka_unit_test(test_deadline_first),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
