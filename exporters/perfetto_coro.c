// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perfetto exporter: asyncio tasks.  Each task (session.h: BP_ANNOT_TASK)
 * is a track named after it, a child of the track of the thread its first
 * span ran on; the spans of its coroutines (model/coro.h) are slices on it,
 * category "coroutine", nested as they awaited each other, with their
 * figures as annotations (span_id, slices, exec_ns, wall_ns, await_child_ns,
 * await_other_ns, max_slice_ns, raised, open, task).  A span is written
 * when it ends (its last slice, or at the end for one still suspended), on a lane of the task's track whose
 * clock has not passed its begin (perfetto.c: the ordering rules).  Spans of
 * no task (generators) have no track here; the thread's track keeps every
 * slice as a call either way.
 */
#include "internal.h"

static struct pf_track *task_track(struct exporter *e, const struct bp_session *s,
				   const struct coro_span *sp)
{
	struct perfetto_priv *pr = e->priv;
	const char *name = coro__task_name(pr->coro, sp->task);
	struct pf_track *t;
	bool added;

	pf_thread_track(e, s, sp->pid, sp->tid);	/* the parent, described first */
	t = pf_find_or_add_track(e, UUID_TASK(sp->task), sp->pid, sp->tid, &added);
	if (added) {
		t->task = true;
		pf_write_named_desc(e, UUID_TASK(sp->task), UUID_THREAD(sp->pid, sp->tid),
				    *name ? name : "task", false);
	}
	return t;
}

static void write_span(struct exporter *e, const struct bp_session *s, const struct coro_span *sp)
{
	struct perfetto_priv *pr = e->priv;
	struct pf_track *t;
	struct pf_lane *l;

	if (!sp->task)
		return;
	t = task_track(e, s, sp);
	l = pf_lane_for(e, s, t, -1, sp->begin);
	pf_ev_begin(pr);
	pf_te_type(pr, TYPE_SLICE_BEGIN);
	pf_te_cat(pr, l, CAT_CORO);
	pf_te_func_name(pr, l, s, sp->func);
	pf_an_int(pr, l, AN_SPAN_ID, (int64_t)sp->id);
	pf_an_int(pr, l, AN_SLICES, sp->nslices);
	pf_an_int(pr, l, AN_EXEC, (int64_t)sp->exec);
	pf_an_int(pr, l, AN_WALL, (int64_t)coro_span__wall(sp));
	pf_an_int(pr, l, AN_AWAIT_CHILD, (int64_t)sp->await_child);
	pf_an_int(pr, l, AN_AWAIT_OTHER, (int64_t)sp->await_other);
	pf_an_int(pr, l, AN_MAX_SLICE, (int64_t)sp->max_slice);
	if (sp->flags & CORO_RAISED)
		pf_an_bool(pr, l, AN_RAISED);
	if (sp->flags & CORO_OPEN)
		pf_an_bool(pr, l, AN_OPEN);
	if (sp->flags & CORO_NO_START)
		pf_an_bool(pr, l, AN_NO_ENTRY);
	if (sp->task == sp->id)
		pf_an_str(pr, l, AN_TASK, coro__task_name(pr->coro, sp->task));
	pf_ev_write(e, l, sp->begin);
	pf_write_end(e, l, sp->end > sp->begin ? sp->end : sp->begin);
	if (sp->task == sp->id)
		coro__task_done(pr->coro, sp->task);	/* the task's own span ends last */
}

int pf_coro_call(struct exporter *e, const struct bp_session *s, const struct bp_call *c)
{
	struct perfetto_priv *pr = e->priv;
	struct coro_span sp;

	if (!(c->flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED | BP_CALL_IN_TASK)) &&
	    !(c->func < s->nfuncs && (s->funcs[c->func].flags & BP_FUNC_RESUMABLE)))
		return 0;
	if (!pr->coro)
		pr->coro = coro__new();
	if (coro__call(pr->coro, s, c, &sp) == CORO_LAST)
		write_span(e, s, &sp);
	return 0;
}

void pf_coro_edge(struct exporter *e, const struct bp_edge *ed)
{
	struct perfetto_priv *pr = e->priv;

	if (pr->coro)
		coro__edge(pr->coro, ed);
}

void pf_coro_annot(struct exporter *e, const struct bp_annot *a)
{
	struct perfetto_priv *pr = e->priv;

	if (!pr->coro)
		pr->coro = coro__new();
	coro__task(pr->coro, a);
}

struct close_ctx {
	struct exporter *e;
	const struct bp_session *s;
};

static int close_open(void *ctx, const struct coro_span *sp)
{
	struct close_ctx *cc = ctx;

	write_span(cc->e, cc->s, sp);
	return 0;
}

void pf_coro_end(struct exporter *e, const struct bp_session *s)
{
	struct perfetto_priv *pr = e->priv;
	struct close_ctx cc = { e, s };

	/* spans still suspended: closed where their last slice ended */
	coro__drain(pr->coro, close_open, &cc);
}
