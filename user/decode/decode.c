// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shadow call stacks.  Each thread has a stack of open frames; an entry
 * record pushes, an exit record pops and emits a struct bp_call.
 *
 * Returns that never come (longjmp, C++ exceptions, the kernel's limit on
 * pending return probes, a thread that dies inside calls) are repaired with
 * the stack pointer recorded by the probes: at entry sp points at the return
 * address, at exit sp = entry sp + 8.  A frame whose entry sp is below the sp
 * of a later entry, or below the entry sp of a returning frame, can no longer
 * be live: it is closed there and flagged.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode.h"
#include "internal.h"
#include "compensate.h"
#include "base/log.h"
#include "symbols/symbolize.h"
#include "symbols/ustrings.h"

void decoder__set_symbolizer(struct decoder *d, struct symbolizer *sy)
{
	d->sy = sy;
}

void decoder__set_strings(struct decoder *d, struct ustrings *u)
{
	d->strings = u;
}

void decoder__set_hold_hook(struct decoder *d, decoder_hold_fn fn, void *ctx)
{
	d->hold_hook = fn;
	d->hold_ctx = ctx;
}

void decoder__enable_data_edges(struct decoder *d)
{
	d->data_edges = true;
}

int decoder__new(struct bp_session *s, decoder_sink_fn sink, void *ctx, struct decoder **out)
{
	struct decoder *d = xcalloc(1, sizeof(*d));

	d->s = s;
	d->sink = sink;
	d->ctx = ctx;
	d->tab_cap = 64;
	d->tab = xcalloc(d->tab_cap, sizeof(*d->tab));
	d->next_id = 1;
	*out = d;
	return 0;
}

void decoder__compensate(struct decoder *d, const struct comp_costs *c)
{
	compensator__free(d->comp);
	d->comp = c ? compensator__new(d->s, c) : NULL;
}

bool decoder__compensating(const struct decoder *d)
{
	return d && d->comp;
}

bool decoder__comp_in_use(const struct decoder *d, struct comp_costs *out, uint32_t *pid,
			  unsigned *mask)
{
	if (!d || !d->comp)
		return false;
	compensator__in_use(d->comp, out, pid, mask);
	return true;
}

double decoder__compensated_ns(const struct decoder *d)
{
	return compensator__debt_ns(d->comp);
}

void decoder__free(struct decoder *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nranges; i++)
		free(d->ranges[i].r);
	free(d->ranges);
	free(d->ptrs);
	for (i = 0; i < d->tab_cap; i++) {
		free(d->tab[i].stack);
		free(d->tab[i].infos);
		free(d->tab[i].py);
	}
	for (i = 0; i < d->nspans; i++)
		free(d->spans[i].name);
	free(d->spans);
	free(d->dropped_bits);
	dec_py_free(d);
	dec_pytask_free(d);
	compensator__free(d->comp);
	free(d->tab);
	free(d);
}

static size_t home_of(const struct decoder *d, uint32_t tid)
{
	return (tid * 2654435761u) & (d->tab_cap - 1);
}

static size_t slot_of(const struct decoder *d, uint32_t tid)
{
	size_t i = home_of(d, tid);

	while (d->tab[i].tid && d->tab[i].tid != tid)
		i = (i + 1) & (d->tab_cap - 1);
	return i;
}

struct tstate *dec_thread_state(struct decoder *d, uint32_t tid, uint32_t pid, uint64_t ts)
{
	struct tstate *t;
	size_t i;

	if ((d->tab_used + 1) * 2 > d->tab_cap) {
		struct tstate *old = d->tab;
		size_t oldcap = d->tab_cap;

		d->tab_cap *= 2;
		d->tab = xcalloc(d->tab_cap, sizeof(*d->tab));
		for (i = 0; i < oldcap; i++)
			if (old[i].tid)
				d->tab[slot_of(d, old[i].tid)] = old[i];
		free(old);
	}
	i = slot_of(d, tid);
	t = &d->tab[i];
	if (t->tid && t->exited) {	/* kept for a late switch-in that did not come: its tid is reused */
		dec_forget_thread(d, tid);
		i = slot_of(d, tid);
		t = &d->tab[i];
	}
	if (!t->tid) {
		struct bp_thread *bt;

		t->tid = tid;
		t->pid = pid;
		t->first_ts = t->last_ts = ts;
		d->tab_used++;
		bt = session__thread(d->s, tid, pid);
		if (!bt->first_ts || ts < bt->first_ts)
			bt->first_ts = ts;
	} else if (pid && t->pid != pid) {
		t->pid = pid;	/* tid reused by another process, or exec by a thread */
	}
	return t;
}

struct tstate *dec_find_thread(struct decoder *d, uint32_t tid)
{
	struct tstate *t = &d->tab[slot_of(d, tid)];

	return t->tid ? t : NULL;
}

/*
 * A thread that exited: its state goes (a long `serve` sees threads come and
 * go without end).  Linear probing: the entries after it that could not sit
 * in their home slot move back.
 */
void dec_forget_thread(struct decoder *d, uint32_t tid)
{
	size_t mask = d->tab_cap - 1, i = slot_of(d, tid), j = i;

	compensator__forget(d->comp, tid);
	if (!d->tab[i].tid)
		return;
	free(d->tab[i].stack);
	free(d->tab[i].infos);
	free(d->tab[i].py);
	for (;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!d->tab[j].tid)
			break;
		k = home_of(d, d->tab[j].tid);
		/* stays if its home is cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		d->tab[i] = d->tab[j];
		i = j;
	}
	memset(&d->tab[i], 0, sizeof(d->tab[i]));
	d->tab_used--;
}

size_t decoder__nthreads(const struct decoder *d)
{
	return d->tab_used;
}

void dec_push(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
	      uint64_t id, bool retprobe)
{
	uint32_t below = t->depth ? t->stack[t->depth - 1].nretprobes : 0;
	struct frame *f;

	if (t->depth == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->stack = xrealloc(t->stack, t->cap * sizeof(*t->stack));
	}
	f = &t->stack[t->depth++];
	f->id = id;
	f->begin = ts;
	f->sp = sp;
	f->child_ns = 0;
	f->func = func;
	f->info_first = t->ninfos;
	f->pyframe = 0;
	f->task = 0;
	f->path = session__path(d->s, t->depth > 1 ? t->stack[t->depth - 2].path : 0, func);
	/*
	 * The kernel keeps a bounded number of pending return probes per
	 * thread.  Only native calls take one: a Python call or a span ends
	 * by a USDT probe and is exact at any depth.
	 */
	f->flags = 0;
	f->nretprobes = below;
	if (retprobe) {
		if (below >= DECODER_URETPROBE_DEPTH)
			f->flags = BP_CALL_NO_RETPROBE;
		else
			f->nretprobes++;
	}
}

/* Emits the call of `f` ending at `end`; the caller has removed it from the stack. */
int dec_emit_call(struct decoder *d, struct tstate *t, const struct frame *f, uint32_t depth,
		     uint64_t end, uint32_t flags)
{
	/*
	 * Not zeroed as a whole: the union is ~160 bytes and this runs once per
	 * call, so every field is set below instead (args only when valid).
	 */
	struct bp_event ev;
	struct bp_call *c = &ev.call;
	uint64_t dur;

	ev.kind = BP_EV_CALL;
	c->infos = NULL;
	c->ninfos = 0;
	c->pad2 = 0;
	c->task = f->task;

	if (end < f->begin)
		end = f->begin;
	dur = end - f->begin;
	c->id = f->id;
	c->parent_id = depth ? t->stack[depth - 1].id : 0;
	c->begin = f->begin;
	c->end = end;
	c->self = dur > f->child_ns ? dur - f->child_ns : 0;
	c->pid = t->pid;
	c->tid = t->tid;
	c->func = f->func;
	c->depth = depth;
	c->flags = (f->flags & ~FRAME_RESTORED) | flags;
	c->path = f->path;
	if (f->flags & BP_CALL_HAS_ARGS)
		memcpy(c->args, f->args, sizeof(c->args));
	c->ret = f->ret;
	if (f->flags & (BP_CALL_HAS_XARGS | BP_CALL_HAS_RET))
		c->x = f->x;
	if (f->info_first < t->ninfos && depth == t->depth) {
		c->infos = &t->infos[f->info_first];
		c->ninfos = t->ninfos - f->info_first;
		c->flags |= BP_CALL_HAS_INFOS;
	}
	if (depth) {
		t->stack[depth - 1].child_ns += dur;
	} else {
		t->orphan_ns += dur;
		t->orphan_since += dur;
	}

	d->s->ncalls++;
	if (c->flags & BP_CALL_UNFINISHED)
		d->s->nunfinished++;
	if (c->flags & BP_CALL_UNWOUND)
		d->s->nunwound++;
	if (c->flags & (BP_CALL_NO_ENTRY | BP_CALL_ENTRY_LOST))
		d->s->nno_entry++;
	if (c->flags & BP_CALL_NO_RETPROBE)
		d->s->nno_retprobe++;
	return d->sink(d->ctx, &ev);
}

int dec_pop_emit(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags)
{
	struct frame f = t->stack[--t->depth];
	int err;

	/* no longjmp took it: its function was dropped (decoder__drop_func) and its return not seen */
	if ((flags & BP_CALL_UNWOUND) && f.func < d->ndropped_bits * 64 &&
	    (d->dropped_bits[f.func / 64] >> (f.func % 64) & 1))
		flags = (flags & ~BP_CALL_UNWOUND) | BP_CALL_DROPPED;
	err = dec_emit_call(d, t, &f, t->depth, end, flags);

	if (f.info_first < t->ninfos)
		t->ninfos = f.info_first;	/* its infos went out with it */
	return err;
}

int dec_close_all(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags)
{
	int err;

	err = dec_wake_due(d, t, UINT64_MAX);
	if (err)
		return err;
	while (t->depth) {
		err = dec_pop_emit(d, t, end, flags);
		if (err)
			return err;
	}
	t->orphan_ns = 0;
	t->orphan_since = 0;
	return 0;
}

void decoder__drop_func(struct decoder *d, uint32_t func)
{
	if (func >= d->ndropped_bits * 64) {
		size_t n = func / 64 + 1;

		d->dropped_bits = xrealloc(d->dropped_bits, n * sizeof(*d->dropped_bits));
		memset(d->dropped_bits + d->ndropped_bits, 0,
		       (n - d->ndropped_bits) * sizeof(*d->dropped_bits));
		d->ndropped_bits = n;
	}
	d->dropped_bits[func / 64] |= 1ull << (func % 64);
	if (d->py_drop && func < d->s->nfuncs && d->s->funcs[func].flags & BP_FUNC_PYTHON)
		dec_py_drop_codes(d, func);
}

void decoder__mark_open(const struct decoder *d, uint8_t *open, size_t n)
{
	size_t i;
	uint32_t k;

	for (i = 0; i < d->tab_cap; i++)
		for (k = 0; d->tab[i].tid && k < d->tab[i].depth; k++)
			if (d->tab[i].stack[k].func < n)
				open[d->tab[i].stack[k].func] = 1;
}

bool decoder__dropped(const struct decoder *d, uint32_t func)
{
	return func < d->ndropped_bits * 64 && (d->dropped_bits[func / 64] >> (func % 64) & 1);
}

void decoder__set_py_drop(struct decoder *d, void (*fn)(void *ctx, uint32_t pid, uint64_t code),
			  void *ctx)
{
	d->py_drop = fn;
	d->py_drop_ctx = ctx;
}

void decoder__set_loss_check(struct decoder *d, int (*fn)(void *ctx), void *ctx)
{
	d->loss_check = fn;
	d->loss_check_ctx = ctx;
}

int dec_losses_known(struct decoder *d)
{
	if (d->had_loss || !d->loss_check)
		return 0;
	return d->loss_check(d->loss_check_ctx);
}

int decoder__annot(struct decoder *d, const struct bp_annot *a)
{
	struct bp_event ev = { .kind = BP_EV_ANNOT, .annot = *a };

	d->s->nannots++;
	return d->sink(d->ctx, &ev);
}

int decoder__loss(struct decoder *d, uint32_t cpu, uint64_t count)
{
	struct bp_event ev = { .kind = BP_EV_LOSS };

	d->had_loss = true;
	ev.loss.ts = d->last_ts;
	ev.loss.cpu = cpu;
	ev.loss.count = count;
	return d->sink(d->ctx, &ev);
}

int decoder__finish(struct decoder *d)
{
	size_t i;
	int err;

	for (i = 0; i < d->tab_cap; i++) {
		struct tstate *t = &d->tab[i];
		struct bp_thread *bt;

		if (!t->tid)
			continue;
		err = dec_close_all(d, t, t->last_ts, BP_CALL_UNFINISHED);
		if (err)
			return err;
		bt = session__find_thread(d->s, t->tid);
		if (bt && t->last_ts > bt->last_ts)
			bt->last_ts = t->last_ts;
	}
	return 0;
}
