// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report: printing the aggregates as pretty tables, JSON or CSV: the flat
 * table, the call tree, samples, edges and marks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/escape.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "internal.h"

/*
 * Output that stays linear in the number of tree nodes, whatever the depth
 * (recursion 20,000 deep is 20,000 nodes): the pretty tree indents at most
 * TREE_INDENT_MAX levels and says the depth of deeper nodes instead; JSON
 * and CSV name each node's parent instead of repeating its whole path.
 */
#define TREE_INDENT_MAX	32
/* ---------------------------------------------------------------- pretty */

static void pretty_header(struct report *r, const struct bp_session *s, FILE *f)
{
	char d[32];

	fprintf(f, "command: %s   duration: %s   calls: %" PRIu64 "   lost records: %" PRIu64
		   "   unfinished: %" PRIu64 "\n",
		s->cmdline ? s->cmdline : "?", fmt_duration(report_wall_ns(r, s), d, sizeof(d)), r->ncalls,
		report_lost_records(r, s), r->nunfinished);
	if (r->nentry_lost)
		fprintf(f, "entry lost: %" PRIu64 " calls returned after lost records without their "
			   "entry: each begins at its thread's record before its return\n",
			r->nentry_lost);
	/* durations without the probes' cost, or the raw clock (decode/compensate.h) */
	if (s->timing)
		fprintf(f, "durations %s\n", s->timing);
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
		fprintf(f, "  [%s]", session__func_module(s, func));
	fputc('\n', f);
}

static void pretty_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	char b[8][32], pct[16];
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = report_sorted_funcs(r, s, r->o.sort, &idx);
	fprintf(f, "%10s %9s %9s %9s %9s %9s %9s %9s %6s  %s\n", "calls", "total", "self", "avg",
		"min", "max", "p50", "p99", "wall", "function");
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		snprintf(pct, sizeof(pct), "%.1f%%", report_pct_wall(r, s, fr->total));
		fprintf(f, "%10" PRIu64 " %9s %9s %9s %9s %9s %9s %9s %6s  ", fr->calls,
			fmt_duration(fr->total, b[0], sizeof(b[0])),
			fmt_duration(fr->self, b[1], sizeof(b[1])),
			fmt_duration(fr->sum / fr->calls, b[2], sizeof(b[2])),
			fmt_duration(fr->min, b[3], sizeof(b[3])),
			fmt_duration(fr->max, b[4], sizeof(b[4])),
			fmt_duration(report_percentile(fr, 50), b[5], sizeof(b[5])),
			fmt_duration(report_percentile(fr, 99), b[6], sizeof(b[6])), pct);
		pretty_name(s, f, idx[i]);
	}
	if (n > top)
		fprintf(f, "... %zu more functions (--top)\n", n - top);
	free(idx);
}

static void pretty_node(struct report *r, const struct bp_session *s, FILE *f,
			const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = report_node_stats(r, chain[depth - 1]);
	char b[2][32];

	if (first)
		fprintf(f, "%10s %9s %9s  %s\n", "calls", "total", "self", "call tree");
	fprintf(f, "%10" PRIu64 " %9s %9s  %*s", p->calls, fmt_duration(p->total, b[0], sizeof(b[0])),
		fmt_duration(p->self, b[1], sizeof(b[1])),
		(int)(2 * (depth - 1 < TREE_INDENT_MAX ? depth - 1 : TREE_INDENT_MAX)), "");
	if (depth - 1 > TREE_INDENT_MAX)
		fprintf(f, "[%zu] ", depth);
	pretty_name(s, f, s->paths[chain[depth - 1]].func);
}

/* ---------------------------------------------------------------- json */

static void json_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = report_sorted_funcs(r, s, r->o.sort, &idx);
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		fputs(i ? ",\n  {\"name\":" : "\n  {\"name\":", f);
		json_str(f, session__func_name(s, idx[i]));
		fputs(",\"module\":", f);
		json_str(f, session__func_module(s, idx[i]));
		fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64
			   ",\"avg_ns\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			   ",\"p50_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"pct_wall\":%.3f}",
			fr->calls, fr->total, fr->self, fr->sum / fr->calls, fr->min, fr->max,
			report_percentile(fr, 50), report_percentile(fr, 99), report_pct_wall(r, s, fr->total));
	}
	if (n)
		fputc('\n', f);
	free(idx);
}

static void json_node(struct report *r, const struct bp_session *s, FILE *f,
		      const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = report_node_stats(r, chain[depth - 1]);

	/* the parent was listed before (0: a root): the path is not repeated */
	fprintf(f, "%s{\"id\":%u,\"parent\":%u,\"depth\":%zu,\"name\":", first ? "\n  " : ",\n  ",
		chain[depth - 1], depth > 1 ? chain[depth - 2] : 0, depth);
	json_str(f, session__func_name(s, s->paths[chain[depth - 1]].func));
	fprintf(f, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"self_ns\":%" PRIu64 "}",
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
		   ",\"lost\":%" PRIu64 ",\"entry_lost\":%" PRIu64, report_wall_ns(r, s), r->ncalls,
		r->nunfinished, report_lost_records(r, s), r->nentry_lost);
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
		report_walk_tree(r, s, f, json_node);
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
	fputs("],\n\"dropped\":[", f);
	report_drops_json(r, s, f);
	fputs("],\n\"coroutines\":[", f);
	report_coro_json(r, s, f);
	fputc(']', f);
	if (r->args) {		/* --args FUNC:PARAM: its groups beside the rest */
		fputs(",\n\"args\":", f);
		report_args__print(r->args, REPORT_JSON, f);
	}
	fputs("}\n", f);
}

/* ---------------------------------------------------------------- csv */

static void csv_flat(struct report *r, const struct bp_session *s, FILE *f)
{
	uint32_t *idx;
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;

	n = report_sorted_funcs(r, s, r->o.sort, &idx);
	fputs("name,module,calls,total_ns,self_ns,avg_ns,min_ns,max_ns,p50_ns,p99_ns,pct_wall\r\n",
	      f);
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		csv_str(f, session__func_name(s, idx[i]));
		fputc(',', f);
		csv_str(f, session__func_module(s, idx[i]));
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 ",%.3f\r\n",
			fr->calls, fr->total, fr->self, fr->sum / fr->calls, fr->min, fr->max,
			report_percentile(fr, 50), report_percentile(fr, 99), report_pct_wall(r, s, fr->total));
	}
	free(idx);
}

static void csv_node(struct report *r, const struct bp_session *s, FILE *f,
		     const uint32_t *chain, size_t depth, bool first)
{
	const struct path_row *p = report_node_stats(r, chain[depth - 1]);

	/* as in JSON: the parent's id (listed before; 0: a root), not the whole path */
	fprintf(f, "%u,%u,%zu,", chain[depth - 1], depth > 1 ? chain[depth - 2] : 0, depth);
	csv_str(f, session__func_name(s, s->paths[chain[depth - 1]].func));
	fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n", p->calls, p->total, p->self);
}

/* ---------------------------------------------------------------- samples and edges */

static int by_samp_total(const void *a, const void *b, void *arg)
{
	const struct samp_row *rows = arg;
	const struct samp_row *x = &rows[*(const uint32_t *)a];
	const struct samp_row *y = &rows[*(const uint32_t *)b];

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
	if (n)
		qsort_r(idx, n, sizeof(*idx), by_samp_total, r->samp[k]);
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
	if (n)
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
	fprintf(f, "  %-8s %8s  %10s %10s  %s\n", "kind", "count", "latency", "avg", "source -> target");
	for (i = 0; i < r->nedges && i < top; i++) {
		fprintf(f, "  %-8s %8" PRIu64 "  %10s %10s  %s -> %s\n", session__edge_kind(v[i].kind),
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
		csv_str(f, session__func_name(s, v[i].src));
		fputc(',', f);
		csv_str(f, session__func_name(s, v[i].dst));
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

	if (r->nmarks)
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

	if (r->nmarks)
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

/* --marks as CSV: the JSON marks' fields, a row each */
static void csv_marks(struct report *r, FILE *f)
{
	size_t i, start = 0;

	if (r->nmarks)
		qsort(r->marks, r->nmarks, sizeof(*r->marks), by_thread_time);
	fputs("pid,tid,label,ts_ns,delta_ns,total_ns\r\n", f);
	for (i = 0; i < r->nmarks; i++) {
		const struct mark_row *m = &r->marks[i];
		bool first = !i || r->marks[i - 1].tid != m->tid;

		if (first)
			start = i;
		fprintf(f, "%u,%u,", m->pid, m->tid);
		csv_str(f, m->label);
		fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n", m->ts,
			first ? 0 : m->ts - r->marks[i - 1].ts, m->ts - r->marks[start].ts);
	}
}

/* ---------------------------------------------------------------- entry points */

int report__print(struct report *r, const struct bp_session *s, FILE *f)
{
	report_resolve(r, s);
	switch (r->o.format) {
	case REPORT_PRETTY:
		pretty_header(r, s, f);
		if (r->args) {
			report_args__print(r->args, REPORT_PRETTY, f);
			break;
		}
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
			report_walk_tree(r, s, f, pretty_node);
		}
		if (!r->o.tree_only)
			report_coro_pretty(r, s, f);
		if (!r->o.tree_only) {
			pretty_samples(r, s, f, 0);
			pretty_samples(r, s, f, 1);
			pretty_edges(r, s, f);
		}
		report_drops_pretty(r, s, f);
		break;
	case REPORT_JSON:
		print_json(r, s, f);
		break;
	case REPORT_CSV:
		/* one table per CSV file: the tree only when asked for alone */
		if (r->args) {
			report_args__print(r->args, REPORT_CSV, f);
		} else if (r->o.marks) {
			csv_marks(r, f);
		} else if (r->o.edges) {
			csv_edges(r, s, f);
		} else if (r->o.tree_only) {
			fputs("id,parent,depth,name,calls,total_ns,self_ns\r\n", f);
			report_walk_tree(r, s, f, csv_node);
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

	report_resolve(r, s);
	n = report_sorted_funcs(r, s, REPORT_SORT_TOTAL, &idx);
	if (n)
		fprintf(f, "  %10s  %9s  %9s  %9s  %9s  %s\n", "calls", "total", "self", "avg", "max",
			"function");
	for (i = 0; i < n && i < top; i++) {
		const struct func_row *fr = &r->funcs[idx[i]];

		fprintf(f, "  %10" PRIu64 "  %9s  %9s  %9s  %9s  ", fr->calls,
			fmt_duration(fr->total, b[0], sizeof(b[0])),
			fmt_duration(fr->self, b[1], sizeof(b[1])),
			fmt_duration(fr->sum / fr->calls, b[2], sizeof(b[2])),
			fmt_duration(fr->max, b[3], sizeof(b[3])));
		pretty_name(s, f, idx[i]);
	}
	if (n > top)
		fprintf(f, "  ... %zu more functions\n", n - top);
	free(idx);
	report_drops_pretty(r, s, f);
}
