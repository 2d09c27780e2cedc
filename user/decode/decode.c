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
#include "base/log.h"
#include "symbols/symbolize.h"

/* frame.flags (beside BP_CALL_*): its return address was put back for the
 * exception unwinder, so its return will not be seen */
#define FRAME_RESTORED 0x80000000u

/* Two stack pointers further apart than this are on different stacks
 * (sigaltstack, coroutines): never use one to judge the other's frames. */
#define SAME_STACK_SPAN (256ull << 20)

struct frame {
	uint64_t id;
	uint64_t begin;
	uint64_t sp;
	uint64_t child_ns;	/* time spent in traced children */
	uint32_t func;
	uint32_t flags;
	uint32_t path;		/* interned call path (session.paths) */
	uint32_t pad;
	uint64_t args[6];	/* with BP_CALL_HAS_ARGS */
	uint64_t ret;		/* with BP_CALL_HAS_RET */
	uint32_t info_first;	/* its BPFPROF_INFOs: tstate.infos[info_first .. next frame's) */
	uint32_t pad3;
};

struct tstate {
	uint32_t tid;		/* 0: empty slot */
	uint32_t pid;
	uint64_t first_ts, last_ts;
	uint64_t orphan_ns;	/* time of completed depth-0 calls: self time of a no-entry caller */
	uint64_t orphan_since;	/* the part of orphan_ns after the last no-entry call at depth 0 */
	uint64_t noentry_sp;	/* the last call closed with no entry at depth 0: its sp... */
	uint64_t noentry_end;	/* ...and its end (0: none) */
	struct frame *stack;
	uint32_t depth, cap;
	struct bp_info *infos;	/* a stack like the frames': the innermost frame's are last */
	uint32_t ninfos, infos_cap;
	bool unwinding;		/* in the exception unwinder: return probes were removed */
	/* an edge waiting for its far end: the thread's first call (fork) or its
	 * resumption (wakeup); src_call 0 = none */
	struct bp_edge pend_fork, pend_wake;
	bool offcpu_pending;	/* blocked: the stack where, waiting for its BP_REC_SWITCH */
	uint32_t offcpu_path;
	uint32_t offcpu_flags;
	uint64_t offcpu_ts;
};

struct decoder {
	struct bp_session *s;
	decoder_sink_fn sink;
	void *ctx;
	struct tstate *tab;	/* open addressing by tid */
	size_t tab_cap, tab_used;
	uint64_t next_id;
	uint64_t last_ts;	/* latest record time, relative */
	struct symbolizer *sy;
	bool data_edges;
	bool had_loss;		/* records were lost: a return without entry is no attach artefact */
	/* span names -> their session function */
	struct span_func {
		char *name;
		uint32_t func;
	} *spans;
	size_t nspans;

	/* data edges: pointers returned by calls, value -> producing call */
	struct ptr_slot {
		uint64_t value;
		uint64_t call, ts;
		uint32_t pid, tid, func, pad;
	} *ptrs;
	size_t ptrs_cap;
	/* per-process address ranges: what can be a pointer */
	struct pid_ranges {
		uint32_t pid;
		uint32_t n;
		uint64_t (*r)[2];
		int misses;
	} *ranges;
	size_t nranges;
};

void decoder__set_symbolizer(struct decoder *d, struct symbolizer *sy)
{
	d->sy = sy;
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
	}
	for (i = 0; i < d->nspans; i++)
		free(d->spans[i].name);
	free(d->spans);
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

static struct tstate *thread_state(struct decoder *d, uint32_t tid, uint32_t pid, uint64_t ts)
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

/*
 * A thread that exited: its state goes (a long `serve` sees threads come and
 * go without end).  Linear probing: the entries after it that could not sit
 * in their home slot move back.
 */
static void forget_thread(struct decoder *d, uint32_t tid)
{
	size_t mask = d->tab_cap - 1, i = slot_of(d, tid), j = i;

	if (!d->tab[i].tid)
		return;
	free(d->tab[i].stack);
	free(d->tab[i].infos);
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

static uint64_t rel_ts(const struct decoder *d, uint64_t ts)
{
	return ts > d->s->t0 ? ts - d->s->t0 : 0;
}

static void push(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
		 uint64_t id)
{
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
	f->path = session__path(d->s, t->depth > 1 ? t->stack[t->depth - 2].path : 0, func);
	/* The kernel keeps a bounded number of pending return probes per thread. */
	f->flags = t->depth > DECODER_URETPROBE_DEPTH ? BP_CALL_NO_RETPROBE : 0;
}

/* Emits the call of `f` ending at `end`; the caller has removed it from the stack. */
static int emit_call(struct decoder *d, struct tstate *t, const struct frame *f, uint32_t depth,
		     uint64_t end, uint32_t flags)
{
	struct bp_event ev = { .kind = BP_EV_CALL };
	struct bp_call *c = &ev.call;
	uint64_t dur;

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
	if (c->flags & BP_CALL_NO_ENTRY)
		d->s->nno_entry++;
	if (c->flags & BP_CALL_NO_RETPROBE)
		d->s->nno_retprobe++;
	return d->sink(d->ctx, &ev);
}

static int pop_emit(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags)
{
	struct frame f = t->stack[--t->depth];
	int err = emit_call(d, t, &f, t->depth, end, flags);

	if (f.info_first < t->ninfos)
		t->ninfos = f.info_first;	/* its infos went out with it */
	return err;
}

static bool same_stack(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < SAME_STACK_SPAN;
}

/*
 * Closes the frames that cannot be live any more because the stack has
 * unwound above them: every frame whose entry sp is below `sp`.  They ended
 * no later than the previous record of the thread.
 */
static int close_dead(struct decoder *d, struct tstate *t, uint64_t sp, bool entry, uint32_t func)
{
	bool popped = false;
	int err;

	while (t->depth) {
		struct frame *top = &t->stack[t->depth - 1];

		/*
		 * An entry at the same sp as the top frame is a tail call (the
		 * caller jumped, its frame is still "open") -- unless deeper frames
		 * were just found dead: then the stack was unwound to here and the
		 * same-sp frame is a finished sibling, not a tail-caller.
		 */
		/*
		 * The same function again at the same sp is a tail call of
		 * itself too: an exported function of a shared library calling
		 * itself last jumps through the PLT to its own entry (libsqlite3's
		 * sqlite3VdbeAddOp3), and the kernel chains the return probes:
		 * one return event per entry, all at the end.  Only once records
		 * were lost can it be a new call after a lost return.
		 */
		if (top->sp > sp ||
		    (top->sp == sp && !(entry && (popped || (top->flags & FRAME_RESTORED) ||
						 (top->func == func && d->had_loss)))) ||
		    !same_stack(top->sp, sp))
			break;
		popped = true;
		err = pop_emit(d, t, t->last_ts,
			       top->flags & BP_CALL_NO_RETPROBE ? 0 : BP_CALL_UNWOUND);
		if (err)
			return err;
	}
	return 0;
}

static int close_all(struct decoder *d, struct tstate *t, uint64_t end, uint32_t flags)
{
	int err;

	while (t->depth) {
		err = pop_emit(d, t, end, flags);
		if (err)
			return err;
	}
	t->orphan_ns = 0;
	t->orphan_since = 0;
	return 0;
}

static int emit_edge(struct decoder *d, const struct bp_edge *e)
{
	struct bp_event ev = { .kind = BP_EV_EDGE };

	ev.edge = *e;
	if (e->kind < 4)
		d->s->nedges[e->kind]++;
	return d->sink(d->ctx, &ev);
}

static void read_ranges(struct pid_ranges *pr)
{
	char path[64], line[512];
	FILE *f;

	pr->n = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pr->pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) != 2)
			continue;
		if ((pr->n & (pr->n - 1)) == 0)
			pr->r = xrealloc(pr->r, (pr->n ? pr->n * 2 : 64) * sizeof(*pr->r));
		pr->r[pr->n][0] = a;
		pr->r[pr->n][1] = b;
		pr->n++;
	}
	fclose(f);
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
static int data_edges(struct decoder *d, struct tstate *t, const struct frame *f,
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
		err = emit_edge(d, &e);
		if (err)
			return err;
	}
	return 0;
}

/* A call returned v: remember it if it can be a pointer. */
static void note_return(struct decoder *d, struct tstate *t, const struct bp_call *c, uint64_t v)
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

static int call_entry(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
		      const uint64_t *args)
{
	int err;

	/*
	 * First call after the exception unwinder ran: frames at or below this
	 * sp were unwound (their returns will never come); the BPF side has
	 * given the frames above it their return probes back.
	 */
	if (t->unwinding) {
		t->unwinding = false;
		while (t->depth && t->stack[t->depth - 1].sp <= sp &&
		       same_stack(t->stack[t->depth - 1].sp, sp)) {
			err = pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
			if (err)
				return err;
		}
	}

	/* No return will come (a Go function): a call of no duration under the current frame. */
	if (d->s->funcs[func].flags & BP_FUNC_ENTRY_ONLY) {
		push(d, t, func, ts, sp, d->next_id++);
		return pop_emit(d, t, ts, 0);
	}

	/* A new call's sp is below every live frame: frames below it are dead. */
	err = close_dead(d, t, sp, true, func);
	if (err)
		return err;
	push(d, t, func, ts, sp, d->next_id++);
	if (t->pend_fork.src_call) {
		/* the first call of a forked process or new thread */
		t->pend_fork.dst_call = t->stack[t->depth - 1].id;
		t->pend_fork.dst_ts = ts;
		t->pend_fork.dst_pid = t->pid;
		t->pend_fork.dst_tid = t->tid;
		t->pend_fork.dst_func = func;
		err = emit_edge(d, &t->pend_fork);
		t->pend_fork.src_call = 0;
		if (err)
			return err;
	}
	if (args) {
		struct frame *top = &t->stack[t->depth - 1];

		memcpy(top->args, args, sizeof(top->args));
		top->flags |= BP_CALL_HAS_ARGS;
		if (d->data_edges)
			return data_edges(d, t, top, args);
	}
	return 0;
}

/* The returning frame is the top one: emit it, and remember its pointer result. */
static int pop_return(struct decoder *d, struct tstate *t, uint64_t ts, const uint64_t *ret)
{
	struct frame f;
	int err;

	if (ret) {
		t->stack[t->depth - 1].ret = *ret;
		t->stack[t->depth - 1].flags |= BP_CALL_HAS_RET;
	}
	f = t->stack[t->depth - 1];
	err = pop_emit(d, t, ts, 0);
	if (!err && ret && d->data_edges) {
		struct bp_call c = { .id = f.id, .func = f.func, .end = ts };

		note_return(d, t, &c, *ret);
	}
	return err;
}

static int call_return(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
		       const uint64_t *ret)
{
	struct frame f;
	uint32_t i;
	int err;

	/* Frames deeper than the one returning were skipped (longjmp, throw). */
	err = close_dead(d, t, sp - 8, false, UINT32_MAX);
	if (err)
		return err;
	if (t->depth && t->stack[t->depth - 1].func == func)
		return pop_return(d, t, ts, ret);

	/* Search down for the function: frames above it were skipped. */
	for (i = t->depth; i-- > 0;) {
		if (t->stack[i].func != func)
			continue;
		if (t->stack[i].sp + 8 != sp && same_stack(t->stack[i].sp, sp))
			continue;	/* another activation of it */
		while (t->depth > i + 1) {
			/*
			 * A frame at the returning one's sp shares its return
			 * address: entered by a jump or by falling through from it
			 * (glibc's memcpy runs into memmove's entry), it returns
			 * with it.  Deeper ones were skipped.
			 */
			if (t->stack[t->depth - 1].sp == t->stack[i].sp)
				err = pop_emit(d, t, ts, 0);
			else
				err = pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
			if (err)
				return err;
		}
		return pop_return(d, t, ts, ret);
	}

	/*
	 * A return without an entry: the call began before the recording (attach)
	 * or its entry record was lost.  It encloses everything at its depth.
	 */
	memset(&f, 0, sizeof(f));
	f.id = d->next_id++;
	f.func = func;
	f.sp = sp - 8;
	f.flags = BP_CALL_NO_ENTRY;
	f.info_first = t->ninfos;	/* no infos of its own */
	f.path = session__path(d->s, t->depth ? t->stack[t->depth - 1].path : 0, func);
	if (t->depth) {
		f.begin = t->stack[t->depth - 1].begin;
		f.child_ns = 0;
	} else if (d->had_loss) {
		/* its entry may be among the lost records: it began after the last record seen */
		f.begin = t->last_ts;
		f.child_ns = 0;
	} else if (t->noentry_end && f.sp <= t->noentry_sp && same_stack(f.sp, t->noentry_sp)) {
		/*
		 * Another one at the same level or deeper than the last: not its
		 * caller, so it began after that one ended (both were entered
		 * while the probes were going in, between the return and the
		 * entry links).
		 */
		f.begin = t->noentry_end;
		f.child_ns = t->orphan_since;	/* what ran since: the earlier one is not a child */
		t->orphan_ns -= t->orphan_since;
	} else {
		f.begin = 0;	/* the start of the recording: it encloses what came before */
		f.child_ns = t->orphan_ns;
		t->orphan_ns = 0;
	}
	if (t->depth || d->had_loss)
		return emit_call(d, t, &f, t->depth, ts, 0);
	t->noentry_sp = f.sp;
	t->noentry_end = ts;
	err = emit_call(d, t, &f, 0, ts, 0);
	t->orphan_since = 0;	/* counts again from its end */
	return err;
}

static int on_task(struct decoder *d, const struct bp_rec_task *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	char comm[BP_COMM_LEN + 1];
	struct bp_thread *bt;
	struct tstate *t;
	int err = 0;

	memcpy(comm, r->comm, BP_COMM_LEN);
	comm[BP_COMM_LEN] = 0;

	switch (r->h.type) {
	case BP_REC_FORK: {
		uint32_t ptid = (uint32_t)r->parent_pid_tgid;
		struct tstate *pt = thread_state(d, ptid, r->parent_pid_tgid >> 32, ts);

		t = thread_state(d, tid, pid, ts);
		pt = thread_state(d, ptid, r->parent_pid_tgid >> 32, ts);	/* t's insert may move it */
		if (pt->depth) {
			const struct frame *src = &pt->stack[pt->depth - 1];

			memset(&t->pend_fork, 0, sizeof(t->pend_fork));
			t->pend_fork.kind = BP_EDGE_FORK;
			t->pend_fork.src_call = src->id;
			t->pend_fork.src_ts = ts;
			t->pend_fork.src_pid = pt->pid;
			t->pend_fork.src_tid = pt->tid;
			t->pend_fork.src_func = src->func;
		}
		bt = session__thread(d->s, tid, pid);
		memcpy(bt->name, comm, sizeof(bt->name));
		bt->name[sizeof(bt->name) - 1] = 0;
		if (r->h.flags & BP_TASK_NEW_PROCESS) {
			struct bp_process *p = session__process(d->s, pid);

			p->ppid = r->parent_pid_tgid >> 32;
			if (!p->name)
				p->name = xstrdup(comm);
		}
		break;
	}
	case BP_REC_COMM:
		t = thread_state(d, tid, pid, ts);
		bt = session__thread(d->s, tid, pid);
		memcpy(bt->name, comm, sizeof(bt->name));
		bt->name[sizeof(bt->name) - 1] = 0;
		if (tid == pid)
			session__set_process_name(d->s, pid, comm);
		break;
	case BP_REC_TASK_EXIT:
		t = thread_state(d, tid, pid, ts);
		err = close_all(d, t, ts, BP_CALL_UNFINISHED);
		bt = session__thread(d->s, tid, pid);
		bt->exited = 1;
		if (!bt->name[0]) {
			memcpy(bt->name, comm, sizeof(bt->name));
			bt->name[sizeof(bt->name) - 1] = 0;
		}
		if (tid == pid && !session__process(d->s, pid)->name)
			session__set_process_name(d->s, pid, comm);
		if (ts > bt->last_ts)
			bt->last_ts = ts;
		if (!err)
			forget_thread(d, tid);	/* nothing of it can come after its exit */
		return err;
	default:
		return -EINVAL;
	}
	t->last_ts = ts;
	bt = session__find_thread(d->s, tid);
	if (bt && ts > bt->last_ts)
		bt->last_ts = ts;
	return err;
}

static int on_exec(struct decoder *d, const struct bp_rec_exec *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	char path[BP_PATH_LEN + 1];
	const char *base;
	struct tstate *t;
	int err;

	/* The old image's calls are gone; a non-leader that exec'd took the leader's tid. */
	if (r->old_tid && r->old_tid != tid) {
		t = thread_state(d, r->old_tid, pid, ts);
		err = close_all(d, t, ts, BP_CALL_UNFINISHED);
		if (err)
			return err;
	}
	t = thread_state(d, tid, pid, ts);
	err = close_all(d, t, ts, BP_CALL_UNFINISHED);
	if (err)
		return err;
	t->last_ts = ts;
	memcpy(path, r->filename, BP_PATH_LEN);
	path[BP_PATH_LEN] = 0;
	base = strrchr(path, '/');
	session__set_process_name(d->s, pid, base ? base + 1 : path);
	if (d->sy)
		symbolizer__forget(d->sy, pid);
	return 0;
}

static void name_from_comm(struct decoder *d, uint32_t tid, uint32_t pid, const char *c)
{
	char comm[BP_COMM_LEN + 1];
	struct bp_thread *bt = session__thread(d->s, tid, pid);

	if (bt->name[0])
		return;
	memcpy(comm, c, BP_COMM_LEN);
	comm[BP_COMM_LEN] = 0;
	memcpy(bt->name, comm, sizeof(bt->name));
	bt->name[sizeof(bt->name) - 1] = 0;
	if (tid == pid && !session__process(d->s, pid)->name)
		session__set_process_name(d->s, pid, comm);
}

static int on_sample(struct decoder *d, const struct bp_rec_sample *r, size_t size, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct bp_event ev = { .kind = BP_EV_SAMPLE };
	struct tstate *t;
	bool truncated;
	uint32_t path;

	if (size < BP_SAMPLE_HDR_SIZE || r->nuser > BP_MAX_USER_FRAMES ||
	    r->nkern > BP_MAX_KERN_FRAMES || size < BP_SAMPLE_HDR_SIZE + 8ull * (r->nuser + r->nkern))
		return -EINVAL;
	t = thread_state(d, tid, pid, ts);
	/*
	 * Not t->last_ts: that is the time frames without a return are closed
	 * at, and a sample taken while the thread's call batch was held arrives
	 * ahead of calls older than it.
	 */
	name_from_comm(d, tid, pid, r->comm);
	if (!d->sy)
		return 0;
	/* BP_REC_USTACK: the same record with a stack copy after the frames (issue 8) */
	path = symbolizer__sample(d->sy, r, size, &truncated);
	if (r->h.flags & BP_SAMPLE_OFFCPU) {
		t->offcpu_pending = true;
		t->offcpu_path = path;
		t->offcpu_flags = BP_SAMPLE_F_OFFCPU | (truncated ? BP_SAMPLE_F_TRUNCATED : 0);
		t->offcpu_ts = ts;
		return 0;
	}
	ev.sample.ts = ts;
	ev.sample.weight = r->period;
	ev.sample.pid = pid;
	ev.sample.tid = tid;
	ev.sample.path = path;
	ev.sample.cpu = r->h.cpu;
	ev.sample.flags = truncated ? BP_SAMPLE_F_TRUNCATED : 0;
	d->s->nsamples++;
	if (truncated)
		d->s->ntruncated++;
	return d->sink(d->ctx, &ev);
}

static int on_switch(struct decoder *d, const struct bp_rec_switch *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct bp_event ev = { .kind = BP_EV_SAMPLE };
	struct tstate *t = thread_state(d, tid, pid, ts);

	if (ts > t->last_ts)
		t->last_ts = ts;
	if (!t->offcpu_pending)
		return 0;	/* its start was lost or came before the recording */
	t->offcpu_pending = false;
	ev.sample.ts = t->offcpu_ts;
	ev.sample.weight = r->blocked_ns;
	ev.sample.pid = pid;
	ev.sample.tid = tid;
	ev.sample.path = t->offcpu_path;
	ev.sample.cpu = r->h.cpu;
	ev.sample.flags = t->offcpu_flags;
	d->s->noffcpu++;
	return d->sink(d->ctx, &ev);
}

static int on_wakeup(struct decoder *d, const struct bp_rec_wakeup *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	uint32_t otid = (uint32_t)r->other, opid = r->other >> 32;
	struct tstate *t, *o;
	int err = 0;

	if (r->h.flags == BP_WAKE_WAKING) {
		/* in the waker: its innermost open call is the cause */
		o = thread_state(d, otid, opid, ts);
		t = thread_state(d, tid, pid, ts);	/* after o: inserting may move entries */
		o = thread_state(d, otid, opid, ts);
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
	if (r->h.flags != BP_WAKE_RUNNING)
		return -EINVAL;
	/* the wakee runs again, inside the call it blocked in */
	t = thread_state(d, tid, pid, ts);
	if (t->pend_wake.src_call && t->depth) {
		t->pend_wake.dst_call = t->stack[t->depth - 1].id;
		t->pend_wake.dst_func = t->stack[t->depth - 1].func;
		t->pend_wake.dst_ts = ts;
		t->pend_wake.dst_pid = pid;
		t->pend_wake.dst_tid = tid;
		err = emit_edge(d, &t->pend_wake);
	}
	t->pend_wake.src_call = 0;
	return err;
}

/* The session function standing for span `name` (created on first use). */
static uint32_t span_func(struct decoder *d, const char *name)
{
	struct bp_func f = { .nparams = -1, .flags = BP_FUNC_SPAN };
	size_t i;

	for (i = 0; i < d->nspans; i++)
		if (!strcmp(d->spans[i].name, name))
			return d->spans[i].func;
	f.name = (char *)name;
	f.module = session__add_module(d->s, "[span]");
	d->spans = xrealloc(d->spans, (d->nspans + 1) * sizeof(*d->spans));
	d->spans[d->nspans].name = xstrdup(name);
	d->spans[d->nspans].func = session__add_func(d->s, &f);
	return d->spans[d->nspans++].func;
}

static int on_usdt(struct decoder *d, const struct bp_rec_usdt *r, uint64_t ts)
{
	uint32_t tid = (uint32_t)r->h.pid_tgid, pid = r->h.pid_tgid >> 32;
	struct tstate *t = thread_state(d, tid, pid, ts);
	struct bp_event ev = { .kind = BP_EV_ANNOT };
	struct bp_annot *a = &ev.annot;
	char s0[BP_USDT_STR + 1], s1[BP_USDT_STR + 1];
	uint32_t i, func;
	int err = 0;

	memcpy(s0, r->s0, BP_USDT_STR);
	s0[BP_USDT_STR] = 0;
	memcpy(s1, r->s1, BP_USDT_STR);
	s1[BP_USDT_STR] = 0;
	switch (r->h.flags) {
	case BP_USDT_INFO:
	case BP_USDT_INFO_STR: {
		struct bp_info *in;

		/* merged into the innermost open call; dropped outside any call */
		if (!t->depth)
			break;
		if (t->ninfos == t->infos_cap) {
			t->infos_cap = t->infos_cap ? t->infos_cap * 2 : 8;
			t->infos = xrealloc(t->infos, t->infos_cap * sizeof(*t->infos));
		}
		in = &t->infos[t->ninfos++];
		memset(in, 0, sizeof(*in));
		snprintf(in->key, sizeof(in->key), "%.63s", s0);
		if (r->h.flags == BP_USDT_INFO_STR) {
			in->is_str = 1;
			snprintf(in->str, sizeof(in->str), "%.63s", s1);
		} else {
			in->value = r->nargs > 1 ? r->args[1] : 0;
		}
		break;
	}
	case BP_USDT_SPAN_BEGIN:
		/* a span is a frame: it nests with the calls around and inside it */
		func = span_func(d, s0[0] ? s0 : "[span]");
		push(d, t, func, ts, r->sp, d->next_id++);
		break;
	case BP_USDT_SPAN_END:
		func = span_func(d, s0[0] ? s0 : "[span]");
		for (i = t->depth; i-- > 0;) {
			if (t->stack[i].func != func)
				continue;
			/* calls still open inside the span end with it */
			while (t->depth > i + 1 && !err)
				err = pop_emit(d, t, ts, BP_CALL_UNWOUND);
			if (!err)
				err = pop_emit(d, t, ts, 0);
			break;
		}
		break;
	case BP_USDT_MARK:
	case BP_USDT_EVENT:
	case BP_USDT_START:
	case BP_USDT_STOP:
	case BP_USDT_OTHER:
		a->ts = ts;
		a->pid = pid;
		a->tid = tid;
		a->call = t->depth ? t->stack[t->depth - 1].id : 0;
		a->nargs = r->nargs > 6 ? 6 : r->nargs;
		for (i = 0; i < 6; i++)
			a->args[i] = r->args[i];
		switch (r->h.flags) {
		case BP_USDT_MARK:
			a->kind = BP_ANNOT_MARK;
			snprintf(a->name, sizeof(a->name), "%.63s", s0);
			break;
		case BP_USDT_EVENT:
			a->kind = BP_ANNOT_EVENT;
			snprintf(a->name, sizeof(a->name), "%.63s", s0);
			a->value = r->nargs > 1 ? r->args[1] : 0;
			break;
		case BP_USDT_START:
			a->kind = BP_ANNOT_START;
			snprintf(a->name, sizeof(a->name), "capture start");
			break;
		case BP_USDT_STOP:
			a->kind = BP_ANNOT_STOP;
			snprintf(a->name, sizeof(a->name), "capture stop");
			break;
		default:
			a->kind = BP_ANNOT_PROBE;
			i = r->cookie >> 8;
			snprintf(a->name, sizeof(a->name), "%s",
				 i < d->s->nprobes ? d->s->probes[i] : "usdt");
			a->value = r->args[0];
			break;
		}
		d->s->nannots++;
		err = d->sink(d->ctx, &ev);
		break;
	default:
		return -EINVAL;
	}
	if (ts > t->last_ts)
		t->last_ts = ts;
	return err;
}

int decoder__feed(struct decoder *d, const void *rec, size_t size)
{
	const struct bp_rec_hdr *h = rec;
	const struct bp_rec_call *c = rec;
	struct tstate *t;
	uint64_t ts;
	int err;

	if (size < sizeof(*h))
		return -EINVAL;
	if (h->type == BP_REC_BATCH) {
		const struct bp_rec_batch *b = rec;
		size_t head = offsetof(struct bp_rec_batch, r);
		uint32_t i;

		if (size < head || b->n > BP_BATCH_RECS || size < head + b->n * sizeof(b->r[0]))
			return -EINVAL;
		for (i = 0; i < b->n; i++) {
			if (b->r[i].h.type != BP_REC_ENTRY && b->r[i].h.type != BP_REC_EXIT)
				return -EINVAL;
			err = decoder__feed(d, &b->r[i], sizeof(b->r[i]));
			if (err)
				return err;
		}
		return 0;
	}
	d->s->nrecords++;
	ts = rel_ts(d, h->ts);
	if (ts > d->last_ts)
		d->last_ts = ts;

	switch (h->type) {
	case BP_REC_ENTRY:
	case BP_REC_ENTRY_ARGS:
		if (size < sizeof(*c) || c->func_id >= d->s->nfuncs)
			return -EINVAL;
		t = thread_state(d, (uint32_t)h->pid_tgid, h->pid_tgid >> 32, ts);
		err = call_entry(d, t, c->func_id, ts, c->sp,
				 h->type == BP_REC_ENTRY_ARGS && size >= sizeof(struct bp_rec_call_args) ?
				 (const uint64_t *)((const struct bp_rec_call_args *)rec)->regs : NULL);
		break;
	case BP_REC_EXIT:
	case BP_REC_EXIT_RET:
		if (size < sizeof(*c) || c->func_id >= d->s->nfuncs)
			return -EINVAL;
		t = thread_state(d, (uint32_t)h->pid_tgid, h->pid_tgid >> 32, ts);
		err = call_return(d, t, c->func_id, ts, c->sp,
				  h->type == BP_REC_EXIT_RET && size >= sizeof(struct bp_rec_call_args) ?
				  (const uint64_t *)((const struct bp_rec_call_args *)rec)->regs : NULL);
		break;
	case BP_REC_FORK:
	case BP_REC_TASK_EXIT:
	case BP_REC_COMM:
		if (size < sizeof(struct bp_rec_task))
			return -EINVAL;
		return on_task(d, rec, ts);
	case BP_REC_EXEC:
		if (size < sizeof(struct bp_rec_exec))
			return -EINVAL;
		return on_exec(d, rec, ts);
	case BP_REC_SAMPLE:
	case BP_REC_USTACK:
		return on_sample(d, rec, size, ts);
	case BP_REC_WAKEUP:
		if (size < sizeof(struct bp_rec_wakeup))
			return -EINVAL;
		return on_wakeup(d, rec, ts);
	case BP_REC_USDT:
		if (size < sizeof(struct bp_rec_usdt))
			return -EINVAL;
		return on_usdt(d, rec, ts);
	case BP_REC_SWITCH:
		if (size < sizeof(struct bp_rec_switch))
			return -EINVAL;
		return on_switch(d, rec, ts);
	case BP_REC_REARM: {
		const struct bp_rec_unwind *u = rec;
		uint32_t i;

		if (size < sizeof(struct bp_rec_unwind))
			return -EINVAL;
		/*
		 * The frames whose return slots were re-armed are alive (their
		 * returns will come); a frame restored for the unwinder and not
		 * re-armed was unwound by the exception: its slot was reused.
		 */
		t = thread_state(d, (uint32_t)h->pid_tgid, h->pid_tgid >> 32, ts);
		err = 0;
		while (t->depth && !err) {
			struct frame *top = &t->stack[t->depth - 1];
			bool alive = false;

			if (!(top->flags & FRAME_RESTORED) || (top->flags & BP_CALL_NO_RETPROBE))
				break;
			for (i = 0; i < u->n && i < BP_UNWIND_SLOTS; i++)
				alive |= u->slot[i] == top->sp;
			if (alive)
				break;
			err = pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
		}
		for (i = 0; i < t->depth; i++) {
			uint32_t j;

			for (j = 0; j < u->n && j < BP_UNWIND_SLOTS; j++)
				if (u->slot[j] == t->stack[i].sp)
					t->stack[i].flags &= ~FRAME_RESTORED;
		}
		t->unwinding = false;
		break;
	}
	case BP_REC_UNWIND:
		if (size < sizeof(struct bp_rec_unwind))
			return -EINVAL;
		t = thread_state(d, (uint32_t)h->pid_tgid, h->pid_tgid >> 32, ts);
		t->unwinding = true;
		for (uint32_t i = 0; i < t->depth; i++)
			t->stack[i].flags |= FRAME_RESTORED;
		d->s->nexceptions++;
		err = 0;
		break;
	default:
		return -EINVAL;
	}
	if (err)
		return err;
	if (ts > t->last_ts)
		t->last_ts = ts;
	return 0;
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
		err = close_all(d, t, t->last_ts, BP_CALL_UNFINISHED);
		if (err)
			return err;
		bt = session__find_thread(d->s, t->tid);
		if (bt && t->last_ts > bt->last_ts)
			bt->last_ts = t->last_ts;
	}
	return 0;
}
