// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: the statistics of the comparison (diff.c reads both sides, this
 * tests them): per-call tests for one recording a side, the test across
 * runs for several, the whole run's shift, sample shares.  The model and
 * its assumptions: README.md, "diff".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "diff.h"
#include "stats.h"
#include "internal.h"

/*
 * Fewer functions than this and the whole run's shift is not estimated: with
 * two or three, one changed function moves their median.
 */
#define GLOBAL_MIN_FUNCS 4

/*
 * A function's weight in the whole run's shift: its timed calls (the fewer
 * side's) over 100, at most 1: a function with a handful of calls has a
 * noisy shift, and no single busy function outweighs the others (a
 * regressed hot function must not pass for the machine).
 */
static double func_weight(uint64_t nb, uint64_t nn)
{
	double n = (double)(nb < nn ? nb : nn) / 100;

	return n > 1 ? 1 : n;
}

/*
 * The timed calls a test uses of n sorted ones: the faster quarter (at least
 * min_calls of them, for the normal approximation), or all (--all-calls).
 */
static size_t tested_calls(const struct diff *d, size_t n)
{
	size_t k = (n + 3) / 4;

	if (d->o.all_calls)
		return n;
	return k >= d->o.min_calls ? k : n < d->o.min_calls ? n : d->o.min_calls;
}

/* One row's common columns; false when the function is not comparable (added, removed). */
static bool init_row(struct diff *d, struct frow *r, size_t i)
{
	const struct side_func *b = &d->side[0].funcs[i], *n = &d->side[1].funcs[i];

	r->func = i;
	r->dtotal = (int64_t)n->total - (int64_t)b->total;
	r->ratio = b->p50 ? (double)n->p50 / (double)b->p50 : NAN;
	r->shift = r->ci_lo = r->ci_hi = r->raw_shift = NAN;
	r->p_raw = r->p_adj = NAN;
	if (!b->calls) {
		r->v = V_ADDED;
		return false;
	}
	if (!n->calls) {
		r->v = V_REMOVED;
		return false;
	}
	return true;
}

/* Holm over the rows tested, and their verdicts. */
static void verdicts(struct diff *d)
{
	double *p = xcalloc(d->nrows ? d->nrows : 1, sizeof(*p));
	size_t i, k = 0;

	for (i = 0; i < d->nrows; i++)
		if (d->rows[i].tested)
			p[k++] = d->rows[i].p_raw;
	stats__holm(p, k);
	for (i = 0, k = 0; i < d->nrows; i++) {
		struct frow *r = &d->rows[i];

		if (!r->tested)
			continue;
		r->p_adj = p[k++];
		if (r->p_adj < d->o.alpha)
			r->v = r->shift >= 1 ? V_SLOWER : V_FASTER;
		else
			r->v = V_SAME;
	}
	free(p);
}

/*
 * One recording per side: the per-call test.  Each function's shift (the
 * Hodges-Lehmann estimate on the faster quarter of each side's timed calls) is
 * first estimated alone; their weighted median is the whole run's shift
 * (the machine: frequency, load, or a change of everything); then each
 * function is tested against it, Mann-Whitney U against the margin around
 * the whole run's shift, and its shift and interval are shown relative to it.
 */
void diff_calls_one(struct diff *d)
{
	double margin = log1p(d->o.min_change);
	double *est = xcalloc(d->ngf ? d->ngf : 1, sizeof(*est));
	double *w = xcalloc(d->ngf ? d->ngf : 1, sizeof(*w));
	double *lo = xcalloc(d->ngf ? d->ngf : 1, sizeof(*lo));
	double *hi = xcalloc(d->ngf ? d->ngf : 1, sizeof(*hi));
	size_t i, ntested = 0;
	double g = 0;

	d->rows = xcalloc(d->ngf ? d->ngf : 1, sizeof(*d->rows));
	for (i = 0; i < d->ngf; i++) {
		const struct side_func *b = &d->side[0].funcs[i], *n = &d->side[1].funcs[i];
		struct frow *r = &d->rows[d->nrows];

		est[d->nrows] = NAN;
		if (!b->calls && !n->calls)
			continue;
		d->nrows++;
		if (!init_row(d, r, i))
			continue;
		if (b->res.n < d->o.min_calls || n->res.n < d->o.min_calls) {
			r->v = V_FEW;
			continue;
		}
		stats__hodges_lehmann(b->logs, tested_calls(d, b->res.n), n->logs,
				      tested_calls(d, n->res.n), d->o.alpha, &est[d->nrows - 1],
				      &lo[d->nrows - 1], &hi[d->nrows - 1]);
		w[d->nrows - 1] = func_weight(b->res.seen, n->res.seen);
		r->tested = true;
		ntested++;
	}
	if (ntested >= GLOBAL_MIN_FUNCS) {
		g = stats__weighted_median(est, w, d->nrows);
		d->g_known = !isnan(g);
		if (!d->g_known)
			g = 0;
		d->g = g;
		d->g_n = ntested;
	}
	for (i = 0; i < d->nrows; i++) {
		struct frow *r = &d->rows[i];
		const struct side_func *b = &d->side[0].funcs[r->func], *n = &d->side[1].funcs[r->func];
		size_t nb = tested_calls(d, b->res.n), nn = tested_calls(d, n->res.n);
		struct mw_result up, down;

		if (!r->tested)
			continue;
		/*
		 * Against the margin around the whole run's shift: "new is slower
		 * than base * run * (1 + m)" and "faster than base * run / (1 + m)",
		 * each one-sided; the smaller p doubled (both directions were looked
		 * at).  With m = 0 and no run shift, the ordinary two-sided test.
		 */
		stats__mann_whitney(b->logs, nb, n->logs, nn, g + margin, &up);
		stats__mann_whitney(b->logs, nb, n->logs, nn, g - margin, &down);
		r->p_raw = 2 * (up.p_greater < down.p_less ? up.p_greater : down.p_less);
		if (r->p_raw > 1)
			r->p_raw = 1;
		r->raw_shift = exp(est[i]);
		r->shift = exp(est[i] - g);
		r->ci_lo = exp(lo[i] - g);
		r->ci_hi = exp(hi[i] - g);
	}
	verdicts(d);
	free(est);
	free(w);
	free(lo);
	free(hi);
}

/* The valid (not NAN) values of a function's per-run estimates, less the runs' shifts. */
static size_t run_values(const struct side_func *f, uint32_t nruns, const double *gr, double *out)
{
	size_t k = 0;
	uint32_t r;

	for (r = 0; r < nruns && r < f->nrm; r++)
		if (!isnan(f->rm[r]))
			out[k++] = f->rm[r] - (gr ? gr[r] : 0);
	return k;
}

/* Welch's t against +-margin: the two one-sided p's, the smaller doubled. */
static double welch_p(const struct welch_result *w, double margin)
{
	double up, down, p;

	if (!(w->se > 0))
		return fabs(w->diff) > margin ? 0 : 1;	/* no spread at all */
	up = stats__t_sf((w->diff - margin) / w->se, w->df);
	down = stats__t_sf(-(w->diff + margin) / w->se, w->df);
	p = 2 * (up < down ? up : down);
	return p > 1 ? 1 : p;
}

/*
 * Several recordings per side: the test across runs.  Calls of one run
 * share its machine state (frequency, cache, neighbours), so a run, not a
 * call, is the unit that varies independently.  Per function and run, the
 * run's estimate (run_estimate()); per run, its shift (the weighted median
 * over the functions of the run's estimates less each function's median
 * over all runs); each function's estimates less its run's shift are
 * compared between the sides with Welch's t, against the margin; the whole
 * run's shift is the runs' shifts compared the same way.
 */
void diff_calls_runs(struct diff *d)
{
	uint32_t nr[2] = { d->side[0].nruns, d->side[1].nruns }, maxr, s, r;
	double margin = log1p(d->o.min_change), *gr[2], *c, *w, *tmp, *vals, *x, *y;
	size_t i, ntested = 0, k;
	struct welch_result wr;

	maxr = nr[0] > nr[1] ? nr[0] : nr[1];
	d->by_runs = true;
	d->rows = xcalloc(d->ngf ? d->ngf : 1, sizeof(*d->rows));
	c = xcalloc(d->ngf ? d->ngf : 1, sizeof(*c));
	w = xcalloc(d->ngf ? d->ngf : 1, sizeof(*w));
	/* per function below, and the weights of a function's runs (2 * maxr) here */
	tmp = xcalloc(d->ngf > 2 * (size_t)maxr ? d->ngf : 2 * (size_t)maxr + 1, sizeof(*tmp));
	vals = xcalloc(2 * (size_t)maxr, sizeof(*vals));
	x = xcalloc(maxr, sizeof(*x));
	y = xcalloc(maxr, sizeof(*y));
	gr[0] = xcalloc(maxr, sizeof(double));
	gr[1] = xcalloc(maxr, sizeof(double));
	for (i = 0; i < d->ngf; i++) {
		const struct side_func *b = &d->side[0].funcs[i], *n = &d->side[1].funcs[i];
		struct frow *r = &d->rows[d->nrows];
		size_t kb, kn;

		if (!b->calls && !n->calls)
			continue;
		d->nrows++;
		if (!init_row(d, r, i))
			continue;
		kb = run_values(b, nr[0], NULL, vals);
		kn = run_values(n, nr[1], NULL, vals + kb);
		if (kb < 2 || kn < 2) {
			r->v = V_FEW;	/* fewer than 2 runs a side with min_calls timed calls */
			continue;
		}
		for (k = 0; k < kb + kn; k++)
			tmp[k] = 1;
		c[d->nrows - 1] = stats__weighted_median(vals, tmp, kb + kn);
		w[d->nrows - 1] = func_weight(b->res.seen / nr[0], n->res.seen / nr[1]);
		r->tested = true;
		ntested++;
	}
	if (ntested >= GLOBAL_MIN_FUNCS) {
		for (s = 0; s < 2; s++)
			for (r = 0; r < nr[s]; r++) {
				for (i = 0; i < d->nrows; i++) {
					const struct side_func *f = &d->side[s].funcs[d->rows[i].func];

					tmp[i] = d->rows[i].tested && r < f->nrm ? f->rm[r] - c[i] : NAN;
				}
				gr[s][r] = stats__weighted_median(tmp, w, d->nrows);
				if (isnan(gr[s][r]))
					gr[s][r] = 0;
			}
		stats__welch(gr[0], nr[0], gr[1], nr[1], &wr);
		d->g_known = true;
		d->g_n = ntested;
		d->g = wr.diff;
		if (wr.se > 0) {
			double t = stats__t_isf(d->o.alpha / 2, wr.df);

			d->g_p = 2 * stats__t_sf(fabs(wr.diff) / wr.se, wr.df);
			d->g_lo = wr.diff - t * wr.se;
			d->g_hi = wr.diff + t * wr.se;
		} else {
			d->g_p = wr.diff ? 0 : 1;
			d->g_lo = d->g_hi = wr.diff;
		}
	}
	for (i = 0; i < d->nrows; i++) {
		struct frow *row = &d->rows[i];
		const struct side_func *b = &d->side[0].funcs[row->func];
		const struct side_func *n = &d->side[1].funcs[row->func];
		size_t kb, kn;
		double t;

		if (!row->tested)
			continue;
		kb = run_values(b, nr[0], NULL, x);
		kn = run_values(n, nr[1], NULL, y);
		stats__welch(x, kb, y, kn, &wr);
		row->raw_shift = exp(wr.diff);
		kb = run_values(b, nr[0], d->g_known ? gr[0] : NULL, x);
		kn = run_values(n, nr[1], d->g_known ? gr[1] : NULL, y);
		stats__welch(x, kb, y, kn, &wr);
		row->p_raw = welch_p(&wr, margin);
		t = wr.se > 0 ? stats__t_isf(d->o.alpha / 2, wr.df) : 0;
		row->shift = exp(wr.diff);
		row->ci_lo = exp(wr.diff - t * wr.se);
		row->ci_hi = exp(wr.diff + t * wr.se);
	}
	verdicts(d);
	free(c);
	free(w);
	free(tmp);
	free(vals);
	free(x);
	free(y);
	free(gr[0]);
	free(gr[1]);
}

/* A row of shares tested with the two-proportion test; a, b: counts; na, nb: side totals. */
static void share_row(struct diff *d, struct frow *r, uint64_t a, uint64_t na, uint64_t b,
		      uint64_t nb)
{
	r->share[0] = na ? (double)a / (double)na : 0;
	r->share[1] = nb ? (double)b / (double)nb : 0;
	/* sort key: change in share, in millionths */
	r->dtotal = (int64_t)llround((r->share[1] - r->share[0]) * 1e6);
	r->p_raw = r->p_adj = NAN;
	if (!a && b) {
		r->v = V_ADDED;
	} else if (a && !b) {
		r->v = V_REMOVED;
	} else if (a + b < d->o.min_calls) {
		r->v = V_FEW;
	} else {
		r->p_raw = stats__two_proportions(a, na, b, nb);
		r->tested = true;
	}
}

static void holm_rows(struct diff *d, struct frow *rows, size_t nrows)
{
	double *p = xcalloc(nrows ? nrows : 1, sizeof(*p));
	size_t i, k = 0;

	for (i = 0; i < nrows; i++)
		if (rows[i].tested)
			p[k++] = rows[i].p_raw;
	stats__holm(p, k);
	for (i = 0, k = 0; i < nrows; i++) {
		if (!rows[i].tested)
			continue;
		rows[i].p_adj = p[k++];
		if (rows[i].p_adj < d->o.alpha)
			rows[i].v = rows[i].share[1] > rows[i].share[0] ? V_SLOWER : V_FASTER;
		else
			rows[i].v = V_SAME;
	}
	free(p);
}

/* Sample mode: per function (self share tested, inclusive share shown) and per stack. */
void diff_samples(struct diff *d)
{
	uint64_t na = d->side[0].nsamples, nb = d->side[1].nsamples;
	size_t i;

	d->rows = xcalloc(d->ngf ? d->ngf : 1, sizeof(*d->rows));
	for (i = 0; i < d->ngf; i++) {
		const struct side_func *b = &d->side[0].funcs[i], *n = &d->side[1].funcs[i];
		struct frow *r;

		if (!b->samp_total && !n->samp_total)
			continue;
		r = &d->rows[d->nrows++];
		r->func = i;
		/*
		 * The inclusive share is tested: with library leaves (clock_gettime,
		 * memcpy) under a program's function, its own self share says little
		 * of the time spent on its behalf.  The self share is shown.
		 */
		share_row(d, r, b->samp_total, na, n->samp_total, nb);
		r->sshare[0] = na ? (double)b->samp_self / (double)na : 0;
		r->sshare[1] = nb ? (double)n->samp_self / (double)nb : 0;
	}
	holm_rows(d, d->rows, d->nrows);
	d->srows = xcalloc(d->ndp, sizeof(*d->srows));
	for (i = 1; i < d->ndp; i++) {
		uint64_t a = d->side[0].paths[i].samples, b = d->side[1].paths[i].samples;
		struct frow *r;

		if (!a && !b)
			continue;
		r = &d->srows[d->nsrows++];
		r->func = i;
		share_row(d, r, a, na, b, nb);
	}
	holm_rows(d, d->srows, d->nsrows);
}

