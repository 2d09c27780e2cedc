// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Statistics for `bpfprof diff` (see stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "stats.h"

void reservoir__init(struct reservoir *r, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	/* splitmix64 of the seed: a nonzero, well-mixed xorshift state */
	seed += 0x9e3779b97f4a7c15ull;
	seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ull;
	seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebull;
	seed ^= seed >> 31;
	r->rng = seed ? seed : 1;
}

static uint64_t next_rand(struct reservoir *r)
{
	uint64_t x = r->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1): never 0, so its log is finite. */
static double unit_open(struct reservoir *r)
{
	return ((double)(next_rand(r) >> 11) + 0.5) / 9007199254740992.0;
}

/* Algorithm L's step: the key bound shrinks, and the gap to the next kept value is geometric. */
static void next_keep(struct reservoir *r)
{
	r->w *= exp(log(unit_open(r)) / RESERVOIR_MAX);
	r->next = r->seen + (uint64_t)floor(log(unit_open(r)) / log1p(-r->w)) + 1;
}

void reservoir__add(struct reservoir *r, uint64_t value)
{
	r->seen++;
	if (r->n < RESERVOIR_MAX) {
		/* grown by doubling: a function called 3 times costs 3 slots, not 2048 */
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 16;
			if (r->cap > RESERVOIR_MAX)
				r->cap = RESERVOIR_MAX;
			r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		r->v[r->n++] = value;
		if (r->n == RESERVOIR_MAX) {
			r->w = 1;
			next_keep(r);
		}
		return;
	}
	if (r->seen < r->next)
		return;
	r->v[next_rand(r) % RESERVOIR_MAX] = value;
	next_keep(r);
}

/* k values of r drawn without replacement to the front of r->v (partial Fisher-Yates). */
static void pick_front(struct reservoir *r, uint32_t k)
{
	uint32_t i;

	for (i = 0; i < k && i < r->n; i++) {
		uint32_t j = i + (uint32_t)(next_rand(r) % (r->n - i));
		uint64_t t = r->v[i];

		r->v[i] = r->v[j];
		r->v[j] = t;
	}
}

void reservoir__merge(struct reservoir *dst, struct reservoir *src)
{
	uint64_t seen = dst->seen + src->seen;
	uint32_t ka, kb, i;
	uint64_t *v;

	if (!src->seen)
		return;
	if (!dst->seen) {
		uint64_t rng = dst->rng ? dst->rng : src->rng;

		reservoir__free(dst);
		*dst = *src;
		dst->rng = rng;
		memset(src, 0, sizeof(*src));
		return;
	}
	if (dst->n + src->n <= RESERVOIR_MAX && dst->n == dst->seen && src->n == src->seen) {
		ka = dst->n;
		kb = src->n;
	} else {
		/* RESERVOIR_MAX slots shared as the streams' lengths are, within what each kept */
		ka = (uint32_t)((double)RESERVOIR_MAX * (double)dst->seen / (double)seen + 0.5);
		if (ka > dst->n)
			ka = dst->n;
		kb = RESERVOIR_MAX - ka;
		if (kb > src->n) {
			kb = src->n;
			ka = dst->n < RESERVOIR_MAX - kb ? dst->n : RESERVOIR_MAX - kb;
		}
	}
	pick_front(dst, ka);
	pick_front(src, kb);
	v = xmalloc((size_t)(ka + kb) * sizeof(*v));
	memcpy(v, dst->v, (size_t)ka * sizeof(*v));
	for (i = 0; i < kb; i++)
		v[ka + i] = src->v[i];
	free(dst->v);
	dst->v = v;
	dst->n = dst->cap = ka + kb;
	dst->seen = seen;
	reservoir__free(src);
	src->seen = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void reservoir__sort(struct reservoir *r)
{
	if (r->n)
		qsort(r->v, r->n, sizeof(*r->v), cmp_u64);
}

void reservoir__free(struct reservoir *r)
{
	free(r->v);
	r->v = NULL;
	r->n = r->cap = 0;
}

uint64_t stats__quantile(const uint64_t *sorted, size_t n, double q)
{
	double rank;
	size_t k;

	if (!n)
		return 0;
	/* nearest rank: the smallest value with at least q of the values at or below it */
	rank = ceil(q * (double)n - 1e-9);
	k = rank < 1 ? 1 : (size_t)rank;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

double stats__norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

double stats__norm_isf(double p)
{
	double lo = -40, hi = 40, mid;
	int i;

	/* bisection: 100 halvings of [-40, 40] are far below double precision */
	for (i = 0; i < 100; i++) {
		mid = (lo + hi) / 2;
		if (stats__norm_sf(mid) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void stats__mann_whitney(const double *x, size_t n, const double *y, size_t m, double shift,
			 struct mw_result *out)
{
	double N = (double)n + (double)m, ranks_y = 0, ties = 0, mean, var, sd;
	size_t i = 0, j = 0, pos = 0;

	memset(out, 0, sizeof(*out));
	out->p_greater = out->p_less = 1;
	if (!n || !m)
		return;
	/*
	 * One merge of the two sorted samples: each run of equal values gets
	 * the mean of the ranks it spans (midrank), and adds t^3 - t to the
	 * tie correction of the variance.
	 */
	while (i < n || j < m) {
		double v, midrank;
		size_t tx = 0, ty = 0, t;

		if (j >= m || (i < n && x[i] + shift < y[j]))
			v = x[i] + shift;
		else
			v = y[j];
		while (i < n && x[i] + shift == v) {
			i++;
			tx++;
		}
		while (j < m && y[j] == v) {
			j++;
			ty++;
		}
		t = tx + ty;
		midrank = (double)pos + ((double)t + 1) / 2;
		pos += t;
		ranks_y += midrank * (double)ty;
		if (t > 1)
			ties += (double)t * (double)t * (double)t - (double)t;
	}
	out->u = ranks_y - (double)m * ((double)m + 1) / 2;
	mean = (double)n * (double)m / 2;
	var = (double)n * (double)m / 12 * ((N + 1) - ties / (N * (N - 1)));
	if (var <= 0)
		return;		/* every value equal: no evidence either way */
	sd = sqrt(var);
	out->z = (out->u - mean) / sd;
	out->p_greater = stats__norm_sf((out->u - mean - 0.5) / sd);
	out->p_less = stats__norm_sf((mean - out->u - 0.5) / sd);
	if (out->p_greater > 1)
		out->p_greater = 1;
	if (out->p_less > 1)
		out->p_less = 1;
}

/* Pairs with y_j - x_i <= d: for each y_j, the x_i >= y_j - d (a moving pointer). */
static double count_le(const double *x, size_t n, const double *y, size_t m, double d)
{
	double c = 0;
	size_t i = 0, j;

	for (j = 0; j < m; j++) {
		while (i < n && x[i] < y[j] - d)
			i++;
		c += (double)(n - i);
	}
	return c;
}

/* The k-th smallest difference y_j - x_i (1 <= k <= n*m), to ~1e-12 of the range. */
static double kth_diff(const double *x, size_t n, const double *y, size_t m, double k)
{
	double lo = y[0] - x[n - 1], hi = y[m - 1] - x[0], mid;
	int it;

	if (count_le(x, n, y, m, lo) >= k)
		return lo;
	/* invariant: count(lo) < k <= count(hi) */
	for (it = 0; it < 200 && hi - lo > 1e-12 * (fabs(lo) + fabs(hi) + 1e-300); it++) {
		mid = lo + (hi - lo) / 2;
		if (mid <= lo || mid >= hi)
			break;
		if (count_le(x, n, y, m, mid) >= k)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

void stats__hodges_lehmann(const double *x, size_t n, const double *y, size_t m, double alpha,
			   double *est, double *lo, double *hi)
{
	double nm = (double)n * (double)m, z, c;

	*est = 0;
	*lo = -INFINITY;
	*hi = INFINITY;
	if (!n || !m)
		return;
	if (fmod(nm, 2) == 1)
		*est = kth_diff(x, n, y, m, (nm + 1) / 2);
	else
		*est = (kth_diff(x, n, y, m, nm / 2) + kth_diff(x, n, y, m, nm / 2 + 1)) / 2;
	/* the interval's ends are the c-th smallest and c-th largest differences */
	z = stats__norm_isf(alpha / 2);
	c = floor(nm / 2 - z * sqrt(nm * ((double)n + (double)m + 1) / 12));
	if (c < 1)
		return;
	*lo = kth_diff(x, n, y, m, c);
	*hi = kth_diff(x, n, y, m, nm - c + 1);
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *a, const void *b)
{
	const struct pidx *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void stats__holm(double *p, size_t n)
{
	struct pidx *v;
	double run = 0;
	size_t k;

	if (!n)
		return;
	v = xcalloc(n, sizeof(*v));
	for (k = 0; k < n; k++) {
		v[k].p = p[k];
		v[k].i = k;
	}
	qsort(v, n, sizeof(*v), cmp_pidx);
	/* the k-th smallest is multiplied by n - k, and never below the one before */
	for (k = 0; k < n; k++) {
		double a = v[k].p * (double)(n - k);

		if (a > 1)
			a = 1;
		if (a < run)
			a = run;
		run = a;
		p[v[k].i] = a;
	}
	free(v);
}

double stats__two_proportions(uint64_t a, uint64_t n1, uint64_t b, uint64_t n2)
{
	double p, se, z;

	if (!n1 || !n2)
		return 1;
	p = ((double)a + (double)b) / ((double)n1 + (double)n2);
	se = sqrt(p * (1 - p) * (1 / (double)n1 + 1 / (double)n2));
	if (!(se > 0))
		return 1;
	z = fabs((double)a / (double)n1 - (double)b / (double)n2) / se;
	p = 2 * stats__norm_sf(z);
	return p > 1 ? 1 : p;
}

/*
 * P(|T| < t) for Student's t with df degrees of freedom, df a whole number:
 * the finite series in theta = atan(t / sqrt(df)) (Abramowitz & Stegun
 * 26.7.3 and 26.7.4): exact, no continued fraction.
 */
static double t_central(double t, unsigned df)
{
	double th = atan(t / sqrt((double)df)), c = cos(th), c2 = c * c, s = sin(th), term, sum;
	unsigned k;

	if (df % 2) {
		if (df == 1)
			return 2 * th / M_PI;
		term = c;
		sum = c;
		for (k = 3; k + 2 <= df; k += 2) {
			term *= c2 * (double)(k - 1) / (double)k;
			sum += term;
		}
		return 2 / M_PI * (th + s * sum);
	}
	term = 1;
	sum = 1;
	for (k = 2; k + 2 <= df; k += 2) {
		term *= c2 * (double)(k - 1) / (double)k;
		sum += term;
	}
	return s * sum;
}

double stats__t_sf(double t, double df)
{
	unsigned n = df >= 1e6 ? 1000000u : df < 1 ? 1u : (unsigned)df;
	double a;

	if (isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 0 : 1;
	a = t_central(fabs(t), n);
	a = a > 1 ? 1 : a < 0 ? 0 : a;
	return t >= 0 ? (1 - a) / 2 : (1 + a) / 2;
}

double stats__t_isf(double p, double df)
{
	double lo = -1e6, hi = 1e6, mid;
	int i;

	for (i = 0; i < 200; i++) {
		mid = (lo + hi) / 2;
		if (stats__t_sf(mid, df) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void stats__welch(const double *x, size_t n, const double *y, size_t m, struct welch_result *out)
{
	double mx = 0, my = 0, vx = 0, vy = 0, a, b;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->se = out->df = NAN;
	if (n < 2 || m < 2)
		return;
	for (i = 0; i < n; i++)
		mx += x[i];
	for (i = 0; i < m; i++)
		my += y[i];
	mx /= (double)n;
	my /= (double)m;
	for (i = 0; i < n; i++)
		vx += (x[i] - mx) * (x[i] - mx);
	for (i = 0; i < m; i++)
		vy += (y[i] - my) * (y[i] - my);
	vx /= (double)(n - 1);
	vy /= (double)(m - 1);
	a = vx / (double)n;
	b = vy / (double)m;
	out->diff = my - mx;
	out->se = sqrt(a + b);
	/* Welch-Satterthwaite, rounded down (conservative: fewer degrees, wider tails) */
	if (a + b > 0)
		out->df = floor((a + b) * (a + b) /
				(a * a / (double)(n - 1) + b * b / (double)(m - 1)));
	else
		out->df = (double)(n + m - 2);
	if (out->df < 1)
		out->df = 1;
}

struct wv {
	double v, w;
};

static int cmp_wv(const void *a, const void *b)
{
	const struct wv *x = a, *y = b;

	return x->v < y->v ? -1 : x->v > y->v;
}

double stats__weighted_median(const double *v, const double *w, size_t n)
{
	struct wv *p;
	double total = 0, acc = 0, r = NAN;
	size_t i, k = 0;

	p = xcalloc(n ? n : 1, sizeof(*p));
	for (i = 0; i < n; i++)
		if (!isnan(v[i]) && w[i] > 0) {
			p[k].v = v[i];
			p[k++].w = w[i];
			total += w[i];
		}
	qsort(p, k, sizeof(*p), cmp_wv);
	for (i = 0; i < k; i++) {
		acc += p[i].w;
		if (acc >= total / 2) {
			/* exactly half: the midpoint of the two middle values */
			r = acc == total / 2 && i + 1 < k ? (p[i].v + p[i + 1].v) / 2 : p[i].v;
			break;
		}
	}
	free(p);
	return r;
}
