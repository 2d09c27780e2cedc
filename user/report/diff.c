// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff: two recordings compared per function and per call path (diff.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashtab.h"
#include "base/log.h"
#include "base/util.h"
#include "diff.h"
#include "stats.h"
#include "internal.h"

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
	pthread_mutex_init(&d->lock, NULL);
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

/* The slot of (name, module) in gf_slots: its gfunc, or the empty slot it would take. */
static size_t func_slot(const struct diff *d, const char *name, const char *module, uint64_t h)
{
	size_t j;

	for (j = h & (d->gf_nslots - 1); d->gf_slots[j]; j = (j + 1) & (d->gf_nslots - 1)) {
		const struct gfunc *g = &d->gf[d->gf_slots[j] - 1];

		if (g->hash == h && !strcmp(g->name, name) && !strcmp(g->module, module))
			break;
	}
	return j;
}

static uint32_t intern_func(struct diff *d, const char *name, const char *module)
{
	uint64_t h = str_hash(name, module);
	size_t j;

	if ((d->ngf + 1) * 2 > d->gf_nslots)
		rehash(&d->gf_slots, &d->gf_nslots, d->ngf, gf_key, d);
	j = func_slot(d, name, module, h);
	if (d->gf_slots[j])
		return d->gf_slots[j] - 1;
	if (!d->ngf || (d->ngf >= 64 && !(d->ngf & (d->ngf - 1))))
		d->gf = xrealloc(d->gf, (d->ngf ? d->ngf * 2 : 64) * sizeof(*d->gf));
	d->gf[d->ngf].name = xstrdup(name);
	d->gf[d->ngf].module = xstrdup(module);
	d->gf[d->ngf].hash = h;
	d->gf_slots[j] = ++d->ngf;
	return d->ngf - 1;
}

/* "FILE+0xADDR": a function no debug source named, ADDR its own address. */
static bool unnamed(const char *name, uint64_t addr)
{
	char tail[32];
	size_t n = strlen(name), t = (size_t)snprintf(tail, sizeof(tail), "+0x%" PRIx64, addr);

	return n > t && !strcmp(name + n - t, tail) && !strchr(name, ' ');
}

static bool bidf_empty(const void *slot)
{
	return !((const struct bidfunc *)slot)->key;
}

static uint64_t bidf_hash(const void *slot)
{
	return ((const struct bidfunc *)slot)->hash;
}

static const struct hashtab_ops bidf_ops = { sizeof(struct bidfunc), 64, bidf_empty, bidf_hash };

/*
 * The gfunc of session function f: by name and module file name, except
 * that a function named on one side and unnamed (FILE+0xADDR) on the other
 * is one function when their modules' build-ids and addresses are equal
 * (a recording of a stripped build against one with its debug file); the
 * unnamed gfunc then takes the name.
 */
static uint32_t intern_session_func(struct diff *d, const struct bp_session *s, size_t f)
{
	const struct bp_func *fn = &s->funcs[f];
	const char *name = fn->name ? fn->name : "", *module = session__func_module(s, f);
	const char *bid = fn->module < s->nmodules ? s->modules[fn->module].build_id : NULL;
	struct bidfunc *b;
	uint64_t h;
	uint32_t g;
	char *key;
	size_t i;

	if (!bid || (fn->flags & (BP_FUNC_UNKNOWN | BP_FUNC_KERNEL | BP_FUNC_MARKER)))
		return intern_func(d, name, module);
	key = xasprintf("%s:%" PRIx64, bid, fn->addr);
	h = str_hash(key, "");
	hashtab__reserve((void **)&d->bidf, &d->bidf_cap, d->nbidf, &bidf_ops);
	for (i = hashtab__first(h, d->bidf_cap); (b = &d->bidf[i])->key;
	     i = hashtab__next(i, d->bidf_cap))
		if (b->hash == h && !strcmp(b->key, key))
			break;
	if (!b->key) {
		g = intern_func(d, name, module);
		*b = (struct bidfunc){ key, h, g };
		d->nbidf++;
		return g;
	}
	free(key);
	g = b->g;
	if (!strcmp(d->gf[g].name, name))
		return g;
	if (unnamed(name, fn->addr) && !unnamed(d->gf[g].name, fn->addr))
		return g;
	if (!unnamed(d->gf[g].name, fn->addr) || unnamed(name, fn->addr) ||
	    d->gf_slots[func_slot(d, name, module, str_hash(name, module))])
		return intern_func(d, name, module);	/* two names for one address: by name */
	/* the gfunc so far unnamed takes this side's name */
	free(d->gf[g].name);
	d->gf[g].name = xstrdup(name);
	d->gf[g].hash = str_hash(name, d->gf[g].module);
	d->gf_nslots /= 2;	/* (rehash doubles it: the same size again) */
	rehash(&d->gf_slots, &d->gf_nslots, d->ngf, gf_key, d);
	return g;
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

/* Calls whose duration is not a real one: no entry seen, closed at the end, unwound. */
#define DIFF_INEXACT (BP_CALL_UNFINISHED | BP_CALL_NO_ENTRY | BP_CALL_UNWOUND | BP_CALL_NO_RETPROBE | \
		      BP_CALL_DROPPED | BP_CALL_ENTRY_LOST)

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

		reservoir__init(&f->res, str_hash(name ? name : "", session__func_module(s, c->func)) ^
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

	diff_coro_event(sd, s, ev);
	switch (ev->kind) {
	case BP_EV_CALL:
		return add_call(sd, side ? 1 : 0, s, &ev->call);
	case BP_EV_SAMPLE:
		return add_sample(sd, s, &ev->sample);
	case BP_EV_LOSS:
		sd->run_lost += ev->loss.count;
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
 * This recording's estimate of a function's per-call time, for the test
 * across runs: the log of the p12.5 of its timed calls (the median of the
 * faster quarter, see diff_calls_one()), or of the p50 with --all-calls; NAN
 * with fewer than min_calls timed calls in this recording.
 */
static void run_estimate(const struct diff *d, const struct side *sd, struct side_func *y,
			 struct reservoir *res)
{
	uint32_t k, run = sd->nruns;
	uint64_t q;

	if (run >= y->nrm) {
		y->rm = xrealloc(y->rm, (run + 1) * sizeof(*y->rm));
		for (k = y->nrm; k <= run; k++)
			y->rm[k] = NAN;
		y->nrm = run + 1;
	}
	if (res->n < d->o.min_calls)
		return;
	reservoir__sort(res);
	q = stats__quantile(res->v, res->n, d->o.all_calls ? 0.5 : 0.125);
	y->rm[run] = log((double)(q ? q : 1));
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

	pthread_mutex_lock(&d->lock);

	for (f = 0; f < s->nfuncs; f++)
		gmap[f] = intern_session_func(d, s, f) + 1;
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
		run_estimate(d, sd, y, &x->res);
		reservoir__merge(&y->res, &x->res);
		if (x->o_calls) {
			struct side_path r = { x->o_calls, x->o_total, x->o_self, 0 };

			add_path_row(sd, intern_path(d, 0, g), &r);
		}
	}
	for (p = 1; p < sd->nsp && p < s->npaths; p++)
		if (sd->sp[p].calls || sd->sp[p].samples)
			add_path_row(sd, pmap[p], &sd->sp[p]);
	diff_coro_side_done(sd, s, gmap);
	if (!sd->nruns) {
		sd->label = xstrdup(label ? label : "");
		sd->cmdline = xstrdup(s->cmdline ? s->cmdline : "");
	} else {
		size_t n = strlen(sd->label) + strlen(label ? label : "") + 3;
		char *l = xcalloc(n, 1);

		snprintf(l, n, "%s, %s", sd->label, label ? label : "");
		free(sd->label);
		sd->label = l;
	}
	sd->nruns++;
	sd->duration += s->duration;
	sd->lost += s->lost_total > sd->run_lost ? s->lost_total : sd->run_lost;
	sd->run_lost = 0;
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
	pthread_mutex_unlock(&d->lock);
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
	if (d->mode == DIFF_CALLS && (b->nruns > 1 || n->nruns > 1) &&
	    (b->nruns < 2 || n->nruns < 2)) {
		p_err("cannot compare %u recording%s with %u: the test across runs needs at least "
		      "2 recordings on each side", b->nruns, b->nruns == 1 ? "" : "s", n->nruns);
		return -EINVAL;
	}
	d->g_p = d->g_lo = d->g_hi = NAN;
	build_tree(d);
	finish_side(d, &d->side[0]);
	finish_side(d, &d->side[1]);
	if (d->mode == DIFF_CALLS && (b->nruns > 1 || n->nruns > 1))
		diff_calls_runs(d);
	else if (d->mode == DIFF_CALLS)
		diff_calls_one(d);
	else
		diff_samples(d);
	d->computed = true;
	return 0;
}
