// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "pathagg.h"

/* The counters of path p, the table grown to hold it. */
static struct path_stat *stat_of(struct path_agg *a, uint32_t p)
{
	if (p >= a->cap) {
		size_t cap = a->cap ? a->cap : 1024;

		while (cap <= p)
			cap *= 2;
		a->st = xrealloc(a->st, cap * sizeof(*a->st));
		memset(a->st + a->cap, 0, (cap - a->cap) * sizeof(*a->st));
		a->cap = cap;
	}
	return &a->st[p];
}

static void add_call(struct path_agg *a, const struct bp_session *s, const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	struct path_stat *st;

	a->ncalls++;
	if (c->end > a->end)
		a->end = c->end;
	if (c->path == 0 || c->path >= s->npaths) {
		a->nopath++;
		return;
	}
	st = stat_of(a, c->path);
	st->calls++;
	st->self += c->self;
	st->total += dur;
}

static void add_sample(struct path_agg *a, const struct bp_session *s, const struct bp_sample *sm)
{
	bool off = sm->flags & BP_SAMPLE_F_OFFCPU;
	uint64_t end = sm->ts + (off ? sm->weight : 0);
	struct path_stat *st;

	if (off) {
		a->noffcpu++;
		a->offcpu_ns += sm->weight;
	} else {
		a->nsamples++;
		a->cpu_ns += sm->weight;
	}
	if (end > a->end)
		a->end = end;
	if (sm->path == 0 || sm->path >= s->npaths) {
		a->nopath++;
		return;
	}
	st = stat_of(a, sm->path);
	if (off) {
		st->offcpu++;
		st->offcpu_ns += sm->weight;
	} else {
		st->cpu_samples++;
		st->cpu_ns += sm->weight;
	}
}

void path_agg__event(struct path_agg *a, const struct bp_session *s, const struct bp_event *ev)
{
	switch (ev->kind) {
	case BP_EV_CALL:
		add_call(a, s, &ev->call);
		break;
	case BP_EV_SAMPLE:
		add_sample(a, s, &ev->sample);
		break;
	case BP_EV_LOSS:
		a->lost += ev->loss.count;
		break;
	default:
		break;
	}
}

void path_agg__free(struct path_agg *a)
{
	free(a->st);
	memset(a, 0, sizeof(*a));
}

/* The parent of path p; a corrupt link (not to an older node) ends the chain. */
static uint32_t parent_of(const struct bp_session *s, uint32_t p)
{
	uint32_t par = s->paths[p].parent;

	return par < p ? par : 0;
}

/* A path that goes into some output: it has calls or samples. */
static bool stat_used(const struct path_stat *st)
{
	return st->calls || st->cpu_samples || st->offcpu;
}

static void stat_add(struct path_stat *to, const struct path_stat *from)
{
	to->calls += from->calls;
	to->self += from->self;
	to->total += from->total;
	to->cpu_samples += from->cpu_samples;
	to->cpu_ns += from->cpu_ns;
	to->offcpu += from->offcpu;
	to->offcpu_ns += from->offcpu_ns;
}

static int visit(path_sample_fn fn, void *ctx, uint32_t p, bool truncated,
		 const struct path_stat *st)
{
	struct path_sample ps = {
		.path = p,
		.truncated = truncated,
		.calls = st->calls,
		.self = st->self,
		.cpu_samples = st->cpu_samples,
		.cpu_ns = st->cpu_ns,
		.offcpu = st->offcpu,
		.offcpu_ns = st->offcpu_ns,
	};

	return fn(ctx, &ps);
}

int path_agg__for_each(const struct path_agg *a, const struct bp_session *s, size_t max_depth,
		       path_sample_fn fn, void *ctx)
{
	size_t n = s->npaths < a->cap ? s->npaths : a->cap;
	struct path_stat *cut = NULL;	/* per anchor: merged stats of the cut paths */
	uint32_t *depth = NULL, *anchor = NULL;
	size_t keep;
	uint32_t p;
	int err = 0;

	if (n < 2)
		return 0;
	if (max_depth < 2)
		max_depth = 2;
	keep = max_depth - 1;	/* real frames above the marker of a cut stack */

	/*
	 * Parents are interned before their children, so one pass in id order
	 * sees every parent first: depths and cut anchors in O(paths), not
	 * O(paths x depth), which matters for a 100000-deep recursion.
	 */
	depth = xcalloc(n, sizeof(*depth));
	anchor = xcalloc(n, sizeof(*anchor));
	for (p = 1; p < n; p++) {
		uint32_t par = parent_of(s, p);

		depth[p] = depth[par] + 1;
		if (depth[p] > keep)
			anchor[p] = depth[par] == keep ? par : anchor[par];
		if (depth[p] > max_depth && stat_used(&a->st[p])) {
			if (!cut)
				cut = xcalloc(n, sizeof(*cut));
			stat_add(&cut[anchor[p]], &a->st[p]);
		}
	}

	for (p = 1; p < n && !err; p++)
		if (depth[p] <= max_depth && stat_used(&a->st[p]))
			err = visit(fn, ctx, p, false, &a->st[p]);
	for (p = 1; cut && p < n && !err; p++)
		if (stat_used(&cut[p]))
			err = visit(fn, ctx, p, true, &cut[p]);
	free(cut);
	free(anchor);
	free(depth);
	return err;
}

void path_agg__funcs(const struct path_agg *a, const struct bp_session *s, struct func_stat **out,
		     size_t *nout)
{
	size_t n = s->npaths, nf = 0, sp, i;
	uint32_t *nkids, *kids, *stack, *next, *active;
	struct func_stat *fs;
	uint32_t p;

	for (p = 1; p < n; p++)
		if ((size_t)s->paths[p].func + 1 > nf)
			nf = (size_t)s->paths[p].func + 1;
	fs = xcalloc(nf ? nf : 1, sizeof(*fs));
	*out = fs;
	*nout = nf;
	if (n < 2)
		return;

	for (p = 1; p < n && p < a->cap; p++) {
		fs[s->paths[p].func].calls += a->st[p].calls;
		fs[s->paths[p].func].self += a->st[p].self;
	}

	/*
	 * Inclusive time must not count a recursive call inside an outer call
	 * of the same function twice: add a path's total only where no ancestor
	 * has its function.  A depth-first walk of the path tree with a count of
	 * the functions on the current stack answers that in O(paths); children
	 * lists are built first (compressed: offsets into one array).
	 */
	nkids = xcalloc(n + 1, sizeof(*nkids));
	kids = xcalloc(n, sizeof(*kids));
	stack = xcalloc(n, sizeof(*stack));
	next = xcalloc(n, sizeof(*next));
	active = xcalloc(nf, sizeof(*active));
	for (p = 1; p < n; p++)
		nkids[parent_of(s, p) + 1]++;
	for (i = 1; i <= n; i++)
		nkids[i] += nkids[i - 1];	/* nkids[x] is now where x's children start */
	for (p = 1; p < n; p++) {
		uint32_t par = parent_of(s, p);

		kids[nkids[par] + next[par]++] = p;
	}

	sp = 0;
	stack[sp] = 0;
	next[sp++] = nkids[0];
	while (sp) {
		uint32_t node = stack[sp - 1];

		if (next[sp - 1] < nkids[node + 1]) {
			uint32_t c = kids[next[sp - 1]++];
			uint32_t f = s->paths[c].func;

			if (!active[f]++ && c < a->cap)
				fs[f].total += a->st[c].total;
			stack[sp] = c;
			next[sp++] = nkids[c];
		} else {
			if (node)
				active[s->paths[node].func]--;
			sp--;
		}
	}
	free(active);
	free(next);
	free(stack);
	free(kids);
	free(nkids);
}
