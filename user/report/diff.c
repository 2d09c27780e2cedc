// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: two recordings compared per function and per call path (diff.h).
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

/* A function as both sides know it: name and module file name. */
struct gfunc {
	char *name;
	char *module;
	uint64_t hash;
};

/* A call path (or stack) as both sides know it: (parent, gfunc), node 0 the root. */
struct dpath {
	uint32_t parent;
	uint32_t func;
};

/* A function of one side, by gfunc: filled by diff__side_done(). */
struct side_func {
	uint64_t calls;		/* calls that ended, all of them */
	uint64_t self;		/* ns */
	uint64_t total;		/* ns, inclusive, outermost activations only (finish_side()) */
	struct reservoir res;	/* per-call durations of calls with a seen entry and return */
	uint64_t samp_self;	/* on-cpu samples with this function as leaf */
	uint64_t samp_total;	/* ... anywhere on the stack, once per sample */
	/* sorted log durations, the quantiles (compute()) */
	double *logs;
	uint64_t p50, p90, p99;
};

struct side_path {
	uint64_t calls, total, self;	/* ns */
	uint64_t samples;		/* on-cpu samples whose whole stack is this path */
};

/*
 * While a side streams, its rows are keyed by the session's own function
 * and path ids (an array index per event, no hashing, no shared state: the
 * two sides can be read in two threads); diff__side_done() folds them into
 * the rows by gfunc and dpath.
 */
struct sfunc {
	uint64_t calls, self;
	uint64_t o_calls, o_total, o_self;	/* calls without a path of their own */
	struct reservoir res;
	bool res_init;
};

struct side {
	struct sfunc *sf;	/* by session function */
	size_t nsf;
	struct side_path *sp;	/* by session path */
	size_t nsp;
	struct side_func *funcs;	/* by gfunc */
	size_t nfuncs;
	struct side_path *paths;	/* by dpath */
	size_t npaths;
	uint64_t ncalls, nsamples, lost, unfinished;
	uint64_t duration;
	char *label, *cmdline;
	bool done;
};

/* One row of the function table, both sides and the verdict. */
enum verdict {
	V_SAME,		/* no significant change (beyond the margin) */
	V_SLOWER,
	V_FASTER,
	V_FEW,		/* too few calls (or samples) for a verdict */
	V_ADDED,	/* only in new */
	V_REMOVED,	/* only in base */
};

struct frow {
	uint32_t func;		/* gfunc, or dpath for stack rows */
	enum verdict v;
	bool tested;
	double p_raw, p_adj;
	double ratio;		/* p50 new / base */
	double shift, ci_lo, ci_hi;	/* Hodges-Lehmann ratio and its interval */
	double share[2];	/* sample mode: inclusive share (functions) or stack share, tested */
	double sshare[2];	/* sample mode: self share of functions */
	int64_t dtotal;		/* sort key: change in total ns (or in share, scaled) */
};

struct diff {
	struct diff_opts o;
	enum diff_mode mode;
	struct gfunc *gf;
	size_t ngf;
	uint32_t *gf_slots;
	size_t gf_nslots;
	struct dpath *dp;
	size_t ndp;		/* dp[0] is the root */
	uint32_t *dp_slots;
	size_t dp_nslots;
	struct side side[2];
	struct frow *rows;	/* functions */
	size_t nrows;
	struct frow *srows;	/* sample mode: stacks */
	size_t nsrows;
	bool computed;
	/* path view (calls): outer[dpath] = its function is not on the path above it */
	uint8_t *outer;
	uint32_t *first_child, *next_sibling;
};

static const char *const verdict_name[] = {
	[V_SAME] = "same", [V_SLOWER] = "slower", [V_FASTER] = "faster",
	[V_FEW] = "few calls", [V_ADDED] = "added", [V_REMOVED] = "removed",
};

/* Sample mode: a larger share is "higher", not "slower" (the program may just do more). */
static const char *const verdict_name_samples[] = {
	[V_SAME] = "same", [V_SLOWER] = "higher", [V_FASTER] = "lower",
	[V_FEW] = "few", [V_ADDED] = "added", [V_REMOVED] = "removed",
};

void diff__default_opts(struct diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->alpha = 0.05;
	o->min_change = 0.02;
	o->min_calls = 20;
	o->fail_above = -1;
}

int diff__parse_pct(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno || !isfinite(v) || v < 0)
		return -EINVAL;
	if (*end == '%')
		end++;
	if (*end)
		return -EINVAL;
	*out = v / 100;
	return 0;
}

int diff__new(const struct diff_opts *o, struct diff **out)
{
	struct diff *d = xcalloc(1, sizeof(*d));

	if (o)
		d->o = *o;
	else
		diff__default_opts(&d->o);
	if (!(d->o.alpha > 0 && d->o.alpha < 1) || d->o.min_change < 0 || d->o.min_calls < 2) {
		free(d);
		*out = NULL;
		return -EINVAL;
	}
	/* the root path node */
	d->dp = xcalloc(64, sizeof(*d->dp));
	d->ndp = 1;
	*out = d;
	return 0;
}

static uint64_t str_hash(const char *a, const char *b)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a over a, a NUL, b */

	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 0x100000001b3ull;
	h = (h ^ 0xff) * 0x100000001b3ull;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 0x100000001b3ull;
	return h;
}

/* Power-of-two open addressing over a dense array: `slots` hold index + 1. */
static void rehash(uint32_t **slots, size_t *nslots, size_t n, uint64_t (*key)(const struct diff *, size_t),
		   const struct diff *d)
{
	size_t i, j;

	free(*slots);
	*nslots = *nslots ? *nslots * 2 : 1024;
	*slots = xcalloc(*nslots, sizeof(**slots));
	for (i = 0; i < n; i++) {
		for (j = key(d, i) & (*nslots - 1); (*slots)[j]; j = (j + 1) & (*nslots - 1))
			;
		(*slots)[j] = i + 1;
	}
}

static uint64_t gf_key(const struct diff *d, size_t i)
{
	return d->gf[i].hash;
}

static uint64_t dp_hash(uint32_t parent, uint32_t func)
{
	return ((uint64_t)parent << 32 | func) * 0x9e3779b97f4a7c15ull >> 16;
}

static uint64_t dp_key(const struct diff *d, size_t i)
{
	return dp_hash(d->dp[i].parent, d->dp[i].func);
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

static uint32_t intern_func(struct diff *d, const char *name, const char *module)
{
	uint64_t h = str_hash(name, module);
	size_t j;

	if ((d->ngf + 1) * 2 > d->gf_nslots)
		rehash(&d->gf_slots, &d->gf_nslots, d->ngf, gf_key, d);
	for (j = h & (d->gf_nslots - 1); d->gf_slots[j]; j = (j + 1) & (d->gf_nslots - 1)) {
		const struct gfunc *g = &d->gf[d->gf_slots[j] - 1];

		if (g->hash == h && !strcmp(g->name, name) && !strcmp(g->module, module))
			return d->gf_slots[j] - 1;
	}
	if (!d->ngf || (d->ngf >= 64 && !(d->ngf & (d->ngf - 1))))
		d->gf = xrealloc(d->gf, (d->ngf ? d->ngf * 2 : 64) * sizeof(*d->gf));
	d->gf[d->ngf].name = xstrdup(name);
	d->gf[d->ngf].module = xstrdup(module);
	d->gf[d->ngf].hash = h;
	d->gf_slots[j] = ++d->ngf;
	return d->ngf - 1;
}

static uint32_t intern_path(struct diff *d, uint32_t parent, uint32_t func)
{
	size_t j;

	if ((d->ndp + 1) * 2 > d->dp_nslots)
		rehash(&d->dp_slots, &d->dp_nslots, d->ndp, dp_key, d);
	for (j = dp_hash(parent, func) & (d->dp_nslots - 1); d->dp_slots[j];
	     j = (j + 1) & (d->dp_nslots - 1)) {
		const struct dpath *p = &d->dp[d->dp_slots[j] - 1];

		if (d->dp_slots[j] - 1 != 0 && p->parent == parent && p->func == func)
			return d->dp_slots[j] - 1;
	}
	if ((d->ndp & (d->ndp - 1)) == 0 && d->ndp >= 64)
		d->dp = xrealloc(d->dp, d->ndp * 2 * sizeof(*d->dp));
	d->dp[d->ndp].parent = parent;
	d->dp[d->ndp].func = func;
	d->dp_slots[j] = ++d->ndp;
	return d->ndp - 1;
}

/* Grows a zeroed array of `size`-byte elements to hold index `need`. */
static void grow(void **arr, size_t *n, size_t need, size_t size)
{
	size_t m = *n ? *n : 64;

	if (need < *n)
		return;
	while (m <= need)
		m *= 2;
	*arr = xrealloc(*arr, m * size);
	memset((char *)*arr + *n * size, 0, (m - *n) * size);
	*n = m;
}

static const char *func_module(const struct bp_session *s, uint32_t f)
{
	uint32_t m = s->funcs[f].module;

	return m < s->nmodules ? base_name(s->modules[m].path) : "";
}

/* Calls whose duration is not a real one: no entry seen, closed at the end, unwound. */
#define DIFF_INEXACT (BP_CALL_UNFINISHED | BP_CALL_NO_ENTRY | BP_CALL_UNWOUND | BP_CALL_NO_RETPROBE)

static int add_call(struct side *sd, int side, const struct bp_session *s,
		    const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	struct side_path *pr;
	struct sfunc *f;

	if (c->func >= s->nfuncs || c->path >= s->npaths)
		return -EBADMSG;
	if (c->func >= sd->nsf)
		grow((void **)&sd->sf, &sd->nsf, s->nfuncs - 1, sizeof(*sd->sf));
	f = &sd->sf[c->func];
	if (!f->res_init) {
		/* seeded by the name, not by ids or order: the same inputs give the same sample */
		const char *name = s->funcs[c->func].name;

		reservoir__init(&f->res, str_hash(name ? name : "", func_module(s, c->func)) ^
					 (uint64_t)side);
		f->res_init = true;
	}
	f->calls++;
	f->self += c->self;
	if (!(c->flags & DIFF_INEXACT))
		reservoir__add(&f->res, dur);
	if (c->path && s->paths[c->path].func == c->func) {
		if (c->path >= sd->nsp)
			grow((void **)&sd->sp, &sd->nsp, s->npaths - 1, sizeof(*sd->sp));
		pr = &sd->sp[c->path];
		pr->calls++;
		pr->total += dur;
		pr->self += c->self;
	} else {
		/* no path of its own: a root of its own (diff__side_done()) */
		f->o_calls++;
		f->o_total += dur;
		f->o_self += c->self;
	}
	sd->ncalls++;
	if (c->flags & BP_CALL_UNFINISHED)
		sd->unfinished++;
	return 0;
}

static int add_sample(struct side *sd, const struct bp_session *s, const struct bp_sample *sm)
{
	if (sm->flags & BP_SAMPLE_F_OFFCPU)
		return 0;	/* off-cpu intervals are time blocked, not shares of the CPU */
	if (sm->path >= s->npaths)
		return -EBADMSG;
	sd->nsamples++;
	if (!sm->path)
		return 0;	/* an empty stack: counted in the whole, in no row */
	if (sm->path >= sd->nsp)
		grow((void **)&sd->sp, &sd->nsp, s->npaths - 1, sizeof(*sd->sp));
	sd->sp[sm->path].samples++;
	return 0;
}

int diff__add(struct diff *d, int side, const struct bp_session *s, const struct bp_event *ev)
{
	struct side *sd = &d->side[side ? 1 : 0];

	switch (ev->kind) {
	case BP_EV_CALL:
		return add_call(sd, side ? 1 : 0, s, &ev->call);
	case BP_EV_SAMPLE:
		return add_sample(sd, s, &ev->sample);
	case BP_EV_LOSS:
		sd->lost += ev->loss.count;
		return 0;
	default:
		return 0;	/* edges, annotations: not compared */
	}
}

static void add_path_row(struct side *sd, uint32_t dp, const struct side_path *r)
{
	struct side_path *pr;

	grow((void **)&sd->paths, &sd->npaths, dp, sizeof(*sd->paths));
	pr = &sd->paths[dp];
	pr->calls += r->calls;
	pr->total += r->total;
	pr->self += r->self;
	pr->samples += r->samples;
}

/*
 * The session's functions and paths to gfuncs and dpaths (paths in id order:
 * a parent has a smaller id than its children, as the reader checks), and
 * the rows folded in.  Two session functions of one gfunc (a merged archive
 * holding two builds) add up, their reservoirs merged.
 */
int diff__side_done(struct diff *d, int side, const struct bp_session *s, const char *label)
{
	struct side *sd = &d->side[side ? 1 : 0];
	uint32_t *gmap = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*gmap));	/* gfunc + 1 */
	uint32_t *pmap = xcalloc(s->npaths ? s->npaths : 1, sizeof(*pmap));	/* dpath */
	size_t f, p;
	int err = 0;

	for (f = 0; f < s->nfuncs; f++)
		gmap[f] = intern_func(d, s->funcs[f].name ? s->funcs[f].name : "",
				      func_module(s, f)) + 1;
	for (p = 1; p < s->npaths; p++) {
		uint32_t parent = s->paths[p].parent;

		if (parent >= p || s->paths[p].func >= s->nfuncs) {
			err = -EBADMSG;
			goto cleanup;
		}
		pmap[p] = intern_path(d, pmap[parent], gmap[s->paths[p].func] - 1);
	}
	for (f = 0; f < sd->nsf && f < s->nfuncs; f++) {
		struct sfunc *x = &sd->sf[f];
		struct side_func *y;
		uint32_t g = gmap[f] - 1;

		if (!x->calls)
			continue;
		grow((void **)&sd->funcs, &sd->nfuncs, g, sizeof(*sd->funcs));
		y = &sd->funcs[g];
		y->calls += x->calls;
		y->self += x->self;
		reservoir__merge(&y->res, &x->res);
		if (x->o_calls) {
			struct side_path r = { x->o_calls, x->o_total, x->o_self, 0 };

			add_path_row(sd, intern_path(d, 0, g), &r);
		}
	}
	for (p = 1; p < sd->nsp && p < s->npaths; p++)
		if (sd->sp[p].calls || sd->sp[p].samples)
			add_path_row(sd, pmap[p], &sd->sp[p]);
	free(sd->label);
	free(sd->cmdline);
	sd->label = xstrdup(label ? label : "");
	sd->cmdline = xstrdup(s->cmdline ? s->cmdline : "");
	sd->duration = s->duration;
	if (s->lost_total > sd->lost)
		sd->lost = s->lost_total;
	sd->done = true;
cleanup:
	for (f = 0; f < sd->nsf; f++)
		reservoir__free(&sd->sf[f].res);
	free(sd->sf);
	free(sd->sp);
	sd->sf = NULL;
	sd->sp = NULL;
	sd->nsf = sd->nsp = 0;
	free(gmap);
	free(pmap);
	return err;
}

enum diff_mode diff__mode(const struct diff *d)
{
	return d->mode;
}

/*
 * The path tree (children lists) and, per dpath, whether its function is
 * absent from the path above it: only such outermost activations add to a
 * function's inclusive total, so recursion (fib inside fib) is not counted
 * twice.  One iterative depth-first walk with a count per function of its
 * activations on the current branch (recursion 100000 deep is fine).
 */
static void build_tree(struct diff *d)
{
	size_t n = d->ndp, i, sp = 0;
	uint32_t *stack, *cursor, *active;

	d->first_child = xcalloc(n, sizeof(*d->first_child));
	d->next_sibling = xcalloc(n, sizeof(*d->next_sibling));
	d->outer = xcalloc(n, 1);
	stack = xcalloc(n, sizeof(*stack));
	cursor = xcalloc(n, sizeof(*cursor));
	active = xcalloc(d->ngf ? d->ngf : 1, sizeof(*active));
	/* reverse creation order, so children come out in creation order */
	for (i = n; i-- > 1;) {
		uint32_t p = d->dp[i].parent;

		d->next_sibling[i] = d->first_child[p];
		d->first_child[p] = i;
	}
	stack[sp++] = 0;
	cursor[0] = d->first_child[0];
	while (sp) {
		uint32_t p = stack[sp - 1], c = cursor[p];

		if (!c) {
			sp--;
			if (p)
				active[d->dp[p].func]--;
			continue;
		}
		cursor[p] = d->next_sibling[c];
		d->outer[c] = !active[d->dp[c].func]++;
		cursor[c] = d->first_child[c];
		stack[sp++] = c;
	}
	free(stack);
	free(cursor);
	free(active);
}

/* Per side: inclusive totals from the path rows, sample shares per function, quantiles. */
static void finish_side(struct diff *d, struct side *sd)
{
	uint32_t *stamp = xcalloc(d->ngf ? d->ngf : 1, sizeof(*stamp));
	size_t p, i;

	grow((void **)&sd->funcs, &sd->nfuncs, d->ngf ? d->ngf - 1 : 0, sizeof(*sd->funcs));
	grow((void **)&sd->paths, &sd->npaths, d->ndp - 1, sizeof(*sd->paths));
	for (p = 1; p < d->ndp; p++) {
		const struct side_path *pr = &sd->paths[p];
		uint32_t q;

		if (pr->calls && d->outer[p])
			sd->funcs[d->dp[p].func].total += pr->total;
		if (!pr->samples)
			continue;
		sd->funcs[d->dp[p].func].samp_self += pr->samples;
		/* inclusive: once per function on the stack (stamp = this path) */
		for (q = p; q; q = d->dp[q].parent) {
			struct side_func *f = &sd->funcs[d->dp[q].func];

			if (stamp[d->dp[q].func] == p)
				continue;
			stamp[d->dp[q].func] = p;
			f->samp_total += pr->samples;
		}
	}
	for (i = 0; i < d->ngf; i++) {
		struct side_func *f = &sd->funcs[i];
		uint32_t k;

		if (!f->res.n)
			continue;
		reservoir__sort(&f->res);
		f->p50 = stats__quantile(f->res.v, f->res.n, 0.50);
		f->p90 = stats__quantile(f->res.v, f->res.n, 0.90);
		f->p99 = stats__quantile(f->res.v, f->res.n, 0.99);
		/* 0 ns (entry-only functions) counts as 1 ns: log is defined, ties stay ties */
		f->logs = xcalloc(f->res.n, sizeof(*f->logs));
		for (k = 0; k < f->res.n; k++)
			f->logs[k] = log((double)(f->res.v[k] ? f->res.v[k] : 1));
	}
	free(stamp);
}

/* Calls mode: one row per function called on either side, tested where both have enough. */
static void compute_calls(struct diff *d)
{
	const struct side_func *b, *n;
	double margin = log1p(d->o.min_change);
	double *p = NULL;
	size_t i, ntested = 0, k;

	d->rows = xcalloc(d->ngf ? d->ngf : 1, sizeof(*d->rows));
	for (i = 0; i < d->ngf; i++) {
		struct frow *r = &d->rows[d->nrows];
		struct mw_result up, down;
		double est, lo, hi;

		b = &d->side[0].funcs[i];
		n = &d->side[1].funcs[i];
		if (!b->calls && !n->calls)
			continue;
		d->nrows++;
		r->func = i;
		r->dtotal = (int64_t)n->total - (int64_t)b->total;
		r->ratio = b->p50 ? (double)n->p50 / (double)b->p50 : NAN;
		r->shift = r->ci_lo = r->ci_hi = NAN;
		r->p_raw = r->p_adj = NAN;
		if (!b->calls) {
			r->v = V_ADDED;
			continue;
		}
		if (!n->calls) {
			r->v = V_REMOVED;
			continue;
		}
		if (b->res.n < d->o.min_calls || n->res.n < d->o.min_calls) {
			r->v = V_FEW;
			continue;
		}
		/*
		 * Against the margin: "new is slower than base * (1 + m)" and
		 * "new is faster than base / (1 + m)", each one-sided; the
		 * smaller p doubled (both directions were looked at).  With
		 * m = 0 this is the ordinary two-sided test.
		 */
		stats__mann_whitney(b->logs, b->res.n, n->logs, n->res.n, margin, &up);
		stats__mann_whitney(b->logs, b->res.n, n->logs, n->res.n, -margin, &down);
		r->p_raw = 2 * (up.p_greater < down.p_less ? up.p_greater : down.p_less);
		if (r->p_raw > 1)
			r->p_raw = 1;
		stats__hodges_lehmann(b->logs, b->res.n, n->logs, n->res.n, d->o.alpha, &est, &lo,
				      &hi);
		r->shift = exp(est);
		r->ci_lo = exp(lo);
		r->ci_hi = exp(hi);
		r->tested = true;
		ntested++;
	}
	/* Holm over the functions tested: the family-wise error rate stays at alpha */
	p = xcalloc(ntested ? ntested : 1, sizeof(*p));
	for (i = 0, k = 0; i < d->nrows; i++)
		if (d->rows[i].tested)
			p[k++] = d->rows[i].p_raw;
	stats__holm(p, ntested);
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
static void compute_samples(struct diff *d)
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

int diff__compute(struct diff *d)
{
	const struct side *b = &d->side[0], *n = &d->side[1];
	const char *bl = b->label ? b->label : "base", *nl = n->label ? n->label : "new";

	if (d->computed)
		return 0;
	d->mode = d->o.mode;
	if (d->mode == DIFF_AUTO) {
		if (b->ncalls && n->ncalls) {
			d->mode = DIFF_CALLS;
		} else if (b->ncalls || n->ncalls) {
			p_err("cannot compare %s and %s: %s has traced calls and %s has none "
			      "(recordings of different kinds)", bl, nl, b->ncalls ? bl : nl,
			      b->ncalls ? nl : bl);
			return -EINVAL;
		} else if (b->nsamples && n->nsamples) {
			d->mode = DIFF_SAMPLES;
		} else if (b->nsamples || n->nsamples) {
			p_err("cannot compare %s and %s: %s has stack samples and %s has none "
			      "(recordings of different kinds)", bl, nl, b->nsamples ? bl : nl,
			      b->nsamples ? nl : bl);
			return -EINVAL;
		} else {
			p_err("nothing to compare: %s and %s have no traced calls and no stack samples",
			      bl, nl);
			return -EINVAL;
		}
	} else if (d->mode == DIFF_SAMPLES && (!b->nsamples || !n->nsamples)) {
		p_err("--sample: %s has no on-cpu stack samples (record it with --sample)",
		      !b->nsamples ? bl : nl);
		return -EINVAL;
	} else if (d->mode == DIFF_CALLS && (!b->ncalls || !n->ncalls)) {
		p_err("%s has no traced calls to compare", !b->ncalls ? bl : nl);
		return -EINVAL;
	}
	build_tree(d);
	finish_side(d, &d->side[0]);
	finish_side(d, &d->side[1]);
	if (d->mode == DIFF_CALLS)
		compute_calls(d);
	else
		compute_samples(d);
	d->computed = true;
	return 0;
}

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
static void put_path(const struct diff *d, FILE *f, uint32_t p, bool folded)
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

static void print_header_pretty(const struct diff *d, FILE *f)
{
	const char *names[2] = { "base", "new" };
	char b1[32];
	int i;

	for (i = 0; i < 2; i++) {
		const struct side *sd = &d->side[i];

		fprintf(f, "%-5s %s: %s   duration: %s   calls: %" PRIu64 "   samples: %" PRIu64
			"   lost records: %" PRIu64 "\n", names[i], sd->label, sd->cmdline,
			dur(sd->duration, b1, sizeof(b1)), sd->ncalls, sd->nsamples, sd->lost);
	}
	if (d->mode == DIFF_CALLS)
		fprintf(f, "test: Mann-Whitney U on per-call durations (a uniform sample of up to %d "
			   "calls per function and side), changes within %.3g%% not counted, "
			   "Holm-corrected, alpha %.3g; ratio = p50 new/base, shift = Hodges-Lehmann "
			   "ratio and its %.3g%% interval\n\n", RESERVOIR_MAX, d->o.min_change * 100,
			d->o.alpha, (1 - d->o.alpha) * 100);
	else
		fprintf(f, "test: two-proportion test of on-cpu sample shares (functions: inclusive "
			   "share), Holm-corrected, alpha %.3g\n\n", d->o.alpha);
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

typedef void (*path_visit_fn)(struct diff *d, FILE *f, uint32_t p, size_t depth, bool first);

/*
 * Depth-first over the paths shown (children by added time, most first),
 * at most opts.depth levels; a hidden path hides its subtree (its time
 * did not move by the threshold, so no part of it moved much either, unless
 * changes inside cancel out; --all-paths shows those).
 */
static void walk_paths(struct diff *d, FILE *f, path_visit_fn visit)
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
	walk_paths(d, f, visit_pretty);
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
		put_path(d, f, r->func, false);
		fputc('\n', f);
	}
	if (d->nsrows > (d->o.top ? d->o.top : 20))
		fprintf(f, "(%zu more stacks; --top N, or --format json for all)\n",
			d->nsrows - (d->o.top ? d->o.top : 20));
}

static void json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else if (isinf(v))
		fputs(v > 0 ? "1e308" : "-1e308", f);
	else
		fprintf(f, "%.6g", v);
}

static void json_side_hdr(const struct diff *d, FILE *f, int i)
{
	const struct side *sd = &d->side[i];

	fprintf(f, "{\"file\":");
	json_str(f, sd->label);
	fprintf(f, ",\"command\":");
	json_str(f, sd->cmdline);
	fprintf(f, ",\"duration_ns\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"samples\":%" PRIu64
		",\"lost\":%" PRIu64 "}", sd->duration, sd->ncalls, sd->nsamples, sd->lost);
}

static void json_fside(FILE *f, const struct side_func *x)
{
	fprintf(f, "{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		",\"p50_ns\":%" PRIu64 ",\"p90_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
		",\"timed_calls\":%" PRIu64 "}", x->calls, x->total, x->self, x->p50, x->p90, x->p99,
		x->res.seen);
}

static void json_pathnames(const struct diff *d, FILE *f, uint32_t p)
{
	uint32_t frames[512];
	size_t n = 0;

	for (; p && n < 512; p = d->dp[p].parent)
		frames[n++] = p;
	fputc('[', f);
	while (n--) {
		json_str(f, d->gf[d->dp[frames[n]].func].name);
		if (n)
			fputc(',', f);
	}
	fputc(']', f);
}

static void visit_json(struct diff *d, FILE *f, uint32_t p, size_t depth, bool first)
{
	const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];

	fprintf(f, "%s{\"path\":", first ? "" : ",");
	json_pathnames(d, f, p);
	fprintf(f, ",\"base\":{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		"},\"new\":{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
		"},\"delta_total_ns\":%" PRId64 ",\"delta_self_ns\":%" PRId64 "}\n", x->calls,
		x->total, x->self, y->calls, y->total, y->self, (int64_t)(y->total - x->total),
		(int64_t)(y->self - x->self));
}

static void print_json(struct diff *d, FILE *f)
{
	size_t i;

	fprintf(f, "{\"mode\":\"%s\",\"base\":", d->mode == DIFF_CALLS ? "calls" : "samples");
	json_side_hdr(d, f, 0);
	fprintf(f, ",\"new\":");
	json_side_hdr(d, f, 1);
	fprintf(f, ",\"alpha\":");
	json_num(f, d->o.alpha);
	fprintf(f, ",\"min_change\":");
	json_num(f, d->o.min_change);
	fprintf(f, ",\"test\":\"%s\",\"correction\":\"holm\",\n\"functions\":[\n",
		d->mode == DIFF_CALLS ? "mann-whitney" : "two-proportion");
	for (i = 0; i < d->nrows; i++) {
		const struct frow *r = &d->rows[i];
		const struct gfunc *g = &d->gf[r->func];

		fprintf(f, "%s{\"function\":", i ? "," : "");
		json_str(f, g->name);
		fprintf(f, ",\"module\":");
		json_str(f, g->module);
		fprintf(f, ",\"status\":\"%s\",\"base\":",
			(d->mode == DIFF_CALLS ? verdict_name : verdict_name_samples)[r->v]);
		if (d->mode == DIFF_CALLS) {
			json_fside(f, &d->side[0].funcs[r->func]);
			fprintf(f, ",\"new\":");
			json_fside(f, &d->side[1].funcs[r->func]);
			fprintf(f, ",\"p50_ratio\":");
			json_num(f, r->ratio);
			fprintf(f, ",\"shift_ratio\":");
			json_num(f, r->shift);
			fprintf(f, ",\"ci_low\":");
			json_num(f, r->ci_lo);
			fprintf(f, ",\"ci_high\":");
			json_num(f, r->ci_hi);
		} else {
			const struct side_func *x = &d->side[0].funcs[r->func];
			const struct side_func *y = &d->side[1].funcs[r->func];

			fprintf(f, "{\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
				",\"self_share\":", x->samp_self, x->samp_total);
			json_num(f, r->sshare[0]);
			fprintf(f, ",\"total_share\":");
			json_num(f, r->share[0]);
			fprintf(f, "},\"new\":{\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
				",\"self_share\":", y->samp_self, y->samp_total);
			json_num(f, r->sshare[1]);
			fprintf(f, ",\"total_share\":");
			json_num(f, r->share[1]);
			fputc('}', f);
		}
		fprintf(f, ",\"significant\":%s,\"p_value\":",
			r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
		json_num(f, r->p_adj);
		fprintf(f, ",\"p_raw\":");
		json_num(f, r->p_raw);
		fprintf(f, "}\n");
	}
	fprintf(f, "]");
	if (d->mode == DIFF_CALLS && !d->o.no_paths) {
		fprintf(f, ",\n\"paths\":[\n");
		walk_paths(d, f, visit_json);
		fprintf(f, "]");
	}
	if (d->mode == DIFF_SAMPLES) {
		fprintf(f, ",\n\"stacks\":[\n");
		for (i = 0; i < d->nsrows; i++) {
			const struct frow *r = &d->srows[i];

			fprintf(f, "%s{\"stack\":", i ? "," : "");
			json_pathnames(d, f, r->func);
			fprintf(f, ",\"base\":{\"samples\":%" PRIu64 ",\"share\":",
				d->side[0].paths[r->func].samples);
			json_num(f, r->share[0]);
			fprintf(f, "},\"new\":{\"samples\":%" PRIu64 ",\"share\":",
				d->side[1].paths[r->func].samples);
			json_num(f, r->share[1]);
			fprintf(f, "},\"status\":\"%s\",\"significant\":%s,\"p_value\":",
				verdict_name_samples[r->v],
				r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
			json_num(f, r->p_adj);
			fprintf(f, "}\n");
		}
		fprintf(f, "]");
	}
	fprintf(f, "}\n");
}

static void csv_num(FILE *f, double v)
{
	if (!isnan(v))
		fprintf(f, "%.6g", v);
}

static void print_csv(struct diff *d, FILE *f)
{
	size_t i;

	if (d->mode == DIFF_CALLS)
		fputs("function,module,status,base_calls,new_calls,base_total_ns,new_total_ns,"
		      "base_self_ns,new_self_ns,base_p50_ns,new_p50_ns,base_p90_ns,new_p90_ns,"
		      "base_p99_ns,new_p99_ns,p50_ratio,shift_ratio,ci_low,ci_high,p_value,significant\n",
		      f);
	else
		fputs("function,module,status,base_self_samples,new_self_samples,base_total_samples,"
		      "new_total_samples,base_self_share,new_self_share,base_total_share,"
		      "new_total_share,p_value,significant\n", f);
	for (i = 0; i < d->nrows; i++) {
		const struct frow *r = &d->rows[i];
		const struct side_func *x = &d->side[0].funcs[r->func], *y = &d->side[1].funcs[r->func];

		csv_str(f, d->gf[r->func].name);
		fputc(',', f);
		csv_str(f, d->gf[r->func].module);
		fprintf(f, ",%s,", (d->mode == DIFF_CALLS ? verdict_name : verdict_name_samples)[r->v]);
		if (d->mode == DIFF_CALLS) {
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
				x->calls, y->calls, x->total, y->total, x->self, y->self, x->p50, y->p50,
				x->p90, y->p90, x->p99, y->p99);
			csv_num(f, r->ratio);
			fputc(',', f);
			csv_num(f, r->shift);
			fputc(',', f);
			csv_num(f, r->ci_lo);
			fputc(',', f);
			csv_num(f, r->ci_hi);
			fputc(',', f);
		} else {
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6g,%.6g,%.6g,%.6g,",
				x->samp_self, y->samp_self, x->samp_total, y->samp_total, r->sshare[0],
				r->sshare[1], r->share[0], r->share[1]);
		}
		csv_num(f, r->p_adj);
		fprintf(f, ",%s\n", r->v == V_SLOWER || r->v == V_FASTER ? "true" : "false");
	}
}

/*
 * FlameGraph's differential input (difffolded.pl's output, flamegraph.pl's
 * input): "stack BASE NEW" per stack.  Samples: sample counts per whole
 * stack; calls: self ns per call path.
 */
static void print_folded(struct diff *d, FILE *f)
{
	size_t p;

	for (p = 1; p < d->ndp; p++) {
		const struct side_path *x = &d->side[0].paths[p], *y = &d->side[1].paths[p];
		uint64_t a = d->mode == DIFF_CALLS ? x->self : x->samples;
		uint64_t b = d->mode == DIFF_CALLS ? y->self : y->samples;

		if (!a && !b)
			continue;
		put_path(d, f, p, true);
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", a, b);
	}
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
		print_json(d, f);
		break;
	case DIFF_CSV:
		print_csv(d, f);
		break;
	case DIFF_FOLDED:
		print_folded(d, f);
		break;
	case DIFF_PRETTY:
		print_header_pretty(d, f);
		if (d->mode == DIFF_CALLS) {
			print_calls_pretty(d, f);
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
		fprintf(f, "regression: %s (%s): median per call %s -> %s (%.3fx, %.0f%% interval "
			   "%.3fx-%.3fx), p %.2g, total %s -> ", d->gf[r->func].name,
			d->gf[r->func].module, dur(x->p50, b1, sizeof(b1)), dur(y->p50, b2, sizeof(b2)),
			r->ratio, (1 - d->o.alpha) * 100, r->ci_lo, r->ci_hi, r->p_adj,
			dur(x->total, b3, sizeof(b3)));
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
		}
		for (i = 0; i < sd->nsf; i++)
			reservoir__free(&sd->sf[i].res);
		free(sd->sf);
		free(sd->sp);
		free(sd->funcs);
		free(sd->paths);
		free(sd->label);
		free(sd->cmdline);
	}
	for (i = 0; i < d->ngf; i++) {
		free(d->gf[i].name);
		free(d->gf[i].module);
	}
	free(d->gf);
	free(d->gf_slots);
	free(d->dp);
	free(d->dp_slots);
	free(d->rows);
	free(d->srows);
	free(d->outer);
	free(d->first_child);
	free(d->next_sibling);
	free(d);
}
