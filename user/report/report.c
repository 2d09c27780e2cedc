// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report: per-function and per-call-path aggregates of decoded calls, and
 * their printing as pretty tables, JSON or CSV.  See report.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "base/log.h"
#include "report.h"
#include "base/util.h"

/*
 * Durations per function go into a log-linear histogram (HDR-style): values
 * below 16 ns have a bucket each; above, every power of two [2^e, 2^(e+1))
 * is split into 16 equal sub-buckets of width 2^(e-4).  That is 16 + 60 * 16
 * = 976 buckets for the whole uint64_t range.  A percentile is reported as
 * the middle of its bucket, clamped to the exact [min, max]: a bucket starts
 * at lo >= 16 * width, so the middle is off by less than width / 2 <= lo / 32,
 * i.e. the relative error of p50/p99 is at most 1/32 (3.125%), and zero below
 * 32 ns.  Histograms are allocated at a function's first call (7.8 KiB each),
 * so memory follows the functions actually called.
 */
#define HIST_SUB_BITS	4
#define HIST_SUB	(1u << HIST_SUB_BITS)
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct func_row {
	uint64_t calls;
	uint64_t sum;		/* inclusive ns of every call, nested ones too: for avg */
	uint64_t self;
	uint64_t min, max;
	uint64_t total;		/* inclusive ns of outermost activations (resolve()) */
	uint64_t *hist;		/* HIST_BUCKETS counts, NULL until the first call */
};

/* Aggregates of the calls with one call path (and function). */
struct path_row {
	uint32_t path;
	uint32_t func;
	uint64_t calls, total, self, max;
};

struct report {
	struct report_opts o;
	struct func_row *funcs;
	size_t nfuncs;
	struct path_row *rows;	/* dense, in order of first call */
	size_t nrows;
	uint32_t *slots;	/* open addressing over rows: row index + 1, 0 = empty */
	size_t nslots;
	uint64_t ncalls, nunfinished, lost;
	uint64_t nsamples, sample_weight;	/* stack samples: a table of their own (see print_samples) */
	/* per function, [0] cpu samples, [1] off-cpu intervals: leaf (self) and anywhere on the stack */
	struct samp_row {
		uint64_t self_n, total_n, self_w, total_w;
		uint64_t last;		/* serial of the last sample that counted it in total */
	} *samp[2];
	size_t nsamp[2];
	uint64_t samp_n[2], samp_w[2];
	/* dependency edges by (kind, source function, destination function) */
	struct edge_row {
		uint32_t kind, src, dst, used;
		uint64_t count, latency;
	} *edges;
	size_t edges_cap, nedges;
	/* BPFPROF_MARK checkpoints, in arrival order (per thread: in time order) */
	struct mark_row {
		uint64_t ts;
		uint32_t pid, tid;
		char label[64];
	} *marks;
	size_t nmarks, marks_cap;
	uint64_t last_end;	/* latest call end: the wall time when the session has none */

	/* built by resolve() from the (complete) session paths */
	uint32_t *first_child, *next_sibling;	/* per path, 0 = none */
	uint32_t *node_row;	/* per path: its row index + 1, 0 = no calls */
	uint8_t *live;		/* per path: it or a descendant has calls */
	size_t npaths;
};

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
static uint64_t percentile(const struct func_row *f, unsigned int q)
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
	r = xcalloc(1, sizeof(*r));
	if (opts)
		r->o = *opts;
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
	for (i = 0; i < r->nfuncs; i++)
		free(r->funcs[i].hist);
	free(r->funcs);
	free(r->rows);
	free(r->slots);
	free(r->samp[0]);
	free(r->samp[1]);
	free(r->edges);
	free(r->marks);
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

	if ((r->o.pid && sm->pid != r->o.pid) || (r->o.tid && sm->tid != r->o.tid))
		return 0;
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
	if ((r->o.pid && e->src_pid != r->o.pid && e->dst_pid != r->o.pid) ||
	    (r->o.tid && e->src_tid != r->o.tid && e->dst_tid != r->o.tid))
		return 0;
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

	switch (ev->kind) {
	case BP_EV_CALL:
		c = &ev->call;
		if ((r->o.pid && c->pid != r->o.pid) || (r->o.tid && c->tid != r->o.tid))
			return 0;
		/* funcs are known before their calls: anything else is corrupt input */
		if (c->func >= s->nfuncs)
			return -EINVAL;
		add_call(r, c);
		return 0;
	case BP_EV_SAMPLE:
		return add_sample(r, s, &ev->sample);
	case BP_EV_EDGE:
		return add_edge(r, s, &ev->edge);
	case BP_EV_ANNOT:
		if (ev->annot.kind != BP_ANNOT_MARK ||
		    (r->o.pid && ev->annot.pid != r->o.pid) || (r->o.tid && ev->annot.tid != r->o.tid))
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
static void resolve(struct report *r, const struct bp_session *s)
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

/* Descending by the key, then by total; equal rows by name, so output is stable. */
static int cmp_funcs(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct func_row *x = &c->r->funcs[i], *y = &c->r->funcs[j];
	uint64_t kx = func_key(x, c->key), ky = func_key(y, c->key);
	int d;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	d = strcmp(session__func_name(c->s, i), session__func_name(c->s, j));
	if (d)
		return d;
	return i < j ? -1 : i > j;
}

/* Tree children: a, b are path numbers with a row each (or live descendants). */
static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	static const struct path_row none;
	const struct path_row *x = c->r->node_row[i] ? &c->r->rows[c->r->node_row[i] - 1] : &none;
	const struct path_row *y = c->r->node_row[j] ? &c->r->rows[c->r->node_row[j] - 1] : &none;
	uint64_t kx = row_key(x, c->key), ky = row_key(y, c->key);
	int d;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	d = strcmp(session__func_name(c->s, c->s->paths[i].func),
		   session__func_name(c->s, c->s->paths[j].func));
	if (d)
		return d;
	return i < j ? -1 : i > j;
}

/* The functions with calls, sorted; returns how many. */
static size_t sorted_funcs(struct report *r, const struct bp_session *s, enum report_sort key,
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

static uint64_t wall_ns(const struct report *r, const struct bp_session *s)
{
	/* an archive cut short may lack the duration: the last call end is a bound */
	return s->duration ? s->duration : r->last_end;
}

static double pct_wall(const struct report *r, const struct bp_session *s, uint64_t ns)
{
	uint64_t w = wall_ns(r, s);

	return w ? 100.0 * (double)ns / (double)w : 0.0;
}

static const char *func_module(const struct bp_session *s, uint32_t func)
{
	const char *path, *base;

	if (func >= s->nfuncs || s->funcs[func].module >= s->nmodules)
		return "";
	path = s->modules[s->funcs[func].module].path;
	base = strrchr(path, '/');
	return base ? base + 1 : path;
}

static uint64_t lost_records(const struct report *r, const struct bp_session *s)
{
	/* the loss events, or the session's counter when it saw more (end of archive) */
	return s->lost_total > r->lost ? s->lost_total : r->lost;
}

/*
 * Depth-first walk of the live call paths, children sorted by the sort key,
 * at most opts.depth levels.  `chain` holds the path numbers from the
 * outermost call down to the visited node.  Iterative, like resolve().
 */
typedef void (*tree_visit_fn)(struct report *r, const struct bp_session *s, FILE *f,
			      const uint32_t *chain, size_t depth, bool first);

struct walk_frame {
	uint32_t *kids;
	size_t nkids, next;
};

static void walk_tree(struct report *r, const struct bp_session *s, FILE *f, tree_visit_fn visit)
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

static const struct path_row *node_stats(const struct report *r, uint32_t p)
{
	static const struct path_row none;

	return r->node_row[p] ? &r->rows[r->node_row[p] - 1] : &none;
}

/* ---------------------------------------------------------------- pretty */

static void pretty_header(struct report *r, const struct bp_session *s, FILE *f)
{
	char d[32];

	fprintf(f, "command: %s   duration: %s   calls: %" PRIu64 "   lost records: %" PRIu64
		   "   unfinished: %" PRIu64 "\n",
		s->cmdline ? s->cmdline : "?", fmt_duration(wall_ns(r, s), d, sizeof(d)), r->ncalls,
		lost_records(r, s), r->nunfinished);
	if (r->o.pid || r->o.tid) {
		fprintf(f, "only calls of");
		if (r->o.pid)
			fprintf(f, " pid %u", r->o.pid);
		if (r->o.tid)
			fprintf(f, " tid %u", r->o.tid);
		fputc('\n', f);
	}
}

static void pretty_name(const struct bp_session *s, FILE *f, uint32_t func)
{
	fputs(session__func_name(s, func), f);
	/* the module only when there is a choice */
	if (s->nmodules > 1)
		fprintf(f, "  [%s]", func_module(s, func));
	fputc('\n', f);
}

static void pretty_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	char b[8][32], pct[16];
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = sorted_funcs(r, s, r->o.sort, &idx);
	fprintf(f, "%10s %9s %9s %9s %9s %9s %9s %9s %6s  %s\n", "calls", "total", "self", "avg",
		"min", "max", "p50", "p99", "wall", "function");
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		snprintf(pct, sizeof(pct), "%.1f%%", pct_wall(r, s, fr->total));
		fprintf(f, "%10" PRIu64 " %9s %9s %9s %9s %9s %9s %9s %6s  ", fr->calls,
			fmt_duration(fr->total, b[0], sizeof(b[0])),
			fmt_duration(fr->self, b[1], sizeof(b[1])),
			fmt_duration(fr->sum / fr->calls, b[2], sizeof(b[2])),
			fmt_duration(fr->min, b[3], sizeof(b[3])),
			fmt_duration(fr->max, b[4], sizeof(b[4])),
			fmt_duration(percentile(fr, 50), b[5], sizeof(b[5])),
			fmt_duration(percentile(fr, 99), b[6], sizeof(b[6])), pct);
		pretty_name(s, f, idx[i]);
	}
	if (n > top)
		fprintf(f, "... %zu more functions (--top)\n", n - top);
	free(idx);
}

static void pretty_node(struct report *r, const struct bp_session *s, FILE *f,
			const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = node_stats(r, chain[depth - 1]);
	char b[2][32];

	if (first)
		fprintf(f, "%10s %9s %9s  %s\n", "calls", "total", "self", "call tree");
	fprintf(f, "%10" PRIu64 " %9s %9s  %*s", p->calls, fmt_duration(p->total, b[0], sizeof(b[0])),
		fmt_duration(p->self, b[1], sizeof(b[1])), (int)(2 * (depth - 1)), "");
	pretty_name(s, f, s->paths[chain[depth - 1]].func);
}

/* ---------------------------------------------------------------- json */

static void json_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = sorted_funcs(r, s, r->o.sort, &idx);
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", f);
		json_str(f, session__func_name(s, idx[i]));
		fputs(",\"module\":", f);
		json_str(f, func_module(s, idx[i]));
		fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
			   ",\"avg_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			   ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"pct_wall\":%.3f}",
			fr->calls, fr->total, fr->self, fr->sum / fr->calls, fr->min, fr->max,
			percentile(fr, 50), percentile(fr, 99), pct_wall(r, s, fr->total));
	}
	if (n)
		fputc('\n', f);
	free(idx);
}

static void json_node(struct report *r, const struct bp_session *s, FILE *f,
		      const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = node_stats(r, chain[depth - 1]);
	size_t i;

	fputs(first ? "\n  {\"path\":[" : ",\n  {\"path\":[", f);
	for (i = 0; i < depth; i++) {
		if (i)
			fputc(',', f);
		json_str(f, session__func_name(s, s->paths[chain[i]].func));
	}
	fprintf(f, "],\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64 "}",
		p->calls, p->total, p->self);
}

static void json_samples(const struct report *r, const struct bp_session *s, FILE *f, int k);
static void json_marks(struct report *r, FILE *f);
static void json_edges(const struct report *r, const struct bp_session *s, FILE *f);

static void print_json(struct report *r, const struct bp_session *s, FILE *f)
{
	fputs("{\"command\":", f);
	json_str(f, s->cmdline ? s->cmdline : "");
	fprintf(f, ",\"duration_ns\":%" PRIu64 ",\"calls\":%" PRIu64 ",\"unfinished\":%" PRIu64
		   ",\"lost\":%" PRIu64, wall_ns(r, s), r->ncalls, r->nunfinished, lost_records(r, s));
	if (r->o.pid)
		fprintf(f, ",\"pid\":%u", r->o.pid);
	if (r->o.tid)
		fprintf(f, ",\"tid\":%u", r->o.tid);
	/* both keys are always there, empty when left out, so readers need no case */
	fputs(",\n\"functions\":[", f);
	if (!r->o.tree_only)
		json_flat(r, s, f);
	fputs("],\n\"tree\":[", f);
	if (!r->o.no_tree) {
		walk_tree(r, s, f, json_node);
		if (r->nrows)
			fputc('\n', f);
	}
	fprintf(f, "],\n\"cpu_samples\":%" PRIu64 ",\"samples\":[", r->samp_n[0]);
	json_samples(r, s, f, 0);
	fprintf(f, "],\n\"offcpu_ns\":%" PRIu64 ",\"offcpu\":[", r->samp_w[1]);
	json_samples(r, s, f, 1);
	fputs("],\n\"edges\":[", f);
	json_edges(r, s, f);
	fputs("],\n\"marks\":[", f);
	json_marks(r, f);
	fputs("]}\n", f);
}

/* ---------------------------------------------------------------- csv */

/* RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
static void csv_field(FILE *f, const char *v)
{
	if (!strpbrk(v, ",\"\r\n")) {
		fputs(v, f);
		return;
	}
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '"')
			fputc('"', f);
		fputc(*v, f);
	}
	fputc('"', f);
}

static void csv_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = sorted_funcs(r, s, r->o.sort, &idx);
	fputs("name,module,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,p50_ns,p99_ns,pct_wall\r\n",
	      f);
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		csv_field(f, session__func_name(s, idx[i]));
		fputc(',', f);
		csv_field(f, func_module(s, idx[i]));
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 ",%.3f\r\n",
			fr->calls, fr->total, fr->self, fr->sum / fr->calls, fr->min, fr->max,
			percentile(fr, 50), percentile(fr, 99), pct_wall(r, s, fr->total));
	}
	free(idx);
}

static void csv_node(struct report *r, const struct bp_session *s, FILE *f,
		     const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = node_stats(r, chain[depth - 1]);
	char *path = NULL;
	size_t len = 0, i;
	FILE *m = open_memstream(&path, &len);

	if (!m) {
		fputs("[out of memory]", f);
		return;
	}
	/* the path as folded stacks write it: outermost first, ';' between */
	for (i = 0; i < depth; i++)
		fprintf(m, "%s%s", i ? ";" : "", session__func_name(s, s->paths[chain[i]].func));
	fclose(m);
	csv_field(f, path ? path : "");
	free(path);
	fprintf(f, ",%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n", depth, p->calls, p->total,
		p->self);
}

/* ---------------------------------------------------------------- samples and edges */

static const struct report *sort_r;
static int sort_k;

static int by_samp_total(const void *a, const void *b)
{
	const struct samp_row *x = &sort_r->samp[sort_k][*(const uint32_t *)a];
	const struct samp_row *y = &sort_r->samp[sort_k][*(const uint32_t *)b];

	if (x->total_w != y->total_w)
		return x->total_w < y->total_w ? 1 : -1;
	if (x->self_w != y->self_w)
		return x->self_w < y->self_w ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Functions with samples of kind k, by total weight; returns how many (caller frees *out). */
static size_t sorted_samples(const struct report *r, int k, uint32_t **out)
{
	uint32_t *idx = xcalloc(r->nsamp[k] + 1, sizeof(*idx));
	size_t n = 0, i;

	for (i = 0; i < r->nsamp[k]; i++)
		if (r->samp[k][i].total_n)
			idx[n++] = i;
	sort_r = r;
	sort_k = k;
	qsort(idx, n, sizeof(*idx), by_samp_total);
	*out = idx;
	return n;
}

static void pretty_samples(const struct report *r, const struct bp_session *s, FILE *f, int k)
{
	uint32_t *idx;
	size_t n = sorted_samples(r, k, &idx), i, top = r->o.top ? r->o.top : n;
	char a[32], b[32];

	if (!n) {
		free(idx);
		return;
	}
	if (k == 0)
		fprintf(f, "\ncpu samples: %" PRIu64 " (%s of cpu time)\n", r->samp_n[0],
			fmt_duration(r->samp_w[0], a, sizeof(a)));
	else
		fprintf(f, "\noff-cpu: %" PRIu64 " blocked intervals, %s in all\n", r->samp_n[1],
			fmt_duration(r->samp_w[1], a, sizeof(a)));
	fprintf(f, "  %7s %7s  %10s %10s  %s\n", "self%", "total%", k ? "self" : "self", "total",
		"function");
	for (i = 0; i < n && i < top; i++) {
		const struct samp_row *row = &r->samp[k][idx[i]];

		fprintf(f, "  %6.2f%% %6.2f%%  %10s %10s  %s\n",
			100.0 * row->self_w / (r->samp_w[k] ? r->samp_w[k] : 1),
			100.0 * row->total_w / (r->samp_w[k] ? r->samp_w[k] : 1),
			fmt_duration(row->self_w, a, sizeof(a)), fmt_duration(row->total_w, b, sizeof(b)),
			session__func_name(s, idx[i]));
	}
	free(idx);
}

static int by_edge_count(const void *a, const void *b)
{
	const struct edge_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->src != y->src ? (x->src < y->src ? -1 : 1) : (x->dst < y->dst ? -1 : x->dst > y->dst);
}

/* The edges, most frequent first (a compact copy of the hash table). */
static struct edge_row *sorted_edges(const struct report *r)
{
	struct edge_row *v = xcalloc(r->nedges + 1, sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < r->edges_cap; i++)
		if (r->edges[i].used)
			v[n++] = r->edges[i];
	qsort(v, n, sizeof(*v), by_edge_count);
	return v;
}

static void pretty_edges(const struct report *r, const struct bp_session *s, FILE *f)
{
	struct edge_row *v;
	size_t i, top;
	char a[32], b[32];

	if (!r->nedges)
		return;
	v = sorted_edges(r);
	top = r->o.top ? r->o.top : r->nedges;
	fprintf(f, "\nedges: %zu kinds of cause -> effect\n", r->nedges);
	fprintf(f, "  %-7s %8s  %10s %10s  %s\n", "kind", "count", "latency", "avg", "source -> target");
	for (i = 0; i < r->nedges && i < top; i++) {
		fprintf(f, "  %-7s %8" PRIu64 "  %10s %10s  %s -> %s\n", session__edge_kind(v[i].kind),
			v[i].count, fmt_duration(v[i].latency, a, sizeof(a)),
			fmt_duration(v[i].latency / v[i].count, b, sizeof(b)),
			session__func_name(s, v[i].src), session__func_name(s, v[i].dst));
	}
	free(v);
}

static void json_samples(const struct report *r, const struct bp_session *s, FILE *f, int k)
{
	uint32_t *idx;
	size_t n = sorted_samples(r, k, &idx), i;

	for (i = 0; i < n; i++) {
		const struct samp_row *row = &r->samp[k][idx[i]];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_str(f, session__func_name(s, idx[i]));
		fprintf(f, ",\"self_samples\":%" PRIu64 ",\"total_samples\":%" PRIu64
			",\"self_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_pct\":%.4f"
			",\"total_pct\":%.4f}", row->self_n, row->total_n, row->self_w, row->total_w,
			100.0 * row->self_w / (r->samp_w[k] ? r->samp_w[k] : 1),
			100.0 * row->total_w / (r->samp_w[k] ? r->samp_w[k] : 1));
	}
	free(idx);
}

static void json_edges(const struct report *r, const struct bp_session *s, FILE *f)
{
	struct edge_row *v = r->nedges ? sorted_edges(r) : NULL;
	size_t i;

	for (i = 0; i < r->nedges; i++) {
		fprintf(f, "%s{\"kind\":\"%s\",\"from\":", i ? ",\n" : "\n",
			session__edge_kind(v[i].kind));
		json_str(f, session__func_name(s, v[i].src));
		fputs(",\"to\":", f);
		json_str(f, session__func_name(s, v[i].dst));
		fprintf(f, ",\"count\":%" PRIu64 ",\"latency_ns\":%" PRIu64 "}", v[i].count,
			v[i].latency);
	}
	free(v);
}

static void csv_edges(const struct report *r, const struct bp_session *s, FILE *f)
{
	struct edge_row *v = r->nedges ? sorted_edges(r) : NULL;
	size_t i;

	fputs("kind,from,to,count,latency_ns\r\n", f);
	for (i = 0; i < r->nedges; i++) {
		fprintf(f, "%s,", session__edge_kind(v[i].kind));
		csv_field(f, session__func_name(s, v[i].src));
		fputc(',', f);
		csv_field(f, session__func_name(s, v[i].dst));
		fprintf(f, ",%" PRIu64 ",%" PRIu64 "\r\n", v[i].count, v[i].latency);
	}
	free(v);
}

static int by_thread_time(const void *a, const void *b)
{
	const struct mark_row *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/*
 * The checkpoint view (piker's profiler output): per thread, each mark with
 * the time since the thread's previous mark and since its first one.
 */
static void pretty_marks(struct report *r, const struct bp_session *s, FILE *f)
{
	size_t i;
	char a[32], b[32];

	qsort(r->marks, r->nmarks, sizeof(*r->marks), by_thread_time);
	for (i = 0; i < r->nmarks; i++) {
		const struct mark_row *m = &r->marks[i];
		bool first = !i || r->marks[i - 1].tid != m->tid;
		bool last = i + 1 == r->nmarks || r->marks[i + 1].tid != m->tid;
		size_t start = i;
		const struct bp_thread *t = session__find_thread(s, m->tid);

		if (first) {
			fprintf(f, "> Entering thread %u (%.16s) of pid %u\n", m->tid,
				t && t->name[0] ? t->name : "?", m->pid);
		} else {
			while (start > 0 && r->marks[start - 1].tid == m->tid)
				start--;
		}
		fprintf(f, "  %s: %s, tot: %s\n", m->label,
			fmt_duration(first ? 0 : m->ts - r->marks[i - 1].ts, a, sizeof(a)),
			fmt_duration(m->ts - r->marks[first ? i : start].ts, b, sizeof(b)));
		if (last)
			fprintf(f, "< Exiting thread %u, total %s\n", m->tid,
				fmt_duration(m->ts - r->marks[first ? i : start].ts, b, sizeof(b)));
	}
}

static void json_marks(struct report *r, FILE *f)
{
	size_t i, start = 0;

	qsort(r->marks, r->nmarks, sizeof(*r->marks), by_thread_time);
	for (i = 0; i < r->nmarks; i++) {
		const struct mark_row *m = &r->marks[i];
		bool first = !i || r->marks[i - 1].tid != m->tid;

		if (first)
			start = i;
		fprintf(f, "%s{\"pid\":%u,\"tid\":%u,\"label\":", i ? ",\n" : "\n", m->pid, m->tid);
		json_str(f, m->label);
		fprintf(f, ",\"ts_ns\":%" PRIu64 ",\"delta_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64 "}",
			m->ts, first ? 0 : m->ts - r->marks[i - 1].ts, m->ts - r->marks[start].ts);
	}
}

/* ---------------------------------------------------------------- entry points */

int report__print(struct report *r, const struct bp_session *s, FILE *f)
{
	resolve(r, s);
	switch (r->o.format) {
	case REPORT_PRETTY:
		pretty_header(r, s, f);
		if (r->o.marks) {
			pretty_marks(r, s, f);
			break;
		}
		if (r->o.edges) {
			pretty_edges(r, s, f);
			break;
		}
		if (!r->o.tree_only && r->ncalls) {
			fputc('\n', f);
			pretty_flat(r, s, f);
		}
		if (!r->o.no_tree && r->nrows) {
			fputc('\n', f);
			walk_tree(r, s, f, pretty_node);
		}
		if (!r->o.tree_only) {
			pretty_samples(r, s, f, 0);
			pretty_samples(r, s, f, 1);
			pretty_edges(r, s, f);
		}
		break;
	case REPORT_JSON:
		print_json(r, s, f);
		break;
	case REPORT_CSV:
		/* one table per CSV file: the tree only when asked for alone */
		if (r->o.edges) {
			csv_edges(r, s, f);
		} else if (r->o.tree_only) {
			fputs("path,depth,calls,total_ns,self_ns\r\n", f);
			walk_tree(r, s, f, csv_node);
		} else {
			csv_flat(r, s, f);
		}
		break;
	}
	return ferror(f) ? -EIO : 0;
}

void report__print_summary(struct report *r, const struct bp_session *s, FILE *f, size_t top)
{
	char b[4][32];
	uint32_t *idx;
	size_t n, i;

	resolve(r, s);
	n = sorted_funcs(r, s, REPORT_SORT_TOTAL, &idx);
	if (n)
		fprintf(f, "  %10s  %9s  %9s  %9s  %9s  %s\n", "calls", "total", "self", "avg", "max",
			"function");
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		fprintf(f, "  %10" PRIu64 "  %9s  %9s  %9s  %9s  %s\n", fr->calls,
			fmt_duration(fr->total, b[0], sizeof(b[0])),
			fmt_duration(fr->self, b[1], sizeof(b[1])),
			fmt_duration(fr->sum / fr->calls, b[2], sizeof(b[2])),
			fmt_duration(fr->max, b[3], sizeof(b[3])), session__func_name(s, idx[i]));
	}
	if (n > top)
		fprintf(f, "  ... %zu more functions\n", n - top);
	free(idx);
}
