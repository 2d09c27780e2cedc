// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * diff's coroutine table: per Python coroutine or generator function (matched
 * by name and module like the functions), each side's invocations (spans,
 * model/coro.h: not resumptions) and their exec (on-CPU) and wall time per
 * invocation, and the wall time's suspended part split as the tally has it
 * (awaiting a child coroutine / the rest), new over base.  Plain means: a
 * coroutine's wall time is mostly what it awaited (other tasks, I/O), so it
 * is shown, not tested.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/json.h"
#include "base/log.h"
#include "base/util.h"
#include "internal.h"
#include "model/coro.h"

struct diff_coro_side {
	struct coro_joiner *j;
	struct coro_tally *bysf;	/* by session function, while the recording streams */
	size_t nbysf;
	struct coro_tally *byg;	/* by gfunc, folded by diff_coro_side_done() */
	size_t nbyg;
};

static struct coro_tally *slot(struct coro_tally **v, size_t *n, size_t i)
{
	if (i >= *n) {
		size_t m = i + 64;

		*v = xrealloc(*v, m * sizeof(**v));
		memset(*v + *n, 0, (m - *n) * sizeof(**v));
		*n = m;
	}
	return &(*v)[i];
}

static int add_span(void *ctx, const struct coro_span *sp)
{
	struct diff_coro_side *c = ctx;

	coro_tally__add(slot(&c->bysf, &c->nbysf, sp->func), sp);
	return 0;
}

void diff_coro_event(struct side *sd, const struct bp_session *s, const struct bp_event *ev)
{
	struct coro_span sp;

	if (ev->kind == BP_EV_EDGE) {
		if (sd->coro && ev->edge.kind == BP_EDGE_RESUME)
			coro__edge(sd->coro->j, &ev->edge);
		return;
	}
	if (ev->kind != BP_EV_CALL)
		return;
	if (!sd->coro && !(ev->call.flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED)) &&
	    !(ev->call.func < s->nfuncs && s->funcs[ev->call.func].flags & BP_FUNC_RESUMABLE))
		return;
	if (!sd->coro) {
		sd->coro = xcalloc(1, sizeof(*sd->coro));
		sd->coro->j = coro__new();
	}
	if (coro__call(sd->coro->j, s, &ev->call, &sp) == CORO_LAST)
		add_span(sd->coro, &sp);
}

void diff_coro_side_done(struct side *sd, const struct bp_session *s, const uint32_t *gmap)
{
	struct diff_coro_side *c = sd->coro;
	size_t f;

	if (!c)
		return;
	coro__drain(c->j, add_span, c);	/* never ended in this recording: counted, open */
	for (f = 0; f < c->nbysf && f < s->nfuncs; f++) {
		const struct coro_tally *x = &c->bysf[f];
		struct coro_tally *y;

		if (!x->calls)
			continue;
		y = slot(&c->byg, &c->nbyg, gmap[f] - 1);
		coro_tally__merge(y, x);
	}
	free(c->bysf);
	c->bysf = NULL;
	c->nbysf = 0;
}

static const struct coro_tally *row(const struct diff *d, int side, size_t g)
{
	static const struct coro_tally none;
	const struct diff_coro_side *c = d->side[side].coro;

	return c && g < c->nbyg ? &c->byg[g] : &none;
}

static uint64_t per_call(uint64_t ns, uint64_t calls)
{
	return calls ? ns / calls : 0;
}

static int by_added_exec(const void *a, const void *b, void *arg)
{
	const struct diff *d = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int64_t x = (int64_t)(row(d, 1, i)->exec - row(d, 0, i)->exec),
		y = (int64_t)(row(d, 1, j)->exec - row(d, 0, j)->exec);

	if (x != y)
		return x < y ? 1 : -1;
	return i < j ? -1 : 1;
}

/* The gfuncs with invocations on either side, by added exec time. */
static size_t sorted(const struct diff *d, uint32_t **out)
{
	size_t n = 0, g;

	*out = xcalloc(d->ngf + 1, sizeof(**out));
	for (g = 0; g < d->ngf; g++)
		if (row(d, 0, g)->calls || row(d, 1, g)->calls)
			(*out)[n++] = g;
	qsort_r(*out, n, sizeof(**out), by_added_exec, (void *)d);
	return n;
}

static void ratio(FILE *f, uint64_t base, uint64_t new, bool json)
{
	if (!base || !new)
		fputs(json ? "null" : "        -", f);
	else
		fprintf(f, json ? "%.4f" : "%8.3fx", (double)new / (double)base);
}

/* One figure per invocation on each side and their ratio: "base new ratio". */
static void triple(FILE *f, const struct coro_tally *x, const struct coro_tally *y, size_t off)
{
	uint64_t a = per_call(*(const uint64_t *)((const char *)x + off), x->calls),
		 b = per_call(*(const uint64_t *)((const char *)y + off), y->calls);
	char s[2][32];

	fprintf(f, " %9s %9s ", fmt_duration(a, s[0], sizeof(s[0])),
		fmt_duration(b, s[1], sizeof(s[1])));
	ratio(f, a, b, false);
}

/* The figures each row shows per invocation, in order. */
static const size_t figures[] = {
	offsetof(struct coro_tally, exec), offsetof(struct coro_tally, wall),
	offsetof(struct coro_tally, await_child), offsetof(struct coro_tally, await_other),
};

void diff_coro_pretty(const struct diff *d, FILE *f)
{
	size_t n, i, k, top = d->o.top ? d->o.top : 20;
	uint32_t *idx;

	n = sorted(d, &idx);
	if (n) {
		fputs("\nCoroutines and generators: per invocation (calls are invocations, not "
		      "resumptions; exec on CPU, wall first start to end = exec + await child "
		      "(suspended in the await of a coroutine it called) + await other), by "
		      "added exec time\n", f);
		fprintf(f, "%19s %29s %29s %29s %29s\n", "calls", "exec per invocation",
			"wall per invocation", "await child per inv.", "await other per inv.");
		fprintf(f, "%9s %9s", "base", "new");
		for (k = 0; k < sizeof(figures) / sizeof(figures[0]); k++)
			fprintf(f, " %9s %9s %9s", "base", "new", "ratio");
		fputs("  function\n", f);
	}
	for (i = 0; i < n && i < top; i++) {
		const struct coro_tally *x = row(d, 0, idx[i]), *y = row(d, 1, idx[i]);

		fprintf(f, "%9" PRIu64 " %9" PRIu64, x->calls, y->calls);
		for (k = 0; k < sizeof(figures) / sizeof(figures[0]); k++)
			triple(f, x, y, figures[k]);
		fprintf(f, "  %s  [%s]\n", d->gf[idx[i]].name, d->gf[idx[i]].module);
	}
	if (n > top)
		fprintf(f, "... %zu more coroutine functions (--top)\n", n - top);
	free(idx);
}

static void side_json(FILE *f, const struct coro_tally *x)
{
	fprintf(f, "{\"calls\":%" PRIu64 ",\"slices\":%" PRIu64 ",\"exec_ns\":%" PRIu64
		",\"wall_ns\":%" PRIu64 ",\"max_exec_ns\":%" PRIu64 ",\"max_wall_ns\":%" PRIu64
		",\"await_child_ns\":%" PRIu64 ",\"await_other_ns\":%" PRIu64
		",\"raised\":%" PRIu64 ",\"open\":%" PRIu64 "}", x->calls, x->slices, x->exec,
		x->wall, x->max_exec, x->max_wall, x->await_child, x->await_other, x->raised,
		x->open);
}

void diff_coro_json(const struct diff *d, FILE *f)
{
	uint32_t *idx;
	size_t n = sorted(d, &idx), i;

	fputs(",\n\"coroutines\":[", f);
	for (i = 0; i < n; i++) {
		const struct coro_tally *x = row(d, 0, idx[i]), *y = row(d, 1, idx[i]);

		fputs(i ? ",\n{\"function\":" : "\n{\"function\":", f);
		json_str(f, d->gf[idx[i]].name);
		fputs(",\"module\":", f);
		json_str(f, d->gf[idx[i]].module);
		fputs(",\"base\":", f);
		side_json(f, x);
		fputs(",\"new\":", f);
		side_json(f, y);
		fputs(",\"exec_per_call_ratio\":", f);
		ratio(f, per_call(x->exec, x->calls), per_call(y->exec, y->calls), true);
		fputs(",\"wall_per_call_ratio\":", f);
		ratio(f, per_call(x->wall, x->calls), per_call(y->wall, y->calls), true);
		fputs(",\"await_child_per_call_ratio\":", f);
		ratio(f, per_call(x->await_child, x->calls), per_call(y->await_child, y->calls),
		      true);
		fputs(",\"await_other_per_call_ratio\":", f);
		ratio(f, per_call(x->await_other, x->calls), per_call(y->await_other, y->calls),
		      true);
		fputc('}', f);
	}
	fputs("]", f);
	free(idx);
}

void diff_coro_free(struct side *sd)
{
	if (!sd->coro)
		return;
	coro__free(sd->coro->j);
	free(sd->coro->bysf);
	free(sd->coro->byg);
	free(sd->coro);
	sd->coro = NULL;
}
