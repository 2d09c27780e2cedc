// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * asyncio tasks and their await edges, from the Python frames (python.c).
 *
 * A task is the chain of coroutines one resume runs: its outermost
 * coroutine frame (called from a frame that is not a coroutine: the event
 * loop's Handle._run) identifies it for as long as that frame lives, and
 * every coroutine slice resumed from a slice of the task belongs to it.  Its
 * id is the call id of its first slice; a BP_ANNOT_TASK names it, with the
 * asyncio Task's own name when python.bpf.c found the Task stepping the
 * coroutine (BP_REC_PYTASK), else "QUALNAME#N".
 *
 * Edges: every task step goes through the loop's call_soon(), which builds
 * an asyncio.events.Handle (Handle.__init__, a Python call, whose self the
 * record carries), and later runs it (Handle._run, same self).  The call
 * that scheduled it is the nearest Python caller of Handle.__init__ that is
 * not the loop's scheduling plumbing (call_soon, create_task, ...): the
 * spawner of a new task, or the call whose set_result() woke a waiter.  When
 * that Handle runs and a task slice starts in it, the edge is emitted: spawn
 * to a task's first slice, complete to a resumption.
 *
 * trio: a task step is scheduled by Runner.reschedule(task) (the only way a
 * trio task becomes runnable: at its spawn and after each suspension), whose
 * second local the record carries.  The call that scheduled it is the
 * nearest Python caller outside trio's scheduling plumbing (start_soon,
 * spawn_impl, the cancellation machinery, ...), remembered by the Task
 * object.  A task's first slice brings its Task object (python.bpf.c found
 * it at the start), and the next slice of any frame of that task after the
 * reschedule is its step: spawn at the first slice, complete at a resume.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "base/hashtab.h"
#include "base/log.h"
#include "base/utf8.h"
#include "base/util.h"

/* (pid, key) -> payload; the three tables of this file share the type. */
struct pt_slot {
	uint64_t key;		/* 0: empty slot */
	uint32_t pid, pad;
	union {
		char name[64];		/* names: a Task object's name */
		uint64_t root;		/* tasks: an outermost frame's task id */
		struct bp_edge edge;	/* pend: a scheduled step's source (src_* set) */
		struct {
			uint64_t obj;	/* objs: a task's Task object */
			uint64_t frame;	/* and its own coroutine's frame */
		} task;
	} u;
};

struct pt_tab {
	struct pt_slot *tab;
	size_t cap, used;
};

enum pt_role { ROLE_UNKNOWN = 0, ROLE_NONE, ROLE_INIT, ROLE_RUN, ROLE_PLUMBING, ROLE_RESCHED };

/* pend's key for a trio Task object (a Handle's or a frame's address is even) */
#define TRIO_KEY(obj)	((obj) | 1)

struct py_tasks {
	struct pt_tab names;	/* (pid, Task object) */
	struct pt_tab tasks;	/* (pid, suspended frame of a task) */
	struct pt_tab pend;	/* (pid, Handle object), then (pid, Handle._run's frame);
				 * (pid, TRIO_KEY(trio Task object)) */
	struct pt_tab objs;	/* (pid, task id) of a task whose first slice had a Task */
	uint8_t *role;		/* per session function: enum pt_role */
	size_t nrole;
	uint64_t seq;		/* tasks named by their coroutine */
};

static uint64_t pt_hash(uint32_t pid, uint64_t key)
{
	return ((key >> 3) ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
}

static bool pt_empty(const void *slot)
{
	return !((const struct pt_slot *)slot)->key;
}

static uint64_t pt_slot_hash(const void *slot)
{
	const struct pt_slot *x = slot;

	return pt_hash(x->pid, x->key);
}

static const struct hashtab_ops pt_ops = { sizeof(struct pt_slot), 64, pt_empty, pt_slot_hash };

static size_t pt_index(const struct pt_tab *t, uint32_t pid, uint64_t key)
{
	size_t i;

	for (i = hashtab__first(pt_hash(pid, key), t->cap); t->tab[i].key;
	     i = hashtab__next(i, t->cap))
		if (t->tab[i].key == key && t->tab[i].pid == pid)
			break;
	return i;
}

static struct pt_slot *pt_find(const struct pt_tab *t, uint32_t pid, uint64_t key)
{
	size_t i;

	if (!t->cap || !key)
		return NULL;
	i = pt_index(t, pid, key);
	return t->tab[i].key ? &t->tab[i] : NULL;
}

static struct pt_slot *pt_put(struct pt_tab *t, uint32_t pid, uint64_t key)
{
	size_t i;

	hashtab__reserve((void **)&t->tab, &t->cap, t->used, &pt_ops);
	i = pt_index(t, pid, key);
	if (!t->tab[i].key)
		t->used++;
	t->tab[i].key = key;
	t->tab[i].pid = pid;
	return &t->tab[i];
}

/* Takes (pid, key) out into *out (may be NULL); false if absent. */
static bool pt_take(struct pt_tab *t, uint32_t pid, uint64_t key, struct pt_slot *out)
{
	size_t i;

	if (!t->cap || !key)
		return false;
	i = pt_index(t, pid, key);
	if (!t->tab[i].key)
		return false;
	if (out)
		*out = t->tab[i];
	hashtab__remove(t->tab, t->cap, i, &pt_ops);
	t->used--;
	return true;
}

static struct py_tasks *pt_get(struct decoder *d)
{
	if (!d->pytasks)
		d->pytasks = xcalloc(1, sizeof(*d->pytasks));
	return d->pytasks;
}

void dec_pytask_free(struct decoder *d)
{
	struct py_tasks *p = d->pytasks;

	if (!p)
		return;
	free(p->names.tab);
	free(p->tasks.tab);
	free(p->pend.tab);
	free(p->objs.tab);
	free(p->role);
	free(p);
	d->pytasks = NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

static enum pt_role classify(const struct bp_func *f)
{
	static const char *const loop_plumbing[] = {
		"BaseEventLoop.call_soon", "BaseEventLoop._call_soon", "BaseEventLoop.call_later",
		"BaseEventLoop.call_at", "BaseEventLoop.call_soon_threadsafe",
		"BaseEventLoop.create_task",
	};
	static const char *const task_plumbing[] = { "create_task", "ensure_future",
						     "_ensure_future" };
	/* trio 0.22: who reschedules a task on behalf of the code that woke it */
	static const char *const trio_plumbing[] = {
		"Runner.spawn_impl", "Runner.spawn_system_task", "Nursery.start_soon",
		"Nursery.start", "Task._attempt_abort", "Task._attempt_delivery_of_any_pending_cancel",
		"CancelStatus.recalculate", "CancelScope.cancel", "Nursery._check_nursery_closed",
		"Nursery._child_finished", "Runner.task_exited",
	};
	const char *file = f->file ? f->file : "", *name = f->name ? f->name : "";
	size_t i;

	if ((f->flags & BP_FUNC_PYTHON) && strstr(file, "trio/_core/")) {
		/* enable_ki_protection's wrappers (CancelScope.cancel has one) */
		if (ends_with(file, "trio/_core/_ki.py"))
			return ROLE_PLUMBING;
		if (ends_with(file, "trio/_core/_generated_run.py"))
			return !strcmp(name, "reschedule") || !strcmp(name, "spawn_system_task") ?
				       ROLE_PLUMBING : ROLE_NONE;
		if (!ends_with(file, "trio/_core/_run.py"))
			return ROLE_NONE;
		if (!strcmp(name, "Runner.reschedule"))
			return ROLE_RESCHED;
		for (i = 0; i < sizeof(trio_plumbing) / sizeof(trio_plumbing[0]); i++)
			if (!strcmp(name, trio_plumbing[i]))
				return ROLE_PLUMBING;
		return ROLE_NONE;
	}
	if (!(f->flags & BP_FUNC_PYTHON) || !strstr(file, "asyncio/"))
		return ROLE_NONE;
	if (ends_with(file, "asyncio/events.py")) {
		if (!strcmp(name, "Handle.__init__"))
			return ROLE_INIT;
		if (!strcmp(name, "Handle._run"))
			return ROLE_RUN;
		return !strcmp(name, "TimerHandle.__init__") ? ROLE_PLUMBING : ROLE_NONE;
	}
	if (ends_with(file, "asyncio/base_events.py"))
		for (i = 0; i < sizeof(loop_plumbing) / sizeof(loop_plumbing[0]); i++)
			if (!strcmp(name, loop_plumbing[i]))
				return ROLE_PLUMBING;
	if (ends_with(file, "asyncio/tasks.py"))
		for (i = 0; i < sizeof(task_plumbing) / sizeof(task_plumbing[0]); i++)
			if (!strcmp(name, task_plumbing[i]))
				return ROLE_PLUMBING;
	if (ends_with(file, "asyncio/taskgroups.py") && !strcmp(name, "TaskGroup.create_task"))
		return ROLE_PLUMBING;
	return ROLE_NONE;
}

static enum pt_role role_of(struct py_tasks *p, const struct bp_session *s, uint32_t f)
{
	if (f >= s->nfuncs)
		return ROLE_NONE;
	if (f >= p->nrole) {
		size_t n = s->nfuncs + 64;

		p->role = xrealloc(p->role, n);
		memset(p->role + p->nrole, 0, n - p->nrole);
		p->nrole = n;
	}
	if (p->role[f] == ROLE_UNKNOWN)
		p->role[f] = classify(&s->funcs[f]);
	return p->role[f];
}

int dec_on_pytask(struct decoder *d, const struct bp_rec_pytask *r)
{
	struct py_tasks *p = pt_get(d);
	struct pt_slot *x;

	if (r->name_len > BP_PY_NAME_LEN || !r->task)
		return -EINVAL;
	x = pt_put(&p->names, r->h.pid_tgid >> 32, r->task);
	if (r->bad)
		snprintf(x->u.name, sizeof(x->u.name), "[task 0x%llx]",
			 (unsigned long long)r->task);
	else
		utf8_from_units(r->name, r->name_len, r->name_kind, x->u.name, sizeof(x->u.name));
	return 0;
}

/*
 * Handle.__init__ (key: the Handle), trio's Runner.reschedule (key:
 * TRIO_KEY(the Task)): remembers who scheduled the step.
 */
static void note_handle(struct py_tasks *p, const struct decoder *d, const struct tstate *t,
			uint64_t handle, uint64_t ts)
{
	struct pt_slot *x;
	enum pt_role role;
	uint32_t i;

	for (i = t->depth - 1; i-- > 0;) {
		const struct frame *f = &t->stack[i];

		if (!f->pyframe)
			continue;
		role = role_of(p, d->s, f->func);
		if (role == ROLE_PLUMBING || role == ROLE_INIT || role == ROLE_RESCHED)
			continue;
		x = pt_put(&p->pend, t->pid, handle);
		memset(&x->u.edge, 0, sizeof(x->u.edge));
		x->u.edge.src_call = f->id;
		x->u.edge.src_ts = ts;
		x->u.edge.src_pid = t->pid;
		x->u.edge.src_tid = t->tid;
		x->u.edge.src_func = f->func;
		return;
	}
	pt_take(&p->pend, t->pid, handle, NULL);	/* an older Handle's at the address */
}

/* A new task whose first slice is frame f: its id and name. */
static int new_task(struct decoder *d, struct py_tasks *p, struct tstate *t,
		    const struct bp_rec_py *r, struct frame *f, uint64_t ts)
{
	struct bp_event ev = { .kind = BP_EV_ANNOT };
	struct bp_annot *a = &ev.annot;
	struct pt_slot *n = pt_find(&p->names, t->pid, r->task);

	a->ts = ts;
	a->pid = t->pid;
	a->tid = t->tid;
	a->call = f->id;
	a->kind = BP_ANNOT_TASK;
	if (n) {
		snprintf(a->name, sizeof(a->name), "%s", n->u.name);
	} else {
		snprintf(a->name, sizeof(a->name), "%.40s#%llu", session__func_name(d->s, f->func),
			 (unsigned long long)++p->seq);
		a->value = 1;
	}
	d->s->nannots++;
	return d->sink(d->ctx, &ev);
}

int dec_pytask_start(struct decoder *d, struct tstate *t, const struct bp_rec_py *r, uint64_t ts)
{
	struct py_tasks *p = pt_get(d);
	struct frame *f = &t->stack[t->depth - 1], *up = t->depth > 1 ? f - 1 : NULL;
	uint32_t fl = f->func < d->s->nfuncs ? d->s->funcs[f->func].flags : 0;
	struct pt_slot *x, run;
	bool fresh = false;
	uint64_t task = 0;
	int err;

	switch (role_of(p, d->s, f->func)) {
	case ROLE_INIT:
		if (r->h.flags == BP_PY_CALL && r->arg0)
			note_handle(p, d, t, r->arg0, ts);
		return 0;
	case ROLE_RUN:
		if (r->h.flags == BP_PY_CALL && pt_take(&p->pend, t->pid, r->arg0, &run) &&
		    r->frame)
			pt_put(&p->pend, t->pid, r->frame)->u.edge = run.u.edge;
		return 0;
	case ROLE_RESCHED:
		if (r->h.flags == BP_PY_CALL && r->arg1)
			note_handle(p, d, t, TRIO_KEY(r->arg1), ts);
		return 0;
	default:
		break;
	}
	if (!(fl & BP_FUNC_RESUMABLE))
		return 0;
	/* a frame of a task resumes (not a new one at its address) */
	if (r->h.flags != BP_PY_CALL && (x = pt_find(&p->tasks, t->pid, r->frame)))
		task = x->u.root;
	/* awaited by a running coroutine of a task */
	else if (up && up->pyframe && up->pyframe == r->previous && up->task)
		task = up->task;
	/* thrown into by a suspended one (gen.throw() reaches the awaited frame first) */
	else if ((x = pt_find(&p->tasks, t->pid, r->previous)))
		task = x->u.root;
	if (!task && !(fl & BP_FUNC_COROUTINE))
		return 0;	/* a generator driven by plain code: no task */
	if (!task) {
		err = new_task(d, p, t, r, f, ts);
		if (err)
			return err;
		task = f->id;
		fresh = true;
	}
	f->task = task;
	f->flags |= BP_CALL_IN_TASK;
	/* a task's Task object (asyncio's too: no trio reschedule names it) */
	if (fresh && r->task) {
		x = pt_put(&p->objs, t->pid, task);
		x->u.task.obj = r->task;
		x->u.task.frame = r->frame;
	}
	x = r->h.flags == BP_PY_THROW ? NULL : pt_find(&p->objs, t->pid, task);
	if ((x && pt_take(&p->pend, t->pid, TRIO_KEY(x->u.task.obj), &run)) ||
	    (r->previous && pt_take(&p->pend, t->pid, r->previous, &run))) {
		run.u.edge.kind = fresh && r->h.flags == BP_PY_CALL ? BP_EDGE_SPAWN :
								     BP_EDGE_COMPLETE;
		run.u.edge.dst_call = f->id;
		run.u.edge.dst_ts = ts;
		run.u.edge.dst_pid = t->pid;
		run.u.edge.dst_tid = t->tid;
		run.u.edge.dst_func = f->func;
		return dec_emit_edge(d, &run.u.edge);
	}
	return 0;
}

void dec_pytask_end(struct decoder *d, const struct tstate *t, const struct bp_rec_py *r)
{
	struct py_tasks *p = d->pytasks;
	struct pt_slot *x;
	uint32_t i;

	if (!p)
		return;
	if (r->h.flags == BP_PY_YIELD) {
		/* a frame of a task suspends: its resumption (or a throw into it) finds the task */
		for (i = t->depth; i-- > 0;)
			if (t->stack[i].pyframe == r->frame) {
				if (t->stack[i].task)
					pt_put(&p->tasks, t->pid, r->frame)->u.root = t->stack[i].task;
				return;
			}
		return;
	}
	/* a frame of a task ends, or a Handle._run whose step started no task */
	if (!pt_take(&p->tasks, t->pid, r->frame, NULL))
		pt_take(&p->pend, t->pid, r->frame, NULL);
	/* the task's own coroutine ends: so does the task */
	for (i = t->depth; i-- > 0;)
		if (t->stack[i].pyframe == r->frame) {
			x = pt_find(&p->objs, t->pid, t->stack[i].task);
			if (x && x->u.task.frame == r->frame)
				pt_take(&p->objs, t->pid, t->stack[i].task, NULL);
			return;
		}
}

size_t dec_pytask_frames(struct decoder *d, uint32_t pid, uint64_t task, bool trio,
			 const uint64_t awaited_by[BP_PY_MAX_AWAITERS], uint32_t *out, size_t cap)
{
	struct py_tasks *p = pt_get(d);
	char label[96];
	size_t m = 0;
	uint32_t i;

	for (i = 0; task && m < cap; i++) {
		struct pt_slot *n = pt_find(&p->names, pid, task);

		if (n)
			snprintf(label, sizeof(label), "[%s %s]", i ? "awaited by" : "task", n->u.name);
		else
			snprintf(label, sizeof(label), "[%s 0x%llx]", i ? "awaited by" : "task",
				 (unsigned long long)task);
		out[m++] = dec_py_marker(d, trio ? "[trio]" : "[asyncio]", label, BP_FUNC_PYTASK);
		task = i < BP_PY_MAX_AWAITERS ? awaited_by[i] : 0;
	}
	return m;
}
