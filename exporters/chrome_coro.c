// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Coroutine spans in the Chrome JSON (model/coro.h joins them). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "chrome.h"
#include "base/json.h"
#include "model/coro.h"

/*
 * A coroutine span as a nestable async slice ("b"/"e") holding its on-CPU
 * slices as async slices of the same id and name; the thread's track keeps
 * the slices as calls.  The span's "b" goes out with its first slice, its
 * "e" (with the span's figures) after its last.  A span of an asyncio task
 * shares the task's id (its first slice's call id): the task is one track,
 * opened by a slice named after the task ("args":{"task":...}) from its
 * first slice to its end, holding its coroutines' spans nested as they
 * awaited each other; another span has its own id.  "span_id" names the
 * span either way.
 */
static void coro_event(struct exporter *e, const struct bp_session *s, const char *ph,
		       uint64_t ts, const struct coro_span *sp, uint64_t call)
{
	struct chrome_priv *pr = e->priv;
	char line[512], *p = line;
	FILE *f = e->out;

	/* the name as the call slices have it: {"name":"..." (cached, then cut at its comma) */
	if (chrome_cache_func(pr, s, sp->func))
		return;
	chrome_sep(e);
	fwrite_unlocked(pr->head[sp->func], 1, strstr(pr->head[sp->func], ",\"cat\":") -
			pr->head[sp->func], f);
	p = put_str(p, ",\"cat\":\"coroutine\",\"ph\":\"");
	p = put_str(p, ph);
	p = put_str(p, "\",\"id\":");
	p = put_u64(p, sp->task ? sp->task : sp->id);
	p = put_str(p, ",\"ts\":");
	p = put_us(p, ts);
	p = put_pid_tid(p, sp->pid, sp->tid);
	/* a slice: its call; the span's begin: nothing, its figures come with its end */
	p = put_str(p, ",\"args\":{\"span_id\":");
	p = put_u64(p, sp->id);
	if (call) {
		p = put_str(p, ",\"call_id\":");
		p = put_u64(p, call);
		p = put_str(p, "}}");
	} else if (*ph == 'b') {
		p = put_str(p, ",\"span\":true}}");
	} else {
		p = put_str(p, ",\"span\":true,\"slices\":");
		p = put_u64(p, sp->nslices);
		p = put_str(p, ",\"exec_us\":");
		p = put_us(p, sp->exec);
		p = put_str(p, ",\"wall_us\":");
		p = put_us(p, coro_span__wall(sp));
		/* wall = exec + await_child + await_other (model/coro.h), exact to the ns here */
		p = put_str(p, ",\"await_child_us\":");
		p = put_us(p, sp->await_child);
		p = put_str(p, ",\"await_other_us\":");
		p = put_us(p, sp->await_other);
		p = put_str(p, ",\"max_slice_us\":");
		p = put_us(p, sp->max_slice);
		if (sp->flags & CORO_RAISED)
			p = put_str(p, ",\"raised\":true");
		if (sp->flags & CORO_OPEN)
			p = put_str(p, ",\"open\":true");
		if (sp->flags & CORO_NO_START)
			p = put_str(p, ",\"began_before_recording\":true");
		p = put_str(p, "}}");
	}
	fwrite_unlocked(line, 1, p - line, f);
}

/* A task's own slice on its track: from its first slice to the end of its outermost coroutine. */
static void task_events(struct exporter *e, const struct coro_span *sp)
{
	struct chrome_priv *pr = e->priv;
	const char *name = coro__task_name(pr->coro, sp->task);
	char line[160], *p;
	FILE *f = e->out;
	int i;

	for (i = 0; i < 2; i++) {
		chrome_sep(e);
		fputs("{\"name\":", f);
		json_str(f, *name ? name : "task");
		p = put_str(line, ",\"cat\":\"coroutine\",\"ph\":\"");
		p = put_str(p, i ? "e" : "b");
		p = put_str(p, "\",\"id\":");
		p = put_u64(p, sp->task);
		p = put_str(p, ",\"ts\":");
		p = put_us(p, i ? sp->end : sp->begin);
		p = put_pid_tid(p, sp->pid, sp->tid);
		p = put_str(p, ",\"args\":{\"task\":");
		fwrite_unlocked(line, 1, p - line, f);
		json_str(f, *name ? name : "task");
		fputs("}}", f);
	}
	coro__task_done(pr->coro, sp->task);
}

void chrome_coro_annot(struct exporter *e, const struct bp_annot *a)
{
	struct chrome_priv *pr = e->priv;

	if (!pr->coro)
		pr->coro = coro__new();
	coro__task(pr->coro, a);
}

int chrome_coro_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	struct chrome_priv *pr = e->priv;
	struct coro_span sp;
	enum coro_slice k;

	if (!pr->coro && !(c->flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED)) &&
	    !(c->func < s->nfuncs && (s->funcs[c->func].flags & BP_FUNC_RESUMABLE)))
		return 0;
	if (!pr->coro)
		pr->coro = coro__new();
	k = coro__call(pr->coro, s, c, &sp);
	if (k == CORO_NOT_SLICE)
		return 0;
	if (sp.nslices == 1)
		coro_event(e, s, "b", sp.begin, &sp, 0);
	coro_event(e, s, "b", c->begin, &sp, c->id);
	coro_event(e, s, "e", c->end, &sp, c->id);
	if (k == CORO_LAST)
		coro_event(e, s, "e", sp.end, &sp, 0);
	if (k == CORO_LAST && sp.task && sp.task == sp.id)
		task_events(e, &sp);
	return 0;
}

struct coro_close {
	struct exporter *e;
	const struct bp_session *s;
};

static int coro_close_open(void *ctx, const struct coro_span *sp)
{
	struct coro_close *cc = ctx;

	coro_event(cc->e, cc->s, "e", sp->end, sp, 0);
	if (sp->task && sp->task == sp->id)
		task_events(cc->e, sp);
	return 0;
}

void chrome_coro_end(struct exporter *e, const struct bp_session *s)
{
	struct coro_close cc = { e, s };

	/* spans still suspended: closed where their last slice ended */
	coro__drain(((struct chrome_priv *)e->priv)->coro, coro_close_open, &cc);
}
