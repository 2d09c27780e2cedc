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

static int dot_end(struct exporter *e, const struct bp_session *s)
{
	struct dot_priv *p = e->priv;
	struct func_stat *fs = NULL;
	struct edge *edges;
	struct dep *deps;
	char t1[32], t2[32];
	uint64_t max_self = 0, max_calls = 0;
	size_t nf, ne, i, n;
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

	fputs("digraph bpfprof {\n\tgraph [label=\"", f);
	dot_str(f, s->cmdline ? s->cmdline : "bpfprof");
	fprintf(f, "\\n%" PRIu64 " calls", p->agg.ncalls);
	if (p->nedges)
		fprintf(f, ", %" PRIu64 " dependency edge%s", p->nedges, p->nedges == 1 ? "" : "s");
	if (p->agg.lost)
		fprintf(f, ", %" PRIu64 " records lost", p->agg.lost);
	fputs("\", labelloc=t, fontname=\"Helvetica\"];\n"
	      "\tnode [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n"
	      "\tedge [fontname=\"Helvetica\", fontsize=10];\n", f);

	for (i = 0; i < nf; i++) {
		/* White for no self time, deep red for the most. */
		unsigned int heat = max_self ? (unsigned int)(fs[i].self * 191 / max_self) : 0;

		if (!shown[i])
			continue;
		fprintf(f, "\tf%zu [label=\"", i);
		dot_str(f, session__func_name(s, i));
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
	for (i = 0; i < ne; i++) {
		double w = max_calls ? 1.0 + 3.0 * (double)edges[i].calls / (double)max_calls : 1.0;

		fprintf(f, "\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%" PRIu64 "\", penwidth=%.2f];\n",
			edges[i].from, edges[i].to, edges[i].calls, w);
	}
	for (i = 0; i < p->ndeps; i++) {
		const struct dep *d = &deps[i];
		const char *color = dep_color(d->kind);

		fprintf(f, "\tf%" PRIu32 " -> f%" PRIu32 " [label=\"%s %" PRIu64 "\", style=dashed, "
			"color=\"%s\", fontcolor=\"%s\", constraint=false", d->from, d->to,
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
