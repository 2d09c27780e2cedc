// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Coroutine spans from their slices and resume edges (see coro.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coro.h"
#include "base/hashtab.h"
#include "base/log.h"
#include "base/util.h"

/* A suspended span, keyed by the call id its next slice will have (or its last one's). */
struct held {
	uint64_t key;		/* 0: empty slot */
	struct coro_span sp;
};

struct task_name {
	uint64_t id;		/* 0: empty slot */
	char name[64];
};

struct coro_joiner {
	struct held *tab;
	size_t cap, used;
	/* per thread (key tid + 1): sp.id = the caller slice of its last call if that was a
	 * coroutine slice that suspended, else 0 */
	struct held *last;
	size_t last_cap, last_used;
	struct task_name *tasks;
	size_t tasks_cap, tasks_used;
};

static uint64_t key_hash(uint64_t k)
{
	return k * 0x9e3779b97f4a7c15ull;
}

static bool held_empty(const void *slot)
{
	return !((const struct held *)slot)->key;
}

static uint64_t held_hash(const void *slot)
{
	return key_hash(((const struct held *)slot)->key);
}

static const struct hashtab_ops held_ops = {
	sizeof(struct held), 64, held_empty, held_hash,
};

struct coro_joiner *coro__new(void)
{
	return xcalloc(1, sizeof(struct coro_joiner));
}

void coro__free(struct coro_joiner *j)
{
	if (!j)
		return;
	free(j->tab);
	free(j->last);
	free(j->tasks);
	free(j);
}

size_t coro__held(const struct coro_joiner *j)
{
	return j ? j->used : 0;
}

static size_t find_in(const struct held *tab, size_t cap, uint64_t key)
{
	size_t i;

	for (i = hashtab__first(key_hash(key), cap); tab[i].key && tab[i].key != key;
	     i = hashtab__next(i, cap))
		;
	return i;
}

static size_t find(const struct coro_joiner *j, uint64_t key)
{
	return find_in(j->tab, j->cap, key);
}

/*
 * Was the thread's previous call a coroutine slice that suspended inside
 * call c (its caller)?  Then c suspends in that child's await.  Notes c for
 * the next call.
 */
static bool after_child(struct coro_joiner *j, const struct bp_call *c, bool slice)
{
	uint64_t key = (uint64_t)c->tid + 1, note;
	bool child = false;
	size_t i;

	note = slice && (c->flags & BP_CALL_SUSPENDED) ? c->parent_id : 0;
	if (!j->last_cap && !note)
		return false;
	if (note)
		hashtab__reserve((void **)&j->last, &j->last_cap, j->last_used, &held_ops);
	i = find_in(j->last, j->last_cap, key);
	if (j->last[i].key) {
		child = j->last[i].sp.id == c->id;
		if (!note) {	/* only the threads whose last call was such a slice are kept */
			hashtab__remove(j->last, j->last_cap, i, &held_ops);
			j->last_used--;
			return child;
		}
	} else if (note) {
		j->last_used++;
		j->last[i].key = key;
	}
	if (note)
		j->last[i].sp.id = note;
	return child;
}

/* Takes the span held under key into *out; false if none. */
static bool take(struct coro_joiner *j, uint64_t key, struct coro_span *out)
{
	size_t i;

	if (!j->cap || !key)
		return false;
	i = find(j, key);
	if (!j->tab[i].key)
		return false;
	*out = j->tab[i].sp;
	hashtab__remove(j->tab, j->cap, i, &held_ops);
	j->used--;
	return true;
}

static void put(struct coro_joiner *j, uint64_t key, const struct coro_span *sp)
{
	size_t i;

	if (!key)
		return;
	hashtab__reserve((void **)&j->tab, &j->cap, j->used, &held_ops);
	i = find(j, key);
	if (!j->tab[i].key)
		j->used++;
	j->tab[i].key = key;
	j->tab[i].sp = *sp;
}

enum coro_slice coro__call(struct coro_joiner *j, const struct bp_session *s,
			   const struct bp_call *c, struct coro_span *span)
{
	bool resumable = s && c->func < s->nfuncs && (s->funcs[c->func].flags & BP_FUNC_RESUMABLE);
	uint64_t dur = c->end > c->begin ? c->end - c->begin : 0;
	bool slice = (c->flags & (BP_CALL_SUSPENDED | BP_CALL_RESUMED)) || resumable;
	bool child = after_child(j, c, slice);

	if (!slice)
		return CORO_NOT_SLICE;
	if ((c->flags & BP_CALL_RESUMED) && take(j, c->id, span)) {
		uint64_t gap = c->begin > span->end ? c->begin - span->end : 0;

		if (span->flags & CORO_GAP_CHILD)
			span->await_child += gap;
		else
			span->await_other += gap;
		span->flags &= ~CORO_GAP_CHILD;
	} else {
		memset(span, 0, sizeof(*span));
		span->id = c->id;
		span->begin = c->begin;
		span->pid = c->pid;
		span->tid = c->tid;
		span->func = c->func;
		span->task = c->flags & BP_CALL_IN_TASK ? c->task : 0;
		if (c->flags & (BP_CALL_RESUMED | BP_CALL_NO_ENTRY | BP_CALL_ENTRY_LOST))
			span->flags |= CORO_NO_START;
	}
	span->end = c->end;
	span->exec += dur;
	if (dur > span->max_slice)
		span->max_slice = dur;
	span->nslices++;
	if (c->flags & BP_CALL_SUSPENDED) {
		if (child)
			span->flags |= CORO_GAP_CHILD;
		/* until its resume edge names the next slice: under this slice's id */
		put(j, c->id, span);
		return CORO_SLICE;
	}
	if (c->flags & BP_CALL_RAISED)
		span->flags |= CORO_RAISED;
	if (c->flags & BP_CALL_UNFINISHED)
		span->flags |= CORO_OPEN;	/* running when the recording ended */
	return CORO_LAST;
}

void coro__edge(struct coro_joiner *j, const struct bp_edge *e)
{
	struct coro_span sp;

	if (e->kind != BP_EDGE_RESUME || !take(j, e->src_call, &sp))
		return;
	put(j, e->dst_call, &sp);
}

int coro__drain(struct coro_joiner *j, int (*fn)(void *ctx, const struct coro_span *sp),
		void *ctx)
{
	size_t i;
	int err = 0;

	for (i = 0; j && i < j->cap && !err; i++) {
		if (!j->tab[i].key)
			continue;
		j->tab[i].sp.flags = (j->tab[i].sp.flags & ~CORO_GAP_CHILD) | CORO_OPEN;
		err = fn(ctx, &j->tab[i].sp);
	}
	if (j) {
		free(j->tab);
		j->tab = NULL;
		j->cap = j->used = 0;
	}
	return err;
}

static bool task_empty(const void *slot)
{
	return !((const struct task_name *)slot)->id;
}

static uint64_t task_hash(const void *slot)
{
	return key_hash(((const struct task_name *)slot)->id);
}

static const struct hashtab_ops task_ops = {
	sizeof(struct task_name), 64, task_empty, task_hash,
};

static size_t task_find(const struct coro_joiner *j, uint64_t id)
{
	size_t i;

	for (i = hashtab__first(key_hash(id), j->tasks_cap); j->tasks[i].id && j->tasks[i].id != id;
	     i = hashtab__next(i, j->tasks_cap))
		;
	return i;
}

void coro__task(struct coro_joiner *j, const struct bp_annot *a)
{
	size_t i;

	if (a->kind != BP_ANNOT_TASK || !a->call)
		return;
	hashtab__reserve((void **)&j->tasks, &j->tasks_cap, j->tasks_used, &task_ops);
	i = task_find(j, a->call);
	if (!j->tasks[i].id)
		j->tasks_used++;
	j->tasks[i].id = a->call;
	snprintf(j->tasks[i].name, sizeof(j->tasks[i].name), "%s", a->name);
}

const char *coro__task_name(struct coro_joiner *j, uint64_t id)
{
	size_t i;

	if (!j || !j->tasks_cap || !id)
		return "";
	i = task_find(j, id);
	return j->tasks[i].id ? j->tasks[i].name : "";
}

void coro__task_done(struct coro_joiner *j, uint64_t id)
{
	size_t i;

	if (!j || !j->tasks_cap || !id)
		return;
	i = task_find(j, id);
	if (!j->tasks[i].id)
		return;
	hashtab__remove(j->tasks, j->tasks_cap, i, &task_ops);
	j->tasks_used--;
}

void coro_tally__add(struct coro_tally *t, const struct coro_span *sp)
{
	uint64_t wall = coro_span__wall(sp);

	t->calls++;
	t->slices += sp->nslices;
	t->exec += sp->exec;
	t->wall += wall;
	if (sp->exec > t->max_exec)
		t->max_exec = sp->exec;
	if (wall > t->max_wall)
		t->max_wall = wall;
	t->raised += !!(sp->flags & CORO_RAISED);
	t->open += !!(sp->flags & CORO_OPEN);
	t->await_child += sp->await_child;
	t->await_other += sp->await_other;
}

void coro_tally__merge(struct coro_tally *t, const struct coro_tally *o)
{
	t->calls += o->calls;
	t->slices += o->slices;
	t->exec += o->exec;
	t->wall += o->wall;
	if (o->max_exec > t->max_exec)
		t->max_exec = o->max_exec;
	if (o->max_wall > t->max_wall)
		t->max_wall = o->max_wall;
	t->raised += o->raised;
	t->open += o->open;
	t->await_child += o->await_child;
	t->await_other += o->await_other;
}
