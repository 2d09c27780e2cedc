// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Live per-(process, coroutine function) aggregates for `serve`'s /metrics
 * (metrics_coro.h): the spans model/coro.c joins from the call stream, each
 * counted once when it ends (its last slice), the way async code exports per
 * coroutine: invocations, on-CPU (exec) and first-start-to-end (wall) time,
 * and the suspended time split (awaiting a child coroutine / the rest).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "base/hashtab.h"
#include "base/log.h"
#include "metrics.h"
#include "metrics_coro.h"
#include "model/coro.h"

struct crow {
	uint64_t key;		/* (pid << 32 | func) + 1; 0: empty */
	struct coro_tally t;	/* its ended spans */
};

struct coro_metrics {
	struct coro_joiner *j;
	struct crow *tab;
	size_t cap, used;
};

static bool crow_empty(const void *s)
{
	return !((const struct crow *)s)->key;
}

static uint64_t crow_hash(const void *s)
{
	return (((const struct crow *)s)->key * 0x9e3779b97f4a7c15ull) >> 32;
}

static const struct hashtab_ops crow_ops = {
	.slot = sizeof(struct crow), .initial = 64, .empty = crow_empty, .hash = crow_hash,
};

int coro_metrics__new(struct coro_metrics **out)
{
	struct coro_metrics *m = xcalloc(1, sizeof(*m));

	m->j = coro__new();
	*out = m;
	return 0;
}

void coro_metrics__free(struct coro_metrics *m)
{
	if (!m)
		return;
	coro__free(m->j);
	free(m->tab);
	free(m);
}

static struct crow *crow_of(struct coro_metrics *m, uint32_t pid, uint32_t func)
{
	struct crow probe = { .key = ((uint64_t)pid << 32 | func) + 1 };
	size_t i;

	hashtab__reserve((void **)&m->tab, &m->cap, m->used, &crow_ops);
	for (i = hashtab__first(crow_hash(&probe), m->cap); m->tab[i].key;
	     i = hashtab__next(i, m->cap))
		if (m->tab[i].key == probe.key)
			return &m->tab[i];
	m->tab[i] = probe;
	m->used++;
	return &m->tab[i];
}

static void add_span(struct coro_metrics *m, const struct coro_span *sp)
{
	coro_tally__add(&crow_of(m, sp->pid, sp->func)->t, sp);
}

void coro_metrics__event(struct coro_metrics *m, const struct bp_session *s,
			 const struct bp_event *ev)
{
	struct coro_span sp;

	if (ev->kind == BP_EV_EDGE) {
		coro__edge(m->j, &ev->edge);
		return;
	}
	if (ev->kind != BP_EV_CALL)
		return;
	if (!(ev->call.flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED)) &&
	    !(ev->call.func < s->nfuncs && s->funcs[ev->call.func].flags & BP_FUNC_RESUMABLE))
		return;
	if (coro__call(m->j, s, &ev->call, &sp) == CORO_LAST)
		add_span(m, &sp);
}

size_t coro_metrics__prune(struct coro_metrics *m, bool (*alive)(uint32_t pid, void *ctx),
			   void *ctx)
{
	struct crow *old = m->tab;
	size_t cap = m->cap, gone = 0, i;

	m->tab = NULL;
	m->cap = m->used = 0;
	for (i = 0; i < cap; i++) {
		if (!old[i].key)
			continue;
		if (!alive((uint32_t)((old[i].key - 1) >> 32), ctx)) {
			gone++;
			continue;
		}
		*crow_of(m, (uint32_t)((old[i].key - 1) >> 32), (uint32_t)(old[i].key - 1)) = old[i];
	}
	free(old);
	return gone;
}

size_t coro_metrics__rows(const struct coro_metrics *m)
{
	return m->used;
}

static int by_exec(const void *a, const void *b)
{
	const struct crow *x = *(const struct crow *const *)a, *y = *(const struct crow *const *)b;

	if (x->t.exec != y->t.exec)
		return x->t.exec < y->t.exec ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void labels(FILE *f, const struct bp_session *s, const struct crow *w)
{
	uint32_t func = (uint32_t)(w->key - 1);

	fputs("{function=", f);
	metrics__label_value(f, session__func_name(s, func));
	fputs(",module=", f);
	metrics__label_value(f, session__func_module(s, func));
	fprintf(f, ",pid=\"%" PRIu32 "\"}", (uint32_t)((w->key - 1) >> 32));
}

int coro_metrics__write(struct coro_metrics *m, const struct bp_session *s, size_t top, FILE *f)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;	/* of the uint64_t in struct crow */
		bool ns;
	} fam[] = {
		{ "bpfprof_coroutine_calls_total", "counter",
		  "Invocations of a coroutine or generator function that ended (not its "
		  "resumptions), per process.", offsetof(struct crow, t.calls), false },
		{ "bpfprof_coroutine_raised_total", "counter",
		  "Invocations that ended by an exception (cancellations included).",
		  offsetof(struct crow, t.raised), false },
		{ "bpfprof_coroutine_exec_seconds_total", "counter",
		  "On-CPU time of the invocations: the sum of their slices (resume to suspend).",
		  offsetof(struct crow, t.exec), true },
		{ "bpfprof_coroutine_wall_seconds_total", "counter",
		  "Wall time of the invocations: first start to final return, awaits included.",
		  offsetof(struct crow, t.wall), true },
		{ "bpfprof_coroutine_await_child_seconds_total", "counter",
		  "Suspended time of the invocations spent awaiting a child coroutine (a "
		  "coroutine or generator they awaited directly suspended).",
		  offsetof(struct crow, t.await_child), true },
		{ "bpfprof_coroutine_await_other_seconds_total", "counter",
		  "The rest of their suspended time (wall - exec - await_child): awaiting a "
		  "future, another task, or a bare yield.",
		  offsetof(struct crow, t.await_other), true },
		{ "bpfprof_coroutine_max_exec_seconds", "gauge",
		  "The longest on-CPU time of one invocation.",
		  offsetof(struct crow, t.max_exec), true },
		{ "bpfprof_coroutine_max_wall_seconds", "gauge",
		  "The longest wall time of one invocation.",
		  offsetof(struct crow, t.max_wall), true },
	};
	const struct crow **v = xcalloc(m->used + 1, sizeof(*v));
	size_t n = 0, i, c;

	for (i = 0; i < m->cap; i++)
		if (m->tab[i].key)
			v[n++] = &m->tab[i];
	qsort(v, n, sizeof(*v), by_exec);
	if (top && n > top)
		n = top;
	for (c = 0; c < sizeof(fam) / sizeof(*fam); c++) {
		fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fam[c].name, fam[c].help, fam[c].name,
			fam[c].type);
		for (i = 0; i < n; i++) {
			uint64_t val = *(const uint64_t *)((const char *)v[i] + fam[c].off);

			fputs(fam[c].name, f);
			labels(f, s, v[i]);
			if (fam[c].ns)
				fprintf(f, " %" PRIu64 ".%09" PRIu64 "\n", val / 1000000000,
					val % 1000000000);
			else
				fprintf(f, " %" PRIu64 "\n", val);
		}
	}
	fprintf(f, "# HELP bpfprof_coroutines_suspended Coroutine and generator invocations "
		"suspended now (started, not ended), all processes.\n"
		"# TYPE bpfprof_coroutines_suspended gauge\nbpfprof_coroutines_suspended %zu\n",
		coro__held(m->j));
	free(v);
	return ferror(f) ? -EIO : 0;
}
