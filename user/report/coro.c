// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report's coroutine table: per Python coroutine or generator function,
 * its invocations (spans, model/coro.h: not its resumptions), their on-CPU
 * time (exec: the sum of their slices) and their wall time (first start to
 * final return), the numbers async code exports per coroutine, and its
 * suspended time split: awaiting its child coroutines, awaiting the rest
 * (futures, other tasks).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "model/coro.h"

struct report_coro {
	struct coro_joiner *j;
	struct coro_tally *rows;		/* by session function */
	size_t nrows;
	uint64_t nspans;
};

static struct report_coro *get(struct report *r)
{
	if (!r->coro) {
		r->coro = xcalloc(1, sizeof(*r->coro));
		r->coro->j = coro__new();
	}
	return r->coro;
}

static int add_span(void *ctx, const struct coro_span *sp)
{
	struct report_coro *rc = ctx;

	if (sp->func >= rc->nrows) {
		size_t n = sp->func + 64;

		rc->rows = xrealloc(rc->rows, n * sizeof(*rc->rows));
		memset(rc->rows + rc->nrows, 0, (n - rc->nrows) * sizeof(*rc->rows));
		rc->nrows = n;
	}
	coro_tally__add(&rc->rows[sp->func], sp);
	rc->nspans++;
	return 0;
}

void report_coro_call(struct report *r, const struct bp_session *s, const struct bp_call *c)
{
	struct coro_span sp;

	if (!r->coro && !(c->flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED)) &&
	    !(s->funcs[c->func].flags & BP_FUNC_RESUMABLE))
		return;
	if (coro__call(get(r)->j, s, c, &sp) == CORO_LAST)
		add_span(r->coro, &sp);
}

void report_coro_edge(struct report *r, const struct bp_edge *e)
{
	if (r->coro && e->kind == BP_EDGE_RESUME)
		coro__edge(r->coro->j, e);
}

static int by_exec(const void *a, const void *b, void *arg)
{
	const struct coro_tally *rows = arg, *x = &rows[*(const uint32_t *)a],
			      *y = &rows[*(const uint32_t *)b];

	if (x->exec != y->exec)
		return x->exec < y->exec ? 1 : -1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* The functions with spans, by exec time; the spans still suspended counted first. */
static size_t sorted(struct report *r, uint32_t **out)
{
	struct report_coro *rc = r->coro;
	size_t n = 0, i;

	*out = NULL;
	if (!rc)
		return 0;
	coro__drain(rc->j, add_span, rc);
	*out = xcalloc(rc->nrows + 1, sizeof(**out));
	for (i = 0; i < rc->nrows; i++)
		if (rc->rows[i].calls)
			(*out)[n++] = i;
	qsort_r(*out, n, sizeof(**out), by_exec, rc->rows);
	return n;
}

void report_coro_pretty(struct report *r, const struct bp_session *s, FILE *f)
{
	size_t n, i, top = r->o.top ? r->o.top : SIZE_MAX;
	uint32_t *idx;
	char b[7][32];

	n = sorted(r, &idx);
	if (n) {
		fputs("\nCoroutines and generators: one row per function; calls are invocations "
		      "(not resumptions), exec their on-CPU slices, wall first start to end;\n"
		      "the rest of wall suspended: awaiting a child coroutine (await child) or "
		      "anything else (await other: futures, other tasks)\n", f);
		fprintf(f, "%10s %10s %9s %9s %9s %9s %9s %11s %11s  %s\n", "calls", "slices", "exec",
			"wall", "avg wall", "max wall", "max exec", "await child", "await other",
			"function");
	}
	for (i = 0; i < n && i < top; i++) {
		const struct coro_tally *w = &r->coro->rows[idx[i]];

		fprintf(f, "%10" PRIu64 " %10" PRIu64 " %9s %9s %9s %9s %9s %11s %11s  %s", w->calls,
			w->slices, fmt_duration(w->exec, b[0], sizeof(b[0])),
			fmt_duration(w->wall, b[1], sizeof(b[1])),
			fmt_duration(w->wall / w->calls, b[2], sizeof(b[2])),
			fmt_duration(w->max_wall, b[3], sizeof(b[3])),
			fmt_duration(w->max_exec, b[4], sizeof(b[4])),
			fmt_duration(w->await_child, b[5], sizeof(b[5])),
			fmt_duration(w->await_other, b[6], sizeof(b[6])), session__func_name(s, idx[i]));
		if (w->open)
			fprintf(f, "  (%" PRIu64 " not ended)", w->open);
		fputc('\n', f);
	}
	if (n > top)
		fprintf(f, "... %zu more coroutine functions (--top)\n", n - top);
	free(idx);
}

void report_coro_json(struct report *r, const struct bp_session *s, FILE *f)
{
	uint32_t *idx;
	size_t n = sorted(r, &idx), i;

	for (i = 0; i < n; i++) {
		const struct coro_tally *w = &r->coro->rows[idx[i]];

		fputs(i ? ",\n{\"function\":" : "\n{\"function\":", f);
		json_str(f, session__func_name(s, idx[i]));
		fputs(",\"module\":", f);
		json_str(f, session__func_module(s, idx[i]));
		fprintf(f, ",\"kind\":\"%s\",\"calls\":%" PRIu64 ",\"slices\":%" PRIu64
			",\"exec_ns\":%" PRIu64 ",\"wall_ns\":%" PRIu64 ",\"max_wall_ns\":%" PRIu64
			",\"max_exec_ns\":%" PRIu64 ",\"await_child_ns\":%" PRIu64
			",\"await_other_ns\":%" PRIu64 ",\"raised\":%" PRIu64 ",\"open\":%" PRIu64 "}",
			s->funcs[idx[i]].flags & BP_FUNC_ASYNC_GEN ? "async generator" :
			s->funcs[idx[i]].flags & BP_FUNC_COROUTINE ? "coroutine" :
			s->funcs[idx[i]].flags & BP_FUNC_GENERATOR ? "generator" : "resumed frame",
			w->calls, w->slices, w->exec, w->wall, w->max_wall, w->max_exec,
			w->await_child, w->await_other, w->raised, w->open);
	}
	free(idx);
}

void report_coro_free(struct report *r)
{
	if (!r->coro)
		return;
	coro__free(r->coro->j);
	free(r->coro->rows);
	free(r->coro);
	r->coro = NULL;
}
