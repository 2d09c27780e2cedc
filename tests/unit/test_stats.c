// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff's statistics (report/stats.c) against values computed by hand (the
 * arithmetic is in the comments): quantiles, the normal distribution,
 * Mann-Whitney U, Hodges-Lehmann, Student's and Welch's t, the weighted
 * median, Holm, two proportions, the reservoir sample and its merge, and
 * the parsing of percentages.  The comparison itself: test_diff.c.
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
