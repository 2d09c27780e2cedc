// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one record switch (decoder__feed): every record the BPF side writes
 * is read here, checked against its type's size, and handed to the decode
 * file of its concern as typed values; the records that hold a process go
 * on to the live side's hook (hold.h).  The call records are handled here
 * too, on the hot path: an entry pushes a frame on the thread's shadow call
 * stack (decode.c), a return pops it, and a frame whose return never came
 * is closed where the stack pointers prove it gone.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>
#include "bpf/events.h"
#include "decode.h"
#include "hold.h"
#include "internal.h"
#include "compensate.h"
#include "symbols/ustrings.h"

/* A record that holds a process, to the live side's hook (hold.h). */
static void dec_hold(struct decoder *d, const void *rec, size_t size)
{
	struct hold h;

	if (d->hold_hook && hold__read(rec, size, &h) != HOLD_NONE)
		d->hold_hook(d->hold_ctx, &h);
}

/*
 * Closes the frames that cannot be live any more because the stack has
 * unwound above them: every frame whose entry sp is below `sp`.  They ended
 * no later than the previous record of the thread.
 */
static int dec_close_dead(struct decoder *d, struct tstate *t, uint64_t sp, bool entry, uint32_t func)
{
	bool popped = false;
	int err;

	while (t->depth) {
		struct frame *top = &t->stack[t->depth - 1];

		if (entry && top->sp == sp && top->func == func) {
			err = dec_losses_known(d);	/* a loss makes it a new call */
			if (err)
				return err;
		}

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
		    !dec_same_stack(top->sp, sp))
			break;
		popped = true;
		err = dec_pop_emit(d, t, t->last_ts,
			       top->flags & BP_CALL_NO_RETPROBE ? 0 : BP_CALL_UNWOUND);
		if (err)
			return err;
	}
	return 0;
}

/*
 * --args: what the entry record carries beyond the registers.  A string the
 * BPF side could not read (its page not present at entry: a literal the
 * program had not touched yet) is read from its file, where the BPF side
 * found it mapped (also after the process exited), or from the process, as
 * for -U probes' strings (symbols/ustrings.c): such pages hold file
 * contents that do not change.
 */
static void dec_argx_entry(struct decoder *d, uint32_t pid, struct frame *f,
			   const struct bp_rec_call_args *ra)
{
	struct bp_argx *x = &f->x;
	unsigned i;

	_Static_assert(BP_ARGX_STACK == BP_ARG_STACK && BP_ARGX_NSTR == BP_ARG_NSTR &&
		       BP_ARGX_STR == BP_ARG_STR, "bp_argx holds what bp_rec_call_args carries");
	memcpy(x->stack, ra->stack, sizeof(x->stack));
	x->xmm_mask = 0;
	x->pad = 0;
	memset(x->xmm, 0, sizeof(x->xmm));
	for (i = 0; i < BP_ARGX_NSTR; i++) {
		uint8_t len = ra->str_len[i];

		x->str_slot[i] = ra->str_slot[i] < BP_ARG_SLOTS ? ra->str_slot[i] : BP_ARGX_NONE;
		x->str_state[i] = !len ? BP_ARGX_STR_UNREAD :
				  len >= BP_ARG_STR ? BP_ARGX_STR_CUT : BP_ARGX_STR_OK;
		memset(x->str[i], 0, sizeof(x->str[i]));
		if (len)
			memcpy(x->str[i], ra->str[i], len - 1);
		if (!len && d->strings && x->str_slot[i] != BP_ARGX_NONE) {
			uint8_t k = x->str_slot[i];
			uint64_t p = k < 6 ? ra->regs[k] : ra->stack[k - 6];

			if (p && ustrings__read(d->strings, pid, p, &ra->where[i], x->str[i],
						sizeof(x->str[i])) == 0)
				x->str_state[i] = strlen(x->str[i]) + 1 >= BP_ARGX_STR ?
						  BP_ARGX_STR_CUT : BP_ARGX_STR_OK;
		}
	}
	f->flags |= BP_CALL_HAS_XARGS;
}

static int dec_call_entry(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
		      const struct bp_rec_call_args *ra)
{
	const uint64_t *args = ra ? (const uint64_t *)ra->regs : NULL;
	int err;

	/*
	 * First call after the exception unwinder ran: frames at or below this
	 * sp were unwound (their returns will never come); the BPF side has
	 * given the frames above it their return probes back.
	 */
	if (t->unwinding) {
		t->unwinding = false;
		while (t->depth && t->stack[t->depth - 1].sp <= sp &&
		       dec_same_stack(t->stack[t->depth - 1].sp, sp)) {
			err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
			if (err)
				return err;
		}
	}

	/* No return will come (a Go function): a call of no duration under the current frame. */
	if (d->s->funcs[func].flags & BP_FUNC_ENTRY_ONLY) {
		dec_push(d, t, func, ts, sp, d->next_id++, false);
		return dec_pop_emit(d, t, ts, 0);
	}

	/* A new call's sp is below every live frame: frames below it are dead. */
	err = dec_close_dead(d, t, sp, true, func);
	if (err)
		return err;
	dec_push(d, t, func, ts, sp, d->next_id++, true);
	if (t->pend_fork.src_call) {
		/* the first call of a forked process or new thread */
		t->pend_fork.dst_call = t->stack[t->depth - 1].id;
		t->pend_fork.dst_ts = ts;
		t->pend_fork.dst_pid = t->pid;
		t->pend_fork.dst_tid = t->tid;
		t->pend_fork.dst_func = func;
		err = dec_emit_edge(d, &t->pend_fork);
		t->pend_fork.src_call = 0;
		if (err)
			return err;
	}
	if (args) {
		struct frame *top = &t->stack[t->depth - 1];

		memcpy(top->args, args, sizeof(top->args));
		top->flags |= BP_CALL_HAS_ARGS;
		dec_argx_entry(d, t->pid, top, ra);
		if (d->data_edges)
			return dec_data_edges(d, t, top, args);
	}
	return 0;
}

/* The returning frame is the top one: emit it, and remember its pointer result. */
static int dec_pop_return(struct decoder *d, struct tstate *t, uint64_t ts, const uint64_t *ret)
{
	struct frame f;
	int err;

	if (ret) {
		/* ret points at the record's regs: rax, rdx */
		t->stack[t->depth - 1].ret = ret[0];
		t->stack[t->depth - 1].x.ret2 = ret[1];
		t->stack[t->depth - 1].flags |= BP_CALL_HAS_RET;
	}
	f = t->stack[t->depth - 1];
	err = dec_pop_emit(d, t, ts, 0);
	if (!err && ret && d->data_edges) {
		struct bp_call c = { .id = f.id, .func = f.func, .end = ts };

		dec_note_return(d, t, &c, *ret);
	}
	return err;
}

static int dec_call_return(struct decoder *d, struct tstate *t, uint32_t func, uint64_t ts, uint64_t sp,
		       const uint64_t *ret)
{
	struct frame f;
	uint32_t i;
	int err;

	/* Frames deeper than the one returning were skipped (longjmp, throw). */
	err = dec_close_dead(d, t, sp - 8, false, UINT32_MAX);
	if (err)
		return err;
	if (t->depth && t->stack[t->depth - 1].func == func)
		return dec_pop_return(d, t, ts, ret);

	/* Search down for the function: frames above it were skipped. */
	for (i = t->depth; i-- > 0;) {
		if (t->stack[i].func != func)
			continue;
		if (t->stack[i].sp + 8 != sp && dec_same_stack(t->stack[i].sp, sp))
			continue;	/* another activation of it */
		while (t->depth > i + 1) {
			/*
			 * A frame at the returning one's sp shares its return
			 * address: entered by a jump or by falling through from it
			 * (glibc's memcpy runs into memmove's entry), it returns
			 * with it.  Deeper ones were skipped.
			 */
			if (t->stack[t->depth - 1].sp == t->stack[i].sp)
				err = dec_pop_emit(d, t, ts, 0);
			else
				err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
			if (err)
				return err;
		}
		return dec_pop_return(d, t, ts, ret);
	}

	/*
	 * A return without an entry: the call began before the recording (attach)
	 * or its entry record was lost.
	 */
	err = dec_losses_known(d);
	if (err)
		return err;
	memset(&f, 0, sizeof(f));
	f.id = d->next_id++;
	f.func = func;
	f.sp = sp - 8;
	f.flags = BP_CALL_NO_ENTRY;
	f.info_first = t->ninfos;	/* no infos of its own */
	f.path = session__path(d->s, t->depth ? t->stack[t->depth - 1].path : 0, func);
	if (d->had_loss) {
		/*
		 * Its entry may be among the lost records: it came after the
		 * thread's last record seen, so the call begins there.  Its
		 * caller's begin would make it enclose the siblings that ran
		 * before it, and outlast them all.
		 */
		f.begin = t->last_ts;
		f.child_ns = 0;
		f.flags = BP_CALL_ENTRY_LOST;
	} else if (t->depth) {
		/* entered while the probes went in: it encloses everything at its depth */
		f.begin = t->stack[t->depth - 1].begin;
		f.child_ns = 0;
	} else if (t->noentry_end && f.sp <= t->noentry_sp && dec_same_stack(f.sp, t->noentry_sp)) {
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
		return dec_emit_call(d, t, &f, t->depth, ts, 0);
	t->noentry_sp = f.sp;
	t->noentry_end = ts;
	err = dec_emit_call(d, t, &f, 0, ts, 0);
	t->orphan_since = 0;	/* counts again from its end */
	return err;
}

/* A call's entry or return; with its registers (BP_REC_*_ARGS, BP_REC_EXIT_RET) for --deps. */
static int dec_on_call(struct decoder *d, const void *rec, size_t size, uint64_t ts)
{
	const struct bp_rec_call *c = rec;
	uint16_t type = c->h.type;
	bool entry = type == BP_REC_ENTRY || type == BP_REC_ENTRY_ARGS;
	const uint64_t *regs = NULL;
	struct tstate *t;
	int err;

	if (c->func_id >= d->s->nfuncs)
		return -EINVAL;
	if ((type == BP_REC_ENTRY_ARGS || type == BP_REC_EXIT_RET) &&
	    size >= sizeof(struct bp_rec_call_args))
		regs = (const uint64_t *)((const struct bp_rec_call_args *)rec)->regs;
	t = dec_thread_state(d, (uint32_t)c->h.pid_tgid, c->h.pid_tgid >> 32, ts);
	err = dec_wake_due(d, t, ts);
	if (err)
		return err;
	err = entry ? dec_call_entry(d, t, c->func_id, ts, c->sp,
				     regs ? (const struct bp_rec_call_args *)rec : NULL) :
		      dec_call_return(d, t, c->func_id, ts, c->sp, regs);
	if (!err && ts > t->last_ts)
		t->last_ts = ts;
	return err;
}

/*
 * A float/double read inside a call (BP_REC_XVAL): it belongs to the
 * innermost open call of the thread, which is that function's (the probes
 * sit where no other call is open: after the prologue, before a return).
 * A parameter keeps its first value (a loop may pass the place again after
 * the parameter changed); the return value its last.
 */
static int dec_on_xval(struct decoder *d, const struct bp_rec_xval *r, uint64_t ts)
{
	struct tstate *t = dec_thread_state(d, (uint32_t)r->h.pid_tgid, r->h.pid_tgid >> 32, ts);
	struct frame *f;

	if (!t->depth || r->slot >= BP_ARGX_XMM || !r->ok)
		return 0;
	f = &t->stack[t->depth - 1];
	if (f->func != r->func_id || !(f->flags & BP_CALL_HAS_XARGS))
		return 0;
	if (r->slot != BP_ARGX_XRET && (f->x.xmm_mask & (1u << r->slot)))
		return 0;
	f->x.xmm[r->slot] = r->value;
	f->x.xmm_mask |= 1u << r->slot;
	f->flags |= BP_CALL_HAS_XMM;
	return 0;
}

/*
 * The least size of each record type, checked before its handler (0: it
 * checks its own, variable, size).
 */
static const size_t rec_min_size[BP_REC_MAX] = {
	[BP_REC_ENTRY] = sizeof(struct bp_rec_call),
	[BP_REC_EXIT] = sizeof(struct bp_rec_call),
	[BP_REC_ENTRY_ARGS] = sizeof(struct bp_rec_call),
	[BP_REC_EXIT_RET] = sizeof(struct bp_rec_call),
	[BP_REC_FORK] = sizeof(struct bp_rec_task),
	[BP_REC_TASK_EXIT] = sizeof(struct bp_rec_task),
	[BP_REC_COMM] = sizeof(struct bp_rec_task),
	[BP_REC_EXEC] = sizeof(struct bp_rec_exec),
	[BP_REC_DLOPEN] = sizeof(struct bp_rec_exec),
	[BP_REC_WAKEUP] = sizeof(struct bp_rec_wakeup),
	[BP_REC_USDT] = sizeof(struct bp_rec_usdt),
	[BP_REC_PY] = sizeof(struct bp_rec_py),
	[BP_REC_PYCODE] = sizeof(struct bp_rec_pycode),
	[BP_REC_PYTASK] = sizeof(struct bp_rec_pytask),
	[BP_REC_SWITCH] = sizeof(struct bp_rec_switch),
	[BP_REC_REARM] = sizeof(struct bp_rec_unwind),
	[BP_REC_UNWIND] = sizeof(struct bp_rec_unwind),
	[BP_REC_XVAL] = sizeof(struct bp_rec_xval),
	[BP_REC_MMAP] = BP_MMAP_HDR_SIZE,
};

/* The end of a record of thread t: its time is the thread's latest (unless err). */
static int dec_seen(struct tstate *t, uint64_t ts, int err)
{
	if (!err && ts > t->last_ts)
		t->last_ts = ts;
	return err;
}

/*
 * The first traced call after an exception: the frames whose return slots
 * were re-armed are alive (their returns will come); a frame restored for
 * the unwinder and not re-armed was unwound by the exception: its slot was
 * reused.
 */
static int dec_on_rearm(struct decoder *d, const struct bp_rec_unwind *u, uint64_t ts)
{
	struct tstate *t = dec_thread_state(d, (uint32_t)u->h.pid_tgid, u->h.pid_tgid >> 32, ts);
	uint32_t i, j;
	int err = 0;

	while (t->depth && !err) {
		struct frame *top = &t->stack[t->depth - 1];
		bool alive = false;

		if (!(top->flags & FRAME_RESTORED) || (top->flags & BP_CALL_NO_RETPROBE))
			break;
		for (i = 0; i < u->n && i < BP_UNWIND_SLOTS; i++)
			alive |= u->slot[i] == top->sp;
		if (alive)
			break;
		err = dec_pop_emit(d, t, t->last_ts, BP_CALL_UNWOUND);
	}
	for (i = 0; i < t->depth; i++)
		for (j = 0; j < u->n && j < BP_UNWIND_SLOTS; j++)
			if (u->slot[j] == t->stack[i].sp)
				t->stack[i].flags &= ~FRAME_RESTORED;
	t->unwinding = false;
	return dec_seen(t, ts, err);
}

/* The thread entered the exception unwinder: its open frames' return slots hold their callers. */
static int dec_on_unwind(struct decoder *d, const struct bp_rec_unwind *u, uint64_t ts)
{
	struct tstate *t = dec_thread_state(d, (uint32_t)u->h.pid_tgid, u->h.pid_tgid >> 32, ts);
	uint32_t i;

	t->unwinding = true;
	for (i = 0; i < t->depth; i++)
		t->stack[i].flags |= FRAME_RESTORED;
	d->s->nexceptions++;
	return dec_seen(t, ts, 0);
}

int decoder__feed(struct decoder *d, const void *rec, size_t size)
{
	const struct bp_rec_hdr *h = rec;
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
			/* a full batch was sent by its last record's hit (compensate.h) */
			if (d->comp && b->n == BP_BATCH_RECS && i + 1 == b->n)
				compensator__batch_last(d->comp);
			err = decoder__feed(d, &b->r[i], sizeof(b->r[i]));
			if (err)
				return err;
		}
		return 0;
	}
	d->s->nrecords++;
	ts = dec_rel_ts(d, h->ts);
	if (d->comp)
		ts = compensator__ts(d->comp, rec, ts);
	if (ts > d->last_ts)
		d->last_ts = ts;

	if (h->type >= BP_REC_MAX || size < rec_min_size[h->type])
		return -EINVAL;
	switch (h->type) {
	case BP_REC_ENTRY:
	case BP_REC_ENTRY_ARGS:
	case BP_REC_EXIT:
	case BP_REC_EXIT_RET:
		return dec_on_call(d, rec, size, ts);
	case BP_REC_FORK:
	case BP_REC_TASK_EXIT:
	case BP_REC_COMM:
		return dec_on_task(d, rec, ts);
	case BP_REC_EXEC:
		err = dec_on_exec(d, rec, ts);
		/* even after a sink's error: a stopped process must be let go */
		if (((const struct bp_rec_exec *)rec)->stopped)
			dec_hold(d, rec, size);
		return err;
	case BP_REC_DLOPEN:
		dec_hold(d, rec, size);
		return 0;
	case BP_REC_SAMPLE:
	case BP_REC_USTACK:
		return dec_on_sample(d, rec, size, ts);
	case BP_REC_WAKEUP:
		return dec_on_wakeup(d, rec, ts);
	case BP_REC_USDT:
		return dec_on_usdt(d, rec, ts);
	case BP_REC_PY:
		return dec_on_py(d, rec, ts);
	case BP_REC_PYCODE:
		return dec_on_pycode(d, rec);
	case BP_REC_PYTASK:
		return dec_on_pytask(d, rec);
	case BP_REC_PYSTACK:
		return dec_on_pystack(d, rec, size, ts);
	case BP_REC_SWITCH:
		return dec_on_switch(d, rec, ts);
	case BP_REC_REARM:
		return dec_on_rearm(d, rec, ts);
	case BP_REC_UNWIND:
		return dec_on_unwind(d, rec, ts);
	case BP_REC_XVAL:
		return dec_on_xval(d, rec, ts);
	case BP_REC_MMAP:
		return dec_on_mmap(d, rec, size);
	default:
		return -EINVAL;
	}
}
