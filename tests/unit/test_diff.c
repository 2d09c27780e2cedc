// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: the statistics (stats.c) against values computed by hand (the
 * arithmetic is in the comments), and the comparison (diff.c) on two
 * hand-built sessions whose functions have different ids on each side:
 * matching by name and module, verdicts, recursion counted once, added and
 * removed functions, the --fail-above gate, sample shares and the
 * differential folded output.
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

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_quantile(void **state)
{
	const uint64_t v[] = { 10, 20, 30, 40 };

	/* nearest rank: ceil(q * n)-th value */
	assert_int_equal(stats__quantile(v, 4, 0.25), 10);	/* rank 1 */
	assert_int_equal(stats__quantile(v, 4, 0.50), 20);	/* rank 2 */
	assert_int_equal(stats__quantile(v, 4, 0.90), 40);	/* ceil(3.6) = 4 */
	assert_int_equal(stats__quantile(v, 4, 0.99), 40);
	assert_int_equal(stats__quantile(v, 0, 0.5), 0);
}

static void test_normal(void **state)
{
	near(stats__norm_sf(0), 0.5, 1e-15);
	near(stats__norm_sf(1.959963985), 0.025, 1e-9);
	near(stats__norm_isf(0.025), 1.959963985, 1e-8);
	near(stats__norm_isf(0.5), 0, 1e-12);
}

static void test_mann_whitney(void **state)
{
	const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 };
	const double tx[] = { 1, 2, 2, 3 }, ty[] = { 2, 3, 3, 4 };
	struct mw_result r;

	/*
	 * No ties: every y above every x, U = 9; mean nm/2 = 4.5, variance
	 * nm(N+1)/12 = 9 * 7 / 12 = 5.25.  p_greater = P(Z > (9 - 4.5 - 0.5) /
	 * sqrt(5.25)) = P(Z > 1.745743) = 0.0404278; p_less = P(Z > (4.5 - 9 -
	 * 0.5) / sqrt(5.25)) = 0.9854518.
	 */
	stats__mann_whitney(x, 3, y, 3, 0, &r);
	near(r.u, 9, 1e-12);
	near(r.p_greater, 0.0404278, 1e-6);
	near(r.p_less, 0.9854518, 1e-6);

	/*
	 * Ties: pooled 1 2 2 2 3 3 3 4, the 2s share ranks 2-4 (midrank 3), the
	 * 3s 5-7 (midrank 6).  Ranks of y: 3 + 6 + 6 + 8 = 23, U = 23 - 4*5/2 =
	 * 13.  Tie term: two runs of 3, (27 - 3) * 2 = 48; variance 16/12 * (9 -
	 * 48/56) = 10.857143.  p_greater = P(Z > 4.5 / 3.295018) = 0.0860169.
	 */
	stats__mann_whitney(tx, 4, ty, 4, 0, &r);
	near(r.u, 13, 1e-12);
	near(r.p_greater, 0.0860169, 1e-6);
	near(r.p_less, 0.9524598, 1e-6);

	/*
	 * Shifted by 3, x + 3 equals y: three tied pairs, U = 4.5 = nm/2;
	 * variance 9/12 * (7 - 18/30) = 4.8; p_greater = P(Z > -0.5/sqrt(4.8)) =
	 * 0.5902615.
	 */
	stats__mann_whitney(x, 3, y, 3, 3, &r);
	near(r.u, 4.5, 1e-12);
	near(r.p_greater, 0.5902615, 1e-6);
	near(r.p_less, 0.5902615, 1e-6);

	/* everything equal: no evidence either way */
	stats__mann_whitney(x, 1, x, 1, 0, &r);
	near(r.p_greater, 1, 0);
	near(r.p_less, 1, 0);
}

static void test_hodges_lehmann(void **state)
{
	double x[10], y[10], est, lo, hi;
	int i;

	/*
	 * x = 0..9, y = x + 5: the differences y_j - x_i are 5 + k, k = j - i,
	 * with 10 - |k| pairs each.  Median: 5.  Interval at 95%: c = floor(50 -
	 * 1.959964 * sqrt(100 * 21 / 12)) = floor(24.07) = 24; cumulative
	 * counts from k = -9 are 1 3 6 10 15 21 28, so the 24th smallest is k =
	 * -3 (difference 2) and the 77th (100 - 24 + 1) k = +3 (difference 8).
	 */
	for (i = 0; i < 10; i++) {
		x[i] = i;
		y[i] = i + 5;
	}
	stats__hodges_lehmann(x, 10, y, 10, 0.05, &est, &lo, &hi);
	near(est, 5, 1e-9);
	near(lo, 2, 1e-9);
	near(hi, 8, 1e-9);

	/* n = m = 3: c = floor(4.5 - 1.96 * 2.29) = 0, no interval at 95% */
	stats__hodges_lehmann(x, 3, y, 3, 0.05, &est, &lo, &hi);
	near(est, 5, 1e-9);
	assert_true(isinf(lo) && lo < 0);
	assert_true(isinf(hi) && hi > 0);
}

static void test_student_t(void **state)
{
	/* df 1 is the Cauchy: P(T > 1) = 1/2 - atan(1)/pi = 1/4 */
	near(stats__t_sf(1, 1), 0.25, 1e-12);
	near(stats__t_sf(0, 7), 0.5, 1e-12);
	/* the tables' two-sided 5% points: 12.706 (1), 4.303 (2), 2.776 (4), 2.228 (10) */
	near(stats__t_sf(12.7062, 1), 0.025, 1e-5);
	near(stats__t_sf(4.30265, 2), 0.025, 1e-5);
	near(stats__t_sf(2.77645, 4), 0.025, 1e-5);
	near(stats__t_sf(2.22814, 10), 0.025, 1e-5);
	near(stats__t_sf(-2.77645, 4), 0.975, 1e-5);
	/* a fractional df is rounded down: 4.9 is 4 */
	near(stats__t_sf(2.77645, 4.9), 0.025, 1e-5);
	near(stats__t_isf(0.025, 4), 2.77645, 1e-4);
	near(stats__t_isf(0.005, 3), 5.84091, 1e-4);
	/* many degrees: the normal's 1.96 */
	near(stats__t_sf(1.959964, 100000), 0.025, 1e-4);
}

static void test_welch(void **state)
{
	const double x[] = { 1, 2, 3 }, y[] = { 4, 5, 6 }, z[] = { 4, 6, 8, 10, 12 };
	struct welch_result w;

	/* equal variances 1, n 3: se sqrt(1/3 + 1/3) = 0.81650, df (2/3)^2 / (2 (1/3)^2 / 2) = 4 */
	stats__welch(x, 3, y, 3, &w);
	near(w.diff, 3, 1e-12);
	near(w.se, 0.8164966, 1e-6);
	near(w.df, 4, 1e-12);
	/*
	 * z: mean 8, variance 10; a = 1/3, b = 2: se sqrt(7/3) = 1.527525;
	 * df (7/3)^2 / ((1/3)^2/2 + 2^2/4) = 5.4444 / 1.0556 = 5.16 -> 5
	 */
	stats__welch(x, 3, z, 5, &w);
	near(w.diff, 6, 1e-12);
	near(w.se, 1.5275252, 1e-6);
	near(w.df, 5, 1e-12);
	/* one value a side: no spread to estimate */
	stats__welch(x, 1, y, 3, &w);
	assert_true(isnan(w.se));
}

static void test_weighted_median(void **state)
{
	const double v[] = { 3, 1, 100, 2 }, w1[] = { 1, 1, 1, 1 }, w2[] = { 5, 1, 1, 1 };
	const double vn[] = { NAN, 1, 2, 3 }, w0[] = { 1, 1, 0, 1 };

	/* half the weight falls between 2 and 3 */
	near(stats__weighted_median(v, w1, 4), 2.5, 1e-12);
	/* 3 holds 5 of 8 */
	near(stats__weighted_median(v, w2, 4), 3, 1e-12);
	/* NAN and weightless values skipped: 1 and 3 left */
	near(stats__weighted_median(vn, w0, 4), 2, 1e-12);
	assert_true(isnan(stats__weighted_median(vn, w0, 1)));
}

static void test_holm(void **state)
{
	double p[] = { 0.01, 0.04, 0.03, 0.005 };

	/*
	 * Sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06,
	 * 0.04 * 1 = 0.04 -> raised to 0.06 (never below the one before).
	 */
	stats__holm(p, 4);
	near(p[0], 0.03, 1e-12);
	near(p[1], 0.06, 1e-12);
	near(p[2], 0.06, 1e-12);
	near(p[3], 0.02, 1e-12);
}

static void test_two_proportions(void **state)
{
	/* 50/100 vs 30/100: pooled 0.4, se sqrt(0.4 * 0.6 * 0.02) = 0.069282, z = 2.886751 */
	near(stats__two_proportions(50, 100, 30, 100), 0.0038924, 1e-6);
	near(stats__two_proportions(30, 100, 50, 100), 0.0038924, 1e-6);
	near(stats__two_proportions(0, 100, 0, 100), 1, 0);
	near(stats__two_proportions(5, 0, 5, 10), 1, 0);
}

static void test_reservoir(void **state)
{
	struct reservoir r, r2;
	uint64_t i, sum = 0;
	uint32_t k;

	reservoir__init(&r, 42);
	for (i = 0; i < 100; i++)
		reservoir__add(&r, 99 - i);
	/* exact while it holds everything */
	assert_int_equal(r.n, 100);
	reservoir__sort(&r);
	for (k = 0; k < 100; k++)
		assert_int_equal(r.v[k], k);
	reservoir__free(&r);

	reservoir__init(&r, 42);
	reservoir__init(&r2, 42);
	for (i = 0; i < 100000; i++) {
		reservoir__add(&r, i);
		reservoir__add(&r2, i);
	}
	assert_int_equal(r.n, RESERVOIR_MAX);
	assert_int_equal(r.seen, 100000);
	/* seeded: the same stream gives the same sample */
	assert_memory_equal(r.v, r2.v, RESERVOIR_MAX * sizeof(*r.v));
	/*
	 * Uniform: the sample mean of 2048 draws from 0..99999 has a standard
	 * deviation of ~28868 / sqrt(2048) = 638; 5 of them is 3190.
	 */
	for (k = 0; k < r.n; k++)
		sum += r.v[k];
	assert_true(fabs((double)sum / r.n - 49999.5) < 3190);
	reservoir__free(&r);
	reservoir__free(&r2);
}

static void test_reservoir_merge(void **state)
{
	struct reservoir a, b;
	uint64_t i, from_a = 0;
	uint32_t k;

	/* two exact samples that fit together: concatenated */
	reservoir__init(&a, 1);
	reservoir__init(&b, 2);
	for (i = 0; i < 10; i++) {
		reservoir__add(&a, i);
		reservoir__add(&b, 100 + i);
	}
	reservoir__merge(&a, &b);
	assert_int_equal(a.n, 20);
	assert_int_equal(a.seen, 20);
	assert_int_equal(b.n, 0);
	reservoir__sort(&a);
	for (k = 0; k < 10; k++) {
		assert_int_equal(a.v[k], k);
		assert_int_equal(a.v[10 + k], 100 + k);
	}
	reservoir__free(&a);

	/* 30000 values (0..29999) and 10000 (1e6 + ...): slots shared 3:1, 1536 and 512 */
	reservoir__init(&a, 1);
	reservoir__init(&b, 2);
	for (i = 0; i < 30000; i++)
		reservoir__add(&a, i);
	for (i = 0; i < 10000; i++)
		reservoir__add(&b, 1000000 + i);
	reservoir__merge(&a, &b);
	assert_int_equal(a.n, RESERVOIR_MAX);
	assert_int_equal(a.seen, 40000);
	for (k = 0; k < a.n; k++)
		from_a += a.v[k] < 1000000;
	assert_int_equal(from_a, 1536);
	reservoir__free(&a);

	/* into an empty one: moved */
	reservoir__init(&a, 1);
	reservoir__init(&b, 2);
	reservoir__add(&b, 7);
	reservoir__merge(&a, &b);
	assert_int_equal(a.n, 1);
	assert_int_equal(a.v[0], 7);
	assert_int_equal(b.seen, 0);
	reservoir__free(&a);
	reservoir__free(&b);
}

static void test_parse_pct(void **state)
{
	double v;

	assert_int_equal(diff__parse_pct("5", &v), 0);
	near(v, 0.05, 1e-15);
	assert_int_equal(diff__parse_pct("0.5%", &v), 0);
	near(v, 0.005, 1e-15);
	assert_int_equal(diff__parse_pct("0", &v), 0);
	near(v, 0, 0);
	assert_int_equal(diff__parse_pct("-1", &v), -EINVAL);
	assert_int_equal(diff__parse_pct("5%%", &v), -EINVAL);
	assert_int_equal(diff__parse_pct("x", &v), -EINVAL);
	assert_int_equal(diff__parse_pct("", &v), -EINVAL);
}

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
	assert_non_null(strstr(out, "\nadded,prog,added,0,3,0,150,"));
	assert_non_null(strstr(out, "\ngone,prog,removed,3,0,150,0,"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_normal),
		cmocka_unit_test(test_mann_whitney),
		cmocka_unit_test(test_hodges_lehmann),
		cmocka_unit_test(test_student_t),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_weighted_median),
		cmocka_unit_test(test_holm),
		cmocka_unit_test(test_two_proportions),
		cmocka_unit_test(test_reservoir),
		cmocka_unit_test(test_reservoir_merge),
		cmocka_unit_test(test_parse_pct),
		cmocka_unit_test(test_diff_calls),
		cmocka_unit_test(test_diff_margin),
		cmocka_unit_test(test_diff_paths_json),
		cmocka_unit_test(test_diff_samples),
		cmocka_unit_test(test_diff_run_shift),
		cmocka_unit_test(test_diff_runs),
		cmocka_unit_test(test_diff_kinds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
