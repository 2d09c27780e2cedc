// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: the comparison (report/diff.c) on two hand-built sessions whose
 * functions have different ids on each side: matching by name and module,
 * verdicts, recursion counted once, added and removed functions, the
 * --fail-above gate, sample shares, the differential folded output, the whole
 * run's shift and runs of each side, the coroutine table's await split.
 * The statistics: test_stats.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/session.h"
#include "report/diff.h"
#include "report/stats.h"

/*
 * Two sessions of "prog" (different module paths: two builds): base defines
 * fast, slowed, rec, gone; new defines them in another order (ids differ),
 * with added instead of gone.  Per side, 200 calls of fast (same times),
 * 200 of slowed (twice as long in new), one rec with a nested rec, a few of
 * gone/added.
 */
static uint32_t fn(struct bp_session *s, const char *name)
{
	struct bp_func f = { .name = (char *)name, .module = 0 };

	return session__add_func(s, &f);
}

static void call(struct diff *d, int side, struct bp_session *s, uint32_t func, uint32_t path,
		 uint64_t begin, uint64_t dur, uint64_t self)
{
	struct bp_event ev = { .kind = BP_EV_CALL };

	ev.call.func = func;
	ev.call.path = path;
	ev.call.begin = begin;
	ev.call.end = begin + dur;
	ev.call.self = self;
	ev.call.pid = ev.call.tid = 100 + side;
	assert_int_equal(diff__add(d, side, s, &ev), 0);
}

static void build(struct diff *d, int side, struct bp_session *s)
{
	uint32_t fast, slowed, rec, other, pf, ps, pr, prr, po;
	uint64_t t = 0;
	int i;

	session__init(s);
	session__add_module(s, side ? "/new/build/prog" : "/old/build/prog");
	if (side) {
		other = fn(s, "added");
		rec = fn(s, "rec");
		slowed = fn(s, "slowed");
		fast = fn(s, "fast");
	} else {
		fast = fn(s, "fast");
		slowed = fn(s, "slowed");
		rec = fn(s, "rec");
		other = fn(s, "gone");
	}
	pf = session__path(s, 0, fast);
	ps = session__path(s, 0, slowed);
	pr = session__path(s, 0, rec);
	prr = session__path(s, pr, rec);
	po = session__path(s, 0, other);
	for (i = 0; i < 200; i++) {
		/* fast: 1000 + (i % 10) ns both sides; slowed: 5000 + (i % 10) * 10, doubled in new */
		call(d, side, s, fast, pf, t, 1000 + i % 10, 1000 + i % 10);
		t += 2000;
		call(d, side, s, slowed, ps, t, (5000 + (i % 10) * 10) * (side ? 2 : 1), 100);
		t += 20000;
	}
	/* rec: an outer call of 700 ns holding an inner one of 300: total 700, not 1000 */
	call(d, side, s, rec, prr, t + 100, 300, 300);
	call(d, side, s, rec, pr, t, 700, 400);
	t += 1000;
	for (i = 0; i < 3; i++)
		call(d, side, s, other, po, t + i * 100, 50, 50);
	s->duration = t + 1000;
	assert_int_equal(diff__side_done(d, side, s, side ? "new.bpfprof" : "base.bpfprof"), 0);
}

static char *run_diff(struct diff_opts *o, size_t *gate)
{
	struct bp_session s[2];
	struct diff *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(diff__new(o, &d), 0);
	build(d, 0, &s[0]);
	build(d, 1, &s[1]);
	assert_int_equal(diff__compute(d), 0);
	assert_int_equal(diff__mode(d), DIFF_CALLS);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(diff__print(d, f), 0);
	if (gate) {
		FILE *g = fopen("/dev/null", "w");

		assert_non_null(g);
		*gate = diff__gate(d, g);
		fclose(g);
	}
	fclose(f);
	diff__free(d);
	session__free(&s[0]);
	session__free(&s[1]);
	return buf;
}

static void test_diff_calls(void **state)
{
	struct diff_opts o;
	size_t gate;
	char *out;

	diff__default_opts(&o);
	o.format = DIFF_CSV;
	o.fail_above = 0.5;	/* slowed doubled: its interval is above 1.5 */
	out = run_diff(&o, &gate);
	/*
	 * Sorted by added total time: slowed (+~1 ms), then the rest.
	 * slowed: base p50 5040 (nearest rank 100 of 200: 20 calls each of
	 * 5000..5090, the 100th is 5040), new 10080, ratio 2.
	 */
	assert_non_null(strstr(out, "\nslowed,prog,slower,200,200,1009000,2018000,20000,20000,"
				    "5040,10080,5080,10160,5090,10180,2,2,"));
	/* fast: the same on both sides */
	assert_non_null(strstr(out, "\nfast,prog,same,200,200,200900,200900,200900,200900,1004,1004,"));
	/* rec: total 700 (the nested call is inside the outer one), 2 calls, too few for a verdict */
	assert_non_null(strstr(out, "\nrec,prog,few calls,2,2,700,700,700,700,"));
	/* a side without a timed call has no percentiles (empty), not 0 ns */
	assert_non_null(strstr(out, "\nadded,prog,added,0,3,0,150,0,150,,50,,50,,50,"));
	assert_non_null(strstr(out, "\ngone,prog,removed,3,0,150,0,150,0,50,,50,,50,,"));
	assert_int_equal(gate, 1);
	free(out);

	/* a bar the change does not reach, and a --min-total it does not reach */
	o.fail_above = 1.5;
	free(run_diff(&o, &gate));
	assert_int_equal(gate, 0);
	o.fail_above = 0.5;
	o.min_total = 3000000;
	free(run_diff(&o, &gate));
	assert_int_equal(gate, 0);
}

static void test_diff_margin(void **state)
{
	struct diff_opts o;
	char *out;

	/* a 2x change is not "within" a 150% margin: same, not slower */
	diff__default_opts(&o);
	o.format = DIFF_CSV;
	o.min_change = 1.5;
	out = run_diff(&o, NULL);
	assert_non_null(strstr(out, "\nslowed,prog,same,"));
	free(out);
}

static void test_diff_paths_json(void **state)
{
	struct diff_opts o;
	char *out;

	diff__default_opts(&o);
	o.format = DIFF_JSON;
	o.all_paths = true;
	out = run_diff(&o, NULL);
	assert_non_null(strstr(out, "\"functions\":["));
	assert_non_null(strstr(out, "{\"function\":\"slowed\",\"module\":\"prog\",\"status\":\"slower\","
				    "\"base\":{\"calls\":200,\"total_ns\":1009000,\"self_ns\":20000,"
				    "\"p50_ns\":5040,"));
	assert_non_null(strstr(out, "\"significant\":true"));
	/* no timed call on a side: null percentiles, not 0 ns */
	assert_non_null(strstr(out, "{\"function\":\"added\",\"module\":\"prog\",\"status\":\"added\","
				    "\"base\":{\"calls\":0,\"total_ns\":0,\"self_ns\":0,\"p50_ns\":null,"
				    "\"p90_ns\":null,\"p99_ns\":null,\"timed_calls\":0},\"new\":{\"calls\":3,"
				    "\"total_ns\":150,\"self_ns\":150,\"p50_ns\":50,"));
	/* the nested rec path, under rec */
	assert_non_null(strstr(out, "{\"path\":[\"rec\",\"rec\"],\"base\":{\"calls\":1,\"total_ns\":300,"));
	assert_non_null(strstr(out, "{\"path\":[\"slowed\"],\"base\":{\"calls\":200,\"total_ns\":1009000,"
				    "\"self_ns\":20000},\"new\":{\"calls\":200,\"total_ns\":2018000,"
				    "\"self_ns\":20000},\"delta_total_ns\":1009000,"));
	free(out);
}

/* Sample mode: 1000 samples a side; main;hot goes from 30% to 60% of them. */
static void test_diff_samples(void **state)
{
	struct bp_session s[2];
	struct diff_opts o;
	struct diff *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int side, i;

	diff__default_opts(&o);
	o.format = DIFF_FOLDED;
	assert_int_equal(diff__new(&o, &d), 0);
	for (side = 0; side < 2; side++) {
		uint32_t m, hot, cold, ph, pc;
		struct bp_event ev = { .kind = BP_EV_SAMPLE };

		session__init(&s[side]);
		session__add_module(&s[side], "/bin/prog");
		m = fn(&s[side], "main");
		hot = fn(&s[side], "hot");
		cold = fn(&s[side], "cold");
		ph = session__path(&s[side], session__path(&s[side], 0, m), hot);
		pc = session__path(&s[side], session__path(&s[side], 0, m), cold);
		for (i = 0; i < 1000; i++) {
			ev.sample.path = i < (side ? 600 : 300) ? ph : pc;
			ev.sample.weight = 1000000;
			assert_int_equal(diff__add(d, side, &s[side], &ev), 0);
		}
		diff__side_done(d, side, &s[side], side ? "new" : "base");
	}
	assert_int_equal(diff__compute(d), 0);
	assert_int_equal(diff__mode(d), DIFF_SAMPLES);
	f = open_memstream(&buf, &len);
	assert_int_equal(diff__print(d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "main;hot 300 600\n"));
	assert_non_null(strstr(buf, "main;cold 700 400\n"));
	free(buf);
	diff__free(d);

	/* JSON: hot's share 0.3 -> 0.6 is significant and "higher" */
	o.format = DIFF_JSON;
	assert_int_equal(diff__new(&o, &d), 0);
	for (side = 0; side < 2; side++) {
		struct bp_event ev = { .kind = BP_EV_SAMPLE };
		uint32_t ph, pc;

		/* the paths made above: main is function 0, hot 1, cold 2 */
		ph = session__path(&s[side], session__path(&s[side], 0, 0), 1);
		pc = session__path(&s[side], session__path(&s[side], 0, 0), 2);
		for (i = 0; i < 1000; i++) {
			ev.sample.path = i < (side ? 600 : 300) ? ph : pc;
			assert_int_equal(diff__add(d, side, &s[side], &ev), 0);
		}
		diff__side_done(d, side, &s[side], side ? "new" : "base");
	}
	assert_int_equal(diff__compute(d), 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(diff__print(d, f), 0);
	fclose(f);
	/* 30% vs 60%: z = 0.3 / sqrt(0.45 * 0.55 * 0.002) = 13.5, p ~ 1e-41 */
	assert_non_null(strstr(buf, "{\"function\":\"hot\",\"module\":\"prog\",\"status\":\"higher\","
				    "\"base\":{\"self_samples\":300,\"total_samples\":300,"));
	assert_non_null(strstr(buf, "{\"function\":\"main\",\"module\":\"prog\",\"status\":\"same\","));
	free(buf);
	diff__free(d);
	session__free(&s[0]);
	session__free(&s[1]);
}

/*
 * Six functions, 200 calls each a side, durations base * k * (1 + (i % 10) / 100):
 * the whole new side 5% slower (the machine), f5 twice as slow on top.
 */
static void build_shifted(struct diff *d, int side, struct bp_session *s, double whole,
			  double f5, uint64_t seed)
{
	uint32_t f[6], p[6];
	uint64_t t = 0;
	char name[8];
	int i, k;

	session__init(s);
	session__add_module(s, "/bin/prog");
	for (k = 0; k < 6; k++) {
		snprintf(name, sizeof(name), "f%d", k);
		f[k] = fn(s, name);
		p[k] = session__path(s, 0, f[k]);
	}
	for (i = 0; i < 200; i++)
		for (k = 0; k < 6; k++) {
			double v = 1000.0 * (k + 1) * (1 + (double)((i * 7 + seed) % 10) / 100) * whole;
			uint64_t dur = (uint64_t)(v * (k == 5 ? f5 : 1));

			call(d, side, s, f[k], p[k], t, dur, dur);
			t += dur + 100;
		}
	s->duration = t;
	assert_int_equal(diff__side_done(d, side, s, side ? "new" : "base"), 0);
	session__free(s);
}

static char *run_shifted(struct diff_opts *o, int runs, const double *whole_b,
			 const double *whole_n, double f5, size_t *gate, int *err)
{
	struct bp_session s;
	struct diff *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	assert_int_equal(diff__new(o, &d), 0);
	for (r = 0; r < runs; r++)
		build_shifted(d, 0, &s, whole_b[r], 1, r);
	for (r = 0; r < runs + (err ? 1 : 0); r++)
		build_shifted(d, 1, &s, whole_n[r], f5, r + 3);
	*gate = 0;
	if (err) {
		*err = diff__compute(d);
		diff__free(d);
		return NULL;
	}
	assert_int_equal(diff__compute(d), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(diff__print(d, f), 0);
	fclose(f);
	f = fopen("/dev/null", "w");
	*gate = diff__gate(d, f);
	fclose(f);
	diff__free(d);
	return buf;
}

/* The CSV out says f5 is slower and f0-f4 the same. */
static void assert_only_f5_slower(const char *out)
{
	assert_non_null(strstr(out, "\nf5,prog,slower,"));
	for (int k = 0; k < 5; k++) {
		char want[32];

		snprintf(want, sizeof(want), "\nf%d,prog,same,", k);
		assert_non_null(strstr(out, want));
	}
}

/* One recording a side: the whole run's 5% is the machine's; f5 alone is slower. */
static void test_diff_run_shift(void **state)
{
	const double b[] = { 1 }, n[] = { 1.05 };
	struct diff_opts o;
	size_t gate;
	char *out;

	diff__default_opts(&o);
	o.format = DIFF_CSV;
	o.fail_above = 0.5;
	out = run_shifted(&o, 1, b, n, 2, &gate, NULL);
	assert_only_f5_slower(out);
	assert_int_equal(gate, 1);	/* 2 / 1.05 = 1.9 > 1.5 */
	free(out);
	/* the plain text says it, on its own line */
	o.format = DIFF_PRETTY;
	out = run_shifted(&o, 1, b, n, 2, &gate, NULL);
	assert_non_null(strstr(out, "\nthe whole run is 5.0% slower (1.050x, the weighted median of 6 "
				    "functions' shifts): machine or global change"));
	free(out);
	o.format = DIFF_JSON;
	out = run_shifted(&o, 1, b, n, 2, &gate, NULL);
	assert_non_null(strstr(out, "\"run_shift\":1.05,"));
	free(out);
}

/*
 * Three runs a side, each run's machine a different speed (2-6% apart),
 * f5 1.1x in new: found slower across runs, the others the same; the whole
 * run's shift within noise.  Three runs against four: refused only when a
 * side has one.
 */
static void test_diff_runs(void **state)
{
	const double b[] = { 1.00, 1.04, 0.98 }, n[] = { 1.03, 0.99, 1.02, 1.0 };
	struct diff_opts o;
	size_t gate;
	char *out;
	int err;

	diff__default_opts(&o);
	o.format = DIFF_CSV;
	o.fail_above = 0.05;
	out = run_shifted(&o, 3, b, n, 1.1, &gate, NULL);
	assert_only_f5_slower(out);
	assert_int_equal(gate, 1);
	free(out);
	o.format = DIFF_PRETTY;
	out = run_shifted(&o, 3, b, n, 1.1, &gate, NULL);
	assert_non_null(strstr(out, "base  3 runs: base, base, base:"));
	assert_non_null(strstr(out, "runs): within run-to-run noise;"));
	free(out);
	/* one base run, two new */
	run_shifted(&o, 1, b, n, 1.1, &gate, &err);
	assert_int_equal(err, -EINVAL);
}

/* One side with calls, the other with samples only: refused. */
static void test_diff_kinds(void **state)
{
	struct bp_session s;
	struct diff *d;
	struct bp_event ev = { .kind = BP_EV_SAMPLE };
	uint32_t f;

	assert_int_equal(diff__new(NULL, &d), 0);
	session__init(&s);
	session__add_module(&s, "/bin/prog");
	f = fn(&s, "main");
	call(d, 0, &s, f, session__path(&s, 0, f), 0, 10, 10);
	diff__side_done(d, 0, &s, "a");
	ev.sample.path = session__path(&s, 0, f);
	assert_int_equal(diff__add(d, 1, &s, &ev), 0);
	diff__side_done(d, 1, &s, "b");
	assert_int_equal(diff__compute(d), -EINVAL);
	diff__free(d);
	session__free(&s);
}

/* A slice of a coroutine (parent: its caller's slice), and the resume edge between two. */
static void slice(struct diff *d, int side, struct bp_session *s, uint32_t func, uint32_t path,
		  uint64_t id, uint64_t parent, uint64_t begin, uint64_t end, uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_CALL };

	ev.call.id = id;
	ev.call.parent_id = parent;
	ev.call.func = func;
	ev.call.path = path;
	ev.call.begin = begin;
	ev.call.end = end;
	ev.call.self = end - begin;
	ev.call.flags = flags;
	ev.call.pid = ev.call.tid = 100 + side;
	assert_int_equal(diff__add(d, side, s, &ev), 0);
}

static void resume(struct diff *d, int side, struct bp_session *s, uint64_t src, uint64_t dst)
{
	struct bp_event ev = { .kind = BP_EV_EDGE };

	ev.edge.kind = BP_EDGE_RESUME;
	ev.edge.src_call = src;
	ev.edge.dst_call = dst;
	assert_int_equal(diff__add(d, side, s, &ev), 0);
}

/*
 * outer awaits inner, which suspends on a future; each resumes k = 1 (base)
 * or 2 (new) times as late: outer's gap is awaiting its child (30 ns, 60),
 * inner's awaiting something else (44 ns, 74).
 */
static void coro_side(struct diff *d, int side, struct bp_session *s)
{
	struct bp_func f = { .name = "outer", .flags = BP_FUNC_COROUTINE };
	uint64_t late = side ? 30 : 0;
	uint32_t outer, inner, po, pi;

	session__init(s);
	session__add_module(s, "/bin/app");
	outer = session__add_func(s, &f);
	f.name = "inner";
	inner = session__add_func(s, &f);
	po = session__path(s, 0, outer);
	pi = session__path(s, po, inner);
	slice(d, side, s, inner, pi, 11, 10, 5, 8, BP_CALL_SUSPENDED);
	slice(d, side, s, outer, po, 10, 0, 0, 20, BP_CALL_SUSPENDED);
	resume(d, side, s, 10, 12);
	resume(d, side, s, 11, 13);
	slice(d, side, s, inner, pi, 13, 12, 52 + late, 55 + late, BP_CALL_RESUMED);
	slice(d, side, s, outer, po, 12, 0, 50 + late, 60 + late, BP_CALL_RESUMED);
	s->duration = 100;
	assert_int_equal(diff__side_done(d, side, s, side ? "new" : "base"), 0);
}

/* The coroutine table: each side's await child / await other, and their ratios. */
static void test_diff_coro_awaits(void **state)
{
	struct bp_session s[2];
	struct diff_opts o;
	struct diff *d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	diff__default_opts(&o);
	o.format = DIFF_JSON;
	assert_int_equal(diff__new(&o, &d), 0);
	coro_side(d, 0, &s[0]);
	coro_side(d, 1, &s[1]);
	assert_int_equal(diff__compute(d), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(diff__print(d, f), 0);
	fclose(f);
	assert_non_null(strstr(buf, "{\"function\":\"outer\",\"module\":\"app\","
				    "\"base\":{\"calls\":1,\"slices\":2,\"exec_ns\":30,"
				    "\"wall_ns\":60,\"max_exec_ns\":30,\"max_wall_ns\":60,"
				    "\"await_child_ns\":30,\"await_other_ns\":0,"));
	assert_non_null(strstr(buf, "\"new\":{\"calls\":1,\"slices\":2,\"exec_ns\":30,"
				    "\"wall_ns\":90,\"max_exec_ns\":30,\"max_wall_ns\":90,"
				    "\"await_child_ns\":60,\"await_other_ns\":0,"));
	assert_non_null(strstr(buf, "\"wall_per_call_ratio\":1.5000,"
				    "\"await_child_per_call_ratio\":2.0000,"
				    "\"await_other_per_call_ratio\":null}"));
	assert_non_null(strstr(buf, "{\"function\":\"inner\",\"module\":\"app\","
				    "\"base\":{\"calls\":1,\"slices\":2,\"exec_ns\":6,"
				    "\"wall_ns\":50,\"max_exec_ns\":6,\"max_wall_ns\":50,"
				    "\"await_child_ns\":0,\"await_other_ns\":44,"));
	assert_non_null(strstr(buf, "\"await_child_per_call_ratio\":null,"
				    "\"await_other_per_call_ratio\":1.6818}"));
	free(buf);
	diff__free(d);
	session__free(&s[0]);
	session__free(&s[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_calls),
		cmocka_unit_test(test_diff_margin),
		cmocka_unit_test(test_diff_paths_json),
		cmocka_unit_test(test_diff_samples),
		cmocka_unit_test(test_diff_run_shift),
		cmocka_unit_test(test_diff_runs),
		cmocka_unit_test(test_diff_kinds),
		cmocka_unit_test(test_diff_coro_awaits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
