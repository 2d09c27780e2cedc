// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Graphviz DOT call graph (`dot -Tsvg graph.dot > graph.svg`): one node per
 * function called, labelled with its calls, inclusive and self time, and
 * filled the redder the more self time it has; one edge per caller->callee
 * pair, labelled with the number of calls made along it.  The graph comes
 * from the interned call paths (a path's parent is its caller), aggregated
 * as calls end: memory is bounded by distinct call paths.  Every thread and
 * process is summed into one graph; lost records are named in the title.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "escape.h"
#include "exporter.h"
#include "log.h"
#include "pathagg.h"
#include "util.h"

struct dot_priv {
	struct path_agg agg;
};

struct edge {
	uint32_t from, to;	/* function ids */
	uint64_t calls;
};

static int dot_event(struct exporter *e, const struct bp_session *s, const struct bp_event *ev)
{
	struct dot_priv *p = e->priv;

	path_agg__event(&p->agg, s, ev);
	return 0;
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
	char t1[32], t2[32];
	uint64_t max_self = 0, max_calls = 0;
	size_t nf, ne, i;
	bool *shown;
	FILE *f = e->out;

	path_agg__funcs(&p->agg, s, &fs, &nf);
	edges = collect_edges(&p->agg, s, &ne);
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

	fputs("digraph bpfprof {\n\tgraph [label=\"", f);
	dot_str(f, s->cmdline ? s->cmdline : "bpfprof");
	fprintf(f, "\\n%" PRIu64 " calls", p->agg.ncalls);
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
	fputs("}\n", f);

	free(shown);
	free(edges);
	free(fs);
	return 0;
}

static void dot_free(struct exporter *e)
{
	struct dot_priv *p = e->priv;

	if (p)
		path_agg__free(&p->agg);
}

const struct exporter_ops dot_exporter = {
	.name = "dot",
	.suffix = ".dot",
	.help = "Graphviz call graph: calls, total and self time (dot -Tsvg)",
	.priv_size = sizeof(struct dot_priv),
	.event = dot_event,
	.end = dot_end,
	.free = dot_free,
};
