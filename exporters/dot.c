// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Graphviz DOT call graph (`dot -Tsvg graph.dot > graph.svg`): one node per
 * function called, labelled with its calls, inclusive and self time, and
 * filled the redder the more self time it has; one edge per caller->callee
 * pair, labelled with the number of calls made along it.  The graph comes
 * from the interned call paths (a path's parent is its caller), aggregated
 * as calls end: memory is bounded by distinct call paths.  Every thread and
 * process is summed into one graph; lost records are named in the title.
 *
 * The dependency graph is drawn over the call graph: the edges (bp_edge)
 * aggregated by (kind, source function, target function), each a dashed
 * arrow labelled with its kind and count ("wakeup 10"), one colour per kind
 * (fork blue, wakeup orange, data green), with the mean wake-to-run latency
 * in a wakeup's tooltip.  They do not rank the nodes (constraint=false), so
 * the call graph keeps its caller-above-callee layout.  Memory: one entry
 * per distinct (kind, source, target), not per edge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/escape.h"
#include "exporter.h"
#include "base/log.h"
#include "pathagg.h"
#include "base/util.h"

/* Dependency edges of one (kind, source function, target function). */
struct dep {
	uint32_t kind;		/* BP_EDGE_*; 0: an empty slot */
	uint32_t from, to;	/* function ids */
	uint64_t count;
	uint64_t latency;	/* ns, summed: dst_ts - src_ts */
};

struct dot_priv {
	struct path_agg agg;
	struct dep *deps;	/* open addressing */
	size_t ndeps, capdeps;
	uint64_t nedges;
};

struct edge {
	uint32_t from, to;	/* function ids */
	uint64_t calls;
};

/* Functions drawn as themselves; the rest are folded into one node. */
#define DOT_MAX_NODES	60
/* The node the folded functions become: past every function id. */
#define FOLDED		UINT32_MAX

static const struct func_stat *rank_fs;	/* for cmp_rank (qsort has no context) */

/* More inclusive time first, then more calls, then the lower id. */
static int cmp_rank(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rank_fs[x].total != rank_fs[y].total)
		return rank_fs[x].total > rank_fs[y].total ? -1 : 1;
	if (rank_fs[x].calls != rank_fs[y].calls)
		return rank_fs[x].calls > rank_fs[y].calls ? -1 : 1;
	return x < y ? -1 : x > y;
}

static size_t dep_slot(const struct dep *v, size_t cap, uint32_t kind, uint32_t from, uint32_t to)
{
	size_t i = (kind * 31u + from * 2654435761u + to * 40503u) & (cap - 1);

	while (v[i].kind && (v[i].kind != kind || v[i].from != from || v[i].to != to))
		i = (i + 1) & (cap - 1);
	return i;
}

static void add_dep(struct dot_priv *p, const struct bp_session *s, const struct bp_edge *ed)
{
	struct dep *d;
	size_t i;

	/* Only edges between known functions can be drawn between nodes. */
	if (!ed->kind || ed->src_func >= s->nfuncs || ed->dst_func >= s->nfuncs)
		return;
	if ((p->ndeps + 1) * 2 > p->capdeps) {
		struct dep *old = p->deps;
		size_t oldcap = p->capdeps;

		p->capdeps = oldcap ? oldcap * 2 : 64;
		p->deps = xcalloc(p->capdeps, sizeof(*p->deps));
		for (i = 0; i < oldcap; i++)
			if (old[i].kind)
				p->deps[dep_slot(p->deps, p->capdeps, old[i].kind, old[i].from,
						 old[i].to)] = old[i];
		free(old);
	}
	d = &p->deps[dep_slot(p->deps, p->capdeps, ed->kind, ed->src_func, ed->dst_func)];
	if (!d->kind) {
		d->kind = ed->kind;
		d->from = ed->src_func;
		d->to = ed->dst_func;
		p->ndeps++;
	}
	d->count++;
	d->latency += ed->dst_ts > ed->src_ts ? ed->dst_ts - ed->src_ts : 0;
	p->nedges++;
}

static int dot_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	struct dot_priv *p = e->priv;

	if (ev->kind == BP_EV_EDGE)
		add_dep(p, s, &ev->edge);
	else
		path_agg__event(&p->agg, s, ev);
	return 0;
}

static int cmp_dep(const void *a, const void *b)
{
	const struct dep *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return 0;
}

/* The dependency edges, compacted out of the hash table and sorted. */
static struct dep *sorted_deps(const struct dot_priv *p)
{
	struct dep *v = xcalloc(p->ndeps + 1, sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < p->capdeps; i++)
		if (p->deps[i].kind)
			v[n++] = p->deps[i];
	qsort(v, n, sizeof(*v), cmp_dep);
	return v;
}

static const char *dep_color(uint32_t kind)
{
	switch (kind) {
	case BP_EDGE_FORK:
		return "#1f77b4";	/* blue */
	case BP_EDGE_WAKEUP:
		return "#e6550d";	/* orange */
	case BP_EDGE_DATA:
		return "#2ca02c";	/* green */
	default:
		return "#7f7f7f";
	}
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return 0;
}

/* Caller->callee pairs with their call counts, merged over every path. */
static struct edge *collect_edges(const struct path_agg *a, const struct bp_session *s, size_t *n)
{
	size_t np = s->npaths < a->cap ? s->npaths : a->cap, ne = 0, i, j;
	struct edge *v = xcalloc(np ? np : 1, sizeof(*v));
	uint32_t p;

	for (p = 1; p < np; p++) {
		uint32_t par = s->paths[p].parent;

		if (!a->st[p].calls || par == 0 || par >= p)
			continue;
		v[ne].from = s->paths[par].func;
		v[ne].to = s->paths[p].func;
		v[ne].calls = a->st[p].calls;
		ne++;
	}
	qsort(v, ne, sizeof(*v), cmp_edge);
	for (i = 0, j = 0; i < ne; i++) {
		if (j && v[j - 1].from == v[i].from && v[j - 1].to == v[i].to)
			v[j - 1].calls += v[i].calls;
		else
			v[j++] = v[i];
	}
	*n = j;
	return v;
}

static void node_id(FILE *f, uint32_t func)
{
	if (func == FOLDED)
		fputs("folded", f);
	else
		fprintf(f, "f%" PRIu32, func);
}

/*
 * Keeps the DOT_MAX_NODES functions of the most total time of the nshown
 * shown, folds the others into one node (their calls and self time in
 * *folded), their edges merged into the folded node's (*ne, *max_calls
 * updated).  Returns how many were folded.
 */
static size_t fold_nodes(struct func_stat *fs, size_t nf, bool *shown, size_t nshown,
			 struct edge *edges, size_t *ne, struct func_stat *folded,
			 uint64_t *max_calls)
{
	uint32_t *order = xcalloc(nshown, sizeof(*order));
	size_t i, k = 0;

	for (i = 0; i < nf; i++)
		if (shown[i])
			order[k++] = (uint32_t)i;
	rank_fs = fs;
	qsort(order, k, sizeof(*order), cmp_rank);
	rank_fs = NULL;
	for (k = DOT_MAX_NODES; k < nshown; k++) {
		shown[order[k]] = false;
		folded->calls += fs[order[k]].calls;
		folded->self += fs[order[k]].self;
	}
	free(order);
	/* edges to or from a folded function go to the folded node, merged */
	for (i = 0; i < *ne; i++) {
		if (!shown[edges[i].from])
			edges[i].from = FOLDED;
		if (!shown[edges[i].to])
			edges[i].to = FOLDED;
	}
	qsort(edges, *ne, sizeof(*edges), cmp_edge);
	for (i = 0, k = 0; i < *ne; i++) {
		if (edges[i].from == FOLDED && edges[i].to == FOLDED)
			continue;	/* inside the fold */
		if (k && edges[k - 1].from == edges[i].from && edges[k - 1].to == edges[i].to)
			edges[k - 1].calls += edges[i].calls;
		else
			edges[k++] = edges[i];
	}
	*ne = k;
	for (i = 0, *max_calls = 0; i < *ne; i++)
		if (edges[i].calls > *max_calls)
			*max_calls = edges[i].calls;
	return nshown - DOT_MAX_NODES;
}

/* The shown functions' nodes: calls, total and self time, filled by self time. */
static void put_nodes(FILE *f, const struct bp_session *s, const struct func_stat *fs, size_t nf,
		      const bool *shown, uint64_t max_self)
{
	char t1[32], t2[32];
	size_t i;

	for (i = 0; i < nf; i++) {
		/* White for no self time, deep red for the most. */
		unsigned int heat = max_self ? (unsigned int)(fs[i].self * 191 / max_self) : 0;

		if (!shown[i])
			continue;
		fprintf(f, "\tf%zu [label=\"", i);
		dot_str(f, session__func_name(s, i));
		if (i < s->nfuncs && s->funcs[i].flags & BP_FUNC_DROPPED)
			fprintf(f, "\\n%s", &BP_DROPPED_SUFFIX[1]);	/* counts up to the drop */
		fprintf(f, "\\n%" PRIu64 " call%s\\ntotal %s\\nself %s\"", fs[i].calls,
			fs[i].calls == 1 ? "" : "s", fmt_duration(fs[i].total, t1, sizeof(t1)),
			fmt_duration(fs[i].self, t2, sizeof(t2)));
		if (i < s->nfuncs && s->funcs[i].module < s->nmodules) {
			fputs(", tooltip=\"", f);
			dot_str(f, s->modules[s->funcs[i].module].path);
			putc('"', f);
		}
		fprintf(f, ", fillcolor=\"#ff%02x%02x\"];\n", 255 - heat, 255 - heat);
	}
}

static int dot_end(struct exporter *e, const struct bp_session *s)
{
	struct dot_priv *p = e->priv;
	struct func_stat *fs = NULL;
	struct edge *edges;
	struct dep *deps;
	char t1[32], t2[32];
	uint64_t max_self = 0, max_calls = 0;
	struct func_stat folded = { 0 };
	size_t nf, ne, i, n, nshown, nfolded = 0;
	bool *shown;
	FILE *f = e->out;

	path_agg__funcs(&p->agg, s, &fs, &nf);
	edges = collect_edges(&p->agg, s, &ne);
	deps = sorted_deps(p);
	/* Ends of dependency edges need nodes too, even functions on no call path. */
	for (i = 0, n = nf; i < p->ndeps; i++) {
		if (deps[i].from >= n)
			n = (size_t)deps[i].from + 1;
		if (deps[i].to >= n)
			n = (size_t)deps[i].to + 1;
	}
	if (n > nf) {
		fs = xrealloc(fs, n * sizeof(*fs));
		memset(fs + nf, 0, (n - nf) * sizeof(*fs));
		nf = n;
	}
	/* A caller whose own calls were all left out (--min-time) still needs its node. */
	shown = xcalloc(nf ? nf : 1, sizeof(*shown));
	for (i = 0; i < nf; i++) {
		shown[i] = fs[i].calls > 0;
		if (fs[i].self > max_self)
			max_self = fs[i].self;
	}
	for (i = 0; i < ne; i++) {
		if (edges[i].from < nf)
			shown[edges[i].from] = true;
		if (edges[i].calls > max_calls)
			max_calls = edges[i].calls;
	}
	for (i = 0; i < p->ndeps; i++)
		shown[deps[i].from] = shown[deps[i].to] = true;

	/* Too many to read or lay out: keep the top DOT_MAX_NODES, fold the rest. */
	for (i = 0, nshown = 0; i < nf; i++)
		nshown += shown[i];
	if (nshown > DOT_MAX_NODES)
		nfolded = fold_nodes(fs, nf, shown, nshown, edges, &ne, &folded, &max_calls);

	fputs("digraph bpfprof {\n\tgraph [label=\"", f);
	dot_str(f, s->cmdline ? s->cmdline : "bpfprof");
	fprintf(f, "\\n%" PRIu64 " calls", p->agg.ncalls);
	if (p->nedges)
		fprintf(f, ", %" PRIu64 " dependency edge%s", p->nedges, p->nedges == 1 ? "" : "s");
	if (p->agg.lost)
		fprintf(f, ", %" PRIu64 " records lost", p->agg.lost);
	if (nfolded)
		fprintf(f, "\\nthe %d functions with the most total time of %zu; %zu more folded "
			"into one node", DOT_MAX_NODES, nshown, nfolded);
	fputs("\", labelloc=t, fontname=\"Helvetica\"", f);
	/* bounded network-simplex and crossing-minimisation passes: seconds, not minutes */
	if (nfolded || ne > 200)
		fputs(", nslimit=4, nslimit1=4, mclimit=0.5, remincross=false", f);
	fputs("];\n"
	      "\tnode [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
	      "\tedge [fontname=\"Helvetica\", fontsize=10];\n", f);

	put_nodes(f, s, fs, nf, shown, max_self);
	if (nfolded)
		fprintf(f, "\tfolded [label=\"%zu other functions\\n%" PRIu64 " call%s\\nself %s\", "
			"style=\"rounded,filled,dashed\", fillcolor=\"#eeeeee\", tooltip=\"functions "
			"with less total time, folded into one node\"];\n", nfolded, folded.calls,
			folded.calls == 1 ? "" : "s", fmt_duration(folded.self, t2, sizeof(t2)));
	for (i = 0; i < ne; i++) {
		double w = max_calls ? 1.0 + 3.0 * (double)edges[i].calls / (double)max_calls : 1.0;

		fputc('\t', f);
		node_id(f, edges[i].from);
		fputs(" -> ", f);
		node_id(f, edges[i].to);
		fprintf(f, " [label=\"%" PRIu64 "\", penwidth=%.2f];\n", edges[i].calls, w);
	}
	for (i = 0; i < p->ndeps; i++) {
		const struct dep *d = &deps[i];
		const char *color = dep_color(d->kind);
		uint32_t from = d->from < nf && shown[d->from] ? d->from : FOLDED;
		uint32_t to = d->to < nf && shown[d->to] ? d->to : FOLDED;

		if (from == FOLDED && to == FOLDED)
			continue;
		fputc('\t', f);
		node_id(f, from);
		fputs(" -> ", f);
		node_id(f, to);
		fprintf(f, " [label=\"%s %" PRIu64 "\", style=dashed, "
			"color=\"%s\", fontcolor=\"%s\", constraint=false",
			session__edge_kind(d->kind), d->count, color, color);
		if (d->kind == BP_EDGE_WAKEUP)
			fprintf(f, ", tooltip=\"wakeup: %" PRIu64 ", mean wake-to-run %s\"", d->count,
				fmt_duration(d->latency / d->count, t1, sizeof(t1)));
		fputs("];\n", f);
	}
	fputs("}\n", f);

	free(deps);
	free(shown);
	free(edges);
	free(fs);
	return 0;
}

static void dot_free(struct exporter *e)
{
	struct dot_priv *p = e->priv;

	if (p) {
		path_agg__free(&p->agg);
		free(p->deps);
	}
}

const struct exporter_ops dot_exporter = {
	.name = "dot",
	.suffix = ".dot",
	.help = "Graphviz call graph: calls, total and self time; dependency edges dashed "
		"(dot -Tsvg)",
	.priv_size = sizeof(struct dot_priv),
	.event = dot_event,
	.end = dot_end,
	.free = dot_free,
};
