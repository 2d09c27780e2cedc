// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metrics_coro (serve's per-coroutine-function aggregates): hand-made slices
 * and resume edges with known times and the exact Prometheus lines they give
 * -- invocations (not slices), raised, exec and wall sums, the longest one,
 * the invocations still suspended, top-K by exec time, pruning.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "web/metrics_coro.h"
#include "model/session.h"

static struct bp_session s;
static uint32_t f_handle, f_small;

static int setup(void **state)
{
	struct bp_func f = { 0 };

	session__init(&s);
	f.module = session__add_module(&s, "app.py");
	f.flags = BP_FUNC_COROUTINE;
	f.name = "handle";
	f_handle = session__add_func(&s, &f);
	f.name = "small";
	f_small = session__add_func(&s, &f);
	return 0;
}

static int teardown(void **state)
{
	session__free(&s);
	return 0;
}

static void slice(struct coro_metrics *m, uint32_t pid, uint64_t id, uint32_t func, uint64_t b,
		  uint64_t e, uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_CALL };

	ev.call.id = id;
	ev.call.pid = ev.call.tid = pid;
	ev.call.func = func;
	ev.call.begin = b;
	ev.call.end = e;
	ev.call.flags = flags;
	coro_metrics__event(m, &s, &ev);
}

static void resume(struct coro_metrics *m, uint64_t src, uint64_t dst)
{
	struct bp_event ev = { .kind = BP_EV_EDGE };

	ev.edge.kind = BP_EDGE_RESUME;
	ev.edge.src_call = src;
	ev.edge.dst_call = dst;
	coro_metrics__event(m, &s, &ev);
}

static char *expose(struct coro_metrics *m, size_t top)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(coro_metrics__write(m, &s, top, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing line: %s\n--- in:\n%s", line, text);
}

#define SUSP BP_CALL_SUSPENDED
#define RES BP_CALL_RESUMED

static bool pid5_alive(uint32_t pid, void *ctx)
{
	return pid == 5;
}

static void test_spans_counted_once(void **state)
{
	struct coro_metrics *m = NULL;
	char *t;

	assert_int_equal(coro_metrics__new(&m), 0);
	/* handle in pid 5: three slices (10 + 20 + 5 ns on CPU) from 0 to 100 */
	slice(m, 5, 1, f_handle, 0, 10, SUSP);
	resume(m, 1, 2);
	slice(m, 5, 2, f_handle, 40, 60, SUSP | RES);
	resume(m, 2, 3);
	slice(m, 5, 3, f_handle, 95, 100, RES);
	/* a second, of one slice that raised: 7 ns */
	slice(m, 5, 4, f_handle, 200, 207, BP_CALL_RAISED);
	/* small in pid 6: one slice of 3 ns; another started and suspended */
	slice(m, 6, 5, f_small, 0, 3, 0);
	slice(m, 6, 6, f_small, 10, 11, SUSP);
	/* a plain call of no coroutine function is no span */
	assert_int_equal(coro_metrics__rows(m), 2);

	t = expose(m, 0);
	assert_has(t, "# TYPE bpfprof_coroutine_calls_total counter\n");
	assert_has(t, "bpfprof_coroutine_calls_total{function=\"handle\",module=\"app.py\",pid=\"5\"} 2\n");
	assert_has(t, "bpfprof_coroutine_raised_total{function=\"handle\",module=\"app.py\",pid=\"5\"} 1\n");
	assert_has(t, "bpfprof_coroutine_exec_seconds_total{function=\"handle\",module=\"app.py\","
		      "pid=\"5\"} 0.000000042\n");
	assert_has(t, "bpfprof_coroutine_wall_seconds_total{function=\"handle\",module=\"app.py\","
		      "pid=\"5\"} 0.000000107\n");
	assert_has(t, "bpfprof_coroutine_max_exec_seconds{function=\"handle\",module=\"app.py\","
		      "pid=\"5\"} 0.000000035\n");
	assert_has(t, "# TYPE bpfprof_coroutine_max_wall_seconds gauge\n");
	assert_has(t, "bpfprof_coroutine_max_wall_seconds{function=\"handle\",module=\"app.py\","
		      "pid=\"5\"} 0.000000100\n");
	assert_has(t, "bpfprof_coroutine_calls_total{function=\"small\",module=\"app.py\",pid=\"6\"} 1\n");
	assert_has(t, "\nbpfprof_coroutines_suspended 1\n");
	/* handle's exec time comes first */
	assert_true(strstr(t, "function=\"handle\"") < strstr(t, "function=\"small\""));
	free(t);

	t = expose(m, 1);	/* top 1 by exec: handle only */
	assert_null(strstr(t, "function=\"small\""));
	assert_has(t, "bpfprof_coroutine_calls_total{function=\"handle\",module=\"app.py\",pid=\"5\"} 2\n");
	free(t);

	assert_int_equal(coro_metrics__prune(m, pid5_alive, NULL), 1);
	assert_int_equal(coro_metrics__rows(m), 1);
	/* the survivor is found again after the rebuild */
	slice(m, 5, 7, f_handle, 300, 301, 0);
	assert_int_equal(coro_metrics__rows(m), 1);
	t = expose(m, 0);
	assert_has(t, "bpfprof_coroutine_calls_total{function=\"handle\",module=\"app.py\",pid=\"5\"} 3\n");
	assert_null(strstr(t, "pid=\"6\""));
	free(t);
	coro_metrics__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spans_counted_once),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
