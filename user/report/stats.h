/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The statistics of `bpfprof diff`: a bounded uniform sample of per-call
 * durations (reservoir), the Mann-Whitney U test and the Hodges-Lehmann
 * shift estimate with its confidence interval (distribution-free: latency
 * distributions are skewed, multimodal and long-tailed, so nothing here
 * assumes normality), Holm's correction for many comparisons, and the test
 * of two proportions used for sample counts.
 *
 * Pure functions of their inputs, no allocation except the reservoir's:
 * unit-tested against hand-computed values (tests/unit/test_stats.c).
 */
#ifndef BPFPROF_STATS_H
#define BPFPROF_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A uniform random sample of at most RESERVOIR_MAX values of a stream
 * (Li's algorithm L: once full, it draws how many values to skip before the
 * next one it keeps, so a value it skips costs a compare, not a random
 * number and a division): every value seen has the same chance to be kept,
 * whatever the stream's length, so memory is bounded by RESERVOIR_MAX per
 * reservoir, not by calls.  Exact (every value) while seen <= RESERVOIR_MAX.
 * The generator is seeded by the caller: the same inputs give the same
 * sample, so a diff is reproducible.
 */
#define RESERVOIR_MAX	2048

struct reservoir {
	uint64_t *v;
	uint32_t n, cap;	/* kept, allocated */
	uint64_t seen;
	uint64_t rng;		/* xorshift64* state, never 0 */
	uint64_t next;		/* once full: the count (seen) at which the next value is kept */
	double w;		/* algorithm L's running maximum of the keys */
};

void reservoir__init(struct reservoir *r, uint64_t seed);
void reservoir__add(struct reservoir *r, uint64_t value);
/*
 * Moves src into dst as one sample of both streams: the kept values are
 * drawn from each in proportion to what each has seen (exact when both
 * are and fit together).  src is left empty.
 */
void reservoir__merge(struct reservoir *dst, struct reservoir *src);
/* Sorts the kept values ascending (for the quantiles and the tests). */
void reservoir__sort(struct reservoir *r);
void reservoir__free(struct reservoir *r);

/* Nearest-rank quantile q (0 < q <= 1) of n sorted values; 0 when n is 0. */
uint64_t stats__quantile(const uint64_t *sorted, size_t n, double q);

/* Upper tail of the standard normal distribution, P(Z > z). */
double stats__norm_sf(double z);
/* The z with P(Z > z) = p, 0 < p < 1. */
double stats__norm_isf(double p);

struct mw_result {
	double u;		/* U of y: pairs (x_i, y_j) with y_j > x_i, ties counting 1/2 */
	double z;		/* (u - nm/2) / sigma, no continuity correction */
	double p_greater;	/* one-sided p of "y is stochastically larger" */
	double p_less;		/* one-sided p of "y is stochastically smaller" */
};

/*
 * The Mann-Whitney U test of y (m values) against x + shift (n values), both
 * sorted ascending: midranks for ties, the tie-corrected variance, the normal
 * approximation with a continuity correction (good from about 10 values a
 * side; the caller refuses fewer).  All values tied: p = 1 both ways.
 */
void stats__mann_whitney(const double *x, size_t n, const double *y, size_t m, double shift,
			 struct mw_result *out);

/*
 * The Hodges-Lehmann estimate of the shift t in "y is distributed as x + t"
 * (the median of the n*m differences y_j - x_i) and its 1 - alpha confidence
 * interval by inverting the Mann-Whitney test (the k-th smallest and largest
 * differences, k from the normal approximation of U).  x and y sorted.
 * Differences are never stored: the k-th one is found by bisection over a
 * count that takes O(n + m).  lo/hi are -inf/+inf when too few values for
 * the level.
 */
void stats__hodges_lehmann(const double *x, size_t n, const double *y, size_t m, double alpha,
			   double *est, double *lo, double *hi);

/* Holm's step-down adjustment of n p-values, in place (order kept). */
void stats__holm(double *p, size_t n);

/*
 * Two-sided p of the test that a of n1 and b of n2 come from one proportion
 * (pooled two-proportion z test, equivalent to the chi-square test of the
 * 2x2 table).  1 when either n is 0 or the pooled share is 0 or 1.
 */
double stats__two_proportions(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2);

/* Upper tail P(T > t) of Student's t with floor(df) degrees of freedom (df >= 1). */
double stats__t_sf(double t, double df);
/* The t with P(T > t) = p, 0 < p < 1. */
double stats__t_isf(double p, double df);

struct welch_result {
	double diff;	/* mean of y - mean of x */
	double se;	/* its standard error; NAN when a side has fewer than 2 values */
	double df;	/* Welch-Satterthwaite degrees of freedom, rounded down, >= 1 */
};

/* Welch's unequal-variance comparison of the means of x (n) and y (m). */
void stats__welch(const double *x, size_t n, const double *y, size_t m, struct welch_result *out);

/*
 * The weighted median of n values (NAN values and weights <= 0 skipped):
 * the smallest value at which the cumulative weight reaches half, or the
 * midpoint of two values the half falls exactly between.  NAN when none.
 */
double stats__weighted_median(const double *v, const double *w, size_t n);

#endif
