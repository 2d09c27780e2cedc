// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report: per-function and per-call-path aggregates of decoded calls (the
 * printing is in print.c).  See report.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/log.h"
#include "report.h"
#include "base/util.h"
#include "internal.h"

static unsigned int hist_index(uint64_t v)
{
	unsigned int e;

	if (v < HIST_SUB)
		return v;
	e = 63 - __builtin_clzll(v);	/* >= HIST_SUB_BITS */
	return (e - HIST_SUB_BITS + 1) * HIST_SUB + ((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* The middle of bucket i: the value reported for everything in it. */
static uint64_t hist_value(unsigned int i)
{
	unsigned int g = i / HIST_SUB, sub = i % HIST_SUB;
	uint64_t lo, width;

	if (g == 0)
		return i;
	width = 1ull << (g - 1);
	lo = (uint64_t)(HIST_SUB + sub) << (g - 1);
	return lo + (width - 1) / 2;
}

/* The nearest-rank percentile q (1..100) of a function's call durations. */
uint64_t report_percentile(const struct func_row *f, unsigned int q)
{
	uint64_t rank, seen = 0, v;
	unsigned int i;

	if (!f->calls || !f->hist)
		return 0;
	/* ceil(q% of calls) without overflowing for huge counts */
	rank = f->calls / 100 * q + (f->calls % 100 * q + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += f->hist[i];
		if (seen >= rank)
			break;
	}
	v = hist_value(i < HIST_BUCKETS ? i : HIST_BUCKETS - 1);
	if (v < f->min)
		v = f->min;
	if (v > f->max)
		v = f->max;
	return v;
}

int report__parse_sort(const char *name, enum report_sort *out)
{
	static const char *const names[] = {
		[REPORT_SORT_TOTAL] = "total", [REPORT_SORT_SELF] = "self",
		[REPORT_SORT_CALLS] = "calls", [REPORT_SORT_AVG] = "avg",
		[REPORT_SORT_MAX] = "max",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(name, names[i])) {
			*out = i;
			return 0;
		}
	}
	return -EINVAL;
}

int report__parse_format(const char *name, enum report_format *out)
{
	if (!strcmp(name, "pretty"))
		*out = REPORT_PRETTY;
	else if (!strcmp(name, "json"))
		*out = REPORT_JSON;
	else if (!strcmp(name, "csv"))
		*out = REPORT_CSV;
	else
		return -EINVAL;
	return 0;
}

int report__new(const struct report_opts *opts, struct report **out)
{
	struct report *r;

	*out = NULL;
	if (opts && opts->no_tree && opts->tree_only)
		return -EINVAL;
	if (opts && opts->args) {
		struct report_args *a;
		int err = report_args__new(opts->args, &a);

		if (err)
			return err;
		r = xcalloc(1, sizeof(*r));
		r->args = a;
	} else {
		r = xcalloc(1, sizeof(*r));
	}
	if (opts)
		r->o = *opts;
	/* the one filter's rules (model/filter.h), for one process and/or thread */
	r->filter.pids = r->o.pid ? &r->filter_pid : NULL;
	r->filter.npids = !!r->o.pid;
	r->filter_pid = r->o.pid;
	r->filter.tids = r->o.tid ? &r->filter_tid : NULL;
	r->filter.ntids = !!r->o.tid;
	r->filter_tid = r->o.tid;
	*out = r;
	return 0;
}

static void free_tree(struct report *r)
{
	free(r->first_child);
	free(r->next_sibling);
	free(r->node_row);
	free(r->live);
	r->first_child = r->next_sibling = r->node_row = NULL;
	r->live = NULL;
	r->npaths = 0;
}

void report__free(struct report *r)
{
	size_t i;

	if (!r)
		return;
	report_args__free(r->args);
	report_coro_free(r);
	for (i = 0; i < r->nfuncs; i++)
		free(r->funcs[i].hist);
	free(r->funcs);
	free(r->rows);
	free(r->slots);
	free(r->samp[0]);
	free(r->samp[1]);
	free(r->edges);
	free(r->marks);
	free(r->drops);
	free_tree(r);
	free(r);
}

static size_t row_slot(const struct report *r, uint32_t path, uint32_t func)
{
	uint64_t h = ((uint64_t)path << 32 | func) * 0x9e3779b97f4a7c15ull;

	return (h >> 32) & (r->nslots - 1);
}

/*
 * The row of (path, func).  Keyed by the pair, not the path alone, so that a
 * call whose path number is not (yet) in the session still lands in a row of
 * its own function.  Rows are few (distinct paths): a hash keeps a hostile
 * path number from sizing an array.
 */
static struct path_row *path_row(struct report *r, uint32_t path, uint32_t func)
{
	struct path_row *row;
	size_t j;

	if ((r->nrows + 1) * 2 > r->nslots) {
		size_t i;

		free(r->slots);
		r->nslots = r->nslots ? r->nslots * 2 : 256;
		r->slots = xcalloc(r->nslots, sizeof(*r->slots));
		for (i = 0; i < r->nrows; i++) {
			j = row_slot(r, r->rows[i].path, r->rows[i].func);
			while (r->slots[j])
				j = (j + 1) & (r->nslots - 1);
			r->slots[j] = i + 1;
		}
	}
	for (j = row_slot(r, path, func); r->slots[j]; j = (j + 1) & (r->nslots - 1)) {
		row = &r->rows[r->slots[j] - 1];
		if (row->path == path && row->func == func)
			return row;
	}
	if ((r->nrows & (r->nrows - 1)) == 0)
		r->rows = xrealloc(r->rows, (r->nrows ? r->nrows * 2 : 64) * sizeof(*r->rows));
	row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->path = path;
	row->func = func;
	r->slots[j] = ++r->nrows;
	return row;
}

static void add_call(struct report *r, const struct bp_call *c)
{
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	struct path_row *row;
	struct func_row *f;

	if (c->func >= r->nfuncs) {
		size_t n = r->nfuncs ? r->nfuncs : 64;

		while (n <= c->func)
			n *= 2;
		r->funcs = xrealloc(r->funcs, n * sizeof(*r->funcs));
		memset(r->funcs + r->nfuncs, 0, (n - r->nfuncs) * sizeof(*r->funcs));
		r->nfuncs = n;
	}
	f = &r->funcs[c->func];
	/* record's summary shows no percentiles: no 7.8 KB histogram per function */
	if (!f->hist && !r->o.no_percentiles)
		f->hist = xcalloc(HIST_BUCKETS, sizeof(*f->hist));
	if (!f->calls || dur < f->min)
		f->min = dur;
	if (dur > f->max)
		f->max = dur;
	f->calls++;
	f->sum += dur;
	f->self += c->self;
	if (f->hist)
		f->hist[hist_index(dur)]++;

	row = path_row(r, c->path, c->func);
	row->calls++;
	row->total += dur;
	row->self += c->self;
	if (dur > row->max)
		row->max = dur;

	r->ncalls++;
	if (c->flags & BP_CALL_UNFINISHED)
		r->nunfinished++;
	if (c->flags & BP_CALL_ENTRY_LOST)
		r->nentry_lost++;
	if (c->end > r->last_end)
		r->last_end = c->end;
}

static struct samp_row *samp_row(struct report *r, int k, uint32_t func)
{
	if (func >= r->nsamp[k]) {
		size_t n = r->nsamp[k] ? r->nsamp[k] : 64;

		while (n <= func)
			n *= 2;
		r->samp[k] = xrealloc(r->samp[k], n * sizeof(*r->samp[k]));
		memset(r->samp[k] + r->nsamp[k], 0, (n - r->nsamp[k]) * sizeof(*r->samp[k]));
		r->nsamp[k] = n;
	}
	return &r->samp[k][func];
}

/* Stack samples: self weight to the leaf, total weight once per function on the stack. */
static int add_sample(struct report *r, const struct bp_session *s, const struct bp_sample *sm)
{
	int k = sm->flags & BP_SAMPLE_F_OFFCPU ? 1 : 0;
	uint32_t p;
	bool leaf = true;

	if (sm->path && sm->path >= s->npaths)	/* 0: an empty stack, no path table needed */
		return -EINVAL;
	r->nsamples++;
	r->sample_weight += sm->weight;
	r->samp_n[k]++;
	r->samp_w[k] += sm->weight;
	for (p = sm->path; p && p < s->npaths; p = s->paths[p].parent) {
		uint32_t func = s->paths[p].func;
		struct samp_row *row;

		if (func >= s->nfuncs)
			return -EINVAL;
		row = samp_row(r, k, func);
		if (leaf) {
			row->self_n++;
			row->self_w += sm->weight;
			leaf = false;
		}
		if (row->last != r->samp_n[k]) {	/* recursion: once per sample */
			row->last = r->samp_n[k];
			row->total_n++;
			row->total_w += sm->weight;
		}
	}
	return 0;
}

static int add_edge(struct report *r, const struct bp_session *s, const struct bp_edge *e)
{
	struct edge_row *row;
	size_t i;

	if (e->src_func >= s->nfuncs || e->dst_func >= s->nfuncs)
		return -EINVAL;
	if ((r->nedges + 1) * 2 > r->edges_cap) {
		struct edge_row *old = r->edges;
		size_t oldcap = r->edges_cap;

		r->edges_cap = oldcap ? oldcap * 2 : 64;
		r->edges = xcalloc(r->edges_cap, sizeof(*r->edges));
		for (i = 0; i < oldcap; i++) {
			size_t j;

			if (!old[i].used)
				continue;
			j = (old[i].kind * 31u + old[i].src * 2654435761u + old[i].dst) & (r->edges_cap - 1);
			while (r->edges[j].used)
				j = (j + 1) & (r->edges_cap - 1);
			r->edges[j] = old[i];
		}
		free(old);
	}
	i = (e->kind * 31u + e->src_func * 2654435761u + e->dst_func) & (r->edges_cap - 1);
	while (r->edges[i].used && (r->edges[i].kind != e->kind || r->edges[i].src != e->src_func ||
				    r->edges[i].dst != e->dst_func))
		i = (i + 1) & (r->edges_cap - 1);
	row = &r->edges[i];
	if (!row->used) {
		row->used = 1;
		row->kind = e->kind;
		row->src = e->src_func;
		row->dst = e->dst_func;
		r->nedges++;
	}
	row->count++;
	if (e->dst_ts > e->src_ts)
		row->latency += e->dst_ts - e->src_ts;
	return 0;
}

int report__add(struct report *r, const struct bp_session *s, const struct bp_event *ev)
{
	const struct bp_call *c;

	if (!filter__keep(&r->filter, ev))
		return 0;
	switch (ev->kind) {
	case BP_EV_CALL:
		c = &ev->call;
		/* funcs are known before their calls: anything else is corrupt input */
		if (c->func >= s->nfuncs)
			return -EINVAL;
		add_call(r, c);
		report_coro_call(r, s, c);
		if (r->args)
			report_args__add(r->args, s, c);
		return 0;
	case BP_EV_SAMPLE:
		return add_sample(r, s, &ev->sample);
	case BP_EV_EDGE:
		report_coro_edge(r, &ev->edge);
		return add_edge(r, s, &ev->edge);
	case BP_EV_ANNOT:
		if (ev->annot.kind == BP_ANNOT_DROP)
			report_drop_add(r, &ev->annot);
		if (ev->annot.kind != BP_ANNOT_MARK)
			return 0;
		if (r->nmarks == r->marks_cap) {
			r->marks_cap = r->marks_cap ? r->marks_cap * 2 : 64;
			r->marks = xrealloc(r->marks, r->marks_cap * sizeof(*r->marks));
		}
		r->marks[r->nmarks].ts = ev->annot.ts;
		r->marks[r->nmarks].pid = ev->annot.pid;
		r->marks[r->nmarks].tid = ev->annot.tid;
		memcpy(r->marks[r->nmarks].label, ev->annot.name, sizeof(r->marks[0].label));
		r->marks[r->nmarks].label[63] = 0;
		r->nmarks++;
		return 0;
	case BP_EV_LOSS:
		/* a loss belongs to a CPU, not a thread: never filtered */
		r->lost += ev->loss.count;
		return 0;
	}
	return 0;	/* kinds added later do not concern the report */
}

/*
 * Works out what needs the complete path table: the tree (children lists,
 * which paths have calls) and the flat table's inclusive totals.
 *
 * Recursion: a call of f nested inside another activation of f on the same
 * thread (fib inside fib) is already part of that activation's inclusive
 * time.  Adding both would count the inner time twice, and fib(10) would
 * show ~9x its real duration.  So, as uftrace does, the flat total counts
 * only the outermost activation.  A call's path is the chain of its traced
 * callers on its thread, so "nested in f" is "f appears among the path's
 * ancestors".  Instead of walking the ancestors of every row (quadratic for
 * deep recursion: 100000 nested frames are 100000 paths), one depth-first
 * walk of the path tree keeps a count per function of its activations on
 * the current branch; a node is outermost when its function's count is 0.
 * Rows whose path is unknown to the session count as outermost.
 *
 * (A call whose entry was never seen — attach mid-call — gets a path at the
 * depth its return was seen, which may hide an enclosing activation; such
 * calls are flagged BP_CALL_NO_ENTRY and rare.)
 */
void report_resolve(struct report *r, const struct bp_session *s)
{
	size_t n = s->npaths, i;
	uint32_t *active = NULL, *stack = NULL, *cursor = NULL;
	uint8_t *outer = NULL;
	size_t sp = 0;

	free_tree(r);
	r->npaths = n;
	for (i = 0; i < r->nfuncs; i++)
		r->funcs[i].total = 0;
	if (n) {
		r->first_child = xcalloc(n, sizeof(*r->first_child));
		r->next_sibling = xcalloc(n, sizeof(*r->next_sibling));
		r->node_row = xcalloc(n, sizeof(*r->node_row));
		r->live = xcalloc(n, 1);
		/* a node the walk never reaches (corrupt parents) stays "outermost" */
		outer = xmalloc(n);
		memset(outer, 1, n);
		stack = xcalloc(n, sizeof(*stack));
		cursor = xcalloc(n, sizeof(*cursor));
		active = xcalloc(s->nfuncs ? s->nfuncs : 1, sizeof(*active));
	}
	/* children lists in reverse creation order; node 0 is the root, nobody's child */
	for (i = n; i-- > 1;) {
		uint32_t p = s->paths[i].parent;

		if (p >= n || p == i)
			continue;
		r->next_sibling[i] = r->first_child[p];
		r->first_child[p] = i;
	}
	/* iterative: recursion 100000 deep must not overflow the C stack */
	if (n) {
		stack[sp++] = 0;
		cursor[0] = r->first_child[0];
	}
	while (sp) {
		uint32_t p = stack[sp - 1], c = cursor[p];

		if (!c) {
			sp--;
			if (p && s->paths[p].func < s->nfuncs)
				active[s->paths[p].func]--;
			continue;
		}
		cursor[p] = r->next_sibling[c];
		if (s->paths[c].func < s->nfuncs)
			outer[c] = !active[s->paths[c].func]++;
		else
			outer[c] = 1;
		cursor[c] = r->first_child[c];
		stack[sp++] = c;
	}
	for (i = 0; i < r->nrows; i++) {
		const struct path_row *row = &r->rows[i];
		uint32_t p = row->path;
		bool known = p && p < n && s->paths[p].func == row->func;

		if (!known || outer[p])
			r->funcs[row->func].total += row->total;
		if (!known)
			continue;
		r->node_row[p] = i + 1;
		/* stops at the first node already marked: linear overall, ends on cycles */
		for (; p && p < n && !r->live[p]; p = s->paths[p].parent)
			r->live[p] = 1;
	}
	free(outer);
	free(stack);
	free(cursor);
	free(active);
}

static uint64_t func_key(const struct func_row *f, enum report_sort k)
{
	switch (k) {
	case REPORT_SORT_SELF:
		return f->self;
	case REPORT_SORT_CALLS:
		return f->calls;
	case REPORT_SORT_AVG:
		return f->calls ? f->sum / f->calls : 0;
	case REPORT_SORT_MAX:
		return f->max;
	case REPORT_SORT_TOTAL:
		break;
	}
	return f->total;
}

static uint64_t row_key(const struct path_row *p, enum report_sort k)
{
	switch (k) {
	case REPORT_SORT_SELF:
		return p->self;
	case REPORT_SORT_CALLS:
		return p->calls;
	case REPORT_SORT_AVG:
		return p->calls ? p->total / p->calls : 0;
	case REPORT_SORT_MAX:
		return p->max;
	case REPORT_SORT_TOTAL:
		break;
	}
	return p->total;
}

struct sort_ctx {
	const struct report *r;
	const struct bp_session *s;
	enum report_sort key;
};

/* The rows' one order: descending by key, total and calls; equal ones by name, then number. */
static int cmp_desc(uint64_t kx, uint64_t ky, uint64_t tx, uint64_t ty, uint64_t cx, uint64_t cy,
		    const char *nx, const char *ny, uint32_t i, uint32_t j)
{
	int d;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (cx != cy)
		return cx < cy ? 1 : -1;
	d = strcmp(nx, ny);
	if (d)
		return d;
	return i < j ? -1 : i > j;
}

/*
 * Descending by the key, then by total, then by calls (entry-only
 * functions, Go's, all have a total of 0); equal rows by name, so output is
 * stable.
 */
static int cmp_funcs(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct func_row *x = &c->r->funcs[i], *y = &c->r->funcs[j];

	return cmp_desc(func_key(x, c->key), func_key(y, c->key), x->total, y->total, x->calls,
			y->calls, session__func_name(c->s, i), session__func_name(c->s, j), i, j);
}

/* Tree children: a, b are path numbers with a row each (or live descendants). */
static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	static const struct path_row none;
	const struct path_row *x = c->r->node_row[i] ? &c->r->rows[c->r->node_row[i] - 1] : &none;
	const struct path_row *y = c->r->node_row[j] ? &c->r->rows[c->r->node_row[j] - 1] : &none;

	return cmp_desc(row_key(x, c->key), row_key(y, c->key), x->total, y->total, x->calls,
			y->calls, session__func_name(c->s, c->s->paths[i].func),
			session__func_name(c->s, c->s->paths[j].func), i, j);
}

/* The functions with calls, sorted; returns how many. */
size_t report_sorted_funcs(struct report *r, const struct bp_session *s, enum report_sort key,
			   uint32_t **out)
{
	struct sort_ctx c = { r, s, key };
	uint32_t *idx = xcalloc(r->nfuncs ? r->nfuncs : 1, sizeof(*idx));
	size_t i, n = 0;

	for (i = 0; i < r->nfuncs; i++)
		if (r->funcs[i].calls)
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_funcs, &c);
	*out = idx;
	return n;
}

uint64_t report_wall_ns(const struct report *r, const struct bp_session *s)
{
	/* an archive cut short may lack the duration: the last call end is a bound */
	return s->duration ? s->duration : r->last_end;
}

double report_pct_wall(const struct report *r, const struct bp_session *s, uint64_t ns)
{
	uint64_t w = report_wall_ns(r, s);

	return w ? 100.0 * (double)ns / (double)w : 0.0;
}

uint64_t report_lost_records(const struct report *r, const struct bp_session *s)
{
	/* the loss events, or the session's counter when it saw more (end of archive) */
	return s->lost_total > r->lost ? s->lost_total : r->lost;
}


struct walk_frame {
	uint32_t *kids;
	size_t nkids, next;
};

void report_walk_tree(struct report *r, const struct bp_session *s, FILE *f, tree_visit_fn visit)
{
	struct sort_ctx c = { r, s, r->o.sort };
	struct walk_frame *st;
	uint32_t *chain;
	size_t sp = 0, cap = 64, nvisited = 0;

	if (!r->npaths)
		return;
	st = xcalloc(cap, sizeof(*st));
	chain = xcalloc(cap, sizeof(*chain));
	chain[0] = 0;
	for (;;) {
		uint32_t p = chain[sp], k;
		struct walk_frame *fr = &st[sp];

		if (!fr->kids) {
			size_t n = 0;

			/* at the depth limit the node was visited, its children are not */
			if (!r->o.depth || sp < r->o.depth)
				for (k = r->first_child[p]; k; k = r->next_sibling[k])
					n += r->live[k];
			fr->kids = xcalloc(n ? n : 1, sizeof(*fr->kids));
			for (k = n ? r->first_child[p] : 0; k; k = r->next_sibling[k])
				if (r->live[k])
					fr->kids[fr->nkids++] = k;
			qsort_r(fr->kids, fr->nkids, sizeof(*fr->kids), cmp_nodes, &c);
		}
		if (fr->next == fr->nkids) {
			free(fr->kids);
			fr->kids = NULL;
			if (!sp)
				break;
			sp--;
			continue;
		}
		k = fr->kids[fr->next++];
		if (sp + 2 > cap) {
			cap *= 2;
			st = xrealloc(st, cap * sizeof(*st));
			chain = xrealloc(chain, cap * sizeof(*chain));
		}
		sp++;
		chain[sp] = k;
		memset(&st[sp], 0, sizeof(st[sp]));
		visit(r, s, f, chain + 1, sp, nvisited++ == 0);
	}
	free(st);
	free(chain);
}

const struct path_row *report_node_stats(const struct report *r, uint32_t p)
{
	static const struct path_row none;

	return r->node_row[p] ? &r->rows[r->node_row[p] - 1] : &none;
}

