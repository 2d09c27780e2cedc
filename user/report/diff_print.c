// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: printing the comparison (diff.c builds it): pretty tables, the
 * call-path tree and the CI gate; JSON, CSV and differential folded stacks
 * are diff_formats.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/escape.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "diff.h"
#include "stats.h"
#include "internal.h"

/* Sorted: what got slower (most added time, or share) first, then by name. */
static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct frow *x = a, *y = b;
	const struct diff *d = arg;
	int c;

	if (x->dtotal != y->dtotal)
		return x->dtotal < y->dtotal ? 1 : -1;
	c = strcmp(d->gf[x->func].name, d->gf[y->func].name);
	if (c)
		return c;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Stack rows: by the size of the change in share, then by path id. */
static int cmp_srows(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;
	int64_t ax = llabs(x->dtotal), ay = llabs(y->dtotal);

	if (ax != ay)
		return ax < ay ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static const char *dur(uint64_t ns, char *buf, size_t len)
{
	return fmt_duration(ns, buf, len);
}

static void fmt_ratio(char *buf, size_t len, double r)
{
	if (isnan(r))
		snprintf(buf, len, "-");
	else if (isinf(r))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, r >= 100 ? "%.0fx" : "%.3fx", r);
}

static void fmt_p(char *buf, size_t len, double p)
{
	if (isnan(p))
		snprintf(buf, len, "-");
	else if (p < 1e-4)
		snprintf(buf, len, "<1e-4");
	else
		snprintf(buf, len, "%.4f", p);
}

/* The folded stack of dpath p (outermost first); `sep` between frames. */
void diff_put_path(const struct diff *d, FILE *f, uint32_t p, bool folded)
{
	uint32_t frames[512];
	size_t n = 0;

	for (; p && n < 512; p = d->dp[p].parent)
		frames[n++] = p;
	if (p)
		fputs(folded ? "[deeper frames truncated];" : "... ", f);
	while (n--) {
		if (folded)
			folded_str(f, d->gf[d->dp[frames[n]].func].name);
		else
			fputs(d->gf[d->dp[frames[n]].func].name, f);
		if (n)
			fputs(folded ? ";" : " > ", f);
	}
}

/* "4.1% slower", "2.3% faster", "as fast" for a log shift g. */
static void fmt_run_shift(char *buf, size_t len, double g)
{
	double r = exp(g);

	if (fabs(r - 1) < 0.0005)
		snprintf(buf, len, "as fast (0.0%%)");
	else if (r > 1)
		snprintf(buf, len, "%.1f%% slower", (r - 1) * 100);
	else
		snprintf(buf, len, "%.1f%% faster", (1 / r - 1) * 100);
}

/* The whole run's shift, on its own line (calls mode). */
static void print_run_shift(const struct diff *d, FILE *f)
{
	char b[48];

	if (!d->g_known) {
		fprintf(f, "the whole run's shift is not estimated (%s): the shifts below are each "
			   "function's own\n", d->by_runs ? "fewer than 4 functions with 2 runs a side" :
			"fewer than 4 functions tested");
		return;
	}
	fmt_run_shift(b, sizeof(b), d->g);
	if (d->by_runs)
		fprintf(f, "the whole run is %s (%.3fx, %.3g%% interval %.3fx-%.3fx, p %.2g over %u+%u "
			   "runs): %s; the shifts below are relative to it (%zu functions)\n", b,
			exp(d->g), (1 - d->o.alpha) * 100, exp(d->g_lo), exp(d->g_hi), d->g_p,
			d->side[0].nruns, d->side[1].nruns,
			d->g_p < d->o.alpha ? "machine or global change" : "within run-to-run noise",
			d->g_n);
	else
		fprintf(f, "the whole run is %s (%.3fx, the weighted median of %zu functions' shifts): "
			   "machine or global change; the shifts below are relative to it\n", b,
			exp(d->g), d->g_n);
}

static void print_header_pretty(const struct diff *d, FILE *f)
{
	const char *names[2] = { "base", "new" };
	char b1[32];
	int i;

	for (i = 0; i < 2; i++) {
		const struct side *sd = &d->side[i];

		if (sd->nruns > 1)
			fprintf(f, "%-5s %u runs: %s: %s   duration: %s   calls: %" PRIu64
				"   samples: %" PRIu64 "   lost records: %" PRIu64 "\n", names[i],
				sd->nruns, sd->label, sd->cmdline, dur(sd->duration, b1, sizeof(b1)),
				sd->ncalls, sd->nsamples, sd->lost);
		else
			fprintf(f, "%-5s %s: %s   duration: %s   calls: %" PRIu64 "   samples: %" PRIu64
				"   lost records: %" PRIu64 "\n", names[i], sd->label, sd->cmdline,
				dur(sd->duration, b1, sizeof(b1)), sd->ncalls, sd->nsamples, sd->lost);
	}
	if (d->mode == DIFF_CALLS && d->by_runs)
		fprintf(f, "test: across runs, Welch's t on each run's %s per call (log; runs with "
			   "at least %" PRIu64 " timed calls), less each run's shift; changes within "
			   "%.3g%% not counted, Holm-corrected, alpha %.3g; ratio = p50 new/base (all "
			   "runs), shift = ratio of the runs' mean and its %.3g%% interval\n",
			d->o.all_calls ? "median" : "p12.5 (median of the faster quarter)", d->o.min_calls,
			d->o.min_change * 100, d->o.alpha, (1 - d->o.alpha) * 100);
	else if (d->mode == DIFF_CALLS)
		fprintf(f, "test: Mann-Whitney U on per-call durations (%s of a uniform sample of up "
			   "to %d calls per function and side), changes within %.3g%% of the whole "
			   "run's shift not counted, Holm-corrected, alpha %.3g; ratio = p50 new/base, "
			   "shift = Hodges-Lehmann ratio and its %.3g%% interval\n",
			d->o.all_calls ? "all" : "the faster quarter", RESERVOIR_MAX,
			d->o.min_change * 100, d->o.alpha, (1 - d->o.alpha) * 100);
	else
		fprintf(f, "test: two-proportion test of on-cpu sample shares (functions: inclusive "
			   "share), Holm-corrected, alpha %.3g\n\n", d->o.alpha);
	if (d->mode == DIFF_CALLS) {
		print_run_shift(d, f);
		fputc('\n', f);
	}
}

static size_t shown(const struct diff *d, size_t n)
{
	return d->o.top && d->o.top < n ? d->o.top : n;
}

static void print_calls_pretty(struct diff *d, FILE *f)
{
	char b[12][32], r1[32], r2[32], r3[32], r4[32], pv[32];
	size_t i;

	fprintf(f, "%19s %19s %19s %19s %19s %19s %8s %-27s %6s  %-9s %s\n", "calls", "total", "self",
		"p50", "p90", "p99", "p50", "shift", "p", "", "");
	fprintf(f, "%9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %8s %-27s %6s  %-9s %s\n", "base",
		"new", "base", "new", "base", "new", "base", "new", "base", "new", "base", "new", "ratio",
		"[interval]", "(adj)", "verdict", "function");
	for (i = 0; i < shown(d, d->nrows); i++) {
		const struct frow *r = &d->rows[i];
		const struct side_func *x = &d->side[0].funcs[r->func], *y = &d->side[1].funcs[r->func];
		char interval[128];

		snprintf(b[0], 32, "%" PRIu64, x->calls);
		snprintf(b[1], 32, "%" PRIu64, y->calls);
		dur(x->total, b[2], 32);
		dur(y->total, b[3], 32);
		dur(x->self, b[4], 32);
		dur(y->self, b[5], 32);
		dur(x->p50, b[6], 32);
		dur(y->p50, b[7], 32);
		dur(x->p90, b[8], 32);
		dur(y->p90, b[9], 32);
		dur(x->p99, b[10], 32);
		dur(y->p99, b[11], 32);
		fmt_ratio(r1, sizeof(r1), r->ratio);
		fmt_ratio(r2, sizeof(r2), r->shift);
		fmt_ratio(r3, sizeof(r3), r->ci_lo);
		fmt_ratio(r4, sizeof(r4), r->ci_hi);
		if (r->tested)
			snprintf(interval, sizeof(interval), "%s [%s, %s]", r2, r3, r4);
		else
			snprintf(interval, sizeof(interval), "-");
		fmt_p(pv, sizeof(pv), r->p_adj);
		fprintf(f, "%9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %8s %-27s %6s  %-9s %s\n",
			x->calls ? b[0] : "-", y->calls ? b[1] : "-", x->calls ? b[2] : "-",
			y->calls ? b[3] : "-", x->calls ? b[4] : "-", y->calls ? b[5] : "-",
			x->res.n ? b[6] : "-", y->res.n ? b[7] : "-", x->res.n ? b[8] : "-",
			y->res.n ? b[9] : "-", x->res.n ? b[10] : "-", y->res.n ? b[11] : "-", r1,
			interval, pv, verdict_name[r->v], d->gf[r->func].name);
	}
	if (shown(d, d->nrows) < d->nrows)
		fprintf(f, "(%zu more functions; --top 0 shows all)\n", d->nrows - shown(d, d->nrows));
}

/* Inclusive time of the outermost calls of one side: the scale of "where time moved". */
static uint64_t side_root_total(const struct diff *d, int side)
{
	uint64_t t = 0;
	uint32_t c;

	for (c = d->first_child[0]; c; c = d->next_sibling[c])
		t += d->side[side].paths[c].total;
	return t;
}

/* A path is shown when its total or self time moved by at least this much. */
static uint64_t path_threshold(const struct diff *d)
{
	uint64_t a = side_root_total(d, 0), b = side_root_total(d, 1);

	if (d->o.all_paths)
		return 0;
	/* 0.5% of the larger recording's traced time */
	return (a > b ? a : b) / 200;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static bool path_shown(const struct diff *d, uint32_t p, uint64_t thr)
{
	const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];

	if (!x->calls && !y->calls)
		return false;
	return !thr || absdiff(x->total, y->total) >= thr || absdiff(x->self, y->self) >= thr;
}

struct walk {
	uint32_t *kids;
	size_t nkids, next;
};

static int cmp_kids(const void *a, const void *b, void *arg)
{
	const struct diff *d = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int64_t di = (int64_t)d->side[1].paths[i].total - (int64_t)d->side[0].paths[i].total;
	int64_t dj = (int64_t)d->side[1].paths[j].total - (int64_t)d->side[0].paths[j].total;

	if (di != dj)
		return di < dj ? 1 : -1;
	return i < j ? -1 : i > j;
}

/*
 * Depth-first over the paths shown (children by added time, most first),
 * at most opts.depth levels; a hidden path hides its subtree (its time
 * did not move by the threshold, so no part of it moved much either, unless
 * changes inside cancel out; --all-paths shows those).
 */
void diff_walk_paths(struct diff *d, FILE *f, path_visit_fn visit)
{
	uint64_t thr = path_threshold(d);
	struct walk *st;
	uint32_t *chain;
	size_t sp = 0, cap = 64, nvisited = 0;

	st = xcalloc(cap, sizeof(*st));
	chain = xcalloc(cap, sizeof(*chain));
	for (;;) {
		struct walk *w = &st[sp];
		uint32_t p = chain[sp], k;

		if (!w->kids) {
			size_t n = 0;

			if (!d->o.depth || sp < d->o.depth)
				for (k = d->first_child[p]; k; k = d->next_sibling[k])
					n++;
			w->kids = xcalloc(n ? n : 1, sizeof(*w->kids));
			for (k = n ? d->first_child[p] : 0; k; k = d->next_sibling[k])
				if (path_shown(d, k, thr))
					w->kids[w->nkids++] = k;
			qsort_r(w->kids, w->nkids, sizeof(*w->kids), cmp_kids, d);
		}
		if (w->next == w->nkids) {
			free(w->kids);
			memset(w, 0, sizeof(*w));
			if (!sp)
				break;
			sp--;
			continue;
		}
		k = w->kids[w->next++];
		if (sp + 1 >= cap) {
			cap *= 2;
			st = xrealloc(st, cap * sizeof(*st));
			chain = xrealloc(chain, cap * sizeof(*chain));
			memset(st + cap / 2, 0, cap / 2 * sizeof(*st));
		}
		sp++;
		chain[sp] = k;
		visit(d, f, k, sp - 1, nvisited++ == 0);
	}
	free(st);
	free(chain);
}

static void fmt_delta(char *buf, size_t len, uint64_t a, uint64_t b)
{
	char t[30];

	fmt_duration(absdiff(a, b), t, sizeof(t));
	snprintf(buf, len, "%s%s", b >= a ? "+" : "-", t);
}

static void visit_pretty(struct diff *d, FILE *f, uint32_t p, size_t depth, bool first)
{
	const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];
	char b[6][32];

	dur(x->total, b[0], 32);
	dur(y->total, b[1], 32);
	fmt_delta(b[2], 32, x->total, y->total);
	dur(x->self, b[3], 32);
	dur(y->self, b[4], 32);
	fmt_delta(b[5], 32, x->self, y->self);
	fprintf(f, "%9" PRIu64 " %9" PRIu64 " %9s %9s %10s %9s %9s %10s  %*s%s\n", x->calls, y->calls,
		x->calls ? b[0] : "-", y->calls ? b[1] : "-", b[2], x->calls ? b[3] : "-",
		y->calls ? b[4] : "-", b[5], (int)(2 * (depth < 40 ? depth : 40)), "",
		d->gf[d->dp[p].func].name);
}

static void print_paths_pretty(struct diff *d, FILE *f)
{
	fprintf(f, "\ncall paths: where the time moved (inclusive, by added time; paths that moved "
		   "less than %s hidden unless --all-paths)\n",
		"0.5% of the traced time");
	fprintf(f, "%19s %30s %30s\n", "calls", "total", "self");
	fprintf(f, "%9s %9s %9s %9s %10s %9s %9s %10s  %s\n", "base", "new", "base", "new", "change",
		"base", "new", "change", "call path");
	diff_walk_paths(d, f, visit_pretty);
}

static void print_samples_pretty(struct diff *d, FILE *f)
{
	char pv[32];
	size_t i;

	fprintf(f, "%19s %19s %8s  %-9s %s\n", "total share", "self share", "p", "", "");
	fprintf(f, "%9s %9s %9s %9s %8s  %-9s %s\n", "base", "new", "base", "new", "(adj)", "verdict",
		"function");
	for (i = 0; i < shown(d, d->nrows); i++) {
		const struct frow *r = &d->rows[i];

		fmt_p(pv, sizeof(pv), r->p_adj);
		fprintf(f, "%8.2f%% %8.2f%% %8.2f%% %8.2f%% %8s  %-9s %s\n", r->share[0] * 100,
			r->share[1] * 100, r->sshare[0] * 100, r->sshare[1] * 100, pv,
			verdict_name_samples[r->v], d->gf[r->func].name);
	}
	if (shown(d, d->nrows) < d->nrows)
		fprintf(f, "(%zu more functions; --top 0 shows all)\n", d->nrows - shown(d, d->nrows));
	fprintf(f, "\nstacks, by change in share (higher: a larger share of the samples in new)\n");
	fprintf(f, "%9s %9s %8s  %-9s %s\n", "base", "new", "p (adj)", "verdict", "stack");
	for (i = 0; i < d->nsrows && i < (d->o.top ? d->o.top : 20); i++) {
		const struct frow *r = &d->srows[i];

		fmt_p(pv, sizeof(pv), r->p_adj);
		fprintf(f, "%8.2f%% %8.2f%% %8s  %-9s ", r->share[0] * 100, r->share[1] * 100, pv,
			verdict_name_samples[r->v]);
		diff_put_path(d, f, r->func, false);
		fputc('\n', f);
	}
	if (d->nsrows > (d->o.top ? d->o.top : 20))
		fprintf(f, "(%zu more stacks; --top N, or --format json for all)\n",
			d->nsrows - (d->o.top ? d->o.top : 20));
}

int diff__print(struct diff *d, FILE *f)
{
	if (!d->computed)
		return -EINVAL;
	qsort_r(d->rows, d->nrows, sizeof(*d->rows), cmp_rows, d);
	if (d->nsrows)
		qsort(d->srows, d->nsrows, sizeof(*d->srows), cmp_srows);
	switch (d->o.format) {
	case DIFF_JSON:
		diff_print_json(d, f);
		break;
	case DIFF_CSV:
		diff_print_csv(d, f);
		break;
	case DIFF_FOLDED:
		diff_print_folded(d, f);
		break;
	case DIFF_PRETTY:
		print_header_pretty(d, f);
		if (d->mode == DIFF_CALLS) {
			print_calls_pretty(d, f);
			diff_coro_pretty(d, f);
			if (!d->o.no_paths)
				print_paths_pretty(d, f);
		} else {
			print_samples_pretty(d, f);
		}
		break;
	}
	return ferror(f) ? -EIO : 0;
}

size_t diff__gate(struct diff *d, FILE *f)
{
	size_t i, n = 0;
	char b1[32], b2[32], b3[32], b4[32];

	if (!d->computed || d->mode != DIFF_CALLS || d->o.fail_above < 0)
		return 0;
	for (i = 0; i < d->nrows; i++) {
		const struct frow *r = &d->rows[i];
		const struct side_func *x = &d->side[0].funcs[r->func], *y = &d->side[1].funcs[r->func];

		if (r->v != V_SLOWER || !(r->ci_lo > 1 + d->o.fail_above) || y->total < d->o.min_total)
			continue;
		n++;
		fprintf(f, "regression: %s (%s): median per call %s -> %s (%.3fx); shift %.3fx, "
			   "%.0f%% interval %.3fx-%.3fx", d->gf[r->func].name, d->gf[r->func].module,
			dur(x->p50, b1, sizeof(b1)), dur(y->p50, b2, sizeof(b2)), r->ratio, r->shift,
			(1 - d->o.alpha) * 100, r->ci_lo, r->ci_hi);
		if (d->g_known)
			fprintf(f, " (relative to the whole run's %.3fx)", exp(d->g));
		fprintf(f, ", p %.2g, total %s -> ", r->p_adj, dur(x->total, b3, sizeof(b3)));
		fprintf(f, "%s\n", dur(y->total, b4, sizeof(b4)));
	}
	return n;
}

void diff__free(struct diff *d)
{
	size_t i;
	int k;

	if (!d)
		return;
	for (k = 0; k < 2; k++) {
		struct side *sd = &d->side[k];

		for (i = 0; i < sd->nfuncs; i++) {
			reservoir__free(&sd->funcs[i].res);
			free(sd->funcs[i].logs);
			free(sd->funcs[i].rm);
		}
		for (i = 0; i < sd->nsf; i++)
			reservoir__free(&sd->sf[i].res);
		free(sd->sf);
		free(sd->sp);
		free(sd->funcs);
		free(sd->paths);
		free(sd->label);
		free(sd->cmdline);
		diff_coro_free(sd);
	}
	for (i = 0; i < d->ngf; i++) {
		free(d->gf[i].name);
		free(d->gf[i].module);
	}
	free(d->gf);
	free(d->gf_slots);
	for (i = 0; i < d->bidf_cap; i++)
		free(d->bidf[i].key);
	free(d->bidf);
	free(d->dp);
	free(d->dp_slots);
	free(d->rows);
	free(d->srows);
	free(d->outer);
	free(d->first_child);
	free(d->next_sibling);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
