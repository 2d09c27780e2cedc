// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metrics (bpfprof serve's aggregates): hand-made calls with known numbers
 * and the exact Prometheus text they give -- counters, cumulative histogram
 * buckets with le="+Inf" == _count, recursion counted once in the time
 * counter, top-K by time, label escaping and UTF-8 repair, pruning of
 * processes that are gone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "web/metrics.h"
#include "model/session.h"

static struct bp_session s;
static uint32_t f_main, f_fib, f_odd;

static int setup(void **state)
{
	struct bp_func f = { 0 };

	session__init(&s);
	f.module = session__add_module(&s, "/usr/bin/app");
	f.name = "main";
	f_main = session__add_func(&s, &f);
	f.name = "fib";
	f_fib = session__add_func(&s, &f);
	f.name = "we\"ird\\na\nme\xff";
	f_odd = session__add_func(&s, &f);
	return 0;
}

static int teardown(void **state)
{
	session__free(&s);
	return 0;
}

static struct bp_call call(uint32_t pid, uint32_t func, uint32_t path, uint64_t dur, uint64_t self)
{
	struct bp_call c = { .pid = pid, .tid = pid, .func = func, .path = path,
			     .begin = 1000, .end = 1000 + dur, .self = self };
	return c;
}

static char *expose(struct metrics *m, size_t top, const struct metrics_extra *x)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics__write(m, &s, top, x, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing line: %s\n--- in:\n%s", line, text);
}

static void test_counters_and_histogram(void **state)
{
	struct metrics *m = NULL;
	struct metrics_extra x = { .lost = 3, .cpu_ns = 1500000000, .traced_processes = 1 };
	uint32_t p_main = session__path(&s, 0, f_main);
	char *t;

	assert_int_equal(metrics__new(&m), 0);
	/* 2 us, 1 us (le is inclusive), 3 ms, 20 s (beyond the last bound) */
	struct bp_call c1 = call(7, f_main, p_main, 2000, 1500);
	struct bp_call c2 = call(7, f_main, p_main, 1000, 1000);
	struct bp_call c3 = call(7, f_main, p_main, 3000000, 10);
	struct bp_call c4 = call(7, f_main, p_main, 20000000000ull, 0);

	metrics__add_call(m, &s, &c1);
	metrics__add_call(m, &s, &c2);
	metrics__add_call(m, &s, &c3);
	metrics__add_call(m, &s, &c4);
	t = expose(m, 0, &x);
	assert_has(t, "# HELP bpfprof_function_calls_total ");
	assert_has(t, "# TYPE bpfprof_function_calls_total counter\n");
	assert_has(t, "bpfprof_function_calls_total{function=\"main\",module=\"app\",pid=\"7\"} 4\n");
	assert_has(t, "bpfprof_function_seconds_total{function=\"main\",module=\"app\",pid=\"7\"} "
		      "20.003003000\n");
	assert_has(t, "bpfprof_function_self_seconds_total{function=\"main\",module=\"app\",pid=\"7\"} "
		      "0.000002510\n");
	assert_has(t, "# TYPE bpfprof_function_duration_seconds histogram\n");
	assert_has(t, "bpfprof_function_duration_seconds_bucket{function=\"main\",module=\"app\","
		      "pid=\"7\",le=\"1e-06\"} 1\n");
	assert_has(t, "le=\"2.5e-06\"} 2\n");
	assert_has(t, "le=\"0.0025\"} 2\n");
	assert_has(t, "le=\"0.005\"} 3\n");
	assert_has(t, "le=\"10\"} 3\n");
	assert_has(t, "le=\"+Inf\"} 4\n");
	assert_has(t, "bpfprof_function_duration_seconds_sum{function=\"main\",module=\"app\","
		      "pid=\"7\"} 20.003003000\n");
	assert_has(t, "bpfprof_function_duration_seconds_count{function=\"main\",module=\"app\","
		      "pid=\"7\"} 4\n");
	assert_has(t, "# TYPE bpfprof_lost_records_total counter\nbpfprof_lost_records_total 3\n");
	assert_has(t, "bpfprof_cpu_seconds_total 1.500000000\n");
	assert_has(t, "# TYPE bpfprof_traced_processes gauge\nbpfprof_traced_processes 1\n");
	assert_has(t, "bpfprof_calls_total 4\n");
	assert_int_equal(metrics__calls(m), 4);
	free(t);
	metrics__free(m);
}

static void test_recursion_counted_once(void **state)
{
	struct metrics *m = NULL;
	uint32_t p_main = session__path(&s, 0, f_main);
	uint32_t p1 = session__path(&s, p_main, f_fib);
	uint32_t p2 = session__path(&s, p1, f_fib);
	uint32_t p3 = session__path(&s, p2, f_fib);
	char *t;

	assert_int_equal(metrics__new(&m), 0);
	/* fib(3 levels): 100 ns inside 300 ns inside 600 ns; only the outermost is time */
	struct bp_call c3 = call(1, f_fib, p3, 100, 100);
	struct bp_call c2 = call(1, f_fib, p2, 300, 200);
	struct bp_call c1 = call(1, f_fib, p1, 600, 300);

	metrics__add_call(m, &s, &c3);
	metrics__add_call(m, &s, &c2);
	metrics__add_call(m, &s, &c1);
	t = expose(m, 0, NULL);
	assert_has(t, "bpfprof_function_calls_total{function=\"fib\",module=\"app\",pid=\"1\"} 3\n");
	assert_has(t, "bpfprof_function_seconds_total{function=\"fib\",module=\"app\",pid=\"1\"} "
		      "0.000000600\n");
	assert_has(t, "bpfprof_function_self_seconds_total{function=\"fib\",module=\"app\","
		      "pid=\"1\"} 0.000000600\n");
	/* the histogram has every call */
	assert_has(t, "bpfprof_function_duration_seconds_sum{function=\"fib\",module=\"app\","
		      "pid=\"1\"} 0.000001000\n");
	free(t);
	metrics__free(m);
}

static bool odd_pid_alive(uint32_t pid, void *ctx)
{
	(*(int *)ctx)++;
	return pid % 2;
}

static void test_top_escape_prune(void **state)
{
	struct metrics *m = NULL;
	uint32_t p_main = session__path(&s, 0, f_main), p_odd = session__path(&s, 0, f_odd);
	int asked = 0;
	char *t;
	uint32_t pid;

	assert_int_equal(metrics__new(&m), 0);
	/* 200 processes (the table grows past its first sizes), main of pid p takes p us */
	for (pid = 1; pid <= 200; pid++) {
		struct bp_call c = call(pid, f_main, p_main, pid * 1000ull, pid * 1000ull);

		metrics__add_call(m, &s, &c);
	}
	struct bp_call o = call(1000, f_odd, p_odd, 5, 5);

	metrics__add_call(m, &s, &o);
	assert_int_equal(metrics__rows(m), 201);
	t = expose(m, 2, NULL);
	/* top 2 by time: pids 200 and 199 only */
	assert_has(t, "pid=\"200\"} 1\n");
	assert_has(t, "pid=\"199\"} 1\n");
	assert_null(strstr(t, "pid=\"198\""));
	free(t);

	t = expose(m, 0, NULL);
	/* quote, backslash, line feed escaped; the invalid byte became U+FFFD */
	assert_has(t, "bpfprof_function_calls_total{function=\"we\\\"ird\\\\na\\nme\xef\xbf\xbd\","
		      "module=\"app\",pid=\"1000\"} 1\n");
	free(t);

	assert_int_equal(metrics__prune(m, odd_pid_alive, &asked), 101);	/* even pids and 1000 */
	assert_int_equal(metrics__rows(m), 100);
	assert_true(asked >= 101 && asked <= 201);
	/* the survivors are still found (the hash was rebuilt): a new call adds to pid 3's row */
	struct bp_call again = call(3, f_main, p_main, 1000, 1000);

	metrics__add_call(m, &s, &again);
	assert_int_equal(metrics__rows(m), 100);
	t = expose(m, 0, NULL);
	assert_has(t, "bpfprof_function_calls_total{function=\"main\",module=\"app\",pid=\"3\"} 2\n");
	assert_null(strstr(t, "pid=\"4\""));
	free(t);
	metrics__free(m);
}

static void test_label_value(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plain", "\"plain\"" },
		{ "", "\"\"" },
		{ "a\"b", "\"a\\\"b\"" },
		{ "c:\\x", "\"c:\\\\x\"" },
		{ "l1\nl2", "\"l1\\nl2\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },		/* valid UTF-8 kept */
		{ "\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"" },	/* overlong '/' */
		{ "\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"" },	/* surrogate */
		{ "x\xe2\x82", "\"x\xef\xbf\xbd\xef\xbf\xbd\"" },	/* cut short */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		metrics__label_value(f, cases[i].in);
		fclose(f);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters_and_histogram),
		cmocka_unit_test(test_recursion_counted_once),
		cmocka_unit_test(test_top_escape_prune),
		cmocka_unit_test(test_label_value),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
