// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Dependency edges: fork and wakeup edges waiting for their far end, and
 * data edges (--deps): a pointer returned by one call, received by a later one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "base/log.h"
#include "symbols/symbolize.h"
#include "internal.h"
#include "symbols/procmaps.h"

int dec_emit_edge(struct decoder *d, const struct bp_edge *e)
{
	struct bp_event ev = { .kind = BP_EV_EDGE };

	ev.edge = *e;
	if (e->kind < 4)
		d->s->nedges[e->kind]++;
	return d->sink(d->ctx, &ev);
}

static int add_range(void *ctx, const struct procmap *m)
{
	struct pid_ranges *pr = ctx;

	if ((pr->n & (pr->n - 1)) == 0)
		pr->r = xrealloc(pr->r, (pr->n ? pr->n * 2 : 64) * sizeof(*pr->r));
	pr->r[pr->n][0] = m->start;
	pr->r[pr->n][1] = m->end;
	pr->n++;
	return 0;
}

static void read_ranges(struct pid_ranges *pr)
{
	pr->n = 0;
	procmaps__each(pr->pid, add_range, pr);
}

/* Could v be a pointer in pid's address space?  Small integers never are. */
static bool pointer_like(struct decoder *d, uint32_t pid, uint64_t v)
{
	struct pid_ranges *pr = NULL;
	size_t i;

	if (v < 0x10000 || v >= 0x800000000000ull)
		return false;
	for (i = 0; i < d->nranges; i++)
		if (d->ranges[i].pid == pid)
			pr = &d->ranges[i];
	if (!pr) {
		d->ranges = xrealloc(d->ranges, (d->nranges + 1) * sizeof(*d->ranges));
		pr = &d->ranges[d->nranges++];
		memset(pr, 0, sizeof(*pr));
		pr->pid = pid;
		read_ranges(pr);
	}
	/* Gone before we could read its mappings: the canonical user range is all we know. */
	if (!pr->n)
		return true;
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < pr->n; i++)
			if (v >= pr->r[i][0] && v < pr->r[i][1])
				return true;
		if (pass || pr->misses > 256)
			break;
		pr->misses++;	/* the heap may have grown since: look again, a bounded number of times */
		read_ranges(pr);
	}
	return false;
}

static struct ptr_slot *ptr_slot(struct decoder *d, uint32_t pid, uint64_t v)
{
	if (!d->ptrs) {
		d->ptrs_cap = 1 << 16;	/* bounded: a newer pointer overwrites an older one */
		d->ptrs = xcalloc(d->ptrs_cap, sizeof(*d->ptrs));
	}
	return &d->ptrs[((v ^ pid) * 0x9e3779b97f4a7c15ull >> 40) & (d->ptrs_cap - 1)];
}

/* A call received these arguments: edges from the calls that returned them. */
int dec_data_edges(struct decoder *d, struct tstate *t, const struct frame *f,
		      const uint64_t *regs)
{
	uint64_t seen[6];
	int i, j, n = 0, err, nregs = 6;

	/* Only registers that carry arguments: others hold leftovers of earlier calls. */
	if (f->func < d->s->nfuncs && d->s->funcs[f->func].nparams >= 0)
		nregs = d->s->funcs[f->func].nparams < 6 ? d->s->funcs[f->func].nparams : 6;
	for (i = 0; i < nregs; i++) {
		struct ptr_slot *p;
		struct bp_edge e = { .kind = BP_EDGE_DATA };

		if (regs[i] < 0x10000 || !d->ptrs)
			continue;
		for (j = 0; j < n && seen[j] != regs[i]; j++)
			;
		if (j < n)
			continue;	/* one edge per value, however many arguments carry it */
		seen[n++] = regs[i];
		p = ptr_slot(d, t->pid, regs[i]);
		if (p->value != regs[i] || p->pid != t->pid)
			continue;
		e.src_call = p->call;
		e.src_ts = p->ts;
		e.src_pid = p->pid;
		e.src_tid = p->tid;
		e.src_func = p->func;
		e.dst_call = f->id;
		e.dst_ts = f->begin;
		e.dst_pid = t->pid;
		e.dst_tid = t->tid;
		e.dst_func = f->func;
		e.value = regs[i];
		err = dec_emit_edge(d, &e);
		if (err)
			return err;
	}
	return 0;
}

/* A call returned v: remember it if it can be a pointer. */
void dec_note_return(struct decoder *d, struct tstate *t, const struct bp_call *c, uint64_t v)
{
	struct ptr_slot *p;

	if (!pointer_like(d, t->pid, v))
		return;
	p = ptr_slot(d, t->pid, v);
	p->value = v;
	p->call = c->id;
	p->ts = c->end;
	p->pid = t->pid;
	p->tid = t->tid;
	p->func = c->func;
}

/* The wakee goes on in its innermost open call at ts: the pending edge ends there. */
static int wake_land(struct decoder *d, struct tstate *t, struct bp_edge *e, uint64_t ts)
{
	int err = 0;

	if (e->src_call && t->depth) {
		e->dst_call = t->stack[t->depth - 1].id;
		e->dst_func = t->stack[t->depth - 1].func;
		e->dst_ts = ts;
		e->dst_pid = t->pid;
		e->dst_tid = t->tid;
		err = dec_emit_edge(d, e);
	}
	e->src_call = 0;
	return err;
}

/*
 * Before each event of a thread (ts; UINT64_MAX: the thread ends).
 *
 * After a BP_WAKE_STAYED, at the wakee's first event at or after it (its
 * calls until then are all known): the call it is in is the one it went on in.
 *
 * A woken thread's own events come after its RUNNING: that record is sent
 * as it is switched in, before it runs.  An event of the wakee later than
 * the wakeup with no RUNNING first means its switch-in was not seen (this
 * happens, rarely, under load: docs/edges-and-annotations.md); it did run
 * again, in the call it is in now, at the latest at ts.
 */
int dec_wake_due(struct decoder *d, struct tstate *t, uint64_t ts)
{
	int err = 0;

	if (t->stayed_wake.src_call && ts >= t->stayed_at)
		err = wake_land(d, t, &t->stayed_wake, t->stayed_at);
	if (!err && t->pend_wake.src_call && ts != UINT64_MAX && ts > t->pend_wake.src_ts)
		err = wake_land(d, t, &t->pend_wake, ts);
	return err;
}

int dec_on_wakeup(struct decoder *d, const struct bp_rec_wakeup *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	uint32_t otid = (uint32_t)r->other, opid = r->other >> 32;
	struct tstate *t, *o;
	int err;

	if (r->h.flags == BP_WAKE_WAKING) {
		/* in the waker: its innermost open call is the cause */
		o = dec_thread_state(d, otid, opid, ts);
		t = dec_thread_state(d, tid, pid, ts);	/* after o: inserting may move entries */
		o = dec_thread_state(d, otid, opid, ts);
		memset(&o->pend_wake, 0, sizeof(o->pend_wake));
		if (!t->depth)
			return 0;
		o->pend_wake.kind = BP_EDGE_WAKEUP;
		o->pend_wake.src_call = t->stack[t->depth - 1].id;
		o->pend_wake.src_func = t->stack[t->depth - 1].func;
		o->pend_wake.src_ts = ts;
		o->pend_wake.src_pid = pid;
		o->pend_wake.src_tid = tid;
		return 0;
	}
	t = dec_thread_state(d, tid, pid, ts);
	if (r->h.flags == BP_WAKE_RUNNING)	/* switched in: the wakee's calls are all known */
		return wake_land(d, t, &t->pend_wake, ts);
	if (r->h.flags != BP_WAKE_STAYED)
		return -EINVAL;
	/* an earlier one still waiting ends where the wakee is now */
	err = dec_wake_due(d, t, UINT64_MAX);
	if (err)
		return err;
	t->stayed_wake = t->pend_wake;
	t->stayed_at = ts;
	t->pend_wake.src_call = 0;
	return 0;
}
